#!/usr/bin/env python3
"""layout.py - the include rules of init/'s folders, the call circles and the
long functions (docs/HACKING.md), and the exit codes of
init/util/exit_codes.h against docs/exit-codes.md and --help, checked.

Each folder of init/ holds one role, and may include the headers of only the
folders its rule names (below, RULES); policy/ is pure and includes none of
init/. An include names its header's folder: init/'s headers by their path
below init/ ("process/keeper.h"), policy/'s as "policy/NAME.h" (the build's
-Iinit -I.), in init/, policy/ and tests/ alike, and in quotes (a project
header in angle brackets is named, then checked as any); system headers,
build/gen and a test's own header (found beside it) are not checked. Every
folder of C files under init/ and policy/ has its rule in RULES. A
header none of whose declared names the file uses is an include used by
nothing. No include circle is allowed (a header that reaches itself through
its includes), nor a circle of calls between the .c files of RULES' folders
(A -> B: a function of A calls one defined, not static, in B only; calls
through pointers are not seen). A function over LONG_LINES lines says why
in a sentence starting LONG_MARK in the comment above it. The C is read
with regular expressions, for this project's style (a definition's brace
at depth 0 after its parameter list), not parsed.

The exit codes: every EXIT_* of exit_codes.h is a row of docs/exit-codes.md's
table (128+N for EXIT_SIGNAL_BASE) and is said in `turninit --help`
(init/util/cli.c), and every numbered row of the table is an EXIT_*.

Usage: layout.py [ROOT]     check the rules in the tree at ROOT (default: the
                            project's); prints "FILE:LINE: ..." for each rule
                            broken and each circle, exit 1; nothing and exit
                            0 when clean
       layout.py --check    the rules, the self-test (a copy of the tree with
                            each rule broken on purpose (BROKEN) must fail,
                            naming the file) and the exit codes; prints TAP
                            and writes build/test-results/layout ("passed
                            failed")
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
# init (the top: main, the turn, verify) may include any.
RULES = {
    "policy": [],
    "init/util": ["policy"],
    # where the manifest and the trust roots come from, and the signature
    # checked over its bytes before it is parsed: no lock-down of its own
    "init/trust": ["init/util", "policy"],
    "init/sandbox": ["init/util", "policy"],
    # proxy/ and process/ are peers: neither includes the other (the turn,
    # init/turn.c, forks the proxy and makes the commands' spawn base)
    "init/proxy": ["init/sandbox", "init/util", "policy"],
    "init/process": ["init/sandbox", "init/util", "policy"],
    "init/serve": ["init/process", "init/sandbox", "init/trust", "init/util", "policy"],
    # the clients run outside the container and hold no policy: the command
    # line (util/cli), the wire formats, the helpers
    "init/client": ["init/util", "policy"],
    "init": ["init/client", "init/serve", "init/process", "init/proxy", "init/sandbox", "init/trust", "init/util",
             "policy"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# An include in angle brackets: a project header so spelled is found by the
# same -Iinit -I. and must keep the same rules.
INCLUDE_ANGLE = re.compile(r'^\s*#\s*include\s+<([^>]+)>')
# Besides the folders of RULES, the C files below tests/ must spell project
# headers by their folder too (tests/unit's own headers stay bare).
SPELLED_TOO = ["tests"]
# A function longer than this many lines (its name's line to its closing
# brace) says why in the comment above it, in a sentence starting LONG_MARK.
LONG_LINES = 80
LONG_MARK = "Long:"
KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern float for goto
if inline int long register restrict return short signed sizeof static struct switch typedef union unsigned
void volatile while _Bool _Static_assert _Alignof __attribute__ __typeof__ typeof defined""".split())
LEXEME = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def blank(text):
    """text with its comments, strings and character constants blanked out,
    newlines kept (so that offsets keep their line numbers)."""
    def keep(m):
        t = m.group(0)
        if t[0] == "/":
            return re.sub(r"[^\n]", " ", t)
        return t[0] + re.sub(r"[^\n]", " ", t[1:-1]) + t[-1]
    return LEXEME.sub(keep, text)


def no_attributes(t):
    """t without its __attribute__((...)) (their names are no declarations)."""
    out, i = [], 0
    while True:
        j = t.find("__attribute__", i)
        if j < 0:
            return "".join(out) + t[i:]
        out.append(t[i:j])
        k, depth = t.find("(", j), 0
        while 0 <= k < len(t):
            depth += {"(": 1, ")": -1}.get(t[k], 0)
            if depth == 0:
                break
            k += 1
        i = k + 1


