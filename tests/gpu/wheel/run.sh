#!/bin/bash
# tests/gpu/wheel/run.sh WHEEL - the Python recipes of docs/recipes.md on a GPU machine,
# from the installed wheel (tests/gpu/RESULTS.md, "The Python wheel").
#
# Installs WHEEL into the active Python environment (pip --no-index, as a
# user of an activated venv does), then:
#  1. the PyTorch recipe: train_pinned.py with
#     PYTORCH_CUDA_ALLOC_CONF=pinned_use_cuda_host_register:True, bare and
#     under `safepin --strict --report` (the reports read with
#     safepin.read_report);
#  2. the pytest recipe: safepin-smoke --junit over three pytest runs of
#     test_pinned.py (the clean tests; all of them, with the leaked
#     registration; the clean tests without conftest.py, whose fixture
#     empties PyTorch's pinned cache at the end), and all of them bare;
#  3. the venv recipe: a fresh `python3 -m venv`, the wheel into it, its
#     launcher's --version and library.
# Writes safepin-smoke.xml, pytest.xml and reports.json under OUT (default:
# a temporary folder); the log goes to stdout.
WHEEL=$(readlink -f "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
W=$(mktemp -d /tmp/safepin-wheel-gpu.XXXXXX)
export PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
step() { printf '\n$ %s\n' "$*"; "$@"; local rc=$?; echo "(exit status $rc)"; return $rc; }

echo "# $(date -u '+%Y-%m-%d %H:%M UTC') $(uname -r)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c 'import sys, torch, pytest; print("python", sys.version.split()[0], sys.executable, "torch", torch.__version__, "pytest", pytest.__version__)'
ldd --version | head -1
step python3 -m pip install --no-index --no-deps "$WHEEL"
step safepin --version
step python3 -m safepin --version
step safepin-smoke --version
python3 -c 'import safepin; print("library_path()", safepin.library_path())'

# 1. PyTorch
cp "$HERE/train_pinned.py" "$HERE/test_pinned.py" "$HERE/conftest.py" "$W/" && cd "$W" || exit 1
export PYTORCH_CUDA_ALLOC_CONF=pinned_use_cuda_host_register:True
step python3 train_pinned.py
step safepin --strict --report "$W/train.%p.json" -- python3 train_pinned.py
python3 - "$W" "$OUT/reports.json" <<'PY'
import glob, json, sys, safepin
reps = {p: safepin.read_report(p) for p in sorted(glob.glob(sys.argv[1] + "/train.*.json"))}
for p, r in reps.items():
    c = r["counters"]
    print("report %s: version %s, runtimes %s, violations %d, registrations %d, releases completed %d, deferred frees %d, release latency p50 %s us"
          % (p.rsplit("/", 1)[1], r["version"], r.get("runtimes"), r["violations_total"], c["registrations"],
             c["releases_completed"], c["deferred_frees"], r["release_latency_us"].get("p50")))
json.dump(reps, open(sys.argv[2], "w"), indent=1)
PY

# 2. pytest (PyTorch's pinned allocator still in cudaHostRegister mode):
# the clean tests, all of them, the clean tests without conftest.py's
# emptying of the pinned cache.
step safepin-smoke -j 1 --timeout 300 --junit "$OUT/safepin-smoke.xml" \
    -- python3 -m pytest -q -p no:cacheprovider -k "not leak" --junitxml="$OUT/pytest.xml" test_pinned.py \
    -- python3 -m pytest -q -p no:cacheprovider test_pinned.py \
    -- python3 -m pytest -q -p no:cacheprovider --noconftest -k "not leak" test_pinned.py
step python3 -m pytest -q -p no:cacheprovider test_pinned.py
sed -n '/<failure/,/<\/failure>/p' "$OUT/safepin-smoke.xml" | head -30

# 3. a fresh venv
step python3 -m venv "$W/venv" || step python3 -m venv --without-pip "$W/venv"
if [ -x "$W/venv/bin/pip" ]; then
    step "$W/venv/bin/pip" install --no-index "$WHEEL"
else
    step python3 -m pip --python "$W/venv/bin/python" install --no-index "$WHEEL"
fi
step "$W/venv/bin/safepin" --version
step "$W/venv/bin/safepin" -- "$W/venv/bin/python" -c 'import os, safepin; p = safepin.library_path(); print(p); assert os.environ["LD_PRELOAD"].split(":")[-1] == p and p in open("/proc/self/maps").read()'
rm -rf "$W"
