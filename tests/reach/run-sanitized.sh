#!/bin/bash
# tests/reach/run-sanitized.sh - the dlvsym reach suites (tests/reach/run.sh
# for HIP, the dlvsym part of tests/reach-cuda/run.sh for the driver) with
# the sanitizer builds of safepin (make SAN=asan|ubsan|tsan san-all): the
# plain programs, simhip and simcuda, build/<san>/libsafepin.so preloaded
# after its sanitizer runtime; HIP in one personality (ROCm 5.2, where the
# hazard is a device fault). A sanitizer report in a run is a failure, as
# is everything run.sh checks. TAP output.
cd "$(dirname "$0")/../.." || exit 1
SANITIZERS=${SANITIZERS:-asan ubsan tsan}
FAILED=0
. tests/common/sanitizers.sh
BAD=$SAN_BAD
for san in $SANITIZERS; do
    lib=build/$san/libsafepin.so
    if [ ! -f "$lib" ]; then echo "not ok - reach [$san]: missing $lib"; FAILED=1; continue; fi
    san_setup "$san"
    runtime=$SAN_RUNTIME env=$SAN_ENV
    if [ -z "$runtime" ]; then echo "not ok - reach [$san]: no runtime library"; FAILED=1; continue; fi
    SAFEPIN_LIB=$lib REACH_PRELOAD_FIRST="$runtime" REACH_ENV="$env" REACH_BAD="$BAD" \
        REACH_PERS=legacy REACH_TAG=$san bash tests/reach/run.sh || FAILED=1
    SAFEPIN_LIB=$lib REACH_PRELOAD_FIRST="$runtime" REACH_ENV="$env" REACH_BAD="$BAD" \
        REACH_DLVSYM_ONLY=1 REACH_TAG=$san bash tests/reach-cuda/run.sh || FAILED=1
done
exit $FAILED
