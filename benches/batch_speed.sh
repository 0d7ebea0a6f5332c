#!/usr/bin/env bash
# Batch speed and memory against bogofilter (Debian's, installed here if missing), whole
# processes, in one run, the tools alternating which goes first in every round:
#   - classify: `spamsort classify --format tsv` of every SpamAssassin message against
#     `bogofilter -b -v`, each with a model trained on the whole corpus the same way;
#   - train: `spamsort train` against `bogofilter -s -b` then `-n -b` (the two processes
#     summed, the larger peak RSS) on the same file lists, from nothing each round;
#   - train memory: spamsort's peak RSS trained on the corpus 1x, 2x and 4x (the corpus
#     repeated, each copy's Message-ID domain changed so no copy is the same message as
#     another: `train` counts a message found again once, and a message is its tokens, of
#     which the Message-ID gives its domain alone).
# Times and peak RSS come from `/usr/bin/time -f "%e %M"`; the median of the rounds is printed
# with the ratios. Prints `uptime` first: the machine's load changes every figure.
#
# Expects `cargo build --release` first (builds nothing itself).
# Usage: benches/batch_speed.sh [ROUNDS]   (default 3)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds="${1:-3}"
bin=./target/release/spamsort
[ -x "$bin" ] || { echo "batch_speed.sh: run cargo build --release first" >&2; exit 1; }

corpus/fetch-spamassassin.sh >/dev/null
if ! command -v bogofilter >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bogofilter >/dev/null
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Copy 0 is the corpus itself; copies 1-3 have `copyK.` put into their Message-ID's domain (or
# a Message-ID of their own where a message has none with a domain).
find "$PWD/corpus/spamassassin/spam" -type f -name '*.txt' | sort > "$work/spam.0"
find "$PWD/corpus/spamassassin/ham" -type f -name '*.txt' | sort > "$work/ham.0"
python3 - "$work" <<'PY'
import re, sys
work = sys.argv[1]
message_id = re.compile(rb"^(message-id:[ \t]*<?[^@\r\n]*@)", re.I | re.M)
for k in (1, 2, 3):
    for cls in ("spam", "ham"):
        paths = []
        for n, src in enumerate(open(f"{work}/{cls}.0").read().split("\n")[:-1], 1):
            data = open(src, "rb").read()
            blank = re.search(rb"\n\r?\n", data)
            end = blank.start() + 1 if blank else len(data)
            head, body = data[:end], data[end:]
            new, found = message_id.subn(rb"\1copy%d." % k, head, count=1)
            if not found:
                new = b"Message-ID: <%d@copy%d.bench.invalid>\n" % (n, k) + head
            out = f"{work}/copy{k}.{cls}.{n}.txt"
            open(out, "wb").write(new + body)
            paths.append(out)
        open(f"{work}/{cls}.{k}", "w").write("".join(p + "\n" for p in paths))
PY
# spamsort reads file lists as TREC index files.
for x in 1 2 4; do
  : > "$work/spam.${x}x"; : > "$work/ham.${x}x"
  for ((k = 0; k < x; k++)); do
    cat "$work/spam.$k" >> "$work/spam.${x}x"; cat "$work/ham.$k" >> "$work/ham.${x}x"
  done
  sed 's/^/spam /' "$work/spam.${x}x" > "$work/spam.${x}x.index"
  sed 's/^/ham /' "$work/ham.${x}x" > "$work/ham.${x}x.index"
done
cat "$work/spam.0" "$work/ham.0" > "$work/all"

echo "training the classify models ..." >&2
"$bin" train --spam "$work/spam.1x.index" --ham "$work/ham.1x.index" --model "$work/model" 2>/dev/null
mkdir -p "$work/bogo"
bogofilter -d "$work/bogo" -s -b < "$work/spam.1x"
bogofilter -d "$work/bogo" -n -b < "$work/ham.1x"

uptime
python3 - "$work" "$rounds" "$bin" <<'PY'
import os, shutil, statistics, subprocess, sys
work, rounds, bin = sys.argv[1], int(sys.argv[2]), sys.argv[3]
n_messages = sum(1 for _ in open(f"{work}/all"))

def timed(cmd, stdin=None):
    """Runs cmd under /usr/bin/time: (seconds, peak RSS in MB, stdout)."""
    out = subprocess.run(["/usr/bin/time", "-o", f"{work}/time", "-f", "%e %M"] + cmd,
                         stdin=open(stdin, "rb") if stdin else None,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    e, m = open(f"{work}/time").read().split()[-2:]
    return float(e), int(m) / 1024, out

def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path

def spamsort_classify():
    t, m, out = timed([bin, "classify", "--format", "tsv", "--model", f"{work}/model",
                       "corpus/spamassassin/spam", "corpus/spamassassin/ham"])
    lines = out.count(b"\n")
    assert lines == n_messages, f"spamsort classified {lines} of {n_messages}"
    return t, m

def bogofilter_classify():
    t, m, out = timed(["bogofilter", "-d", f"{work}/bogo", "-b", "-v"], stdin=f"{work}/all")
    lines = out.count(b"\n")
    assert lines == n_messages, f"bogofilter classified {lines} of {n_messages}"
    return t, m

def spamsort_train(x):
    model = os.path.join(fresh(f"{work}/train"), "model")
    t, m, _ = timed([bin, "train", "--spam", f"{work}/spam.{x}x.index",
                     "--ham", f"{work}/ham.{x}x.index", "--model", model])
    assert os.path.getsize(model) > 0
    return t, m

def bogofilter_train(x):
    d = fresh(f"{work}/bogotrain")
    t1, m1, _ = timed(["bogofilter", "-d", d, "-s", "-b"], stdin=f"{work}/spam.{x}x")
    t2, m2, _ = timed(["bogofilter", "-d", d, "-n", "-b"], stdin=f"{work}/ham.{x}x")
    return t1 + t2, max(m1, m2)

jobs = {
    "spamsort classify": spamsort_classify,
    "bogofilter -b -v": bogofilter_classify,
    "spamsort train 1x": lambda: spamsort_train(1),
    "bogofilter train 1x": lambda: bogofilter_train(1),
    "spamsort train 2x": lambda: spamsort_train(2),
    "spamsort train 4x": lambda: spamsort_train(4),
}
results = {name: [] for name in jobs}
for r in range(rounds):
    order = list(jobs.items())
    order = order[r % len(order):] + order[:r % len(order)]
    for name, job in order:
        results[name].append(job())
med = {name: (statistics.median(t for t, _ in v), statistics.median(m for _, m in v))
       for name, v in results.items()}
print(f"{n_messages} messages, {rounds} rounds alternated; median seconds and peak RSS")
print(f"{'job':<22} {'seconds':>8} {'peak MB':>8}   all rounds (s)")
for name, (t, m) in med.items():
    print(f"{name:<22} {t:>8.2f} {m:>8.1f}   {' '.join(f'{t:.2f}' for t, _ in results[name])}")
c = med["bogofilter -b -v"][0] / med["spamsort classify"][0]
tr = med["bogofilter train 1x"][0] / med["spamsort train 1x"][0]
print(f"classify: spamsort {c:.1f} times faster than bogofilter -b -v")
print(f"train: spamsort {tr:.1f} times faster than bogofilter -s/-n -b")
m1, m2, m4 = (med[f"spamsort train {x}x"][1] for x in (1, 2, 4))
print(f"train peak RSS 1x {m1:.1f} MB, 2x {m2:.1f} MB ({m2 / m1:.2f}x), 4x {m4:.1f} MB ({m4 / m1:.2f}x)")
PY
