#!/usr/bin/env python3
"""torch_hazards.py - the hazards as an unmodified PyTorch program meets them.

A CPU tensor's storage is registered with
torch.cuda.cudart().cudaHostRegister and released with cudaHostUnregister
around non-blocking copies, as offloading libraries do. Each test prints one
line, the protocol of hazards.c:

    GPUTEST <test> api=torch result=<hazard|ok|fail> <evidence>

PyTorch has no host-function launch in Python and no way to wrap a mapped
host pointer as a CUDA tensor, so the host-function and lost-write hazards
are CuPy's and hazards.c's only. Usage: torch_hazards.py [test ...].
"""
import ctypes
import sys
import threading
import time
import traceback

import torch

cudart = torch.cuda.cudart()
BUSY_MS = 500.0
CYCLES_PER_MS = None


def report(test, result, evidence):
    print("GPUTEST %s api=torch result=%s %s" % (test, result, evidence), flush=True)


def code(r):
    """cudaHostRegister/Unregister return a cudaError enum: its number."""
    return int(r)


def clear_last_error():
    """A failed cudaHostRegister/Unregister (a 712, a 713: what a test looks
    for) stays cudart's "last error", and PyTorch's next kernel launch check
    would report it as the launch's. The script, not PyTorch, clears it
    between tests, through the cudart PyTorch loaded."""
    with open("/proc/self/maps") as f:
        paths = {l.split()[-1] for l in f if "libcudart.so" in l}
    for path in paths:
        ctypes.CDLL(path).cudaGetLastError()
    try:  # a cudart linked in statically: a throwaway launch takes it
        torch.zeros(1, device="cuda")
    except Exception:
        pass


def calibrate():
    """torch.cuda._sleep spins a number of clock cycles: find how many make
    a millisecond on this GPU now (after a warm-up, at its running clock)."""
    global CYCLES_PER_MS
    torch.cuda._sleep(50_000_000)
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    torch.cuda._sleep(200_000_000)
    b.record()
    b.synchronize()
    CYCLES_PER_MS = 200_000_000 / a.elapsed_time(b)


def spin(stream, ms):
    with torch.cuda.stream(stream):
        torch.cuda._sleep(int(ms * CYCLES_PER_MS))


def t_stall():
    busy = torch.cuda.Stream()
    work = torch.cuda.Stream()
    t = torch.full((1 << 20,), 7.0)
    assert code(cudart.cudaHostRegister(t.data_ptr(), t.nbytes, 0)) == 0
    with torch.cuda.stream(work):
        d = t.to("cuda", non_blocking=True)
    work.synchronize()
    spin(busy, BUSY_MS)
    time.sleep(0.02)
    t0 = time.perf_counter()
    e = code(cudart.cudaHostUnregister(t.data_ptr()))
    dt = (time.perf_counter() - t0) * 1e3
    busy.synchronize()
    del d
    if e:
        return "fail", "cudaHostUnregister returned %d" % e
    if dt >= 250:
        return "hazard", "stall=%.1fms: cudaHostUnregister waited for an unrelated %.0f ms kernel" % (dt, BUSY_MS)
    if dt < 50:
        return "ok", "stall=%.3fms: cudaHostUnregister returned at once" % dt
    return "fail", "stall=%.1fms" % dt


def t_launch():
    busy, work, other = torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.Stream()
    t = torch.ones(1 << 20)
    assert code(cudart.cudaHostRegister(t.data_ptr(), t.nbytes, 0)) == 0
    with torch.cuda.stream(work):
        d = t.to("cuda", non_blocking=True)
    work.synchronize()
    x = torch.zeros(1024, device="cuda")
    with torch.cuda.stream(other):
        x.add_(1)
    other.synchronize()
    spin(busy, BUSY_MS)
    time.sleep(0.02)
    took = {}

    def worker():
        t0 = time.perf_counter()
        took["code"] = code(cudart.cudaHostUnregister(t.data_ptr()))
        took["ms"] = (time.perf_counter() - t0) * 1e3
    th = threading.Thread(target=worker)
    th.start()
    time.sleep(0.03)
    t0 = time.perf_counter()
    with torch.cuda.stream(other):
        x.add_(1)
    launch = (time.perf_counter() - t0) * 1e3
    th.join()
    torch.cuda.synchronize()
    del d
    if x[0].item() != 2.0 or took["code"]:
        return "fail", "x[0] = %s, unregister %d" % (x[0].item(), took["code"])
    if launch >= 10:
        return "hazard", "stall=%.1fms: x.add_(1) on another thread waited behind cudaHostUnregister (%.1f ms)" % (launch, took["ms"])
    if launch < 5:
        return "ok", "stall=%.3fms: x.add_(1) did not wait (cudaHostUnregister took %.1f ms)" % (launch, took["ms"])
    return "fail", "stall=%.1fms" % launch


