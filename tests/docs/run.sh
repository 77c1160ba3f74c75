#!/bin/bash
# tests/docs/run.sh - the documentation is kept true: README.md and docs/*.md
# against the code. Prints TAP lines ("ok - ..." / "not ok - ...: why").
#
#   BUILD=build    where libsafepin.so, simhip and simcuda are (quick start)
#
# 1. The checks of tests/docs/check.py: the diagnostic codes (diag/codes.inc
#    and the README's table, both ways), the options (diag/options.inc and
#    docs/options.md's table, both ways, with defaults and words; the
#    README's short table; the launcher's --help, its manual page and the
#    words it accepts; log=debug's list of effective options, from this
#    build's library), the relative links and their #anchors, no commit name
#    of this repository in any document, README.md at most 300 lines. Each
#    check is first run on a copy of the documents (or of diag/ and
#    scripts/) broken on purpose, and must fail there: a check that cannot
#    fail is not counted as a pass. A new key in diag/options.inc fails
#    every list that does not have it.
# 2. The quick start: its commands, as the README prints them, run on this
#    build and give what the README shows (the exit status, the code, the
#    file:line of each stack).
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
BUILD=${BUILD:-build}
CHECK="python3 tests/docs/check.py"
FAILS=0
ok()     { echo "ok - $1"; }
not_ok() { echo "not ok - $1: $2"; FAILS=$((FAILS+1)); }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# A copy of the documents to break: README.md and docs/.
fresh_copy() {
    rm -rf "$TMP/copy" && mkdir -p "$TMP/copy" && cp -r README.md docs "$TMP/copy/"
}

# must_fail NAME CHECK SED-SCRIPT FILE: break FILE in a fresh copy with
# SED-SCRIPT, and the check must fail there (and say something).
must_fail() {
    local name=$1 check=$2 script=$3 file=$4 out
    fresh_copy
    sed -i -e "$script" "$TMP/copy/$file"
    if cmp -s "$TMP/copy/$file" "$file"; then
        not_ok "$name" "the sed script changed nothing in $file (the self-test is stale)"
        return
    fi
    out=$($CHECK "$check" "$TMP/copy" "$ROOT" 2>&1)
    if [ $? -ne 0 ] && [ -n "$out" ]; then
        ok "$name (says: $(echo "$out" | head -1))"
    else
        not_ok "$name" "the check passed on a broken copy"
    fi
}

# run_check NAME CHECK: the check on the tree itself.
run_check() {
    local out
    out=$($CHECK "$2" "$ROOT" "$ROOT" 2>&1)
    if [ $? -eq 0 ]; then ok "$1"; else not_ok "$1" "$(echo "$out" | tr '\n' ';')"; fi
}

# ---- 1. the checks, shown failing on broken copies, then on the tree ---------
must_fail "codes: fails when the README's table drops a code" codes \
    '/^| `release-timeout` |/d' README.md
must_fail "codes: fails when the README names a code the code does not have" codes \
    '/^| `nested-register` |/a| `nested-registration` | no (info) | - | - |' README.md
must_fail "codes: fails when a code's violation flag is wrong" codes \
    's/^| `leak-at-exit` | yes |/| `leak-at-exit` | no |/' README.md
run_check "codes: the README's table names every code of diag/codes.inc, and only codes the code logs" codes

must_fail "options: fails when docs/options.md drops an option" options \
    '/^| `hold_poll_us` |/d' docs/options.md
must_fail "options: fails when docs/options.md names an option that does not exist" options \
    '/^| `revive` |/a| `revival` | `1` | 0, 1 | - |' docs/options.md
must_fail "options: fails on a wrong default" options \
    's/^| `exitcode` | `23` |/| `exitcode` | `42` |/' docs/options.md
must_fail "options: fails when an option's words in docs/options.md are not options.inc's" options \
    's/^| `log` | `warn` | `error`, `warn`, `info`, `debug` |/| `log` | `warn` | `error`, `warn`, `info`, `verbose` |/' docs/options.md
must_fail "options: fails on a launcher flag scripts/safepin does not take" options \
    's/| `--leak-check MODE` |/| `--leaks MODE` |/' README.md
run_check "options: docs/options.md's table is diag/options.inc (keys and defaults); the README's are real" options

must_fail "links: fails on a link to a missing file" links \
    's|(docs/fork.md)|(docs/forks.md)|' README.md
must_fail "links: fails on a link to a missing anchor" links \
    's|(docs/unregister.md#revival-and-the-revive-grace)|(docs/unregister.md#revival)|; s|(unregister.md#revival-and-the-revive-grace)|(unregister.md#revival)|' docs/options.md
run_check "links: every relative link of README.md and docs/*.md resolves (file and #anchor)" links

