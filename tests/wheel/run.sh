#!/bin/bash
# tests/wheel/run.sh - the Python wheel, built, installed into fresh virtual
# environments and run. Prints TAP lines ("ok - ..." / "not ok - ...: why").
#
#   BUILD=build     where the library, simhip and the legacy programs are
#   PYTHON3=/usr/bin/python3   the interpreter the environments are made
#                   from (Debian's: a python3 first on PATH may be another)
#
# 1. scripts/make-wheel builds safepin-<VERSION>-py3-none-manylinux_2_<N>_<arch>.whl:
#    N is the newest GLIBC_2.N that objdump -T finds in the library, the
#    metadata carries VERSION, `python3 -m wheel unpack` verifies every
#    RECORD hash, the file list and modes are the expected ones (simhip and
#    simcuda among them), the description on the index page has no link
#    that would not resolve there, and a second build gives the same bytes.
# 2. `python3 -m venv` + `pip install --no-index`: the console scripts
#    and `python -m safepin` say VERSION; safepin.library_path() is the
#    packaged library and the one the launcher preloads.
# 3. The demo's programs: bare on simhip they fault, under the installed
#    launcher's --sim (console script, python -m safepin) they complete on
#    the wheel's simhip; a CUDA driver-API program likewise on the wheel's
#    simcuda; safepin.read_report() reads the report the run wrote.
#    safepin-smoke --sim from the environment writes its JUnit file.
# 4. A user without root makes an environment and installs the wheel
#    (run as nobody when the suite runs as root).
# 5. pip uninstall removes every file it installed.
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
BUILD=${BUILD:-build}
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "not ok - wheel: no build directory '$BUILD'"; exit 1; }
PYTHON3=${PYTHON3:-/usr/bin/python3}
L="$BUILD/tests/legacy"
SIM="$BUILD/simhip"
LC="$BUILD/tests/legacy-cuda"
VERSION=$(cat VERSION)
FAULT_RE='Memory access fault by GPU node-1'
# Offline and isolated from this machine's pip configuration.
export PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
unset PIP_FIND_LINKS PYTHONPATH PYTHONHOME VIRTUAL_ENV

FAILS=0
ok()     { echo "ok - $1"; }
not_ok() { echo "not ok - $1: $2"; FAILS=$((FAILS+1)); }
check()  { # name why command...
    local name=$1 why=$2; shift 2
    if "$@"; then ok "$name"; else not_ok "$name" "$why"; fi
}

if ! "$PYTHON3" -c 'import venv, ensurepip, wheel' 2>/dev/null; then
    echo "not ok - wheel: $PYTHON3 lacks venv, ensurepip or wheel (scripts/install-deps installs python3-venv, python3-wheel)"
    exit 1
fi
for f in "$BUILD/libsafepin.so" "$SIM/libamdhip64.so.5" "$BUILD/simcuda/libcuda.so.1" "$L/stale_free" \
         "$L/unreg_busy_stream" "$L/reregister_larger" "$LC/stale_reuse"; do
    if [ ! -e "$f" ]; then
        echo "not ok - wheel: missing $f (make all)"
        exit 1
    fi
done

TMP=$(mktemp -d /tmp/safepin-wheel-test.XXXXXX)
chmod 0755 "$TMP"
trap 'rm -rf "$TMP"' EXIT

# ---- 1. the wheel ----------------------------------------------------------------
"$PYTHON3" scripts/make-wheel "$TMP/dist" >"$TMP/make-wheel.out" 2>&1
mrc=$?
whl=$(tail -1 "$TMP/make-wheel.out")
N=$(objdump -T "$BUILD/libsafepin.so" | grep -o 'GLIBC_2\.[0-9]*' | sed 's/GLIBC_2\.//' | sort -n | tail -1)
ARCH=$(uname -m)
want="$TMP/dist/safepin-$VERSION-py3-none-manylinux_2_${N}_$ARCH.whl"
check "make-wheel builds safepin-$VERSION-py3-none-manylinux_2_${N}_$ARCH.whl (GLIBC_2.$N: objdump -T)" \
    "exit $mrc; $(tail -2 "$TMP/make-wheel.out" | tr '\n' ' ')" \
    bash -c '[ "$1" -eq 0 ] && [ "$2" = "$3" ] && [ -f "$3" ]' _ "$mrc" "$whl" "$want"
