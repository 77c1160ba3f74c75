#!/bin/bash
# tests/smoke/run.sh - scripts/safepin-smoke, end to end, on the legacy
# programs (HIP on simhip, CUDA driver-API ones on simcuda, both by --sim). Prints TAP lines ("ok - ..." / "not ok - ...: why").
#
#   BUILD=build                      where the programs, simhip and the library are
#   SAFEPIN_LIB=$BUILD/libsafepin.so the library under test
#
# Runs the smoke runner with -j 2 on a list of clean programs, programs with
# violations (also ones that fork a clean child, or end through _exit,
# quick_exit or a raw exit system call), one that exits nonzero, one that
# crashes and one that hangs (--timeout 2; both: violations "unknown"), then
# checks the table, the statuses, the violation counts, the exit status and
# the JUnit XML. Options that do not parse (SAFEPIN_OPTIONS, a list line's,
# --options, --log) are refused before anything runs; the launcher refuses
# words its flags do not take. Takes a few seconds.
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
BUILD=${BUILD:-build}
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "not ok - smoke: no build directory '$BUILD'"; exit 1; }
SAFEPIN_LIB=${SAFEPIN_LIB:-$BUILD/libsafepin.so}
SMOKE="$ROOT/scripts/safepin-smoke"
L="$BUILD/tests/legacy"
LC="$BUILD/tests/legacy-cuda"

FAILS=0
ok()     { echo "ok - $1"; }
not_ok() { echo "not ok - $1: $2"; FAILS=$((FAILS+1)); }
check()  { # name why command...
    local name=$1 why=$2; shift 2
    if "$@"; then ok "$name"; else not_ok "$name" "$why"; fi
}

for f in "$SMOKE" "$SAFEPIN_LIB" "$BUILD/simhip/libamdhip64.so.5" "$BUILD/simcuda/libcuda.so.1" \
         "$L/double_unregister" "$LC/stale_reuse"; do
    if [ ! -e "$f" ]; then
        echo "not ok - smoke: missing $f (make all)"
        exit 1
    fi
done

TMP=$(mktemp -d /tmp/safepin-smoke-test.XXXXXX)
trap 'bg=$(cat "$TMP/bg.pid" 2>/dev/null); [ -n "$bg" ] && kill "$bg" 2>/dev/null; rm -rf "$TMP"' EXIT

# The launcher's --sim finds build/simhip and build/simcuda next to itself;
# for another BUILD, point LD_LIBRARY_PATH at that build's instead.
SIMARGS=(--sim)
if [ "$BUILD" != "$(cd "$ROOT/build" 2>/dev/null && pwd)" ]; then
    SIMARGS=()
    export LD_LIBRARY_PATH="$BUILD/simhip:$BUILD/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# ---------------------------------------------------------------------------
# The list: command line, then the expected status, violation count ("+": at
# least one) and codes column.
EXPECT=(
"$L/unreg_busy_stream|pass|0|-"
"$L/reregister_larger|pass|0|-"
"$L/capture_unregister|pass|0|-"
"SIMHIP_PERSONALITY=legacy $L/unreg_free_reuse|pass|0|-"
"$BUILD/tests/diag/diag_codes nested-register|pass|0|-"
"$L/double_unregister|violations|+|double-unregister"
"$L/interior_unregister|violations|3|unregister-interior,unregister-unknown"
"$L/hipfree_host_ptr|violations|1|hipfree-host-pointer"
"$L/leak_at_exit|violations|1|leak-at-exit"
"$L/stale_free|violations|1|freed-while-registered"
"$L/stale_munmap|violations|1|freed-while-registered"
"$L/bad_args|violations|3|invalid-argument"
"$LC/identical_reregister|pass|0|-"
"$LC/stale_reuse|violations|+|freed-while-registered"
"$BUILD/tests/diag/diag_codes fork-clean|violations|1|double-unregister"
"$BUILD/tests/diag/diag_codes exit-_exit|violations|1|double-unregister"
"$BUILD/tests/diag/diag_codes exit-quick_exit|violations|1|double-unregister"
"$BUILD/tests/diag/diag_codes exit-group|violations|1|double-unregister"
"sh -c 'echo smoke-boom >&2; exit 3'|failed(exit 3)|0|-"
"sh -c 'kill -SEGV \$\$'|crashed(SIGSEGV)|unknown|-"
"sh -c 'sleep 30 & echo \$! > $TMP/bg.pid; sleep 30'|timeout|unknown|-"
)
{
    echo "# safepin-smoke test list (comments and blank lines are ignored)"
    echo
    for e in "${EXPECT[@]}"; do
        echo "${e%%|*}   # expect ${e#*|}"
    done
    echo "   # a line with only a comment"
} >"$TMP/list"

