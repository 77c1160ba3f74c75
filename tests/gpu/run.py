#!/usr/bin/env python3
"""run.py - make gpu-test: every hazard on a real NVIDIA GPU, bare and under
LD_PRELOAD=build/libsafepin.so, in one table.

Rows:
  - hazards.c built three ways (nvcc static cudart, -cudart shared, driver
    API with -lcuda): build/gpu/hazards-{static,shared,driver};
  - the unmodified clients: cupy_hazards.py and torch_hazards.py (skipped,
    saying so, when the machine's python3 lacks CuPy or PyTorch);
  - the legacy HIP programs of tests/legacy, built for NVIDIA from the same
    sources (hipnv/): build/gpu/legacy/<prog>.

A hazard row passes when the bare run shows the hazard (result=hazard, with
its evidence) and the safepin run gets the right result (result=ok). The
implicit-sync row is no hazard bare (the driver's unregister waits): it
passes when both runs read the right bytes. A legacy row passes when the
bare run shows the evidence listed in LEGACY and the safepin run prints OK.
Every safepin run must also leave safepin's report file (proof that the
library was loaded and initialized).

Writes build/gpu-test.txt (the table) and build/gpu-test.json (every run).
Environment: SAFEPIN_LIB (default build/libsafepin.so), GPU_TEST_ONLY
(comma-separated row groups: c, cupy, torch, legacy).
"""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
GB = os.path.join(BUILD, "gpu")
LIB = os.environ.get("SAFEPIN_LIB") or os.path.join(BUILD, "libsafepin.so")
LOGS = os.path.join(BUILD, "gpu-logs")
HERE = os.path.dirname(os.path.abspath(__file__))
ONLY = [x for x in os.environ.get("GPU_TEST_ONLY", "").split(",") if x]

# test -> (what, expected bare result, extra SAFEPIN_OPTIONS)
TESTS = {
    "stall": ("device-wide stall: unregister behind a 500 ms kernel on another stream", "hazard",
              "unregister=async"),
    "launch": ("another thread's launch stalled by an unregister", "hazard", ""),
    "hostfunc": ("unregister in a host function: 800 and a leaked pin", "hazard", ""),
    "rereg": ("identical re-register: 712", "hazard", ""),
    "reuse": ("register new memory at an unmapped/freed registration's address: 712", "hazard", ""),
    "lost": ("writes lost into pages still pinned after munmap/free", "hazard", ""),
    "capture": ("capture killed by another thread's unregister: 900/901", "hazard", ""),
    "implicit": ("implicit-sync reader gets the right bytes (no hazard bare)", "ok", ""),
    # Two GPUs: a registration made on device 0 (Portable | Mapped), used by a
    # 500 ms kernel on device 1, unregistered on device 0's thread and read at
    # once, then unmapped; another thread launches on both devices meanwhile.
    # Bare: stale bytes or a faulting kernel (the unregister did not wait for
    # device 1), or the launches stall behind it (it did).
    "dev1_blocking": ("two GPUs: device 1 busy on a blocking stream", "hazard", ""),
    "dev1_nonblocking": ("two GPUs: device 1 busy on a non-blocking stream", "hazard", ""),
    "dev1_per_thread": ("two GPUs: device 1 busy on the per-thread stream", "hazard", ""),
    "dev1_unrelated": ("two GPUs: launches stalled by an unregister behind device 1's kernel",
                       "hazard", ""),
}
TWO_GPU = {"dev1_blocking", "dev1_nonblocking", "dev1_per_thread", "dev1_unrelated"}
C_BUILDS = ["static", "shared", "driver"]
# What each client script has (PyTorch has no host-function launch in
# Python and no way to wrap a mapped host pointer: torch_hazards.py says so).
PY_TESTS = {"cupy": ["stall", "launch", "hostfunc", "rereg", "reuse", "lost", "implicit", "capture",
                     "dev1_blocking"],
            "torch": ["stall", "launch", "rereg", "reuse", "implicit", "capture"]}