if [ ! -f "$whl" ]; then
    echo "# wheel: no wheel, nothing more to test"
    exit 1
fi

(cd "$TMP" && "$PYTHON3" -m wheel unpack -d unpacked "$whl") >"$TMP/unpack.out" 2>&1
check "wheel unpack: every file matches its RECORD hash and size" "$(tail -2 "$TMP/unpack.out" | tr '\n' ' ')" \
    test -d "$TMP/unpacked/safepin-$VERSION"

DI="safepin-$VERSION.dist-info"
member() { "$PYTHON3" -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$whl" "$1"; }
"$PYTHON3" - "$whl" >"$TMP/list" <<'EOF'
import sys, zipfile
for i in zipfile.ZipFile(sys.argv[1]).infolist():
    print("%o %s" % (i.external_attr >> 16 & 0o777, i.filename))
EOF
cat >"$TMP/want.list" <<EOF
644 safepin/__init__.py
644 safepin/__main__.py
755 safepin/bin/safepin
755 safepin/bin/safepin-smoke
644 safepin/cli.py
644 safepin/lib/libsafepin.so
644 safepin/lib/simcuda/libcuda.so.1
644 safepin/lib/simhip/libamdhip64.so.5
644 $DI/METADATA
644 $DI/WHEEL
644 $DI/entry_points.txt
644 $DI/top_level.txt
644 $DI/RECORD
EOF
check "wheel: file list and modes (package, launchers, library, simhip and simcuda, dist-info with RECORD last)" \
    "$(diff "$TMP/want.list" "$TMP/list" | grep '^[<>]' | tr '\n' ' ')" cmp -s "$TMP/want.list" "$TMP/list"

meta=$(member "$DI/METADATA"; member "$DI/WHEEL") && meta=$(echo "$meta" | grep -E '^(Name|Version|Tag|Root-Is-Purelib):' | tr '\n' ' ')
check "wheel: METADATA and WHEEL say safepin $VERSION, its tag, not purelib" "$meta" \
    test "$meta" = "Name: safepin Version: $VERSION Root-Is-Purelib: false Tag: py3-none-manylinux_2_${N}_$ARCH "
# The description an index shows: the README's opening, where a link
# relative to the README (a file, an #anchor) would lead nowhere.
member "$DI/METADATA" | sed '1,/^$/d' >"$TMP/description"
check "wheel: the description has no relative link (they do not resolve on an index page), names HIP, CUDA and --sim" \
    "$(grep -oE '\]\([^)]*\)' "$TMP/description" | head -3 | tr '\n' ' ')" \
    bash -c '! grep -qE "\]\((\#|[^a-z]|[a-z]+[^a-z:])" "$1" && grep -q HIP "$1" && grep -q CUDA "$1" &&
             grep -q -- "--sim" "$1"' _ "$TMP/description"
check "wheel: entry points safepin and safepin-smoke" "$(member "$DI/entry_points.txt" | tr '\n' ' ')" \
    test "$(member "$DI/entry_points.txt" | tr '\n' ' ')" = "[console_scripts] safepin = safepin.cli:main safepin-smoke = safepin.cli:smoke "
member safepin/lib/libsafepin.so >"$TMP/lib.so"
check "wheel: the library is the build's, stripped (same dynamic symbols, no debug sections)" \
    "$(diff <(objdump -T "$BUILD/libsafepin.so" | grep -c ' DF ') <(objdump -T "$TMP/lib.so" | grep -c ' DF '))" \
    bash -c 'cmp -s <(objdump -T "$1" | grep " DF " | sort) <(objdump -T "$2" | grep " DF " | sort) &&
             ! objdump -h "$2" | grep -q "\.debug_"' _ "$BUILD/libsafepin.so" "$TMP/lib.so"

"$PYTHON3" scripts/make-wheel "$TMP/dist2" >/dev/null 2>&1
check "wheel: a second build gives the same bytes" "$(sha256sum "$whl" "$TMP/dist2/$(basename "$whl")" 2>&1 | cut -c1-16 | tr '\n' ' ')" \
    cmp -s "$whl" "$TMP/dist2/$(basename "$whl")"

# make-wheel refuses a file installed next to the library that LIB_FILES
# does not name: a `make install` that also installs extra.supp there.
cat >"$TMP/make-extra" <<'EOF'
#!/bin/sh
make "$@" || exit
for a; do case $a in DESTDIR=*) d=${a#DESTDIR=} ;; LIBDIR=*) l=${a#LIBDIR=} ;; esac; done
echo data >"$d$l/extra.supp"
EOF
chmod +x "$TMP/make-extra"
MAKE="$TMP/make-extra" "$PYTHON3" scripts/make-wheel "$TMP/dist3" >"$TMP/extra.out" 2>&1
erc=$?
check "make-wheel: a file installed next to the library but not in LIB_FILES stops the build, named" \
    "exit $erc; $(tail -1 "$TMP/extra.out")" \
    bash -c '[ "$1" -ne 0 ] && grep -q "extra.supp next to the library; add it to LIB_FILES" "$2" && [ ! -e "$3" ]' \
    _ "$erc" "$TMP/extra.out" "$TMP/dist3/$(basename "$whl")"

# ---- 2. a fresh virtual environment ------------------------------------------------
V="$TMP/venv"
"$PYTHON3" -m venv "$V" >"$TMP/venv.out" 2>&1 && "$V/bin/pip" install --no-index "$whl" >>"$TMP/venv.out" 2>&1
check "python3 -m venv, pip install --no-index the wheel" "$(tail -2 "$TMP/venv.out" | tr '\n' ' ')" \
    bash -c '[ -x "$1/bin/safepin" ] && [ -x "$1/bin/safepin-smoke" ] && "$1/bin/pip" show safepin >/dev/null 2>&1' _ "$V"
SP=$("$V/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/safepin
versions="console=$("$V/bin/safepin" --version 2>&1) module=$("$V/bin/python" -m safepin --version 2>&1)"
versions="$versions smoke=$("$V/bin/safepin-smoke" --version 2>&1) api=$("$V/bin/python" -c 'import safepin; print(safepin.__version__)' 2>&1)"
versions="$versions pip=$("$V/bin/pip" show safepin 2>/dev/null | sed -n 's/^Version: //p')"
echo "# versions: $versions"
check "one version: safepin --version, python -m safepin --version, safepin-smoke --version, safepin.__version__, pip" \
    "$versions" test "$versions" = "console=safepin $VERSION module=safepin $VERSION smoke=safepin-smoke $VERSION api=$VERSION pip=$VERSION"
libpath=$("$V/bin/python" -c 'import safepin; print(safepin.library_path())' 2>&1)
check "safepin.library_path() is the installed package's libsafepin.so" "$libpath" \
    bash -c '[ "$1" = "$2/lib/libsafepin.so" ] && cmp -s "$1" "$3"' _ "$libpath" "$SP" "$TMP/lib.so"
# Activated, as a user has it: the launcher preloads that library into the
# program it runs (python included), after an LD_PRELOAD already set.
(. "$V/bin/activate" && LD_PRELOAD=libc.so.6 safepin -- python -c 'import os; print(os.environ["LD_PRELOAD"]); print(open("/proc/self/maps").read())') >"$TMP/maps" 2>&1
check "activated environment: safepin -- python preloads library_path() (after an existing LD_PRELOAD)" \
    "$(head -1 "$TMP/maps")" \
    bash -c '[ "$(head -1 "$1")" = "libc.so.6:$2" ] && grep -q " $2\$" "$1"' _ "$TMP/maps" "$libpath"
"$V/bin/safepin" --strict >"$TMP/usage.out" 2>&1
urc=$?
check "the console script passes the launcher's options and usage errors through (exit 2)" "exit $urc" \
    bash -c '[ "$1" -eq 2 ] && grep -q "^usage: safepin" "$2"' _ "$urc" "$TMP/usage.out"
"$V/bin/python" - "$TMP" >"$TMP/api.out" 2>&1 <<'EOF'
import json, os, sys, safepin
tmp = sys.argv[1]
open(tmp + "/notreport.json", "w").write('{"tool": "other"}')
open(tmp + "/broken.json", "w").write('{"tool": ')
for p in ("notreport.json", "broken.json"):
    try:
        safepin.read_report(os.path.join(tmp, p))
        sys.exit("read_report(%s) did not raise" % p)
    except ValueError as e:
        print("ValueError:", e)
try:
    safepin.read_report(os.path.join(tmp, "missing.json"))
    sys.exit("read_report(missing) did not raise")
except OSError as e:
    print("OSError:", e.strerror)
EOF
arc=$?
check "read_report: ValueError for JSON that is not a safepin report or not JSON, OSError for no file" \
    "$(tail -1 "$TMP/api.out")" test $arc -eq 0

# ---- 3. the demo's programs under the installed launcher ------------------------
demo() { # how prog personality code...
    local how=$1 prog=$2 pers=$3; shift 3
    local name="$prog ($pers)" rep="$TMP/rep.$prog.$pers.$how" launcher
    SIMHIP_PERSONALITY=$pers LD_LIBRARY_PATH="$SIM" timeout 30 "$L/$prog" >"$TMP/bare.out" 2>&1
    local brc=$?
    if [ $brc -eq 134 ] && grep -q "$FAULT_RE" "$TMP/bare.out"; then
        ok "$name: without safepin, on simhip: GPU fault, SIGABRT"
    else
        not_ok "$name: without safepin: GPU fault" "exit $brc, $(grep -m1 -iE 'fault|abort|OK' "$TMP/bare.out")"
    fi
    case $how in
        console) launcher=(safepin) ;;
        module)  launcher=(python -m safepin) ;;
    esac
    (. "$V/bin/activate" && cd "$TMP" && SIMHIP_PERSONALITY=$pers LD_DEBUG=libs \
        timeout 30 "${launcher[@]}" --sim --report "$rep.%p.json" -- "$L/$prog") >"$TMP/sp.out" 2>&1
    local src=$? why=""
    [ $src -eq 0 ] || why="exit $src"
    grep -q '^OK' "$TMP/sp.out" || why="$why, no OK"
    grep -q "$FAULT_RE" "$TMP/sp.out" && why="$why, GPU fault"
    grep -qE "calling init: $libpath\$" "$TMP/sp.out" || why="$why, $libpath not loaded"
    grep -qE "calling init: $SP/lib/simhip/libamdhip64.so.5\$" "$TMP/sp.out" || why="$why, the wheel's simhip not loaded"
    for c in "$@"; do grep -q "safepin: $c:" "$TMP/sp.out" || why="$why, no $c diagnostic"; done
    if [ -z "$why" ]; then
        ok "$name: under the environment's ${launcher[*]} --sim: completes on the wheel's simhip, fault prevented"
    else
        not_ok "$name: under the environment's ${launcher[*]} --sim: fault prevented" "${why#, }"
    fi
    # The report that run wrote, through the API: the program's violations.
    "$V/bin/python" - "$VERSION" "$rep".*.json "$@" >"$TMP/rep.out" 2>&1 <<'EOF'
import sys, safepin
version, path, codes = sys.argv[1], sys.argv[2], sys.argv[3:]
r = safepin.read_report(path)
got = (r["version"], r["violations_total"], sorted(c for c, n in r["codes"].items() if n and c in codes),
       r["counters"]["registrations"] > 0)
print(got)
sys.exit(0 if got == (version, len(codes), sorted(codes), True) else 1)
EOF
    local rrc=$?
    check "$name: safepin.read_report() reads the run's report (version, $# violation(s), registrations)" \
        "$(tail -1 "$TMP/rep.out")" test $rrc -eq 0
}
demo console stale_free current freed-while-registered
demo module unreg_busy_stream legacy