def t_rereg():
    t = torch.arange(1 << 18, dtype=torch.int32)
    p, n = t.data_ptr(), t.nbytes
    e1 = code(cudart.cudaHostRegister(p, n, 0))
    e2 = code(cudart.cudaHostRegister(p, n, 0))
    clear_last_error()  # a 712 here is the finding, not the next copy's error
    d = t.to("cuda", non_blocking=True)
    torch.cuda.synchronize()
    u1 = code(cudart.cudaHostUnregister(p))
    u2 = code(cudart.cudaHostUnregister(p))
    clear_last_error()
    right = bool((d.cpu() == t).all())
    if e2 == 712:
        return "hazard", "code=712 on the second identical cudaHostRegister; unregisters %d, %d" % (u1, u2)
    if e1 == 0 and e2 == 0 and u1 == 0 and u2 == 0 and right:
        return "ok", "code=0 on the second cudaHostRegister (nested); unregisters 0, 0; data right"
    return "fail", "registers %d %d, unregisters %d %d, data right %s" % (e1, e2, u1, u2, right)


NBIG = 64 << 20  # above glibc's largest mmap threshold: freed with munmap


def t_reuse():
    a = torch.empty(NBIG, dtype=torch.uint8)
    p = a.data_ptr()
    assert code(cudart.cudaHostRegister(p, a.nbytes, 0)) == 0
    d = a.to("cuda")
    del a  # the storage is freed without cudaHostUnregister
    keep = []
    for _ in range(4):
        b = torch.empty(NBIG, dtype=torch.uint8)
        if b.data_ptr() == p:
            break
        keep.append(b)
    q = b.data_ptr()
    where = "the freed tensor's address" if q == p else "a new address (not the freed 0x%x)" % p
    b.copy_(torch.arange(NBIG, dtype=torch.int64).to(torch.uint8))
    e = code(cudart.cudaHostRegister(q, b.nbytes, 0))
    if e == 712:
        return "hazard", "code=712 registering a new CPU tensor at %s 0x%x" % (where, q)
    if e:
        return "fail", "cudaHostRegister returned %d" % e
    d = b.to("cuda", non_blocking=True)
    d += 1
    out = torch.empty_like(b)
    out.copy_(d)
    code(cudart.cudaHostUnregister(q))
    if not bool((out == b + 1).all()):
        return "fail", "code=0 but the round trip is wrong"
    return "ok", "code=0 at %s 0x%x; the round trip is right" % (where, q)


def t_implicit():
    s = torch.cuda.Stream()
    t = torch.zeros(1 << 20, dtype=torch.int32)
    assert code(cudart.cudaHostRegister(t.data_ptr(), t.nbytes, 0)) == 0
    src = torch.arange(1 << 20, dtype=torch.int32, device="cuda")
    torch.cuda.synchronize()
    spin(s, 200)
    with torch.cuda.stream(s):
        t.copy_(src, non_blocking=True)
    t0 = time.perf_counter()
    e = code(cudart.cudaHostUnregister(t.data_ptr()))
    dt = (time.perf_counter() - t0) * 1e3
    right = torch.equal(t, torch.arange(1 << 20, dtype=torch.int32))
    s.synchronize()
    if e:
        return "fail", "cudaHostUnregister returned %d" % e
    if not right:
        wrong = int((t != torch.arange(1 << 20, dtype=torch.int32)).nonzero()[0])
        return "hazard", "wrong byte at int %d right after cudaHostUnregister (%.1f ms): stale" % (wrong, dt)
    return "ok", "right bytes right after cudaHostUnregister (it took %.1f ms)" % dt


def t_capture():
    other = torch.ones(1 << 18)
    assert code(cudart.cudaHostRegister(other.data_ptr(), other.nbytes, 0)) == 0
    d = other.to("cuda", non_blocking=True)
    y = torch.ones(1 << 16, device="cuda")
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    res = {}

    def worker():
        res["code"] = code(cudart.cudaHostUnregister(other.data_ptr()))
    end = 0
    try:
        with torch.cuda.graph(g, capture_error_mode="global"):
            y.add_(1)
            th = threading.Thread(target=worker)
            th.start()
            th.join()
    except RuntimeError as e:
        msg = str(e)
        end = 901 if any(k in msg for k in ("invalidated", "901", "previous error during capture")) else -1
        if end < 0:
            return "fail", "capture raised: %s" % msg.splitlines()[0][:160]
    del d
    if res["code"] == 900 and end == 901:
        return "hazard", "code=900 for the other thread's cudaHostUnregister, code=901 (capture invalidated) ending the capture"
    if res["code"] or end:
        return "fail", "cudaHostUnregister %d, end of capture %d" % (res["code"], end)
    y.fill_(1)
    g.replay()
    torch.cuda.synchronize()
    if not bool((y == 2).all()):
        return "fail", "codes 0 but the graph's result is wrong"
    return "ok", "code=0 for cudaHostUnregister; the capture survived and its graph gave the right result"


TESTS = [("stall", t_stall), ("launch", t_launch), ("rereg", t_rereg), ("reuse", t_reuse),
         ("implicit", t_implicit), ("capture", t_capture)]


def main():
    want = sys.argv[1:] or [n for n, _ in TESTS]
    calibrate()
    for name, fn in TESTS:
        if name not in want:
            continue
        try:
            result, evidence = fn()
        except Exception as e:  # the line must still come out
            result, evidence = "fail", "exception: %s" % (traceback.format_exception_only(type(e), e)[-1].strip())
        report(name, result, evidence)
        clear_last_error()


if __name__ == "__main__":
    main()
