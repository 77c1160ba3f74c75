#!/bin/bash
# tests/diag/lifetime.sh - how threads and runs end (G9): exit from a host
# function or with a capture open, the exit drain before the runtime's own
# teardown, dlclose of the runtime with a reload, a thread cancelled while
# it waits in safepin, threads that meet safepin inside the loader or a
# fork's prepare handlers. Each program runs without safepin and with it
# (strict mode), in both personalities unless said. TAP lines; run by
# tests/diag/run.sh.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
LIB=$BUILD/libsafepin.so
SIM=$BUILD/simhip
EXITP=$BUILD/tests/diag/exit_paths
RELOAD=$BUILD/tests/reach/dlclose_reload
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

ok() { echo "ok - $1"; }
nok() { echo "not ok - $1: $2"; }

# run PERSONALITY PRELOAD OPTIONS PROGRAM ARGS...: sets RC and OUT. A stall
# of the exit drain shows as release-timeout (drain_timeout_ms below), a
# hang as the timeout's status.
run() {
    local pers=$1 pre=$2 opts=$3; shift 3
    OUT=$(SIMHIP_PERSONALITY=$pers LD_LIBRARY_PATH=$SIM LD_PRELOAD=$pre \
          SAFEPIN_OPTIONS="strict=1:log=info:drain_timeout_ms=3000:report=$T/report.json${opts:+:$opts}" \
          timeout -k 2 30 "$@" 2>&1)
    RC=$?
}

# why_bad: empty when the run exited 0 with OK and no violation.
why_bad() {
    local why=
    [ "$RC" -eq 0 ] || why="exit $RC"
    echo "$OUT" | grep -qx OK || why="$why; no OK"
    echo "$OUT" | grep -qE 'Memory access fault|simhip: (runtime abort|deadlock)' && why="$why; $(echo "$OUT" | grep -m1 -E 'fault|simhip:' | cut -c1-120)"
    echo "$OUT" | grep -qE '^==[0-9]+==safepin: (release-timeout|runtime-error):' &&
        why="$why; $(echo "$OUT" | grep -m1 -E 'safepin: (release-timeout|runtime-error):' | cut -c1-160)"
    echo "${why#; }"
}

