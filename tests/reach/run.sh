#!/bin/bash
# tests/reach/run.sh - HIP programs that take their functions with dlvsym, a
# versioned look-up (which never takes an LD_PRELOAD library's unversioned
# definitions): on a dlopen handle, on RTLD_DEFAULT, and on RTLD_NEXT from
# a library, against simhip as libamdhip64.so.5, .so.6 and .so.7 (the
# version nodes of ROCm 5.2, 6 and 7). Prints TAP lines.
#
# Each way runs bare and under safepin (tests/reach/dlvsym_reach.c):
#   - bare, the hooked functions are the runtime's and the legacy hazard
#     happens through them: a kernel still writing into a buffer that was
#     unregistered and freed faults the device (ROCm 5.2 personality);
#   - under safepin (ROCm 5.2 and current personalities) the same look-ups
#     give safepin's shims, every other line (functions safepin does not
#     hook, unknown names, unknown versions with dlerror()'s text) is the
#     bare run's line, and the kernel's data all lands.
# RTLD_NEXT from a library that was dlopen()ed finds nothing, bare, and must
# find nothing under safepin either ("next-dlopen").
#
#   BUILD=build              where the programs and simhip are
#   SAFEPIN_LIB=...          the library preloaded (default $BUILD/libsafepin.so)
#   REACH_PRELOAD_FIRST=...  preloaded before safepin (a sanitizer runtime)
#   REACH_ENV="K=V ..."      extra environment of the safepin runs
#   REACH_BAD=regex          output that fails a safepin run (sanitizer reports)
#   REACH_PERS="legacy current"  personalities of the safepin runs
#   REACH_TAG=asan           named in each test line
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
BIN=$BUILD/tests/reach/dlvsym_reach
SIM=$BUILD/simhip
LIB=${SAFEPIN_LIB:-$BUILD/libsafepin.so}
PERS=${REACH_PERS:-legacy current}
TAG=${REACH_TAG:+ [$REACH_TAG]}
LOGDIR=$BUILD/test-logs/reach${REACH_TAG:+-$REACH_TAG}
mkdir -p "$LOGDIR"
export DLVSYM_NEXT_LIB=$PWD/$BUILD/tests/reach/libdlvsym_next_dl.so
NFAIL=0
pass() { echo "ok - $1$TAG"; }
fail() { NFAIL=$((NFAIL + 1)); echo "not ok - $1$TAG: $2"; }

for f in "$BIN" "$LIB" "$SIM/libamdhip64.so.5" "$SIM/libamdhip64.so.6" "$SIM/libamdhip64.so.7" "$DLVSYM_NEXT_LIB"; do
    [ -e "$f" ] || { fail "dlvsym reach" "missing $f (make all)"; exit 1; }
done