def declared(text):
    """The names a header declares: macros (not its guard), tags, typedefs,
    enum constants, functions and extern variables."""
    t = no_attributes(blank(text))
    guard = re.search(r'^\s*#\s*ifndef\s+(\w+)', t, re.M)
    names = set(re.findall(r'^\s*#\s*define\s+(\w+)', t, re.M))
    t = re.sub(r'^\s*#(?:[^\n]*\\\n)*[^\n]*', ' ', t, flags=re.M)
    names |= set(re.findall(r'\b(?:struct|union|enum)\s+(\w+)\s*\{', t))
    for m in re.finditer(r'\benum\b[^{;]*\{([^}]*)\}', t):
        names |= set(re.findall(r'(?:^|,)\s*(\w+)', m.group(1)))
    top, depth = [], 0
    for m in re.finditer(r'[{}]|[^{}]+', t):
        depth += {"{": 1, "}": -1}.get(m.group(0), 0)
        if depth == 0 and m.group(0) not in "{}":
            top.append(m.group(0))
    for stmt in " ".join(top).split(";"):
        fp = re.search(r'\(\s*\*\s*(\w+)\s*\)\s*\(', stmt)
        fn = re.search(r'(\w+)\s*\(', stmt)
        last = re.search(r'(\w+)\s*(?:\[[^\]]*\]\s*)*$', stmt.strip())
        if stmt.lstrip().startswith("typedef") and fp:
            names.add(fp.group(1))
        elif fn and not stmt.lstrip().startswith("typedef"):
            names.add(fn.group(1))
        elif last:
            names.add(last.group(1))
    return names - KEYWORDS - {guard.group(1) if guard else ""}


def headers(root):
    """{header name: (folder, its one spelling, the names it declares)} of
    every .h of the folders of RULES: init/'s spelled by their path below
    init/, policy/'s as policy/NAME.h (the build's -Iinit -I.)."""
    found = {}
    for d in RULES:
        for n in sorted(os.listdir(os.path.join(root, d))):
            if n.endswith(".h"):
                if n in found:
                    raise SystemExit("layout.py: %s in both %s and %s" % (n, found[n][0], d))
                spelled = os.path.relpath(os.path.join(d, n), "init" if d.startswith("init") else ".")
                with open(os.path.join(root, d, n), encoding="utf-8") as f:
                    found[n] = (d, spelled, declared(f.read()))
    return found


def c_files(root):
    """(folder, path) of every .c and .h of RULES' folders, then of tests/."""
    for d in RULES:
        for n in sorted(os.listdir(os.path.join(root, d))):
            if n.endswith((".c", ".h")):
                yield d, os.path.join(d, n)
    for top in SPELLED_TOO:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if x not in ("corpus", "build"))
            for n in sorted(files):
                if n.endswith((".c", ".h")):
                    yield None, os.path.relpath(os.path.join(d, n), root)


def include_problems(root, where, d, path, text, graph):
    """The broken include rules of one file (d: its folder of RULES, None
    for tests/); adds its header edges to graph."""
    problems = []
    used = set(re.findall(r"\w+", no_attributes(blank(re.sub(INCLUDE.pattern, " ", text, flags=re.M)))))
    for i, line in enumerate(text.split("\n"), 1):
        m = INCLUDE.match(line)
        a = INCLUDE_ANGLE.match(line)
        if a and os.path.basename(a.group(1)) in where and \
                any(os.path.isfile(os.path.join(root, top, a.group(1))) for top in ("init", ".")):
            problems.append('%s:%d: <%s> is a header of the project: write it in quotes' % (path, i, a.group(1)))
            m = a
        if not m or os.path.basename(m.group(1)) not in where:
            continue
        if os.path.exists(os.path.join(root, os.path.dirname(path), m.group(1))) and \
                os.path.dirname(m.group(1)) == "" and not path.startswith(("init", "policy")):
            continue      # a test's own header, found beside it
        h = os.path.basename(m.group(1))
        hd, spelled, names = where[h]
        if m.group(1) != spelled:
            problems.append('%s:%d: "%s" does not name its folder: write "%s"' % (path, i, m.group(1), spelled))
        if not names & used:
            problems.append("%s:%d: %s is used by nothing here: none of its names appears" % (path, i, spelled))
        if d is None:
            continue
        if path.endswith(".h"):
            graph.setdefault(path, []).append((os.path.join(hd, h), i))
        allowed = RULES[d]
        if hd != d and hd not in allowed:
            problems.append("%s:%d: %s/ may not include %s (in %s/): %s/ may include only %s" % (
                path, i, d, h, hd, d, ", ".join(a + "/" for a in allowed) or "itself"))
    return problems


