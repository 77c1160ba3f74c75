#!/bin/bash
# tests/diag/run.sh - every diagnostic code, the report, strict mode and the
# launcher, end to end on simhip. TAP lines.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
LIB=$BUILD/libsafepin.so
SIM=$BUILD/simhip
PROG=$BUILD/tests/diag/diag_codes
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

ok() { echo "ok - $1"; }
nok() { echo "not ok - $1: $2"; }

# code  level-needed  is-violation  extra-options  stack-kind
CODES='
double-unregister      warn  1 -                       at
unregister-unknown     warn  1 -                       at
unregister-interior    warn  1 -                       registered
overlapping-register   warn  1 -                       registered
nested-register        info  0 -                       registered
freed-while-registered warn  1 -                       registered
hipfree-host-pointer   warn  1 -                       registered
leak-at-exit           warn  1 -                       registered
capture-deferred       info  0 -                       -
release-timeout        warn  1 drain_timeout_ms=200:unregister=async registered
runtime-error          warn  1 -                       registered
invalid-argument       warn  1 -                       at
'

json_check() { # file code violation -> prints problems, empty when fine
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
path, code, viol = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
try:
    r = json.load(open(path))
except Exception as e:
    print("report not valid JSON: %s" % e); sys.exit()
if r.get("tool") != "safepin": print("no tool field")
if r.get("codes", {}).get(code, 0) < 1: print("codes[%s] is %r" % (code, r.get("codes", {}).get(code)))
vs = [v for v in r.get("violations", []) if v.get("code") == code]
if viol:
    if not vs: print("no violation record for %s" % code)
    elif not vs[0].get("at") or not vs[0]["at"].get("frames"): print("violation has no stack")
    if r.get("violations_total", 0) < 1: print("violations_total is 0")
else:
    if vs: print("%s recorded as a violation" % code)
for k in ("registrations", "releases_completed", "deferred_frees", "leaks"):
    if k not in r.get("counters", {}): print("counter %s missing" % k)
PY
}

