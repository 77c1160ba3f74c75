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
revived                info  0 revive_grace_bytes=0:revive_grace_us=5000000 registered
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
    elif not any((vs[0].get(k) or {}).get("frames") for k in ("at", "registered", "unregistered")): print("violation has no stack")
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
# Each event once: the faulting range's, then the other recent ones.
rb=$(echo "$hist" | sed -n 's/.*\] register *\(0x[0-9a-f]*\) .*/\1/p' | head -1)
n=$(echo "$out" | grep -cE "\] register +$rb ")
[ -n "$rb" ] && [ "$n" = 1 ] || why="$why; the register of $rb is printed $n times"
if [ -z "$why" ]; then ok "post-mortem: GPU fault shows the faulting range's history"; else nok "post-mortem" "${why#; }"; echo "$out" | tail -30 | sed 's/^/# /'; fi
out=$(LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" use-after-unregister 2>&1); rc=$?
if [ $rc -eq 134 ] && ! echo "$out" | grep -q "post-mortem"; then ok "post-mortem: the same fault without safepin has none"; else nok "post-mortem without safepin" "rc=$rc"; fi

# The report on the way down: a GPU fault after a violation still leaves the
# JSON report, with the signal, the violation and its symbolized stacks.
rm -f "$T/dying.json"
out=$(SAFEPIN_OPTIONS=report=$T/dying.json LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" violation-then-fault 2>&1); rc=$?
why=""
[ $rc -eq 134 ] || why="exit $rc (want 134)"
j=$(python3 - "$T/dying.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("no report: %s" % e); sys.exit()
if d.get("signal") != 6 or d.get("exit_status") != 134: print("signal %r exit_status %r" % (d.get("signal"), d.get("exit_status")))
v = [x for x in d.get("violations", []) if x["code"] == "double-unregister"]
if not v: print("no double-unregister record")
elif not any(f["function"] == "double_unregister" and f["file"].endswith("diag_codes.c") and f["line"] > 0 for f in v[0]["at"]["frames"]):
    print("its stack is not symbolized: %s" % v[0]["at"]["frames"][:2])
PY
)
[ -n "$j" ] && why="$why; $j"
if [ -z "$why" ]; then ok "report: written on a fatal signal, with the violations' stacks"; else nok "report on a fatal signal" "${why#; }"; fi

# A correct program (its buffer's copy done, other work running) is told
# of no hazard, at any level.
out=$(SAFEPIN_OPTIONS=log=info LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" unrelated-work 2>&1); rc=$?
if [ $rc -eq 0 ] && ! echo "$out" | grep -q "hazard"; then ok "a correct program with unrelated device work is told of no hazard"
else nok "no hazard for unrelated work" "exit $rc: $(echo "$out" | grep hazard | head -2)"; fi

# A thread's SIGSEGV while main exits 0: the signal ends the process (139),
# as bare, though the post-mortem takes time to print.
why=
for i in 1 2 3 4 5; do
    LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" crash-then-exit >/dev/null 2>&1; b=$?
    LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" crash-then-exit >/dev/null 2>&1; s=$?
    [ $b -eq 139 ] && [ $s -eq 139 ] || why="$why; run $i: bare $b, safepin $s"
done
if [ -z "$why" ]; then ok "a fatal signal on one thread while main exits: 139 bare and under safepin, 5 of 5"
else nok "fatal signal while main exits" "${why#; }"; fi

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

# ---- issue 15/14: what the program sees stays the program's ----------------------
# Each check runs the program bare and under safepin where that applies.
# Stand-ins for addr2line, first on PATH: slow (A2L_DELAY seconds, then the
# real one), counting (a line per run into $A2L_COUNT), hanging.
A2L=$(command -v addr2line)
mkdir -p "$T/a2l-slow" "$T/a2l-count" "$T/a2l-hang"
printf '#!/bin/sh\nsleep "${A2L_DELAY:-0.5}"\nexec %s "$@"\n' "$A2L" >"$T/a2l-slow/addr2line"
printf '#!/bin/sh\necho run >>"$A2L_COUNT"\nexec %s "$@"\n' "$A2L" >"$T/a2l-count/addr2line"
printf '#!/bin/sh\nexec sleep 600\n' >"$T/a2l-hang/addr2line"
chmod +x "$T"/a2l-*/addr2line
ABS_SIM=$(cd "$SIM" && pwd)
ABS_LIB=$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")
ABS_PROG=$(cd "$(dirname "$PROG")" && pwd)/$(basename "$PROG")
run_sp() { LD_PRELOAD=$ABS_LIB LD_LIBRARY_PATH=$ABS_SIM timeout 60 "$@"; }
run_bare() { LD_LIBRARY_PATH=$ABS_SIM timeout 60 "$@"; }
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1], encoding="utf-8")); print(eval(sys.argv[2]))' "$@" 2>&1; }
check() { if [ -z "$2" ]; then ok "$1"; else nok "$1" "${2#; }"; fi; }

