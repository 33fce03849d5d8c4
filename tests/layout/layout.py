#!/usr/bin/env python3
"""layout.py - the include rules of init/'s folders (docs/HACKING.md), and the
exit codes of init/util/exit_codes.h against docs/exit-codes.md and --help,
checked.

Each folder of init/ holds one role, and may include the headers of only the
folders its rule names (below, RULES); policy/ is pure and includes none of
init/. A header is found by its name among init/'s folders and policy/ (the
build's -I list); system headers (<...>) and build/gen are not checked. No
include circle is allowed either: a header that reaches itself through its
includes.

The exit codes: every EXIT_* of exit_codes.h is a row of docs/exit-codes.md's
table (128+N for EXIT_SIGNAL_BASE) and is said in `turninit --help`
(init/util/cli.c), and every numbered row of the table is an EXIT_*.

Usage: layout.py [ROOT]     check the include rules of the tree at ROOT
                            (default: the project's); prints "FILE:LINE: ..."
                            for each rule broken and each circle, exit 1;
                            nothing and exit 0 when clean
       layout.py --check    the include rules, the self-test (a copy of the
                            tree with one rule broken on purpose must fail,
                            naming the file and the line) and the exit codes;
                            prints TAP and writes build/test-results/layout
                            ("passed failed")
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# folder -> the folders whose headers it may include (besides its own).
# init (the top: main, the command line, verify) may include any.
RULES = {
    "policy": [],
    "init/util": ["policy"],
    "init/sandbox": ["init/util", "policy"],
    "init/proxy": ["init/sandbox", "init/util", "policy"],
    "init/process": ["init/proxy", "init/sandbox", "init/util", "policy"],
    "init/serve": ["init/process", "init/sandbox", "init/util", "policy"],
    # the clients run outside the container and hold no policy: the command
    # line (util/cli), the wire formats, the helpers
    "init/client": ["init/util", "policy"],
    "init": ["init/client", "init/serve", "init/process", "init/proxy", "init/sandbox", "init/util", "policy"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def headers(root):
    """{header name: folder} for every .h of the folders of RULES."""
    found = {}
    for d in RULES:
        for n in sorted(os.listdir(os.path.join(root, d))):
            if n.endswith(".h"):
                if n in found:
                    raise SystemExit("layout.py: %s in both %s and %s" % (n, found[n], d))
                found[n] = d
    return found


def check(root):
    """The problems of the tree at root, as lines "FILE:LINE: what"."""
    where = headers(root)
    problems, graph = [], {}
    for d, allowed in RULES.items():
        for n in sorted(os.listdir(os.path.join(root, d))):
            if not n.endswith((".c", ".h")):
                continue
            path = os.path.join(d, n)
            with open(os.path.join(root, path), encoding="utf-8") as f:
                for i, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or os.path.basename(m.group(1)) not in where:
                        continue
                    h = os.path.basename(m.group(1))
                    hd = where[h]
                    if n.endswith(".h"):
                        graph.setdefault(path, []).append((os.path.join(hd, h), i))
                    if hd == d or hd in allowed:
                        continue
                    problems.append("%s:%d: %s/ may not include %s (in %s/): %s/ may include only %s" % (
                        path, i, d, h, hd, d, ", ".join(a + "/" for a in allowed) or "itself"))
    # circles among headers
    state = {}

    def visit(h, stack):
        state[h] = 1
        for (g, line) in graph.get(h, []):
            if state.get(g) == 1:
                cyc = stack[stack.index(g):] + [g] if g in stack else [h, g]
                problems.append("%s:%d: an include circle: %s" % (h, line, " -> ".join(cyc)))
            elif g not in state:
                visit(g, stack + [g])
        state[h] = 2

    for h in sorted(graph):
        if h not in state:
            visit(h, [h])
    return problems


def selftest():
    """None when a rule broken on purpose is found; else what went wrong."""
    tmp = tempfile.mkdtemp(prefix="turninit-layout.")
    try:
        for d in ("init", "policy"):
            shutil.copytree(os.path.join(ROOT, d), os.path.join(tmp, d))
        target = os.path.join(tmp, "init", "client", "call.c")
        with open(target, encoding="utf-8") as f:
            lines = f.read().split("\n")
        at = max(i for i, l in enumerate(lines) if INCLUDE.match(l)) + 1
        lines.insert(at, '#include "spawn.h"')   # client/ may not use process/
        with open(target, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        p = subprocess.run([sys.executable, __file__, tmp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, check=False)
        want = "init/client/call.c:%d: init/client/ may not include spawn.h (in init/process/)" % (at + 1)
        if p.returncode != 1 or want not in p.stdout:
            return "exit %d, wanted 1 and a line starting %r; got: %s" % (p.returncode, want, p.stdout.strip())
        return None
    finally:
        shutil.rmtree(tmp)


def exit_codes():
    """The disagreements of exit_codes.h, docs/exit-codes.md and --help."""
    with open(os.path.join(ROOT, "init", "util", "exit_codes.h"), encoding="utf-8") as f:
        codes = {m.group(1): int(m.group(2)) for m in re.finditer(r"#define (EXIT_\w+) (\d+)", f.read())}
    with open(os.path.join(ROOT, "docs", "exit-codes.md"), encoding="utf-8") as f:
        rows = re.findall(r"^\| ([0-9]+(?:\+N)?) +\|", f.read(), re.M)
    with open(os.path.join(ROOT, "init", "util", "cli.c"), encoding="utf-8") as f:
        helptext = f.read()
    problems = []
    if not codes:
        problems.append("init/util/exit_codes.h: no EXIT_* found")
    for name, v in sorted(codes.items()):
        row = "%d+N" % v if name == "EXIT_SIGNAL_BASE" else str(v)
        if row not in rows:
            problems.append("docs/exit-codes.md: no row %s for %s" % (row, name))
        if not re.search(r"\b%s\b" % re.escape(row.replace("+N", "+N")), helptext):
            problems.append("init/util/cli.c: --help does not say %s (%s)" % (row, name))
    for row in rows:
        if int(row.split("+")[0]) not in codes.values():
            problems.append("docs/exit-codes.md: row %s is no EXIT_* of init/util/exit_codes.h" % row)
    return problems


def format_result():
    """(name, problems) of the formatter's check (tests/layout/format.py
    --check): every tracked C file as .clang-format lays it out. Skipped,
    with its reason, when clang-format is missing."""
    p = subprocess.run([sys.executable, os.path.join(HERE, "format.py"), "--check"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, check=False)
    lines = p.stdout.strip().split("\n")
    if p.returncode == 2:
        return ("layout-format # SKIP " + lines[-1].replace("format: ", "", 1), [])
    return ("layout-format", lines if p.returncode else [])


def main(argv):
    if argv[:1] == ["--check"]:
        results = [("layout-include-rules", check(ROOT)),
                   ("layout-check-fails-on-a-broken-rule", [w for w in [selftest()] if w]),
                   ("layout-exit-codes-match-docs-and-help", exit_codes()),
                   format_result()]
        print("1..%d" % len(results))
        for i, (name, problems) in enumerate(results, 1):
            print("%s %d - %s" % ("not ok" if problems else "ok", i, name))
            for p in problems:
                print("#   " + p)
        bad = sum(1 for _, p in results if p)
        os.makedirs(os.path.join(ROOT, "build", "test-results"), exist_ok=True)
        with open(os.path.join(ROOT, "build", "test-results", "layout"), "w") as f:
            f.write("%d %d\n" % (len(results) - bad, bad))
        print("layout: %d passed, %d failed" % (len(results) - bad, bad))
        return 1 if bad else 0
    problems = check(argv[0] if argv else ROOT)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
