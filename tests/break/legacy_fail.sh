#!/bin/bash
# legacy programs that are clean bare in a personality, with safepin-internal calls failing
cd "$(dirname "$0")/../.." || exit 1
for spec in ${SPECS:-event_create:1+ event_record:1+ event_sync:1+ event_create:0.5 event_record:0.3 unregister:2}; do
 for prog in ${PROGS:-unreg_busy_stream unreg_free_reuse reregister_larger unreg_visibility stream_destroyed pending_copy own_capture_register neighbour_free cancel_in_wait relaxed_unregister_in_capture}; do
  for pers in ${PERS:-current rocm7}; do
   o1=$(timeout -k 2 20 env SIMHIP_FAIL=$spec SIMHIP_PERSONALITY=$pers LD_LIBRARY_PATH=build/simhip build/tests/legacy/$prog 2>&1 | tail -1); r1=$?
   o2=$(timeout -k 2 20 env SIMHIP_FAIL=$spec SIMHIP_PERSONALITY=$pers LD_LIBRARY_PATH=build/simhip LD_PRELOAD=$PWD/build/libsafepin.so SAFEPIN_OPTIONS=summary=0 build/tests/legacy/$prog 2>/tmp/lf.err | tail -1); r2=${PIPESTATUS[0]}
   r1=$(timeout -k 2 20 env SIMHIP_FAIL=$spec SIMHIP_PERSONALITY=$pers LD_LIBRARY_PATH=build/simhip build/tests/legacy/$prog >/dev/null 2>&1; echo $?)
   r2=$(timeout -k 2 20 env SIMHIP_FAIL=$spec SIMHIP_PERSONALITY=$pers LD_LIBRARY_PATH=build/simhip LD_PRELOAD=$PWD/build/libsafepin.so SAFEPIN_OPTIONS=summary=0 build/tests/legacy/$prog >/tmp/lf.out 2>/tmp/lf.err; echo $?)
   if [ "$r1" != "$r2" ]; then echo "DIFF $spec $prog $pers: bare $r1 sp $r2"; grep -v '^ ' /tmp/lf.err | head -4; else echo "same $spec $prog $pers rc=$r1"; fi
  done
 done
done
