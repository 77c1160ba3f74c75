#!/bin/bash
# tests/package/run.sh - the Debian package and `make install`, installed and
# run. Prints TAP lines ("ok - ..." / "not ok - ...: why").
#
#   BUILD=build    where the legacy programs are (the package is built from
#                  the plain build, build/, by scripts/make-deb)
#
# 1. scripts/make-deb builds safepin_<VERSION>_<arch>.deb: its fields (the
#    description names HIP and CUDA), its file list (paths, modes,
#    root:root; README.md and docs/ among them), no ROCm/CUDA dependency,
#    lintian reports no error.
# 2. dpkg --root installs it into a scratch root (an empty dpkg database, so
#    --force-depends); dpkg --verify agrees with its md5sums; every link of
#    the installed README.md and docs/ resolves there.
# 3. From that root, `safepin --sim` runs the demo's legacy programs: bare on
#    the installed simhip they fault, under the installed launcher they
#    complete; the dynamic loader (LD_DEBUG) shows the installed library and
#    the installed simhip were the ones loaded. The same for CUDA driver-API
#    programs on the installed simcuda (bare: stale data, lost writes).
#    safepin-smoke from the root writes its JUnit file.
# 4. One version: VERSION, both launchers' --version, the library's log=debug
#    line, the JSON report, the package's Version, its changelog and its
#    manual pages agree.
# 5. docs/recipes.md's GitHub Actions and GitLab CI jobs parse (python3-yaml) and
#    publish the JUnit file their safepin-smoke line writes; that line runs
#    from the root in a scratch project.
# 6. dpkg -r removes every file.
# 7. make install DESTDIR=... PREFIX=...: the file list, and the same --sim
#    runs from there (HIP and CUDA). The build-tree launcher still finds build/.
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
BUILD=${BUILD:-build}
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "not ok - package: no build directory '$BUILD'"; exit 1; }
L="$BUILD/tests/legacy"
LC="$BUILD/tests/legacy-cuda"
VERSION=$(cat VERSION)

FAILS=0
ok()     { echo "ok - $1"; }
not_ok() { echo "not ok - $1: $2"; FAILS=$((FAILS+1)); }
check()  { # name why command...
    local name=$1 why=$2; shift 2
    if "$@"; then ok "$name"; else not_ok "$name" "$why"; fi
}

for t in dpkg-deb dpkg-shlibdeps dpkg-architecture dpkg-parsechangelog lintian; do
    if ! command -v "$t" >/dev/null; then
        echo "not ok - package: $t missing (scripts/install-deps installs it)"
        exit 1
    fi
done
if ! python3 -c 'import yaml' 2>/dev/null; then
    echo "not ok - package: python3-yaml missing (scripts/install-deps installs it)"
    exit 1
fi
for f in "$ROOT/build/libsafepin.so" "$ROOT/build/simhip/libamdhip64.so.5" "$ROOT/build/simcuda/libcuda.so.1" \
         "$L/stale_free" "$L/unreg_busy_stream" "$LC/stale_reuse" "$LC/lost_writes_free"; do
    if [ ! -e "$f" ]; then
        echo "not ok - package: missing $f (make all)"
        exit 1
    fi
done

