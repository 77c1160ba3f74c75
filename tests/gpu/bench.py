#!/usr/bin/env python3
"""bench.py - make gpu-bench: what safepin costs and saves on a real NVIDIA
GPU, in the format of make bench.

Runs build/gpu/gpubench (static cudart) for each experiment, bare ("native")
and under LD_PRELOAD=build/libsafepin.so, interleaved (native, safepin,
native, ...); each row gives the median [min-max] of the runs and checks the
target taken from the GPU's native figures (issue 11). Writes
build/gpu-bench.json and build/gpu-bench.txt.

Whole programs, run the same way: the PyTorch pinned-copy loop
(torch_pinned_loop.py) in both host-allocator modes (cudaHostAlloc, the
default, and PYTORCH_CUDA_ALLOC_CONF=pinned_use_cuda_host_register:True; the
latter also with strict=1, where the whole process, exit included, is the
figure: the allocator's cached blocks, leaks at exit, are matched against the
default suppressions there, and a strict failure fails the row), a
CuPy loop of hostRegister / copy / hostUnregister of NumPy buffers
(cupy_register_loop.py), the pure-Python allocation churn of make bench
(bench/alloc_churn.py) and the C allocation-heavy program
(build/gpu/alloc_heavy: bench/alloc_heavy.c with cudaHostRegister), with
this script's python3. The torch and CuPy rows are skipped, saying why,
when that python3 cannot import them or they see no GPU.

Environment: SAFEPIN_LIB, GPU_BENCH_REPS (default 5; slow rows run 3; the
nanosecond rows, bimodal on the H200, at least 21; the whole programs of
about a second at least 9), GPU_BENCH_ONLY (comma-separated experiment
names).
The two-GPU rows (pipeline2: two threads, one device each) are skipped,
saying so, on a machine with one GPU.
"""
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
LIB = os.environ.get("SAFEPIN_LIB") or os.path.join(BUILD, "libsafepin.so")
PROG = os.path.join(BUILD, "gpu", "gpubench")
FLOOR = os.path.join(BUILD, "bench", "libfloor.so")
REPS = max(3, int(os.environ.get("GPU_BENCH_REPS", "5")))
SLOW = 3
MANY = max(9, REPS)  # whole programs of about a second
NS = max(21, REPS)  # nanosecond rows: bimodal here (two modes about 9 and 15 ns apart by run)
PY = sys.executable  # the machine's python3, as tests/gpu/run.py uses
GT = os.path.join(ROOT, "tests", "gpu")
HEAVY = os.path.join(BUILD, "gpu", "alloc_heavy")
TORCH_LOOP = [PY, os.path.join(GT, "torch_pinned_loop.py"), "4", "4", "bench"]
# PyTorch's host allocator: cudaHostAlloc (default; None removes the variable)
# or malloc + cudaHostRegister.
ALLOC_DEFAULT = {"PYTORCH_CUDA_ALLOC_CONF": None}
ALLOC_REGISTER = {"PYTORCH_CUDA_ALLOC_CONF": "pinned_use_cuda_host_register:True"}
ONLY = [x for x in os.environ.get("GPU_BENCH_ONLY", "").split(",") if x]
SAFEPIN_BASE = "log=error:summary=0"

