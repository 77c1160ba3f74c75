#!/bin/bash
# tests/reach-cuda/run.sh - every way a CUDA program reaches the driver
# leads it to safepin's shims, of the exact form asked. Each program runs
# bare (the hazard happens: 712 on an identical re-register through the
# functions it obtained, all of them the driver's) and under safepin (it
# passes; the hooked functions are safepin's, the others the driver's).
# Prints TAP lines.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
BIN=$BUILD/tests/reach-cuda
LIB=${SAFEPIN_LIB:-$BUILD/libsafepin.so}
LOGDIR=$BUILD/test-logs/reach-cuda${REACH_TAG:+-$REACH_TAG}
mkdir -p "$LOGDIR"
NFAIL=0
TAG=${REACH_TAG:+ [$REACH_TAG]}
pass() { echo "ok - $1$TAG"; }
fail() { NFAIL=$((NFAIL + 1)); echo "not ok - $1$TAG: $2"; }

run() { # log preload prog
    timeout -k 5 30 env LD_LIBRARY_PATH="$BUILD/simcuda" ${2:+LD_PRELOAD="$2"} SAFEPIN_OPTIONS=log=warn \
        "$BIN/$3" >"$1" 2>&1
    RC=$?
}

# expect log "asked" "symbol" "object"
expect() {
    local line
    line=$(grep -F "got $2 -> " "$1" | head -n 1)
    [ "$line" = "got $2 -> $3 in $4" ] || echo "'$2': ${line:-no line}, wanted $3 in $4"
}

# Look-ups: asked, the symbol safepin must hand out (hooked) or "-" (passes through).
CUDART_TABLE='
dlsym cuGetProcAddress_v2        cuGetProcAddress_v2
cuGetProcAddress@11030/0         cuGetProcAddress
cuGetProcAddress@12000/0         cuGetProcAddress_v2
cuMemHostUnregister@4000/0 via 11030 cuMemHostUnregister
cuMemHostRegister@6050/0         cuMemHostRegister_v2
cuMemHostRegister@4000/0         cuMemHostRegister
cuMemHostUnregister@4000/0       cuMemHostUnregister
cuMemFree@3020/0                 cuMemFree_v2
cuPointerGetAttributes@7000/0    cuPointerGetAttributes
cuStreamCreate@2000/0            cuStreamCreate
cuLaunchHostFunc@10000/0         cuLaunchHostFunc
cuLaunchHostFunc@10000/2         cuLaunchHostFunc_ptsz
cuMemcpyHtoDAsync@7000/2         cuMemcpyHtoDAsync_v2_ptsz
cuStreamBeginCapture@10000/0     cuStreamBeginCapture
cuStreamBeginCapture@10010/2     cuStreamBeginCapture_v2_ptsz
cuStreamEndCapture@10000/2       cuStreamEndCapture_ptsz
cuCtxDestroy@4000/0              cuCtxDestroy_v2
cuDevicePrimaryCtxReset@11000/0  cuDevicePrimaryCtxReset_v2
cuInit@2000/0                    -cuInit
cuEventRecord@2000/0             -cuEventRecord
cuEventRecord@7000/2             -cuEventRecord_ptsz
'
DLOPEN_TABLE='
cuMemHostRegister_v2   cuMemHostRegister_v2
cuMemHostUnregister    cuMemHostUnregister
cuMemFree_v2           cuMemFree_v2
cuLaunchHostFunc_ptsz  cuLaunchHostFunc_ptsz
cuInit                 -cuInit
'
DIRECT_TABLE='
cuMemHostRegister_v2   cuMemHostRegister_v2
cuMemHostUnregister    cuMemHostUnregister
cuInit                 -cuInit
'

