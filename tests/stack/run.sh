#!/bin/bash
# tests/stack/run.sh - the stack each hook takes from the program's thread
# (DESIGN G12), on simhip (both personalities) and simcuda. TAP lines.
#
#   measure: stack_hooks measure, bare and under safepin (log=warn, the
#     default, and log=debug; symbolize on, backtrace=8): each call's
#     high-water mark on the calling thread. What safepin takes from a
#     thread's stack is the call's extra depth plus the stack its static
#     TLS takes from every thread (the "usable" line, bare minus safepin);
#     together they must stay within STACK_BUDGET bytes. The misuse that makes safepin speak
#     (a double unregister, a device free of a host pointer) aborts the bare
#     runtime: it is measured against the bare depth of unregister-unknown
#     (the runtime's refusal of the same kind of call).
#   first: the same, each call the first of its hook in a fresh process
#     (stack_hooks first, STACK_ONLY=name): symbol binding and first-use
#     setup count too (log=warn).
#   small: stack_hooks small, every call from a PTHREAD_STACK_MIN thread,
#     bare and under safepin at every log level: no crash, "OK".
#
#   BUILD=build  SAFEPIN_LIB=$BUILD/libsafepin.so  STACK_BUDGET=3072
#   STACK_PARTS="measure first small"
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
LIB=${SAFEPIN_LIB:-$BUILD/libsafepin.so}
BUDGET=${STACK_BUDGET:-3072}
PARTS=${STACK_PARTS:-measure first small}
BIN=$BUILD/tests/stack
export LD_LIBRARY_PATH=$BUILD/simhip:$BUILD/simcuda

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

# face personality preload log misuse mode: the program's output
run() {
    SIMHIP_PERSONALITY=$2 LD_PRELOAD=$3 SAFEPIN_OPTIONS="log=$4:symbolize=1" STACK_MISUSE=$5 \
        timeout 120 "$BIN/stack_hooks_$1" "$6" 2>/dev/null
    echo "rc=$?"
}

configs="hip:current hip:legacy cuda:current"

# check TAG BARE_OUT SAFEPIN_OUT: one TAP line per "depth" line of SAFEPIN_OUT
check() {
    local tag=$1 bare=$2 out=$3 tls ub us base depth extra
    ub=$(awk '$1 == "usable" {print $2}' <<<"$bare")
    us=$(awk '$1 == "usable" {print $2}' <<<"$out")
    tls=$((ub - us))
    while read -r _ name depth; do
        base=$(awk -v n="$name" '$1 == "depth" && $2 == n {print $3}' <<<"$bare")
        [ -z "$base" ] && base=$(awk '$1 == "depth" && $2 == "unregister-unknown" {print $3}' <<<"$bare")
        extra=$((depth - base + tls))
        echo "# $tag $name: bare $base, safepin $depth, static TLS $tls, extra $extra"
        if [ "$extra" -le "$BUDGET" ]; then
            ok "$tag: $name takes $extra bytes more stack (budget $BUDGET)"
        else
            notok "$tag: $name takes $extra bytes more stack, over the budget of $BUDGET"
        fi
    done < <(grep '^depth ' <<<"$out")
}

if [[ " $PARTS " == *" measure "* ]]; then
    echo "# extra stack per hook under safepin, bytes (budget $BUDGET)"
    for c in $configs; do
        face=${c%%:*} pers=${c#*:}
        bare=$(run "$face" "$pers" "" warn 0 measure)
        if ! grep -q '^OK' <<<"$bare"; then
            notok "measure $face/$pers bare: the program did not finish ($(tail -1 <<<"$bare"))"
            continue
        fi
        for log in warn debug; do
            out=$(run "$face" "$pers" "$LIB" "$log" 1 measure)
            tag="measure $face/$pers log=$log"
            if ! grep -q '^OK' <<<"$out"; then
                notok "$tag: the program did not finish ($(tail -1 <<<"$out"))"
                continue
            fi
            check "$tag" "$bare" "$out"
        done
    done
fi

if [[ " $PARTS " == *" first "* ]]; then
    echo "# extra stack of each hook's first call in the process, bytes (budget $BUDGET)"
    for c in $configs; do
        face=${c%%:*} pers=${c#*:}
        names=$(STACK_ONLY= run "$face" "$pers" "" warn 0 measure | awk '$1 == "depth" {print $2}')
        for name in $names; do
            bare=$(STACK_ONLY=$name run "$face" "$pers" "" warn 0 first)
            out=$(STACK_ONLY=$name run "$face" "$pers" "$LIB" warn 0 first)
            tag="first $face/$pers"
            if ! grep -q '^OK' <<<"$bare" || ! grep -q '^OK' <<<"$out"; then
                notok "$tag $name: the program did not finish (bare: $(tail -1 <<<"$bare"); safepin: $(tail -1 <<<"$out"))"
                continue
            fi
            check "$tag" "$bare" "$out"
        done
    done
fi

if [[ " $PARTS " == *" small "* ]]; then
    for c in $configs; do
        face=${c%%:*} pers=${c#*:}
        out=$(run "$face" "$pers" "" warn 0 small)
        if grep -q '^OK' <<<"$out"; then
            ok "small $face/$pers bare: every call from a PTHREAD_STACK_MIN thread"
        else
            notok "small $face/$pers bare: $(grep '^done' <<<"$out" | tail -1 | sed 's/^done/stopped after/') ($(tail -1 <<<"$out"))"
        fi
        for log in error warn info debug; do
            out=$(run "$face" "$pers" "$LIB" "$log" 1 small)
            tag="small $face/$pers log=$log"
            if grep -q '^OK' <<<"$out"; then
                ok "$tag: every call from a PTHREAD_STACK_MIN thread under safepin"
            else
                last=$(grep '^done' <<<"$out" | tail -1)
                notok "$tag: ${last:+stopped after ${last#done }, }$(tail -1 <<<"$out")"
            fi
        done
    done
fi
