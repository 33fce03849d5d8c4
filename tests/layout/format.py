#!/usr/bin/env python3
"""format.py - the C files of the tree against .clang-format (clang-format 14),
and the one step that formats them with the mutation list kept applying.

Usage: format.py --check    the formatter's diff over every .c and .h file
                            git tracks or would add (init/, policy/, tests/)
                            is empty; else prints
                            each file it would change and the lines it would
                            change there, exit 1; exit 2 when clang-format
                            is missing
                            (also runs a self-test of how --apply finds a
                            mutation again)
       format.py --apply    formats those files in place, then rewrites each
                            "from:" line of tests/mutants/mutants.txt whose
                            text no longer occurs exactly once in its file:
                            the text is found again by its non-blank
                            characters (whitespace between them may differ)
                            at the same place, and becomes the formatted text
                            of that span ("\\n" and "\\t" where it runs over
                            lines, as run.py reads them). Nothing is written
                            unless every mutation is found again; one that is
                            not is named, exit 1.

CLANG_FORMAT (default clang-format) names the binary; its major version must
be 14, the one .clang-format is written for (another formats differently).
"""
import difflib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MUTANTS = os.path.join(ROOT, "tests", "mutants", "mutants.txt")
VERSION = 14


class FormatError(Exception):
    pass


def binary():
    """The clang-format to run, or None when there is none."""
    return shutil.which(os.environ.get("CLANG_FORMAT", "clang-format"))


def check_version(cf):
    """FormatError unless cf is clang-format VERSION."""
    out = subprocess.run([cf, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         check=False).stdout
    m = re.search(r"clang-format version (\d+)\.", out)
    if not m or int(m.group(1)) != VERSION:
        raise FormatError("%s is not clang-format %d (it says %r): .clang-format is written for %d"
                          % (cf, VERSION, out.strip(), VERSION))


def c_files(root):
    """The .c and .h files under root that git tracks or would add (a new
    file not yet added is checked too), relative to it, sorted; when root is
    no git checkout, every .c and .h of init/, policy/ and tests/."""
    p = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "*.c", "*.h"],
                       cwd=root, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, check=False)
    if p.returncode == 0 and p.stdout:
        return sorted(f for f in p.stdout.decode().split("\0") if f and os.path.exists(os.path.join(root, f)))
    found = []
    for top in ("init", "policy", "tests"):
        for d, _, names in os.walk(os.path.join(root, top)):
            found += [os.path.relpath(os.path.join(d, n), root) for n in names if n.endswith((".c", ".h"))]
    return sorted(found)


