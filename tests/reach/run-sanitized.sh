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
rt() { local p; p=$(${CC:-gcc} -print-file-name="$1"); [ -f "$p" ] && echo "$p"; }
BAD='ERROR: AddressSanitizer|runtime error:|WARNING: ThreadSanitizer|ERROR: LeakSanitizer'
for san in $SANITIZERS; do
    lib=build/$san/libsafepin.so
    if [ ! -f "$lib" ]; then echo "not ok - reach [$san]: missing $lib"; FAILED=1; continue; fi
    case $san in
    asan) runtime=$(rt libasan.so); env="ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:halt_on_error=1" ;;
    ubsan) runtime=$(rt libubsan.so); env="UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1" ;;
    tsan) runtime=$(rt libtsan.so); env="TSAN_OPTIONS=halt_on_error=1" ;;
    esac
    if [ -z "$runtime" ]; then echo "not ok - reach [$san]: no runtime library"; FAILED=1; continue; fi
    SAFEPIN_LIB=$lib REACH_PRELOAD_FIRST="$runtime" REACH_ENV="$env" REACH_BAD="$BAD" \
        REACH_PERS=legacy REACH_TAG=$san bash tests/reach/run.sh || FAILED=1
    SAFEPIN_LIB=$lib REACH_PRELOAD_FIRST="$runtime" REACH_ENV="$env" REACH_BAD="$BAD" \
        REACH_DLVSYM_ONLY=1 REACH_TAG=$san bash tests/reach-cuda/run.sh || FAILED=1
done
exit $FAILED