# Item 3: _exit, _Exit and quick_exit after a violation keep the report and strict mode's status.
for how in _exit _Exit quick_exit; do
    why=
    run_bare "$ABS_PROG" exit-$how >/dev/null 2>&1; rc=$?
    [ $rc -eq 0 ] || why="$why; bare exit $rc"
    rm -f "$T/x.json"
    SAFEPIN_OPTIONS="strict=1:report=$T/x.json" run_sp "$ABS_PROG" exit-$how >"$T/x.out" 2>&1; rc=$?
    [ $rc -eq 23 ] || why="$why; strict exit $rc, want 23"
    [ "$(jget "$T/x.json" 'd["codes"]["double-unregister"], d["violations_total"]')" = "(1, 1)" ] \
        || why="$why; report: $(jget "$T/x.json" 'd["violations_total"]')"
    grep -q "^OK" "$T/x.out" || why="$why; program output lost"
    check "exit: $how after a violation: report written, strict exit 23 (bare: 0)" "$why"
done

# Item 5: a forked child starts clean, with its own log and report.
for mode in fork-clean fork-violate; do
    rm -rf "$T/fk"; mkdir "$T/fk"
    why=
    out=$(run_bare "$ABS_PROG" $mode 2>&1)
    echo "$out" | grep -q "status 0$" || why="$why; bare: $out"
    out=$(SAFEPIN_OPTIONS="strict=1:report=$T/fk/r.%p.json:log_path=$T/fk/log.%p" run_sp "$ABS_PROG" $mode 2>&1); rc=$?
    cpid=$(echo "$out" | sed -n 's/^child \([0-9]*\) status.*/\1/p')
    # The parent's report is the one that is not the child's (pids wrap:
    # the child's may be the smaller).
    ppid=$(ls "$T/fk" | sed -n 's/^r\.\([0-9]*\)\.json$/\1/p' | grep -vx "$cpid" | head -1)
    [ $rc -eq 23 ] || why="$why; parent exit $rc, want 23 (its own violation)"
    [ "$(jget "$T/fk/r.$ppid.json" '[k for k,v in d["codes"].items() if v], d["violations_total"]')" = "(['double-unregister'], 1)" ] \
        || why="$why; parent report: $(jget "$T/fk/r.$ppid.json" 'd["codes"]')"
    grep -q "unregister-unknown" "$T/fk/log.$ppid" 2>/dev/null && why="$why; the child's diagnostic is in the parent's log"
    if [ $mode = fork-clean ]; then
        echo "$out" | grep -q "status 0$" || why="$why; clean child: $out (want status 0 under strict mode)"
        [ "$(jget "$T/fk/r.$cpid.json" 'd["violations_total"], d["counters"]["registrations"]')" = "(0, 1)" ] \
            || why="$why; child report: $(jget "$T/fk/r.$cpid.json" 'd["violations_total"], d["codes"]')"
        [ -e "$T/fk/log.$cpid" ] && why="$why; a child with nothing to say has a log file"
    else
        echo "$out" | grep -q "status 23$" || why="$why; child: $out (want 23: its own violation)"
        [ "$(jget "$T/fk/r.$cpid.json" '[k for k,v in d["codes"].items() if v], d["violations_total"]')" = "(['unregister-unknown'], 1)" ] \
            || why="$why; child report: $(jget "$T/fk/r.$cpid.json" 'd["codes"]')"
        grep -q "==$cpid==safepin: unregister-unknown" "$T/fk/log.$cpid" 2>/dev/null || why="$why; no child log file with its diagnostic"
        grep -q "double-unregister" "$T/fk/log.$cpid" 2>/dev/null && why="$why; the parent's diagnostic is in the child's log"
    fi
    check "fork ($mode): the child starts with no violations, its own log and report" "$why"
done