# name: (experiment args, reps, extra SAFEPIN_OPTIONS, extra env[, command]);
# without a command, the arguments are gpubench's.
EXPS = {
    "unreg_idle": (["unreg_idle", "samples=21"], REPS, "", {}),
    "unreg_busy_async": (["unreg_busy", "samples=3", "ms=500"], SLOW, "unregister=async", {}),
    # The same call without its backtrace (the call's largest part on simcuda),
    # against unreg_busy_async's native runs: what the stack capture costs here.
    "unreg_busy_async_bt0": (["unreg_busy", "samples=3", "ms=500"], SLOW,
                             "unregister=async:backtrace=0", {}),
    "launch": (["launch", "ms=1000"], SLOW, "", {}),
    "revive": (["revive", "samples=9", "mib=256"], SLOW, "", {}),
    "pipeline": (["pipeline", "iters=200"], REPS, "", {}),
    "pipeline_async": (["pipeline", "iters=200"], REPS, "unregister=async", {}),
    # The release hold's choice for freed memory (hold_freed, reaper/hold.c),
    # measured both ways: compared with pipeline_async's native runs.
    "pipeline_async_holdfreed": (["pipeline", "iters=200"], REPS,
                                 "unregister=async:hold_freed=1", {}),
    # The pipeline on two GPUs at once: two threads, one device each.
    "pipeline2": (["pipeline2", "iters=200"], REPS, "", {}),
    "pipeline2_async": (["pipeline2", "iters=200"], REPS, "unregister=async", {}),
    "release": (["release", "samples=100"], SLOW, "", {}),
    "free0": (["free", "live=0"], NS, "", {}),
    "floor0": (["free", "live=0"], NS, "", {"LD_PRELOAD": FLOOR}),
    "free10k": (["free", "live=10000"], NS, "", {}),
    # Whole programs.
    "torch_pinned": ([], REPS, "", ALLOC_DEFAULT, TORCH_LOOP),
    "torch_pinned_reg": ([], REPS, "", ALLOC_REGISTER, TORCH_LOOP),
    "torch_pinned_reg_strict": ([], MANY, "strict=1", ALLOC_REGISTER, TORCH_LOOP),
    "cupy_reg": ([], REPS, "", {}, [PY, os.path.join(GT, "cupy_register_loop.py")]),
    "churn_py": ([], MANY, "", {}, [PY, os.path.join(ROOT, "bench", "alloc_churn.py")]),
    "heavy0": (["registered=0"], MANY, "", {}, [HEAVY]),
    "heavy_reg": (["registered=4"], MANY, "", {}, [HEAVY]),
}
TWO_GPU = {"pipeline2", "pipeline2_async"}
# What a whole program needs from this python3: a probe, run once.
NEEDS = {
    "torch_pinned": "torch", "torch_pinned_reg": "torch", "torch_pinned_reg_strict": "torch",
    "cupy_reg": "cupy",
}
PROBES = {
    "torch": "import torch; assert torch.cuda.is_available(), 'torch sees no CUDA device'; "
             "print(torch.__version__)",
    "cupy": "import numpy, cupy; assert cupy.cuda.runtime.getDeviceCount() > 0, "
            "'cupy sees no CUDA device'; print(cupy.__version__)",
}
SKIP = {}  # experiment -> why it is skipped
RUNS = {k: {"native": [], "safepin": []} for k in EXPS}
ROWS = []


def log(msg):
    sys.stderr.write("[gpu-bench %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def run_one(name, mode):
    args, _, opts, extra = EXPS[name][:4]
    cmd = (EXPS[name][4] if len(EXPS[name]) > 4 else [PROG]) + args
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "SAFEPIN_OPTIONS"):
        env.pop(k, None)
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    if mode == "safepin":
        env["LD_PRELOAD"] = LIB
        env["SAFEPIN_OPTIONS"] = SAFEPIN_BASE + (":" + opts if opts else "")
    rec = {"mode": mode, "cmd": " ".join(cmd), "SAFEPIN_OPTIONS": env.get("SAFEPIN_OPTIONS")}
    if "PYTORCH_CUDA_ALLOC_CONF" in extra:
        rec["PYTORCH_CUDA_ALLOC_CONF"] = env.get("PYTORCH_CUDA_ALLOC_CONF")
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = "timeout", "", ""
    rec["wall_s"] = round(time.monotonic() - t, 3)
    for line in out.splitlines():
        if line.startswith("BENCH "):
            rec["values"] = {}
            for k, _, v in (kv.partition("=") for kv in line.split()[1:]):
                try:
                    rec["values"][k] = float(v)
                except ValueError:
                    rec["values"][k] = v
            # The whole process, start to exit (interpreter, imports, CUDA
            # initialization included): what a whole program's user waits.
            rec["values"]["proc_ms"] = rec["wall_s"] * 1e3
    if rc != 0 or "values" not in rec:
        rec["error"] = "exit %s" % rc
        log("%s %s FAILED (exit %s): %s" % (name, mode, rc, err.strip()[-300:]))
    if err.strip():
        rec["stderr_tail"] = err[-1500:]
    RUNS[name][mode].append(rec)


def vals(name, mode, key):
    return [r["values"][key] for r in RUNS[name][mode]
            if "values" in r and isinstance(r["values"].get(key), float)]


