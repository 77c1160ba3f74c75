"""alloc_churn.py - a pure-Python program that allocates heavily, for the
whole-program rows of make bench and make gpu-bench: run bare and under
LD_PRELOAD=build/libsafepin.so, it measures what safepin's libc hooks (free,
realloc, munmap, madvise, mmap) cost a program that never touches a GPU
runtime and never registers anything.

    python3 bench/alloc_churn.py [threads=3] [rounds=N] [seed=1]

The main thread and `threads` more each run `rounds` rounds (the GIL lets
one run at a time; the allocator sees them all): build and drop lists of
small objects (ints, floats, strings, tuples, small dicts), grow a dict and
a list (realloc), join strings, create bytes and bytearray objects of
64 B-16 KiB and some of 128 KiB-2 MiB (glibc's mmap threshold is 128 KiB),
grow a bytearray by appending (realloc), and now and then map 64 KiB-1 MiB
with the mmap module, write it, madvise(MADV_DONTNEED) half of it and close
it. CPython's own arenas (1 MiB, mmap'd and munmap'd as they fill and
empty) come and go meanwhile. No NumPy, no third-party module.

The figure is the wall time from the first line of the script to the last
join, and the process's CPU time (user + system) over the same span:

    BENCH wall_ms=<ms> cpu_ms=<ms> threads=<T> rounds=<N> checksum=<n>

The checksum (the same for every run of one seed) keeps the work honest.
"""
import mmap
import random
import resource
import sys
import threading
import time

T0 = time.monotonic()


def cpu_ms():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return (u.ru_utime + u.ru_stime) * 1e3


C0 = cpu_ms()


def arg(name, default):
    for a in sys.argv[1:]:
        k, _, v = a.partition("=")
        if k == name:
            return int(v)
    return default


def small_objects(rng, n):
    """Lists of small objects, kept a while, then dropped."""
    keep = []
    total = 0
    for i in range(n):
        obj = [rng.random() * i, str(i) * (i % 7 + 1), (i, i + 1, "x"), {"k": i, "v": [i] * 3}]
        keep.append(obj)
        if len(keep) > 400:
            total += len(keep.pop(rng.randrange(len(keep)))[1])
    return total + len(keep)


def grow_containers(rng, n):
    """A dict and a list grown one item at a time (their tables are realloc'd),
    a string joined from parts."""
    d, lst = {}, []
    for i in range(n):
        d["key-%d-%d" % (i, rng.randrange(1000))] = i
        lst.append(i * 2)
    s = ",".join(str(x) for x in lst[: n // 4])
    return len(d) + len(lst) + len(s)


def buffers(rng, n):
    """bytes and bytearrays, small (malloc) and large (above the mmap
    threshold), and a bytearray grown by appending (realloc)."""
    live = []
    total = 0
    for i in range(n):
        if rng.randrange(24) == 0:
            size = rng.randrange(128 << 10, 2 << 20)  # 128 KiB - 2 MiB
        else:
            size = rng.randrange(64, 16 << 10)
        b = bytearray(size) if i & 1 else bytes(size)
        live.append(b)
        if len(live) > 16:
            total += len(live.pop(rng.randrange(len(live))))
    grow = bytearray()
    chunk = b"z" * 1000
    for _ in range(rng.randrange(200, 600)):
        grow += chunk
    return total + len(grow)


def mappings(rng):
    """An anonymous mapping of the program's own: write, give half back, close."""
    size = (64 << 10) << rng.randrange(5)  # 64 KiB - 1 MiB
    m = mmap.mmap(-1, size)
    for off in range(0, size, 4096):
        m[off] = 1
    if hasattr(m, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
        m.madvise(mmap.MADV_DONTNEED, size // 2, size // 2)
    m.close()
    return size


def work(seed, rounds, out, slot):
    rng = random.Random(seed)
    total = 0
    for r in range(rounds):
        total += small_objects(rng, 1500)
        total += grow_containers(rng, 3000)
        total += buffers(rng, 120)
        if r % 4 == 0:
            total += mappings(rng)
    out[slot] = total


def main():
    threads = arg("threads", 3)
    rounds = arg("rounds", 40)
    seed = arg("seed", 1)
    out = [0] * (threads + 1)
    ts = [threading.Thread(target=work, args=(seed * 100 + i, rounds, out, i))
          for i in range(threads)]
    for t in ts:
        t.start()
    work(seed * 100 + threads, rounds, out, threads)
    for t in ts:
        t.join()
    wall = (time.monotonic() - T0) * 1e3
    cpu = cpu_ms() - C0
    print("BENCH wall_ms=%.3f cpu_ms=%.3f threads=%d rounds=%d checksum=%d"
          % (wall, cpu, threads, rounds, sum(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
