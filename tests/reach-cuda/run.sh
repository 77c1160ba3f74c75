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
LOGDIR=$BUILD/test-logs/reach-cuda
mkdir -p "$LOGDIR"
NFAIL=0
pass() { echo "ok - $1"; }
fail() { NFAIL=$((NFAIL + 1)); echo "not ok - $1: $2"; }

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
[ "$NFAIL" -eq 0 ]
