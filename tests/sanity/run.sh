#!/usr/bin/env bash
# tests/sanity/run.sh - the real-runtime check, as TAP lines.
#
# A program built and linked against Debian's real libamdhip64
# ($BUILD/tests/sanity/real_runtime) runs
#   1. against the real library: no device, so it gets errors, exits 0;
#   2. unchanged, with LD_LIBRARY_PATH=$BUILD/simhip: hipSuccess everywhere,
#      and the loader prints no warning;
#   3. and the library loaded in (2) is simhip's (LD_DEBUG + ldd);
#   4. every function simhip exports has the symbol version Debian's has
#      (hipLaunchHostFunc: hip_5.3, simhip_*: simhip_ext).
# Usage: BUILD=build tests/sanity/run.sh     (exit status: failures > 0)
set -u
BUILD=${BUILD:-build}
PROG=$BUILD/tests/sanity/real_runtime
SIMDIR=$BUILD/simhip
SIMLIB=$SIMDIR/libamdhip64.so.5
REAL=/usr/lib/x86_64-linux-gnu/libamdhip64.so.5
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
n=0

ok()     { n=$((n + 1)); echo "ok - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check()  { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }

for f in "$PROG" "$SIMLIB" "$REAL"; do
    if [ ! -e "$f" ]; then
        echo "1..1"; echo "not ok - missing $f (build it first)"; exit 1
    fi
done

# ---- 1. the real runtime ---------------------------------------------------
timeout 60 "$PROG" >"$TMP/real.out" 2>"$TMP/real.err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^done$' "$TMP/real.out"; then
    ok "real runtime: program exits 0 ($(head -1 "$TMP/real.out"))"
else
    not_ok "real runtime: program exits 0 (rc=$rc)" "$(tail -5 "$TMP/real.err")"
fi
if grep -Eq '^hipGetDeviceCount=(100|101|3|1|999)' "$TMP/real.out" ||
   grep -Eq '^hipGetDeviceCount=0 count=0' "$TMP/real.out"; then
    ok "real runtime: no device, hipGetDeviceCount reports it"
else
    not_ok "real runtime: no device, hipGetDeviceCount reports it" "$(head -1 "$TMP/real.out")"
fi

# ---- 2. the same binary on simhip --------------------------------------------
LD_LIBRARY_PATH=$SIMDIR timeout 60 "$PROG" >"$TMP/sim.out" 2>"$TMP/sim.err"
rc=$?
check "simhip: program exits 0" test $rc -eq 0
check "simhip: one device" grep -q '^hipGetDeviceCount=0 count=1$' "$TMP/sim.out"
bad=$(grep -E '=' "$TMP/sim.out" | grep -vE '^(hipGetDeviceCount=0 count=1|[^=]+=0|attr\.memoryType=0|devptr_is_identity=1|hipHostUnregister\(buf\)=713)$')
# The second unregister of one pointer must be 713, the first 0.
if [ -z "$bad" ] && [ "$(grep -c '^hipHostUnregister(buf)=0$' "$TMP/sim.out")" -eq 1 ] &&
   [ "$(grep -c '^hipHostUnregister(buf)=713$' "$TMP/sim.out")" -eq 1 ]; then
    ok "simhip: hipSuccess from every call (713 for the second unregister)"
else
    not_ok "simhip: hipSuccess from every call" $bad
fi
check "simhip: device pointer of a registration is the host pointer" \
    grep -q '^devptr_is_identity=1$' "$TMP/sim.out"
if [ -s "$TMP/sim.err" ]; then
    not_ok "simhip: the loader prints nothing (no version warnings)" "$(head -5 "$TMP/sim.err")"
else
    ok "simhip: the loader prints nothing (no version warnings)"
fi

# ---- 3. proof that simhip was the library loaded -------------------------------
LD_DEBUG=libs LD_LIBRARY_PATH=$SIMDIR timeout 60 "$PROG" >/dev/null 2>"$TMP/ld.err"
simabs=$(cd "$SIMDIR" && pwd)
if grep -Eq "calling init: ($SIMDIR|$simabs)/libamdhip64.so.5" "$TMP/ld.err" &&
   ! grep -q "calling init: $REAL" "$TMP/ld.err" &&
   ! grep -q "calling init: /usr/lib/x86_64-linux-gnu/libamdhip64" "$TMP/ld.err"; then
    ok "LD_DEBUG: simhip's libamdhip64.so.5 initialized, Debian's not"
else
    not_ok "LD_DEBUG: simhip's libamdhip64.so.5 initialized, Debian's not" \
        "$(grep 'calling init' "$TMP/ld.err" | head -5)"
fi
if LD_LIBRARY_PATH=$SIMDIR ldd "$PROG" | grep -Eq "libamdhip64.so.5 => ($SIMDIR|$simabs)/libamdhip64.so.5"; then
    ok "ldd: libamdhip64.so.5 resolves to simhip"
else
    not_ok "ldd: libamdhip64.so.5 resolves to simhip" "$(LD_LIBRARY_PATH=$SIMDIR ldd "$PROG" | grep amdhip)"
fi
# The program really is linked against the soname, with versioned references.
if objdump -T "$PROG" | grep -Eq '\(hip_4\.2\)[[:space:]]+hipHostRegister$'; then
    ok "the program references hipHostRegister@hip_4.2"
else
    not_ok "the program references hipHostRegister@hip_4.2"
fi

# ---- 4. symbol versions ------------------------------------------------------------
# "version name" for every defined dynamic function symbol.
dsyms() { objdump -T "$1" | awk '$4 == ".text" || $3 == "DF" || $2 == "g" { if ($NF !~ /^hip_|^simhip_ext$/ && $(NF-1) ~ /^(\(?hip_|\(?simhip_ext)/) print $(NF-1), $NF }' | tr -d '()' | sort -u; }
dsyms "$SIMLIB" >"$TMP/sim.v"
dsyms "$REAL" >"$TMP/real.v"
mism=""
while read -r ver sym; do
    case $sym in
    hipLaunchHostFunc) want=hip_5.3 ;;
    simhip_*) want=simhip_ext ;;
    *) want=$(awk -v s="$sym" '$2 == s { print $1 }' "$TMP/real.v" | head -1) ;;
    esac
    if [ "$ver" != "$want" ]; then
        mism="$mism $sym@$ver(debian:${want:-none})"
    fi
