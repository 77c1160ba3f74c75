#!/bin/bash
# tests/legacy-cuda/run-sanitized.sh - the with-safepin half of run.sh on
# the sanitizer builds of safepin (make SAN=asan|ubsan|tsan san-all): the
# plain programs and simcuda, build/<san>/libsafepin.so preloaded with its
# sanitizer runtime. A sanitizer report in a run is a failure, as is
# everything run.sh checks. TAP output.
#
# Preload order: the sanitizer runtime first (it must be), then safepin.
# Its allocator then answers malloc/free itself, so safepin cannot see the
# program's free(): lost_writes_free (G7 through free) is left to the plain
# run and to the ASan run with safepin first (verify_asan_link_order=0),
# which the HIP suite uses too. fork_child rests on glibc's allocator (a
# freed 1 MiB block's mapping given back at once; malloc in a child of a
# multi-threaded parent): ASan's and TSan's allocators keep both, without
# safepin too, so it runs in the plain and UBSan runs only.
cd "$(dirname "$0")/../.." || exit 1
SANITIZERS=${SANITIZERS:-asan ubsan tsan}
FAILED=0
. tests/common/sanitizers.sh
BAD=$SAN_BAD
for san in $SANITIZERS; do
    lib=build/$san/libsafepin.so
    if [ ! -f "$lib" ]; then echo "not ok - legacy-cuda [$san]: missing $lib"; FAILED=1; continue; fi
    san_setup "$san"
    runtime=$SAN_RUNTIME env=$SAN_ENV
    if [ "$san" = asan ]; then
        # safepin first, so that free() reaches its hook.
        LEGACY_PARTS=safepin SAFEPIN_LIB=$lib LEGACY_PRELOAD_LAST="$runtime" LEGACY_TAG=$san \
            LEGACY_BAD_PATTERN="$BAD" LEGACY_ENV="$env" LEGACY_EXCEPT="fork_child" \
            bash tests/legacy-cuda/run.sh || FAILED=1
    else
        except="lost_writes_free"
        # fork_ways' raw fork system call runs none of TSan's fork handlers.
        # last_thread_exit's main ends with the exit system call: TSan's
        # background thread (started at the first pthread_create, the
        # reaper's) keeps the process alive.
        [ "$san" = tsan ] && except="$except fork_child fork_ways last_thread_exit"
        LEGACY_PARTS=safepin SAFEPIN_LIB=$lib LEGACY_PRELOAD_FIRST="$runtime" LEGACY_TAG=$san \
            LEGACY_BAD_PATTERN="$BAD" LEGACY_ENV="$env" LEGACY_EXCEPT="$except" \
            bash tests/legacy-cuda/run.sh || FAILED=1
    fi
done
exit $FAILED
