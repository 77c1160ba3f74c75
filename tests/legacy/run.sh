#!/bin/bash
# tests/legacy/run.sh - the legacy hazard programs, on simhip, without and
# with safepin. Prints TAP lines ("ok - ..." / "not ok - ...: why").
#
#   BUILD=build                      where the programs, simhip and the library are
#   SAFEPIN_LIB=$BUILD/libsafepin.so the library under test
#
# Knobs used by run-sanitized.sh (defaults run the whole suite):
#   LEGACY_PARTS="native safepin repeat"   which halves to run
#   LEGACY_ONLY="prog ..."                 only these programs
#   LEGACY_EXCEPT="prog ..."               not these programs
#   LEGACY_PRELOAD_FIRST="lib ..."         preloaded before SAFEPIN_LIB (a sanitizer runtime)
#   LEGACY_PRELOAD_LAST="lib ..."          preloaded after it
#   LEGACY_BAD_PATTERN=regex               output that fails a safepin run (sanitizer reports)
#   LEGACY_TAG=name                        added to every test name
#   LEGACY_TIMEOUT=seconds (20)            per run; a hang is a failure of its own
#   LEGACY_REPEAT=20                       runs in a row for the REPEAT programs
#   LEGACY_REPEAT_PERS="current legacy rocm7"  personalities of the repeated runs
#   LEGACY_PERS="current legacy rocm7"     personalities of the safepin runs
#   LEGACY_SKIP="prog ..." LEGACY_SKIP_WHY=text  safepin runs reported "# SKIP"
#
# ---------------------------------------------------------------------------
# THE TABLE
#
# Personalities: legacy (ROCm 5.2-5.5), current (6.2+), rocm7 (7.x: 712 for
# a register inside a registered range, stale registrations included).
# Column 2, WITHOUT safepin: for each personality (SIMHIP_PERSONALITY) where
# DESIGN section 3 says the hazard exists, the evidence that it happened
# (evidence kinds are defined just below). "clean" marks a personality where
# the runtime itself is safe: the program must then pass, which shows that
# its own checks are right.
# Column 3, WITH safepin (LD_PRELOAD, all three personalities, always): exit 0,
# "OK", no fault line, no runtime abort, no deadlock report, and these
# safepin diagnostic codes printed ("-": none required).
#
# program             without safepin: personality:evidence                         with safepin: diagnostics
TABLE='
unreg_busy_stream      legacy:fault,current:clean,rocm7:clean                               !api-error
unreg_free_reuse       legacy:fault,current:clean,rocm7:clean                               !api-error
stale_munmap           legacy:fault,current:fault,rocm7:refused                             freed-while-registered,!api-error
stale_free             legacy:fault,current:fault,rocm7:refused                             freed-while-registered,!api-error
reregister_larger      legacy:fault,current:clean,rocm7:clean                               !api-error
churn_two_threads      legacy:misuse,current:misuse,rocm7:misuse                            !api-error
attr_race              legacy:attr-race,current:attr-race,rocm7:attr-race                   !api-error
fork_attr_race         legacy:attr-race,current:attr-race,rocm7:attr-race                   !api-error
capture_unregister     current:capture-invalidated,legacy:capture-refused,rocm7:capture-invalidated !api-error
unreg_late_work        legacy:fault,current:clean,rocm7:clean                               !api-error
unreg_capture_begins   legacy:fault,current:clean,rocm7:clean                               !api-error
nested_unregister_wait legacy:fault,current:clean,rocm7:clean                               !api-error
unreg_in_callback      legacy:deadlock,current:deadlock,rocm7:deadlock                      !api-error
double_unregister      legacy:memobj,current:memobj,rocm7:memobj                            double-unregister,!api-error
interior_unregister    legacy:memobj,current:memobj,rocm7:memobj                            unregister-interior,unregister-unknown,!api-error
hipfree_host_ptr       legacy:memobj,current:memobj,rocm7:memobj                            hipfree-host-pointer,!api-error
leak_at_exit           legacy:silent-leak,current:silent-leak,rocm7:silent-leak             leak-at-exit,!api-error
bad_args               legacy:clean,current:clean,rocm7:clean                               !api-error
unreg_visibility       legacy:fault,current:clean,rocm7:clean                               !api-error
stream_destroyed       legacy:fault,current:clean,rocm7:clean                               !api-error
second_device          legacy:fault,current:clean,rocm7:clean                               !api-error
pending_copy           legacy:clean,current:clean,rocm7:clean                               !api-error
runtime_answers        legacy:clean,current:clean,rocm7:clean                               invalid-argument,!hipfree-host-pointer,!runtime-error,api-error
capture_refused_calls  legacy:fault,current:clean,rocm7:clean                               api-error
own_capture_register   legacy:clean,current:clean,rocm7:clean                               !api-error
refused_fixed_mmap     legacy:clean,current:clean,rocm7:clean                               api-error
exit_in_signal         legacy:clean,current:clean,rocm7:clean                               !api-error
fixed_map_in_callback  legacy:clean,current:clean,rocm7:refused                             freed-while-registered,!api-error
madvise_pending        legacy:clean,current:clean,rocm7:clean                               api-error
mremap_registered      legacy:clean,current:clean,rocm7:refused                             freed-while-registered,api-error
bad_mem_args           legacy:clean,current:clean,rocm7:clean                               freed-while-registered,api-error
noreplace_after_munmap legacy:clean,current:clean,rocm7:refused                             freed-while-registered,!api-error
stale_shmdt            legacy:fault,current:fault,rocm7:refused                             freed-while-registered,!api-error
neighbour_free         legacy:clean,current:clean,rocm7:clean                               !api-error
tail_unmap             legacy:clean,current:clean,rocm7:clean                               freed-while-registered,!api-error
hole_unmap             legacy:clean,current:clean,rocm7:clean                               freed-while-registered,!api-error
hole_fixed_map         legacy:clean,current:clean,rocm7:clean                               freed-while-registered,!api-error
hole_in_range_unmap    legacy:clean,current:clean,rocm7:clean                               freed-while-registered,!api-error
mremap_shrink_live     legacy:clean,current:clean,rocm7:clean                               freed-while-registered,!api-error
free_grace_orphan      legacy:clean,current:clean,rocm7:clean                               !api-error
free_grace_capture     legacy:clean,current:clean,rocm7:clean                               !api-error
free_grace_lock        legacy:clean,current:clean,rocm7:clean                               !api-error
fork_after_unmap       legacy:clean,current:clean,rocm7:clean                               freed-while-registered,!api-error
fork_reregister        legacy:fault,current:clean,rocm7:clean                               !runtime-error
fork_hang              legacy:clean,current:clean,rocm7:clean                               !runtime-error,!api-error
fork_inherit           legacy:clean,current:clean,rocm7:clean                               !runtime-error
fork_pending_child     legacy:fault,current:clean,rocm7:clean                               !runtime-error
fork_freed             legacy:clean,current:clean,rocm7:clean                               !runtime-error,!api-error
fork_threads           legacy:clean,current:clean,rocm7:clean                               !runtime-error
refusal_first          legacy:clean,current:clean,rocm7:clean                               !runtime-error
cancel_in_wait         legacy:clean,current:clean,rocm7:clean                               !api-error
main_pthread_exit      legacy:silent-leak,current:silent-leak,rocm7:silent-leak             leak-at-exit,!api-error
hipfree_in_callback    legacy:deadlock,current:deadlock,rocm7:deadlock                      !api-error
relaxed_unregister_in_capture legacy:early-read,current:clean,rocm7:clean                  !api-error
two_dev_free_blocking  legacy:early-read,current:clean,rocm7:clean                          !api-error
two_dev_free_nonblocking legacy:early-read,current:clean,rocm7:clean                        !api-error
two_dev_free_per_thread legacy:early-read,current:clean,rocm7:clean                         !api-error
two_dev_launches       legacy:early-read,current:clean,rocm7:clean                          !api-error
fixed_map_many_holes   legacy:clean,current:clean,rocm7:clean                               freed-while-registered,!api-error
remap_after_munmap     legacy:clean,current:clean,rocm7:clean                               freed-while-registered,!api-error
daemon_fork            legacy:clean,current:clean,rocm7:clean                               !runtime-error,!api-error
atfork_unregister      legacy:clean,current:clean,rocm7:clean                               !runtime-error,!api-error
fork_raw               legacy:clean,current:clean,rocm7:clean                               !runtime-error,!api-error
fork_raw_threads       legacy:clean,current:clean,rocm7:clean                               freed-while-registered,!runtime-error
last_thread_exit       legacy:clean,current:clean,rocm7:clean                               !runtime-error,!api-error
refused_register_alone legacy:clean,current:clean,rocm7:clean                               !runtime-error
no_register_signals    legacy:clean,current:clean,rocm7:clean                               !runtime-error,!api-error
unregister_after_free  legacy:clean,current:clean,rocm7:clean                               freed-while-registered,!runtime-error
reserve_marks          legacy:clean,current:clean,rocm7:clean                               !runtime-error,!api-error
first_allocs           legacy:clean,current:clean,rocm7:clean                               !runtime-error,!api-error
'
# (bad_args is no hazard on the bare runtime, which rejects these arguments
# too: it checks that safepin answers G11's codes and stays transparent.)
# (two_dev_*: two devices, SIMHIP_DEVICES=2, DESIGN G1 "any stream of any
# device": a registration made while device 0 is current, used by device 1
# through the mapped pointer, unregistered while device 1 is busy, on a
# blocking, a non-blocking and the per-thread stream, then freed; clean bare
# from ROCm 5.6, whose unregister waits for every device. two_dev_launches
# also checks that another thread's launches on both devices complete while
# that unregister waits: "stalled: ..." otherwise.)
# (fixed_map_many_holes ... no_register_signals, clean bare, check that
# safepin's own thread, stack and forks stay out of the program's way, G12:
# a MAP_FIXED over a span with more holes than safepin fills, an address
# unmapped and mapped again, daemon(), a prepare handler that unregisters,
# _Fork() and raw fork system calls, one of them beside threads in hooks,
# a clone() child and a main thread that end with the exit system call,
# signal dispositions left as the program set them until it registers.)
# (relaxed_unregister_in_capture, clean bare from ROCm 5.6, checks that
# safepin's own waits never break another thread's global capture: from
# ROCm 7.0, the rocm7 personality, an event query made without relaxed mode
# would invalidate it.)
# (unreg_late_work, clean bare from ROCm 5.6, checks that an ordered release never waits
# for work other threads enqueued after the unregister call began: a host
# function enqueued then, which waits for the call to return, would
# deadlock it.)
# (pending_copy and runtime_answers, clean bare too, check that the
# runtime's answers pass through unchanged. A diagnostics entry "!code"
# must NOT be printed. api-error: the programs that make bad calls on
# purpose get their lines, the others none: a correct program's probes
# (pending_copy asks the device address and flags of memory it unregistered)
# are no api-error. fixed_map_in_callback ... neighbour_free, clean bare
# too, check that the memory hooks stay transparent: G2, G7.)
#
# Under safepin with options: program, personality, SAFEPIN_OPTIONS, and the
# evidence that the option does what it says (unregister=async leaves
# visibility to the program: a program that reads without synchronizing
# reads stale bytes; it also leaves releases pending while earlier device
# work runs, which madvise must wait for: G2).
OPTRUNS='
unreg_visibility      current   unregister=async                     stale
madvise_pending       current   unregister=async                     clean
madvise_pending       legacy    unregister=async                     clean
fork_pending_child    current   unregister=async:drain_timeout_ms=1  clean
fork_pending_child    rocm7     unregister=async:drain_timeout_ms=1  clean
'
# Run LEGACY_REPEAT times in a row under safepin (one TAP line per loop).
REPEAT='churn_two_threads attr_race fixed_map_many_holes remap_after_munmap daemon_fork atfork_unregister fork_raw fork_raw_threads'
#
# Evidence kinds (all matched in the program's combined stdout+stderr):
#   fault       the ROCm fault line "Memory access fault by GPU node-1 (Agent
#               handle: 0x...) on address 0x.... Reason: Page not present or
#               supervisor privilege." and death by SIGABRT
#   memobj      "simhip: runtime abort: Memobj map does not have ptr" + SIGABRT
#   attr-race   "simhip: runtime abort: hipPointerGetAttributes raced
#               hipHostUnregister" + SIGABRT
#   deadlock    "simhip: deadlock: ..." + SIGABRT
#   capture-invalidated
#               hipHostUnregister returned hipErrorStreamCaptureUnsupported
#               (900) AND hipStreamEndCapture failed with
#               hipErrorStreamCaptureInvalidated (901); exit 1
#   capture-refused
#               hipHostUnregister returned 900, the capture survived (no 901);
#               exit 1
#   misuse      the unsynchronized register/unregister pairs broke: a fault
#               line + SIGABRT, or the Memobj runtime abort + SIGABRT, or a
#               register/unregister/device-pointer call failed with
#               hipErrorHostMemoryNotRegistered (713), hipErrorInvalidValue
#               (1) or, from the other thread's live registration,
#               hipErrorHostMemoryAlreadyRegistered (712); exit 1 then
#   silent-leak the program exits 0 with "OK" and nobody reports the leaked
#               registration (no "leak" anywhere in the output)
#   early-read  the release came before the device work was done: the
#               program's check of the bytes the device writes failed
#               ("corrupted data", exit 1) or the device faulted (fault, as
#               above), whichever happened first
#   refused     a hipHostRegister of memory the program owns failed with
#               hipErrorHostMemoryAlreadyRegistered (712): a stale
#               registration of memory freed or unmapped while registered
#               still covers the address (newer clr); exit 1
#   stale       the program read bytes the device had not written yet
#               ("corrupted data ... (stale)"), exit 1, no fault
#   clean       exit 0, "OK", no fault, abort or deadlock line
# ---------------------------------------------------------------------------

cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
SAFEPIN_LIB=${SAFEPIN_LIB:-$BUILD/libsafepin.so}
BIN=$BUILD/tests/legacy
SIMHIP_DIR=$BUILD/simhip
PARTS=${LEGACY_PARTS:-native safepin repeat}
TIMEOUT=${LEGACY_TIMEOUT:-20}
# Under safepin's defaults, an exit drain that waits out its timeout (it
# missed that its work was done) would take 60 s: past TIMEOUT, a hang.
DRAIN_GUARD=drain_timeout_ms=60000
REPEAT_N=${LEGACY_REPEAT:-20}
REPEAT_PERS=${LEGACY_REPEAT_PERS:-current legacy rocm7}
SAFEPIN_PERS=${LEGACY_PERS:-current legacy rocm7}
TAG=${LEGACY_TAG:+$LEGACY_TAG, }
LOGDIR=$BUILD/test-logs/legacy${LEGACY_TAG:+-$LEGACY_TAG}
mkdir -p "$LOGDIR"
ulimit -c 0 2>/dev/null

FAULT_RE='^Memory access fault by GPU node-1 \(Agent handle: 0x[0-9a-fA-F]+\) on address 0x[0-9a-fA-F]+\. Reason: Page not present or supervisor privilege\.'
MEMOBJ_RE='simhip: runtime abort: Memobj map does not have ptr'
ATTR_RE='simhip: runtime abort: hipPointerGetAttributes raced hipHostUnregister'
DEADLOCK_RE='simhip: deadlock: '
ANY_ABORT_RE='simhip: runtime abort: |simhip: deadlock: '
SIGABRT_RC=134
TIMEOUT_RC=124