done <"$TMP/sim.v"
count=$(wc -l <"$TMP/sim.v")
if [ -z "$mism" ] && [ "$count" -ge 40 ]; then
    ok "symbol versions of all $count simhip exports match Debian's"
else
    not_ok "symbol versions of simhip exports match Debian's ($count exports)" "$mism"
fi
# Nothing else exported: every global function is in a version node.
extra=$(objdump -T "$SIMLIB" | awk '$2 == "g" && $4 == ".text" && $(NF-1) !~ /hip_|simhip_ext/ { print $NF }')
check "simhip exports no unversioned functions" test -z "$extra"
# The version nodes form Debian's chain (hip_4.2 .. hip_5.2), plus hip_5.3.
vchain() { objdump -p "$1" | awk '/Version definitions/ { on = 1; next } /Version References/ { on = 0 } on' |
           awk '/^[0-9]/ { cur = $4; print cur } /^\t/ { print cur " <- " $1 }' | grep -v '^libamdhip64' ; }
vchain "$REAL" >"$TMP/real.chain"
vchain "$SIMLIB" >"$TMP/sim.chain"
if grep -vxFf "$TMP/sim.chain" "$TMP/real.chain" >"$TMP/missing.chain"; then
    not_ok "simhip defines Debian's version nodes with the same parents" "$(cat "$TMP/missing.chain")"
else
    ok "simhip defines Debian's version nodes with the same parents"
fi
check "hip_5.3 is a child of hip_5.2" grep -qx 'hip_5.3 <- hip_5.2' "$TMP/sim.chain"

# ==== UNDER SAFEPIN ===================================================================
# The real ROCm 5.2.3 library has no device here: every call fails. Under
# safepin the program must get the runtime's own error codes back, unchanged,
# and exit cleanly (G10); and on simhip the same answers as without safepin.
SPLIB=${SPLIB:-$BUILD/libsafepin.so}
if [ -e "$SPLIB" ]; then
    "$PROG" >"$TMP/real.plain" 2>/dev/null; rc_plain=$?
    LD_PRELOAD=$SPLIB "$PROG" >"$TMP/real.sp" 2>"$TMP/real.sp.err"; rc_sp=$?
    check "real runtime under safepin: exit status unchanged ($rc_plain)" test "$rc_plain" -eq "$rc_sp"
    check "real runtime under safepin: every return code unchanged" cmp -s "$TMP/real.plain" "$TMP/real.sp"
    check "real runtime under safepin: errors pass through (not all success)" grep -qvE '=0$' "$TMP/real.sp"
    check "real runtime under safepin: hooks really ran (symbols interposed)" \
        sh -c "LD_PRELOAD=$SPLIB LD_DEBUG=bindings '$PROG' 2>&1 >/dev/null | grep -q 'real_runtime .0. to .*libsafepin.so .0.: normal symbol .hipHostRegister.'"
    # No GPU: said once, as such, with what to do; never blamed on the
    # program's arguments (api-error).
    nd=$(grep -c "safepin: no-device: .*finds no GPU.*safepin --sim" "$TMP/real.sp.err")
    ae=$(grep -c "safepin: api-error:" "$TMP/real.sp.err")
    check "real runtime under safepin: no GPU said once, with --sim ($nd no-device, $ae api-error lines)" \
        test "$nd" -eq 1 -a "$ae" -eq 0
    LD_LIBRARY_PATH=$SIMDIR "$PROG" >"$TMP/sim.plain" 2>/dev/null
    LD_PRELOAD=$SPLIB LD_LIBRARY_PATH=$SIMDIR "$PROG" >"$TMP/sim.sp" 2>/dev/null; rc_sim=$?
    check "simhip under safepin: exit 0" test "$rc_sim" -eq 0
    check "simhip under safepin: the same answers as without" cmp -s "$TMP/sim.plain" "$TMP/sim.sp"
else
    echo "not ok - safepin checks: $SPLIB missing"; fails=$((fails+1))
fi
# ==== END UNDER SAFEPIN ===============================================================

echo "1..$n"
[ $fails -eq 0 ]