while read -r code level viol extra stack; do
    [ -z "$code" ] && continue
    opts="report=$T/$code.json:log=$level"
    [ "$extra" != "-" ] && opts="$opts:$extra"
    out=$(SAFEPIN_OPTIONS=$opts LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" "$code" 2>&1)
    rc=$?
    why=""
    [ $rc -ne 0 ] && why="exit $rc"
    echo "$out" | grep -qE "^==[0-9]+==safepin: $code: " || why="$why; no '==PID==safepin: $code:' line"
    if [ "$stack" = registered ]; then
        echo "$out" | grep -q "registered at (thread" || why="$why; no 'registered at' stack"
    elif [ "$stack" = at ]; then
        echo "$out" | grep -qE "^    #0 0x[0-9a-f]+ in " || why="$why; no stack frames"
    fi
    if [ "$stack" != - ]; then
        echo "$out" | grep -qE "#[0-9]+ 0x[0-9a-f]+ in main .*diag_codes\.c:[0-9]+.* \(diag_codes\+0x" || why="$why; stack does not name main at diag_codes.c:LINE"
    fi
    j=$(json_check "$T/$code.json" "$code" "$viol")
    [ -n "$j" ] && why="$why; json: $j"
    if [ -z "$why" ]; then ok "diag $code: text and JSON"; else nok "diag $code" "${why#; }"; echo "$out" | head -30 | sed 's/^/# /'; fi
done <<< "$CODES"

# Without safepin the same program gets no diagnostics at all (the codes come from safepin).
out=$(LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" unregister-unknown 2>&1)
if echo "$out" | grep -q "safepin:"; then nok "no diagnostics without safepin" "$out"; else ok "no diagnostics without safepin"; fi

# ---- strict mode -------------------------------------------------------
SAFEPIN_OPTIONS=strict=1 LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" double-unregister >/dev/null 2>&1
rc=$?; [ $rc -eq 23 ] && ok "strict: violation -> exit 23" || nok "strict: violation -> exit 23" "exit $rc"
SAFEPIN_OPTIONS=strict=1:exitcode=42 LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" leak-at-exit >/dev/null 2>&1
rc=$?; [ $rc -eq 42 ] && ok "strict: exitcode option" || nok "strict: exitcode option" "exit $rc"
SAFEPIN_OPTIONS=strict=1 LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" nested-register >/dev/null 2>&1
rc=$?; [ $rc -eq 0 ] && ok "strict: info codes are not violations" || nok "strict: info codes are not violations" "exit $rc"
SAFEPIN_OPTIONS=strict=1 LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" no-such-mode >/dev/null 2>&1
rc=$?; [ $rc -eq 2 ] && ok "strict: the program's own failure status is kept" || nok "strict: own status kept" "exit $rc"

# ---- options -----------------------------------------------------------
out=$(SAFEPIN_OPTIONS="bogus=1:log=debug:revive" LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" nested-register 2>&1)
rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "unknown option 'bogus'" && echo "$out" | grep -q "malformed option 'revive'" \
   && echo "$out" | grep -q "drain_timeout_ms=10000"; then
    ok "options: unknown/malformed reported, not fatal; log=debug prints effective options"
else nok "options" "rc=$rc $(echo "$out" | head -5)"; fi
SAFEPIN_OPTIONS="log_path=$T/log.%p" LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" double-unregister >/dev/null 2>"$T/stderr"
if ls "$T"/log.* >/dev/null 2>&1 && grep -q "double-unregister" "$T"/log.* && ! grep -q safepin "$T/stderr"; then
    ok "options: log_path with %p"
else nok "options: log_path" "$(ls "$T")"; fi

# ---- launcher ----------------------------------------------------------
L=scripts/safepin
$L --help | grep -q "usage: safepin" && ok "launcher --help" || nok "launcher --help" ""
$L --version | grep -qE "^safepin [0-9]+\.[0-9]+" && ok "launcher --version" || nok "launcher --version" ""
$L --sim --strict -- "$PROG" double-unregister >/dev/null 2>&1; rc=$?
[ $rc -eq 23 ] && ok "launcher --sim --strict" || nok "launcher --sim --strict" "exit $rc"
$L --sim -- "$PROG" no-such-mode >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok "launcher passes the exit status through" || nok "launcher exit status" "exit $rc"
$L --sim --report "$T/l.json" --log info -- "$PROG" nested-register >"$T/l.out" 2>&1
if [ -s "$T/l.json" ] && grep -q "nested-register" "$T/l.out"; then ok "launcher --report --log"; else nok "launcher --report --log" "$(head -3 "$T/l.out")"; fi
out=$(LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6 $L --sim -- sh -c 'echo "$LD_PRELOAD"')
case "$out" in /lib/x86_64-linux-gnu/libm.so.6:*libsafepin.so) ok "launcher appends to LD_PRELOAD";; *) nok "launcher appends to LD_PRELOAD" "$out";; esac
rm -rf "$T/inst"
if make -s install PREFIX="$T/inst" >/dev/null 2>&1 && [ -x "$T/inst/bin/safepin" ] && [ -f "$T/inst/lib/libsafepin.so" ] \
   && [ -f "$T/inst/share/man/man1/safepin.1" ]; then
    out=$("$T/inst/bin/safepin" -- sh -c 'echo "$LD_PRELOAD"')
    case "$out" in "$T/inst/lib/libsafepin.so") ok "make install; installed launcher finds its library";; *) nok "installed launcher" "$out";; esac
else nok "make install" "missing files"; fi