if git rev-parse --git-dir >/dev/null 2>&1; then
    head=$(git rev-parse --short=9 HEAD)
    must_fail "hashes: fails when a document names a commit of this repository" hashes \
        "1a\\
As of $head the table is this." docs/fork.md
    run_check "hashes: no document holds a commit name of this repository" hashes
else
    ok "hashes: # SKIP not a git checkout"
fi

# The boundary: padded to 300 lines the copy passes, to 301 it fails.
pad_readme() { # a copy of README.md cut or padded to $1 lines
    fresh_copy
    { head -n "$1" README.md; yes '' | head -n "$1"; } | head -n "$1" >"$TMP/copy/README.md"
}
pad_readme 300
$CHECK length "$TMP/copy" "$ROOT" >/dev/null && ok "length: a README of 300 lines passes" ||
    not_ok "length: a README of 300 lines" "fails"
pad_readme 301
out=$($CHECK length "$TMP/copy" "$ROOT")
[ $? -ne 0 ] && ok "length: fails on a README of 301 lines (says: $out)" ||
    not_ok "length: a README of 301 lines" "passes"
run_check "length: README.md is at most 300 lines ($(wc -l <README.md))" length

# log=debug's list of effective options, as this build's library prints it
# (in a shell that does nothing).
SAFEPIN_OPTIONS=log=debug LD_PRELOAD="$ROOT/$BUILD/libsafepin.so" /bin/sh -c : 2>"$TMP/debug.log" >/dev/null

# The launcher's flags, --help and manual page, the pages' version, and the
# lists checked against diag/options.inc: the files come from a copy of
# scripts/, diag/ and VERSION, broken on purpose.
must_fail_src() { # name sed-script file [check [docroot]] (under a copy of scripts/, diag/, VERSION)
    local name=$1 script=$2 file=$3 check=${4:-launcher} docroot=${5:-$ROOT} out
    rm -rf "$TMP/src" && mkdir -p "$TMP/src" && cp -r scripts diag VERSION "$TMP/src/"
    sed -i -e "$script" "$TMP/src/$file"
    if cmp -s "$TMP/src/$file" "$file"; then
        not_ok "$name" "the sed script changed nothing in $file (the self-test is stale)"; return
    fi
    out=$($CHECK "$check" "$docroot" "$TMP/src" 2>&1)
    [ $? -ne 0 ] && [ -n "$out" ] && ok "$name (says: $(echo "$out" | head -1))" ||
        not_ok "$name" "the check passed on a broken copy"
}
must_fail_src "launcher: fails when --help leaves out a flag the launcher takes" \
    '/^  --no-revive /d' scripts/safepin
must_fail_src "launcher: fails when the manual page leaves out a flag" \
    's/^\.B \\-\\-no\\-revive$/.B \\-\\-no\\-reviving/' scripts/safepin.1
must_fail_src "launcher: fails when a manual page does not carry VERSION" \
    's/.*/9.9.9/' VERSION
must_fail_src "launcher: fails when --help's list of keys leaves one out" \
    's/hold_poll_us, hold_freed\./hold_poll_us./' scripts/safepin
must_fail_src "launcher: fails when the manual page's list of keys leaves one out" \
    's/hold_poll_us, hold_freed\./hold_poll_us./' scripts/safepin.1
must_fail_src "launcher: fails when the words it accepts for --log are not options.inc's" \
    's/^words_log="error warn info debug"/words_log="error warn info debug verbose"/' scripts/safepin
# A new key in diag/options.inc that a list does not have fails it.
NEWKEY='$a SP_OPT(INT, new_key, 0, 0, 1, "a key added to options.inc and nowhere else")'
must_fail_src "options: a new key in diag/options.inc fails docs/options.md's table" \
    "$NEWKEY" diag/options.inc options
must_fail_src "launcher: a new key in diag/options.inc fails --help's and the manual page's lists" \
    "$NEWKEY" diag/options.inc launcher
must_fail_src "debuglist: a new key in diag/options.inc fails log=debug's list (of this build)" \
    "$NEWKEY" diag/options.inc debuglist "$TMP/debug.log"
run_check "launcher: scripts/safepin's flags, its --help and scripts/safepin.1 agree; --help and the page list every key of diag/options.inc; the words it accepts are options.inc's; the manual pages carry VERSION" launcher
grep -v '^==[0-9]*==safepin: options: hold_freed=' "$TMP/debug.log" >"$TMP/debug-short.log"
out=$($CHECK debuglist "$TMP/debug-short.log" "$ROOT" 2>&1)
[ $? -ne 0 ] && [ -n "$out" ] && ok "debuglist: fails on a log=debug list without a key (says: $(echo "$out" | head -1))" ||
    not_ok "debuglist: a list without a key" "the check passed"
