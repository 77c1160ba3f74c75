#!/bin/bash
# tests/legacy-cuda/run.sh - the legacy CUDA driver-API programs on simcuda,
# without and with safepin. Prints TAP lines ("ok - ..." / "not ok - ...").
#
#   BUILD=build                        where the programs and simcuda are
#   SAFEPIN_LIB=$BUILD/libsafepin.so   the library under test
#   LEGACY_TIMEOUT=seconds (30)        per run; a hang is a failure of its own
#   LEGACY_PARTS="native safepin"      which halves to run
#   LEGACY_PRELOAD_FIRST=lib           preloaded before safepin (a sanitizer runtime)
#   LEGACY_PRELOAD_LAST=lib            preloaded after it
#   LEGACY_EXCEPT="prog ..."           not these programs
#   LEGACY_ONLY="prog ..."             only these programs (empty: all)
#   LEGACY_BAD_PATTERN=regex           output that fails a safepin run (sanitizer reports)
#   LEGACY_TAG=name                    added to every test name
#   LEGACY_ENV="K=V ..."               more environment for the safepin runs
#
# Column 2, WITHOUT safepin: the evidence that the hazard happened ("clean":
# no hazard on the bare driver; the program must pass, which shows its own
# checks are right). Column 3, WITH safepin (default options unless the
# entry starts with "opts=..;"): exit 0, "OK", no fault line, and these
# diagnostic codes printed ("-": none required; "!code": must not appear).
#
# program                without safepin      with safepin
TABLE='
reregister_after_munmap  already-registered   freed-while-registered,!runtime-error,!api-error
stale_reuse              stale                freed-while-registered,!runtime-error,!api-error
lost_writes_free         lost                 freed-while-registered,!runtime-error,!api-error
identical_reregister     already-registered   nested-register,!runtime-error,!api-error
unreg_in_callback        not-permitted        !runtime-error,!api-error
unreg_in_callback_rt     not-permitted        !runtime-error,!api-error
two_runtimes             clean                !runtime-error,!api-error
runtime_reload           clean                !runtime-error,!api-error
foreign_unregister       clean                !runtime-error,!api-error
wrapper_forward          clean                !runtime-error,!api-error
self_call                clean                !runtime-error,!api-error
fork_unregister          clean                !runtime-error,!api-error
fork_child               clean                !runtime-error
fork_ways                clean                !runtime-error,!api-error
remap_after_munmap       clean                freed-while-registered,!runtime-error,!api-error
last_thread_exit         clean                !runtime-error,!api-error
refusal_first            clean                !runtime-error
launch_stall             stall                !runtime-error,!api-error
unreg_stall              stall                opts=unregister=async;!runtime-error,!api-error
capture_per_thread       clean                !runtime-error,!api-error
capture_sync_join        clean                opts=unregister=sync;!runtime-error,!api-error
capture_unregister       capture-invalidated  !runtime-error,!api-error
implicit_sync_reader     clean                !runtime-error,!api-error
cuda_answers             clean                invalid-argument,unregister-unknown,unregister-interior,double-unregister,hipfree-host-pointer,overlapping-register,api-error
leak_at_exit             clean                leak-at-exit,!api-error
ctx_destroy              clean                !runtime-error,!api-error
two_dev_free_blocking    stall                !runtime-error,!api-error
two_dev_free_nonblocking stall                !runtime-error,!api-error
two_dev_free_per_thread  stall                !runtime-error,!api-error
two_dev_free_legacy      stall                !runtime-error,!api-error
two_dev_launch_stall     stall                !runtime-error,!api-error
ptx_sample               clean                !runtime-error,!api-error,!freed-while-registered
capture_begin_hold       clean                !runtime-error,!api-error
unreg_late_work          clean                !runtime-error,!api-error
unreg_capture_begins     clean                !runtime-error,!api-error
mapped_memset_loop       clean                !runtime-error,!api-error
'
# (fork_ways: daemon(), a prepare handler that unregisters, _Fork() and a
# raw fork system call, each after an unregister whose release keeps a
# revive grace under safepin: the child must see what a bare child sees.)
# (last_thread_exit: a clone() child and a main thread that end with the
# exit system call: safepin's thread must not keep the process alive.)
# (mapped_memset_loop: registrations of malloc blocks that share pages,
# released late by safepin on its own thread while the program registers
# the next block: a release must never unpin a page under a live
# registration, or the device's memset misses the host's bytes.)
# (unreg_stall: its persistent kernel runs until after the unregister, so
# the default unregister=ordered, which returns once every earlier device
# operation is done, waits for it as the bare driver does; unregister=async
# returns at once. launch_stall is the stall safepin removes under the
# defaults: other threads' launches behind the driver lock.)
# (two_dev_*: two devices, SIMHIP_DEVICES=2, DESIGN G1 "any stream of any
# device": a registration made while device 0's context is current, used
# by a long kernel on device 1 through the mapped pointer (on a blocking, a
# non-blocking, the per-thread and the legacy stream; safepin saw no call
# with device 1's context current in the last two: markers cover every
# active primary context all the same), unregistered on device 0's
# thread, read at once and freed; two_dev_launch_stall: device 1's kernel
# unrelated. Bare, the driver's unregister waits for every device holding
# the driver lock: another thread's launches on both devices queue behind
# it. Under safepin they must not, and the bytes read right after the
# unregister must be the kernel's.)
#
# Known bugs: the safepin run of these programs fails, and must keep
# failing with the evidence given (an extended regex) until the bug is
# fixed; it is reported "ok ... # SKIP known bug: ..." meanwhile. Once the
# safepin run passes, the line fails: move the program back to TABLE alone.
# program                | evidence of the bug                | the bug
KNOWN='
'
#
# Under safepin with options: the evidence that the option does what it
# says (unregister=async leaves visibility to the program).
# (unreg_late_work passes with the default hold, which leaves the real call
# to the reaper while the device is busy; with hold=off the ordered
# caller's real unregister follows safepin's own wait and waits for the
# late host function too: docs/unregister.md.)
OPTRUNS='
implicit_sync_reader     unregister=async     stale
'
# Evidence kinds (matched in the program's combined stdout+stderr; exit 1):
#   already-registered  a register failed with 712
#   stale               "corrupted data ... (stale)", no fault
#   lost                "(lost writes)": device results never reached the buffer
#   not-permitted       "... returned CUDA_ERROR_NOT_PERMITTED (800)" in a host function
#   stall               "stalled: ..." (a watchdog saw the unregister's device-wide wait)
#   capture-invalidated cuStreamEndCapture returned CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (901)

cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
BIN=${LEGACY_BINDIR:-$BUILD/tests/legacy-cuda}
LIB=${SAFEPIN_LIB:-$BUILD/libsafepin.so}
SIMCUDA=${LEGACY_SIMCUDA:-$BUILD/simcuda}
TIMEOUT=${LEGACY_TIMEOUT:-30}
PARTS=${LEGACY_PARTS:-native safepin}
TAG=${LEGACY_TAG:+ [$LEGACY_TAG]}
LOGDIR=$BUILD/test-logs/legacy-cuda${LEGACY_TAG:+-$LEGACY_TAG}
mkdir -p "$LOGDIR"
ulimit -c 0 2>/dev/null

FAULT_RE='^Memory access fault by GPU node-1'
NFAIL=0
pass() { echo "ok - $1$TAG"; }
fail() { NFAIL=$((NFAIL + 1)); echo "not ok - $1$TAG: $2"; }
has() { grep -qE -- "$2" "$1"; }
last_line() { grep -v '^[[:space:]]*$' "$1" | grep -v '^==[0-9]*==safepin: summary' | tail -n 1 | cut -c1-160; }

evidence() { # kind log -> empty when shown
    local kind=$1 log=$2
    if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then echo "hang: killed after ${TIMEOUT}s"; return; fi
    if has "$log" "$FAULT_RE"; then echo "GPU fault"; return; fi
    if [ "$kind" = clean ]; then
        [ "$RC" -eq 0 ] && has "$log" '^OK$' && return
        echo "exit $RC: $(last_line "$log")"; return
    fi
    [ "$RC" -eq 1 ] || { echo "exit $RC, wanted 1: $(last_line "$log")"; return; }
    case $kind in
    already-registered) has "$log" 'cuMemHostRegister.* failed: CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED \(712\)|already pinned \(712\)' && return ;;
    stale) has "$log" 'corrupted data.*\(stale\)' && return ;;
    lost) has "$log" '\(lost writes\)' && return ;;
    not-permitted) has "$log" 'returned CUDA_ERROR_NOT_PERMITTED \(800\)' && return ;;
    stall) has "$log" '^stalled: ' && return ;;
    capture-invalidated) has "$log" 'cuStreamEndCapture returned CUDA_ERROR_STREAM_CAPTURE_INVALIDATED \(901\)' && return ;;
    *) echo "unknown evidence kind '$kind'"; return ;;
    esac
    echo "no $kind evidence: $(last_line "$log")"
}