# The legacy HIP programs on the GPU: the evidence the bare run must show.
#   clean      exit 0 and OK (CUDA is safe here; the row checks transparency)
#   code:N     the program stopped on a call that returned N
#   wrong      the program found wrong bytes ("corrupted data")
#   observe    no verdict on the bare run (the row shows what happened)
#   safe       the bare run is shown without a verdict; the row passes when
#              the safepin run prints OK (the two-GPU programs: whether the
#              driver's unregister waits for the other device is what the
#              bare run shows; hazards.c's dev1_* rows judge it)
# (From DESIGN section 3's CUDA facts, as the first H200 run showed them:
# CUDA answers 712 where HIP before 7.x kept a stale registration, 800 in a
# host function, 900 to another thread's call during a global capture.)
CODE712 = ("churn_two_threads fixed_map_in_callback mremap_registered noreplace_after_munmap "
           "stale_free stale_munmap stale_shmdt").split()
CLEAN = ("bad_mem_args cancel_in_wait exit_in_signal hole_fixed_map hole_in_range_unmap "
         "hole_unmap leak_at_exit madvise_pending mremap_shrink_live neighbour_free "
         "own_capture_register pending_copy refused_fixed_mmap reregister_larger stream_destroyed "
         "unreg_busy_stream unreg_visibility").split()
# Two devices (DESIGN G1, "any stream of any device"): skipped, saying so,
# on a machine with one GPU.
TWO_GPU_LEGACY = ("second_device two_dev_free_blocking two_dev_free_nonblocking "
                  "two_dev_free_per_thread").split()
LEGACY = dict([(p, "code:712") for p in CODE712] + [(p, "clean") for p in CLEAN] +
              [(p, "safe") for p in TWO_GPU_LEGACY] +
              [("capture_unregister", "code:900"), ("unreg_in_callback", "code:800")])
# Observed without a verdict (their checks are HIP's answers, which CUDA
# does not give: attribute struct of unregistered memory, interior
# unregister's code, register of hipHostMalloc memory, bad arguments):
# attr_race bad_args capture_refused_calls double_unregister hipfree_host_ptr
# interior_unregister runtime_answers.
LEGACY_SKIP = {
    "two_dev_launches": "its doorbell kernel has no GPU form (hazards.c dev1_* are its GPU form)",
    "unreg_free_reuse": "its reduce kernel has no GPU form",
    "main_pthread_exit": "bare on CUDA the process does not end after main's pthread_exit "
                         "(it printed OK; killed after 20 s)",
}
LEGACY_TIMEOUT = 20
# Hazards out of a preload library's reach, by build: the row shows the hazard
# under safepin too and gets no verdict (docs/limits.md). Inside
# a host function NVIDIA's runtime refuses cudaHostUnregister with 800 before
# it reaches the driver; safepin takes that call itself only where the runtime
# is a shared library (cuda/cudart.c). The same programs with the shared
# runtime (hazards-shared, legacy-shared/) must pass.
STATIC_RT = "static cudart: the runtime refuses the call inside the executable, out of reach"
LIMITS = {("hazards-static", "hostfunc"): STATIC_RT, ("legacy/unreg_in_callback", "-"): STATIC_RT,
          # CuPy links the runtime statically into its extension module
          # (libcudart_static in cupy_backends/cuda/api/runtime.*.so).
          ("cupy_hazards.py", "hostfunc"): "CuPy's extension links cudart statically: " + STATIC_RT}
# Programs that end where safepin writes no report, by design (exit() from a
# signal handler skips the exit drain and the report: commit 0384fff).
NO_REPORT = {"exit_in_signal"}

ROWS = []
RUNS = []