out=$($CHECK debuglist "$TMP/debug.log" "$ROOT" 2>&1)
[ $? -eq 0 ] && ok "debuglist: log=debug prints every key of diag/options.inc, and no other" ||
    not_ok "debuglist: log=debug's list" "$(echo "$out" | tr '\n' ';')"

# ---- 2. the quick start --------------------------------------------------------
# Its commands as the README prints them (indented lines of its quick-start
# section), run in a scratch folder that sees the tree's docs/, build/ and
# scripts/. Without a CUDA toolkit the CUDA example is compiled against the
# tests' stand-in cuda.h (tests/legacy-cuda/include).
Q="$TMP/quickstart"
mkdir -p "$Q" && ln -s "$ROOT/docs" "$ROOT/scripts" "$Q/" && ln -s "$ROOT/$BUILD" "$Q/build"
sed -n '/^## Quick start/,/^\*\*What the output means/p' README.md |
    sed -n 's/^ \{6\}\(.*\)$/\1/p' >"$Q/commands"
grep -q 'quickstart.c' "$Q/commands" && grep -q 'quickstart_cuda' "$Q/commands" ||
    not_ok "quick start: the README's commands" "not found in the quick-start section"
# Joined continuation lines; the HIP and the CUDA pair.
awk '{ if (sub(/\\$/, "")) { p = p $0 } else { print p $0; p = "" } }' "$Q/commands" >"$Q/lines"
hip=$(grep -E 'quickstart(\.c| )|quickstart$' "$Q/lines" | grep -v cuda)
cuda=$(grep quickstart_cuda "$Q/lines" | sed "s|-I/usr/local/cuda/include|-I$ROOT/tests/legacy-cuda/include -I$ROOT/simcuda|")
echo "# HIP:"; echo "$hip" | sed 's/^/#   /'
echo "# CUDA:"; echo "$cuda" | sed 's/^/#   /'

# The file:line the README shows for the stacks, for each example.
want_lines() { # file: "at registered freed" line numbers as the README shows them
    sed -n '/^\*\*What the output means/,/^## /p' README.md | grep -o "$1:[0-9]*" | cut -d: -f2 | tr '\n' ' '
}
# The line of the call the example's comment marks (the free), and of the register.
src_line() { grep -n "$2" "docs/examples/$1" | head -1 | cut -d: -f1; }

# The lines the README shows for the HIP example, in the order it prints
# them: at, registered, freed.
shown=$(want_lines quickstart.c)
echo "# the README shows quickstart.c lines: $shown"

run_example() { # name commands source
    local name=$1 cmds=$2 src=$3 out rc
    out=$(cd "$Q" && bash -c "$cmds" 2>&1); rc=$?
    echo "$out" | head -3 | sed 's/^/#   /'
    local got
    got=$(echo "$out" | grep -o "$src:[0-9]*" | cut -d: -f2 | tr '\n' ' ')
    local reg freed
    reg=$(src_line "$src" 'HostRegister(buf')
    freed=$(src_line "$src" 'free(buf);')
    # The CUDA example's lines are its own; its register line must be the
    # source's, and its stacks the shape of the HIP example's.
    local want=$shown
    [ "$src" = quickstart.c ] || want=$(echo "$got" | awk -v r="$reg" '{ print $1, r, $1 " " }')
    if [ $rc -eq 23 ] && echo "$out" | grep -q '^done$' &&
       echo "$out" | grep -q '==safepin: freed-while-registered: free(' &&
       echo "$out" | grep -q '==safepin: strict: 1 violation(s): exit status 23' &&
       [ "$got" = "$want" ] && [ "$(echo "$got" | cut -d' ' -f2)" = "$reg" ] &&
       [ "$(echo "$got" | cut -d' ' -f1)" = "$freed" ]; then
        ok "quick start, $name: builds, prints done, freed-while-registered with $src lines $got(as the README shows: the free's line, the register's), exit 23"
    else
        not_ok "quick start, $name" "exit $rc (want 23), stack lines '$got' (want '$want', registered at $reg, freed at $freed)"
    fi
}
run_example HIP "$hip" quickstart.c
run_example CUDA "$cuda" quickstart_cuda.c

# Without safepin the program prints done and exits 0, as the README says.
out=$(cd "$Q" && LD_LIBRARY_PATH=build/simhip ./quickstart 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$out" = done ] &&
    ok "quick start: without safepin the example prints done and exits 0, silently" ||
    not_ok "quick start: without safepin" "exit $rc, output: $(echo "$out" | head -2 | tr '\n' ' ')"

echo "# docs: $FAILS failed"
[ "$FAILS" -eq 0 ]
