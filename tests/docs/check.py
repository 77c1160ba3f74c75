#!/usr/bin/env python3
"""check.py - the documentation's checks, for tests/docs/run.sh.

    check.py CHECK DOCROOT [SRCROOT]

DOCROOT holds README.md and docs/ (the tree, or a copy that run.sh breaks
on purpose); SRCROOT holds the code the docs are checked against (diag/,
the sources, the git repository; DOCROOT by default). Prints one problem a
line and exits 1 if there is any, 0 otherwise. CHECK is one of:

  codes    the README's table of diagnostic codes names every code of
           diag/codes.inc, with its violation flag, and no code the code
           does not log (the start-up notices are sp_log() calls)
  options  docs/options.md's table names every option of diag/options.inc
           with its default (an ENUM option: its words, SP_OPT_WORDS), and
           nothing else; the README's short table names only real options,
           with their defaults, and launcher flags that scripts/safepin
           accepts
  links    every relative link of README.md and docs/*.md reaches a file,
           and its #anchor a heading of that file
  hashes   no document holds a commit name of this repository (a run of 7
           to 40 hex digits that git resolves to a commit)
  length   README.md is at most 300 lines
  launcher the launcher's flags (scripts/safepin's cases), its --help text
           and its manual page (scripts/safepin.1) name the same flags; its
           --help and its manual page list every key of diag/options.inc,
           and no other; the words it accepts for an option (words_KEY) are
           options.inc's, and --help and the manual page name each; both
           manual pages' title lines carry VERSION (scripts/man-version)
  debuglist  (DOCROOT is a file: the log of a process run with
           SAFEPIN_OPTIONS=log=debug) the effective options the library
           printed are every key of diag/options.inc, and no other
"""
import glob
import os
import re
import subprocess
import sys

README_MAX_LINES = 300


def docs(root):
    return [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))


def strip_code(text):
    """The text without fenced code blocks and inline code spans."""
    text = re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def table_after(text, heading):
    """Rows (lists of cells) of the first table after the heading line."""
    text = "\n" + text
    i = text.find("\n" + heading + "\n")
    if i < 0:
        return None
    rows = []
    started = False
    for line in text[i + len(heading) + 2:].split("\n"):
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                rows.append(cells)
        elif started or line.startswith("#"):
            break
    return rows[1:]  # without the header


def tick(cell):
    m = re.fullmatch(r"`([^`]*)`", cell.strip())
    return m.group(1) if m else None


# ---- codes -------------------------------------------------------------------

def code_list(src):
    codes = {}
    for m in re.finditer(r'^SP_CODE\(\s*\w+\s*,\s*"([^"]+)"\s*,\s*\w+\s*,\s*(\d)',
                         open(os.path.join(src, "diag", "codes.inc")).read(), re.M):
        codes[m.group(1)] = m.group(2) == "1"
    return codes


def logged_names(src):
    """Names passed as sp_log()'s code outside the tests: the notices."""
    names = set()
    for path in glob.glob(os.path.join(src, "**", "*.c"), recursive=True):
        rel = os.path.relpath(path, src)
        if rel.startswith(("tests" + os.sep, "build" + os.sep)):
            continue
        for m in re.finditer(r'sp_log\(\s*SP_LOG_\w+\s*,\s*"([a-z]+-[a-z-]+)"', open(path, errors="replace").read()):
            names.add(m.group(1))
    return names


