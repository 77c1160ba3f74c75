/*
 * no_register_signals - a program that uses the runtime but never
 * registers host memory finds the signal dispositions it left.
 *
 * It installs no handler. At the start of main and again after device
 * allocations, copies from unpinned memory, a pointer query and frees,
 * no fatal signal a post-mortem would catch (SIGSEGV, SIGBUS, SIGABRT,
 * SIGILL, SIGFPE) may have a handler from libsafepin (one of a sanitizer's
 * runtime, preloaded in the sanitized runs, is the sanitizer's): safepin installs its
 * post-mortem handlers at the first registration, not before (a program
 * that checks, saves or chains its dispositions sees what it set). Then it
 * installs a handler of its own for SIGBUS (with SA_RESETHAND and its own
 * mask, as a crash reporter does), registers, copies and unregisters once:
 * its SIGBUS handler, flags and mask must still be exactly what it set
 * (safepin's handlers go only where the program left the default).
 */
#include <dlfcn.h>
#include <signal.h>
#include "legacy.h"

#define N (16 * 1024)

static void expect_default(const char *when)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
    for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction sa;
        if (sigaction(sigs[i], NULL, &sa) != 0)
            continue;
        void *fn = (sa.sa_flags & SA_SIGINFO) ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
        Dl_info info;
        if (fn == (void *)SIG_DFL || fn == (void *)SIG_IGN || !dladdr(fn, &info) || !info.dli_fname)
            continue;
        if (strstr(info.dli_fname, "libsafepin")) {
            fprintf(stderr, "%s: signal %d has a handler of %s, which the program never installed\n",
                    when, sigs[i], info.dli_fname);
            (*legacy_failures())++;
        }
    }
}

static void on_bus(int sig) { (void)sig; }

int main(void)
{
    expect_default("start of main");
    int *host = malloc(N * sizeof(int));
    if (!host)
        return 2;
    legacy_fill(host, N, 0, 1);
    int *dev;
    CHECK(hipMalloc((void **)&dev, N * sizeof(int)));
    CHECK(hipMemcpy(dev, host, N * sizeof(int), hipMemcpyHostToDevice));
    memset(host, 0, N * sizeof(int));
    CHECK(hipMemcpy(host, dev, N * sizeof(int), hipMemcpyDeviceToHost));
    legacy_verify("copied back", host, N, 0, 1, 0);
    hipPointerAttribute_t at;
    (void)hipPointerGetAttributes(&at, host);
    CHECK(hipFree(dev));
    expect_default("after the runtime calls");
    struct sigaction mine, now;
    memset(&mine, 0, sizeof mine);
    mine.sa_handler = on_bus;
    mine.sa_flags = SA_RESETHAND;
    sigemptyset(&mine.sa_mask);
    sigaddset(&mine.sa_mask, SIGUSR1);
    if (sigaction(SIGBUS, &mine, NULL) != 0)
        return 2;
    int *pinned = aligned_alloc(4096, N * sizeof(int));
    if (!pinned)
        return 2;
    legacy_fill(pinned, N, 0, 2);
    CHECK(hipHostRegister(pinned, N * sizeof(int), 0));
    CHECK(hipHostUnregister(pinned));
    if (sigaction(SIGBUS, NULL, &now) != 0 || (now.sa_flags & SA_SIGINFO) ||
        now.sa_handler != on_bus || !(now.sa_flags & SA_RESETHAND) ||
        !sigismember(&now.sa_mask, SIGUSR1)) {
        fprintf(stderr, "after the first registration: the program's SIGBUS handler was replaced "
                        "or changed\n");
        (*legacy_failures())++;
    }
    free(pinned);
    free(host);
    return legacy_finish();
}
