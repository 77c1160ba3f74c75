#!/usr/bin/env python3
"""bench.py - make gpu-bench: what safepin costs and saves on a real NVIDIA
GPU, in the format of make bench.

Runs build/gpu/gpubench (static cudart) for each experiment, bare ("native")
and under LD_PRELOAD=build/libsafepin.so, interleaved (native, safepin,
native, ...); each row gives the median [min-max] of the runs and checks the
target taken from the GPU's native figures (issue 11). Writes
build/gpu-bench.json and build/gpu-bench.txt.

Environment: SAFEPIN_LIB, GPU_BENCH_REPS (default 5; slow rows run 3),
GPU_BENCH_ONLY (comma-separated experiment names). The two-GPU rows
(pipeline2: two threads, one device each) are skipped, saying so, on a
machine with one GPU.
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
ONLY = [x for x in os.environ.get("GPU_BENCH_ONLY", "").split(",") if x]
SAFEPIN_BASE = "log=error:summary=0"

# name: (experiment args, reps, extra SAFEPIN_OPTIONS, extra env)
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
    "free0": (["free", "live=0"], REPS, "", {}),
    "floor0": (["free", "live=0"], REPS, "", {"LD_PRELOAD": FLOOR}),
    "free10k": (["free", "live=10000"], REPS, "", {}),
}
TWO_GPU = {"pipeline2", "pipeline2_async"}
RUNS = {k: {"native": [], "safepin": []} for k in EXPS}
ROWS = []


def log(msg):
    sys.stderr.write("[gpu-bench %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def run_one(name, mode):
    args, _, opts, extra = EXPS[name]
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "SAFEPIN_OPTIONS"):
        env.pop(k, None)
    env.update(extra)
    if mode == "safepin":
        env["LD_PRELOAD"] = LIB
        env["SAFEPIN_OPTIONS"] = SAFEPIN_BASE + (":" + opts if opts else "")
    rec = {"mode": mode, "cmd": " ".join([PROG] + args), "SAFEPIN_OPTIONS": env.get("SAFEPIN_OPTIONS")}
    t = time.monotonic()
    try:
        p = subprocess.run([PROG] + args, env=env, capture_output=True, text=True, timeout=120)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = "timeout", "", ""
    rec["wall_s"] = round(time.monotonic() - t, 3)
    for line in out.splitlines():
        if line.startswith("BENCH "):
            rec["values"] = {k: float(v) for k, _, v in (kv.partition("=") for kv in line.split()[1:])}
    if rc != 0 or "values" not in rec:
        rec["error"] = "exit %s" % rc
        log("%s %s FAILED (exit %s): %s" % (name, mode, rc, err.strip()[-300:]))
    if err.strip():
        rec["stderr_tail"] = err[-1500:]
    RUNS[name][mode].append(rec)


def vals(name, mode, key):
    return [r["values"][key] for r in RUNS[name][mode] if "values" in r and key in r["values"]]


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


def build_rows():
    row("unregister-call", "ordered, prior work done, 4 KiB", "unreg_idle", "call_us", "us",
        "safepin <= 10 us", le(10, "us"))
    row("unregister-call", "async, 500 ms kernel on an unrelated stream", "unreg_busy_async",
        "call_us", "us", "safepin <= 20 us", le(20, "us"))
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
    row("pipeline", "wall, 4 streams x 200 (ordered, default)", "pipeline", "wall_ms", "ms",
        "ratio <= 0.6", ratio_le(0.6))
    row("pipeline", "wall, 4 streams x 200 (unregister=async)", "pipeline_async", "wall_ms", "ms",
        "ratio <= 0.6", ratio_le(0.6))
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


def main():
    for p in (LIB, PROG, FLOOR):
        if not os.path.exists(p):
            sys.exit("gpu-bench: %s is missing" % p)
    global NGPU
    NGPU = gpu_count()
    names = [n for n in EXPS if (not ONLY or n in ONLY) and (n not in TWO_GPU or NGPU >= 2)]
    t0 = time.monotonic()
    for rep in range(max(EXPS[n][1] for n in names)):
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
            "(slow rows %d); ratio = safepin/native of the medians; %.0f s"
            % (q.stdout.strip(), REPS, SLOW, time.monotonic() - t0))
    text = head + "\n" + table()
    print(text)
    with open(os.path.join(BUILD, "gpu-bench.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(BUILD, "gpu-bench.json"), "w") as f:
        json.dump({"generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "gpu": q.stdout.strip(), "reps": REPS, "rows": ROWS, "runs": RUNS}, f, indent=1)


if __name__ == "__main__":
    main()