# ---- reach: dlopen + dlsym(handle), as Python ctypes does ---------------------
R=$BUILD/tests/reach/dlopen_reach
for how in dlsym procaddr; do
    arg=""; [ $how = procaddr ] && arg=procaddr
    out=$(SIMHIP_PERSONALITY=legacy LD_LIBRARY_PATH=$SIM timeout 30 "$R" $arg 2>&1); rc=$?
    if [ $rc -eq 134 ] && echo "$out" | grep -q "Memory access fault by GPU node-1"; then
        ok "reach ($how): without safepin, the program faults (legacy runtime)"
    else nok "reach ($how): hazard without safepin" "rc=$rc $(echo "$out" | tail -2)"; fi
    for pers in legacy current; do
        out=$(SIMHIP_PERSONALITY=$pers LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$R" $arg 2>&1); rc=$?
        if [ $rc -eq 0 ] && echo "$out" | grep -q "^OK" && ! echo "$out" | grep -q "Memory access fault"; then
            ok "reach ($how): with safepin, the same safety ($pers)"
        else nok "reach ($how): with safepin ($pers)" "rc=$rc $(echo "$out" | tail -3)"; fi
    done
done
# RTLD_NEXT keeps its meaning through safepin's dlsym
out=$(LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" nested-register 2>&1); rc=$?
[ $rc -eq 0 ] && ok "reach: programs using dlsym(RTLD_DEFAULT) still work" || nok "reach: RTLD_DEFAULT" "rc=$rc"

# ---- post-mortem ------------------------------------------------------------
out=$(LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" use-after-unregister 2>&1); rc=$?
addr=$(echo "$out" | sed -n 's/.*Memory access fault by GPU node-1 .* on address \(0x[0-9a-f]*\)\..*/\1/p' | head -1)
why=""
[ $rc -eq 134 ] || why="exit $rc (want death by SIGABRT, chained to the default action)"
[ -n "$addr" ] || why="$why; no fault line"
pm=$(echo "$out" | sed -n 's/^==[0-9]*==safepin: post-mortem: abort (signal 6) at address \(0x[0-9a-f]*\)$/\1/p')
[ -n "$pm" ] || why="$why; no post-mortem line with the fault address"
# simhip prints the page; the post-mortem names the exact byte, on that page
[ -n "$pm" ] && [ -n "$addr" ] && [ $(( pm & ~4095 )) -eq $(( addr )) ] || why="$why; post-mortem address $pm not on the faulting page $addr"
addr=$pm
echo "$out" | grep -q "recent registration history" || why="$why; no recent history"
hist=$(echo "$out" | sed -n "/history of the ranges that held $addr/,\$p")
for ev in register unregister released; do
    echo "$hist" | grep -qE "\] $ev +0x" || why="$why; range history lacks '$ev'"
done
echo "$hist" | grep -q "in main .*diag_codes" 2>/dev/null || echo "$hist" | grep -q "(diag_codes+0x" || why="$why; range history has no stack into diag_codes"
if [ -z "$why" ]; then ok "post-mortem: GPU fault shows the faulting range's history"; else nok "post-mortem" "${why#; }"; echo "$out" | tail -30 | sed 's/^/# /'; fi
out=$(LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" use-after-unregister 2>&1); rc=$?
if [ $rc -eq 134 ] && ! echo "$out" | grep -q "post-mortem"; then ok "post-mortem: the same fault without safepin has none"; else nok "post-mortem without safepin" "rc=$rc"; fi

# ---- a diagnostic printed inside a hook allocates nothing ----------------------
# log_noalloc counts every malloc/calloc/realloc of its thread (libc's own
# included) around a double unregister whose stacks are symbolized by addr2line.
NA=$BUILD/tests/diag/log_noalloc
out=$(LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$NA" 2>&1); rc=$?
cnt=$(echo "$out" | sed -n 's/^counter check: //p')
n=$(echo "$out" | sed -n 's/^allocations=//p')
why=
[ $rc -eq 0 ] || why="$why; exit $rc"
[ -n "$cnt" ] && [ "$cnt" -gt 0 ] || why="$why; the counter did not see libc's allocations ($cnt)"
echo "$out" | grep -q "safepin: double-unregister" || why="$why; no double-unregister diagnostic"
echo "$out" | grep -qE "#0 0x[0-9a-f]+ in main .*log_noalloc\.c:[0-9]+" || why="$why; stack not symbolized to file:line"
[ "$n" = 0 ] || why="$why; $n allocations while printing"
if [ -z "$why" ]; then ok "a symbolized diagnostic from a hook allocates nothing"
else nok "diagnostic allocates nothing" "${why#; }"; fi
