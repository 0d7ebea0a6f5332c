#!/usr/bin/env bash
# Learning latency as a user's corrections run it: one whole process per learned message.
# spamsort and bogofilter (Debian's, installed here if missing) are trained on the same
# messages: the whole SpamAssassin corpus less a fixed hold-out (every k-th file of the sorted
# spam + ham list, N files). Then each held-out message, in that order, is learned with its true
# label by `spamsort learn --spam|--ham --model M FILE` and by `bogofilter -d DIR -s|-n < FILE`,
# the two (and `cat`, the floor of a process started and the message piped) alternating which
# goes first, in one run. Both learn into ONE trained copy, in sequence, as a user's corrections
# accumulate (no fresh copy per message: copying a 13 MB database would be timed or would need
# a second clock). The hold-out matters: spamsort learns a message once, so learning a training
# message again is a no-op and would not time real learning; the held-out ones are new to both.
# Prints median, mean and 90th percentile per message and the ratio to bogofilter, then the
# model file's size against bogofilter's wordlist.db, trained on the whole corpus (no hold-out).
#
# Expects `cargo build --release` first (builds nothing itself).
# Usage: benches/learn_latency.sh [MESSAGES]   (default 100)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n="${1:-100}"
bin=./target/release/spamsort
[ -x "$bin" ] || { echo "learn_latency.sh: run cargo build --release first" >&2; exit 1; }

corpus/fetch-spamassassin.sh >/dev/null
if ! command -v bogofilter >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bogofilter >/dev/null
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Every file as `LABEL ABSOLUTE-PATH`, sorted; every k-th is held out.
for label in spam ham; do
  find "$PWD/corpus/spamassassin/$label" -type f -name '*.txt' | sed "s/^/$label /"
done | sort -k2 > "$work/all.index"
total=$(wc -l < "$work/all.index")
step=$((total / n)); [ "$step" -ge 1 ] || step=1
awk -v s="$step" -v n="$n" 'NR % s == 0 && ++c <= n' "$work/all.index" > "$work/held.index"
awk -v s="$step" -v n="$n" '!(NR % s == 0 && ++c <= n)' "$work/all.index" > "$work/train.index"

# train INDEX SPAMSORT-MODEL BOGOFILTER-DIR: both tools on the same messages.
train() {
  grep '^spam ' "$1" > "$work/t.spam"; grep '^ham ' "$1" > "$work/t.ham"
  "$bin" train --spam "$work/t.spam" --ham "$work/t.ham" --model "$2" 2>/dev/null
  mkdir -p "$3"
  cut -d' ' -f2- "$work/t.spam" | bogofilter -d "$3" -s -b
  cut -d' ' -f2- "$work/t.ham" | bogofilter -d "$3" -n -b
}
echo "training both on the corpus less $(wc -l < "$work/held.index") held-out messages ..." >&2
train "$work/train.index" "$work/model.spamsort" "$work/bogo"
echo "training both on the whole corpus (for the sizes) ..." >&2
train "$work/all.index" "$work/full.spamsort" "$work/full-bogo"

python3 - "$work" "$bin" <<'PY'
import os, statistics, subprocess, sys, time
work, binary = sys.argv[1], sys.argv[2]
held = [line.rstrip("\n").split(" ", 1) for line in open(f"{work}/held.index")]

def info_messages():
    """Messages learned per class, from `spamsort info`'s `messages: S spam, H ham` line."""
    out = subprocess.run([binary, "info", "--model", f"{work}/model.spamsort"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
    line = next(l for l in out.decode(errors="replace").splitlines() if l.startswith("messages:"))
    spam, ham = (int(w) for w in line.replace(",", " ").split() if w.isdigit())
    return spam + ham

before = info_messages()
times = {"spamsort learn": [], "bogofilter -s/-n": [], "cat": []}
for i, (label, path) in enumerate(held):
    data = open(path, "rb").read()
    cmds = {
        "spamsort learn": ([binary, "learn", f"--{label}", "--model", f"{work}/model.spamsort", path], None),
        "bogofilter -s/-n": (["bogofilter", "-d", f"{work}/bogo", "-s" if label == "spam" else "-n"], data),
        "cat": (["cat"], data),
    }
    order = list(cmds.items())
    order = order[i % len(order):] + order[:i % len(order)]
    for name, (cmd, stdin) in order:
        t = time.perf_counter()
        subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times[name].append(time.perf_counter() - t)
after = info_messages()

spam = sum(1 for label, _ in held if label == "spam")
print(f"{len(held)} held-out messages ({spam} spam, {len(held) - spam} ham), one process each,"
      " learned in sequence into one trained copy")
print(f"{'tool':<17} {'median ms':>10} {'mean ms':>9} {'p90 ms':>8}")
for name, ts in times.items():
    ts = sorted(ts)
    print(f"{name:<17} {1000*statistics.median(ts):>10.2f} {1000*statistics.mean(ts):>9.2f} {1000*ts[int(0.9*len(ts))]:>8.2f}")
med = {k: statistics.median(v) for k, v in times.items()}
p90 = {k: sorted(v)[int(0.9 * len(v))] for k, v in times.items()}
print(f"spamsort learn / bogofilter median ratio: {med['spamsort learn'] / med['bogofilter -s/-n']:.2f}")
print(f"spamsort learn / bogofilter p90 ratio: {p90['spamsort learn'] / p90['bogofilter -s/-n']:.2f}")
print("spamsort learn / bogofilter median above the cat floor:"
      f" {(med['spamsort learn'] - med['cat']) / (med['bogofilter -s/-n'] - med['cat']):.2f}")
# A held-out file that is a copy of a training message (the corpus has a few) is a no-op for
# spamsort (learn once); say how many were really learned.
print(f"spamsort learned {after - before} of them (the rest: copies of training messages, learned once)")

model = os.path.getsize(f"{work}/full.spamsort")
db = os.path.getsize(f"{work}/full-bogo/wordlist.db")
print(f"whole corpus: spamsort model file {model / 1e6:.2f} MB, bogofilter wordlist.db {db / 1e6:.2f} MB,"
      f" ratio {model / db:.2f}")
PY
