#!/bin/bash
# tests/legacy/run-sanitized.sh - the with-safepin half of tests/legacy/run.sh
# on the sanitizer builds (make SAN=asan|ubsan|tsan all), TAP output.
#
#   ASan, UBSan: every legacy program, all three personalities, under safepin
#                (build/<san>/libsafepin.so on build/<san>/simhip, programs
#                from build/<san>/tests/legacy).
#   TSan:        every legacy program once in two personalities (current,
#                legacy; TSAN_SAFEPIN_PERS) under the
#                TSan-built safepin, and the two racy programs (two threads
#                x 3000 register/unregister, the attribute-query race) 20
#                runs in a row. The two whose correctness rests on safepin
#                seeing free() run with the plain safepin preloaded before
#                the TSan runtime (TSan's allocator would answer free()
#                first otherwise).
#
# A sanitizer report in a run is a failure, as is everything run.sh checks.
# The table of programs and expectations lives in run.sh.
#
# Preload order. UBSan and TSan: the sanitizer runtime first, then safepin.
# ASan: safepin first (verify_asan_link_order=0) when that works, because
# only then does the program's free() reach safepin's hook; a probe run
# decides. With the ASan runtime first, ASan's allocator answers free()
# itself (an allocator that bypasses libc, which safepin cannot see): the
# programs whose correctness rests on safepin deferring free() (G2, G7) are
# then reported as "# SKIP" with that reason, and everything else runs.
#
#   SANITIZERS="asan ubsan tsan"   which ones to run
#   TSAN_PERSONALITIES=current     personalities of the TSan loops ("current legacy")
#   LEGACY_ASAN_ORDER=safepin-first  skip the probe, preload safepin first
cd "$(dirname "$0")/../.." || exit 1
SANITIZERS=${SANITIZERS:-asan ubsan tsan}
RUN=tests/legacy/run.sh
FAILED=0

rt() { # the sanitizer runtime, as the compiler names it
    local p; p=$(${CC:-gcc} -print-file-name="$1")
    [ -f "$p" ] && echo "$p"
}

missing() { # san: what is missing from build/<san>, if anything
    local b=build/$1 f
    for f in "$b/libsafepin.so" "$b/simhip/libamdhip64.so.5"; do
        [ -f "$f" ] || { echo "$f"; return; }
    done
    compgen -G "$b/tests/legacy/*" >/dev/null || echo "$b/tests/legacy/"
}

# Programs that need safepin to see free() (deferred free, freed-while-registered);
# skipped where a sanitizer's allocator answers free() first.
FREE_PROGRAMS="unreg_free_reuse stale_free"
# Programs that rest on glibc's allocator giving a freed block's mapping back
# to the system at once: a sanitizer's allocator keeps it (quarantine), bare
# too, so they are left out of every sanitized run.
ALLOC_PROGRAMS="fork_freed"
# Programs that unmap a span over a hole they made earlier, with calls in
# between: ASan's runtime places its own small mappings in such a hole
# meanwhile and the program's munmap takes them (a crash without safepin
# too), so ASan leaves them out.
ASAN_HOLE_PROGRAMS="hole_in_range_unmap"
# Programs whose forked children allocate while the parent has other threads:
# gcc 12's ASan allocator keeps its locks across fork (a child can hang in
# malloc, without safepin too: seen in fork_threads), so ASan leaves them out.
ASAN_FORK_PROGRAMS="fork_reregister fork_inherit fork_threads fork_pending_child"
# Programs whose forked children start threads, or that fork hundreds of
# times beside busy threads: gcc 12's TSan runtime mistakes a child's new
# thread for a live one ("dup thread with used id") and can hang in a child
# on its own locks, without safepin too, so TSan leaves them out.
# two_dev_launches' doorbell kernel polls host memory through the simulated
# device's plain copy while the host stores to it atomically: a race by
# TSan's reading of the test's own device model, not of safepin's.
# fork_raw and fork_raw_threads fork with a raw system call while threads
# run (safepin's reaper, the program's): no handler of TSan's runs, so
# TSan's child still counts the parent's threads (it reports their last
# accesses as races with the child's) or waits on TSan's own locks.
# hole_in_range_unmap: as under ASan, the runtime's own mapping lands in the
# program's hole: simhip starts a stream thread for the kernels launched
# after the tail's unmap, TSan maps that thread's dynamic-TLS table at its
# first __tls_get_addr, the kernel places it in the hole, the program's
# munmap of its original span takes it, and TSan faults in DTLS_Destroy
# when the thread ends (seen in gdb: the faulting address is in the hole).
# Where the kernel places it depends on the layout, with or without safepin.
TSAN_FORK_PROGRAMS="fork_hang fork_inherit fork_threads two_dev_launches fork_raw fork_raw_threads hole_in_range_unmap"
PROBE_LOG=build/asan/test-logs/legacy-asan-probe.log

# Does an ASan program start and run correctly with safepin preloaded ahead of
# the ASan runtime? (A shim that runs before ASan is initialized crashes.)
asan_safepin_first_works() {
    mkdir -p "$(dirname "$PROBE_LOG")"
    { timeout -k 5 30 env ASAN_OPTIONS="${ASAN_OPTIONS_LEGACY}" \
        LD_LIBRARY_PATH=build/asan/simhip LD_PRELOAD="build/asan/libsafepin.so $runtime" \
        build/asan/tests/legacy/unreg_free_reuse >"$PROBE_LOG" 2>&1; } 2>/dev/null &&
        grep -qx OK "$PROBE_LOG"
}
ASAN_OPTIONS_LEGACY=detect_leaks=0:verify_asan_link_order=0:abort_on_error=0:halt_on_error=1

