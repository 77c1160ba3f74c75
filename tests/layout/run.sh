#!/usr/bin/env bash
# tests/layout/run.sh - the core names no runtime, as TAP lines.
#
# The core (util registry diag runtime streams reaper core) reaches a
# runtime only through the table a face registers (runtime/runtime.h):
#   1. no core object takes a symbol from a face's objects (hip/, cuda/),
#      nor from interpose/ beyond the libc names it exports (nm);
#   2. the check sees such a reference where there is one: the faces'
#      objects do take symbols from the core's (a control);
#   3. no core source includes a runtime's header or a face's;
#   4. the core and the process layer link alone: tests/unit-core's binary
#      (the core, interpose/ without its exports, a toy runtime as its face) has
#      no undefined symbol that a face would define;
#   5. the process layer names no face either: no interpose/ object takes a
#      symbol from a face's objects (faces register in a table, face.h);
#   6. the check sees such a reference where there is one: the faces'
#      objects take symbols from interpose/ and the core (a control), and
#      interpose/ objects do take symbols from each other;
#   7. no interpose/ source includes a runtime's or a face's header, and no
#      interpose/ object defines or takes a symbol named for a runtime
#      (hip*, cu*, cuda*, sp_hip*, sp_cu*): a runtime's real functions live
#      in its face's table; the control: the faces' objects do; and no
#      face includes interpose/'s own header (internal.h): a face uses the
#      process layer through interpose.h, face.h and backend.h.
# Usage: BUILD=build tests/layout/run.sh
set -u
BUILD=${BUILD:-build}
OBJ=$BUILD/obj
CORE_DIRS="util registry diag runtime streams reaper core"
FACE_DIRS="hip cuda"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
ok()     { echo "ok - $1"; }
not_ok() { fails=$((fails + 1)); echo "not ok - $1"; shift; for l in "$@"; do echo "# $l"; done; }

