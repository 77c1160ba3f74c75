#!/bin/bash
# tests/model/run.sh - seeded random workloads (tests/model/model.c) on simhip
# under safepin, checked against the model. TAP lines, one per seed.
#
#   BUILD=build                  where model, simhip and the library are
#   MODEL_SEEDS="1 2 3"          the seeds (default: 1..MODEL_COUNT)
#   MODEL_COUNT=24               seeds when MODEL_SEEDS is unset
#   MODEL_OPS=250                operations per thread
#   MODEL_THREADS=3
#   MODEL_TIMEOUT=60             per run; a hang is a failure
#   MODEL_SHRINK=1               on a failure, find the fewest --ops that fail
#   MODEL_PRELOAD_FIRST=lib      preloaded before safepin (a sanitizer runtime)
#   MODEL_PRELOAD_LAST=lib       preloaded after it
#   MODEL_BAD_PATTERN=regex      more output that fails a run (sanitizer reports)
#   MODEL_TAG=name               added to every test name
#   MODEL_BINDIR=dir             the programs (default $BUILD/tests/model)
#   MODEL_ENV="k=v ..."           more environment for every run
#
# Each seed picks its unregister mode (seed % 3: ordered, async, sync), its
# personality ((seed / 3) % 3: current, legacy, rocm7), its device op
# delay ((seed / 9) % 3: 0, 20, 200 us) and its captures ((seed / 27) % 2:
# thread-local, or global with every program thread relaxed); the
# rerun command for a seed is printed with every failure:
#   tests/model/run.sh with MODEL_SEEDS=<seed>, or the printed command line.
# A run fails on: exit status other than 0, no "OK", a device fault or
# runtime abort or deadlock line of simhip, a safepin leak-at-exit,
# release-timeout or runtime-error diagnostic, a sanitizer report, a timeout.
# The last line is "# model: seeds=N operations=M failures=K".
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
LIB=${SAFEPIN_LIB:-$BUILD/libsafepin.so}
BINDIR=${MODEL_BINDIR:-$BUILD/tests/model}
BIN=$BINDIR/model
OPS=${MODEL_OPS:-250}
THREADS=${MODEL_THREADS:-3}
TIMEOUT=${MODEL_TIMEOUT:-60}
TAG=${MODEL_TAG:+$MODEL_TAG, }
SEEDS=${MODEL_SEEDS:-$(seq 1 "${MODEL_COUNT:-24}")}
LOGDIR=$BUILD/test-logs/model${MODEL_TAG:+-$MODEL_TAG}
mkdir -p "$LOGDIR"
ulimit -c 0 2>/dev/null
BAD='Memory access fault by GPU|simhip: runtime abort|simhip: deadlock|leak-at-exit|release-timeout|runtime-error|ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error:|ERROR: LeakSanitizer'
[ -n "$MODEL_BAD_PATTERN" ] && BAD="$BAD|$MODEL_BAD_PATTERN"

NSEEDS=0 NOPS=0 NFAIL=0

# one SEED OPS LOG: run one program; sets RC, CMD
one() {
    local seed=$1 ops=$2 log=$3
    local modes=(ordered async sync) pers=(current legacy rocm7) delays=(0 20 200)
    local mode=${modes[$((seed % 3))]} p=${pers[$(((seed / 3) % 3))]}
    local delay=${delays[$(((seed / 9) % 3))]} caps=(local global)
    local cap=${caps[$(((seed / 27) % 2))]}
    local preload=$LIB
    [ -n "$MODEL_PRELOAD_FIRST" ] && preload="$MODEL_PRELOAD_FIRST $LIB"
    [ -n "$MODEL_PRELOAD_LAST" ] && preload="$preload $MODEL_PRELOAD_LAST"
    CMD="$MODEL_ENV SIMHIP_PERSONALITY=$p SIMHIP_OP_DELAY_US=$delay SAFEPIN_OPTIONS=unregister=$mode LD_LIBRARY_PATH=$BUILD/simhip LD_PRELOAD='$preload' $BIN --seed $seed --ops $ops --threads $THREADS --mode $mode --capture $cap"
    { timeout -k 5 "$TIMEOUT" env $MODEL_ENV SIMHIP_PERSONALITY="$p" SIMHIP_OP_DELAY_US="$delay" \
        SAFEPIN_OPTIONS="unregister=$mode" LD_LIBRARY_PATH="$BUILD/simhip" LD_PRELOAD="$preload" \
        "$BIN" --seed "$seed" --ops "$ops" --threads "$THREADS" --mode "$mode" --capture "$cap" >"$log" 2>&1
      RC=$?; } 2>/dev/null
}

