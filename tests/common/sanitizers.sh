# tests/common/sanitizers.sh - sourced by the run-sanitized.sh scripts of
# legacy-cuda and reach: which runtime library a sanitizer build needs
# preloaded, the options it runs with, and what a sanitizer report looks like.
#   san_setup SAN   sets SAN_RUNTIME (empty if the compiler has none) and SAN_ENV
SAN_BAD='ERROR: AddressSanitizer|runtime error:|WARNING: ThreadSanitizer|ERROR: LeakSanitizer'
san_rt() { local p; p=$(${CC:-gcc} -print-file-name="$1"); [ -f "$p" ] && echo "$p"; }
san_setup() {
    case $1 in
    asan) SAN_RUNTIME=$(san_rt libasan.so)
          SAN_ENV="ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:halt_on_error=1" ;;
    ubsan) SAN_RUNTIME=$(san_rt libubsan.so); SAN_ENV="UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1" ;;
    tsan) SAN_RUNTIME=$(san_rt libtsan.so); SAN_ENV="TSAN_OPTIONS=halt_on_error=1:die_after_fork=0" ;;
    *) SAN_RUNTIME= SAN_ENV= ;;
    esac
}
