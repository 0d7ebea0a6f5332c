#!/usr/bin/env bash
# spamsort against bogofilter and spamprobe (Debian's, installed here if missing) on the same
# stratified folds of one corpus, in one run: each tool is trained from scratch on each
# training split and scores the held-out messages. Prints mean (1-AUC)%, training seconds per
# fold, and bulk scoring messages per second (one process scoring all held-out files), with
# ratios against spamsort. spamsort's model is its active (default) model.
#
# Usage: benches/compare.sh [SPAM_DIR HAM_DIR] [FOLDS] [SEED]
#   default: the SpamAssassin corpus (fetched if needed), 5 folds, seed 42.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ $# -ge 2 ]; then spam_dir="$1"; ham_dir="$2"; shift 2; else
  corpus/fetch-spamassassin.sh >/dev/null
  spam_dir=corpus/spamassassin/spam; ham_dir=corpus/spamassassin/ham
fi
folds="${1:-5}"; seed="${2:-42}"
missing=()
command -v bogofilter >/dev/null || missing+=(bogofilter)
command -v spamprobe >/dev/null || missing+=(spamprobe)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
cargo build --release --quiet --bin spamsort --example folds
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
./target/release/examples/folds "$spam_dir" "$ham_dir" "$folds" "$seed" "$work/folds"

now() { date +%s.%N; }
for ((k = 0; k < folds; k++)); do
  f="$work/folds/$k"
  cut -d' ' -f2- "$f.test" > "$f.test.paths"
  # spamsort reads the training lists as TREC index files.
  sed 's/^/spam /' "$f.train.spam" > "$f.train.spam.index"
  sed 's/^/ham /' "$f.train.ham" > "$f.train.ham.index"
  mkdir -p "$work/ss$k"
  t0=$(now)
  ./target/release/spamsort train --spam "$f.train.spam.index" --ham "$f.train.ham.index" \
    --model "$work/ss$k/model" 2>/dev/null
  t1=$(now)
  xargs -a "$f.test.paths" ./target/release/spamsort classify --format tsv --model "$work/ss$k/model" \
    | cut -f5 > "$work/ss$k.scores"
  t2=$(now)
  echo "spamsort $k $(echo "$t1 - $t0" | bc) $(echo "$t2 - $t1" | bc)" >> "$work/times"

  mkdir -p "$work/bf$k"
  t0=$(now)
  bogofilter -d "$work/bf$k" -s -b < "$f.train.spam"
  bogofilter -d "$work/bf$k" -n -b < "$f.train.ham"
  t1=$(now)
  # Scoring exits 0/1/2 for spam/ham/unsure: not a failure.
  { bogofilter -d "$work/bf$k" -v -b < "$f.test.paths" || true; } \
    | sed -E 's/.*spamicity=([0-9.]+).*/\1/' > "$work/bf$k.scores"
  t2=$(now)
  echo "bogofilter $k $(echo "$t1 - $t0" | bc) $(echo "$t2 - $t1" | bc)" >> "$work/times"

  mkdir -p "$work/sp$k"
  t0=$(now)
  xargs -a "$f.train.spam" spamprobe -d "$work/sp$k" train-spam 2>/dev/null
  xargs -a "$f.train.ham" spamprobe -d "$work/sp$k" train-good 2>/dev/null
  t1=$(now)
  { xargs -a "$f.test.paths" spamprobe -d "$work/sp$k" score 2>/dev/null || true; } | awk '{print $2}' > "$work/sp$k.scores"
  t2=$(now)
  echo "spamprobe $k $(echo "$t1 - $t0" | bc) $(echo "$t2 - $t1" | bc)" >> "$work/times"
done

python3 - "$work" "$folds" <<'PY'
import sys
work, folds = sys.argv[1], int(sys.argv[2])

def auc(scores, labels):
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    rank_sum, n_spam, i = 0.0, 0, 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        mean_rank = (i + j) / 2 + 1
        for k in order[i:j + 1]:
            if labels[k]:
                rank_sum += mean_rank
                n_spam += 1
        i = j + 1
    n_ham = len(scores) - n_spam
    return (rank_sum - n_spam * (n_spam + 1) / 2) / (n_spam * n_ham)

times = {}
for line in open(f"{work}/times"):
    tool, k, train, score = line.split()
    times.setdefault(tool, []).append((float(train), float(score)))
rows = {}
for tool, prefix in (("spamsort", "ss"), ("bogofilter", "bf"), ("spamprobe", "sp")):
    aucs, n_test = [], 0
    for k in range(folds):
        labels = [l.split(" ", 1)[0] == "spam" for l in open(f"{work}/folds/{k}.test")]
        scores = [float(s) for s in open(f"{work}/{prefix}{k}.scores")]
        assert len(scores) == len(labels), f"{tool} fold {k}: {len(scores)} scores for {len(labels)} messages"
        aucs.append(auc(scores, labels))
        n_test += len(labels)
    train = sum(t for t, _ in times[tool]) / folds
    rate = n_test / sum(s for _, s in times[tool])
    rows[tool] = (100 * (1 - sum(aucs) / folds), train, rate)
base = rows["spamsort"]
print(f"{folds} folds; (1-AUC)% mean over folds; train s per fold; bulk scoring msgs/s")
print(f"{'tool':<11} {'(1-AUC)%':>9} {'train s':>8} {'msgs/s':>8}   {'x(1-AUC)':>9} {'x train':>8} {'x msgs/s':>9}")
for tool, (e, t, r) in rows.items():
    print(f"{tool:<11} {e:>9.4f} {t:>8.2f} {r:>8.0f}   {e / base[0]:>9.2f} {t / base[1]:>8.2f} {r / base[2]:>9.2f}")
PY