check_prog() { # prog table
    local prog=$1 table=$2 log why asked want
    log=$LOGDIR/$prog.native.log
    run "$log" "" "$prog"
    why=""
    grep -q 'failed: .*(712)' "$log" && [ "$RC" -eq 1 ] || why="exit $RC, no 712: $(tail -n 1 "$log")"
    while read -r line; do
        [ -n "$line" ] || continue
        asked=$(sed -E 's/[[:space:]]+[^[:space:]]+$//' <<<"$line"); want=${line##* }
        want=${want#-}
        [ -z "$why" ] && why=$(expect "$log" "$asked" "$want" libcuda.so.1)
    done <<<"$table"
    if [ -z "$why" ]; then pass "$prog without safepin: the driver's functions, 712"; else fail "$prog without safepin" "$why"; fi

    log=$LOGDIR/$prog.safepin.log
    run "$log" "$LIB" "$prog"
    why=""
    [ "$RC" -eq 0 ] && grep -q '^OK$' "$log" || why="exit $RC: $(tail -n 1 "$log")"
    while read -r line; do
        [ -n "$line" ] || continue
        asked=$(sed -E 's/[[:space:]]+[^[:space:]]+$//' <<<"$line"); want=${line##* }
        if [ "${want#-}" != "$want" ]; then
            [ -z "$why" ] && why=$(expect "$log" "$asked" "${want#-}" libcuda.so.1)
        else
            [ -z "$why" ] && why=$(expect "$log" "$asked" "$want" "$(basename "$LIB")")
        fi
    done <<<"$table"
    if [ -z "$why" ]; then pass "$prog with safepin: its shims, exact forms, no 712"; else fail "$prog with safepin" "$why"; fi
}

# REACH_DLVSYM_ONLY=1 (tests/reach/run-sanitized.sh): only the dlvsym part,
# with REACH_PRELOAD_FIRST (a sanitizer runtime) before safepin, REACH_ENV,
# and REACH_BAD (a sanitizer report) failing a run.
if [ -z "$REACH_DLVSYM_ONLY" ]; then
check_prog cudart_lookup "$CUDART_TABLE"
check_prog dlopen_handle "$DLOPEN_TABLE"
check_prog direct_link "$DIRECT_TABLE"
# An unknown name passes through with the driver's own answer.
if grep -q '^got cuNoSuchFunction@12000/0 -> error 500' "$LOGDIR/cudart_lookup.safepin.log"; then
    pass "unknown name passes through (500)"
else
    fail "unknown name passes through" "$(grep cuNoSuchFunction "$LOGDIR/cudart_lookup.safepin.log")"
fi
# The driver closed (dlclose) with a release held, then the memory unmapped
# and the process ends: bare it works; safepin must not call unloaded code.
# "dlmopen": the driver in a namespace of its own.
for how in dlopen dlmopen; do
    for mode in native safepin; do
        pre=""; [ $mode = safepin ] && pre=$LIB
        log=$LOGDIR/dlclose_held.$how.$mode.log
        arg=""; [ $how = dlmopen ] && arg=ns
        timeout -k 5 30 env LD_LIBRARY_PATH="$BUILD/simcuda" ${pre:+LD_PRELOAD="$pre"} SAFEPIN_OPTIONS=log=warn \
            "$BIN/dlclose_held" $arg >"$log" 2>&1
        RC=$?
        if [ "$RC" -eq 0 ] && grep -q '^OK$' "$log"; then
            pass "dlclose of the driver ($how) with a held release, $mode"
        else
            fail "dlclose of the driver ($how) with a held release, $mode" "exit $RC: $(tail -n 1 "$log")"
        fi
    done
done
# HIP and CUDA in one process, the same memory registered with each driver:
# bare every call succeeds, and so it must under safepin.
for mode in native safepin; do
    pre=""; [ $mode = safepin ] && pre=$LIB
    log=$LOGDIR/hip_and_cuda.$mode.log
    timeout -k 5 30 env LD_LIBRARY_PATH="$BUILD/simcuda:$BUILD/simhip" ${pre:+LD_PRELOAD="$pre"} \
        SAFEPIN_OPTIONS=log=warn "$BIN/hip_and_cuda" >"$log" 2>&1
    RC=$?
    if [ "$RC" -eq 0 ] && grep -q '^OK$' "$log"; then
        pass "HIP and CUDA register the same memory, $mode"
    else
        fail "HIP and CUDA register the same memory, $mode" "exit $RC: $(grep -v ' = 0$' "$log" | head -n 1)"
    fi
done
fi

# dlvsym, a versioned look-up, on the driver (dlvsym_lookup.c): on a handle,
# on RTLD_DEFAULT, and on RTLD_NEXT from a library the program links. The
# driver with versioned exports (build/simcuda/versioned, SIMCUDA_1):
# bare, the driver's functions and 712; under safepin, its shims of the
# exact forms, every other line as bare (dlerror() text included), no 712.
DV_HOOKED="cuMemHostRegister_v2 cuMemHostUnregister cuMemHostRegister cuMemFree_v2 cuLaunchHostFunc_ptsz
cuStreamBeginCapture_v2 cuGetProcAddress_v2 cuDevicePrimaryCtxRetain"
export DLVSYM_NEXT_LIB=$PWD/$BUILD/tests/reach/libdlvsym_next_dl.so
# The runtime's cudaHostUnregister, from the stand-in of NVIDIA's shared
# runtime (libcudart.so.13, version node libcudart.so.13): passed through.
export DLVSYM_CUDART=$PWD/$BUILD/tests/legacy-cuda/rt/libcudart.so.13
dv_run() { # log preload libdir how version
    local pre=${2:+${REACH_PRELOAD_FIRST:+$REACH_PRELOAD_FIRST }$2}
    if [ -n "$2" ]; then
        { timeout -k 5 60 env LD_LIBRARY_PATH="$3" LD_PRELOAD="$pre" SAFEPIN_OPTIONS=log=warn $REACH_ENV \
            "$BIN/dlvsym_lookup" "$4" "$5" >"$1" 2>&1; } 2>/dev/null
    else
        { timeout -k 5 60 env LD_LIBRARY_PATH="$3" "$BIN/dlvsym_lookup" "$4" "$5" >"$1" 2>&1; } 2>/dev/null
    fi
    RC=$?
    if [ -n "$2" ] && [ -n "$REACH_BAD" ] && grep -Eq "$REACH_BAD" "$1"; then
        RC=99; echo "sanitizer report: $(grep -Em1 "$REACH_BAD" "$1")" >>"$1"
    fi
}
dv_lines() { # bare safepin: why the look-up lines are wrong, if they are
    local n want line pat d
    n=$(grep -c '^got ' "$1")
    [ "$n" -eq 14 ] || { echo "bare run printed $n look-ups, not 14"; return; }
    line=$(grep -F "got cudaHostUnregister@libcudart.so.13 -> " "$2")
    [ "$line" = "got cudaHostUnregister@libcudart.so.13 -> cudaHostUnregister in libcudart.so.13" ] ||
        { echo "the runtime's cudaHostUnregister: ${line:-no line}, wanted the runtime's own"; return; }
    for want in $DV_HOOKED; do
        line=$(grep -F "got $want@SIMCUDA_1 -> " "$1")
        [ "$line" = "got $want@SIMCUDA_1 -> $want in libcuda.so.1" ] || { echo "bare '$want': ${line:-no line}"; return; }
        line=$(grep -F "got $want@SIMCUDA_1 -> " "$2")
        [ "$line" = "got $want@SIMCUDA_1 -> $want in $(basename "$LIB")" ] || { echo "'$want': ${line:-no line}, wanted safepin's shim"; return; }
    done
    pat=$(printf 'got %s@SIMCUDA_1 -> \n' $DV_HOOKED)
    d=$(diff <(grep '^got ' "$1" | grep -vF "$pat") <(grep '^got ' "$2" | grep -vF "$pat") | grep '^[<>]' | head -n 4 | tr '\n' ' ')
    [ -z "$d" ] || echo "passed-through look-ups differ ('<' bare, '>' safepin): $d"
    grep -q '^got cuMemHostRegister_v2@SIMCUDA_9 -> NULL: .*undefined symbol: cuMemHostRegister_v2, version SIMCUDA_9$' "$2" ||
        echo "no NULL with dlerror() for an unknown version"
}
for how in handle default next; do
    name="dlvsym $how"; [ $how = default ] && name="dlvsym RTLD_DEFAULT"; [ $how = next ] && name="dlvsym RTLD_NEXT from a library"
    bare=$LOGDIR/dlvsym.$how.native.log; log=$LOGDIR/dlvsym.$how.safepin.log
    dv_run "$bare" "" "$BUILD/simcuda/versioned" $how SIMCUDA_1
    why=""
    grep -q 'failed: .*(712)' "$bare" && [ "$RC" -eq 1 ] || why="exit $RC, no 712: $(tail -n 1 "$bare")"
    if [ -z "$why" ]; then pass "$name on a versioned driver without safepin: the driver's functions, 712"
    else fail "$name on a versioned driver without safepin" "$why"; fi
    dv_run "$log" "$LIB" "$BUILD/simcuda/versioned" $how SIMCUDA_1
    why=""
    [ "$RC" -eq 0 ] && grep -q '^OK$' "$log" || why="exit $RC: $(tail -n 1 "$log")"
    [ -z "$why" ] && why=$(dv_lines "$bare" "$log")
    if [ -z "$why" ]; then pass "$name on a versioned driver with safepin: its shims, exact forms, the rest as bare, no 712"
    else fail "$name on a versioned driver with safepin" "$why"; fi
done
# Nothing to find, bare and under safepin alike (NULL, the same dlerror()):
# RTLD_NEXT from a dlopen()ed library (its own dependencies only), and the
# plain driver, whose names are unversioned.
for case in "next-dlopen versioned" "handle plain" "default plain"; do
    set -- $case
    dir=$BUILD/simcuda; [ $2 = versioned ] && dir=$BUILD/simcuda/versioned
    bare=$LOGDIR/dlvsym.$1.$2.native.log; log=$LOGDIR/dlvsym.$1.$2.safepin.log
    dv_run "$bare" "" "$dir" $1 SIMCUDA_1; rcb=$RC
    dv_run "$log" "$LIB" "$dir" $1 SIMCUDA_1
    why=""
    [ "$rcb" -eq 3 ] && [ "$RC" -eq 3 ] || why="exit $rcb bare, $RC with safepin (want 3: nothing found)"
    [ "$(grep -c '^got .* -> NULL: .*undefined symbol' "$bare")" -eq 13 ] || why="${why:-bare found something}"
    grep -q '^got cudaHostUnregister@libcudart.so.13 -> cudaHostUnregister in libcudart.so.13$' "$log" ||
        why="${why:-no runtime cudaHostUnregister line}"
    d=$(diff <(grep '^got ' "$bare") <(grep '^got ' "$log") | grep '^[<>]' | head -n 2 | tr '\n' ' ')
    [ -n "$d" ] && why="${why:-differ: $d}"
    if [ -z "$why" ]; then pass "dlvsym $1 on the $2 driver: NULL and dlerror() as bare"; else fail "dlvsym $1 on the $2 driver" "$why"; fi
done
[ "$NFAIL" -eq 0 ]
