#!/usr/bin/env bash
# Pipe-mode latency as real mail setups run it: one process per message, the model loaded
# each time. spamsort filter and bogofilter (Debian's, installed here if missing) are trained
# on the same messages (the whole SpamAssassin corpus) and then each filters the same sample
# of messages, in one run, the tools in a new order for every message (shuffled with a fixed
# seed: in a fixed rotation each tool would always follow the same one, and a filter that runs
# right after another reading the same model finds it in the CPU's caches: one build scored
# 0.20 or 0.28 of bogofilter's work above `cat` by its place in the rotation). Prints median,
# mean and 90th percentile per message,
# process start included, and the ratios to bogofilter, of the whole time and of the work above
# the floor of `cat` (a process started and the message piped through). spamsort is measured
# twice: the default build, and the build README recommends for pipe mode, statically linked
# against musl (target x86_64-unknown-linux-musl, still position-independent), compiled for
# this machine's CPU (`-C target-cpu=native`) and linked with packed relative relocations
# (`-z pack-relative-relocs`), which skips the dynamic loader, glibc's start-up (its CPU cache
# probing by `cpuid`, slow in a VM), the Rust crates' own probing of the CPU's features
# (memchr's, crc32fast's: `cpuid` again) and most of the relocation table at every start. The
# two builds must write the same bytes for every message. The static build is also timed on
# copies of the model whose journal holds 1, 8 and 16 `spamsort learn` runs (16: the most
# before the next learn compacts the file), each learning one corpus spam with its Subject
# changed (so it is a new message), as a user's corrections leave the file between compactions.
#
# Usage: benches/pipe_latency.sh [MESSAGES]   (default 600)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n="${1:-600}"

corpus/fetch-spamassassin.sh >/dev/null
if ! command -v bogofilter >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bogofilter >/dev/null
fi
# The static build: Rust's musl target, and musl-gcc for mimalloc's C.
musl="$(uname -m)-unknown-linux-musl"
rustup target list --installed | grep -qx "$musl" || rustup target add "$musl"
if ! command -v musl-gcc >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq musl-tools >/dev/null
fi
cargo build --release --quiet
# RUSTFLAGS reach the target alone (not build scripts) when --target is given.
RUSTFLAGS="-C target-cpu=native -C link-arg=-Wl,-z,pack-relative-relocs" \
  cargo build --release --quiet --target "$musl"
static_bin="target/$musl/release/spamsort"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "training spamsort and bogofilter on corpus/spamassassin ..." >&2
./target/release/spamsort train --spam corpus/spamassassin/spam --ham corpus/spamassassin/ham \
  --model "$work/model.spamsort" 2>/dev/null
mkdir -p "$work/bogo"
find corpus/spamassassin/spam -type f -name '*.txt' | sort | bogofilter -d "$work/bogo" -s -b
find corpus/spamassassin/ham -type f -name '*.txt' | sort | bogofilter -d "$work/bogo" -n -b
echo "learning 1, 8 and 16 messages into copies of the model (their journals) ..." >&2
for k in 1 8 16; do cp "$work/model.spamsort" "$work/journal-$k.spamsort"; done
find corpus/spamassassin/spam -type f -name '*.txt' | sort > "$work/spam.list"
i=0
head -n 16 "$work/spam.list" | while read -r f; do
  i=$((i + 1))
  sed "s/^Subject:/Subject: correction $i/" "$f" > "$work/correction.eml"
  for k in 1 8 16; do
    if [ "$i" -le "$k" ]; then
      ./target/release/spamsort learn --spam --model "$work/journal-$k.spamsort" \
        "$work/correction.eml" >/dev/null 2>&1
    fi
  done
done

python3 - "$work" "$n" "$static_bin" <<'PY'
import os, random, statistics, subprocess, sys, time
work, n, static_bin = sys.argv[1], int(sys.argv[2]), sys.argv[3]
files = sorted(os.path.join(d, f) for root in ("corpus/spamassassin/spam", "corpus/spamassassin/ham")
               for d, _, fs in os.walk(root) for f in fs)
step = max(1, len(files) // n)
sample = files[::step][:n]
tools = {
    "spamsort filter": ["./target/release/spamsort", "filter", "--model", f"{work}/model.spamsort"],
    "spamsort (static)": [static_bin, "filter", "--model", f"{work}/model.spamsort"],
    **{f"static, journal {k}": [static_bin, "filter", "--model", f"{work}/journal-{k}.spamsort"]
       for k in (1, 8, 16)},
    "bogofilter -p -e": ["bogofilter", "-d", f"{work}/bogo", "-p", "-e"],
    # The floor: starting a process and piping the message through it.
    "cat": ["cat"],
}
times = {name: [] for name in tools}
shuffle = random.Random(20261124)
for path in sample:
    data = open(path, "rb").read()
    order = list(tools.items())
    shuffle.shuffle(order)
    outputs = {}
    for name, cmd in order:
        t = time.perf_counter()
        out = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
        times[name].append(time.perf_counter() - t)
        assert len(out) >= len(data), f"{name} lost bytes of {path}"
        outputs[name] = out
    assert outputs["spamsort filter"] == outputs["spamsort (static)"], f"the builds differ on {path}"
print(f"{len(sample)} messages, one process each, model loaded each time")
print(f"{'tool':<20} {'median ms':>10} {'mean ms':>9} {'p90 ms':>8}")
for name, ts in times.items():
    ts = sorted(ts)
    print(f"{name:<20} {1000*statistics.median(ts):>10.2f} {1000*statistics.mean(ts):>9.2f} {1000*ts[int(0.9*len(ts))]:>8.2f}")
medians = {k: statistics.median(v) for k, v in times.items()}
bogo = medians["bogofilter -p -e"]
floor = medians["cat"]
for name in ("spamsort filter", "spamsort (static)"):
    print(f"{name} / bogofilter median ratio: {medians[name] / bogo:.2f}")
    print(f"{name} / bogofilter median above the cat floor: {(medians[name] - floor) / (bogo - floor):.2f}")
for k in (1, 8, 16):
    print(f"static, journal {k} / bogofilter median ratio: {medians[f'static, journal {k}'] / bogo:.2f}")
PY
