#!/bin/bash
# tests/badinput/run.sh - bad input at every entry point (issue 12, item 6).
# TAP lines. Each case of badinput.c runs without and with safepin, in all three
# personalities, current, legacy and rocm7 (SIMHIP_DEVICES=2, so that
# another device's streams exist).
#
# With safepin, always: exit 0 (never a crash, an abort or a hang), the
# registration next to the bad call intact (it unregisters once after it),
# and then one of:
# - where DESIGN G5/G11 say what safepin answers (DOCUMENTED below): that
#   code, and its diagnostic, printed by safepin (and no api-error line:
#   safepin said what it had to say);
# - otherwise the runtime's (or the kernel's) answer passes through: the
#   same return value and errno as without safepin (G10), and an api-error
#   line naming the entry point and the code (HIP: "(<rc>)", libc: the
#   errno's name and number), unless the case is in NO_API_ERROR: its answer
#   is a success or a probe's (docs/diagnostics.md, "API errors"), and no line may come.
# Without safepin no line of safepin's, of course: the bare log must have
# no api-error line either.
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
# Passed through with no api-error line: no error (the runtime or kernel
# accepts it), or the answer to a probe, which correct programs make.
# case                          why
NO_API_ERROR='
register_bad_flags              success: 0x80000000 is hipExtHostRegisterUncached, which clr accepts
register_unaligned              success: registering part of a page is allowed
hipfree_null                    success: hipFree(NULL) does nothing
attributes_null_ptr             probe: attributes of memory the runtime does not know
attributes_kernel_addr          probe: as above (legacy answers 1, the others success)
attributes_unaligned_interior   success
devptr_null_ptr                 probe: the device address of memory the runtime does not know
devptr_kernel_addr              probe: as above
flags_null_ptr                  probe: the flags of memory the runtime does not know
flags_kernel_addr               probe: as above
hostfunc_other_device           success: a host function on another device stream
procaddr_null_symbol            probe: a look-up of a name the runtime lacks (500)
procaddr_unknown                probe: as above
memcpy_other_device_stream      success
mremap_old_size_past_mapping    success: the kernel accepts it
madvise_bad_advice              probe: EINVAL of a valid range, an advice this kernel may lack
dlsym_unknown_name              probe: a look-up (NULL)
dlsym_self_hooked_name          success
'
PERSONALITIES=${PERSONALITIES:-current legacy rocm7}
N=0 F=0 NDOC=0 NPASS=0 NAPI=0
ok() { N=$((N + 1)); echo "ok - $1"; }
no() { N=$((N + 1)); F=$((F + 1)); echo "not ok - $1: $2"; }
run() { # log preload pers case
    { timeout -k 5 30 env SIMHIP_DEVICES=2 SIMHIP_PERSONALITY="$3" LD_LIBRARY_PATH=$BUILD/simhip \
        ${2:+LD_PRELOAD=$2} SAFEPIN_OPTIONS=backtrace=0:summary=0 "$BIN" "$4" >"$1" 2>"$1.err"; RC=$?; } 2>/dev/null
}
# The result line of a run ("rc 1 errno 0").
answer() { grep -m1 '^rc ' "$1"; }
# What the api-error line of a run must hold (an extended regex): the entry
# point's name, then the code with its name: HIP "hipError... (<rc>)", libc
# "errno E... (<errno>)" (dlclose sets none: its name alone).
api_line() {
    local entry rc err
    entry=$(sed -n 's/^call //p' "$1")
    read -r _ rc _ err <<<"$(answer "$1")"
    case $entry in
    hip*) echo "safepin: api-error: $entry\(.*\): hip[A-Za-z]+ \($rc\), " ;;
    *) if [ "$err" -ne 0 ]; then echo "safepin: api-error: $entry\(.*\): .*errno E[A-Z]+ \($err\), "
       else echo "safepin: api-error: $entry\("; fi ;;
    esac
}
cases=$("$BIN" list) || { no "badinput list" "cannot list the cases"; echo "1..$N"; exit 1; }
for c in $cases; do
    doc=$(awk -v c="$c" '$1 == c { print $2 " " $3 }' <<<"$DOCUMENTED")
    quiet=$(awk -v c="$c" '$1 == c { print $2 }' <<<"$NO_API_ERROR")
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
        elif grep -q "safepin: api-error:" "$log.bare.err"; then why="an api-error line without safepin"
        elif [ -n "$doc" ]; then
            set -- $doc
            grep -q "^rc $1 " "$log.sp" || why="$(answer "$log.sp"), expected rc $1"
            [ -z "$why" ] && ! grep -q "safepin: $2:" "$log.sp.err" && why="no $2 diagnostic"
            [ -z "$why" ] && grep -q "safepin: api-error:" "$log.sp.err" &&
                why="an api-error line besides safepin's own $2"
        elif [ "$bare_rc" -ne 0 ]; then why="fails without safepin (exit $bare_rc): needs a documented answer"
        elif ! diff -q "$log.bare" "$log.sp" >/dev/null; then
            why="answer differs from the runtime's: $(answer "$log.sp") vs $(answer "$log.bare")"
        elif [ -n "$quiet" ]; then
            grep -q "safepin: api-error:" "$log.sp.err" && why="api-error line for a $quiet answer"
        elif grep -q '^rc 2 ' "$log.sp"; then
            # Out of memory describes the system, not the arguments: never an
            # api-error line (docs/diagnostics.md, "API errors"). ROCm 5.x (legacy) answers
            # it to a range it cannot pin (hipamd ihipHostRegister).
            grep -q "safepin: api-error:" "$log.sp.err" && why="api-error line for out of memory"
        else
            want=$(api_line "$log.sp")
            grep -qE "$want" "$log.sp.err" || why="no api-error line matching '$want'"
        fi
        if [ -z "$why" ]; then
            ok "$name: ${doc:+documented }$(answer "$log.sp")${quiet:+ ($quiet, no api-error)}"
            if [ -n "$doc" ]; then NDOC=$((NDOC + 1));
            elif [ -n "$quiet" ]; then NPASS=$((NPASS + 1)); else NAPI=$((NAPI + 1)); fi
        else
            no "$name" "$why"
        fi
    done
