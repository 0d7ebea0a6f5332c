#!/bin/sh
# Called by Dovecot's Sieve pipe extension (report-spam.sieve, report-ham.sieve) with the
# message on stdin: `spamsort-learn.sh spam|ham [USER]`. Teaches spamsort the message's class,
# one of two ways (edit the settings below):
#
#   LEARN_WITH=spamc     TELL through spamc to `spamsort serve --allow-tell` (the server writes
#                        the model; the mail user needs no access to the model file).
#   LEARN_WITH=spamsort  `spamsort learn` on the model file directly (the mail user, often
#                        vmail, must be able to write the model file and its directory).
#                        A running `serve` or `daemon` on that file reads it again.
#
# Dovecot runs this script as the mail user, with a clean environment, and gives it
# sieve_pipe_exec_timeout (10 s by default) before it kills it. A failure is logged by Dovecot
# and never stops the IMAP move.
set -eu

# --- settings -----------------------------------------------------------------------------
LEARN_WITH=spamc
# spamc's connection to `spamsort serve`: -d HOST -p PORT, or -U SOCKET (7830: the port of
# contrib/spamsort-serve.service, whose ExecStart needs --allow-tell for this). -t bounds the
# wait. -s: spamc sends nothing over this size (500 KB by default: exit 98, not learned);
# 10 MiB is serve's own --max-size default.
SPAMC_ARGS="-d 127.0.0.1 -p 7830 -t 8 -s 10485760"
# Set to yes to pass the IMAP user name to spamc (-u USER), for a server with per-user models.
SPAMC_PER_USER=no
# For LEARN_WITH=spamsort: the binary and its model file.
SPAMSORT=/usr/local/bin/spamsort
SPAMSORT_MODEL=/var/lib/spamsort/model.spamsort
# ------------------------------------------------------------------------------------------

class="${1:-}"
user="${2:-}"
case "$class" in
  spam|ham) ;;
  *) echo "usage: $0 spam|ham [USER]" >&2; exit 64 ;;
esac

PATH=/usr/local/bin:/usr/bin:/bin
export PATH

case "$LEARN_WITH" in
  spamc)
    if [ "$SPAMC_PER_USER" = yes ] && [ -n "$user" ]; then
      # shellcheck disable=SC2086 # SPAMC_ARGS is a list of words
      exec spamc $SPAMC_ARGS -u "$user" -L "$class"
    fi
    # shellcheck disable=SC2086
    exec spamc $SPAMC_ARGS -L "$class"
    ;;
  spamsort)
    # Dovecot logs whatever the program writes to stderr as an error: keep learn's summary
    # line out of it unless learning failed.
    if ! report="$("$SPAMSORT" learn --model "$SPAMSORT_MODEL" "--$class" - 2>&1)"; then
      echo "$report" >&2
      exit 1
    fi
    ;;
  *)
    echo "$0: LEARN_WITH must be spamc or spamsort, not $LEARN_WITH" >&2
    exit 78
    ;;
esac
