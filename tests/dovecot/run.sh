#!/usr/bin/env bash
# The Dovecot IMAPSieve recipe (contrib/dovecot/) against a real Dovecot: learns spam when a
# message is moved into Junk and ham when it is moved out, each exactly once.
#
#   tests/dovecot/run.sh [SPAMSORT_BINARY]     (default: target/debug/spamsort)
#
# Needs Debian's dovecot-imapd and dovecot-sieve, spamc and python3; without them it prints a
# SKIPPED banner and exits 0 (`tests/deps.sh --dovecot` installs them, as .ci/run does;
# `cargo test` runs this script through tests/dovecot.rs). Touches no system configuration:
# everything (dovecot.conf, its base_dir and state, the passwd-file user with its maildir, the
# model, the logs) lives in one temporary directory, and both servers listen on 127.0.0.1 only,
# on free ports, without TLS. Runs as
# root (the mail user is then `nobody`, as Dovecot refuses mail access as root) or as any other
# user (then Dovecot runs rootless as that user). Every step is bounded by a timeout and a trap
# stops both servers and removes the directory, so it can never hang or leave anything behind.
#
# Both ways of learning that spamsort-learn.sh offers are exercised, each on a fresh model:
# LEARN_WITH=spamc (TELL to `spamsort serve --allow-tell`) and LEARN_WITH=spamsort
# (`spamsort learn` on the model file, as the mail user).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
spamsort="$(realpath "${1:-$repo/target/debug/spamsort}")"

# Without what it needs the test is skipped, loudly; with SPAMSORT_REQUIRE_DOVECOT=1 (.ci/run
# sets it when the install worked) a skip is a failure instead.
skip() {
  if [ "${SPAMSORT_REQUIRE_DOVECOT:-}" = 1 ]; then
    echo "FAIL: Dovecot IMAPSieve test cannot run: $1 (and SPAMSORT_REQUIRE_DOVECOT=1)" >&2
    exit 1
  fi
  {
    echo "######################################################################"
    echo "## SKIPPED: Dovecot IMAPSieve test: $1"
    echo "## (tests/deps.sh --dovecot installs dovecot-imapd and dovecot-sieve)"
    echo "######################################################################"
  } >&2
  exit 0
}

command -v dovecot >/dev/null || skip "dovecot is not installed"
[ -e /usr/lib/dovecot/modules/lib95_imap_sieve_plugin.so ] || skip "dovecot-sieve is not installed"
command -v spamc >/dev/null || skip "spamc is not installed (tests/deps.sh installs it)"
command -v python3 >/dev/null || skip "python3 is not installed"
[ -x "$spamsort" ] || { echo "no spamsort binary at $spamsort" >&2; exit 1; }

