#!/bin/bash
# tests/diag/suppressions.sh - suppressions, gen_suppressions, the shipped
# defaults and leak_check (issue 27), on simhip (HIP) and simcuda (CUDA).
# TAP lines. The programs' registrations are made by a library of their own
# (tests/diag/supp): libsuppholder_hip.so / libsuppholder_cuda.so keep a
# buffer registered until exit, as a caching pinned allocator does.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
LIB=$(cd "$(dirname "$BUILD/libsafepin.so")" && pwd)/libsafepin.so
SIM=$(cd "$BUILD/simhip" && pwd)
SIMC=$(cd "$BUILD/simcuda" && pwd)
HIP=$BUILD/tests/diag/supp/supp_hip
CU=$BUILD/tests/diag/supp/supp_cuda
L=scripts/safepin
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

ok() { echo "ok - $1"; }
nok() { echo "not ok - $1: $2"; }
check() { if [ -z "$2" ]; then ok "$1"; else nok "$1" "${2#; }"; fi; }
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1], encoding="utf-8")); print(eval(sys.argv[2]))' "$@" 2>&1; }
# hip OPTIONS MODE / cu OPTIONS MODE: the program under safepin; output in $T/out.
hip() { SAFEPIN_OPTIONS=$1 LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 60 "$HIP" "$2" >"$T/out" 2>&1; }
cu() { SAFEPIN_OPTIONS=$1 LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIMC timeout 60 "$CU" "$2" >"$T/out" 2>&1; }
leak_lines() { grep -c "safepin: leak-at-exit: " "$T/out"; }

# ---- the program is correct bare; strict mode sees its kept registration --------
why=
for m in keep cache clean; do
    out=$(LD_LIBRARY_PATH=$SIM timeout 60 "$HIP" $m 2>&1); rc=$?
    [ $rc -eq 0 ] && [ "$out" = OK ] || why="$why; bare $m: rc $rc: $out"