# mode     options          expected: "released" (the report counts the
#                           release completed) or what safepin says at
#                           log=info about the release it could not complete
# (teardown: unregister=async leaves the release to the exit drain.)
MODES='
hostfn   -                not completed: exit was called from a host function
capture  -                released
teardown unregister=async released
'
while read -r mode opts said; do
    [ -z "$mode" ] && continue
    [ "$opts" = - ] && opts=
    for pers in current legacy; do
        run "$pers" "" "" "$EXITP" "$mode"
        why=$(why_bad)
        if [ -z "$why" ]; then ok "exit $mode [no safepin, $pers]"; else nok "exit $mode [no safepin, $pers]" "$why"; fi
        rm -f "$T/report.json"
        run "$pers" "$LIB" "$opts" "$EXITP" "$mode"
        why=$(why_bad)
        if [ "$said" = released ]; then
            python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["counters"]; sys.exit(c["releases_completed"] != 1)' \
                "$T/report.json" 2>/dev/null || why="$why; the report does not count 1 completed release"
        elif ! echo "$OUT" | grep -qF "$said"; then
            why="$why; no '$said' line"
        fi
        why=${why#; }
        if [ -z "$why" ]; then ok "exit $mode [safepin strict, $pers]"
        else nok "exit $mode [safepin strict, $pers]" "$why"; echo "$OUT" | head -20 | sed 's/^/# /'; fi
    done
done <<<"$MODES"

# dlclose of the runtime with a release pending, then a reload at another
# address (the old range is taken by a mapping of the program).
for pers in current legacy; do
    for pre in "" "$LIB"; do
        name="dlclose and reload [$([ -n "$pre" ] && echo "safepin strict" || echo "no safepin"), $pers]"
        run "$pers" "$pre" "" "$RELOAD"
        why=$(why_bad)
        if [ -z "$why" ]; then ok "$name"; else nok "$name" "$why"; echo "$OUT" | head -20 | sed 's/^/# /'; fi
    done
done

# The same with the reaper slow to see the runtime gone after its dlclose
# (SAFEPIN_TEST_FAIL=unload:1+, util/testfail.c): the program finds it gone,
# reloads it and looks its functions up first; safepin must forget the old
# instance there and call the new one. (The program's own dlclose of its
# polling handle unloads the runtime in some runs: three runs each.)
for pers in current legacy; do
    name="dlclose and reload, the reaper slow to see it unloaded [safepin strict, $pers]"
    why=
    for i in 1 2 3; do
        SAFEPIN_TEST_FAIL=unload:1+ run "$pers" "$LIB" "" "$RELOAD"
        why=$(why_bad)
        [ -n "$why" ] && break
    done
    if [ -z "$why" ]; then ok "$name"; else nok "$name" "$why"; echo "$OUT" | grep -v 'options:' | head -20 | sed 's/^/# /'; fi
done

# The same, the new instance loaded where the old one was (no range held):
# its link map and load address are the old one's, and only the loader's
# counts of loads and unloads tell that the old instance is gone, its
# streams with it.
for pers in current legacy; do
    name="dlclose and reload at the same address, the reaper slow to see it unloaded [safepin strict, $pers]"
    why=
    for i in 1 2 3; do
        SAFEPIN_TEST_FAIL=unload:1+ run "$pers" "$LIB" "" "$RELOAD" same
        why=$(why_bad)
        [ -n "$why" ] && break
    done
    if [ -z "$why" ]; then ok "$name"; else nok "$name" "$why"; echo "$OUT" | grep -v 'options:' | head -20 | sed 's/^/# /'; fi
    run "$pers" "" "" "$RELOAD" same
    why=$(why_bad)
    if [ -z "$why" ]; then ok "dlclose and reload at the same address [no safepin, $pers]"; else nok "dlclose and reload at the same address [no safepin, $pers]" "$why"; fi
done

# dlclose of a runtime loaded with dlmopen into a namespace of its own,
# releases pending (tests/reach/dlmopen_close.c).
NSCLOSE=$BUILD/tests/reach/dlmopen_close
for pers in current legacy; do
    for pre in "" "$LIB"; do
        name="dlclose of a dlmopen()ed runtime [$([ -n "$pre" ] && echo "safepin strict" || echo "no safepin"), $pers]"
        run "$pers" "$pre" "" "$NSCLOSE"
        why=$(why_bad)
        if [ -z "$why" ]; then ok "$name"; else nok "$name" "$why"; echo "$OUT" | head -20 | sed 's/^/# /'; fi
    done
done

# A fork right after the program closed the runtime, its release pending
# (async unregister: safepin holds the runtime, and its reaper unloads it
# once the release is done, which must not cross the fork); the child and
# then the parent load it again (tests/reach/fork_after_close.c).
FORKCLOSE=$BUILD/tests/reach/fork_after_close
for pers in current legacy; do
    for pre in "" "$LIB"; do
        name="fork right after dlclose of the runtime [$([ -n "$pre" ] && echo "safepin strict, unregister=async" || echo "no safepin"), $pers]"
        run "$pers" "$pre" "unregister=async" "$FORKCLOSE"
        why=$(why_bad)
        if [ -z "$why" ]; then ok "$name"; else nok "$name" "$why"; echo "$OUT" | head -20 | sed 's/^/# /'; fi
    done
done

# A thread cancelled while its register waits for a pending release (async
# unregister: the release is still pending when the worker registers)
# leaves no lock held, and its register completes (tests/legacy/cancel_in_wait.c).
CANCEL=$BUILD/tests/legacy/cancel_in_wait
for pers in current legacy; do
    for pre in "" "$LIB"; do
        name="cancelled while waiting for a release [$([ -n "$pre" ] && echo "safepin strict, unregister=async" || echo "no safepin"), $pers]"
        run "$pers" "$pre" "unregister=async" "$CANCEL"
        why=$(why_bad)
        if [ -z "$why" ]; then ok "$name"; else nok "$name" "$why"; echo "$OUT" | head -20 | sed 's/^/# /'; fi
    done
done

# Threads that meet safepin's hooks inside the loader (a library's
# constructor holds the loader's lock) or in a fork's prepare handlers, and
# a small stack that closes the runtime with a release pending
# (tests/reach/loader_locks.c): safepin never holds its lock while it waits
# for the loader's, never needs the loader's in a fork, runs a prepare
# handler wherever its code lies, keeps a runtime dlmopen()ed into its own
# namespace while other threads load and unload, and closes the runtime in
# little stack.
LOCKS=$BUILD/tests/reach/loader_locks
PLUGIN=$BUILD/tests/reach/libctor_plugin.so
for mode in jit fork_ctor dlsym_ctor ns_churn small_stack; do
    for pre in "" "$LIB"; do
        name="loader and fork: $mode [$([ -n "$pre" ] && echo "safepin strict" || echo "no safepin"), current]"
        run current "$pre" "" "$LOCKS" "$mode" "$PLUGIN"
        why=$(why_bad)
        if [ -z "$why" ]; then ok "$name"; else nok "$name" "$why"; echo "$OUT" | head -20 | sed 's/^/# /'; fi
    done
done
