#!/usr/bin/env python3
"""cupy_hazards.py - the hazards as an unmodified CuPy program meets them.

A NumPy array's buffer is registered with cupy.cuda.runtime.hostRegister and
released with hostUnregister around async copies and kernels, as staging
code does. Each test prints one line, the protocol of hazards.c:

    GPUTEST <test> api=cupy result=<hazard|ok|fail|skip> <evidence>

Usage: cupy_hazards.py [test ...] (default: all, in the order below).
"""
import sys
import threading
import time
import traceback

import numpy as np
import cupy as cp

rt = cp.cuda.runtime
BUSY_MS = 500.0
HOST_REGISTER_MAPPED = 2  # cudaHostRegisterMapped (CuPy names no constant for it)
HOST_REGISTER_PORTABLE = 1  # cudaHostRegisterPortable

SPIN = cp.RawKernel(r'''
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}''', 'spin')


def report(test, result, evidence):
    print("GPUTEST %s api=cupy result=%s %s" % (test, result, evidence), flush=True)


def spin(stream, ms):
    with stream:
        SPIN((1,), (1,), (np.uint64(int(ms * 1e6)),))


def code_of(fn, *args):
    """The CUDA error code of a runtime call (0: success)."""
    try:
        fn(*args)
        return 0
    except cp.cuda.runtime.CUDARuntimeError as e:
        return e.status


def t_stall():
    busy = cp.cuda.Stream(non_blocking=True)
    work = cp.cuda.Stream(non_blocking=True)
    a = np.full(1 << 20, 7, np.float32)
    rt.hostRegister(a.ctypes.data, a.nbytes, 0)
    d = cp.empty(a.shape, a.dtype)
    d.set(a, stream=work)
    work.synchronize()
    spin(busy, BUSY_MS)
    time.sleep(0.02)
    t0 = time.perf_counter()
    rt.hostUnregister(a.ctypes.data)
    dt = (time.perf_counter() - t0) * 1e3
    busy.synchronize()
    if dt >= 250:
        return "hazard", "stall=%.1fms: hostUnregister waited for an unrelated %.0f ms kernel" % (dt, BUSY_MS)
    if dt < 50:
        return "ok", "stall=%.3fms: hostUnregister returned at once" % dt
    return "fail", "stall=%.1fms" % dt


def t_launch():
    busy = cp.cuda.Stream(non_blocking=True)
    work = cp.cuda.Stream(non_blocking=True)
    other = cp.cuda.Stream(non_blocking=True)
    a = np.ones(1 << 20, np.float32)
    rt.hostRegister(a.ctypes.data, a.nbytes, 0)
    d = cp.empty(a.shape, a.dtype)
    d.set(a, stream=work)
    work.synchronize()
    x = cp.zeros(1024, cp.float32)
    with other:
        x += 1
    other.synchronize()
    spin(busy, BUSY_MS)
    time.sleep(0.02)
    took = {}

    def worker():
        t = time.perf_counter()
        rt.hostUnregister(a.ctypes.data)
        took["ms"] = (time.perf_counter() - t) * 1e3
    th = threading.Thread(target=worker)
    th.start()
    time.sleep(0.03)
    t0 = time.perf_counter()
    with other:
        x += 1
    launch = (time.perf_counter() - t0) * 1e3
    th.join()
    cp.cuda.Device().synchronize()
    if float(x[0]) != 2.0:
        return "fail", "x[0] = %s, want 2" % float(x[0])
    if launch >= 100:
        return "hazard", "stall=%.1fms: x += 1 on another thread waited behind hostUnregister (%.1f ms)" % (launch, took["ms"])
    if launch < 20:
        return "ok", "stall=%.3fms: x += 1 did not wait (hostUnregister took %.1f ms)" % (launch, took["ms"])
    return "fail", "stall=%.1fms" % launch