def summ(v):
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)} if v else None


def fmt(v, unit):
    if v is None:
        return "-"
    if unit == "ns":
        return "%.2f ns" % v
    us = v * 1e3 if unit == "ms" else v
    if us >= 1e6:
        return "%.2f s" % (us / 1e6)
    if us >= 1e3:
        return "%.2f ms" % (us / 1e3)
    if us >= 10:
        return "%.1f us" % us
    return "%.2f us" % us


def fsum(s, unit):
    return "-" if not s else "%s [%s-%s]" % (fmt(s["median"], unit), fmt(s["min"], unit),
                                            fmt(s["max"], unit))


def gpu_count():
    """How many GPUs nvidia-smi lists (0 when it cannot say)."""
    try:
        q = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
        return sum(1 for x in q.stdout.splitlines() if x.startswith("GPU "))
    except (OSError, subprocess.SubprocessError):
        return 0


NGPU = 0


def row(rid, what, name, key, unit, target, check, native_from=None):
    if ONLY and name not in ONLY:
        return
    if name in SKIP:
        ROWS.append({"row": rid, "what": what, "experiment": name, "key": key, "unit": unit,
                     "native": None, "safepin": None, "ratio": None,
                     "result": "skipped: " + SKIP[name], "target": target, "met": None})
        return
    if name in TWO_GPU and NGPU < 2:
        ROWS.append({"row": rid, "what": what, "experiment": name, "key": key, "unit": unit,
                     "native": None, "safepin": None, "ratio": None,
                     "result": "skipped: needs two GPUs (%d here)" % NGPU, "target": target,
                     "met": None})
        return
    n = summ(vals(native_from or name, "native", key))
    s = summ(vals(name, "safepin", key))
    ratio = s["median"] / n["median"] if n and s and n["median"] else None
    try:
        res, met = check(n, s, ratio)
    except (TypeError, ZeroDivisionError, KeyError):
        res, met = "-", None
    ROWS.append({"row": rid, "what": what, "experiment": name, "key": key, "unit": unit,
                 "native": n, "safepin": s, "ratio": ratio, "result": res, "target": target,
                 "met": met})


def le(limit, unit):
    return lambda n, s, r: (fmt(s["median"], unit), s["median"] <= limit)


def ratio_le(limit):
    return lambda n, s, r: ("%.3f" % r, r <= limit)


def reported(n, s, r):
    return "%.3f" % r, None


def runs_ok_ratio_le(name, limit):
    """ratio_le(limit), failed outright when a safepin run of name failed
    (strict mode's exit status 23 included)."""
    def f(n, s, r):
        bad = sorted({x["error"] for x in RUNS[name]["safepin"] if "error" in x})
        if bad:
            return "safepin run(s) failed: %s" % ", ".join(bad), False
        return "%.3f" % r, r <= limit
    return f


