#!/usr/bin/env bash
# Installs what the tests need beyond the Rust toolchain: Debian's spamc (the real spamd client
# the spamd tests drive). Does nothing when it is already there.
set -euo pipefail
if command -v spamc >/dev/null; then
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  sudo="sudo"
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends spamc >/dev/null
command -v spamc >/dev/null