def t_hostfunc():
    s = cp.cuda.Stream(non_blocking=True)
    a = np.full(1 << 18, 3, np.int32)
    p = a.ctypes.data
    rt.hostRegister(p, a.nbytes, 0)
    d = cp.empty(a.shape, a.dtype)
    d.set(a, stream=s)
    res = {}

    def release(arg):
        res["code"] = code_of(rt.hostUnregister, p)
    s.launch_host_func(release, None)
    while "code" not in res:
        time.sleep(0.001)
    s.synchronize()
    # Is the pin still held? Registering the buffer again tells (712: yes).
    again = 712
    for _ in range(100):
        again = code_of(rt.hostRegister, p, a.nbytes, 0)
        if again != 712:
            break
        time.sleep(0.02)
    if again == 0:
        rt.hostUnregister(p)
    if res["code"] == 800 and again == 712:
        rt.hostUnregister(p)
        return "hazard", "code=800 for hostUnregister in the host function; the pin leaked (register again: 712)"
    if res["code"] == 0 and again == 0:
        return "ok", "code=0 in the host function; the buffer registers again afterwards"
    return "fail", "host function %d, register again %d" % (res["code"], again)


def t_rereg():
    a = np.arange(1 << 18, dtype=np.int32)
    p = a.ctypes.data
    rt.hostRegister(p, a.nbytes, 0)
    e2 = code_of(rt.hostRegister, p, a.nbytes, 0)
    d = cp.asarray(a)
    u1 = code_of(rt.hostUnregister, p)
    u2 = code_of(rt.hostUnregister, p)
    right = bool((cp.asnumpy(d) == a).all())
    if e2 == 712:
        return "hazard", "code=712 on the second identical hostRegister; unregisters %d, %d" % (u1, u2)
    if e2 == 0 and u1 == 0 and u2 == 0 and right:
        return "ok", "code=0 on the second hostRegister (nested); unregisters 0, 0; data right"
    return "fail", "register %d, unregisters %d %d, data right %s" % (e2, u1, u2, right)


NBIG = 64 << 20  # above glibc's largest mmap threshold: freed with munmap


