#!/bin/bash
# tests/diag/lines.sh - every frame names the line of its call (DESIGN G13).
# For each mode of tests/diag/lines.c (one per diagnostic code), the lines
# safepin reports, in the log and in the JSON report, for the stacks "at",
# "registered at" and "unregistered/freed at" must be the lines of the
# program's calls marked /* @at */, /* @reg */ and /* @unreg */; each marked
# call ends its line, so a return address symbolized as it is names the
# line after. A stack the mode marks must be there; one it does not mark
# must not be (a leak's "at" would be the exit path). TAP lines.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
LIB=${LIB:-$BUILD/libsafepin.so}
SIM=$BUILD/simhip
PROG=$BUILD/tests/diag/lines
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

MODES='double-unregister unregister-unknown unregister-interior overlapping-register
nested-register freed-while-registered hipfree-host-pointer leak-at-exit capture-deferred
release-timeout runtime-error invalid-argument api-error revived'

for mode in $MODES; do
    opts="log=info:report=$T/$mode.json"
    [ "$mode" = release-timeout ] && opts="$opts:drain_timeout_ms=200:unregister=async"
    [ "$mode" = revived ] && opts="$opts:revive_grace_bytes=0:revive_grace_us=5000000"
    SAFEPIN_OPTIONS=$opts LD_PRELOAD=$LIB LD_LIBRARY_PATH=$SIM timeout 30 "$PROG" "$mode" \
        >"$T/$mode.out" 2>"$T/$mode.err"
    python3 - "$mode" tests/diag/lines.c "$T/$mode.err" "$T/$mode.json" <<'PY'
import json, re, sys
mode, src, err, rep = sys.argv[1:5]
# The marked lines of this mode's branch of lines.c.
lines = open(src).read().split("\n")
start = next(i for i, l in enumerate(lines) if '!strcmp(m, "%s")' % mode in l)
want = {}
for i in range(start + 1, len(lines)):
    if "} else" in lines[i]:
        break
    for k in re.findall(r"@(at|reg|unreg)\b", lines[i]):
        want[k] = i + 1
names = {"at": "at", "reg": "registered at", "unreg": "unregistered/freed at"}
problems = []
# The log: the first diagnostic line of the code, then its stacks.
text = open(err).read().split("\n")
first = next((i for i, l in enumerate(text) if re.match(r"==\d+==safepin: %s: " % re.escape(mode), l)), None)
got = {}
if first is None:
    problems.append("no '%s' line in the log" % mode)
else:
    section = None
    for l in text[first + 1:]:
        m = re.match(r"  (at|registered at|unregistered/freed at) \(thread \d+\):$", l)
        if m:
            section = [k for k, v in names.items() if v == m.group(1)][0]
            continue
        m = re.match(r"    #\d+ 0x[0-9a-f]+ in \S+ (\S+):(\d+) ", l)
        if section and not l.startswith("    #"):
            break
        if section and m and m.group(1).endswith("lines.c") and section not in got:
            got[section] = int(m.group(2))
for k in names:
    if k in want and got.get(k) != want[k]:
        problems.append("log: %s names line %s, the call is on line %d" % (names[k], got.get(k), want[k]))
    if k not in want and k in got:
        problems.append("log: a '%s' stack (line %d) where the program made no such call" % (names[k], got[k]))
# The report, for violations: the same lines, in separate fields.
try:
    r = json.load(open(rep))
except Exception as e:
    r = None
    problems.append("report: %s" % e)
vs = [v for v in (r or {}).get("violations", []) if v.get("code") == mode]
if vs:
    v = vs[0]
    keys = {"at": "at", "reg": "registered", "unreg": "unregistered"}
    for k, jk in keys.items():
        st = v.get(jk)
        line = None
        for fr in (st or {}).get("frames", []):
            if not {"function", "file", "line", "module", "offset"} <= set(fr):
                problems.append("report: a frame's fields are %s" % sorted(fr))
                break
            if fr.get("file", "").endswith("lines.c"):
                line = fr.get("line")
                if not re.match(r"0x[0-9a-f]+$", fr.get("offset", "")) or fr["offset"] == "0x0":
                    problems.append("report: frame offset %r" % fr.get("offset"))
                break
        if k in want and line != want[k]:
            problems.append("report: %s names line %s, the call is on line %d" % (jk, line, want[k]))
        if k not in want and st:
            problems.append("report: a '%s' stack where the program made no such call" % jk)
    if v.get("base") in (None, "0x0") or not v.get("size"):
        if mode not in ("unregister-unknown", "invalid-argument"):
            problems.append("report: range base %s size %s" % (v.get("base"), v.get("size")))
if problems:
    print("not ok - lines %s: %s" % (mode, "; ".join(problems)))
else:
    print("ok - lines %s: %s" % (mode, ", ".join("%s line %d" % (names[k], want[k]) for k in names if k in want)))
PY
done