run() { # log opts preload prog
    local log=$1 opts=$2 preload=$3 prog=$4
    { timeout -k 5 "$TIMEOUT" env LD_LIBRARY_PATH="$SIMCUDA${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        SIMCUDA_KERNELS="$BIN/kernels/libsample_kernels.so" \
        ${preload:+LD_PRELOAD="$preload"} SAFEPIN_OPTIONS="$opts" $LEGACY_ENV \
        "$BIN/$prog" >"$log" 2>&1; RC=$?; } 2>/dev/null
}

protected() { # spec log -> empty when the safepin run is right
    local spec=$1 log=$2
    if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then echo "hang: killed after ${TIMEOUT}s"; return; fi
    if has "$log" "$FAULT_RE"; then echo "GPU fault"; return; fi
    if [ -n "$LEGACY_BAD_PATTERN" ] && has "$log" "$LEGACY_BAD_PATTERN"; then
        echo "sanitizer report: $(grep -m1 -E -- "$LEGACY_BAD_PATTERN" "$log" | cut -c1-160)"; return
    fi
    [ "$RC" -eq 0 ] && has "$log" '^OK$' || { echo "exit $RC: $(last_line "$log")"; return; }
    local codes=${spec#*;}
    [ "$codes" = "$spec" ] || true
    IFS=, read -ra want <<<"$codes"
    for c in "${want[@]}"; do
        [ -z "$c" ] || [ "$c" = - ] && continue
        if [ "${c#!}" != "$c" ]; then
            has "$log" "==safepin: ${c#!}:" && { echo "printed ${c#!}: $(grep -m1 "==safepin: ${c#!}:" "$log" | cut -c1-160)"; return; }
        else
            has "$log" "==safepin: $c:" || { echo "no $c diagnostic"; return; }
        fi
    done
}

# Not excluded by LEGACY_EXCEPT and, when LEGACY_ONLY is set, named there.
selected() { [[ " $LEGACY_EXCEPT " != *" $1 "* ]] && { [ -z "$LEGACY_ONLY" ] || [[ " $LEGACY_ONLY " == *" $1 "* ]]; }; }

preload_of() { echo "${LEGACY_PRELOAD_FIRST:+$LEGACY_PRELOAD_FIRST }$LIB${LEGACY_PRELOAD_LAST:+ $LEGACY_PRELOAD_LAST}"; }

while read -r prog kind spec; do
    [ -n "$prog" ] || continue
    selected "$prog" || continue
    if [ ! -x "$BIN/$prog" ]; then fail "$prog" "missing $BIN/$prog"; continue; fi
    if [[ " $PARTS " == *" native "* ]]; then
        log=$LOGDIR/$prog.native.log
        run "$log" "" "${LEGACY_PRELOAD_FIRST}" "$prog"
        why=$(evidence "$kind" "$log")
        if [ -z "$why" ]; then pass "$prog without safepin shows $kind"; else fail "$prog without safepin" "$why"; fi
    fi
    if [[ " $PARTS " == *" safepin "* ]]; then
        # An exit drain that waits out its timeout (it missed that its work
        # was done) would take 60 s: past TIMEOUT, a hang.
        opts="log=info:drain_timeout_ms=60000"
        codes=$spec
        if [[ $spec == opts=* ]]; then
            opts="$opts:${spec%%;*}"; opts=${opts/opts=/}; codes=${spec#*;}
        fi
        log=$LOGDIR/$prog.safepin.log
        run "$log" "$opts" "$(preload_of)" "$prog"
        why=$(protected ";$codes" "$log")
        known=$(awk -F' *[|] *' -v p="$prog" '$1 == p { print $2 "|" $3 }' <<<"$KNOWN")
        if [ -n "$known" ]; then
            bug_re=${known%%|*}
            bug=${known#*|}
            if [ -z "$why" ]; then
                fail "$prog with safepin" "passes: the known bug is gone, move it out of KNOWN"
            elif has "$log" "$bug_re"; then
                echo "ok - $prog with safepin # SKIP known bug: $bug$TAG"
            else
                fail "$prog with safepin" "$why (not the known bug's evidence)"
            fi
            continue
        fi
        if [ -z "$why" ]; then pass "$prog with safepin${opts:+ ($opts)}"; else fail "$prog with safepin" "$why"; fi
    fi
done <<<"$TABLE"

if [[ " $PARTS " == *" safepin "* ]]; then
    while read -r prog opts kind; do
        [ -n "$prog" ] || continue
        selected "$prog" || continue
        log=$LOGDIR/$prog.opt.log
        run "$log" "log=info:$opts" "$(preload_of)" "$prog"
        why=$(evidence "$kind" "$log")
        if [ -z "$why" ]; then pass "$prog with safepin $opts shows $kind"; else fail "$prog with safepin $opts" "$why"; fi
    done <<<"$OPTRUNS"
fi
# The JSON report says which runtime: the program's and each violation's.
if [[ " $PARTS " == *" safepin "* ]] && selected cuda_answers; then
    rep=$LOGDIR/cuda_answers.report.json
    rm -f "$rep"
    run "$LOGDIR/cuda_answers.report.log" "log=error:report=$PWD/$rep" "$(preload_of)" cuda_answers
    if [ "$RC" -eq 0 ] && grep -q '"runtimes": \["CUDA"\]' "$rep" 2>/dev/null &&
        grep -q '"code": "unregister-interior", "runtime": "CUDA"' "$rep" &&
        grep -q '"code": "unregister-unknown", "runtime": "CUDA"' "$rep"; then
        pass "the report names the CUDA runtime"
    else
        fail "the report names the CUDA runtime" "exit $RC; $(grep -m1 runtimes "$rep" 2>/dev/null)"
    fi
fi
[ "$NFAIL" -eq 0 ]