# A CUDA driver-API program (linked against libcuda.so.1): bare on simcuda
# its device results are stale; under the environment's safepin --sim it
# completes on the wheel's simcuda.
LD_LIBRARY_PATH="$BUILD/simcuda" timeout 30 "$LC/stale_reuse" >"$TMP/bare.out" 2>&1
brc=$?
check "stale_reuse (CUDA): without safepin, on simcuda: stale data" "exit $brc, $(head -1 "$TMP/bare.out")" \
    bash -c '[ "$1" -ne 0 ] && grep -qF "(stale)" "$2"' _ "$brc" "$TMP/bare.out"
(. "$V/bin/activate" && cd "$TMP" && LD_DEBUG=libs timeout 30 safepin --sim -- "$LC/stale_reuse") >"$TMP/sp.out" 2>&1
src=$?
check "stale_reuse (CUDA): under the environment's safepin --sim: completes on the wheel's simcuda, freed-while-registered" \
    "exit $src; $(grep -m1 -E 'stale|not found|cannot open' "$TMP/sp.out")" \
    bash -c '[ "$1" -eq 0 ] && grep -q "^OK" "$2" && ! grep -qF "(stale)" "$2" &&
             grep -q "safepin: freed-while-registered:" "$2" &&
             grep -qE "calling init: $3/lib/simcuda/libcuda.so.1\$" "$2"' _ "$src" "$TMP/sp.out" "$SP"

