#!/bin/bash
# tests/soname/run.sh - safepin protects programs linked against
# libamdhip64.so.6 and .so.7 (simhip under those sonames, with clr's version
# nodes: build/simhip/libamdhip64.so.{6,7}, simhip/libamdhip64-{6,7}.map).
# Interposition must depend neither on the soname nor on the version node.
# TAP. Per soname:
#   - the program really is linked that way: DT_NEEDED libamdhip64.so.N (no
#     .so.5), versioned references hipHostRegister@hip_4.2,
#     hipHostUnregister@hip_4.2, hipGetProcAddress@hip_6.1; the library
#     defines clr's version nodes up to hip_6.4 (.so.6) or hip_7.2 (.so.7);
#   - the run loads build/simhip/libamdhip64.so.N and no other libamdhip64;
#   - each hazard of tests/soname/linked.c happens bare (rocm7 personality)
#     and is prevented under safepin (exit 0, OK, the diagnostic).
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
LIB=${SAFEPIN_LIB:-$BUILD/libsafepin.so}
SIM=$BUILD/simhip
LOGDIR=$BUILD/test-logs/soname
mkdir -p "$LOGDIR"
ulimit -c 0 2>/dev/null
N=0 F=0
ok() { N=$((N + 1)); echo "ok - $1"; }
not_ok() { N=$((N + 1)); F=$((F + 1)); echo "not ok - $1: $2"; }
check() { # name why-if-failed command...
    local name=$1 why=$2; shift 2
    if "$@"; then ok "$name"; else not_ok "$name" "$why"; fi
}

FAULT_RE='Memory access fault by GPU|simhip: runtime abort|simhip: deadlock'
# run LOG PRELOAD PROG ARG: sets RC
run() {
    { timeout -k 5 20 env SIMHIP_PERSONALITY=rocm7 LD_LIBRARY_PATH="$SIM" ${2:+LD_PRELOAD="$2"} \
        "$3" "$4" >"$1" 2>&1; RC=$?; } 2>/dev/null
}
# Bare evidence per hazard, and the diagnostic safepin must print.
declare -A BARE=(
    [interior]='simhip: runtime abort: Memobj map does not have ptr'
    [procaddr]='simhip: runtime abort: Memobj map does not have ptr'
    [stale]='hipHostRegister\(b, .*\) failed: .*\(712\)'
)
declare -A DIAG=([interior]=unregister-interior [procaddr]=unregister-interior [stale]=freed-while-registered)
declare -A LAST=([6]=hip_6.4 [7]=hip_7.2)

for v in 6 7; do
    prog=$BUILD/tests/soname/linked.so$v
    lib=$SIM/libamdhip64.so.$v
    if [ ! -x "$prog" ] || [ ! -f "$lib" ]; then
        not_ok "so.$v: built" "missing $prog or $lib (make $prog)"; continue
    fi
    needed=$(readelf -d "$prog" | sed -n 's/.*(NEEDED).*\[\(libamdhip64[^]]*\)\].*/\1/p' | tr '\n' ' ')
    check "so.$v: the program needs libamdhip64.so.$v alone" "needs: $needed" \
        test "$needed" = "libamdhip64.so.$v "
    syms=$(readelf --dyn-syms -W "$prog")
    check "so.$v: versioned references hipHostRegister@hip_4.2, hipHostUnregister@hip_4.2, hipGetProcAddress@hip_6.1" \
        "$(echo "$syms" | grep -oE 'hip(HostRegister|HostUnregister|GetProcAddress)@[^ ]*' | tr '\n' ' ')" \
        bash -c 'grep -q "UND hipHostRegister@hip_4.2 " <<<"$1" && grep -q "UND hipHostUnregister@hip_4.2 " <<<"$1" &&
                 grep -q "UND hipGetProcAddress@hip_6.1 " <<<"$1"' _ "$syms"
    nodes=$(readelf -V -W "$lib" | sed -n 's/.*Index: [0-9]*  Cnt: [0-9]*  Name: \(hip_[0-9.]*\).*/\1/p' | tr '\n' ' ')
    check "so.$v: the library defines clr's nodes hip_4.2 ... ${LAST[$v]}" "nodes: $nodes" \
        bash -c '[[ "$1" == "hip_4.2 hip_4.3 "* && "$1" == *" $2 " ]]' _ "$nodes" "${LAST[$v]}"
    { LD_DEBUG=libs SIMHIP_PERSONALITY=rocm7 LD_LIBRARY_PATH=$SIM LD_PRELOAD=$LIB timeout 20 \
        "$prog" interior >"$LOGDIR/ld.$v.out" 2>&1; } 2>/dev/null
    inits=$(grep -oE 'calling init: [^ ]*libamdhip64[^ ]*' "$LOGDIR/ld.$v.out" | sed 's/calling init: //' | tr '\n' ' ')
    check "so.$v: under safepin the run loads $lib and no other libamdhip64" "loaded: $inits" \
        bash -c '[[ "$1" =~ ^[^\ ]*/libamdhip64\.so\.$2\ $ ]]' _ "$inits" "$v"
    for w in interior procaddr stale; do
        log=$LOGDIR/$w.$v.bare.log
        run "$log" "" "$prog" "$w"
        if [ "$RC" -ne 0 ] && grep -qE "${BARE[$w]}" "$log"; then
            ok "so.$v: $w happens without safepin"
        else
            not_ok "so.$v: $w happens without safepin" "exit $RC, no '${BARE[$w]}' (see $log)"
        fi
        log=$LOGDIR/$w.$v.safepin.log
        run "$log" "$LIB" "$prog" "$w"
        why=
        if [ "$RC" -ne 0 ]; then why="exit $RC: $(grep -v '^ ' "$log" | tail -n1)"
        elif grep -qE "$FAULT_RE" "$log"; then why=$(grep -m1 -E "$FAULT_RE" "$log")
        elif ! grep -qx OK "$log"; then why="no OK"
        elif ! grep -qE "^==[0-9]+==safepin: ${DIAG[$w]}:" "$log"; then why="no ${DIAG[$w]} diagnostic"
        fi
        if [ -z "$why" ]; then ok "so.$v: $w prevented under safepin (${DIAG[$w]})"
        else not_ok "so.$v: $w prevented under safepin" "$why (see $log)"; fi
    done
done
echo "1..$N"
echo "# soname: $((N - F)) passed, $F failed"
[ "$F" -eq 0 ]