start=$(date +%s)
(cd "$TMP" && "$SMOKE" -q -j 2 --timeout 2 --lib "$SAFEPIN_LIB" "${SIMARGS[@]}" \
    --list "$TMP/list" --junit "$TMP/out.xml") >"$TMP/stdout" 2>"$TMP/stderr"
rc=$?
elapsed=$(( $(date +%s) - start ))

check "smoke: exit status 1 when some program did not pass" "exit status $rc" [ "$rc" -eq 1 ]
check "smoke: finishes quickly (-j 2, --timeout 2)" "took ${elapsed}s" [ "$elapsed" -le 20 ]
check "smoke: table header" "$(head -1 "$TMP/stdout")" \
    grep -qE '^PROGRAM +STATUS +VIOLATIONS +TIME +CODES$' "$TMP/stdout"
nrows=$(grep -cE ' [0-9]+\.[0-9]{2}s ' "$TMP/stdout")
check "smoke: one table row per program" "$nrows rows for ${#EXPECT[@]} programs" \
    [ "$nrows" -eq "${#EXPECT[@]}" ]

# Each row: name (the command line as shlex would join it), status,
# violations, time, codes.
python3 - "$TMP/stdout" "$TMP/list" "${EXPECT[@]}" >"$TMP/rows.tap" <<'EOF'
import re, shlex, sys
out = open(sys.argv[1]).read().splitlines()
for e in sys.argv[3:]:
    cmd, status, nviol, codes = e.split("|")
    name = shlex.join(shlex.split(cmd))
    short = shlex.split(cmd)[-1] if "sh -c" in cmd else cmd.split("/")[-1]
    rows = [l for l in out if l.startswith(name + " ")]
    if len(rows) != 1:
        print("not ok - smoke row %s: %d rows start with the command line" % (short, len(rows)))
        continue
    m = re.match(r"^(.*?) +(pass|violations|failed\(exit \d+\)|crashed\(\w+\)|timeout) +(\d+\+?|unknown) +(\d+\.\d\d)s +(\S+)$", rows[0])
    if not m:
        print("not ok - smoke row %s: unparsable row %r" % (short, rows[0]))
        continue
    got_name, got_status, got_n, got_t, got_codes = m.groups()
    why = []
    if got_name != name: why.append("name %r" % got_name)
    if got_status != status: why.append("status %s, want %s" % (got_status, status))
    if nviol == "+":
        if not got_n.isdigit() or int(got_n) < 1: why.append("violations %s, want >= 1" % got_n)
    elif got_n != nviol: why.append("violations %s, want %s" % (got_n, nviol))
    if got_codes != codes: why.append("codes %s, want %s" % (got_codes, codes))
    if status == "timeout" and not (1.9 <= float(got_t) < 10):
        why.append("time %ss for a 2s timeout" % got_t)
    if why:
        print("not ok - smoke row %s: %s" % (short, "; ".join(why)))
    else:
        print("ok - smoke row %s: %s, %s violations" % (short, got_status, got_n))
EOF
cat "$TMP/rows.tap"
FAILS=$((FAILS + $(grep -c '^not ok' "$TMP/rows.tap")))

check "smoke: summary line" "$(grep '^safepin-smoke: [0-9]* programs' "$TMP/stdout")" \
    grep -qx "safepin-smoke: 21 programs: 6 passed, 12 with violations, 1 failed, 1 crashed, 1 timed out ([0-9.]*s)" "$TMP/stdout"

# The timeout killed the whole process group, the background child too
# (dead: gone, or a zombie where init does not reap).
sleep 0.2
bg=$(cat "$TMP/bg.pid" 2>/dev/null)
gone() { [ -n "$1" ] && { ! kill -0 "$1" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }; }
check "smoke: timeout kills the process group" "background child ${bg:-?} still alive" gone "$bg"

# ---------------------------------------------------------------------------
# JUnit XML
python3 - "$TMP/out.xml" "${EXPECT[@]}" >"$TMP/xml.tap" <<'EOF'
import shlex, sys
import xml.etree.ElementTree as ET
def res(ok, name, why=""):
    print(("ok - %s" % name) if ok else ("not ok - %s: %s" % (name, why)))
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception as e:
    res(False, "smoke junit: parses", str(e)); sys.exit(0)
