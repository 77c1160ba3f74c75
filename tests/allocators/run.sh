#!/bin/bash
# tests/allocators/run.sh - safepin with other allocators (issue 12, item 4).
# TAP lines.
#
# For jemalloc, tcmalloc and mimalloc (Debian packages, scripts/install-deps):
# - preloaded AFTER safepin (LD_PRELOAD="libsafepin.so <allocator>"): the
#   program's malloc is the allocator's (checked with which_malloc), its
#   free() reaches safepin first, and the legacy suite's with-safepin half
#   passes as with glibc's allocator, both personalities, with no
#   free-not-hooked diagnostic;
# - preloaded BEFORE safepin: the allocator answers free() and safepin's
#   hook is never reached. safepin must say so, once, at start
#   (free-not-hooked, naming the allocator), rather than silently protect
#   nothing: stale_free shows the hazard it then cannot prevent; but in a
#   process with no runtime to protect (no_runtime: a library exporting one
#   HIP name, no register function) it says nothing, as bare.
# And a unit test linked with a mock of three HIP functions (mock_runtime)
# exits in strict mode as bare: the mock is said to be incomplete, no
# violation.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
LIB=$BUILD/libsafepin.so
SIM=$BUILD/simhip
WHICH=$BUILD/tests/allocators/which_malloc
FAILED=0
T_ERR=$(mktemp)
ok() { echo "ok - $1"; }
nok() { echo "not ok - $1: $2"; FAILED=1; }

find_lib() { # soname -> path, from the loader's cache
    /sbin/ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n && $NF ~ /^\// { print $NF; exit }'
}

ALLOCATORS=${ALLOCATORS:-"jemalloc:libjemalloc.so.2 tcmalloc:libtcmalloc_minimal.so.4 mimalloc:libmimalloc.so.2"}
for entry in $ALLOCATORS; do
    name=${entry%%:*} soname=${entry#*:}
    alloc=$(find_lib "$soname")
    if [ -z "$alloc" ]; then
        nok "$name" "$soname not installed (scripts/install-deps installs it)"; continue
    fi

    # It is the program's allocator, and safepin still sees free().
    out=$(LD_PRELOAD="$LIB $alloc" LD_LIBRARY_PATH=$SIM "$WHICH" 2>&1)
    if echo "$out" | grep -q "^malloc $alloc\$" && echo "$out" | grep -q "^free .*libsafepin.so\$"; then
        ok "$name after safepin: malloc is $name's, free reaches safepin"
    else
        nok "$name after safepin: malloc is $name's, free reaches safepin" "$(echo $out)"
    fi

    # The legacy suite under safepin with the allocator after it.
    # (fork_freed rests on glibc giving a freed block's mapping back at once,
    # which these allocators do not, bare too; fork_threads' 60 forks with
    # threads on each side outrun the per-run timeout under some of them.)
    LEGACY_PARTS=safepin LEGACY_PRELOAD_LAST="$alloc" LEGACY_TAG="$name" \
        LEGACY_EXCEPT="fork_freed fork_threads" \
        LEGACY_BAD_PATTERN='free-not-hooked' BUILD=$BUILD bash tests/legacy/run.sh |
        grep --line-buffered -v '^1\.\.'
    [ "${PIPESTATUS[0]}" -eq 0 ] || FAILED=1

    # Preloaded before safepin: said once, at start.
    log=$(mktemp)
    LD_PRELOAD="$alloc $LIB" LD_LIBRARY_PATH=$SIM timeout 60 "$BUILD/tests/legacy/stale_free" >"$log" 2>&1
    n=$(grep -c "^==[0-9]*==safepin: free-not-hooked: free() resolves to $alloc" "$log")
    first=$(grep -m1 -n "==safepin:" "$log" | cut -d: -f1)
    said=$(grep -m1 -n "free-not-hooked" "$log" | cut -d: -f1)
    if [ "$n" -eq 1 ] && [ "$first" = "$said" ]; then
        ok "$name before safepin: free-not-hooked said once, first"
    else
        nok "$name before safepin: free-not-hooked said once, first" "said $n times (first safepin line $first, warning at ${said:-none})"
    fi
    # ... but not in a process with no runtime: output as bare, nothing more.
    bare=$(LD_PRELOAD="$alloc" timeout 60 "$BUILD/tests/allocators/no_runtime" 2>&1; echo "rc=$?")
    under=$(LD_PRELOAD="$alloc $LIB" SAFEPIN_OPTIONS=log=info timeout 60 "$BUILD/tests/allocators/no_runtime" 2>&1; echo "rc=$?")
    if [ "$bare" = "$under" ] && [ "$bare" = "$(printf 'stub\nrc=0')" ]; then
        ok "$name before safepin, no runtime (a library with one HIP name): output as bare, nothing said"
    else
        nok "$name before safepin, no runtime: output as bare" "bare: $(echo $bare) | safepin: $(echo $under | cut -c1-200)"
    fi
    # ... and with safepin first, it is not said.
    LD_PRELOAD="$LIB $alloc" LD_LIBRARY_PATH=$SIM timeout 60 "$BUILD/tests/legacy/stale_free" >"$log" 2>&1
    if grep -q free-not-hooked "$log"; then
        nok "$name after safepin: no free-not-hooked" "$(grep -m1 free-not-hooked "$log")"
    else
        ok "$name after safepin: no free-not-hooked"
    fi
    rm -f "$log"
done

# A unit test linked with a mock of three HIP functions: in strict mode its
# exit status and output are bare's; safepin says runtime-incomplete, a
# notice, and no violation.
M=$BUILD/tests/allocators/mock_runtime
bare=$(timeout 60 "$M" 2>/dev/null; echo "rc=$?")
under=$(LD_PRELOAD=$LIB SAFEPIN_OPTIONS=strict=1 timeout 60 "$M" 2>"$T_ERR"; echo "rc=$?")
if [ "$bare" = "$under" ] && [ "$bare" = "$(printf 'register 0 unregister 0 free 0 calls 3\nrc=0')" ] &&
    grep -q "safepin: runtime-incomplete: " "$T_ERR" && ! grep -q "runtime-error" "$T_ERR"; then
    ok "a mock of three HIP functions, strict: exit and output as bare, runtime-incomplete said"
else
    nok "a mock of three HIP functions, strict: exit and output as bare" "bare: $(echo $bare) | safepin: $(echo $under) $(head -c 300 "$T_ERR")"
fi
rm -f "$T_ERR"
exit $FAILED