TMP=$(mktemp -d /tmp/safepin-package-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
unset LD_LIBRARY_PATH LD_PRELOAD SAFEPIN_OPTIONS
FAULT_RE='^Memory access fault by GPU node-1 \(Agent handle: 0x[0-9a-fA-F]+\) on address 0x[0-9a-fA-F]+\. Reason: Page not present or supervisor privilege\.'

# ---- 1. the package ---------------------------------------------------------
ARCH=$(dpkg --print-architecture)
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
LIBDIR=usr/lib/$MA/safepin
deb=$(scripts/make-deb "$TMP/out" 2>"$TMP/make-deb.err")
rc=$?
want="$TMP/out/safepin_${VERSION}_$ARCH.deb"
if [ $rc -ne 0 ] || [ "$deb" != "$want" ] || [ ! -f "$want" ]; then
    not_ok "make-deb builds safepin_${VERSION}_$ARCH.deb" "exit $rc, printed '$deb'; $(tail -3 "$TMP/make-deb.err")"
    echo "# package: $FAILS failed"
    exit 1
fi
ok "make-deb builds safepin_${VERSION}_$ARCH.deb"

field() { dpkg-deb -f "$deb" "$1"; }
check "package: Package safepin, Architecture $ARCH" "$(field Package) $(field Architecture)" \
    test "$(field Package) $(field Architecture)" = "safepin $ARCH"
dep=$(field Depends)
check "package: depends on libc6 and python3 ($dep)" "Depends: $dep" \
    bash -c '[[ "$1" =~ (^|, )libc6\ \(\>=\ [0-9.]+\)(,|$) && "$1" =~ (^|, )python3(,|$) ]]' _ "$dep"
check "package: its description names both runtimes, and simhip and simcuda" "$(field Description | head -1)" \
    bash -c '[[ "$1" == *"HIP and CUDA"* && "$1" == *simhip* && "$1" == *simcuda* ]]' _ "$(field Description)"
check "package: no ROCm, HIP or CUDA dependency" "$(field Depends) $(field Recommends)" \
    bash -c '! grep -qiE "rocm|hip|cuda|amdgpu|nvidia" <<<"$1"' _ "$(field Depends) $(field Recommends) $(field Pre-Depends)"

# mode owner path, sorted; directories end in /.
dpkg-deb -c "$deb" | awk '{ p=$6; sub(/^\./, "", p); print $1, $2, p }' | LC_ALL=C sort -k3 >"$TMP/list"
cat >"$TMP/want.list" <<EOF
drwxr-xr-x root/root /
drwxr-xr-x root/root /usr/
drwxr-xr-x root/root /usr/bin/
-rwxr-xr-x root/root /usr/bin/safepin
-rwxr-xr-x root/root /usr/bin/safepin-smoke
drwxr-xr-x root/root /usr/lib/
drwxr-xr-x root/root /usr/lib/$MA/
drwxr-xr-x root/root /$LIBDIR/
-rw-r--r-- root/root /$LIBDIR/libsafepin.so
drwxr-xr-x root/root /$LIBDIR/simhip/
-rw-r--r-- root/root /$LIBDIR/simhip/libamdhip64.so.5
drwxr-xr-x root/root /$LIBDIR/simcuda/
-rw-r--r-- root/root /$LIBDIR/simcuda/libcuda.so.1
drwxr-xr-x root/root /usr/share/
drwxr-xr-x root/root /usr/share/doc/
drwxr-xr-x root/root /usr/share/doc/safepin/
-rw-r--r-- root/root /usr/share/doc/safepin/README.md
-rw-r--r-- root/root /usr/share/doc/safepin/changelog.gz
-rw-r--r-- root/root /usr/share/doc/safepin/copyright
-rw-r--r-- root/root /usr/share/doc/safepin/default.supp
drwxr-xr-x root/root /usr/share/man/
drwxr-xr-x root/root /usr/share/man/man1/
-rw-r--r-- root/root /usr/share/man/man1/safepin-smoke.1.gz
-rw-r--r-- root/root /usr/share/man/man1/safepin.1.gz
EOF
# docs/, as it is in the tree: every file, and its folders.
(find docs -type d -printf 'drwxr-xr-x root/root /usr/share/doc/safepin/%p/\n'
 find docs -type f -printf '-rw-r--r-- root/root /usr/share/doc/safepin/%p\n') >>"$TMP/want.list"
LC_ALL=C sort -k3 -o "$TMP/want.list" "$TMP/want.list"
check "package: file list, modes and owners" "$(diff "$TMP/want.list" "$TMP/list" | grep '^[<>]' | tr '\n' ' ')" \
    cmp -s "$TMP/want.list" "$TMP/list"

lintian "$deb" >"$TMP/lintian.out" 2>&1
lrc=$?
sed 's/^/# lintian: /' "$TMP/lintian.out" | grep -v 'root privileges'
check "lintian reports no error" "exit $lrc: $(grep -m3 '^E:' "$TMP/lintian.out" | tr '\n' ' ')" \
    bash -c '[ "$1" -eq 0 ] && ! grep -q "^E:" "$2"' _ "$lrc" "$TMP/lintian.out"

# ---- 2. installed into a scratch root ------------------------------------------
R="$TMP/root"
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
: >"$R/var/lib/dpkg/status"
dpkg --root="$R" --force-depends --force-not-root -i "$deb" >"$TMP/dpkg-i.out" 2>&1
check "dpkg --root installs it" "$(tail -3 "$TMP/dpkg-i.out")" \
    test "$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Status} ${Version}' safepin 2>/dev/null)" = "install ok installed $VERSION"
dpkg --root="$R" --verify safepin >"$TMP/verify.out" 2>&1
vrc=$?
check "dpkg --verify: installed files match the package's md5sums" "exit $vrc; $(head -3 "$TMP/verify.out")" \
    bash -c '[ "$1" -eq 0 ] && [ ! -s "$2" ]' _ "$vrc" "$TMP/verify.out"
check "package: the default suppressions' text is diag/default.supp (the library carries them compiled in)" \
    "$(diff diag/default.supp "$R/usr/share/doc/safepin/default.supp" 2>&1 | head -3 | tr '\n' ' ')" \
    cmp -s diag/default.supp "$R/usr/share/doc/safepin/default.supp"
D0="$R/usr/share/doc/safepin"
check "package: README.md and docs/ installed as in the tree, links into the sources made text" \
    "$(diff README.md "$D0/README.md" | head -4 | tr '\n' ' ')" \
    bash -c 'cmp -s docs/examples/quickstart.c "$1/docs/examples/quickstart.c" && cmp -s docs/options.md "$1/docs/options.md" &&
             grep -q "tests/gpu/RESULTS.md in the safepin sources" "$1/README.md" &&
             ! diff README.md "$1/README.md" | grep "^>" | grep -qv "in the safepin sources"' _ "$D0"
out=$(python3 tests/docs/check.py links "$D0" "$D0" 2>&1)
check "package: every link of the installed README.md and docs/ resolves there (file and #anchor)" \
    "$(echo "$out" | head -3 | tr '\n' ' ')" test -z "$out"
check "the installed files are the package's files" "dpkg -L differs from dpkg-deb -c" \
    bash -c 'diff <(dpkg --root="$1" -L safepin | grep -v "^/\.$" | LC_ALL=C sort) \
                  <(awk "{print \$3}" "$2" | sed "s|/$||" | grep -v "^$" | LC_ALL=C sort) >/dev/null' _ "$R" "$TMP/list"

# ---- 3. safepin --sim from the root ------------------------------------------
# prog personality: bare on the installed simhip (GPU fault + SIGABRT), then
# under the installed launcher (exit 0, "OK", no fault; the loader says which
# files it initialized).
demo() { # where-name launcher simdir lib prog personality [codes]
    local where=$1 launcher=$2 simdir=$3 lib=$4 prog=$5 pers=$6 codes=$7 name
    name="$where: $prog ($pers)"
    SIMHIP_PERSONALITY=$pers LD_LIBRARY_PATH="$simdir" timeout 30 "$L/$prog" >"$TMP/bare.out" 2>&1
    local brc=$?
    if [ $brc -eq 134 ] && grep -qE "$FAULT_RE" "$TMP/bare.out"; then
        ok "$name: without safepin, on the installed simhip: GPU fault, SIGABRT"
    else
        not_ok "$name: without safepin: GPU fault" "exit $brc, $(grep -m1 -iE 'fault|abort|OK' "$TMP/bare.out")"
    fi
    SIMHIP_PERSONALITY=$pers LD_DEBUG=libs timeout 30 "$launcher" --sim "$L/$prog" >"$TMP/sp.out" 2>&1
    local src=$? why=""
    [ $src -eq 0 ] || why="exit $src"
    grep -q '^OK' "$TMP/sp.out" || why="$why, no OK"
    grep -qE "$FAULT_RE" "$TMP/sp.out" && why="$why, GPU fault"
    for c in $codes; do grep -q "safepin: $c:" "$TMP/sp.out" || why="$why, no $c diagnostic"; done
    grep -qE "calling init: $lib\$" "$TMP/sp.out" || why="$why, $lib not loaded"
    grep -qE "calling init: $simdir/libamdhip64.so.5\$" "$TMP/sp.out" || why="$why, $simdir/libamdhip64.so.5 not loaded"
    if [ -z "$why" ]; then
        ok "$name: under $where's safepin --sim: completes, fault prevented"
    else
        not_ok "$name: under $where's safepin --sim: fault prevented" "${why#, }"
    fi
}
demo "package" "$R/usr/bin/safepin" "$R/$LIBDIR/simhip" "$R/$LIBDIR/libsafepin.so" stale_free current freed-while-registered
demo "package" "$R/usr/bin/safepin" "$R/$LIBDIR/simhip" "$R/$LIBDIR/libsafepin.so" stale_free legacy freed-while-registered
demo "package" "$R/usr/bin/safepin" "$R/$LIBDIR/simhip" "$R/$LIBDIR/libsafepin.so" unreg_busy_stream legacy

# CUDA driver-API programs (linked against libcuda.so.1, no rpath): bare on
# the installed simcuda the device's writes are stale or lost; under the
# installed launcher's --sim they complete, on the installed simcuda.
demo_cuda() { # where-name launcher simdir lib prog evidence
    local where=$1 launcher=$2 simdir=$3 lib=$4 prog=$5 evidence=$6 name
    name="$where: $prog (CUDA)"
    LD_LIBRARY_PATH="$simdir" timeout 30 "$LC/$prog" >"$TMP/bare.out" 2>&1
    local brc=$?
    if [ $brc -ne 0 ] && grep -qF "$evidence" "$TMP/bare.out"; then
        ok "$name: without safepin, on the installed simcuda: $evidence"
    else
        not_ok "$name: without safepin: $evidence" "exit $brc, $(head -2 "$TMP/bare.out" | tr '\n' ' ')"
    fi
    LD_DEBUG=libs timeout 30 "$launcher" --sim "$LC/$prog" >"$TMP/sp.out" 2>&1
    local src=$? why=""
    [ $src -eq 0 ] || why="exit $src"
    grep -q '^OK' "$TMP/sp.out" || why="$why, no OK"
    grep -qF "$evidence" "$TMP/sp.out" && why="$why, $evidence"
    grep -q "safepin: freed-while-registered:" "$TMP/sp.out" || why="$why, no freed-while-registered diagnostic"
    grep -qE "calling init: $lib\$" "$TMP/sp.out" || why="$why, $lib not loaded"
    grep -qE "calling init: $simdir/libcuda.so.1\$" "$TMP/sp.out" || why="$why, $simdir/libcuda.so.1 not loaded"
    if [ -z "$why" ]; then
        ok "$name: under $where's safepin --sim, on simcuda: completes, hazard prevented"
    else
        not_ok "$name: under $where's safepin --sim: hazard prevented" "${why#, }"
    fi
}
demo_cuda "package" "$R/usr/bin/safepin" "$R/$LIBDIR/simcuda" "$R/$LIBDIR/libsafepin.so" stale_reuse '(stale)'
demo_cuda "package" "$R/usr/bin/safepin" "$R/$LIBDIR/simcuda" "$R/$LIBDIR/libsafepin.so" lost_writes_free '(lost writes)'

# The CI recipe's command from the root: one clean program, one with a violation.
(cd "$TMP" && SIMHIP_PERSONALITY=legacy "$R/usr/bin/safepin-smoke" -q --sim --junit "$TMP/smoke.xml" \
    -- "$L/unreg_busy_stream" -- "$L/stale_free") >"$TMP/smoke.out" 2>&1
src=$?
check "package: safepin-smoke --sim --junit from the root (exit 1: one program with violations)" \
    "exit $src; $(tail -2 "$TMP/smoke.out")" \
    python3 - "$TMP/smoke.xml" "$src" <<'EOF'
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot()
cases = {c.get("name").rsplit("/", 1)[-1]: c for c in s.iter("testcase")}
sys.exit(0 if sys.argv[2] == "1" and s.get("tests") == "2" and s.get("failures") == "1"
         and cases["unreg_busy_stream"].find("failure") is None
         and cases["stale_free"].find("failure") is not None else 1)
EOF

# ---- 4. one version -------------------------------------------------------------
SAFEPIN_OPTIONS=log=debug:report="$TMP/ver.%p.json" "$R/usr/bin/safepin" --sim "$L/unreg_busy_stream" >"$TMP/ver.out" 2>&1
logv=$(sed -n 's/.*safepin: debug: safepin \([^ ]*\) active in pid.*/\1/p' "$TMP/ver.out" | head -1)
repv=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$TMP"/ver.*.json 2>/dev/null)
clv=$(zcat "$R/usr/share/doc/safepin/changelog.gz" | dpkg-parsechangelog -l - -S Version 2>/dev/null)
manv=$(zcat "$R"/usr/share/man/man1/safepin.1.gz "$R"/usr/share/man/man1/safepin-smoke.1.gz |
       sed -n 's/^\.TH .*"safepin \([^"]*\)".*/\1/p' | sort -u | tr '\n' ' ')
versions="VERSION=$VERSION installed-launcher=$("$R/usr/bin/safepin" --version)"
versions="$versions tree-launcher=$(scripts/safepin --version) log=$logv report=$repv"
versions="$versions package=$(field Version) changelog=$clv man=$manv"
echo "# versions: $versions"
check "one version: launchers, log=debug line, JSON report, package, changelog, manual pages" "$versions" \
    test "$versions" = "VERSION=$VERSION installed-launcher=safepin $VERSION tree-launcher=safepin $VERSION log=$VERSION report=$VERSION package=$VERSION changelog=$VERSION man=$VERSION "

# ---- 5. the CI recipes of docs/recipes.md ---------------------------------------
# Both YAML files parse; each runs safepin-smoke --junit over the list file
# and publishes that JUnit file; their safepin-smoke line, run from the
# installed root in a scratch project, writes it (one program with violations:
# exit 1, one failure).
python3 - docs/recipes.md "$TMP" >"$TMP/recipes.out" 2>&1 <<'EOF'
import re, shlex, sys, yaml
text, tmp = open(sys.argv[1]).read(), sys.argv[2]
docs = [yaml.safe_load(b) for b in re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M)]
gh = [d for d in docs if isinstance(d, dict) and "jobs" in d]
gl = [d for d in docs if isinstance(d, dict) and "safepin-smoke" in d and "script" in d["safepin-smoke"]]
if len(gh) != 1 or len(gl) != 1:
    sys.exit("want one GitHub Actions and one GitLab CI YAML block, found %d and %d" % (len(gh), len(gl)))