def log(msg):
    sys.stderr.write("[gpu-test %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def run(cmd, mode, name, opts="", timeout=60):
    """Run cmd bare or under safepin; returns a record with rc, out, err."""
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "SAFEPIN_OPTIONS"):
        env.pop(k, None)
    env["PYTHONUNBUFFERED"] = "1"
    report = None
    if mode == "safepin":
        report = os.path.join(LOGS, "%s.report.json" % name)
        if os.path.exists(report):
            os.unlink(report)
        env["LD_PRELOAD"] = LIB
        env["SAFEPIN_OPTIONS"] = ":".join(x for x in (opts, "report=" + report) if x)
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True,
                           timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout"
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    rec = {"name": name, "mode": mode, "cmd": " ".join(cmd), "rc": rc,
           "wall_s": round(time.monotonic() - t, 3), "stdout": out[-4000:], "stderr": err[-4000:]}
    if mode == "safepin":
        rec["SAFEPIN_OPTIONS"] = env["SAFEPIN_OPTIONS"]
        rec["safepin_loaded"] = os.path.exists(report)
    with open(os.path.join(LOGS, "%s.%s.log" % (name, mode)), "w") as f:
        f.write("$ %s\nrc=%s\n--- stdout\n%s\n--- stderr\n%s\n" % (rec["cmd"], rc, out, err))
    RUNS.append(rec)
    return rec


LINE_RE = re.compile(r"^GPUTEST (\S+) api=(\S+) result=(\S+) ?(.*)$", re.M)


def parse(rec):
    """{test: (result, evidence)} from a run's GPUTEST lines."""
    return {m.group(1): (m.group(3), m.group(4)) for m in LINE_RE.finditer(rec["stdout"])}


def no_line(rec):
    tail = (rec["stderr"].strip().splitlines() or ["(no output)"])[-1]
    return ("fail", "no GPUTEST line (exit %s): %s" % (rec["rc"], tail[:160]))


def gpu_count():
    """How many GPUs nvidia-smi lists (0 when it cannot say)."""
    try:
        q = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
        return sum(1 for x in q.stdout.splitlines() if x.startswith("GPU "))
    except (OSError, subprocess.SubprocessError):
        return 0


NGPU = None


def skipped_row(program, test, why):
    ROWS.append({"program": program, "test": test, "what": "skipped: " + why,
                 "bare": "-", "bare_evidence": "", "safepin": "-", "safepin_evidence": "",
                 "want_bare": "-", "pass": None, "note": "skipped"})


def add_row(program, test, what, bare, safe, want_bare, safe_rec):
    if bare[0] == "skip" or safe[0] == "skip":
        skipped_row(program, test, bare[1] if bare[0] == "skip" else safe[1])
        return
    loaded = safe_rec.get("safepin_loaded", False)
    ok = bare[0] == want_bare and safe[0] == "ok" and loaded
    why = ""
    if not loaded:
        why = "safepin's report missing: the library did not load"
    elif not ok and (program, test) in LIMITS and bare[0] == want_bare:
        ok, why = None, "limit: " + LIMITS[(program, test)]
    ROWS.append({"program": program, "test": test, "what": what, "bare": bare[0],
                 "bare_evidence": bare[1], "safepin": safe[0], "safepin_evidence": safe[1],
                 "want_bare": want_bare, "pass": ok, "note": why})


def c_rows():
    for b in C_BUILDS:
        exe = os.path.join(GB, "hazards-" + b)
        for test, (what, want, opts) in TESTS.items():
            if test in TWO_GPU and NGPU < 2:
                skipped_row("hazards-" + b, test, "needs two GPUs (%d here)" % NGPU)
                continue
            name = "hazards-%s-%s" % (b, test)
            rb = run([exe, test], "bare", name)
            rs = run([exe, test], "safepin", name, opts)
            bare = parse(rb).get(test) or no_line(rb)
            safe = parse(rs).get(test) or no_line(rs)
            add_row("hazards-" + b, test + (" [%s]" % opts if opts else ""), what, bare, safe,
                    want, rs)
            log("%s %s: bare %s, safepin %s" % (b, test, bare[0], safe[0]))


