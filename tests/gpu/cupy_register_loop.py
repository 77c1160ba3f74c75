#!/usr/bin/env python3
"""cupy_register_loop.py - a CuPy staging loop for make gpu-bench: NumPy
buffers registered with cupy.cuda.runtime.hostRegister, copied to the
device, unregistered, as code that pins its own host buffers does.

    python3 tests/gpu/cupy_register_loop.py [scale]

For each size (4 KiB, 64 KiB, 1 MiB, 16 MiB), `scale` times a base count of
cycles (default scale 1: 400, 400, 200, 40): a fresh NumPy array of that size
(np.empty, then written), hostRegister(ptr, n, 0), memcpyAsync to a device
buffer on a non-blocking stream, synchronize the stream, hostUnregister(ptr),
drop the array. Then, for 1 MiB, the same buffer over and over (register,
copy, unregister, 200 cycles): a program that re-pins one staging buffer.
Cycle = register to unregister returned, timed with perf_counter_ns.

    BENCH us_4k=<median cycle> us_64k=... us_1m=... us_16m=... reuse_1m_us=...
          loop_ms=<all cycles, allocation included> cycles=<n>

Prints "OK" before the BENCH line when every copy came back intact (one
device-to-host check per size); exit 1 otherwise.
"""
import statistics
import sys
import time

import numpy as np
import cupy as cp

rt = cp.cuda.runtime
SIZES = (("4k", 4 << 10, 400), ("64k", 64 << 10, 400), ("1m", 1 << 20, 200),
         ("16m", 16 << 20, 40))
REUSE = ("reuse_1m", 1 << 20, 200)


def cycle(a, dev, stream):
    """Register a's buffer, copy it to dev, unregister; the time it took (ns)."""
    t = time.perf_counter_ns()
    rt.hostRegister(a.ctypes.data, a.nbytes, 0)
    rt.memcpyAsync(dev.data.ptr, a.ctypes.data, a.nbytes, rt.memcpyHostToDevice, stream.ptr)
    stream.synchronize()
    rt.hostUnregister(a.ctypes.data)
    return time.perf_counter_ns() - t


def check(a, dev):
    """The device's copy of a's bytes equals a."""
    back = cp.asnumpy(dev[: a.nbytes])
    return bool(np.array_equal(back, a))


def main():
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    stream = cp.cuda.Stream(non_blocking=True)
    dev = cp.empty(max(n for _, n, _ in SIZES), dtype=np.uint8)
    stream.synchronize()
    out, ok, total = {}, True, 0
    t0 = time.perf_counter_ns()
    for name, n, count in SIZES:
        count = max(3, int(count * scale))
        times = []
        for i in range(count):
            a = np.empty(n, dtype=np.uint8)
            a.fill(i & 0xFF)
            times.append(cycle(a, dev, stream))
            if i == count - 1:
                ok = check(a, dev) and ok
            del a
        out["us_" + name] = statistics.median(times) / 1e3
        total += count
    name, n, count = REUSE
    count = max(3, int(count * scale))
    a = np.empty(n, dtype=np.uint8)
    times = []
    for i in range(count):
        a.fill(i & 0xFF)
        times.append(cycle(a, dev, stream))
    ok = check(a, dev) and ok
    out[name + "_us"] = statistics.median(times) / 1e3
    total += count
    loop_ms = (time.perf_counter_ns() - t0) / 1e6
    if not ok:
        print("FAIL: a copy did not come back intact", file=sys.stderr)
        return 1
    print("OK")
    print("BENCH " + " ".join("%s=%.3f" % kv for kv in out.items()) +
          " loop_ms=%.3f cycles=%d" % (loop_ms, total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