def smoke(lines):
    cmds = [l for l in lines if l.strip().startswith("safepin-smoke ")]
    if len(cmds) != 1:
        sys.exit("want one safepin-smoke line, found %r" % cmds)
    w = shlex.split(cmds[0])
    if "--junit" not in w:
        sys.exit("no --junit in %r" % cmds[0])
    return cmds[0], w[w.index("--junit") + 1]
steps = [st for job in gh[0]["jobs"].values() for st in job["steps"]]
ghcmd, ghjunit = smoke([l for st in steps for l in str(st.get("run", "")).splitlines()])
published = [st["with"].get("report_paths") for st in steps if "junit" in str(st.get("uses", ""))]
if published != [ghjunit]:
    sys.exit("GitHub: JUnit file %s, published %r" % (ghjunit, published))
job = gl[0]["safepin-smoke"]
glcmd, gljunit = smoke(job["script"])
if job.get("artifacts", {}).get("reports", {}).get("junit") != gljunit:
    sys.exit("GitLab: JUnit file %s, artifacts:reports:junit %r" % (gljunit, job.get("artifacts")))
for name, cmd, junit in (("github", ghcmd, ghjunit), ("gitlab", glcmd, gljunit)):
    open("%s/%s.cmd" % (tmp, name), "w").write(cmd + "\n")
    open("%s/%s.junit" % (tmp, name), "w").write(junit + "\n")