# Item 6: the program closes every descriptor, opens its own file (it gets the
# log's old number), and makes a diagnostic: safepin does not write into it.
why=
run_bare "$ABS_PROG" reuse-log-fd "$T/own" >/dev/null 2>&1 || why="$why; bare failed"
[ "$(cat "$T/own" 2>/dev/null)" = "program data" ] || why="$why; bare: own file $(head -c 200 "$T/own")"
rm -f "$T/own" "$T/lfd.log"
SAFEPIN_OPTIONS="log_path=$T/lfd.log" run_sp "$ABS_PROG" reuse-log-fd "$T/own" >"$T/lfd.out" 2>&1 || why="$why; exit $?"
[ "$(cat "$T/own" 2>/dev/null)" = "program data" ] || why="$why; the program's file holds: $(head -c 200 "$T/own")"
[ "$(grep -c "safepin: double-unregister:" "$T/lfd.log" 2>/dev/null)" = 2 ] || why="$why; log has $(grep -c "double-unregister:" "$T/lfd.log") of 2 diagnostics"
check "log: a descriptor number the program reused is not written to" "$why"

# Item 7: addr2line is never the program's child: wait() returns the
# program's own child, SIGCHLD comes once (for it), and nothing is left to wait for.
for pers in current legacy; do
    why=
    out=$(SIMHIP_PERSONALITY=$pers run_bare "$ABS_PROG" children 2>&1) || why="$why; bare: $(echo "$out" | tail -2)"
    out=$(SIMHIP_PERSONALITY=$pers run_sp "$ABS_PROG" children 2>&1); rc=$?
    [ $rc -eq 0 ] || why="$why; exit $rc: $(echo "$out" | grep "own child")"
    echo "$out" | grep -qE "#0 0x[0-9a-f]+ in twenty_diagnostics .*diag_codes\.c:[0-9]+" || why="$why; stacks not symbolized"
    check "symbolizer: addr2line invisible to wait() and SIGCHLD ($pers)" "$why"
done
why=
out=$(run_bare "$ABS_PROG" children subreaper 2>&1) || why="$why; bare: $(echo "$out" | tail -2)"
out=$(run_sp "$ABS_PROG" children subreaper 2>&1) || why="$why; exit $?: $(echo "$out" | grep "own child")"
check "symbolizer: nothing visible to a program that adopts orphans (subreaper)" "$why"

# Item 8: two GPU faults at once; a fault after ~200 events; a hung addr2line.
pm_check() { # output -> problems with the post-mortem's last range history
    local out=$1 addr hist
    echo "$out" | grep -q "safepin: end of post-mortem" || echo "no end of post-mortem"
    addr=$(echo "$out" | sed -n 's/^==[0-9]*==safepin: post-mortem: abort (signal 6) at address \(0x[0-9a-f]*\)$/\1/p' | head -1)
    [ -n "$addr" ] || echo "no post-mortem line"
    hist=$(echo "$out" | sed -n "/history of the ranges that held $addr/,\$p")
    for ev in register unregister released; do
        echo "$hist" | grep -qE "\] $ev +0x" || echo "range history lacks '$ev'"
    done
    echo "$hist" | grep -qE "^    #[0-9]+ 0x[0-9a-f]+ in .*\(diag_codes\+0x" || echo "range history has no frames"
}
why=
out=$(run_bare "$ABS_PROG" two-faults 2>&1); rc=$?
[ $rc -eq 134 ] && [ "$(echo "$out" | grep -c "Memory access fault")" -ge 1 ] || why="$why; bare: exit $rc"
echo "$out" | grep -q safepin && why="$why; bare has safepin lines"
out=$(run_sp "$ABS_PROG" two-faults 2>&1); rc=$?
[ $rc -eq 134 ] || why="$why; exit $rc"
[ "$(echo "$out" | grep -c "Memory access fault")" -eq 2 ] || why="$why; $(echo "$out" | grep -c "Memory access fault") faults, want 2"
p=$(pm_check "$out"); [ -n "$p" ] && why="$why; $(echo $p)"
check "post-mortem: two GPU faults at once give one complete report" "$why"
[ -n "$why" ] && echo "$out" | tail -20 | sed 's/^/# /'