done
out=$(LD_LIBRARY_PATH=$SIMC timeout 60 "$CU" keep 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$out" = OK ] || why="$why; bare cuda keep: rc $rc: $out"
check "suppressions: the programs run clean without safepin" "$why"

why=
hip "strict=1:report=$T/r0.json" keep; rc=$?
[ $rc -eq 23 ] || why="$why; exit $rc, want 23"
[ "$(leak_lines)" = 1 ] || why="$why; $(leak_lines) leak-at-exit lines"
grep -qE "#[0-9]+ 0x[0-9a-f]+ in supp_holder_keep .*\(libsuppholder_hip\.so\+0x" "$T/out" || why="$why; registered stack does not name supp_holder_keep in libsuppholder_hip.so"
[ "$(jget "$T/r0.json" 'd["violations_total"], d["suppressed_total"], d["leak_check"]')" = "(1, 0, 'strict')" ] \
    || why="$why; report: $(jget "$T/r0.json" 'd["violations_total"], d.get("suppressed_total")')"
hip "strict=1" clean; rc=$?
[ $rc -eq 0 ] || why="$why; clean mode: exit $rc"
check "suppressions: a registration kept by the program's library: strict exits 23 (HIP)" "$why"

# ---- a suppression of that library -----------------------------------------------
printf '# the holder library keeps its buffer by design\n\nleak-at-exit:libsuppholder_hip.so\n' >"$T/lib.supp"
why=
hip "strict=1:suppressions=$T/lib.supp:report=$T/r1.json" keep; rc=$?
[ $rc -eq 0 ] || why="$why; exit $rc, want 0"
[ "$(leak_lines)" = 0 ] || why="$why; the leak was printed"
[ "$(jget "$T/r1.json" 'd["violations_total"], d["codes"]["leak-at-exit"], d["suppressed_total"], d["suppressed"]')" = "(0, 0, 1, {'leak-at-exit': 1})" ] \
    || why="$why; report: $(jget "$T/r1.json" 'd["violations_total"], d["codes"]["leak-at-exit"], d.get("suppressed_total"), d.get("suppressed")')"
u=$(jget "$T/r1.json" '[(s["code"], s["pattern"], s["file"], s["line"], s["count"]) for s in d["suppressions_used"]]')
[ "$u" = "[('leak-at-exit', 'libsuppholder_hip.so', '$T/lib.supp', 3, 1)]" ] || why="$why; suppressions_used: $u"
grep -q "safepin: summary: 0 violations (1 suppressed)" "$T/out" || why="$why; no '0 violations (1 suppressed)' summary"
grep -q "safepin: summary: suppression used: 1 x leak-at-exit:libsuppholder_hip.so ($T/lib.supp:3)" "$T/out" \
    || why="$why; no 'suppression used' line"
check "suppressions: leak-at-exit:LIBRARY silences it: exit 0, counted as suppressed by pattern (text and JSON)" "$why"

# Function names, '*' as the code, globs; and patterns that must not match.
why=
for line in 'leak-at-exit:supp_holder_keep' 'leak-at-exit:supp_holder_*' '*:libsuppholder_?ip.so' \
            '  leak-at-exit : *holder_hip*  '; do
    printf '%s\n' "$line" >"$T/p.supp"
    hip "strict=1:suppressions=$T/p.supp" keep; rc=$?
    [ $rc -eq 0 ] || why="$why; '$line': exit $rc"
done
for line in 'leak-at-exit:libsuppholder' 'leak-at-exit:holder_keep' 'double-unregister:libsuppholder_hip.so' \
            'leak-at-exit:libother.so'; do
    printf '%s\n' "$line" >"$T/p.supp"
    hip "strict=1:suppressions=$T/p.supp" keep; rc=$?
    [ $rc -eq 23 ] && [ "$(leak_lines)" = 1 ] || why="$why; '$line' silenced it (exit $rc)"
done
check "suppressions: function names, '*' and globs match whole names; others do not" "$why"

# Silencing the library leaves the program's own violations reported.
why=
hip "strict=1:suppressions=$T/lib.supp:report=$T/r2.json" keep-double; rc=$?
[ $rc -eq 23 ] || why="$why; exit $rc, want 23"
[ "$(jget "$T/r2.json" 'd["violations_total"], d["codes"]["double-unregister"], d["suppressed"]')" = "(1, 1, {'leak-at-exit': 1})" ] \
    || why="$why; report: $(jget "$T/r2.json" 'd["violations_total"], d["codes"], d.get("suppressed")')"
check "suppressions: the library's leak silenced, the program's double unregister still a violation" "$why"

# Without safepin's hooks in the stack: the "at" stack of a double unregister.
printf 'double-unregister:twice\n' >"$T/fn.supp"
why=
hip "strict=1:suppressions=$T/fn.supp" double; rc=$?
[ $rc -eq 0 ] || why="$why; exit $rc"
grep -q "safepin: double-unregister:" "$T/out" && why="$why; printed"
check "suppressions: matched against where it happened (double-unregister:twice)" "$why"

# ---- gen_suppressions ---------------------------------------------------------------
why=
hip "strict=1:gen_suppressions=1" keep-double; rc=$?
[ $rc -eq 23 ] || why="$why; exit $rc"
sed -n 's/^==[0-9]*==safepin: gen-suppressions: //p' "$T/out" | sort -u >"$T/gen.supp"
[ "$(cat "$T/gen.supp")" = "$(printf 'double-unregister:supp_hip\nleak-at-exit:libsuppholder_hip.so')" ] \
    || why="$why; generated: $(cat "$T/gen.supp" | tr '\n' ' ')"
hip "strict=1:suppressions=$T/gen.supp:report=$T/r3.json" keep-double; rc=$?
[ $rc -eq 0 ] || why="$why; with the generated file: exit $rc"
[ "$(jget "$T/r3.json" 'd["violations_total"], d["suppressed_total"]')" = "(0, 2)" ] || why="$why; report: $(jget "$T/r3.json" 'd["violations_total"], d.get("suppressed_total")')"
hip "strict=1" keep-double
grep -q "gen-suppressions" "$T/out" && why="$why; printed without gen_suppressions=1"
check "gen_suppressions=1: the printed lines, put in a file, silence both violations" "$why"

# ---- malformed lines ------------------------------------------------------------------
cat >"$T/bad.supp" <<'EOF'
# comment

nocolon
bogus-code:libsuppholder_hip.so
leak-at-exit:
:libsuppholder_hip.so
	# an indented comment
leak-at-exit:libsuppholder_hip.so
EOF
why=
hip "strict=1:suppressions=$T/bad.supp" keep; rc=$?
[ $rc -eq 0 ] || why="$why; exit $rc (the good line must still apply)"
for ln in 3 4 5 6; do
    [ "$(grep -c "safepin: suppressions: $T/bad.supp:$ln: .*line ignored" "$T/out")" = 1 ] || why="$why; line $ln not reported once"
done
[ "$(grep -c "safepin: suppressions:" "$T/out")" = 4 ] || why="$why; $(grep -c "safepin: suppressions:" "$T/out") reports, want 4"
grep -q "bad.supp:4: unknown diagnostic code" "$T/out" || why="$why; no 'unknown diagnostic code'"
hip "strict=1:suppressions=$T/missing.supp" keep; rc=$?
[ $rc -eq 23 ] || why="$why; missing file: exit $rc"
grep -q "safepin: suppressions: cannot read suppressions file '$T/missing.supp'" "$T/out" || why="$why; missing file not said"
check "suppressions: malformed lines reported once with file:line and ignored; a missing file said, not fatal" "$why"

# Two files (option given twice), relative paths taken from the starting directory.
why=
printf 'leak-at-exit:libnothing.so\n' >"$T/a.supp"
out=$(cd "$T" && SAFEPIN_OPTIONS="strict=1:suppressions=a.supp:suppressions=lib.supp" LD_PRELOAD=$LIB \
      LD_LIBRARY_PATH=$SIM timeout 60 "$OLDPWD/$HIP" keep 2>&1); rc=$?
[ $rc -eq 0 ] || why="$why; exit $rc: $out"
echo "$out" | grep -q "cannot read" && why="$why; $out"
check "suppressions: the option given twice reads both files (relative to the starting directory)" "$why"

# ---- the launcher ------------------------------------------------------------------------
why=
"$L" --sim --lib "$LIB" --strict --suppressions "$T/a.supp" --suppressions="$T/lib.supp" -- "$HIP" keep >"$T/out" 2>&1; rc=$?
[ $rc -eq 0 ] || why="$why; two --suppressions: exit $rc"
"$L" --sim --lib "$LIB" --strict --suppressions "$T/a.supp" -- "$HIP" keep >"$T/out" 2>&1; rc=$?
[ $rc -eq 23 ] || why="$why; a non-matching file: exit $rc"
"$L" --sim --lib "$LIB" --gen-suppressions --leak-check report -- "$HIP" keep >"$T/out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "leak_check=report" "$T/out" || why="$why; --leak-check report: exit $rc"
out=$("$L" --suppressions /tmp/a:b -- true 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "cannot be passed" || why="$why; a path with ':': rc $rc: $out"
check "launcher: --suppressions (repeatable), --gen-suppressions, --leak-check" "$why"

# ---- leak_check -----------------------------------------------------------------------------
why=
hip "strict=1:leak_check=report:report=$T/lr.json" keep; rc=$?
[ $rc -eq 0 ] || why="$why; report: exit $rc"
grep -q "safepin: leak-at-exit: .*(leak_check=report: not a violation)" "$T/out" || why="$why; report: leak not printed as such"
grep -q "registered at" "$T/out" || why="$why; report: no stack"
[ "$(jget "$T/lr.json" 'd["violations_total"], d["codes"]["leak-at-exit"], len(d["violations"]), d["leak_check"]')" = "(0, 1, 0, 'report')" ] \
    || why="$why; report JSON: $(jget "$T/lr.json" 'd["violations_total"], d["codes"]["leak-at-exit"], len(d["violations"])')"
hip "strict=1:leak_check=off:report=$T/lo.json" keep; rc=$?
[ $rc -eq 0 ] || why="$why; off: exit $rc"
[ -s "$T/out" ] && [ "$(cat "$T/out")" != OK ] && why="$why; off: said $(grep safepin "$T/out" | head -2)"
[ "$(jget "$T/lo.json" 'd["violations_total"], d["codes"]["leak-at-exit"]')" = "(0, 0)" ] || why="$why; off JSON: $(jget "$T/lo.json" 'd["codes"]')"
hip "strict=1:leak_check=strict" keep; rc=$?
[ $rc -eq 23 ] || why="$why; strict: exit $rc"
hip "strict=1:leak_check=bogus" keep; rc=$?
[ $rc -eq 23 ] && grep -q "unknown value 'bogus' for 'leak_check' (accepted: strict, report or off), keeping strict" "$T/out" \
    || why="$why; bogus: exit $rc"
hip "strict=1:leak_check=report" keep-double; rc=$?
[ $rc -eq 23 ] || why="$why; report with another violation: exit $rc"
check "leak_check: strict (23), report (printed, counted, exit 0), off (silent, exit 0); other violations stay" "$why"

# ---- the shipped defaults ---------------------------------------------------------------------
# fake_CachingHostAllocator_allocate matches the default *CachingHostAllocator*.
why=
hip "strict=1:report=$T/d.json" cache; rc=$?
[ $rc -eq 0 ] || why="$why; defaults: exit $rc"
[ "$(leak_lines)" = 0 ] || why="$why; printed"
grep -q "safepin: summary" "$T/out" && why="$why; a summary for default suppressions alone"
u=$(jget "$T/d.json" '[(s["pattern"], s["file"], s["count"]) for s in d["suppressions_used"]]')
[ "$u" = "[('*CachingHostAllocator*', 'default', 1)]" ] || why="$why; suppressions_used: $u"
hip "strict=1:default_suppressions=0" cache; rc=$?
[ $rc -eq 23 ] && [ "$(leak_lines)" = 1 ] || why="$why; default_suppressions=0: exit $rc"
"$L" --sim --lib "$LIB" --strict --no-default-suppressions -- "$HIP" cache >"$T/out" 2>&1; rc=$?
[ $rc -eq 23 ] || why="$why; --no-default-suppressions: exit $rc"
hip "strict=1:symbolize=0" cache; rc=$?
[ $rc -eq 0 ] || why="$why; symbolize=0 (dladdr names): exit $rc"
hip "log=debug" clean
grep -q "suppressions=.*a file of CODE:PATTERN" "$T/out" || why="$why; log=debug does not list the option"
grep -q "safepin: suppressions: 2 suppressions loaded" "$T/out" || why="$why; log=debug: $(grep 'suppressions:' "$T/out")"
check "default suppressions: compiled in, matched (*CachingHostAllocator*), off with default_suppressions=0" "$why"

why=
grep -vE '^\s*(#|$)' diag/default.supp >"$T/def.lines"
[ -s "$T/def.lines" ] || why="$why; no lines"
prev=
while IFS= read -r line; do
    # every line has a comment block right above it (why it is safe)
    n=$(grep -nxF -- "$line" diag/default.supp | head -1 | cut -d: -f1)
    above=$(sed -n "$((n - 1))p" diag/default.supp)
    case "$above" in '#'*) ;; *) why="$why; '$line' has no comment above it" ;; esac