objs() { for d in "$@"; do ls "$OBJ/$d"/*.o 2>/dev/null; done; }
undef() { for o in "$@"; do nm -u "$o" | awk '{print $2}'; done | sort -u; }
defined() { for o in "$@"; do nm --defined-only "$o" | awk '$2 ~ /^[TDBRVWGS]$/ {print $3}'; done | sort -u; }

core_objs=$(objs $CORE_DIRS)
face_objs=$(objs $FACE_DIRS)
if [ -z "$core_objs" ] || [ -z "$face_objs" ]; then
    echo "not ok - objects missing under $OBJ (build first)"; exit 1
fi
undef $core_objs >"$TMP/core.u"
defined $core_objs >"$TMP/core.d"
undef $face_objs >"$TMP/face.u"
defined $face_objs >"$TMP/face.d"
interpose_objs=$(objs interpose)
defined $interpose_objs >"$TMP/interpose.d"
# The libc names interpose/ exports (libc.inc): the core calls libc's.
sed -n 's/^SP_LIBC([A-Z]*, *[^,]*, *\([A-Za-z_0-9]*\),.*/\1/p' interpose/libc.inc | sort -u >"$TMP/libc.n"

comm -12 "$TMP/core.u" "$TMP/face.d" >"$TMP/bad1"
if [ ! -s "$TMP/bad1" ]; then
    ok "no core object takes a symbol from a face ($(echo $core_objs | wc -w) core objects, $(echo $face_objs | wc -w) face objects)"
else
    not_ok "no core object takes a symbol from a face" "$(tr '\n' ' ' <"$TMP/bad1")"
fi
comm -12 "$TMP/core.u" "$TMP/interpose.d" | comm -23 - "$TMP/libc.n" >"$TMP/bad2"
if [ ! -s "$TMP/bad2" ]; then
    ok "no core object takes a symbol from interpose/ (beyond libc's names)"
else
    not_ok "no core object takes a symbol from interpose/" "$(tr '\n' ' ' <"$TMP/bad2")"
fi
n=$(comm -12 "$TMP/face.u" "$TMP/core.d" | grep -c '^sp_core_register$')
if [ "$n" -eq 1 ]; then
    ok "control: the check sees the faces' references into the core (sp_core_register)"
else
    not_ok "control: the check sees the faces' references into the core"
fi

bad=$(grep -lE '#include *[<"](hip/|cuda|backend\.h|hip\.h|cuda_[a-z]*\.h|interpose\.h|internal\.h")' \
      $(for d in $CORE_DIRS; do ls $d/*.c $d/*.h 2>/dev/null; done) 2>/dev/null)
if [ -z "$bad" ]; then
    ok "no core source includes a runtime's or a face's header"
else
    not_ok "no core source includes a runtime's or a face's header" "$bad"
fi

BIN=$BUILD/tests/unit_core_tests
if [ -x "$BIN" ]; then
    undef "$BIN" | comm -12 - "$TMP/face.d" >"$TMP/bad3"
    if [ ! -s "$TMP/bad3" ] && ! nm "$BIN" | grep -qE ' [TD] (sp_host_register|sp_cu_host_register|sp_hip_face_init|sp_cuda_face_init)$'; then
        ok "the core links alone (the toy runtime's test binary has no face in it)"
    else
        not_ok "the core links alone" "$(tr '\n' ' ' <"$TMP/bad3")"
    fi
else
    not_ok "the core links alone ($BIN missing)"
fi
# 5-6: the process layer. Its objects' references, each object's apart
# (so that one object's reference is not hidden by another's definition).
: >"$TMP/proc.bad"
for o in $interpose_objs; do
    undef "$o" | comm -12 - "$TMP/face.d" | sed "s|^|$(basename "$o"): |" >>"$TMP/proc.bad"
done
if [ ! -s "$TMP/proc.bad" ]; then
    ok "no interpose/ object takes a symbol from a face ($(echo $interpose_objs | wc -w) interpose objects)"
else
    not_ok "no interpose/ object takes a symbol from a face" "$(tr '\n' ' ' <"$TMP/proc.bad")"
fi
down=$(comm -12 "$TMP/face.u" "$TMP/interpose.d" | wc -l)
down_core=$(comm -12 "$TMP/face.u" "$TMP/core.d" | wc -l)
within=$(undef $interpose_objs | comm -12 - "$TMP/interpose.d" | grep -c '^sp_faces$')
if [ "$down" -gt 0 ] && [ "$down_core" -gt 0 ] && [ "$within" -eq 1 ]; then
    ok "control: the check sees the faces' references down into interpose/ ($down) and the core ($down_core), and interpose/'s own (sp_faces)"
else
    not_ok "control: the check sees references down from the faces" "interpose/: $down core: $down_core sp_faces: $within"
fi
# 7: the process layer's sources and symbols name no runtime.
bad=$(grep -lE '#include *[<"](hip/|cuda|hip[a-z_]*\.h|cuda[a-z_]*\.h)' interpose/*.c interpose/*.h 2>/dev/null)
if [ -z "$bad" ]; then
    ok "no interpose/ source includes a runtime's or a face's header"
else
    not_ok "no interpose/ source includes a runtime's or a face's header" "$bad"
fi
bad=$(grep -lE '#include *"internal\.h"' $(for d in $FACE_DIRS; do ls $d/*.c $d/*.h 2>/dev/null; done) 2>/dev/null)
if [ -z "$bad" ]; then
    ok "no face includes interpose/'s own header (internal.h)"
else
    not_ok "no face includes interpose/'s own header (internal.h)" "$bad"
fi
runtime_names() { for o in "$@"; do nm "$o" | awk '{print $NF}' | grep -E '^(hip|cu[A-Z]|cuda|sp_hip|sp_cu)' | sed "s|^|$(basename "$o"): |"; done; }
runtime_names $interpose_objs >"$TMP/proc.names"
n_face=$(runtime_names $face_objs | wc -l)
if [ ! -s "$TMP/proc.names" ] && [ "$n_face" -gt 0 ]; then
    ok "no interpose/ object has a symbol named for a runtime (the faces' objects have $n_face)"
else
    not_ok "no interpose/ object has a symbol named for a runtime" "$(head -5 "$TMP/proc.names" | tr '\n' ' ')" "faces: $n_face"
fi
[ "$fails" -eq 0 ]