def circles(graph, what):
    """A line per circle of graph {node: [(node, line)]}, as what names it."""
    problems, state = [], {}

    def visit(h, stack):
        state[h] = 1
        for (g, line) in graph.get(h, []):
            if state.get(g) == 1:
                cyc = stack[stack.index(g):] + [g] if g in stack else [h, g]
                problems.append("%s:%d: %s: %s" % (h, line, what, " -> ".join(cyc)))
            elif g not in state:
                visit(g, stack + [g])
        state[h] = 2

    for h in sorted(graph):
        if h not in state:
            visit(h, [h])
    return problems


def functions(text):
    """[(name, first line, last line, static)] of the function definitions
    of C text: a brace at depth 0 after a parenthesis."""
    t = no_attributes(blank(text))
    t = re.sub(r'^\s*#(?:[^\n]*\\\n)*[^\n]*', lambda m: re.sub(r"[^\n]", " ", m.group(0)), t, flags=re.M)
    found, depth, i = [], 0, 0
    for m in re.finditer(r'[{}]', t):
        if m.group(0) == "}":
            depth -= 1
            if depth == 0 and found and found[-1][2] is None:
                found[-1][2] = t.count("\n", 0, m.start()) + 1
            continue
        depth += 1
        if depth != 1:
            continue
        head = t[i:m.start()]
        i = m.end()
        # a name, its parameter list, then the brace; after "=" the brace
        # is an initialiser's (struct x y = F(a) { ... } is none of ours)
        sig = re.search(r'(\w+)\s*\(([^()]|\([^()]*\))*\)\s*$', head)
        if not sig or sig.group(1) in KEYWORDS or "=" in head.split(sig.group(0))[0].split(";")[-1]:
            continue
        start = t.count("\n", 0, m.start() - len(head) + sig.start()) + 1
        decl = head[:sig.start()].split(";")[-1].split("}")[-1]
        found.append([sig.group(1), start, None, bool(re.search(r"\bstatic\b", decl))])
    for f in found:
        f[2] = f[2] or f[1]
    return found


def long_problems(path, text):
    """A line per function of path over LONG_LINES lines whose comment above
    says no reason (a sentence starting LONG_MARK)."""
    lines, problems = text.split("\n"), []
    for name, first, last, _ in functions(text):
        if last - first + 1 <= LONG_LINES:
            continue
        j = first - 2                      # the line above the name's
        while j >= 0 and lines[j].strip() and not lines[j].rstrip().endswith("*/"):
            j -= 1                         # the return type's line(s)
        k = j
        while k >= 0 and lines[k].strip() and "/*" not in lines[k]:
            k -= 1
        above = "\n".join(lines[k:j + 1]) if j >= 0 and lines[j].rstrip().endswith("*/") else ""
        if LONG_MARK not in above:
            problems.append("%s:%d: %s() is %d lines (over %d): split it, or say why in a sentence starting "
                            "\"%s\" in the comment above it" % (path, first, name, last - first + 1, LONG_LINES,
                                                                LONG_MARK))
    return problems


def call_problems(root, texts):
    """A line per circle of calls between .c files: an edge A -> B when a
    function of A calls one defined (not static) in B only; calls through
    pointers (x->f(), (*f)()) are not seen."""
    defined, local = {}, {}
    for path, text in texts.items():
        fns = functions(text)
        local[path] = {f[0] for f in fns}
        for f in fns:
            if not f[3]:
                defined.setdefault(f[0], []).append(path)
    graph = {}
    for path, text in sorted(texts.items()):
        t = blank(text)
        edges = {}
        for name, first, last, _ in functions(text):
            body = "\n".join(t.split("\n")[first - 1:last])
            for m in re.finditer(r'(?<![\w.>])(\w+)\s*\(', body):
                n = m.group(1)
                if n in local[path] or len(defined.get(n, [])) != 1 or n == name:
                    continue
                edges.setdefault(defined[n][0], first)
        graph[path] = sorted(edges.items())
    sccs = strongly_connected(graph)
    return ["%s: a circle of calls between %d files: %s" % (c[0], len(c), " <-> ".join(c))
            for c in sccs if len(c) > 1]


