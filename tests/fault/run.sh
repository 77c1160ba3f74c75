#!/bin/bash
# tests/fault/run.sh - injected runtime faults (simhip's SIMHIP_FAIL) under
# safepin, in the current, legacy and rocm7 personalities. TAP. One workload
# (fault_prog.c); per fault, what must happen:
#   every row: exit 0 and OK, no device fault, no runtime abort, no hang,
#              "bytes ok" (no byte lost after hipDeviceSynchronize: nothing
#              was released early, nothing freed under the device)
#   want:      lines the program must print (the return codes it sees;
#              "_" stands for a space, "|" separates lines; "line@p,q":
#              only with personalities p and q)
#   diag:      "runtime-error" when safepin made the failing call (must
#              appear), "-" when the program made it (must not appear);
#              "runtime-error@legacy": must appear with the legacy
#              personality only (in current and rocm7, whose unregister
#              waits for every stream itself, the ordered unregister makes
#              it in the program's call and records no marker)
#   same:      yes: the program's lines equal the bare runtime's (the
#              runtime's error passes through unchanged)
#              (current personality: the bare legacy runtime faults on
#              this workload, the hazard safepin exists for)
# Then two more checks:
#   - a marker that cannot be created, recorded or synchronized does not let an ordered
#     unregister return before the device work is done: the legacy program
#     unreg_visibility (reads right after unregister) stays correct;
#   - a real unregister that always fails leaves the range registered and
#     its memory alive (the program's free is never made): runtime-error,
#     then leak-at-exit, no byte lost, no fault.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
LIB=$BUILD/libsafepin.so
BIN=$BUILD/tests/fault/fault_prog
LOGDIR=$BUILD/test-logs/fault
mkdir -p "$LOGDIR"
ulimit -c 0 2>/dev/null
# SIMHIP_FAIL            want (| separated)                          diag           same
ROWS='
register:1              hipHostRegister_2                            -              yes
stream_create:1         hipStreamCreate_2                            -              yes
hostfn:1                hipStreamAddCallback_999                     -              yes
unregister:1            hipHostUnregister_0@legacy|hipHostUnregister_999@current,rocm7 runtime-error  no
event_sync:1+           hipHostUnregister_0|visible                          runtime-error@legacy  no
event_create:1+         hipHostUnregister_0|visible                          -              no
event_record:1+         hipHostUnregister_0|visible                          -              no
event_create:2          hipHostUnregister_0|visible                          -              no
event_record:2          hipHostUnregister_0|visible                          -              no
register:0.5,unregister:0.5,event_create:0.3,event_record:0.3,event_sync:0.3,stream_create:0.5,hostfn:0.5 - any any
'
BAD='Memory access fault by GPU|simhip: runtime abort|simhip: deadlock|bytes lost'
N=0 F=0
ok() { N=$((N + 1)); echo "ok - $1"; }
no() { N=$((N + 1)); F=$((F + 1)); echo "not ok - $1: $2"; }
run() { # log preload fail pers [seed]
    { timeout -k 5 30 env SIMHIP_FAIL="$3" SIMHIP_PERSONALITY="$4" SIMHIP_FAIL_SEED="${5:-1}" \
        LD_LIBRARY_PATH=$BUILD/simhip ${2:+LD_PRELOAD=$2} SAFEPIN_OPTIONS=backtrace=0 \
        "$BIN" >"$1" 2>&1; RC=$?; } 2>/dev/null
}
while read -r fail want diag same; do
    [ -z "$fail" ] && continue
    seeds=1; [ "$diag" = any ] && seeds="1 2 3 4 5 6"
    for pers in current legacy rocm7; do
        for seed in $seeds; do
            name="SIMHIP_FAIL=$fail $pers${seed:+ seed $seed}"
            [ "$diag" = any ] || name="SIMHIP_FAIL=$fail $pers"
            log=$LOGDIR/$(echo "$fail-$pers-$seed" | tr ':,+' '__p').log
            run "$log.bare" "" "$fail" "$pers" "$seed"
            run "$log" "$LIB" "$fail" "$pers" "$seed"
            why=
            if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then why="hang"
            elif grep -qE "$BAD" "$log"; then why=$(grep -m1 -E "$BAD" "$log")
            elif [ "$RC" -ne 0 ] || ! grep -qx OK "$log"; then why="exit $RC: $(tail -n1 "$log")"
            elif ! grep -qx 'bytes ok' "$log"; then why="no 'bytes ok'"
            fi
            if [ -z "$why" ] && [ "$want" != - ]; then
                IFS='|' read -ra lines <<<"$want"
                for l in "${lines[@]}"; do
                    if [[ $l == *@* ]]; then
                        [[ ",${l#*@}," == *",$pers,"* ]] || continue
                        l=${l%@*}
                    fi
                    l=${l//_/ }; grep -qx "$l" "$log" || why="no line '$l'"
                done
            fi
            if [ -z "$why" ]; then
                case $diag in
                runtime-error) grep -q 'safepin: runtime-error' "$log" || why="no runtime-error diagnostic" ;;
                runtime-error@legacy) [ "$pers" != legacy ] || grep -q 'safepin: runtime-error' "$log" ||
                    why="no runtime-error diagnostic" ;;
                -) grep -q 'safepin: runtime-error' "$log" && why="unexpected $(grep -m1 runtime-error "$log")" ;;
                esac
            fi
            if [ -z "$why" ] && [ "$same" = yes ] && [ "$pers" = current ]; then
                diff <(grep -E '^hip[A-Za-z]* -?[0-9]+$' "$log.bare") \
                     <(grep -E '^hip[A-Za-z]* -?[0-9]+$' "$log") >/dev/null ||
                    why="return codes differ from the bare runtime's"
            fi
            if [ -z "$why" ]; then ok "fault $name"; else no "fault $name" "$why"; fi
        done
    done