# safepin-smoke from the environment: one clean program, one with a violation.
(. "$V/bin/activate" && cd "$TMP" && SIMHIP_PERSONALITY=legacy \
    safepin-smoke -q -j 2 --sim --junit "$TMP/smoke.xml" -- "$L/unreg_busy_stream" -- "$L/stale_free") >"$TMP/smoke.out" 2>&1
src=$?
check "the environment's safepin-smoke --sim --junit (exit 1: one program with violations)" \
    "exit $src; $(tail -2 "$TMP/smoke.out" | tr '\n' ' ')" \
    "$PYTHON3" - "$TMP/smoke.xml" "$src" <<'EOF'
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot()
cases = {c.get("name").rsplit("/", 1)[-1]: c for c in s.iter("testcase")}
sys.exit(0 if sys.argv[2] == "1" and s.get("tests") == "2" and s.get("failures") == "1"
         and cases["unreg_busy_stream"].find("failure") is None
         and "freed-while-registered" in cases["stale_free"].find("failure").get("message") else 1)
EOF

# ---- 4. without root -------------------------------------------------------------
# docs/recipes.md's recipe as a user without root: python3 -m venv in a folder of
# their own, pip install --no-index, the launcher on a program.
if [ "$(id -u)" -eq 0 ]; then
    AS=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
    WHO=nobody