def strongly_connected(graph):
    """Tarjan's strongly connected components of {node: [(node, _)]}."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w, _ in graph.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def unruled(root):
    """A line per folder of init/ or policy/ holding C files that no rule of
    RULES names: its files would be checked by none of the rules."""
    problems = []
    for top in ("init", "policy"):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            rel = os.path.relpath(d, root)
            if rel not in RULES and any(n.endswith((".c", ".h")) for n in files):
                problems.append("%s/: a folder of C files that no rule names: add its row to RULES and to "
                                "docs/HACKING.md's table" % rel)
    return problems


def check(root):
    """The problems of the tree at root, as lines "FILE:LINE: what"."""
    sys.setrecursionlimit(10000)
    where = headers(root)
    problems, graph, texts = unruled(root), {}, {}
    for d, path in c_files(root):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        problems += include_problems(root, where, d, path, text, graph)
        if d is not None:
            problems += long_problems(path, text)
            if path.endswith(".c"):
                texts[path] = text
    problems += circles(graph, "an include circle")
    problems += call_problems(root, texts)
    return problems


# Files the self-test adds to its copy of the tree, each breaking a rule.
BROKEN = {
    # a circle of calls between two files, neither through a pointer
    "init/util/layout_a.c": '#include "util/layout_ab.h"\n\nvoid layout_a(int n)\n{\n\tif (n)\n\t\tlayout_b(n - 1);\n}\n',
    "init/util/layout_b.c": '#include "util/layout_ab.h"\n\nvoid layout_b(int n)\n{\n\tif (n)\n\t\tlayout_a(n - 1);\n}\n',
    "init/util/layout_ab.h": "void layout_a(int n);\nvoid layout_b(int n);\n",
    # an include of a header whose names the file never uses; a function
    # over LONG_LINES lines without a reason, and one with its reason
    "init/util/layout_long.c": ('#include "util/layout_ab.h"\n#include "util/plat.h"\n\n'
                                "int layout_long(int n);\nint layout_said(int n);\n\n"
                                "int layout_long(int n)\n{\n" + "\tn++;\n" * LONG_LINES + "\treturn n;\n}\n\n"
                                "/* %s a reason given. */\nint layout_said(int n)\n{\n" % LONG_MARK
                                + "\tn++;\n" * LONG_LINES + "\treturn n;\n}\n"),
    # a folder of C files that no rule names
    "init/layout_new/layout_new.c": "int layout_new(void);\n",
    # two headers that include each other
    "init/util/layout_c.h": '#include "util/layout_d.h"\nstruct layout_c { int x; };\nstruct layout_d *layout_c(void);\n',
    "init/util/layout_d.h": '#include "util/layout_c.h"\nstruct layout_d { int x; };\nstruct layout_c *layout_d(void);\n',
}


def selftest():
    """[(name, what went wrong or None)]: the rules broken on purpose in a
    copy of the tree, each of which must be found, naming its file."""
    tmp = tempfile.mkdtemp(prefix="turninit-layout.")
    try:
        for d in ("init", "policy"):
            shutil.copytree(os.path.join(ROOT, d), os.path.join(tmp, d))
        for path, text in BROKEN.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, path)), exist_ok=True)
            with open(os.path.join(tmp, path), "w", encoding="utf-8") as f:
                f.write(text)
        target = os.path.join(tmp, "init", "client", "call.c")
        with open(target, encoding="utf-8") as f:
            lines = f.read().split("\n")
        at = max(i for i, l in enumerate(lines) if INCLUDE.match(l)) + 1
        lines[at:at] = ['#include "process/spawn.h"',   # client/ may not use process/
                        '#include "log.h"',             # util/log.h, by a bare name
                        '#include <util/clock.h>']      # a project header in angle brackets
        with open(target, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        p = subprocess.run([sys.executable, __file__, tmp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, check=False)
        wants = [
            ("folder-rule", "init/client/call.c:%d: init/client/ may not include spawn.h (in init/process/)" % (at + 1)),
            ("bare-include", 'init/client/call.c:%d: "log.h" does not name its folder: write "util/log.h"' % (at + 2)),
            ("angle-include", "init/client/call.c:%d: <util/clock.h> is a header of the project" % (at + 3)),
            ("unruled-folder", "init/layout_new/: a folder of C files that no rule names"),
            ("include-used-by-nothing", "init/util/layout_long.c:2: util/plat.h is used by nothing here"),
            ("header-circle", "an include circle: init/util/layout_c.h -> init/util/layout_d.h -> init/util/layout_c.h"),
            ("call-circle", "a circle of calls between 2 files: init/util/layout_a.c <-> init/util/layout_b.c"),
            ("long-function", "init/util/layout_long.c:7: layout_long() is %d lines" % (LONG_LINES + 4)),
        ]
        out = []
        for name, want in wants:
            bad = None if p.returncode == 1 and want in p.stdout else \
                "exit %d, wanted 1 and a line with %r; got: %s" % (p.returncode, want, p.stdout.strip())
            out.append((name, bad))
        said = "layout_said()" in p.stdout
        out.append(("long-function-with-its-reason", "a function with its %r reason was named: %s" % (
            LONG_MARK, p.stdout.strip()) if said else None))
        return out
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
        results = [("layout-rules", check(ROOT))]
        results += [("layout-check-finds-" + name, [w] if w else []) for name, w in selftest()]
        results += [("layout-exit-codes-match-docs-and-help", exit_codes())]
        results += [format_result()]
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
