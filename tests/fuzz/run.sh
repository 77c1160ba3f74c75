#!/bin/bash
# tests/fuzz/run.sh - the SAFEPIN_OPTIONS libFuzzer target
# (build/fuzz/options_fuzz, clang) for a fixed number of runs from the seed
# corpus, for make test. TAP. make fuzz-options SECONDS=N runs it longer.
cd "$(dirname "$0")/../.." || exit 1
BIN=build/fuzz/options_fuzz
RUNS=${FUZZ_RUNS:-100000}
if [ ! -x "$BIN" ]; then
    echo "not ok - options fuzz: $BIN missing (make $BIN; needs clang)"; exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=build/test-logs/options-fuzz.log
mkdir -p build/test-logs
# -seed fixed: the same inputs every make test
if (cd "$work" && timeout 600 "$OLDPWD/$BIN" -seed=1 -runs="$RUNS" "$work" "$OLDPWD/tests/fuzz/corpus") >"$log" 2>&1; then
    echo "ok - options fuzz: $(grep -m1 -oE 'Done [0-9]+ runs' "$log") without a failure"
else
    echo "not ok - options fuzz: $(grep -m1 -E 'options_fuzz:|ERROR|SUMMARY' "$log") (see $log)"
    exit 1
fi