def py_rows(client, script):
    mod = {"cupy": "cupy", "torch": "torch"}[client]
    probe = subprocess.run([sys.executable, "-c", "import %s" % mod], capture_output=True)
    if probe.returncode != 0:
        ROWS.append({"program": script, "test": "-", "what": "skipped: python3 has no %s" % mod,
                     "bare": "-", "bare_evidence": "", "safepin": "-", "safepin_evidence": "",
                     "want_bare": "-", "pass": None, "note": "skipped"})
        return
    path = os.path.join(HERE, script)
    # One process per test and mode: a hazard shown bare leaves the process
    # with stale registrations that the next test would meet.
    tests = [t for t in TESTS if t in PY_TESTS[client]]
    for test in tests:
        what, want, opts = TESTS[test]
        if test in TWO_GPU and NGPU < 2:
            skipped_row(script, test, "needs two GPUs (%d here)" % NGPU)
            continue
        rb = run([sys.executable, path, test], "bare", "%s-%s" % (client, test), timeout=120)
        rs = run([sys.executable, path, test], "safepin", "%s-%s" % (client, test), opts,
                 timeout=120)
        add_row(script, test + (" [%s]" % opts if opts else ""), what,
                parse(rb).get(test) or no_line(rb), parse(rs).get(test) or no_line(rs), want, rs)
        log("%s %s: bare %s, safepin %s" % (client, test, ROWS[-1]["bare"], ROWS[-1]["safepin"]))


COMPLAINT_RE = re.compile(r"(tests/legacy/[a-z_]+\.c:\d+: .*|.*corrupted data.*|.*returned \S+ \(\d+\).*|"
                          r"stalled: .*|.*still registered.*|.*did not run.*|FAILED: .*)")
CODE_RE = re.compile(r"(?:returned|failed:) \S+ \((\d+)\)")


def legacy_evidence(rec):
    """(kind, evidence) of a legacy program's run."""
    out = rec["stdout"] + rec["stderr"]
    if rec["rc"] == "timeout":
        return "hang", "killed after %d s" % LEGACY_TIMEOUT
    m = COMPLAINT_RE.search(out)
    first = m.group(0).strip()[:200] if m else ""
    if rec["rc"] == 0 and re.search(r"^OK$", rec["stdout"], re.M):
        return "clean", "exit 0, OK" + ("; " + first if first else "")
    code = CODE_RE.search(first)
    if "corrupted data" in out:
        return "wrong", first
    if code:
        return "code:" + code.group(1), first
    lines = out.strip().splitlines()
    return "fail", "exit %s: %s" % (rec["rc"], first or (lines[-1][:200] if lines else "no output"))


def legacy_rows():
    progs = sorted("%s/%s" % (d, p) for d in ("legacy", "legacy-shared")
                   if os.path.isdir(os.path.join(GB, d)) for p in os.listdir(os.path.join(GB, d))
                   if os.access(os.path.join(GB, d, p), os.X_OK) and "." not in p
                   and p not in LEGACY_SKIP
                   and not (os.path.basename(p) in TWO_GPU_LEGACY and NGPU < 2))

    def both(prog):
        exe = os.path.join(GB, prog)
        name = prog.replace("/", "-")
        return (run([exe], "bare", name, timeout=LEGACY_TIMEOUT),
                run([exe], "safepin", name, timeout=LEGACY_TIMEOUT))
    # Four at a time: they are small, and each waits mostly on its own GPU work.
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        results = dict(zip(progs, ex.map(both, progs)))
    for prog in progs:
        rb, rs = results[prog]
        bk, bev = legacy_evidence(rb)
        sk, sev = legacy_evidence(rs)
        base = os.path.basename(prog)
        want = LEGACY.get(base, "observe")
        loaded = rs.get("safepin_loaded", False) or base in NO_REPORT
        if want == "safe":
            ok = sk == "clean" and loaded
        else:
            ok = None if want == "observe" else (bk == want and sk == "clean" and loaded)
        note = "" if loaded else "safepin's report missing"
        if ok is False and loaded and bk == want and (prog, "-") in LIMITS:
            ok, note = None, "limit: " + LIMITS[(prog, "-")]
        ROWS.append({"program": prog, "test": "-", "what": "HIP source on NVIDIA",
                     "bare": bk, "bare_evidence": bev, "safepin": "ok" if sk == "clean" else sk,
                     "safepin_evidence": sev, "want_bare": want, "pass": ok, "note": note})
    for prog, why in LEGACY_SKIP.items():
        skipped_row("legacy/" + prog, "-", why)
    if NGPU < 2:
        for prog in TWO_GPU_LEGACY:
            skipped_row("legacy/" + prog, "-", "needs two GPUs (%d here)" % NGPU)