else
    AS=()
    WHO=$(id -un)
fi
# Everything that user runs is in their folder: a checkout under /root is
# not theirs to read.
U="$TMP/user"
mkdir -p "$U" && cp "$whl" "$L/reregister_larger" "$U/" &&
    { [ "$(id -u)" -ne 0 ] || chown -R 65534:65534 "$U"; }
(cd "$U" && env -i PATH=/usr/bin:/bin HOME="$U" "${AS[@]}" sh -c '
    id -u; "$1" -m venv env && . env/bin/activate && pip install -q --no-index ./*.whl &&
    SIMHIP_PERSONALITY=current safepin --sim --strict -- ./reregister_larger && echo DONE' _ \
    "$PYTHON3") >"$TMP/user.out" 2>&1
check "a user without root ($WHO): python3 -m venv, pip install --no-index, safepin --sim --strict -- a program" \
    "$(tail -2 "$TMP/user.out" | tr '\n' ' ')" \
    bash -c '[ "$(head -1 "$1")" != 0 ] && [ "$(tail -1 "$1")" = DONE ] &&
             [ -f "$2"/env/lib/python3*/site-packages/safepin/lib/libsafepin.so ]' _ "$TMP/user.out" "$U"

# ---- 5. uninstall ------------------------------------------------------------------
"$V/bin/pip" uninstall -y safepin >"$TMP/uninstall.out" 2>&1
left=$(ls -d "$SP" "$V/bin/safepin" "$V/bin/safepin-smoke" "$(dirname "$SP")/$DI" 2>/dev/null)
check "pip uninstall removes the package, its console scripts and its dist-info" \
    "$(tail -1 "$TMP/uninstall.out"); left: $left" test -z "$left"

echo "# wheel: $FAILS failed"
[ "$FAILS" -eq 0 ]