run_legacy() { # run.sh on build/$san with the sanitizer's envs, then these
    # exit_in_signal calls exit() from a signal handler (undefined
    # behaviour that works bare); the sanitizer runtimes' own exit paths are
    # not made for it, so it runs in the plain suite only.
    env "${envs[@]}" BUILD="build/$san" LEGACY_BAD_PATTERN="$bad" LEGACY_EXCEPT="exit_in_signal $ALLOC_PROGRAMS" "$@" \
        bash "$RUN" | grep --line-buffered -v '^1\.\.'
    [ "${PIPESTATUS[0]}" -eq 0 ] || FAILED=1
}

for san in $SANITIZERS; do
    case $san in
    asan)
        lib=libasan.so
        bad='ERROR: AddressSanitizer|AddressSanitizer:DEADLYSIGNAL|==[0-9]+==ERROR: '
        envs=(ASAN_OPTIONS=$ASAN_OPTIONS_LEGACY
              LEGACY_PARTS=safepin LEGACY_TIMEOUT=60) ;;
    ubsan)
        lib=libubsan.so
        bad='runtime error: |UndefinedBehaviorSanitizer'
        envs=(UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
              LEGACY_PARTS=safepin LEGACY_TIMEOUT=60) ;;
    tsan)
        lib=libtsan.so
        bad='WARNING: ThreadSanitizer|ThreadSanitizer: |FATAL: ThreadSanitizer'
        # die_after_fork=0: the fork programs' children start threads (the
        # runtime's, safepin's reaper, their own), which TSan refuses after
        # a fork of a multi-threaded process unless told otherwise.
        envs=("TSAN_OPTIONS=halt_on_error=1 report_signal_unsafe=0 die_after_fork=0"
              "LEGACY_PARTS=safepin repeat"
              LEGACY_REPEAT=20 "LEGACY_REPEAT_PERS=${TSAN_PERSONALITIES:-current}"
              "LEGACY_PERS=${TSAN_SAFEPIN_PERS:-current legacy}"
              LEGACY_TIMEOUT=120) ;;
    *)
        echo "not ok - legacy [$san]: unknown sanitizer"; FAILED=1; continue ;;
    esac
    what=$(missing "$san")
    if [ -n "$what" ]; then
        echo "not ok - legacy [$san]: missing $what (make SAN=$san all)"; FAILED=1; continue
    fi
    runtime=$(rt "$lib")
    if [ -z "$runtime" ]; then
        echo "not ok - legacy [$san]: no $lib from ${CC:-gcc} -print-file-name"; FAILED=1; continue
    fi
    first=$runtime
    last=
    skip=() # run.sh variables for programs skipped or left out
    if [ "$san" = tsan ]; then
        # The TSan-built safepin must come after the TSan runtime (its
        # instrumented shims would run before TSan is set up), and TSan's
        # allocator then answers free() ahead of safepin: the free()
        # programs run in the second pass below instead.
        # A TSan process never ends once its main thread has exited
        # (pthread_exit, or the exit system call: last_thread_exit) if it ever
        # made a thread: TSan starts a background thread of its own at the
        # first pthread_create (here the reaper's; a program's own would do
        # the same bare), and that thread keeps the process alive.
        skip=("LEGACY_EXCEPT=$FREE_PROGRAMS exit_in_signal $ALLOC_PROGRAMS $TSAN_FORK_PROGRAMS" "LEGACY_SKIP=main_pthread_exit last_thread_exit"
              "LEGACY_SKIP_WHY=TSan's background thread, started at the first pthread_create, keeps a process alive after its main thread exits")
    fi
    if [ "$san" = asan ]; then
        if [ "${LEGACY_ASAN_ORDER:-}" = safepin-first ] || asan_safepin_first_works; then
            first=
            last=$runtime
            echo "# asan: preloading safepin before the ASan runtime"
        else
            echo "# asan: safepin before the ASan runtime does not start (see $PROBE_LOG);"
            echo "#       ASan runtime first: its allocator takes free() from safepin"
            skip=("LEGACY_SKIP=$FREE_PROGRAMS"
                  "LEGACY_SKIP_WHY=ASan's allocator answers free() ahead of safepin (runtime-first preload; see run-sanitized.sh)")
        fi
    fi
    [ "$san" = asan ] && skip+=("LEGACY_EXCEPT=exit_in_signal $ALLOC_PROGRAMS $ASAN_FORK_PROGRAMS $ASAN_HOLE_PROGRAMS")
    run_legacy "${skip[@]}" SAFEPIN_LIB="build/$san/libsafepin.so" \
        LEGACY_PRELOAD_FIRST="$first" LEGACY_PRELOAD_LAST="$last" LEGACY_TAG="$san"
    if [ "$san" = tsan ]; then
        # The free() programs, TSan-built, with the plain safepin preloaded
        # before the TSan runtime: safepin sees free() and defers it, and
        # TSan watches the program and the device for the reuse race.
        if [ ! -f build/libsafepin.so ]; then
            echo "not ok - legacy [tsan, plain safepin first]: missing build/libsafepin.so (make all)"
            FAILED=1; continue
        fi
        run_legacy LEGACY_PARTS=safepin "LEGACY_ONLY=$FREE_PROGRAMS" SAFEPIN_LIB=build/libsafepin.so \
            LEGACY_PRELOAD_FIRST= LEGACY_PRELOAD_LAST="$runtime" LEGACY_TAG="tsan, plain safepin first"
    fi
done
exit $FAILED
