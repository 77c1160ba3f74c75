#!/bin/bash
# tests/exports/run.sh - the one list of hooked functions (hip/hip.inc,
# cuda/cuda_real.inc, interpose/libc.inc), the export map the build makes
# ($BUILD/gen/libsafepin.map: interpose/libsafepin.map with each face's
# <face>/exports.map) and what libsafepin.so really exports must name the
# same functions; interpose/'s own map names libc's alone. Prints TAP
# lines ("ok - ..." / "not ok - ...: why").
#
#   BUILD=build    where libsafepin.so is
#
# The list is read through the C preprocessor, with the same macros the
# sources use, so a line the build sees is a line this test sees. The
# comparison is first shown failing on a map with one name dropped and one
# added, so that a test that cannot fail is not counted as a pass.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
LIB=$BUILD/libsafepin.so
MAP=$BUILD/gen/libsafepin.map
FAILS=0
ok()     { echo "ok - $1"; }
not_ok() { echo "not ok - $1: $2"; FAILS=$((FAILS+1)); }

# The names the list exports: HOOK lines of hip.inc and of the CUDA face's
# cuda/cuda_real.inc, every line of libc.inc.
list_names() {
    printf '%s\n' \
        '#define SP_HIP(kind, need, ret, name, params, args, logic) HIP_##kind name' \
        '#define SP_LIBC(kind, ret, name, params) LIBC name' \
        '#define SP_CU(kind, ret, name, params) CU_##kind name' \
        '#include "hip.inc"' '#include "libc.inc"' '#include "cuda_real.inc"' |
        cpp -P -Ihip -Iinterpose -Icuda - |
        awk '$1 == "HIP_HOOK" || $1 == "LIBC" || $1 == "CU_HOOK" || $1 == "CU_RT" { print $2 }' | sort
}
# The global names of a version script (between "global:" and "local:",
# comments of any number of lines left out).
map_names() {
    perl -0777 -pe 's{/\*.*?\*/}{}gs' "$1" | tr ';' '\n' |
        awk '/global:/ { on = 1; sub(/.*global:/, "") } /local:/ { on = 0 } on' |
        tr -d ' \t{}' | grep -v '^$' | sort
}
# The dynamic symbols libsafepin.so defines (default visibility).
lib_names() {
    nm -D --defined-only "$1" | awk '$2 ~ /^[TtWiV]$/ { sub(/@.*/, "", $3); print $3 }' | sort -u
}
# same NAME A B: ok when the two sorted lists are equal, else the difference.
same() {
    local d
    d=$(diff <(echo "$2") <(echo "$3") | grep '^[<>]' | tr '\n' ' ')
    if [ -z "$d" ]; then ok "$1"; else not_ok "$1" "differ ('<' list only, '>' other only): $d"; fi
}

LIST=$(list_names)
n=$(echo "$LIST" | grep -c .)
if [ "$n" -lt 20 ]; then
    not_ok "the list is read" "only $n names from hip/hip.inc and libc.inc"
fi

# The comparison can fail: a map that lost hipFree and gained a stray name.
BAD=$(mktemp)
trap 'rm -f "$BAD"' EXIT
sed -e 's/ hipFree;/ /' -e 's/global:/global:\n    sp_stray;/' "$MAP" >"$BAD"
if [ "$(same probe "$LIST" "$(map_names "$BAD")" | cut -c1-6)" = "not ok" ]; then
    ok "a map that disagrees with the list is caught (hipFree dropped, sp_stray added)"
else
    not_ok "a map that disagrees with the list is caught" "the altered map passed"
fi

if [ -f "$MAP" ]; then
    same "$MAP names exactly the functions of hip/hip.inc (HOOK), cuda/cuda_real.inc (HOOK, RT) and libc.inc" \
        "$LIST" "$(map_names "$MAP")"
else
    not_ok "$MAP names exactly the functions of the list" "no $MAP (make first)"
fi
LIBC=$(printf '%s\n' '#define SP_LIBC(kind, ret, name, params) LIBC name' '#include "libc.inc"' |
    cpp -P -Iinterpose - | awk '$1 == "LIBC" { print $2 }' | sort)
same "interpose/libsafepin.map names libc's functions alone (each face's are in its exports.map)" \
    "$LIBC" "$(map_names interpose/libsafepin.map)"
if [ -f "$LIB" ]; then
    same "$LIB exports exactly the functions of the list" "$LIST" "$(lib_names "$LIB")"
else
    not_ok "$LIB exports exactly the functions of the list" "no $LIB (make first)"
fi
exit $((FAILS > 0))