def build_rows():
    row("unregister-call", "ordered, prior work done, 4 KiB", "unreg_idle", "call_us", "us",
        "safepin <= 10 us", le(10, "us"))
    row("unregister-call", "async, 500 ms kernel on an unrelated stream", "unreg_busy_async",
        "call_us", "us", "safepin <= 10 us", le(10, "us"))
    row("unregister-call", "async, 500 ms kernel, backtrace=0 (extra)", "unreg_busy_async_bt0",
        "call_us", "us", "-", lambda n, s, r: (fmt(s["median"], "us"), None),
        native_from="unreg_busy_async")
    row("launch-latency", "other thread's worst launch, register/unregister churn", "launch",
        "worst_ms", "ms", "safepin <= 1 ms", le(1, "ms"))
    row("launch-latency", "other thread's p99 launch (extra)", "launch", "p99_ms", "ms", "-",
        lambda n, s, r: (fmt(s["median"], "ms"), None))

    def faster(n, s, r):
        x = n["median"] / s["median"]
        return "%.0fx faster" % x, x >= 100
    row("revive", "unregister + same register, 256 MiB", "revive", "cycle_us", "us",
        "native/safepin >= 100", faster)
    # Issue 24's targets: ordered at native speed, async at half of it.
    row("pipeline", "wall, 4 streams x 200 (ordered, default)", "pipeline", "wall_ms", "ms",
        "ratio <= 1.0", ratio_le(1.0))
    row("pipeline", "wall, 4 streams x 200 (unregister=async)", "pipeline_async", "wall_ms", "ms",
        "ratio <= 0.5", ratio_le(0.5))
    row("pipeline", "wall, async, hold_freed=1 (freed memory held too; extra)",
        "pipeline_async_holdfreed", "wall_ms", "ms", "-",
        lambda n, s, r: ("%.3f" % r, None), native_from="pipeline_async")
    row("pipeline-2gpu", "wall, 2 GPUs x 4 streams x 200, a thread each (ordered, default)",
        "pipeline2", "wall_ms", "ms", "(reported)", lambda n, s, r: ("%.3f" % r, None))
    row("pipeline-2gpu", "wall, 2 GPUs x 4 streams x 200, a thread each (unregister=async)",
        "pipeline2_async", "wall_ms", "ms", "(reported)", lambda n, s, r: ("%.3f" % r, None))
    row("release-latency", "p50, kernel end -> real unregister", "release", "p50_us", "us",
        "(reported)", lambda n, s, r: (fmt(s["median"], "us"), None))
    row("release-latency", "p99, kernel end -> real unregister", "release", "p99_us", "us",
        "(reported)", lambda n, s, r: (fmt(s["median"], "us"), None))
    for key, size in (("ns_64", "64 B"), ("ns_1m", "1 MiB")):
        row("free-hook-0", "malloc+free %s, no registration" % size, "free0", key, "ns",
            "ratio <= 1.05", ratio_le(1.05))

        def vs_floor(n, s, r, key=key):
            fl = summ(vals("floor0", "native", key))
            q = s["median"] / fl["median"]
            return "%.3f of floor (%.2f ns)" % (q, fl["median"]), q <= 1.03
        row("free-hook-0/floor", "malloc+free %s vs a forwarding-only free hook" % size, "free0",
            key, "ns", "safepin/floor <= 1.03", vs_floor)
        row("free-hook-10k", "malloc+free %s, 10k registered" % size, "free10k", key, "ns",
            "ratio <= 1.25", ratio_le(1.25))
    # Whole programs.
    for name, mode in (("torch_pinned", "cudaHostAlloc (default)"),
                       ("torch_pinned_reg", "pinned_use_cuda_host_register:True")):
        limit = 1.02 if name == "torch_pinned" else 1.0
        row("torch-pinned", "DataLoader 4 workers x 4 epochs, pin_memory, copy; %s" % mode, name,
            "loop_ms", "ms", "ratio <= %g" % limit, ratio_le(limit))
        row("torch-pinned", "same, whole process (import, CUDA init, exit; extra)", name,
            "proc_ms", "ms", "(reported)", reported)
    # Strict mode at exit: the cached blocks are leaks the default
    # suppressions must silence (exit 0), by module, without addr2line.
    row("torch-pinned", "whole process, pinned_use_cuda_host_register:True, strict=1 "
        "(exit: leaks matched against the default suppressions)", "torch_pinned_reg_strict",
        "proc_ms", "ms", "ratio <= 1.02", runs_ok_ratio_le("torch_pinned_reg_strict", 1.02))
    for key, what in (("us_4k", "a fresh 4 KiB NumPy array"),
                      ("us_64k", "a fresh 64 KiB NumPy array"),
                      ("us_1m", "a fresh 1 MiB NumPy array"),
                      ("us_16m", "a fresh 16 MiB NumPy array"),
                      ("reuse_1m_us", "one 1 MiB NumPy array, again and again")):
        row("cupy-register", "hostRegister + copy + hostUnregister, %s" % what,
            "cupy_reg", key, "us", "(reported)", reported)
    row("cupy-register", "the whole loop (1,240 cycles, allocation included)", "cupy_reg",
        "loop_ms", "ms", "(reported)", reported)
    row("whole-python", "pure-Python allocation churn, 4 threads, nothing registered",
        "churn_py", "wall_ms", "ms", "ratio <= 1.01", ratio_le(1.01))
    row("whole-python", "same, CPU time (extra)", "churn_py", "cpu_ms", "ms", "(reported)",
        reported)
    row("whole-c", "C malloc/calloc/realloc/free + mmap, 4 threads, nothing registered",
        "heavy0", "wall_ms", "ms", "ratio <= 1.02", ratio_le(1.02))
    row("whole-c", "same, CPU time (extra)", "heavy0", "cpu_ms", "ms", "(reported)", reported)
    row("whole-c", "same, 4 x 1 MiB registered (cudaHostRegister)", "heavy_reg", "wall_ms", "ms",
        "ratio <= 1.05", ratio_le(1.05))
    row("whole-c", "same, 4 x 1 MiB registered, CPU time (extra)", "heavy_reg", "cpu_ms", "ms",
        "(reported)", reported)