def check_codes(root, src):
    bad = []
    rows = table_after(open(os.path.join(root, "README.md")).read(), "## Diagnostic codes")
    if not rows:
        return ["README.md: no table after '## Diagnostic codes'"]
    codes = code_list(src)
    if not codes:
        return ["diag/codes.inc: no SP_CODE line read"]
    notices = logged_names(src)
    named = {}
    for r in rows:
        c = tick(r[0])
        if c is None:
            bad.append("README.md codes table: first cell %r is not a `code`" % r[0])
            continue
        named[c] = r[1] if len(r) > 1 else ""
    for c, viol in sorted(codes.items()):
        if c not in named:
            bad.append("diag/codes.inc's %s is not in the README's codes table" % c)
        elif named[c].startswith("yes") != viol:
            bad.append("%s: the README says violation '%s', diag/codes.inc says %s"
                       % (c, named[c], "yes" if viol else "no"))
    for c in sorted(named):
        if c not in codes and c not in notices:
            bad.append("the README names code %s, which diag/codes.inc does not list and no "
                       "sp_log() call logs" % c)
        elif c in notices and c not in codes and named[c].startswith("yes"):
            bad.append("%s: a notice, not a violation, but the README says '%s'" % (c, named[c]))
    return bad


# ---- options -----------------------------------------------------------------

def option_list(src):
    opts = {}
    for m in re.finditer(r'^SP_OPT\(\s*(\w+)\s*,\s*(\w+)\s*,\s*("(?:[^"\\]|\\.)*"|[-\w]+)',
                         open(os.path.join(src, "diag", "options.inc")).read(), re.M):
        d = m.group(3)
        opts[m.group(2)] = d[1:-1] if d.startswith('"') else d
    return opts


def option_words(src):
    """ENUM option -> its words, from options.inc's SP_OPT_WORDS lines."""
    words = {}
    for m in re.finditer(r'^SP_OPT_WORDS\(\s*(\w+)\s*,(.*)\)\s*$',
                         open(os.path.join(src, "diag", "options.inc")).read(), re.M):
        words[m.group(1)] = re.findall(r'"([^"]*)"', m.group(2))
    return words


def option_types(src):
    return dict((m.group(2), m.group(1)) for m in re.finditer(
        r'^SP_OPT\(\s*(\w+)\s*,\s*(\w+)\s*,', open(os.path.join(src, "diag", "options.inc")).read(), re.M))


def default_problem(key, cell, want):
    if want == "":
        if tick(cell) is not None:
            return "%s: default %s in the table, none (\"\") in diag/options.inc" % (key, cell)
        return None
    if tick(cell) != want:
        return "%s: default %s in the table, `%s` in diag/options.inc" % (key, cell, want)
    return None


def launcher_flags(src):
    text = open(os.path.join(src, "scripts", "safepin")).read()
    return set(re.findall(r"^\s*(--[a-z-]+)\)", text, re.M))


def check_options(root, src):
    bad = []
    opts = option_list(src)
    if not opts:
        return ["diag/options.inc: no SP_OPT line read"]
    rows = table_after(open(os.path.join(root, "docs", "options.md")).read(), "# Options")
    if not rows:
        return ["docs/options.md: no options table"]
    seen = {}
    words = option_words(src)
    for k, t in option_types(src).items():
        if t == "ENUM" and not words.get(k):
            bad.append("diag/options.inc: ENUM option %s has no SP_OPT_WORDS line" % k)
    for r in rows:
        k = tick(r[0])
        if k is None:
            bad.append("docs/options.md: first cell %r is not a `key`" % r[0])
            continue
        if k in seen:
            bad.append("docs/options.md: %s is in the table twice" % k)
        seen[k] = r[1]
        if k in words:
            got = re.findall(r"`([^`]*)`", r[2] if len(r) > 2 else "")
            if got != words[k]:
                bad.append("docs/options.md: %s accepts %s in the table, %s in diag/options.inc"
                           % (k, ", ".join(got) or "nothing", ", ".join(words[k])))
    for k, d in opts.items():
        if k not in seen:
            bad.append("diag/options.inc's %s is not in docs/options.md's table" % k)
        else:
            p = default_problem(k, seen[k], d)
            if p:
                bad.append("docs/options.md: " + p)
    for k in seen:
        if k not in opts:
            bad.append("docs/options.md names option %s, which diag/options.inc does not have" % k)
    # The README's short table: real options, their defaults, real flags.
    rows = table_after(open(os.path.join(root, "README.md")).read(), "## Options most users need")
    if not rows:
        return bad + ["README.md: no table after '## Options most users need'"]
    flags = launcher_flags(src)
    for r in rows:
        k = tick(r[0])
        if k not in opts:
            bad.append("README.md options table names %s, which diag/options.inc does not have" % r[0])
            continue
        p = default_problem(k, r[1], opts[k])
        if p:
            bad.append("README.md: " + p)
        for f in re.findall(r"`(--[a-z-]+)", r[2] if len(r) > 2 else ""):
            if f not in flags:
                bad.append("README.md options table: launcher flag %s is not one scripts/safepin accepts" % f)
    return bad


