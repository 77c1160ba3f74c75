#!/bin/bash
# tests/model/run.sh - seeded random workloads checked against a model, on
# both faces: tests/model/model.c on simhip under safepin (TAP "model seed
# N"), tests/model/model_cuda.c on simcuda, bare or under safepin (TAP
# "model-cuda seed N"). TAP lines, one per seed.
#
#   BUILD=build                  where the programs, simhip, simcuda and the library are
#   MODEL_FACE="hip cuda"        which faces run
#   MODEL_SEEDS="1 2 3"          the seeds (default: 1..MODEL_COUNT for HIP,
#                                1..MODEL_CUDA_COUNT for CUDA)
#   MODEL_COUNT=24               HIP seeds when MODEL_SEEDS is unset
#   MODEL_CUDA_SEEDS="1 2"       the CUDA seeds (default: MODEL_SEEDS when set)
#   MODEL_CUDA_COUNT=12          CUDA seeds when neither is set
#   MODEL_SIMCUDA=dir            the CUDA driver (default $BUILD/simcuda)
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
# Each HIP seed picks its unregister mode (seed % 3: ordered, async, sync), its
# personality ((seed / 3) % 3: current, legacy, rocm7), its device op
# delay ((seed / 9) % 3: 0, 20, 200 us) and its captures ((seed / 27) % 2:
# thread-local, or global with every program thread relaxed). Each CUDA
# seed picks its mode (seed % 4: ordered, async, sync under safepin, or
# bare: no safepin, the model's bare-driver answers) and its device op delay
# ((seed / 4) % 3: 0, 20, 200 us). The rerun command for a seed is printed
# with every failure:
#   tests/model/run.sh with MODEL_FACE=hip|cuda MODEL_SEEDS=<seed>, or the
#   printed command line.
# A run fails on: exit status other than 0, no "OK", a device fault or
# runtime abort or deadlock line of simhip or simcuda, a safepin
# leak-at-exit, release-timeout or runtime-error diagnostic, a sanitizer
# report, a timeout.
# The last line is "# model: seeds=N operations=M failures=K".
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
LIB=${SAFEPIN_LIB:-$BUILD/libsafepin.so}
BINDIR=${MODEL_BINDIR:-$BUILD/tests/model}
BIN=$BINDIR/model
CUDA_BIN=$BINDIR/model_cuda
SIMCUDA=${MODEL_SIMCUDA:-$BUILD/simcuda}
FACES=${MODEL_FACE:-hip cuda}
OPS=${MODEL_OPS:-250}
THREADS=${MODEL_THREADS:-3}
TIMEOUT=${MODEL_TIMEOUT:-60}
TAG=${MODEL_TAG:+$MODEL_TAG, }
SEEDS=${MODEL_SEEDS:-$(seq 1 "${MODEL_COUNT:-24}")}
CUDA_SEEDS=${MODEL_CUDA_SEEDS:-${MODEL_SEEDS:-$(seq 1 "${MODEL_CUDA_COUNT:-12}")}}
LOGDIR=$BUILD/test-logs/model${MODEL_TAG:+-$MODEL_TAG}
mkdir -p "$LOGDIR"
ulimit -c 0 2>/dev/null
# simcuda shares simhip's device: the same fault line (then abort), and its
# fatal lines start "simhip: " too.
BAD='Memory access fault by GPU|simhip: runtime abort|simhip: deadlock|simhip: out of memory|simcuda: |leak-at-exit|release-timeout|runtime-error|ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error:|ERROR: LeakSanitizer'
[ -n "$MODEL_BAD_PATTERN" ] && BAD="$BAD|$MODEL_BAD_PATTERN"

NSEEDS=0 NOPS=0 NFAIL=0

# one FACE SEED OPS LOG: run one program; sets RC, CMD
one() {
    if [ "$1" = cuda ]; then shift; one_cuda "$@"; return; fi
    shift
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

# one_cuda SEED OPS LOG: the CUDA face on simcuda; sets RC, CMD
one_cuda() {
    local seed=$1 ops=$2 log=$3
    local modes=(ordered async sync bare) delays=(0 20 200)
    local mode=${modes[$((seed % 4))]} delay=${delays[$(((seed / 4) % 3))]}
    local preload=$LIB
    [ -n "$MODEL_PRELOAD_FIRST" ] && preload="$MODEL_PRELOAD_FIRST $LIB"
    [ -n "$MODEL_PRELOAD_LAST" ] && preload="$preload $MODEL_PRELOAD_LAST"
    [ "$mode" = bare ] && preload=
    CMD="$MODEL_ENV SIMHIP_OP_DELAY_US=$delay SAFEPIN_OPTIONS=unregister=${mode/bare/ordered} LD_LIBRARY_PATH=$SIMCUDA${preload:+ LD_PRELOAD='$preload'} $CUDA_BIN --seed $seed --ops $ops --threads $THREADS --mode $mode"
    { timeout -k 5 "$TIMEOUT" env $MODEL_ENV SIMHIP_OP_DELAY_US="$delay" \
        SAFEPIN_OPTIONS="unregister=${mode/bare/ordered}" LD_LIBRARY_PATH="$SIMCUDA" ${preload:+LD_PRELOAD="$preload"} \
        "$CUDA_BIN" --seed "$seed" --ops "$ops" --threads "$THREADS" --mode "$mode" >"$log" 2>&1
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
[[ " $FACES " == *" hip "* ]] && for prog in revive_rerelease; do
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

# run_seeds FACE NAME SEEDS...: one TAP line per seed, shrunk on a failure
run_seeds() {
    local face=$1 name=$2 seed log why n lo hi mid lp=
    [ "$face" = hip ] || lp=$face-
    shift 2
    for seed in "$@"; do
        log=$LOGDIR/${lp}seed-$seed.log
        one "$face" "$seed" "$OPS" "$log"
        why=$(bad_run "$log" "$RC")
        n=$(sed -n 's/^model: operations=\([0-9]*\).*/\1/p' "$log")
        NSEEDS=$((NSEEDS + 1)); NOPS=$((NOPS + ${n:-0}))
        if [ -z "$why" ]; then
            echo "ok - ${TAG}$name seed $seed"
            continue
        fi
        NFAIL=$((NFAIL + 1))
        echo "not ok - ${TAG}$name seed $seed: $why"
        echo "# rerun: $CMD"
        if [ "${MODEL_SHRINK:-1}" = 1 ]; then
            # The fewest operations per thread that still fail (same seed: the
            # program is a prefix). Bisection; flaky failures may not shrink.
            lo=0 hi=$OPS
            while [ $((hi - lo)) -gt 1 ]; do
                mid=$(((lo + hi) / 2))
                one "$face" "$seed" "$mid" "$LOGDIR/${lp}shrink-$seed.log"
                if [ -n "$(bad_run "$LOGDIR/${lp}shrink-$seed.log" "$RC")" ]; then hi=$mid; else lo=$mid; fi
            done
            one "$face" "$seed" "$hi" "$LOGDIR/${lp}shrink-$seed.log"
            echo "# shrunk to --ops $hi: $CMD"
            echo "#   $(bad_run "$LOGDIR/${lp}shrink-$seed.log" "$RC")"
        fi
    done
}

# shellcheck disable=SC2086 # the seed lists split on blanks
[[ " $FACES " == *" hip "* ]] && run_seeds hip model $SEEDS
# shellcheck disable=SC2086
[[ " $FACES " == *" cuda "* ]] && run_seeds cuda model-cuda $CUDA_SEEDS
echo "# model: seeds=$NSEEDS operations=$NOPS failures=$NFAIL"
[ "$NFAIL" -eq 0 ]
