#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for a number of executions or seconds each, seeded
# with the repository's mail (tests/data and corpus/sample), and prints each target's execution
# count. New interesting inputs go to fuzz/corpus/TARGET, crashes to fuzz/artifacts/TARGET
# (both git-ignored). Exits non-zero if any target failed. Needs cargo-fuzz and a nightly
# toolchain (`cargo install cargo-fuzz`, `rustup toolchain install nightly`).
#
#   fuzz/run.sh -n 100000            # 100,000 executions of every target
#   fuzz/run.sh -t 300 tokenize mbox # 5 minutes each for two targets
#
# Each input may take at most 10 s (-timeout=10: a slow input is a failure, since the code under
# test promises bounded time); more libFuzzer flags can be given in FUZZ_FLAGS.
set -u

usage() {
    echo "usage: $0 (-n EXECUTIONS | -t SECONDS) [TARGET...]" >&2
    exit 2
}

limit=
while getopts "n:t:h" opt; do
    case $opt in
        n) limit="-runs=$OPTARG" ;;
        t) limit="-max_total_time=$OPTARG" ;;
        *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ -n "$limit" ] || usage

fuzz_dir=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$fuzz_dir")
cd "$fuzz_dir" || exit 2

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for file in fuzz_targets/*.rs; do
        targets+=("$(basename "$file" .rs)")
    done
fi

cargo +nightly fuzz build || exit 2

failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target"
    # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags
    cargo +nightly fuzz run "$target" "corpus/$target" "$root/tests/data" "$root/corpus/sample" -- \
        "$limit" -timeout=10 -print_final_stats=1 ${FUZZ_FLAGS:-} >"$log" 2>&1
    status=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    if [ $status -eq 0 ]; then
        echo "$target: ${executions:-?} executions, ok"
    else
        failed=$((failed + 1))
        echo "$target: ${executions:-?} executions, FAILED (exit $status); the end of its log:"
        tail -n 40 "$log"
    fi
done
exit $((failed > 0))