# ---- links -------------------------------------------------------------------

def anchors(path):
    """GitHub's anchors for the headings of a markdown file."""
    out = set()
    counts = {}
    text = re.sub(r"^```.*?^```[^\n]*$", "", open(path).read(), flags=re.S | re.M)
    for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M):
        h = m.group(1).strip().lower()
        h = re.sub(r"[^\w\- ]", "", h)  # punctuation goes, word characters stay
        h = h.replace(" ", "-")
        n = counts.get(h, 0)
        counts[h] = n + 1
        out.add(h if n == 0 else "%s-%d" % (h, n))
    return out


def check_links(root, src):
    bad = []
    for path in docs(root):
        text = strip_code(open(path).read())
        for m in re.finditer(r"\[[^\]]*\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            rel = os.path.relpath(path, root)
            if not os.path.exists(dest):
                # links out of README.md and docs/ reach the source tree
                alt = os.path.normpath(os.path.join(src, os.path.relpath(dest, root)))
                if not os.path.exists(alt):
                    bad.append("%s: link %s: no such file" % (rel, target))
                    continue
                dest = alt
            if anchor:
                if not dest.endswith(".md"):
                    bad.append("%s: link %s: an anchor into a file that is not markdown" % (rel, target))
                elif anchor not in anchors(dest):
                    bad.append("%s: link %s: no heading with that anchor in %s"
                               % (rel, target, os.path.relpath(dest, root)))
    return bad


# ---- hashes ------------------------------------------------------------------

def check_hashes(root, src):
    cands = {}
    for path in docs(root):
        for m in re.finditer(r"(?<![0-9A-Za-z_])[0-9a-f]{7,40}(?![0-9A-Za-z_])", open(path).read()):
            cands.setdefault(m.group(0), os.path.relpath(path, root))
    if not cands:
        return []
    names = sorted(cands)
    q = subprocess.run(["git", "-C", src, "cat-file", "--batch-check"],
                       input="".join("%s^{commit}\n" % n for n in names),
                       capture_output=True, text=True)
    if q.returncode != 0:
        return ["git cat-file failed: %s" % q.stderr.strip()]
    bad = []
    for n, line in zip(names, q.stdout.splitlines()):
        if line.split()[1:2] == ["commit"]:
            bad.append("%s holds %s, a commit of this repository" % (cands[n], n))
    return bad


def check_length(root, src):
    n = len(open(os.path.join(root, "README.md")).read().split("\n")) - 1
    return ["README.md has %d lines, more than %d" % (n, README_MAX_LINES)] if n > README_MAX_LINES else []


def check_launcher(root, src):
    bad = []
    script = open(os.path.join(src, "scripts", "safepin")).read()
    cases = set(re.findall(r"^\s*(--[a-z-]+)(?:=\*)?\)", script, re.M))
    cases |= set(re.findall(r"^\s*-h\|(--[a-z-]+)\)", script, re.M))
    usage = script[script.index("<<'USAGE'"):script.index("\nUSAGE\n")]
    helped = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", usage))
    man = open(os.path.join(src, "scripts", "safepin.1")).read().replace("\\-", "-")
    manned = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", man))
    if not cases:
        return ["scripts/safepin: no option cases read"]
    for f in sorted(cases - helped):
        bad.append("scripts/safepin takes %s, which its --help does not name" % f)
    for f in sorted(helped - cases):
        bad.append("scripts/safepin's --help names %s, which it does not take" % f)
    for f in sorted(cases - manned):
        bad.append("scripts/safepin takes %s, which scripts/safepin.1 does not name" % f)
    for f in sorted(manned - cases):
        bad.append("scripts/safepin.1 names %s, which scripts/safepin does not take" % f)
    # The keys of SAFEPIN_OPTIONS: --help's list and the manual page's.
    keys = set(option_list(src))
    env = man[man.find(".SH ENVIRONMENT"):]
    env = env[:env.find("\n.SH ", 1)]
    env = " ".join(l for l in env.split("\n") if not l.startswith("."))
    for where, text in (("scripts/safepin's --help", usage), ("scripts/safepin.1", env)):
        m = re.search(r"\bkeys\b[^:]*:\s*(.*?)\.(?=\s|$)", text, re.S)
        listed = set(k.strip() for k in m.group(1).split(",")) if m else set()
        if not listed:
            bad.append("%s: no list of SAFEPIN_OPTIONS keys ('keys ...: a, b, c.')" % where)
            continue
        for k in sorted(keys - listed):
            bad.append("%s does not list key %s of diag/options.inc" % (where, k))
        for k in sorted(listed - keys):
            bad.append("%s lists key %s, which diag/options.inc does not have" % (where, k))
    # The words the launcher accepts for an option are options.inc's, and
    # its --help and manual page name each.
    words = option_words(src)
    given = dict(re.findall(r'^words_(\w+)="([^"]*)"', script, re.M))
    if not given:
        bad.append("scripts/safepin: no words_KEY lists read")
    for k, ws in sorted(given.items()):
        if k not in words:
            bad.append("scripts/safepin: words_%s, but %s is not an ENUM option of diag/options.inc" % (k, k))
        elif ws.split() != words[k]:
            bad.append("scripts/safepin: words_%s is '%s', diag/options.inc says '%s'"
                       % (k, ws, " ".join(words[k])))
        for w in ws.split():
            for where, text in (("its --help", usage), ("scripts/safepin.1", man)):
                if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(w), text):
                    bad.append("scripts/safepin accepts %s for %s, which %s does not name" % (w, k, where))
    version = open(os.path.join(src, "VERSION")).read().strip()
    for page in ("safepin.1", "safepin-smoke.1"):
        first = open(os.path.join(src, "scripts", page)).readline()
        if '"safepin %s"' % version not in first:
            bad.append("scripts/%s: its title line %r does not carry VERSION %s (run scripts/man-version)"
                       % (page, first.strip(), version))
    return bad


def check_debuglist(log, src):
    """log: the output of a process run with SAFEPIN_OPTIONS=log=debug."""
    listed = set(re.findall(r"^==\d+==safepin: options: (\w+)=", open(log, errors="replace").read(), re.M))
    keys = set(option_list(src))
    if not listed:
        return ["%s: no effective options printed (log=debug)" % log]
    return (["log=debug's list of effective options lacks key %s of diag/options.inc" % k
             for k in sorted(keys - listed)] +
            ["log=debug's list names %s, which diag/options.inc does not have" % k
             for k in sorted(listed - keys)])


CHECKS = {"codes": check_codes, "options": check_options, "links": check_links,
          "hashes": check_hashes, "length": check_length,
          "launcher": check_launcher, "debuglist": check_debuglist}


def main(argv):
    if len(argv) < 2 or argv[0] not in CHECKS:
        sys.exit(__doc__)
    root = argv[1]
    src = argv[2] if len(argv) > 2 else root
    bad = CHECKS[argv[0]](root, src)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