def machine():
    info = {}
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        info["gpu"] = q.stdout.strip().splitlines()[0] if q.stdout.strip() else "?"
    except (OSError, subprocess.SubprocessError):
        info["gpu"] = "?"
    try:
        v = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, timeout=30)
        m = re.search(r"release ([\d.]+), (V[\d.]+)", v.stdout)
        info["cuda"] = "%s (%s)" % m.groups() if m else "?"
    except OSError:
        info["cuda"] = "?"
    for mod in ("cupy", "torch"):
        q = subprocess.run([sys.executable, "-c", "import %s; print(%s.__version__)" % (mod, mod)],
                           capture_output=True, text=True)
        info[mod] = q.stdout.strip() if q.returncode == 0 else "absent"
    info["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    info["host"] = os.uname().release
    return info


def table(info):
    out = ["gpu-test on %s (%s GPUs); driver/memory as above; CUDA %s; CuPy %s; PyTorch %s; kernel %s; %s"
           % (info["gpu"], info.get("gpus", "?"), info["cuda"], info["cupy"], info["torch"],
              info["host"], info["date"])]
    hdr = ["program", "test", "bare", "safepin", "pass", "evidence (bare | safepin)"]
    lines = []
    for r in ROWS:
        verdict = {True: "PASS", False: "FAIL", None: "-"}[r["pass"]]
        ev = "%s | %s" % (r["bare_evidence"], r["safepin_evidence"])
        if r["note"] and r["note"] != "skipped":
            ev += " [%s]" % r["note"]
        if r["note"] == "skipped":
            ev = r["what"]
        lines.append([r["program"], r["test"], r["bare"], r["safepin"], verdict, ev])
    w = [max(len(x[i]) for x in lines + [hdr]) for i in range(len(hdr) - 1)]
    fmt = lambda row: "  ".join([c.ljust(w[i]) for i, c in enumerate(row[:-1])] + [row[-1]])
    out.append(fmt(hdr))
    out.append(fmt(["-" * n for n in w] + ["-" * 26]))
    out += [fmt(x) for x in lines]
    npass = sum(1 for r in ROWS if r["pass"] is True)
    nfail = sum(1 for r in ROWS if r["pass"] is False)
    nobs = sum(1 for r in ROWS if r["pass"] is None)
    out.append("gpu-test: %d passed, %d failed, %d without verdict (skipped or observed)"
               % (npass, nfail, nobs))
    return "\n".join(out), nfail


def retable(path):
    """The table of a saved run (build/gpu-test.json), verdicts derived again
    with this file's LIMITS: python3 run.py --table build/gpu-test.json"""
    with open(path) as f:
        saved = json.load(f)
    for r in saved["rows"]:
        key = (r["program"], r["test"])
        if r["pass"] is False and key in LIMITS and r["bare"] == r["want_bare"] \
                and "report missing" not in r["note"]:
            r["pass"], r["note"] = None, "limit: " + LIMITS[key]
        ROWS.append(r)
    text, nfail = table(saved["machine"])
    print(text)
    sys.exit(1 if nfail else 0)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--table":
        retable(sys.argv[2])
    os.makedirs(LOGS, exist_ok=True)
    if not os.path.exists(LIB):
        sys.exit("gpu-test: %s is missing (make builds it)" % LIB)
    global NGPU
    NGPU = gpu_count()
    info = machine()
    info["gpus"] = NGPU
    log("machine: %s" % info)
    groups = ONLY or ["c", "cupy", "torch", "legacy"]
    if "c" in groups:
        c_rows()
    if "cupy" in groups:
        py_rows("cupy", "cupy_hazards.py")
    if "torch" in groups:
        py_rows("torch", "torch_hazards.py")
    if "legacy" in groups:
        legacy_rows()
    text, nfail = table(info)
    print(text)
    with open(os.path.join(BUILD, "gpu-test.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(BUILD, "gpu-test.json"), "w") as f:
        json.dump({"machine": info, "rows": ROWS, "runs": RUNS}, f, indent=1)
    sys.exit(1 if nfail else 0)


if __name__ == "__main__":
    main()
