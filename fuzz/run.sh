#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for a number of executions or seconds each, seeded
# with the repository's mail (tests/data and corpus/sample), and prints each target's execution
# count. New interesting inputs go to fuzz/corpus/TARGET, crashes to fuzz/artifacts/TARGET
# (both git-ignored). Exits non-zero if any target failed. Needs cargo-fuzz
# (`cargo install cargo-fuzz --locked`); it runs on the stable toolchain with
# RUSTC_BOOTSTRAP=1 (set here), which lets it pass the sanitizer flags (AddressSanitizer works).
#
#   fuzz/run.sh -n 100000            # 100,000 executions of every target
#   fuzz/run.sh -t 300 tokenize mbox # 5 minutes each for two targets
#   fuzz/run.sh -s                   # each target once over its seeds, built without cargo-fuzz
#                                    # or instrumentation (what .ci/run does: the targets still
#                                    # build and still hold on the repository's own mail)
#
# Each input may take at most 10 s (-timeout=10: a slow input is a failure, since the code under
# test promises bounded time); more libFuzzer flags can be given in FUZZ_FLAGS.
set -u

usage() {
    echo "usage: $0 (-n EXECUTIONS | -t SECONDS | -s) [TARGET...]" >&2
    exit 2
}

limit=
seeds_only=
while getopts "n:t:sh" opt; do
    case $opt in
        n) limit="-runs=$OPTARG" ;;
        t) limit="-max_total_time=$OPTARG" ;;
        s) seeds_only=1; limit="-runs=0" ;;
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

if [ -n "$seeds_only" ]; then
    # A plain build: libFuzzer's driver without coverage runs each input it is given once.
    target_dir="$fuzz_dir/target/seeds"
    CARGO_TARGET_DIR="$target_dir" cargo build --locked --bins || exit 2
    run_target() {
        # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags
        "$target_dir/debug/$1" "$limit" -timeout=10 -artifact_prefix="$target_dir/" ${FUZZ_FLAGS:-} \
            "$root/tests/data" "$root/corpus/sample"
    }
else
    export RUSTC_BOOTSTRAP=1
    cargo fuzz build || exit 2
    run_target() {
        mkdir -p "corpus/$1"
        # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags
        cargo fuzz run "$1" "corpus/$1" "$root/tests/data" "$root/corpus/sample" -- \
            "$limit" -timeout=10 -print_final_stats=1 ${FUZZ_FLAGS:-}
    }
fi

failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for target in "${targets[@]}"; do
    run_target "$target" >"$log" 2>&1
    status=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    [ -n "$executions" ] || executions=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -n 1)
    if [ $status -eq 0 ]; then
        echo "$target: ${executions:-?} executions, ok"
    else
        failed=$((failed + 1))
        echo "$target: ${executions:-?} executions, FAILED (exit $status); the end of its log:"
        tail -n 40 "$log"
    fi
done
exit $((failed > 0))