def table():
    hdr = ["row", "what", "native median [min-max]", "safepin median [min-max]", "ratio s/n",
           "result", "target", "met"]
    lines = [[r["row"], r["what"], fsum(r["native"], r["unit"]), fsum(r["safepin"], r["unit"]),
              "%.4g" % r["ratio"] if r["ratio"] is not None else "-", r["result"], r["target"],
              {True: "yes", False: "NO", None: "-"}[r["met"]]] for r in ROWS]
    w = [max(len(x[i]) for x in lines + [hdr]) for i in range(len(hdr))]
    out = ["  ".join(h.ljust(w[i]) for i, h in enumerate(hdr)),
           "  ".join("-" * n for n in w)]
    out += ["  ".join(c.ljust(w[i]) for i, c in enumerate(x)) for x in lines]
    met = [r for r in ROWS if r["met"] is not None]
    out.append("targets met: %d of %d" % (sum(1 for r in met if r["met"]), len(met)))
    return "\n".join(out)


def probe_clients():
    """SKIP the whole programs this python3 cannot run, saying why."""
    why = {}
    for mod in sorted(set(NEEDS.values())):
        try:
            q = subprocess.run([PY, "-c", PROBES[mod]], capture_output=True, text=True,
                               timeout=300)
            ok, err = q.returncode == 0, (q.stderr.strip().splitlines() or ["?"])[-1]
        except (OSError, subprocess.SubprocessError) as e:
            ok, err = False, str(e)
        if not ok:
            why[mod] = "%s unavailable to this python3: %s" % (mod, err[:120])
            log("%s cannot import or use %s: %s" % (PY, mod, err))
        else:
            log("%s %s" % (mod, q.stdout.strip()))
    for name, mod in NEEDS.items():
        if mod in why:
            SKIP[name] = why[mod]
    if not os.path.exists(HEAVY):
        for name in ("heavy0", "heavy_reg"):
            SKIP[name] = "%s is missing (make gpu-build)" % os.path.relpath(HEAVY, ROOT)


def main():
    for p in (LIB, PROG, FLOOR):
        if not os.path.exists(p):
            sys.exit("gpu-bench: %s is missing" % p)
    global NGPU
    NGPU = gpu_count()
    probe_clients()
    for name, why in SKIP.items():
        log("%s skipped: %s" % (name, why))
    names = [n for n in EXPS if (not ONLY or n in ONLY) and (n not in TWO_GPU or NGPU >= 2)
             and n not in SKIP]
    t0 = time.monotonic()
    for rep in range(max((EXPS[n][1] for n in names), default=0)):
        for n in names:
            if rep < EXPS[n][1]:
                # their native runs are unreg_busy_async's and pipeline_async's
                if n not in ("unreg_busy_async_bt0", "pipeline_async_holdfreed"):
                    run_one(n, "native")
                if n != "floor0":
                    run_one(n, "safepin")
        log("round %d done (%.0f s)" % (rep + 1, time.monotonic() - t0))
    build_rows()
    q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                       capture_output=True, text=True)
    head = ("gpu-bench on %s; native and safepin interleaved, median [min-max] of %d runs "
            "(slow rows %d; nanosecond rows %d; whole programs of about a second %d); "
            "ratio = safepin/native of the medians; %.0f s"
            % (q.stdout.strip(), REPS, SLOW, NS, MANY, time.monotonic() - t0))
    text = head + "\n" + table()
    print(text)
    with open(os.path.join(BUILD, "gpu-bench.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(BUILD, "gpu-bench.json"), "w") as f:
        json.dump({"generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "gpu": q.stdout.strip(), "reps": REPS, "python": PY, "skipped": SKIP,
                   "rows": ROWS, "runs": RUNS}, f, indent=1)


if __name__ == "__main__":
    main()
