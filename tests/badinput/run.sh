#!/bin/bash
# tests/badinput/run.sh - bad input at every entry point (issue 12, item 6).
# TAP lines. Each case of badinput.c runs without and with safepin, in all three
# personalities, current, legacy and rocm7 (SIMHIP_DEVICES=2, so that
# another device's streams exist).
#
# With safepin, always: exit 0 (never a crash, an abort or a hang), the
# registration next to the bad call intact (it unregisters once after it),
# and then one of:
# - where DESIGN G5/G11 say what safepin answers (the table below): that
#   code, and its diagnostic, printed by safepin;
# - otherwise the runtime's (or the kernel's) answer passes through: the
#   same return value and errno as without safepin (G10).
# A case that fails without safepin (the runtime aborts: "Memobj map does
# not have ptr") must be in the table: safepin's answer is then the point.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
LIB=$BUILD/libsafepin.so
BIN=$BUILD/tests/badinput/badinput
LOGDIR=$BUILD/test-logs/badinput
mkdir -p "$LOGDIR"
ulimit -c 0 2>/dev/null

# case                  rc with safepin   safepin's diagnostic
DOCUMENTED='
register_null           1                 invalid-argument
register_size0          1                 invalid-argument
register_size_max       1                 invalid-argument
register_wraps          1                 invalid-argument
register_overlapping    712               overlapping-register
unregister_null         1                 invalid-argument
unregister_unknown      713               unregister-unknown
unregister_kernel_addr  713               unregister-unknown
unregister_unaligned    713               unregister-interior
unregister_interior     713               unregister-interior
unregister_twice        713               double-unregister
hipfree_host_pointer    1                 hipfree-host-pointer
'
PERSONALITIES=${PERSONALITIES:-current legacy rocm7}
N=0 F=0 NDOC=0 NPASS=0
ok() { N=$((N + 1)); echo "ok - $1"; }
no() { N=$((N + 1)); F=$((F + 1)); echo "not ok - $1: $2"; }
run() { # log preload pers case
    { timeout -k 5 30 env SIMHIP_DEVICES=2 SIMHIP_PERSONALITY="$3" LD_LIBRARY_PATH=$BUILD/simhip \
        ${2:+LD_PRELOAD=$2} SAFEPIN_OPTIONS=backtrace=0:summary=0 "$BIN" "$4" >"$1" 2>"$1.err"; RC=$?; } 2>/dev/null
}
cases=$("$BIN" list) || { no "badinput list" "cannot list the cases"; echo "1..$N"; exit 1; }
for c in $cases; do
    doc=$(awk -v c="$c" '$1 == c { print $2 " " $3 }' <<<"$DOCUMENTED")
    for pers in $PERSONALITIES; do
        log=$LOGDIR/$c.$pers
        run "$log.bare" "" "$pers" "$c"; bare_rc=$RC
        run "$log.sp" "$LIB" "$pers" "$c"; sp_rc=$RC
        name="badinput $c [$pers]"
        why=
        if [ "$sp_rc" -eq 124 ] || [ "$sp_rc" -eq 137 ]; then why="hang"
        elif [ "$sp_rc" -ne 0 ]; then why="exit $sp_rc with safepin: $(tail -n1 "$log.sp.err")"
        elif ! grep -qx done "$log.sp"; then why="did not finish"
        elif grep -q '^intact 0' "$log.sp"; then why="the registration next to the call changed"
        elif [ -n "$doc" ]; then
            set -- $doc
            grep -q "^rc $1 " "$log.sp" || why="$(head -n1 "$log.sp"), expected rc $1"
            [ -z "$why" ] && ! grep -q "safepin: $2:" "$log.sp.err" && why="no $2 diagnostic"
        elif [ "$bare_rc" -ne 0 ]; then why="fails without safepin (exit $bare_rc): needs a documented answer"
        elif ! diff -q "$log.bare" "$log.sp" >/dev/null; then
            why="answer differs from the runtime's: $(head -n1 "$log.sp") vs $(head -n1 "$log.bare")"
        fi
        if [ -z "$why" ]; then
            ok "$name: ${doc:+documented }$(head -n1 "$log.sp")"
            if [ -n "$doc" ]; then NDOC=$((NDOC + 1)); else NPASS=$((NPASS + 1)); fi
        else
            no "$name" "$why"
        fi
    done
done
echo "# badinput: $N runs ($(wc -w <<<"$cases") cases x $(wc -w <<<"$PERSONALITIES") personalities): $NDOC with safepin's documented answer and diagnostic, $NPASS with the runtime's or kernel's answer unchanged; $F failed"
echo "1..$N"
[ "$F" -eq 0 ]