done <"$T/def.lines"
hip "strict=1" clean
grep -q "safepin: suppressions:" "$T/out" && why="$why; the defaults have malformed lines: $(grep suppressions: "$T/out")"
check "default suppressions: each line commented, none malformed" "$why"

# ---- module patterns need no symbolizer; the defaults hold whatever the options ------------------
# build/tests/diag/supp/torch/libtorch_cuda.so stands in for PyTorch's: its static (unexported)
# CUDACachingHostAllocatorImpl_allocate_slowpath registers through two frames of
# libsuppholder_hip.so (as libcudart's two stand above the register hook) and keeps the block.
why=
out=$(LD_LIBRARY_PATH=$SIM timeout 60 "$HIP" torch 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$out" = OK ] || why="$why; bare: rc $rc: $out"
for o in "" symbolize=0 backtrace=0 backtrace=1 backtrace=2 symbolize=0:backtrace=0 backtrace=64; do
    hip "strict=1:report=$T/t.json${o:+:$o}" torch; rc=$?
    [ $rc -eq 0 ] && [ "$(leak_lines)" = 0 ] || why="$why; '$o': exit $rc, $(leak_lines) leak lines"
    [ "$(jget "$T/t.json" 'd["violations_total"], d["suppressed"], d["counters"]["leaks"]')" = "(0, {'leak-at-exit': 1}, 1)" ] \
        || why="$why; '$o': report: $(jget "$T/t.json" 'd["violations_total"], d.get("suppressed")')"
done
check "default suppressions: PyTorch's stand-in (libtorch_cuda.so) silenced under symbolize=0/1 and backtrace=0/1/2/8/64" "$why"

# backtrace=0 holds the registration stack for suppressions, and shows none of it.
why=
hip "strict=1:backtrace=0:default_suppressions=0:suppressions=$T/lib.supp" keep; rc=$?
[ $rc -eq 0 ] || why="$why; leak-at-exit:libsuppholder_hip.so: exit $rc"
printf 'leak-at-exit:supp_holder_keep\n' >"$T/fk.supp"
hip "strict=1:backtrace=0:default_suppressions=0:suppressions=$T/fk.supp" keep; rc=$?
[ $rc -eq 0 ] || why="$why; leak-at-exit:supp_holder_keep: exit $rc"
hip "strict=1:backtrace=0:default_suppressions=0:report=$T/b0.json" torch; rc=$?
[ $rc -eq 23 ] && [ "$(leak_lines)" = 1 ] || why="$why; not suppressed: exit $rc, $(leak_lines) leak lines"
grep -qE "registered at \(thread|^ +#[0-9]+ 0x" "$T/out" && why="$why; backtrace=0 printed a stack: $(grep -m1 -E 'registered at \(thread|#[0-9]' "$T/out")"
[ "$(jget "$T/b0.json" '[(v["at"], v["registered"]) for v in d["violations"]]')" = "[(None, None)]" ] \
    || why="$why; backtrace=0 report has stacks: $(jget "$T/b0.json" '[(v["at"], v["registered"]) for v in d["violations"]]' | head -c 200)"
check "backtrace=0: a leak matched by module or function all the same; no stack printed or reported" "$why"

# What runs addr2line: a fake one first on PATH records the module of each run.
if A2L=$(command -v addr2line); then
    mkdir -p "$T/bin"
    printf '#!/bin/sh\nprev=\nfor a in "$@"; do [ "$prev" = -e ] && echo "${a##*/}" >>"%s"; prev=$a; done\nexec %s "$@"\n' \
        "$T/a2l.log" "$A2L" >"$T/bin/addr2line"
    chmod +x "$T/bin/addr2line"
    a2l() { rm -f "$T/a2l.log"; PATH="$T/bin:$PATH" hip "$@"; }
    runs() { [ -f "$T/a2l.log" ] && tr '\n' ' ' <"$T/a2l.log" | sed 's/ $//'; }

    why=
    a2l "strict=1" torch; rc=$?
    [ $rc -eq 0 ] || why="$why; defaults: exit $rc"
    [ -z "$(runs)" ] || why="$why; defaults: addr2line ran on: $(runs)"
    a2l "strict=1:default_suppressions=0:suppressions=$T/lib.supp" keep; rc=$?
    [ $rc -eq 0 ] || why="$why; leak-at-exit:libsuppholder_hip.so: exit $rc"
    [ -z "$(runs)" ] || why="$why; leak-at-exit:libsuppholder_hip.so: addr2line ran on: $(runs)"
    a2l "strict=1:default_suppressions=0" torch; rc=$?
    [ $rc -eq 23 ] && [ -n "$(runs)" ] || why="$why; the fake addr2line is not used (exit $rc, runs '$(runs)')"
    check "module patterns match without addr2line (the defaults, and leak-at-exit:LIBRARY.so)" "$why"

    # A function pattern symbolizes the registration stack one module at a time, innermost
    # first, until it matches: the runtime's frames, then libtorch_cuda.so; never the exit
    # path's libc nor the program.
    why=
    printf 'leak-at-exit:*CachingHostAllocator*\n' >"$T/fc.supp"
    a2l "strict=1:default_suppressions=0:suppressions=$T/fc.supp:report=$T/fc.json" torch; rc=$?
    [ $rc -eq 0 ] || why="$why; exit $rc"
    [ "$(runs)" = "libsuppholder_hip.so libtorch_cuda.so" ] || why="$why; addr2line ran on: $(runs)"
    u=$(jget "$T/fc.json" '[(s["pattern"], s["count"]) for s in d["suppressions_used"]]')
    [ "$u" = "[('*CachingHostAllocator*', 1)]" ] || why="$why; suppressions_used: $u"
    a2l "strict=1:default_suppressions=0:suppressions=$T/fc.supp:symbolize=0" torch; rc=$?
    [ $rc -eq 23 ] || why="$why; symbolize=0 matched a static function's name: exit $rc"
    [ -z "$(runs)" ] || why="$why; symbolize=0: addr2line ran on: $(runs)"
    check "function patterns: a static function matched, addr2line only on the modules up to the match" "$why"
else
    echo "ok - module patterns match without addr2line # SKIP no addr2line"
    echo "ok - function patterns: addr2line only on the modules up to the match # SKIP no addr2line"
fi

# ---- the CUDA face -------------------------------------------------------------------------------
why=
cu "strict=1:gen_suppressions=1" keep; rc=$?
[ $rc -eq 23 ] || why="$why; strict: exit $rc"
sed -n 's/^==[0-9]*==safepin: gen-suppressions: //p' "$T/out" >"$T/cu.supp"
[ "$(cat "$T/cu.supp")" = "leak-at-exit:libsuppholder_cuda.so" ] || why="$why; generated: $(cat "$T/cu.supp")"
cu "strict=1:suppressions=$T/cu.supp:report=$T/c.json" keep; rc=$?
[ $rc -eq 0 ] || why="$why; suppressed: exit $rc"
[ "$(jget "$T/c.json" 'd["violations_total"], d["suppressed"], d["runtimes"]')" = "(0, {'leak-at-exit': 1}, ['CUDA'])" ] \
    || why="$why; report: $(jget "$T/c.json" 'd["violations_total"], d.get("suppressed"), d["runtimes"]')"
cu "strict=1:leak_check=report" keep; rc=$?
[ $rc -eq 0 ] || why="$why; leak_check=report: exit $rc"
printf 'double-unregister:supp_cuda\n' >"$T/cud.supp"
cu "strict=1:suppressions=$T/cud.supp" double; rc=$?
[ $rc -eq 0 ] || why="$why; double-unregister suppressed: exit $rc"
cu "strict=1" double; rc=$?
[ $rc -eq 23 ] || why="$why; double-unregister: exit $rc"
check "suppressions on the CUDA face (simcuda): generated line silences the library's leak; leak_check=report" "$why"

# ---- safepin-smoke ---------------------------------------------------------------------------------
why=
S=scripts/safepin-smoke
out=$("$S" --sim --lib "$LIB" --junit "$T/j.xml" -- "$HIP" keep 2>&1); rc=$?
[ $rc -eq 1 ] || why="$why; no suppressions: smoke exit $rc"
out=$("$S" --sim --lib "$LIB" --junit "$T/j.xml" --suppressions "$T/lib.supp" -- "$HIP" keep 2>&1); rc=$?
[ $rc -eq 0 ] || why="$why; --suppressions: smoke exit $rc: $out"
out=$("$S" --sim --lib "$LIB" --junit "$T/j.xml" --options leak_check=report -- "$HIP" keep 2>&1); rc=$?
[ $rc -eq 0 ] || why="$why; leak_check=report: smoke exit $rc: $out"
check "safepin-smoke: --suppressions passed on; leaks under leak_check=report are not violations" "$why"

# ---- a suppressions file or report that never ends, or never opens (break-it) -----------------------
# Every process that loads the library reads suppressions= at start: a FIFO
# nobody writes, /dev/zero or a /proc file that never ends must not hold it.
# A report= FIFO nobody reads is refused at exit, not waited on.
why=
mkfifo "$T/fifo"
for f in "$T/fifo" /dev/zero /proc/self/pagemap; do
    SAFEPIN_OPTIONS="suppressions=$f" LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout -s KILL 30 "$HIP" clean >"$T/out" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -qx OK "$T/out" || why="$why; suppressions=$f: exit $rc"
    grep -qE "suppressions file '$f'( is not a regular file|: more than)" "$T/out" || why="$why; suppressions=$f: not said"
done
hip "report=$T/fifo" keep; rc=$?
[ $rc -eq 0 ] || why="$why; report= a FIFO: exit $rc"
grep -q "cannot write report '$T/fifo'" "$T/out" || why="$why; report= a FIFO: not said"
check "suppressions: a FIFO, /dev/zero or an endless /proc file is refused at once; a report FIFO too" "$why"