res(True, "smoke junit: parses")
exp = [e.split("|") for e in sys.argv[2:]]
names = [shlex.join(shlex.split(e[0])) for e in exp]
want = {"tests": len(exp),
        "failures": sum(1 for e in exp if e[1] == "violations" or e[1].startswith("failed")),
        "errors": sum(1 for e in exp if e[1] in ("timeout",) or e[1].startswith("crashed"))}
res(root.tag == "testsuite" and root.get("name") == "safepin-smoke",
    "smoke junit: one testsuite named safepin-smoke", "root <%s name=%r>" % (root.tag, root.get("name")))
got = {k: int(root.get(k, "-1")) for k in want}
res(got == want, "smoke junit: tests/failures/errors counts", "got %s, want %s" % (got, want))
cases = root.findall("testcase")
res([c.get("name") for c in cases] == names, "smoke junit: testcase names are the command lines",
    "got %s" % [c.get("name") for c in cases])
res(all(c.get("classname") == "safepin-smoke" for c in cases), "smoke junit: classname safepin-smoke")
try:
    ok = all(float(c.get("time")) >= 0 for c in cases) and float(root.get("time")) >= 0
except (TypeError, ValueError):
    ok = False
res(ok, "smoke junit: time attributes", "missing or not numbers")
bad = []
for c, (cmd, status, n, codes) in zip(cases, exp):
    f, e = c.find("failure"), c.find("error")
    if status == "pass":
        if f is not None or e is not None: bad.append("%s: failure/error on a pass" % cmd)
    elif status == "violations":
        if f is None or e is not None: bad.append("%s: want <failure>" % cmd); continue
        for code in codes.split(","):
            if code not in f.get("message", "") or code + ": " not in (f.text or ""):
                bad.append("%s: code %s not in the failure" % (cmd, code))
    elif status.startswith("failed"):
        if f is None or "3" not in f.get("message", ""): bad.append("%s: want <failure> with the status" % cmd)
    else:
        if e is None: bad.append("%s: want <error>" % cmd)
        elif status == "timeout" and "timed out" not in e.get("message", ""): bad.append("%s: error message %r" % (cmd, e.get("message")))
        elif status.startswith("crashed") and "SIGSEGV" not in e.get("message", ""): bad.append("%s: error message %r" % (cmd, e.get("message")))
res(not bad, "smoke junit: failure/error elements match the statuses", "; ".join(bad))
se = {c.get("name"): (c.findtext("system-err") or "") for c in cases}
boom = [n for n in names if "smoke-boom" in n][0]
res("smoke-boom" in se[boom], "smoke junit: system-err holds the program's stderr", repr(se[boom][-200:]))
du = [n for n in names if n.endswith("/double_unregister")][0]
res("double-unregister" in se[du], "smoke junit: system-err holds safepin's diagnostics", repr(se[du][-200:]))
EOF
cat "$TMP/xml.tap"
FAILS=$((FAILS + $(grep -c '^not ok' "$TMP/xml.tap")))

# ---------------------------------------------------------------------------
# Programs as arguments, all clean: exit 0, JUnit XML in the cwd by default.
mkdir -p "$TMP/cwd"
(cd "$TMP/cwd" && "$SMOKE" -q -j 2 --lib "$SAFEPIN_LIB" "${SIMARGS[@]}" -- \
    "$L/unreg_busy_stream" -- "$BUILD/tests/diag/diag_codes" capture-deferred) \
    >"$TMP/stdout2" 2>&1
rc=$?
check "smoke: all clean programs: exit 0" "exit status $rc: $(tail -3 "$TMP/stdout2")" [ "$rc" -eq 0 ]
check "smoke: programs with arguments from the command line" "$(cat "$TMP/stdout2")" \
    grep -qE "^$BUILD/tests/diag/diag_codes capture-deferred +pass +0 " "$TMP/stdout2"
check "smoke: default JUnit file in the cwd" "no $TMP/cwd/safepin-smoke.xml" \
    python3 -c "import sys, xml.etree.ElementTree as E; r=E.parse(sys.argv[1]).getroot(); sys.exit(r.get('tests')!='2' or r.get('failures')!='0' or r.get('errors')!='0')" \
    "$TMP/cwd/safepin-smoke.xml"

