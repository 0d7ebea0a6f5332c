#!/usr/bin/env bash
# Rebuilds corpus/sample/{ham,spam}/ from the full corpus (run fetch-spamassassin.sh first).
# Deterministic: in each group, files are ordered by the MD5 in their names (a fixed
# pseudo-random order) and the first N are taken; then a few messages the tokenizer tests
# need are added by name. File names keep their group: GROUP.NNNNN.MD5.txt.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$here/spamassassin"
out="$here/sample"

take() { # class group n
  ls "$src/$1/$2" | sort -t. -k2 | sed -n "1,${3}p" | while read -r f; do
    cp "$src/$1/$2/$f" "$out/$1/$2.$f"
  done
}
add() { # class group file: a message a test relies on
  cp "$src/$1/$2/$3" "$out/$1/$2.$3"
}

rm -rf "$out"
mkdir -p "$out/ham" "$out/spam"
take ham easy-ham-1 40
take ham easy-ham-2 30
take ham hard-ham-1 30
take spam spam-1 50
take spam spam-2 50
add spam spam-1 00023.b6d27c684f5fc803cfa1060adb2d0805.txt   # base64 HTML, multipart never closed
add spam spam-1 00397.1a99f98a5b996f99f3661e9609782932.txt   # GB2312 HTML, Chinese From name
add spam spam-2 00909.be44baf9966a96b2154b207cc56fe558.txt   # GB2312 Chinese body
add spam spam-1 00089.7e7baae6ef4a8fb945d7b3fe551329fe.txt   # declared koi8-r
add ham easy-ham-1 00062.009f5a1a8fa88f0b38299ad01562bb37.txt # quoted-printable, windows-1252
echo "sample: $(ls "$out/ham" | wc -l) ham, $(ls "$out/spam" | wc -l) spam"