def formatted(cf, root, rels):
    """{rel: the text of root/rel as root's .clang-format lays it out}, for
    each rel of rels: one clang-format run over copies in a scratch folder."""
    tmp = tempfile.mkdtemp(prefix="turninit-format.")
    try:
        for rel in rels:
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            shutil.copyfile(os.path.join(root, rel), os.path.join(tmp, rel))
        if rels:
            p = subprocess.run([cf, "-i", "--style=file:" + os.path.join(root, ".clang-format")] + list(rels),
                               cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
            if p.returncode != 0:
                raise FormatError("clang-format failed: %s" % p.stderr.decode(errors="replace").strip())
        return {rel: read(os.path.join(tmp, rel)) for rel in rels}
    finally:
        shutil.rmtree(tmp)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def changes(root, cf):
    """{file: (text, formatted text)} for each C file the formatter changes."""
    rels = c_files(root)
    new = formatted(cf, root, rels)
    out = {}
    for rel in rels:
        old = read(os.path.join(root, rel))
        if old != new[rel]:
            out[rel] = (old, new[rel])
    return out


def nonblank(s):
    return re.sub(r"\s+", "", s)


def span_pattern(text):
    """A regex matching text with any whitespace (or none) where text has
    whitespace or between any two of its characters."""
    chars = [re.escape(c) for c in nonblank(text)]
    return re.compile(r"\s*".join(chars))


def escape(s):
    """s as a from: value (run.py's unescape reverses it)."""
    if "\\n" in s or "\\t" in s:
        raise FormatError("a literal \\n or \\t in %r cannot be written as a one-line from:" % s)
    return s.replace("\t", "\\t").replace("\n", "\\n")


def refind(frm, old, new):
    """(start, end) of the span of new that frm (exactly once in old) became:
    the text with frm's non-blank characters, at the same count of non-blank
    characters before it when the formatter kept them all (else the only such
    text), with frm's leading and trailing blanks when new has them there.
    FormatError when there is none or no single one."""
    if old.count(frm) != 1:
        raise FormatError("its from text occurs %d times before formatting, not once" % old.count(frm))
    if not nonblank(frm):
        raise FormatError("its from text is only blanks")
    before = len(nonblank(old[:old.find(frm)]))
    spans = list(span_pattern(frm).finditer(new))
    if nonblank(old) == nonblank(new):
        spans = [m for m in spans if len(nonblank(new[:m.start()])) == before]
    if len(spans) != 1:
        raise FormatError("its text is found %d times after formatting, not once" % len(spans))
    start, end = spans[0].span()
    lead = frm[:len(frm) - len(frm.lstrip())]
    trail = frm[len(frm.rstrip()):]
    if lead and new[:start].endswith(lead):
        start -= len(lead)
    if trail and new[end:].startswith(trail):
        end += len(trail)
    return start, end


def follow(muts, texts):
    """[(mutation, new from)] for each mutation whose from no longer occurs
    exactly once at its place; texts: {file: (old, new)} of the files the
    formatter changes. FormatError naming every mutation not found again."""
    moved, lost = [], []
    for m in muts:
        if m["file"] not in texts:
            continue
        old, new = texts[m["file"]]
        try:
            start, end = refind(m["from"], old, new)
            span = new[start:end]
            if span == m["from"] and new.count(span) == 1:
                continue
            if new.count(span) != 1:
                raise FormatError("its formatted text %r occurs %d times in %s, not once"
                                  % (span, new.count(span), m["file"]))
            escape(span)
            moved.append((m, span))
        except FormatError as e:
            lost.append("mutant %s (%s): %s: %r" % (m["name"], m["where"], e, m["from"]))
    if lost:
        raise FormatError("the mutations below are not found again in the formatted files; nothing was "
                          "written:\n  " + "\n  ".join(lost))
    return moved


def rewrite_list(text, moved):
    """The text of mutants.txt with each moved mutation's from: line
    replaced by its new text."""
    lines = text.split("\n")
    for m, span in moved:
        n = int(m["where"].rsplit(":", 1)[1]) - 1
        for i in range(n + 1, len(lines)):
            if lines[i].startswith("  from:"):
                lines[i] = "  from: " + escape(span)
                break
            if lines[i].startswith("mutant "):
                raise FormatError("mutant %s: no from: line below %s" % (m["name"], m["where"]))
    return "\n".join(lines)


def load_run():
    """tests/mutants/run.py as a module (its parse and unescape)."""
    spec = importlib.util.spec_from_file_location("mutants_run", os.path.join(ROOT, "tests", "mutants", "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def apply(cf):
    """Formats the tree and makes the mutation list follow; prints what it
    did. FormatError (nothing written) when a mutation is lost."""
    run = load_run()
    try:
        muts = run.parse(MUTANTS)
    except run.ListError as e:
        raise FormatError("tests/mutants/mutants.txt: %s" % e)
    texts = changes(ROOT, cf)
    moved = follow(muts, texts)
    listed = rewrite_list(read(MUTANTS), moved)
    for m, span in moved:   # what run.py will read back
        if run.unescape(escape(span)) != span:
            raise FormatError("mutant %s: its new from: does not read back" % m["name"])
    for rel, (_, new) in sorted(texts.items()):
        with open(os.path.join(ROOT, rel), "w", encoding="utf-8") as f:
            f.write(new)
    with open(MUTANTS, "w", encoding="utf-8") as f:
        f.write(listed)
    lines = sum(sum(1 for l in difflib.unified_diff(o.split("\n"), n.split("\n"), lineterm="", n=0)
                    if l[:1] in "+-" and l[:3] not in ("+++", "---")) for o, n in texts.values())
    print("format: %d files formatted (%d lines changed), %d mutations' from: rewritten"
          % (len(texts), lines, len(moved)))
    for m, span in moved:
        print("  mutant %s: from: %s" % (m["name"], escape(span)))


def check(root, cf):
    """The problems of the tree at root: a line per file the formatter would
    change, with the lines it would change there."""
    problems = []
    for rel, (old, new) in sorted(changes(root, cf).items()):
        where = []
        for d in difflib.unified_diff(old.split("\n"), new.split("\n"), lineterm="", n=0):
            m = re.match(r"@@ -(\d+)(?:,(\d+))? ", d)
            if m:
                first, n = int(m.group(1)), int(m.group(2) or 1)
                where.append(str(first) if n <= 1 else "%d-%d" % (first, first + n - 1))
        problems.append("%s: not as .clang-format lays it out (lines %s%s)"
                        % (rel, ", ".join(where[:8]), ", ..." if len(where) > 8 else ""))
    return problems


def selftest():
    """None when follow() moves a mutation whose text the formatter changed,
    keeps one it did not, and refuses one it cannot find again or that would
    apply twice; else what went wrong."""
    old = "int a;\n\tfoo(x,\n\t    y);   /* c */\n\tbar(x,\n\t    y);\n\tbar(x, y);\n"
    new = "int a;\n\tfoo(x, y); /* c */\n\tbar(x, y);\n\tbar(x, y);\n"

    def mut(name, frm):
        return {"name": name, "where": "selftest:1", "file": "f.c", "from": frm}
    try:
        got = [(m["name"], span) for m, span in follow([mut("moved", "foo(x,\n\t    y);   /* c */"),
                                                        mut("kept", "\tfoo(x,")], {"f.c": (old, new)})]
    except FormatError as e:
        return "follow refused what it can follow: %s" % e
    if got != [("moved", "foo(x, y); /* c */")]:
        return "follow gave %r, want only the moved one, as formatted" % got
    for frm, after, want in (("int a;", new.replace("int a;", "long a;"), "found 0 times"),
                             ("bar(x,\n\t    y);", new, "occurs 2 times")):
        try:
            follow([mut("lost", frm)], {"f.c": (old, after)})
            return "follow took %r, which it cannot find once" % frm
        except FormatError as e:
            if "mutant lost (selftest:1)" not in str(e) or want not in str(e):
                return "follow refused %r without naming it and why (%r): %s" % (frm, want, e)
    return None


def main(argv):
    if argv[:1] not in (["--check"], ["--apply"]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    cf = binary()
    if not cf:
        print("format: clang-format not found (Debian's clang-format; make setup installs it)")
        return 2
    try:
        check_version(cf)
        if argv[0] == "--apply":
            apply(cf)
            return 0
        problems = check(ROOT, cf)
    except FormatError as e:
        print("format: %s" % e)
        return 1
    for p in problems:
        print(p)
    if problems:
        print("format: %d files differ; tests/layout/format.py --apply formats them" % len(problems))
    why = selftest()
    if why:
        print("format: the self-test of --apply's search: %s" % why)
    return 1 if problems or why else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