# Usage: --help is 0, no programs / unknown option is 2.
"$SMOKE" --help >"$TMP/help" 2>&1; rc=$?
check "smoke: --help" "exit $rc" eval "[ $rc -eq 0 ] && grep -q -- '--timeout' '$TMP/help'"
"$SMOKE" >/dev/null 2>&1; rc=$?
check "smoke: no programs is a usage error" "exit $rc" [ "$rc" -eq 2 ]
"$SMOKE" --no-such-option x >/dev/null 2>&1; rc=$?
check "smoke: unknown option is a usage error" "exit $rc" [ "$rc" -eq 2 ]

# Found by trying to break the package: a library the loader would skip
# (a path with a space, a file that is not ELF) is refused, never run
# unprotected; the runner works through a symlink and has --version.
mkdir -p "$TMP/sp ace" "$TMP/lnk"
cp "$BUILD/libsafepin.so" "$TMP/sp ace/libsafepin.so"
scripts/safepin --lib "$TMP/sp ace/libsafepin.so" true >"$TMP/sp.out" 2>&1; rc=$?
check "launcher: a library path with a space is refused" "exit $rc" eval "[ $rc -eq 2 ] && grep -q 'space or a colon' '$TMP/sp.out'"
for flag in --report --log-file; do
    scripts/safepin --sim $flag "$TMP/a:b" -- true >"$TMP/sp.out" 2>&1; rc=$?
    check "launcher: a $flag path with a ':' is refused (SAFEPIN_OPTIONS splits there)" "exit $rc" \
        eval "[ $rc -eq 2 ] && grep -q \"a path with a ':'\" '$TMP/sp.out' && [ ! -e '$TMP/a' ]"
done
scripts/safepin --lib /etc/passwd true >"$TMP/sp.out" 2>&1; rc=$?
check "launcher: a --lib that is not a shared library is refused" "exit $rc" eval "[ $rc -eq 2 ] && grep -q 'not a shared library' '$TMP/sp.out'"
ln -sf "$SMOKE" "$TMP/lnk/safepin-smoke"
"$TMP/lnk/safepin-smoke" --version >"$TMP/ver" 2>&1; rc=$?
want_ver="safepin-smoke $(cat VERSION)"
check "smoke: --version through a symlink" "exit $rc: $(head -c 200 "$TMP/ver")" eval "[ $rc -eq 0 ] && grep -qx '$want_ver' '$TMP/ver'"

# ---------------------------------------------------------------------------
# Options that do not parse: refused (exit 2) before any program runs, with
# the library's words (the accepted keys, the nearest one); no JUnit file.
refused() { # name env-words... -- smoke-args...: must exit 2, run nothing
    local name=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    rm -f "$TMP/ran" "$TMP/refused.xml"
    (cd "$TMP" && env "${envs[@]}" "$SMOKE" -q --lib "$SAFEPIN_LIB" "${SIMARGS[@]}" --junit "$TMP/refused.xml" "$@") \
        >"$TMP/refused.out" 2>&1
    local rc=$? why=""
    [ $rc -eq 2 ] || why="exit $rc"
    [ -e "$TMP/ran" ] && why="$why, a program ran"
    [ -e "$TMP/refused.xml" ] && why="$why, a JUnit file was written"
    grep -q "safepin-smoke: the options do not parse" "$TMP/refused.out" || why="$why, no refusal line"
    for want in "${WANT[@]}"; do grep -qF -- "$want" "$TMP/refused.out" || why="$why, no '$want'"; done
    if [ -z "$why" ]; then ok "smoke: $name: refused (exit 2), nothing run"
    else not_ok "smoke: $name: refused before anything runs" "${why#, }: $(head -c 300 "$TMP/refused.out")"; fi
}
RAN="sh -c 'touch $TMP/ran'"
WANT=("unknown option 'strcit' ignored: did you mean 'strict'?" "accepted keys: log, log_path, strict,")
refused "SAFEPIN_OPTIONS=strcit=1" SAFEPIN_OPTIONS=strcit=1 -- -- sh -c "touch $TMP/ran"
WANT=("unknown option 'leak_chek' ignored: did you mean 'leak_check'?")
printf '%s\n' "$L/unreg_busy_stream" "SAFEPIN_OPTIONS=leak_chek=off $RAN" >"$TMP/badlist"
refused "a list line's SAFEPIN_OPTIONS=leak_chek=off" -- --list "$TMP/badlist"
WANT=("unknown value 'reprot' for 'leak_check': did you mean 'report'? (accepted: strict, report or off)")
refused "--options leak_check=reprot" -- --options leak_check=reprot -- sh -c "touch $TMP/ran"
WANT=("--log wants one of error, warn, info, debug, not 'verbose'")
refused "--log verbose" -- --log verbose -- sh -c "touch $TMP/ran"
WANT=("--exitcode wants a number from 1 to 255, not '300'")
refused "--exitcode 300" -- --exitcode 300 -- sh -c "touch $TMP/ran"
# Options that parse run as before (a HIP and a CUDA program, by --sim).
(cd "$TMP" && SAFEPIN_OPTIONS=leak_check=report "$SMOKE" -q --lib "$SAFEPIN_LIB" "${SIMARGS[@]}" --junit - \
    --options max_repeats=5 --log warn -- "$L/unreg_busy_stream" -- "$LC/identical_reregister") >"$TMP/good.out" 2>&1