EOF
prc=$?
check "docs/recipes.md: the GitHub Actions and GitLab CI recipes parse and publish their JUnit file" "$(tail -1 "$TMP/recipes.out")" \
    test $prc -eq 0
if [ $prc -eq 0 ]; then
    for ci in github gitlab; do
        P="$TMP/project-$ci"
        list=$(sed -n 's/.*--list \([^ ]*\).*/\1/p' "$TMP/$ci.cmd")
        junit=$(cat "$TMP/$ci.junit")
        mkdir -p "$P/$(dirname "$list")"
        printf '%s\n' "SIMHIP_PERSONALITY=legacy $L/unreg_busy_stream" "$L/reregister_larger" \
            "$L/stale_free" >"$P/$list"
        (cd "$P" && PATH="$R/usr/bin:$PATH" sh -c "$(cat "$TMP/$ci.cmd")") >"$TMP/$ci.out" 2>&1
        crc=$?
        check "docs/recipes.md's $ci job: its safepin-smoke line from the package writes $junit (exit 1, 1 failure of 3)" \
            "exit $crc; $(tail -2 "$TMP/$ci.out" | tr '\n' ' ')" \
            python3 -c 'import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot()
sys.exit(0 if sys.argv[2] == "1" and (s.get("tests"), s.get("failures"), s.get("errors")) == ("3", "1", "0") else 1)' \
            "$P/$junit" "$crc"
    done