why=
rm -f "$T/a2l.count"
out=$(PATH="$T/a2l-count:$PATH" A2L_COUNT="$T/a2l.count" run_sp "$ABS_PROG" history-fault 2>&1); rc=$?
runs=$(wc -l <"$T/a2l.count" 2>/dev/null || echo 0)
[ $rc -eq 134 ] || why="$why; exit $rc"
[ "$(echo "$out" | grep -cE "\] (register|unregister) +0x")" -ge 150 ] || why="$why; history too short"
[ "$runs" -ge 1 ] && [ "$runs" -le 8 ] || why="$why; $runs addr2line runs (want one per module: at most 8)"
echo "$out" | grep -qE "^    #0 0x[0-9a-f]+ in other_modes .*diag_codes\.c:[0-9]+" || why="$why; frames not symbolized"
p=$(pm_check "$out"); [ -n "$p" ] && why="$why; $(echo $p)"
check "post-mortem: ~200 events symbolized in one batch ($runs addr2line runs)" "$why"

# Twenty violations from twenty call sites, only the first printed
# (max_repeats=1): the report symbolizes every kept stack at exit in one
# batch, one addr2line run per module, not one per stack (a report of 200
# kept violations once took 10 s to write).
why=
out=$(run_bare "$ABS_PROG" twenty 2>&1) || why="$why; bare: $(echo "$out" | tail -2)"
rm -f "$T/a2l.count" "$T/twenty.json"
out=$(PATH="$T/a2l-count:$PATH" A2L_COUNT="$T/a2l.count" SAFEPIN_OPTIONS=max_repeats=1:report=$T/twenty.json \
      run_sp "$ABS_PROG" twenty 2>&1) || why="$why; exit $?"
runs=$(wc -l <"$T/a2l.count" 2>/dev/null || echo 0)
n=$(echo "$out" | grep "safepin: double-unregister:" | grep -vc "further reports"); [ "$n" = 1 ] || why="$why; $n diagnostics printed, want 1"
sites=$(jget "$T/twenty.json" 'len(set(v["at"]["frames"][0]["pc"] for v in d["violations"] if v["code"] == "double-unregister" and v["at"]["frames"][0]["function"] == "twenty_diagnostics" and v["at"]["frames"][0]["file"].endswith("diag_codes.c") and v["at"]["frames"][0]["line"] > 0))')
[ "$sites" = 20 ] || why="$why; $sites distinct symbolized call sites in the report, want 20"
[ "$runs" -ge 1 ] && [ "$runs" -le 10 ] || why="$why; $runs addr2line runs (want one per module for the printed diagnostic and one per module for the report: at most 10)"
check "report: twenty kept stacks symbolized in one batch ($runs addr2line runs)" "$why"

# A library unloaded, and another loaded where it was: each one's
# diagnostic names its own function in the log (the symbolizer's cache once
# answered by address alone); in the report, written at exit, the first
# one's frames have no names (its module is gone: what is loaded there now
# must not name them).
why=
PL=$(cd "$BUILD/tests/diag/plugin" 2>/dev/null && pwd)
out=$(run_bare "$ABS_PROG" reload "$PL/libreload_a.so" "$PL/libreload_b.so" 2>&1) || why="$why; bare: $(echo "$out" | tail -2)"
rm -f "$T/reload.json"
out=$(SAFEPIN_OPTIONS=report=$T/reload.json run_sp "$ABS_PROG" reload "$PL/libreload_a.so" "$PL/libreload_b.so" 2>&1) || why="$why; exit $?"
bases=$(echo "$out" | sed -n 's/^library [01] loaded at //p' | sort -u | wc -l)
for who in a b; do
    echo "$out" | grep -qE "^    #0 0x[0-9a-f]+ in unregister_in_$who .*reload\.c:[0-9]+ \(libreload_$who\.so\+" ||
        why="$why; log: no frame in unregister_in_$who of libreload_$who.so"
done
names=$(jget "$T/reload.json" '" ".join(sorted(v["at"]["frames"][0]["function"] + "@" + v["at"]["frames"][0]["module"] for v in d["violations"] if v["code"] == "double-unregister"))')
[ "$names" = "@ unregister_in_b@libreload_b.so" ] || why="$why; report names (want '@ unregister_in_b@libreload_b.so'): $names"
check "symbolizer: a library loaded where an unloaded one was gets its own names (same base: $([ "$bases" = 1 ] && echo yes || echo no))" "$why"