NTESTS=0
NFAIL=0
pass() { NTESTS=$((NTESTS + 1)); echo "ok - $1"; }
fail() { NTESTS=$((NTESTS + 1)); NFAIL=$((NFAIL + 1)); echo "not ok - $1: $2"; }

# run LOG PERSONALITY PRELOAD PROGRAM: run one program on simhip; sets RC.
run() {
    local log=$1 pers=$2 preload=$3 prog=$4
    local -a envs=("SIMHIP_PERSONALITY=$pers"
                   "LD_LIBRARY_PATH=$SIMHIP_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    [ -n "$preload" ] && envs+=("LD_PRELOAD=$preload")
    # (the braces keep bash's "Aborted" job notice out of the TAP stream)
    { timeout -k 5 "$TIMEOUT" env "${envs[@]}" "$BIN/$prog" >"$log" 2>&1; RC=$?; } 2>/dev/null
}

has() { grep -qE -- "$2" "$1"; }

# What a log says went wrong, for "not ok" messages: the program's first
# complaint, else its last line.
COMPLAINT_RE='^tests/legacy/[a-z_]+\.c:[0-9]+: |corrupted data|wrong result|failed: |returned .*expected|did not run|still registered'
tail_of() {
    local line
    line=$(grep -m1 -E "$COMPLAINT_RE" "$1")
    [ -n "$line" ] || line=$(grep -v '^[[:space:]]*$' "$1" | tail -n 1)
    echo "${line:0:200}"
}

# why_clean LOG: empty when the run was correct, else the reason.
why_clean() {
    local log=$1
    if [ "$RC" -eq "$TIMEOUT_RC" ] || [ "$RC" -eq 137 ]; then
        echo "hang: killed after ${TIMEOUT}s"; return
    fi
    if has "$log" "$FAULT_RE"; then echo "GPU fault: $(grep -m1 -E "$FAULT_RE" "$log" | cut -c1-200)"; return; fi
    if has "$log" "$ANY_ABORT_RE"; then echo "$(grep -m1 -E "$ANY_ABORT_RE" "$log" | cut -c1-160)"; return; fi
    if [ "$RC" -gt 128 ]; then echo "killed by SIG$(kill -l $((RC - 128)) 2>/dev/null): $(tail_of "$log")"; return; fi
    if [ "$RC" -ne 0 ]; then echo "exit $RC: $(tail_of "$log")"; return; fi
    if ! grep -qx 'OK' "$log"; then echo "no OK printed: $(tail_of "$log")"; return; fi
}

# why_not_evidence KIND LOG: empty when the log shows the hazard KIND.
why_not_evidence() {
    local kind=$1 log=$2
    if [ "$RC" -eq "$TIMEOUT_RC" ] || [ "$RC" -eq 137 ]; then
        echo "hang: killed after ${TIMEOUT}s (wanted $kind)"; return
    fi
    local abrt=0
    [ "$RC" -eq "$SIGABRT_RC" ] && abrt=1
    case $kind in
    fault)
        has "$log" "$FAULT_RE" && [ $abrt = 1 ] && return ;;
    memobj)
        has "$log" "$MEMOBJ_RE" && [ $abrt = 1 ] && return ;;
    attr-race)
        has "$log" "$ATTR_RE" && [ $abrt = 1 ] && return ;;
    deadlock)
        has "$log" "$DEADLOCK_RE" && [ $abrt = 1 ] && return ;;
    capture-invalidated)
        has "$log" 'hipHostUnregister\(stage\) returned .*\(900\)' &&
            has "$log" 'hipStreamEndCapture failed: .*\(901\)' && [ "$RC" -eq 1 ] && return ;;
    capture-refused)
        has "$log" 'hipHostUnregister\(stage\) returned .*\(900\)' &&
            ! has "$log" '\(901\)' && [ "$RC" -eq 1 ] && return ;;
    misuse)
        if [ $abrt = 1 ] && { has "$log" "$FAULT_RE" || has "$log" "$MEMOBJ_RE"; }; then return; fi
        [ "$RC" -eq 1 ] &&
            has "$log" 'hip(HostRegister|HostUnregister|HostGetDevicePointer)\(.*\) failed: .*\((713|712|1)\)' &&
            return ;;
    early-read)
        has "$log" "$FAULT_RE" && [ $abrt = 1 ] && return
        [ "$RC" -eq 1 ] && has "$log" 'corrupted data' && return ;;
    refused)
        [ "$RC" -eq 1 ] && has "$log" 'hipHostRegister\(.*\) failed: .*\(712\)' &&
            ! has "$log" "$FAULT_RE" && return ;;
    stale)
        [ "$RC" -eq 1 ] && has "$log" 'corrupted data.*\(stale\)' && ! has "$log" "$FAULT_RE" && return ;;
    silent-leak)
        [ "$RC" -eq 0 ] && grep -qx 'OK' "$log" && ! grep -qi 'leak' "$log" && return ;;
    clean)
        local why; why=$(why_clean "$log")
        [ -z "$why" ] && return
        echo "$why"; return ;;
    *)
        echo "unknown evidence kind '$kind' in the table"; return ;;
    esac
    echo "wanted $kind, got exit $RC: $(tail_of "$log")"
}