fi

# ---- 6. removal ----------------------------------------------------------------
dpkg --root="$R" --force-not-root -r safepin >"$TMP/dpkg-r.out" 2>&1
check "dpkg -r removes every file" "$(find "$R/usr" -type f 2>/dev/null | head -3 | tr '\n' ' ')" \
    test -z "$(find "$R/usr" -type f 2>/dev/null)"

# ---- 7. make install DESTDIR=... PREFIX=... ----------------------------------------
D="$TMP/destdir"
P=/opt/safepin
make -s install DESTDIR="$D" PREFIX="$P" >"$TMP/install.out" 2>&1
irc=$?
(cd "$D" && find . -type f -printf '%m %p\n' | LC_ALL=C sort) >"$TMP/inst.list"
cat >"$TMP/inst.want" <<EOF
644 ./opt/safepin/lib/libsafepin.so
644 ./opt/safepin/lib/safepin/simhip/libamdhip64.so.5
644 ./opt/safepin/lib/safepin/simcuda/libcuda.so.1
644 ./opt/safepin/share/doc/safepin/README.md
644 ./opt/safepin/share/doc/safepin/default.supp
644 ./opt/safepin/share/man/man1/safepin-smoke.1
644 ./opt/safepin/share/man/man1/safepin.1
755 ./opt/safepin/bin/safepin
755 ./opt/safepin/bin/safepin-smoke
EOF
find docs -type f -printf '644 ./opt/safepin/share/doc/safepin/%p\n' >>"$TMP/inst.want"
LC_ALL=C sort -o "$TMP/inst.want" "$TMP/inst.want"
check "make install DESTDIR PREFIX=$P: the file list" "exit $irc; $(diff "$TMP/inst.want" "$TMP/inst.list" | grep '^[<>]' | tr '\n' ' ')" \
    bash -c '[ "$1" -eq 0 ] && cmp -s "$2" "$3"' _ "$irc" "$TMP/inst.want" "$TMP/inst.list"
check "make install: the launcher's --version" "$("$D$P/bin/safepin" --version 2>&1)" \
    test "$("$D$P/bin/safepin" --version 2>&1)" = "safepin $VERSION"
demo "make install" "$D$P/bin/safepin" "$D$P/lib/safepin/simhip" "$D$P/lib/libsafepin.so" stale_free current freed-while-registered
demo_cuda "make install" "$D$P/bin/safepin" "$D$P/lib/safepin/simcuda" "$D$P/lib/libsafepin.so" stale_reuse '(stale)'

# The launcher in the source tree still takes build/.
scripts/safepin -- cat /proc/self/maps >"$TMP/maps" 2>&1
check "source tree: scripts/safepin preloads build/libsafepin.so" "$(grep -m1 libsafepin "$TMP/maps")" \
    grep -q " $ROOT/build/libsafepin.so\$" "$TMP/maps"

echo "# package: $FAILS failed"
[ "$FAILS" -eq 0 ]