why=
out=$(PATH="$T/a2l-hang:$PATH" run_sp "$ABS_PROG" history-fault 2>&1); rc=$?
[ $rc -eq 134 ] || why="$why; exit $rc (124: hung)"
p=$(pm_check "$out"); [ -n "$p" ] && why="$why; $(echo $p)"
echo "$out" | grep -q "in ?? (diag_codes+0x" || why="$why; no module+offset frames"
check "post-mortem: a hung addr2line is abandoned at the deadline: module+offset" "$why"

# Item 12: option and report values.
why=
for e in 256 512 300 0 -1; do
    out=$(SAFEPIN_OPTIONS="strict=1:exitcode=$e" run_sp "$ABS_PROG" double-unregister 2>&1); rc=$?
    [ $rc -eq 23 ] || why="$why; exitcode=$e: exit $rc"
    echo "$out" | grep -q "safepin: options: .* value '$e' for 'exitcode' (accepted: an integer from 1 to 255), keeping 23" || why="$why; exitcode=$e: not reported"
done
check "options: exitcode outside 1..255 is rejected (the default 23 stays)" "$why"

why=
out=$(SAFEPIN_OPTIONS="report=/dev/full:log=error" run_sp "$ABS_PROG" double-unregister 2>&1)
echo "$out" | grep -q "safepin: report: cannot write report '/dev/full': No space left" || why="$why; /dev/full: silent"
out=$(SAFEPIN_OPTIONS="report=$T/no/such/dir/r.json:log=error" run_sp "$ABS_PROG" double-unregister 2>&1)
echo "$out" | grep -q "safepin: report: cannot write report '$T/no/such/dir/r.json'" || why="$why; missing directory: silent"
check "report: a report that cannot be written is said, even at log=error" "$why"

why=
rm -rf "$T/cd"; mkdir -p "$T/cd/sub"
(cd "$T/cd" && SAFEPIN_OPTIONS="report=rel.json:log_path=rel.log" run_sp "$ABS_PROG" chdir sub >/dev/null 2>&1) || why="$why; exit $?"
[ -f "$T/cd/rel.json" ] && [ ! -e "$T/cd/sub/rel.json" ] || why="$why; report in: $(cd "$T/cd" && find . -name 'rel.json')"
grep -q "double-unregister" "$T/cd/rel.log" 2>/dev/null || why="$why; log in: $(cd "$T/cd" && find . -name 'rel.log')"
check "options: relative report and log paths are resolved at start, not after chdir" "$why"

why=
rm -f "$T"/comma*
SAFEPIN_OPTIONS="log_path=$T/comma,a.log:log=warn" run_sp "$ABS_PROG" double-unregister >/dev/null 2>"$T/comma.err"
grep -q "double-unregister" "$T/comma,a.log" 2>/dev/null || why="$why; no log file named 'comma,a.log': $(ls "$T" | grep comma)"
grep -q "malformed option" "$T/comma.err" && why="$why; ',' split the option"
check "options: ',' is part of a value, not a separator" "$why"

why=
mkdir -p "$T/u8"; U8="$T/u8/prog"$'\xe9\xff'; cp "$ABS_PROG" "$U8"
SAFEPIN_OPTIONS="report=$T/u8/r.json" run_sp "$U8" double-unregister >/dev/null 2>&1 || why="$why; exit $?"
m=$(jget "$T/u8/r.json" 'd["violations"][0]["at"]["frames"][0]["module"]')
[ "$m" = "progéÿ" ] || why="$why; report: $m"
check "report: a non-UTF-8 program path is escaped (valid JSON)" "$why"

why=
for pers in current legacy; do
    SIMHIP_PERSONALITY=$pers SAFEPIN_OPTIONS="report=$T/rt.json" run_sp "$ABS_PROG" runtime-error >/dev/null 2>&1
    r=$(jget "$T/rt.json" 'd["counters"]["runtime_errors"] == d["codes"]["runtime-error"] >= 1')
    [ "$r" = True ] || why="$why; $pers: $(jget "$T/rt.json" 'd["counters"]["runtime_errors"], d["codes"]["runtime-error"]')"
done
check "report: runtime errors counted once in codes and counters" "$why"