done <<<"$ROWS"
# (unregister=sync too: in current and rocm7 the ordered default records no
# marker, the runtime's own unregister waits; sync mode's reaper does. And
# a real unregister that fails at once, where safepin makes it later than
# the call: safepin's wait must cover the work. In current and rocm7 the
# ordered call makes it at once and its failure is the program's answer,
# as bare: the program stops there, as bare.)
VIS=$BUILD/tests/legacy/unreg_visibility
for fail in event_create:1+ event_record:1+ event_sync:1+ unregister:1; do
    for pers in current legacy rocm7 current:sync rocm7:sync; do
        [ "$fail" = unregister:1 ] && { [ "$pers" = current ] || [ "$pers" = rocm7 ]; } && continue
        mode=ordered; case $pers in *:sync) mode=sync ;; esac
        log=$LOGDIR/visibility-$(echo "$fail-$pers" | tr ':,+' '__p').log
        { timeout -k 5 30 env SIMHIP_FAIL="$fail" SIMHIP_PERSONALITY="${pers%:sync}" \
            LD_LIBRARY_PATH=$BUILD/simhip LD_PRELOAD=$LIB SAFEPIN_OPTIONS=backtrace=0:unregister=$mode \
            "$VIS" >"$log" 2>&1; RC=$?; } 2>/dev/null
        why=
        if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then why="hang"
        elif grep -qE "$BAD" "$log"; then why=$(grep -m1 -E "$BAD" "$log")
        elif [ "$RC" -ne 0 ] || ! grep -qx OK "$log"; then why="exit $RC: $(grep -m1 -E 'corrupted|failed' "$log")"
        fi
        if [ -z "$why" ]; then ok "fault SIMHIP_FAIL=$fail $pers: ordered unregister still sees the device's bytes"
        else no "fault SIMHIP_FAIL=$fail $pers: ordered unregister still sees the device's bytes" "$why"; fi
    done