tmp="$(mktemp -d /tmp/spamsort-dovecot.XXXXXX)"
serve_pid=""
cleanup() {
  status=$?
  if [ -n "$serve_pid" ]; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  if [ -f "$tmp/run/master.pid" ]; then
    # SIGTERM stops Dovecot's master and its children; give it 10 s, then kill it outright.
    master="$(cat "$tmp/run/master.pid")"
    kill "$master" 2>/dev/null || true
    for _ in $(seq 100); do
      kill -0 "$master" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$master" 2>/dev/null || true
  fi
  if [ "$status" != 0 ]; then
    for log in "$tmp"/*.log; do
      [ -f "$log" ] && { echo "--- $log" >&2; tail -n 40 "$log" >&2; }
    done
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Dovecot's mail user must reach its home and the scripts inside the directory.
chmod 755 "$tmp"
# No one's own spamsort settings: every spamsort run here sees the mail user's empty home.
export HOME="$tmp/home"
unset XDG_CONFIG_HOME XDG_DATA_HOME SPAMSORT_CONFIG SPAMSORT_MODEL

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Users: rootless Dovecot runs everything as the current user; as root, Dovecot's own
# dovenull/dovecot users (created by the package) and `nobody` for the mail.
if [ "$(id -u)" = 0 ]; then
  login_user=dovenull internal_user=dovecot mail_user=nobody
else
  login_user="$(id -un)" internal_user="$(id -un)" mail_user="$(id -un)"
fi
mail_uid="$(id -u "$mail_user")"
mail_gid="$(id -g "$mail_user")"


imap_port="$(free_port)"
spamd_port="$(free_port)"
mkdir -p "$tmp/run" "$tmp/state" "$tmp/sieve" "$tmp/sieve-bin" "$tmp/home" "$tmp/model"
echo "tester:{PLAIN}secret:$mail_uid:$mail_gid::$tmp/home::" >"$tmp/passwd"
cp "$repo/contrib/dovecot/report-spam.sieve" "$repo/contrib/dovecot/report-ham.sieve" "$tmp/sieve/"

# The recipe's own settings file, with the paths of this directory and a separate instance.
sed -e "s|/etc/dovecot/sieve/|$tmp/sieve/|" -e "s|/usr/lib/dovecot/sieve-pipe|$tmp/sieve-bin|" \
  "$repo/contrib/dovecot/90-spamsort-imapsieve.conf" >"$tmp/90-spamsort-imapsieve.conf"
cat >"$tmp/dovecot.conf" <<CONF
# Written by tests/dovecot/run.sh: a throwaway Dovecot on 127.0.0.1:$imap_port.
instance_name = spamsort-test-$$
base_dir = $tmp/run
state_dir = $tmp/state
log_path = $tmp/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain
default_login_user = $login_user
default_internal_user = $internal_user
default_internal_group = $(id -gn "$internal_user")
first_valid_uid = 1
mail_location = maildir:~/Maildir
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u $tmp/passwd
}
userdb {
  driver = passwd-file
  args = username_format=%u $tmp/passwd
}
namespace inbox {
  inbox = yes
  separator = /
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = $imap_port
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
service stats {
  unix_listener stats-writer {
    mode = 0666
  }
}
!include $tmp/90-spamsort-imapsieve.conf
CONF

chmod -R a+rX "$tmp/sieve" "$tmp/sieve-bin"
chown -R "$mail_uid:$mail_gid" "$tmp/home" "$tmp/model"
for script in report-spam report-ham; do
  timeout 20 sievec -c "$tmp/dovecot.conf" "$tmp/sieve/$script.sieve"
done

echo "== dovecot $(dovecot --version) on 127.0.0.1:$imap_port, mail user $mail_user"
timeout 20 dovecot -c "$tmp/dovecot.conf"
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $imap_port), 1).close()" 2>/dev/null && break
  sleep 0.1
done

imap() {
  timeout 30 python3 "$repo/tests/dovecot/imap_client.py" "$imap_port" tester secret "$@"
}

# The messages learned per class, from spamsort info's "N spam, M ham", as "N M".
counts() {
  local info got
  info="$(timeout 20 "$tmp/spamsort" info --model "$1")"
  got="$(sed -n 's/.*[^0-9]\([0-9][0-9]*\) spam, \([0-9][0-9]*\) ham.*/\1 \2/p' <<<"$info" | head -n 1)"
  if [ -z "$got" ]; then
    echo "FAIL: no \"N spam, M ham\" line in spamsort info's output:" >&2
    echo "$info" >&2
    exit 1
  fi
  echo "$got"
}

expect_counts() { # MODEL SPAM HAM WHAT
  got="$(counts "$1")"
  if [ "$got" != "$2 $3" ]; then
    echo "FAIL: after $4 the model holds $got (spam ham), expected $2 $3" >&2
    exit 1
  fi
  echo "   model: $2 spam, $3 ham (after $4)"
}

# Over 500 KB, spamc's default limit, so the recipe's spamc -s setting is what lets it through.
write_message() { # MESSAGE-ID FILE
  {
    printf 'From: someone@example.org\r\nTo: tester@example.org\r\nSubject: cheap meds\r\n'
    printf 'Message-ID: %s\r\n\r\nBuy now, limited offer.\r\n' "$1"
    python3 -c 'import sys; sys.stdout.write(("Order today and save. " * 3 + "\r\n") * 9000)'
  } >"$2"
}