bad_run() { # log rc: why a run failed, empty when it passed
    local log=$1 rc=$2
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "hang (timeout ${TIMEOUT}s)"; return; fi
    local m
    m=$(grep -m1 -E "$BAD" "$log") && { echo "$m"; return; }
    m=$(grep -m1 'model: FAIL' "$log") && { echo "$m"; return; }
    [ "$rc" -ne 0 ] && { echo "exit $rc: $(tail -n1 "$log")"; return; }
    grep -qx OK "$log" || echo "no OK: $(tail -n1 "$log")"
}

# Directed programs: bugs the model found, each alone (bare, then under
# safepin in each unregister mode).
for prog in revive_rerelease; do
    for m in bare ordered async sync; do
        log=$LOGDIR/$prog-$m.log
        pre=$LIB; [ -n "$MODEL_PRELOAD_FIRST" ] && pre="$MODEL_PRELOAD_FIRST $LIB"
        [ -n "$MODEL_PRELOAD_LAST" ] && pre="$pre $MODEL_PRELOAD_LAST"
        [ "$m" = bare ] && pre=
        { timeout -k 5 "$TIMEOUT" env $MODEL_ENV LD_LIBRARY_PATH="$BUILD/simhip" ${pre:+LD_PRELOAD="$pre"} \
            SAFEPIN_OPTIONS="unregister=${m/bare/ordered}:revive_grace_us=1000000" \
            "$BINDIR/$prog" >"$log" 2>&1; RC=$?; } 2>/dev/null
        why=$(bad_run "$log" "$RC")
        if [ -z "$why" ]; then echo "ok - ${TAG}$prog ($m)"; else
            NFAIL=$((NFAIL + 1)); echo "not ok - ${TAG}$prog ($m): $why"; fi
    done
done

for seed in $SEEDS; do
    log=$LOGDIR/seed-$seed.log
    one "$seed" "$OPS" "$log"
    why=$(bad_run "$log" "$RC")
    n=$(sed -n 's/^model: operations=\([0-9]*\).*/\1/p' "$log")
    NSEEDS=$((NSEEDS + 1)); NOPS=$((NOPS + ${n:-0}))
    if [ -z "$why" ]; then
        echo "ok - ${TAG}model seed $seed"
        continue
    fi
    NFAIL=$((NFAIL + 1))
    echo "not ok - ${TAG}model seed $seed: $why"
    echo "# rerun: $CMD"
    if [ "${MODEL_SHRINK:-1}" = 1 ]; then
        # The fewest operations per thread that still fail (same seed: the
        # program is a prefix). Bisection; flaky failures may not shrink.
        lo=0 hi=$OPS
        while [ $((hi - lo)) -gt 1 ]; do
            mid=$(((lo + hi) / 2))
            one "$seed" "$mid" "$LOGDIR/shrink-$seed.log"
            if [ -n "$(bad_run "$LOGDIR/shrink-$seed.log" "$RC")" ]; then hi=$mid; else lo=$mid; fi
        done
        one "$seed" "$hi" "$LOGDIR/shrink-$seed.log"
        echo "# shrunk to --ops $hi: $CMD"
        echo "#   $(bad_run "$LOGDIR/shrink-$seed.log" "$RC")"
    fi
done
echo "# model: seeds=$NSEEDS operations=$NOPS failures=$NFAIL"
[ "$NFAIL" -eq 0 ]