safepin_missing() { [ ! -f "$SAFEPIN_LIB" ]; }
simhip_missing() { [ ! -f "$SIMHIP_DIR/libamdhip64.so.5" ]; }

skipped() { [[ " ${LEGACY_SKIP:-} " == *" $1 "* ]]; }
skip() { NTESTS=$((NTESTS + 1)); echo "ok - $1 # SKIP ${LEGACY_SKIP_WHY:-skipped}"; }

want() {
    [[ " ${LEGACY_EXCEPT:-} " != *" $1 "* ]] &&
        { [ -z "${LEGACY_ONLY:-}" ] || [[ " $LEGACY_ONLY " == *" $1 "* ]]; }
}
part() { [[ " $PARTS " == *" $1 "* ]]; }

# (a) Without safepin: the hazard happens.
native_half() {
    local prog spec diags item pers kind log why
    while read -r prog spec diags; do
        [ -z "$prog" ] && continue
        want "$prog" || continue
        for item in ${spec//,/ }; do
            pers=${item%%:*}
            kind=${item#*:}
            local name="$prog [${TAG}no safepin, $pers: $kind]"
            if simhip_missing; then fail "$name" "missing $SIMHIP_DIR/libamdhip64.so.5"; continue; fi
            if [ ! -x "$BIN/$prog" ]; then fail "$name" "missing $BIN/$prog (make $BIN/$prog)"; continue; fi
            log=$LOGDIR/$prog.native.$pers.log
            run "$log" "$pers" "" "$prog"
            why=$(why_not_evidence "$kind" "$log")
            if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why"; fi
        done
    done <<<"$TABLE"
}

PRELOAD="${LEGACY_PRELOAD_FIRST:+$LEGACY_PRELOAD_FIRST }$SAFEPIN_LIB${LEGACY_PRELOAD_LAST:+ $LEGACY_PRELOAD_LAST}"

# why_safepin LOG DIAGS: empty when a run under safepin was correct.
why_safepin() {
    local log=$1 diags=$2 why code
    why=$(why_clean "$log")
    if [ -n "$why" ]; then echo "$why"; return; fi
    if [ -n "${LEGACY_BAD_PATTERN:-}" ] && has "$log" "$LEGACY_BAD_PATTERN"; then
        echo "sanitizer report: $(grep -m1 -E "$LEGACY_BAD_PATTERN" "$log" | cut -c1-160)"; return
    fi
    if [ "$diags" != "-" ]; then
        for code in ${diags//,/ }; do
            if [ "${code#!}" != "$code" ]; then
                if has "$log" "^==[0-9]+==safepin: .*${code#!}"; then
                    echo "unexpected '${code#!}' diagnostic"; return
                fi
            elif ! has "$log" "^==[0-9]+==safepin: .*$code"; then
                echo "no '==PID==safepin: ... $code' diagnostic"; return
            fi
        done
    fi
}

# (c) Under safepin with options (OPTRUNS).
options_half() {
    local prog pers opts kind log why
    while read -r prog pers opts kind; do
        [ -z "$prog" ] && continue
        want "$prog" || continue
        local name="$prog [${TAG}safepin $opts, $pers: $kind]"
        if skipped "$prog"; then skip "$name"; continue; fi
        if safepin_missing; then fail "$name" "missing $SAFEPIN_LIB"; continue; fi
        log=$LOGDIR/$prog.options.$pers.log
        SAFEPIN_OPTIONS=$opts run "$log" "$pers" "$PRELOAD" "$prog"
        why=$(why_not_evidence "$kind" "$log")
        if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why (see $log)"; fi
    done <<<"$OPTRUNS"
}

# (b) With safepin: every program completes correctly, every personality.
safepin_half() {
    local prog spec diags pers log why
    while read -r prog spec diags; do
        [ -z "$prog" ] && continue
        want "$prog" || continue
        for pers in $SAFEPIN_PERS; do
            local name="$prog [${TAG}safepin, $pers]"
            if skipped "$prog"; then skip "$name"; continue; fi
            if safepin_missing; then fail "$name" "missing $SAFEPIN_LIB"; continue; fi
            if simhip_missing; then fail "$name" "missing $SIMHIP_DIR/libamdhip64.so.5"; continue; fi
            if [ ! -x "$BIN/$prog" ]; then fail "$name" "missing $BIN/$prog"; continue; fi
            log=$LOGDIR/$prog.safepin.$pers.log
            SAFEPIN_OPTIONS=$DRAIN_GUARD run "$log" "$pers" "$PRELOAD" "$prog"
            why=$(why_safepin "$log" "$diags")
            if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why (see $log)"; fi
        done
    done <<<"$TABLE"
}

# The racy programs: REPEAT_N runs in a row under safepin, per personality.
repeat_half() {
    local prog pers i log why diags
    for prog in $REPEAT; do
        want "$prog" || continue
        diags=$(awk -v p="$prog" '$1 == p { print $3 }' <<<"$TABLE")
        for pers in $REPEAT_PERS; do
            local name="$prog [${TAG}safepin, $pers] ${REPEAT_N} runs in a row"
            if skipped "$prog"; then skip "$name"; continue; fi
            if safepin_missing; then fail "$name" "missing $SAFEPIN_LIB"; continue; fi
            if simhip_missing; then fail "$name" "missing $SIMHIP_DIR/libamdhip64.so.5"; continue; fi
            if [ ! -x "$BIN/$prog" ]; then fail "$name" "missing $BIN/$prog"; continue; fi
            why=
            for ((i = 1; i <= REPEAT_N; i++)); do
                log=$LOGDIR/$prog.repeat.$pers.log
                SAFEPIN_OPTIONS=$DRAIN_GUARD run "$log" "$pers" "$PRELOAD" "$prog"
                why=$(why_safepin "$log" "${diags:--}")
                if [ -n "$why" ]; then why="run $i of $REPEAT_N: $why (see $log)"; break; fi
            done
            if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why"; fi
        done
    done
}

part native && native_half
part safepin && safepin_half
part safepin && options_half
part repeat && repeat_half
echo "1..$NTESTS"
echo "# legacy${LEGACY_TAG:+ ($LEGACY_TAG)}: $((NTESTS - NFAIL)) passed, $NFAIL failed"
[ "$NFAIL" -eq 0 ]
