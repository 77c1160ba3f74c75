#!/bin/bash
# cmp.sh PROG [args] : bare vs safepin, 3 personalities, 3 runs each; prints differences
cd "$(dirname "$0")/../.." || exit 1
B=build/tests/break/$1; shift
for pers in ${PERS:-current legacy rocm7}; do
  for i in 1 2 3; do
    o1=$(timeout -k 2 ${TO:-20} env SIMHIP_PERSONALITY=$pers LD_LIBRARY_PATH=build/simhip $EXTRA "$B" "$@" 2>/tmp/brk.e1); r1=$?
    o2=$(timeout -k 2 ${TO:-20} env SIMHIP_PERSONALITY=$pers LD_LIBRARY_PATH=build/simhip LD_PRELOAD=$PWD/build/libsafepin.so $EXTRA "$B" "$@" 2>/tmp/brk.e2); r2=$?
    if [ "$o1" != "$o2" ] || [ $r1 != $r2 ]; then
      echo "DIFF [$pers run $i] $(basename $B) $*: bare rc=$r1 sp rc=$r2"; diff <(echo "$o1") <(echo "$o2") | head -20; echo "-- sp stderr:"; grep "safepin: [a-z-]*:" /tmp/brk.e2 | head -5; echo "-- bare stderr:"; head -c 600 /tmp/brk.e1
    else echo "same [$pers run $i] rc=$r1 $(echo "$o1" | tr '\n' '|' | head -c 200)"; fi
  done
done
