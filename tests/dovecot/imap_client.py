#!/usr/bin/env python3
"""A real IMAP client (Python's imaplib, stdlib only) for tests/dovecot/run.sh.

    imap_client.py PORT USER PASSWORD append MAILBOX FILE
    imap_client.py PORT USER PASSWORD move MESSAGE-ID FROM TO
    imap_client.py PORT USER PASSWORD count MAILBOX
    imap_client.py PORT USER PASSWORD create MAILBOX

Connects to 127.0.0.1:PORT without TLS, logs in, does one thing the way a mail program does
(MOVE is RFC 6851's, which Dovecot runs as COPY plus expunge, so IMAPSieve sees cause COPY) and
logs out. Every socket operation times out after 15 s, so it can never hang. Exits non-zero
with the server's answer on any failure.
"""

import imaplib
import sys

TIMEOUT = 15


def check(what, answer):
    typ, data = answer
    if typ != "OK":
        sys.exit(f"imap_client: {what} failed: {typ} {data!r}")
    return data


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    port, user, password, action, *rest = argv[1:]
    imap = imaplib.IMAP4("127.0.0.1", int(port), timeout=TIMEOUT)
    try:
        check("login", imap.login(user, password))
        if action == "append":
            mailbox, path = rest
            with open(path, "rb") as f:
                message = f.read()
            check("append", imap.append(mailbox, None, None, message))
            print(f"appended {path} to {mailbox}")
        elif action == "move":
            message_id, source, target = rest
            check("select", imap.select(source))
            data = check("search", imap.uid("SEARCH", "HEADER", "Message-ID", message_id))
            uids = data[0].split()
            if len(uids) != 1:
                sys.exit(f"imap_client: {len(uids)} messages with {message_id} in {source}")
            check("move", imap.uid("MOVE", uids[0], target))
            print(f"moved {message_id} from {source} to {target}")
        elif action == "create":
            (mailbox,) = rest
            check("create", imap.create(mailbox))
            print(f"created {mailbox}")
        elif action == "count":
            (mailbox,) = rest
            data = check("select", imap.select(mailbox, readonly=True))
            print(f"{mailbox}: {int(data[0])} message(s)")
        else:
            sys.exit(f"imap_client: unknown action {action}")
        imap.logout()
    finally:
        try:
            imap.shutdown()
        except OSError:
            pass


if __name__ == "__main__":
    main(sys.argv)