done
# Out of memory in safepin while 48 threads unregister at once (legacy: the
# ordered unregister records markers): each needs one of safepin's reserve
# marker sets, fewer than the threads; none may return before its work is
# done (reserve_marks reads its buffer right after). At least one of the
# allocation budgets must let every registration through (so that every
# unregister needed a set).
RES=$BUILD/tests/legacy/reserve_marks
full=0
for n in 130 150 170 200; do
    log=$LOGDIR/reserve-marks-$n.log
    { timeout -k 5 60 env SAFEPIN_TEST_FAIL="alloc:$n+" SIMHIP_PERSONALITY=legacy \
        LD_LIBRARY_PATH=$BUILD/simhip LD_PRELOAD=$LIB SAFEPIN_OPTIONS=backtrace=0 \
        "$RES" 48 >"$log" 2>&1; RC=$?; } 2>/dev/null
    grep -q '^registered 48 of 48' "$log" && full=1
    why=
    if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then why="hang"
    elif grep -qE "$BAD" "$log"; then why=$(grep -m1 -E "$BAD" "$log")
    elif [ "$RC" -ne 0 ] || ! grep -qx OK "$log"; then why="exit $RC: $(grep -m1 -E 'read before|FAILED' "$log")"
    fi
    if [ -z "$why" ]; then ok "fault SAFEPIN_TEST_FAIL=alloc:$n+ legacy: 48 unregisters at once, no byte read early ($(head -1 "$log"))"
    else no "fault SAFEPIN_TEST_FAIL=alloc:$n+ legacy: 48 unregisters at once" "$why"; fi
done
if [ "$full" -eq 1 ]; then ok "fault reserve marker sets: a budget let all 48 registrations through"
else no "fault reserve marker sets" "no allocation budget let all 48 registrations through: the test no longer reaches the reserve sets"; fi
# A register over a range whose release is pending, made during the
# caller's own capture while no marker can be made: the release waits for a
# capture to end, so the register must not wait for the release (it did:
# a deadlock). It answers hipErrorHostMemoryAlreadyRegistered, said.
OWN=$BUILD/tests/legacy/own_capture_register
for fail in event_create:1+ event_record:1+; do
    for pers in current legacy rocm7; do
        log=$LOGDIR/own-capture-$(echo "$fail-$pers" | tr ':,+' '__p').log
        { timeout -k 5 30 env SIMHIP_FAIL="$fail" SIMHIP_PERSONALITY="$pers" \
            LD_LIBRARY_PATH=$BUILD/simhip LD_PRELOAD=$LIB SAFEPIN_OPTIONS=backtrace=0 \
            "$OWN" >"$log" 2>&1; RC=$?; } 2>/dev/null
        why=
        if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then why="hang"
        elif grep -qE "$BAD" "$log"; then why=$(grep -m1 -E "$BAD" "$log")
        elif ! grep -qx OK "$log" && ! grep -q 'safepin: overlapping-register.*waits for a capture to end' "$log"; then
            why="exit $RC without the overlapping-register diagnostic: $(tail -n1 "$log")"
        fi
        name="fault SIMHIP_FAIL=$fail $pers: register during its own capture over a pending release does not wait for that capture"
        if [ -z "$why" ]; then ok "$name"; else no "$name" "$why"; fi
    done
done
for pers in current legacy rocm7; do
    log=$LOGDIR/unregister-always-$pers.log
    run "$log" "$LIB" unregister:1+ "$pers"
    why=
    if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then why="hang"
    elif grep -qE "$BAD" "$log"; then why=$(grep -m1 -E "$BAD" "$log")
    elif [ "$RC" -ne 0 ] || ! grep -qx OK "$log"; then why="exit $RC: $(tail -n1 "$log")"
    elif ! grep -qx 'bytes ok' "$log"; then why="no 'bytes ok'"
    elif ! grep -q 'safepin: runtime-error' "$log"; then why="no runtime-error diagnostic"
    elif ! grep -q 'safepin: leak-at-exit.*real unregister failed' "$log"; then why="no leak-at-exit for the range whose unregister failed"
    fi
    if [ -z "$why" ]; then ok "fault SIMHIP_FAIL=unregister:1+ $pers: kept registered and alive, reported as a leak"
    else no "fault SIMHIP_FAIL=unregister:1+ $pers: kept registered and alive, reported as a leak" "$why"; fi
