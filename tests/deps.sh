#!/usr/bin/env bash
# Installs what the tests need beyond the Rust toolchain, with apt-get (Debian), doing nothing
# for what is already there:
#   tests/deps.sh            Debian's spamc (the real spamd client the spamd tests drive).
#   tests/deps.sh --dovecot  also dovecot-imapd and dovecot-sieve, for the Dovecot IMAPSieve test
#                            (tests/dovecot/run.sh). They start a system IMAP server unless the
#                            machine's policy-rc.d forbids it, so this is meant for throwaway CI
#                            machines; exits 1 (spamc installed) when they cannot be installed.
set -euo pipefail
sudo=""
if [ "$(id -u)" != 0 ]; then
  sudo="sudo"
fi
updated=""
apt_install() { # PACKAGE...
  if [ -z "$updated" ]; then
    $sudo apt-get update -qq
    updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! command -v spamc >/dev/null; then
  apt_install spamc
  command -v spamc >/dev/null
fi

if [ "${1:-}" = --dovecot ]; then
  if ! command -v dovecot >/dev/null || [ ! -e /usr/lib/dovecot/modules/lib95_imap_sieve_plugin.so ]; then
    apt_install dovecot-imapd dovecot-sieve || true
  fi
  command -v dovecot >/dev/null && [ -e /usr/lib/dovecot/modules/lib95_imap_sieve_plugin.so ]
fi