why=
rm -rf "$T/lazy"; mkdir "$T/lazy"
SAFEPIN_OPTIONS="log_path=$T/lazy/log.%p" run_sp sh -c 'ls / >/dev/null; cat </dev/null; true'
SAFEPIN_OPTIONS="log_path=$T/lazy/log.%p" run_sp "$ABS_PROG" nested-register >/dev/null
n=$(ls "$T/lazy" | wc -l)
[ "$n" -eq 0 ] || why="$why; $n log files for processes that said nothing"
SAFEPIN_OPTIONS="log_path=$T/lazy/log.%p" run_sp "$ABS_PROG" double-unregister >/dev/null
[ "$(ls "$T/lazy" | wc -l)" -eq 1 ] || why="$why; no log file for a process with a diagnostic"
check "log: opened when first written (sh, ls, cat create no log file)" "$why"

# Item 13: the launcher's usage errors and causes.
why=
mkdir -p "$T/lcwd"
for args in "--exitcode" "--report" "--log-file" "--lib"; do
    out=$(cd "$T/lcwd" && "$OLDPWD/$L" $args 2>&1); rc=$?
    [ $rc -eq 2 ] && echo "$out" | grep -q "^safepin: option '$args' needs a value" || why="$why; '$args' alone: rc $rc: $out"
done
out=$(cd "$T/lcwd" && "$OLDPWD/$L" --report -- true 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "needs a value, not '--'" || why="$why; --report --: rc $rc: $out"
[ -e "$T/lcwd/--" ] && why="$why; a file named '--' was written"
out=$("$L" --exitcode 256 -- true 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "1 to 255" || why="$why; --exitcode 256: rc $rc: $out"
out=$("$L" --lib /nope.so -- true 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "^safepin: --lib /nope.so: no such file" || why="$why; --lib /nope.so: rc $rc: $out"
check "launcher: missing values, '--' as a value, a wrong --lib: clear errors" "$why"

# Issue 14, item 4: a thread cancelled while its diagnostic is symbolized
# (read/poll/waitpid are cancellation points) leaves no lock held.
why=
out=$(PATH="$T/a2l-slow:$PATH" A2L_DELAY=0.5 run_bare "$ABS_PROG" cancel 2>&1) || why="$why; bare: $out"
out=$(PATH="$T/a2l-slow:$PATH" A2L_DELAY=0.5 run_sp "$ABS_PROG" cancel 2>&1); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "^OK" || why="$why; exit $rc (124: hung)"
check "cancel: a thread cancelled during symbolization leaves no lock held" "$why"

# Issue 14, item 5: children forked while diagnostics are symbolized hold
# none of the symbolizer's pipes, make diagnostics of their own, and never
# stall the parent.
why=
out=$(PATH="$T/a2l-slow:$PATH" A2L_DELAY=0.05 run_bare "$ABS_PROG" fork-symbolize 2>&1) || why="$why; bare: $(echo "$out" | tail -2)"
out=$(PATH="$T/a2l-slow:$PATH" A2L_DELAY=0.05 run_sp "$ABS_PROG" fork-symbolize 2>&1); rc=$?
[ $rc -eq 0 ] || why="$why; exit $rc: $(echo "$out" | grep children)"
[ "$(echo "$out" | grep -c "safepin: unregister-unknown")" -ge 40 ] || why="$why; children's diagnostics missing"
check "fork: during symbolization, no pipe leaks into the child and no lock blocks it" "$why"

# Issue 21 (break-it): report= without %p, a parent and its forked child
# that both have something to say and finish close together: the file is
# one whole report (written aside and renamed), never two interleaved.
why=
for i in 1 2 3; do
    rm -f "$T/fork-report.json"
    SAFEPIN_OPTIONS="report=$T/fork-report.json:log=error:summary=0" \
        LD_PRELOAD="$LIB" LD_LIBRARY_PATH="$BUILD/simhip" timeout 60 \
        "$BUILD/tests/legacy/fork_pending_child" >/dev/null 2>&1 || why="$why; run $i: exit $?"
    python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/fork-report.json" 2>/dev/null ||
        why="$why; run $i: the report is not one JSON document"
    ls "$T"/fork-report.json.*.tmp >/dev/null 2>&1 && why="$why; run $i: a temporary file was left"
done
check "report: a parent and its forked child write report= (no %p): one whole report" "$why"

# ---- how a run ends: exit paths, the drain before teardown, dlclose ------------
bash tests/diag/lifetime.sh

# ---- suppressions, gen_suppressions, default suppressions, leak_check (issue 27) ----
bash tests/diag/suppressions.sh

# ---- every frame at the line of its call, per code (issue 37) ----
bash tests/diag/lines.sh

# ---- what safepin prevented, named (issue 37) ----
bash tests/diag/hazards.sh