run() { # log personality preload soname how
    local pre=${3:+${REACH_PRELOAD_FIRST:+$REACH_PRELOAD_FIRST }$3}
    # (braces: the shell's own "Aborted" line for the bare fault stays out)
    if [ -n "$3" ]; then
        { timeout -k 5 60 env SIMHIP_PERSONALITY="$2" LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$pre" \
            SAFEPIN_OPTIONS=log=warn $REACH_ENV "$BIN" "$4" "$5" >"$1" 2>&1; } 2>/dev/null
    else
        { timeout -k 5 60 env SIMHIP_PERSONALITY="$2" LD_LIBRARY_PATH="$SIM" "$BIN" "$4" "$5" >"$1" 2>&1; } 2>/dev/null
    fi
    RC=$?
}

# The look-ups safepin hooks, per soname (hipGetProcAddress sits in a node
# of its own: simhip_6.2 in .so.5, clr's hip_6.1 in .so.6 and .so.7).
hooked() {
    echo hipHostRegister@hip_4.2 hipHostUnregister@hip_4.2 hipStreamCreateWithFlags@hip_4.2 \
        hipFree@hip_4.2 hipPointerGetAttributes@hip_4.2 hipLaunchHostFunc@hip_5.3
    if [ "$1" = 5 ]; then echo hipGetProcAddress@simhip_6.2; else echo hipGetProcAddress@hip_6.1; fi
}

# why_lines bare_log safepin_log soname: the look-up lines, checked.
why_lines() {
    local b=$1 s=$2 so=$3 want line n
    n=$(grep -c '^got ' "$b")
    [ "$n" -eq 15 ] || { echo "bare run printed $n look-ups, not 15"; return; }
    for want in $(hooked "$so"); do
        line=$(grep -F "got $want -> " "$b")
        [ "$line" = "got $want -> ${want%@*} in libamdhip64.so.$so" ] || { echo "bare '$want': ${line:-no line}"; return; }
        line=$(grep -F "got $want -> " "$s")
        [ "$line" = "got $want -> ${want%@*} in $(basename "$LIB")" ] || { echo "'$want': ${line:-no line}, wanted safepin's shim"; return; }
    done
    # Every other line is the bare run's, dlerror() text included.
    local pat
    pat=$(hooked "$so" | tr ' ' '\n' | sed 's/^/got /; s/$/ -> /')
    local d
    d=$(diff <(grep '^got ' "$b" | grep -vF "$pat") <(grep '^got ' "$s" | grep -vF "$pat") | grep '^[<>]' | head -n 4 | tr '\n' ' ')
    [ -z "$d" ] || echo "passed-through look-ups differ ('<' bare, '>' safepin): $d"
    grep -q ' -> NULL: .*undefined symbol: hipHostRegister, version hip_5.2$' "$s" ||
        echo "no NULL with dlerror() for hipHostRegister@hip_5.2"
}

for so in 5 6 7; do
    for how in handle default next; do
        name="dlvsym $how on libamdhip64.so.$so"
        [ "$how" = next ] && name="dlvsym RTLD_NEXT from a library on libamdhip64.so.$so"
        [ "$how" = default ] && name="dlvsym RTLD_DEFAULT on libamdhip64.so.$so"
        bare=$LOGDIR/$so.$how.bare.log
        run "$bare" legacy "" "libamdhip64.so.$so" "$how"
        if [ -z "$REACH_TAG" ]; then
            why=""
            [ "$RC" -eq 134 ] && grep -q "Memory access fault by GPU node-1" "$bare" ||
                why="exit $RC, no device fault: $(tail -n 1 "$bare")"
            [ -z "$why" ] && [ "$(grep -c " in libamdhip64.so.$so$" "$bare")" -ge 7 ] ||
                why="${why:-the hooked look-ups did not reach the runtime}"
            if [ -z "$why" ]; then pass "$name without safepin: the runtime's functions, device fault"
            else fail "$name without safepin" "$why"; fi
        fi
        for pers in $PERS; do
            log=$LOGDIR/$so.$how.safepin.$pers.log
            run "$log" "$pers" "$LIB" "libamdhip64.so.$so" "$how"
            why=""
            [ "$RC" -eq 0 ] && grep -q '^OK$' "$log" || why="exit $RC: $(grep -v '^got ' "$log" | head -n 2 | tr '\n' ' ')"
            grep -q "Memory access fault" "$log" && why="device fault"
            [ -n "$REACH_BAD" ] && grep -Eq "$REACH_BAD" "$log" && why="sanitizer report: $(grep -Em1 "$REACH_BAD" "$log")"
            [ -z "$why" ] && why=$(why_lines "$bare" "$log" "$so")
            if [ -z "$why" ]; then pass "$name with safepin ($pers): its shims, the rest as bare, no fault"
            else fail "$name with safepin ($pers)" "$why"; fi
        done
    done
    # RTLD_NEXT from a dlopen()ed library: its own dependencies only.
    name="dlvsym RTLD_NEXT from a dlopen()ed library on libamdhip64.so.$so"
    bare=$LOGDIR/$so.next-dlopen.bare.log
    log=$LOGDIR/$so.next-dlopen.safepin.log
    run "$bare" legacy "" "libamdhip64.so.$so" next-dlopen
    rcb=$RC
    run "$log" legacy "$LIB" "libamdhip64.so.$so" next-dlopen
    why=""
    [ "$rcb" -eq 3 ] && [ "$RC" -eq 3 ] || why="exit $rcb bare, $RC with safepin (want 3: nothing found)"
    [ "$(grep -c '^got .* -> NULL: .*libdlvsym_next_dl.so: undefined symbol' "$bare")" -eq 15 ] ||
        why="${why:-bare found something}"
    d=$(diff <(grep '^got ' "$bare") <(grep '^got ' "$log") | grep '^[<>]' | head -n 2 | tr '\n' ' ')
    [ -n "$d" ] && why="${why:-differ: $d}"
    [ -n "$REACH_BAD" ] && grep -Eq "$REACH_BAD" "$log" && why="sanitizer report: $(grep -Em1 "$REACH_BAD" "$log")"
    if [ -z "$why" ]; then pass "$name: NULL and dlerror() as bare"; else fail "$name" "$why"; fi
done
[ "$NFAIL" -eq 0 ]