done
NRUNS=$N
# api-error is no violation: strict mode's status and violations_total
# ignore it, the report's codes count it; api_errors=0 turns it off.
c=stream_destroy_destroyed log=$LOGDIR/$c.strict report=$LOGDIR/$c.report.json
rm -f "$report"
{ timeout -k 5 30 env SIMHIP_DEVICES=2 LD_LIBRARY_PATH=$BUILD/simhip LD_PRELOAD=$LIB \
    SAFEPIN_OPTIONS=backtrace=0:strict=1:report=$report "$BIN" $c >"$log" 2>"$log.err"; RC=$?; } 2>/dev/null
why=
if [ "$RC" -ne 0 ]; then why="strict=1 exits $RC"
elif ! grep -q "safepin: api-error: hipStreamDestroy(" "$log.err"; then why="no api-error line"
elif ! grep -q '"api-error": 1[,}]' "$report"; then why="the report does not count it"
elif ! grep -q '"violations_total": 0,' "$report"; then why="counted as a violation"
fi
if [ -z "$why" ]; then ok "api-error under strict=1: exit 0, counted in the report's codes, no violation"
else no "api-error under strict=1" "$why"; fi
{ timeout -k 5 30 env SIMHIP_DEVICES=2 LD_LIBRARY_PATH=$BUILD/simhip LD_PRELOAD=$LIB \
    SAFEPIN_OPTIONS=backtrace=0:api_errors=0 "$BIN" $c >"$log" 2>"$log.err"; RC=$?; } 2>/dev/null
if [ "$RC" -eq 0 ] && ! grep -q "api-error" "$log.err" && grep -q "^rc 400 " "$log"; then
    ok "api_errors=0: the same answer, no line"
else
    no "api_errors=0" "exit $RC: $(grep -m1 api-error "$log.err")"
fi
# Bad SAFEPIN_OPTIONS: never fatal (the program runs and keeps its status),
# each problem said once with what is accepted and, for a typo, the nearest
# key or word; under strict=1 a problem fails the run as a violation does.
# spec | exit status | text the log must hold
BAD_OPTIONS="strcit=1|0|unknown option 'strcit' ignored: did you mean 'strict'? (accepted keys: log, log_path, strict, exitcode,
leak-check=off|0|unknown option 'leak-check' ignored: did you mean 'leak_check'?
frobnicate=1|0|unknown option 'frobnicate' ignored (accepted keys: log, log_path, strict,
log=verbose:strict=1|23|unknown value 'verbose' for 'log' (accepted: error, warn, info or debug), keeping warn
leak_check=reprot|0|unknown value 'reprot' for 'leak_check': did you mean 'report'? (accepted: strict, report or off), keeping strict
unregister=later:hold=of|0|unknown value 'of' for 'hold': did you mean 'off'? (accepted: auto, on or off), keeping auto
strict=1:leak_chek=off|23|strict: 1 problem(s) in SAFEPIN_OPTIONS (said at start): exit status 23
strict=1:exitcode=42:lgo=info|42|unknown option 'lgo' ignored: did you mean 'log'?
strict=1:$(head -c 5000 /dev/zero | tr '\0' k)=1|23|strict: 1 problem(s) in SAFEPIN_OPTIONS"
c=hipfree_null
while IFS='|' read -r spec want_rc want_text; do
    log=$LOGDIR/options.$N
    { timeout -k 5 30 env SIMHIP_DEVICES=2 LD_LIBRARY_PATH=$BUILD/simhip LD_PRELOAD=$LIB \
        SAFEPIN_OPTIONS="backtrace=0:$spec" "$BIN" $c >"$log" 2>"$log.err"; RC=$?; } 2>/dev/null
    why=
    [ "$RC" -eq "$want_rc" ] || why="exit $RC, want $want_rc"
    grep -qx done "$log" || why="$why; the program did not finish"
    grep -qF -- "$want_text" "$log.err" || why="$why; no '$want_text'"
    short=$(printf '%.40s' "$spec")
    if [ -z "$why" ]; then ok "SAFEPIN_OPTIONS=$short: the program runs (exit $RC), the problem said with what is accepted"
    else no "SAFEPIN_OPTIONS=$short" "${why#; }: $(head -c 300 "$log.err")"; fi
done <<<"$BAD_OPTIONS"
echo "# badinput: $NRUNS runs ($(wc -w <<<"$cases") cases x $(wc -w <<<"$PERSONALITIES") personalities): $((NDOC + NAPI)) with a code and a diagnostic ($NDOC safepin's documented answer and its diagnostic, $NAPI the runtime's or kernel's answer unchanged with an api-error line), $NPASS with no error to report (a success or a probe's answer, unchanged, no line); $F failed"
echo "1..$N"
[ "$F" -eq 0 ]
