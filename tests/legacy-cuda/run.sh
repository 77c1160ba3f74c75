#!/bin/bash
# tests/legacy-cuda/run.sh - the legacy CUDA driver-API programs on simcuda,
# without safepin: each must show its hazard. Prints TAP lines.
#
#   BUILD=build                    where the programs and simcuda are
#   LEGACY_TIMEOUT=seconds (30)    per run; a hang is a failure of its own
#
# (The safepin half, "prevented under safepin", comes with safepin's CUDA
# backend.)
#
# program                  without safepin: evidence
TABLE='
reregister_after_munmap    already-registered
stale_reuse                stale
unreg_stall                stall
'
# Evidence kinds (matched in the program's combined stdout+stderr):
#   already-registered  a register failed with CUDA_ERROR_HOST_MEMORY_ALREADY_
#                       REGISTERED (712) after munmap of a registered buffer; exit 1
#   stale               "corrupted data ... (stale)" (the device read pages the
#                       process no longer maps), no fault; exit 1
#   stall               "stalled: cuMemHostUnregister ..." (the unregister waited
#                       for an unrelated stream until a watchdog broke it); exit 1

cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
BIN=$BUILD/tests/legacy-cuda
TIMEOUT=${LEGACY_TIMEOUT:-30}
LOGDIR=$BUILD/test-logs/legacy-cuda
mkdir -p "$LOGDIR"
ulimit -c 0 2>/dev/null

FAULT_RE='^Memory access fault by GPU node-1'
NFAIL=0
pass() { echo "ok - $1"; }
fail() { NFAIL=$((NFAIL + 1)); echo "not ok - $1: $2"; }
has() { grep -qE -- "$2" "$1"; }

evidence() { # kind log -> empty when shown
    local kind=$1 log=$2
    if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then echo "hang: killed after ${TIMEOUT}s"; return; fi
    if has "$log" "$FAULT_RE"; then echo "GPU fault"; return; fi
    [ "$RC" -eq 1 ] || { echo "exit $RC, wanted 1"; return; }
    case $kind in
    already-registered)
        has "$log" 'cuMemHostRegister.* failed: CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED \(712\)' && return ;;
    stale)
        has "$log" 'corrupted data.*\(stale\)' && return ;;
    stall)
        has "$log" '^stalled: cuMemHostUnregister' && return ;;
    *)
        echo "unknown evidence kind '$kind'"; return ;;
    esac
    echo "no $kind evidence: $(grep -v '^[[:space:]]*$' "$log" | tail -n 1 | cut -c1-160)"
}

while read -r prog kind; do
    [ -n "$prog" ] || continue
    log=$LOGDIR/$prog.native.log
    if [ ! -x "$BIN/$prog" ]; then fail "$prog without safepin" "missing $BIN/$prog"; continue; fi
    { timeout -k 5 "$TIMEOUT" env LD_LIBRARY_PATH="$BUILD/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$BIN/$prog" >"$log" 2>&1; RC=$?; } 2>/dev/null
    why=$(evidence "$kind" "$log")
    if [ -z "$why" ]; then pass "$prog without safepin shows $kind"; else fail "$prog without safepin" "$why"; fi
done <<<"$TABLE"
[ "$NFAIL" -eq 0 ]