done
# Faults inside safepin (SAFEPIN_TEST_FAIL, util/testfail.c): its own
# allocations failing, the reaper thread failing to start. Same workload,
# same every-row checks (exit 0, OK, bytes ok, no fault, abort or hang), and:
#   want:   lines the program must print ("_" a space, "|" between lines)
#   diag:   the safepin line that must appear (a regex, "_" a space)
#   also:   a summary regex that must appear too ("-": none)
# alloc:1+  nothing can be tracked: the stream create and the register
#           are refused with hipErrorOutOfMemory (2) rather than run
#           untracked (an untracked stream or range would lose G1/G7);
#           the careful program goes on without them
# alloc:0.P any outcome (the draws are fixed: the rates vary what fails),
#           never a crash, hang or lost byte
# thread:1+ no reaper thread ever: the pending release is run by its
#           waiters (a sync unregister, the exit drain) instead: released,
#           no leak, no release-timeout, the ordered read still visible; an
#           ordered unregister (the default) completes its release itself,
#           so no reaper is asked for there
SROWS='
alloc:1+   backtrace=0                    hipStreamCreate_2|hipHostRegister_2        runtime-error:_out_of_memory           -
alloc:0.1  backtrace=8                    -                                          -                                       -
alloc:0.3  backtrace=8                    -                                          -                                       -
alloc:0.6  backtrace=8                    -                                          -                                       -
alloc:0.3  backtrace=0:unregister=sync    -                                          -                                       -
thread:1   backtrace=0:log=info           hipHostUnregister_0|visible                -                                       1_releases_completed.*0_leaks
thread:1+  backtrace=0:log=info           hipHostUnregister_0|visible                -                                       1_releases_completed.*0_leaks
thread:1+  backtrace=0:unregister=sync    hipHostUnregister_0|visible                runtime-error:_cannot_start_the_reaper  1_releases_completed.*0_leaks
thread:1+  backtrace=0:unregister=async   hipHostUnregister_0                        runtime-error:_cannot_start_the_reaper  1_releases_completed.*0_leaks
'
while read -r tf opts want diag also; do
    [ -z "$tf" ] && continue
    for pers in current legacy rocm7; do
        name="SAFEPIN_TEST_FAIL=$tf $opts $pers"
        log=$LOGDIR/safepin-$(echo "$tf-$opts-$pers" | tr ':,+=' '__p_').log
        { timeout -k 5 30 env SAFEPIN_TEST_FAIL="$tf" SIMHIP_PERSONALITY="$pers" \
            LD_LIBRARY_PATH=$BUILD/simhip LD_PRELOAD=$LIB SAFEPIN_OPTIONS="$opts" \
            "$BIN" >"$log" 2>&1; RC=$?; } 2>/dev/null
        why=
        if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then why="hang"
        elif grep -qE "$BAD" "$log"; then why=$(grep -m1 -E "$BAD" "$log")
        elif [ "$RC" -ne 0 ] || ! grep -qx OK "$log"; then why="exit $RC: $(tail -n1 "$log")"
        elif ! grep -qx 'bytes ok' "$log"; then why="no 'bytes ok'"
        elif grep -q 'safepin: release-timeout' "$log"; then why="release-timeout"
        fi
        if [ -z "$why" ] && [ "$want" != - ]; then
            IFS='|' read -ra lines <<<"$want"
            for l in "${lines[@]}"; do l=${l//_/ }; grep -qx "$l" "$log" || why="no line '$l'"; done
        fi
        [ -z "$why" ] && [ "$diag" != - ] && ! grep -qE "safepin: ${diag//_/ }" "$log" &&
            why="no '${diag//_/ }' line"
        [ -z "$why" ] && [ "$also" != - ] && ! grep -qE "safepin: summary: .*${also//_/ }" "$log" &&
            why="summary lacks '${also//_/ }'"
        if [ -z "$why" ]; then ok "fault $name"; else no "fault $name" "$why"; fi
    done
done <<<"$SROWS"
echo "# fault: $N runs, $F failed"
[ "$F" -eq 0 ]