rc=$?
check "smoke: options that parse: the programs run, HIP and CUDA (exit 0)" "exit $rc: $(tail -3 "$TMP/good.out" | tr '\n' ' ')" \
    bash -c '[ "$1" -eq 0 ] && grep -q "unreg_busy_stream  *pass " "$2" && grep -q "identical_reregister  *pass " "$2"' _ "$rc" "$TMP/good.out"

# The launcher refuses a word its flags do not take (naming those they do),
# and --options the library does not parse, before the program runs.
launcher_refuses() { # want-text flags...
    local want=$1; shift
    rm -f "$TMP/ran"
    scripts/safepin --lib "$SAFEPIN_LIB" "$@" -- sh -c "touch $TMP/ran" >"$TMP/l.out" 2>&1
    local rc=$?
    if [ $rc -eq 2 ] && [ ! -e "$TMP/ran" ] && grep -qF -- "$want" "$TMP/l.out"; then
        ok "launcher: $* is refused (exit 2), naming what is accepted"
    else
        not_ok "launcher: $* is refused (exit 2), naming what is accepted" "exit $rc: $(head -c 300 "$TMP/l.out")"
    fi
}
launcher_refuses "--log wants one of error, warn, info, debug, not 'verbose'" --log verbose
launcher_refuses "--log wants one of error, warn, info, debug, not 'verbose'" --log=verbose
launcher_refuses "--unregister wants one of ordered, async, sync, not 'later'" --unregister later
launcher_refuses "--leak-check wants one of strict, report, off, not 'bogus'" --leak-check bogus
launcher_refuses "unknown option 'strcit' ignored: did you mean 'strict'?" --options strcit=1
launcher_refuses "unknown value 'verbose' for 'log' (accepted: error, warn, info or debug)" --options log=verbose
env -u LD_LIBRARY_PATH scripts/safepin --lib "$SAFEPIN_LIB" --log info --unregister async --leak-check report \
    --options strict=1:max_repeats=3 --sim -- sh -c 'echo "$SAFEPIN_OPTIONS"; echo "$LD_LIBRARY_PATH"' >"$TMP/l.out" 2>&1
check "launcher: accepted words and --options pass on to SAFEPIN_OPTIONS; --sim puts simhip and simcuda on the library path" \
    "$(cat "$TMP/l.out" | tr '\n' ' ')" \
    bash -c '[ "$(cat "$1")" = "$(printf "%s\n%s" "log=info:unregister=async:leak_check=report:strict=1:max_repeats=3" "$2/simhip:$2/simcuda")" ]' \
    _ "$TMP/l.out" "$ROOT/build"

# The runner's two lists of codes are diag/codes.inc's, split by its
# violation flag: a new code is never taken for a violation (or missed).
why=$(python3 - <<'PY'
import re
codes = dict(re.findall(r'^SP_CODE\(\w+, "([a-z-]+)", \w+, ([01]),', open("diag/codes.inc").read(), re.M))
src = open("scripts/safepin-smoke").read()
def names(var):
    m = re.search(var + r" = \{([^}]*)\}", src, re.S)
    return set(re.findall(r'"([a-z-]+)"', m.group(1))) if m else set()
viol, notes = names("VIOLATION_CODES"), names("NOT_VIOLATIONS")
bad = []
for c, v in sorted(codes.items()):
    if (c in viol) != (v == "1") or (c in notes) != (v == "0"):
        bad.append("%s (violation %s): %s" % (c, v, "violations" if c in viol else "notes" if c in notes else "neither list"))
print("; ".join(bad))
PY
)
check "safepin-smoke's violation and note codes are diag/codes.inc's" "$why" [ -z "$why" ]

if [ "$FAILS" -ne 0 ]; then
    echo "# smoke: $FAILS failed; runner output:"
    sed 's/^/#   /' "$TMP/stdout"
fi
exit $([ "$FAILS" -eq 0 ] && echo 0 || echo 1)