def same_address_array(p):
    """A new array, preferably where the freed one was (glibc's mmap reuses
    the hole at once, unless the unmap was deferred: then the array lands
    elsewhere, which is just as right for the program)."""
    keep = []
    for _ in range(4):
        b = np.empty(NBIG // 4, np.int32)
        if b.ctypes.data == p:
            return b
        keep.append(b)
    return b


def t_reuse():
    a = np.empty(NBIG // 4, np.int32)
    p = a.ctypes.data
    rt.hostRegister(p, a.nbytes, 0)
    # Staged with the runtime's own copy: a CuPy array made from `a` would
    # keep `a` alive, and the freed address would not come back.
    d = cp.empty(a.shape, a.dtype)
    rt.memcpyAsync(d.data.ptr, p, a.nbytes, getattr(rt, "memcpyHostToDevice", 1), 0)
    cp.cuda.Device().synchronize()
    del d, a  # the array is freed without hostUnregister
    b = same_address_array(p)
    q = b.ctypes.data
    where = "the freed array's address" if q == p else "a new address (not the freed 0x%x)" % p
    b[:] = np.arange(b.size, dtype=np.int32)
    e = code_of(rt.hostRegister, q, b.nbytes, 0)
    if e == 712:
        return "hazard", "code=712 registering a new NumPy array at %s 0x%x" % (where, q)
    if e:
        return "fail", "hostRegister returned %d" % e
    d = cp.asarray(b)
    d += 1
    out = cp.asnumpy(d)
    rt.hostUnregister(q)
    want = np.arange(b.size, dtype=np.int32) + 1
    wrong = np.nonzero(out != want)[0]
    if wrong.size:
        i = int(wrong[0])
        o = out.ctypes.data
        text = "code=0 at %s 0x%x, but the result array (at 0x%x%s) came back wrong at int %d: got %d, want %d" % (
            where, q, o, ", the freed array's address" if o == p else "", i, int(out[i]), int(want[i]))
        # At the freed address the copy wrote into the stale pinned pages.
        return ("hazard" if o == p else "fail"), text
    return "ok", "code=0 at %s 0x%x; the round trip is right" % (where, q)


def mapped_view(p, nbytes):
    """The registered range as a CuPy array. CuPy has no hostGetDevicePointer;
    with unified addressing on x86-64 a mapped registration's device address
    is its host address (CanUseHostPointerForRegisteredMem)."""
    mem = cp.cuda.UnownedMemory(p, nbytes, None)
    return cp.ndarray((nbytes // 4,), cp.int32, cp.cuda.MemoryPointer(mem, 0))


def t_lost():
    a = np.zeros(NBIG // 4, np.int32)
    p = a.ctypes.data
    rt.hostRegister(p, a.nbytes, HOST_REGISTER_MAPPED)
    del a
    b = same_address_array(p)
    q = b.ctypes.data
    b[:] = 0
    e = code_of(rt.hostRegister, q, b.nbytes, HOST_REGISTER_MAPPED)  # unchecked, as legacy code
    v = mapped_view(q, b.nbytes)
    v[:] = cp.arange(v.size, dtype=cp.int32)
    cp.cuda.Device().synchronize()
    want = np.arange(b.size, dtype=np.int32)
    wrong = np.nonzero(b != want)[0]
    code_of(rt.hostUnregister, q)
    if wrong.size:
        i = int(wrong[0])
        return "hazard", "wrong byte at int %d: got %d, want %d (the kernel wrote into the freed pages; hostRegister said %d)" % (i, int(b[i]), int(want[i]), e)
    return "ok", "every int the kernel wrote is in the new array (hostRegister said %d)" % e


def t_implicit():
    s = cp.cuda.Stream(non_blocking=True)
    a = np.zeros(1 << 20, np.int32)
    p = a.ctypes.data
    rt.hostRegister(p, a.nbytes, HOST_REGISTER_MAPPED)
    v = mapped_view(p, a.nbytes)
    spin(s, 200)
    with s:
        v[:] = cp.arange(v.size, dtype=cp.int32)
    t0 = time.perf_counter()
    rt.hostUnregister(p)
    dt = (time.perf_counter() - t0) * 1e3
    wrong = np.nonzero(a != np.arange(a.size, dtype=np.int32))[0]
    s.synchronize()
    if wrong.size:
        return "hazard", "wrong byte at int %d right after hostUnregister (%.1f ms): stale" % (int(wrong[0]), dt)
    return "ok", "right bytes right after hostUnregister (it took %.1f ms)" % dt


def t_capture():
    s = cp.cuda.Stream(non_blocking=False)
    work = cp.cuda.Stream(non_blocking=True)
    other = np.ones(1 << 18, np.float32)
    rt.hostRegister(other.ctypes.data, other.nbytes, 0)
    dother = cp.empty(other.shape, other.dtype)
    dother.set(other, stream=work)
    work.synchronize()
    y = cp.ones(1 << 16, cp.float32)
    cp.cuda.Device().synchronize()
    res = {}

    def worker():
        res["code"] = code_of(rt.hostUnregister, other.ctypes.data)
    s.begin_capture(mode=rt.streamCaptureModeGlobal)
    with s:
        y += 1
    th = threading.Thread(target=worker)
    th.start()
    th.join()
    try:
        g = s.end_capture()
        end = 0
    except cp.cuda.runtime.CUDARuntimeError as e:
        end = e.status
    if res["code"] == 900 and end == 901:
        return "hazard", "code=900 for the other thread's hostUnregister, code=901 ending the capture"
    if res["code"] or end:
        return "fail", "hostUnregister %d, end_capture %d" % (res["code"], end)
    g.launch(stream=s)
    s.synchronize()
    if not bool((y == 2).all()):
        return "fail", "codes 0 but the graph's result is wrong"
    return "ok", "code=0 for hostUnregister; the capture survived and its graph gave the right result"


def t_dev1_blocking():
    """hazards.c's dev1_blocking: a NumPy array registered (Portable | Mapped)
    while device 0 is current, filled by device 1 after a 500 ms kernel on a
    blocking stream; another thread, device 0 current, unregisters it, reads
    it at once and drops the array; meanwhile this thread adds on both
    devices and times the launches."""
    n = rt.getDeviceCount()
    if n < 2:
        return "skip", "needs two GPUs: %d device(s)" % n
    held = {"a": np.zeros(1 << 20, np.int32)}
    p, nbytes, size = held["a"].ctypes.data, held["a"].nbytes, held["a"].size
    xs, others = [], []
    for d in (0, 1):
        with cp.cuda.Device(d):
            o = cp.cuda.Stream(non_blocking=True)
            x = cp.zeros(1024, cp.float32)
            with o:
                x += 1  # warm: the first launch loads the module
            o.synchronize()
            xs.append(x)
            others.append(o)
    with cp.cuda.Device(0):
        rt.hostRegister(p, nbytes, HOST_REGISTER_PORTABLE | HOST_REGISTER_MAPPED)
    with cp.cuda.Device(1):
        s = cp.cuda.Stream(non_blocking=False)
        v = mapped_view(p, nbytes)
        spin(s, BUSY_MS)
        with s:
            v[:] = cp.arange(size, dtype=cp.int32)
    time.sleep(0.02)
    res = {}

    def worker():
        with cp.cuda.Device(0):
            t = time.perf_counter()
            res["code"] = code_of(rt.hostUnregister, p)
            res["ms"] = (time.perf_counter() - t) * 1e3
            wrong = np.nonzero(held["a"] != np.arange(size, dtype=np.int32))[0]
            res["wrong"] = int(wrong[0]) if wrong.size else -1
            held["a"] = None  # freed: its pages go back to the allocator
    th = threading.Thread(target=worker)
    th.start()
    time.sleep(0.03)
    launch = 0.0
    for d in (0, 1):
        with cp.cuda.Device(d):
            t0 = time.perf_counter()
            with others[d]:
                xs[d] += 1
            launch = max(launch, (time.perf_counter() - t0) * 1e3)
    th.join()
    with cp.cuda.Device(1):
        es = code_of(s.synchronize)
    if res["code"]:
        return "fail", "hostUnregister returned %d" % res["code"]
    if es:
        return "hazard", "device 1's kernel failed: code=%d after the array was unregistered (%.1f ms) and freed" % (es, res["ms"])
    if res["wrong"] >= 0:
        return "hazard", "wrong byte at int %d right after hostUnregister (%.1f ms): it did not wait for device 1" % (res["wrong"], res["ms"])
    if launch >= 100:
        return "hazard", "stall=%.1fms: x += 1 on devices 0 and 1 waited behind hostUnregister (%.1f ms)" % (launch, res["ms"])
    if launch < 20:
        return "ok", "stall=%.3fms: the launches on devices 0 and 1 did not wait; right bytes right after hostUnregister (%.1f ms)" % (launch, res["ms"])
    return "fail", "stall=%.1fms" % launch


TESTS = [("stall", t_stall), ("launch", t_launch), ("hostfunc", t_hostfunc),
         ("rereg", t_rereg), ("reuse", t_reuse), ("lost", t_lost),
         ("implicit", t_implicit), ("capture", t_capture), ("dev1_blocking", t_dev1_blocking)]


def main():
    want = sys.argv[1:] or [n for n, _ in TESTS]
    for name, fn in TESTS:
        if name not in want:
            continue
        try:
            result, evidence = fn()
        except Exception as e:  # the line must still come out
            result, evidence = "fail", "exception: %s" % (traceback.format_exception_only(type(e), e)[-1].strip())
        report(name, result, evidence)


if __name__ == "__main__":
    main()