# One round: train a fresh model, point spamsort-learn.sh at it, move a message into Junk and
# out again, and check the counts after each step.
round() { # MODE
  mode="$1"
  model="$tmp/model/$mode.spamsort"
  echo "== LEARN_WITH=$mode"
  timeout 60 "$tmp/spamsort" train --spam "$repo/corpus/sample/spam" \
    --ham "$repo/corpus/sample/ham" --model "$model" 2>>"$tmp/train.log"
  # The mail user owns the model and its lock file, as it would in production (the checkout,
  # where the corpus is, may be out of its reach, so it does not train).
  chown -R "$mail_uid:$mail_gid" "$tmp/model"
  start="$(counts "$model")"
  read -r spam0 ham0 <<<"$start"
  echo "   model: $spam0 spam, $ham0 ham (trained on corpus/sample)"

  if [ "$mode" = spamc ]; then
    "$tmp/spamsort" serve --listen "127.0.0.1:$spamd_port" --model "$model" --allow-tell \
      2>"$tmp/serve.log" &
    serve_pid=$!
    for _ in $(seq 100); do
      timeout 5 spamc -d 127.0.0.1 -p "$spamd_port" -K >/dev/null 2>&1 && break
      sleep 0.1
    done
  fi
  sed -e "s|^LEARN_WITH=.*|LEARN_WITH=$mode|" \
    -e "/^SPAMC_ARGS=/s|-p 7830|-p $spamd_port|" \
    -e "s|^SPAMSORT=.*|SPAMSORT=$tmp/spamsort|" \
    -e "s|^SPAMSORT_MODEL=.*|SPAMSORT_MODEL=$model|" \
    "$repo/contrib/dovecot/spamsort-learn.sh" >"$tmp/sieve-bin/spamsort-learn.sh"
  chmod 755 "$tmp/sieve-bin/spamsort-learn.sh"

  id="<dovecot-$mode-$$@spamsort.test>"
  write_message "$id" "$tmp/message.eml"
  imap append INBOX "$tmp/message.eml"
  expect_counts "$model" "$spam0" "$ham0" "APPEND to INBOX"
  imap move "$id" INBOX Junk
  expect_counts "$model" "$((spam0 + 1))" "$ham0" "MOVE INBOX -> Junk"
  imap move "$id" Junk INBOX
  # Learned once: moved back out of Junk, the message is relabeled (no longer spam, now ham).
  expect_counts "$model" "$spam0" "$((ham0 + 1))" "MOVE Junk -> INBOX"

  # What must teach nothing: mail appended straight into Junk (delivered there), and spam
  # deleted from Junk by moving it to Trash.
  write_message "<dovecot-$mode-trash-$$@spamsort.test>" "$tmp/message.eml"
  imap append Junk "$tmp/message.eml"
  expect_counts "$model" "$spam0" "$((ham0 + 1))" "APPEND to Junk"
  imap move "<dovecot-$mode-trash-$$@spamsort.test>" Junk Trash
  expect_counts "$model" "$spam0" "$((ham0 + 1))" "MOVE Junk -> Trash"
  for box in INBOX Junk Trash; do
    imap count "$box" | sed 's/^/   /'
  done

  if [ -n "$serve_pid" ]; then
    kill "$serve_pid"
    wait "$serve_pid" 2>/dev/null || true
    serve_pid=""
  fi
}

# The mail user runs `spamsort learn`: give it a copy of the binary it can reach.
install -m 755 "$spamsort" "$tmp/spamsort"
imap create Trash
round spamc
round spamsort

if grep -qE '(Error|Fatal|Panic): ' "$tmp/dovecot.log"; then
  echo "FAIL: errors in the Dovecot log:" >&2
  grep -E '(Error|Fatal|Panic): ' "$tmp/dovecot.log" >&2
  exit 1
fi
echo "PASS: Dovecot IMAPSieve learned each move exactly once (spamc and spamsort learn)"
