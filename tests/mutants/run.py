#!/usr/bin/env python3
"""run.py - `make mutants`: every mutation of tests/mutants/mutants.txt applied,
one at a time, to a scratch copy of the tree, built, and run against the
suites its "catch" lines name. A mutation is killed when one of those suites
reports a failed test, survived when they all pass.

    run.py [--check] [--keep-going] [REGEX]

    --check        only parse the list and check that every "from" text occurs
                   exactly once in its file (make mutants-list, part of make
                   check; writes build/test-results/mutants-list; no build)
    REGEX          run only the mutations whose name matches (re.search)

The scratch copy is build/mutants/tree: the files git knows of (tracked, and
untracked ones that are not ignored), with their mtimes, and build/musl linked
from the tree itself (the musl dependencies, made by `make deps`). It is built
once unmutated; before each mutation the build outputs are put back as they
were, so that make rebuilds only what the mutated file feeds.

A suite run counts only when it ran tests: an abort ("not ok N - setup"), a
missing closing line or a catch regex that selects no test is an error, and so
is a "from" text that does not occur exactly once, or a build that fails.
A mutation is killed only by tests that passed without it: the first time a
catch (a suite and its regex) fails under a mutation, it is run once on the
unmutated tree too (and remembered); a catch that fails there is an error
naming the tests that failed, never a kill (a kernel without a feature, a
busy machine or a broken test would otherwise "kill" every mutation it
catches). --check also runs the self-test of that judgement (judge_selftest). The
report (a Markdown table) goes to stdout and build/mutants/report.md. Exit
status: 0 when every mutation was killed, 1 otherwise.
"""
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIST = os.path.join(ROOT, "tests", "mutants", "mutants.txt")
WORK = os.path.join(ROOT, "build", "mutants")
TREE = os.path.join(WORK, "tree")
PRISTINE = os.path.join(WORK, "pristine")
# What the build writes below build/ (restored before each mutation).
OUTPUTS = ("musl-obj", "gen", "turninit", "turninit.unstripped", "turninit.map", "host", "vg", "helpers")
SUITES = ("unit", "integration", "sandbox", "network", "workload", "serve", "pid1", "hostile", "fault",
          "valgrind", "audit", "pi", "mcp", "nonroot", "gvisor", "fuzz-replay", "packaging")
SUITE_TIMEOUT = 1800   # seconds, one suite run
FIELDS = ("guarantee", "file", "from", "to")


class ListError(Exception):
    pass


def unescape(s):
    return s.replace("\\t", "\t").replace("\\n", "\n")


def parse(path):
    """The mutations of PATH: a list of dicts (name, guarantee, file, from, to,
    catch: [(suite, regex or None)]), in file order."""
    muts, cur = [], None
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            where = "%s:%d" % (os.path.relpath(path, ROOT), n)
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if line.startswith("mutant "):
                name = line[len("mutant "):].strip()
                if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
                    raise ListError("%s: bad mutant name %r" % (where, name))
                cur = {"name": name, "catch": [], "where": where}
                muts.append(cur)
                continue
            m = re.fullmatch(r"  (guarantee|file|from|to|catch):(?: (.*))?", line)
            if not m or cur is None:
                raise ListError("%s: expected 'mutant NAME' or an indented 'KEY: VALUE' line" % where)
            key, val = m.group(1), m.group(2) or ""
            if key == "catch":
                words = val.split(None, 1)
                if not words or words[0] not in SUITES:
                    raise ListError("%s: catch: unknown suite %r (one of %s)" % (where, val, ", ".join(SUITES)))
                cur["catch"].append((words[0], words[1].strip() if len(words) > 1 else None))
            elif key in cur:
                raise ListError("%s: %s given twice in %s" % (where, key, cur["name"]))
            else:
                cur[key] = unescape(val) if key in ("from", "to") else val
    names = set()
    for m in muts:
        for k in FIELDS:
            if k not in m:
                raise ListError("%s: mutant %s has no %s" % (m["where"], m["name"], k))
        if not m["catch"]:
            raise ListError("%s: mutant %s has no catch line" % (m["where"], m["name"]))
        if not m["from"]:
            raise ListError("%s: mutant %s: empty from" % (m["where"], m["name"]))
        if m["name"] in names:
            raise ListError("%s: mutant %s given twice" % (m["where"], m["name"]))
        names.add(m["name"])
    return muts


def applies(m, root):
    """The mutated text of m's file under root; ListError unless "from" occurs
    exactly once."""
    path = os.path.join(root, m["file"])
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ListError("mutant %s: %s: %s" % (m["name"], m["file"], e.strerror))
    count = text.count(m["from"])
    if count != 1:
        raise ListError("mutant %s: %s: the from text occurs %d times, not once: %r"
                        % (m["name"], m["file"], count, m["from"]))
    return text, text.replace(m["from"], m["to"], 1)


def sh(argv, cwd, env=None, timeout=SUITE_TIMEOUT, log=None):
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=timeout)
        out, rc = p.stdout.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace") + "\n(timed out)\n", -1
    if log:
        with open(log, "a") as f:
            f.write("$ %s\n%s\n" % (" ".join(argv), out))
    return rc, out, time.monotonic() - t0


def copy_tree():
    """build/mutants/tree: the files git knows of, mtimes kept."""
    if os.path.isdir(TREE):
        shutil.rmtree(TREE)
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, stdout=subprocess.PIPE, check=True).stdout.split(b"\0")
    for rel in files:
        if not rel:
            continue
        rel = rel.decode()
        src = os.path.join(ROOT, rel)
        if not os.path.lexists(src):
            continue   # deleted in the work tree, not yet in git
        dst = os.path.join(TREE, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)
    os.makedirs(os.path.join(TREE, "build"), exist_ok=True)
    os.symlink(os.path.join(ROOT, "build", "musl"), os.path.join(TREE, "build", "musl"))


def save_outputs():
    if os.path.isdir(PRISTINE):
        shutil.rmtree(PRISTINE)
    os.makedirs(PRISTINE)
    for o in OUTPUTS:
        src = os.path.join(TREE, "build", o)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(PRISTINE, o), symlinks=True)
        elif os.path.exists(src):
            shutil.copy2(src, os.path.join(PRISTINE, o))


def restore_outputs():
    for o in OUTPUTS:
        dst = os.path.join(TREE, "build", o)
        if os.path.isdir(dst):
            shutil.rmtree(dst)
        elif os.path.lexists(dst):
            os.unlink(dst)
        src = os.path.join(PRISTINE, o)
        if os.path.isdir(src):
            shutil.copytree(src, dst, symlinks=True)
        elif os.path.exists(src):
            shutil.copy2(src, dst)


def counts(out, suite):
    """(passed, failed) from a suite's last closing line, or None."""
    pat = r"^(?:unit: |fuzz: )?(\d+) passed, (\d+) failed" if suite in ("unit", "fuzz-replay") \
        else r"^(\d+) passed, (\d+) failed"
    found = re.findall(pat, out, re.M)
    return tuple(int(x) for x in found[-1]) if found else None


def failed_tests(out):
    """The names of the tests a TAP output reports failed ("not ok N - NAME")."""
    return [n.split(" # ")[0] for n in re.findall(r"^not ok \d+ - (.*)$", out, re.M)]


def judge(suite, regex, rc, out, where, baseline=None):
    """The verdict of one catch run: 'killed', 'survived' or 'error: WHY'.
    out: the suite's output under the mutation (rc its status); baseline: a
    function giving (rc, out) of the same catch on the unmutated tree, called
    only when the mutated run failed. where: the log to name."""
    label = suite + (" " + regex if regex else "")
    if re.search(r"^not ok \d+ - setup", out, re.M):
        return "error: %s aborted (see %s)" % (suite, where)
    c = counts(out, suite)
    if c is None:
        if re.search(r"^\s*(CC|LD) .*\n(?:.*\n)*?.*(error|Error)", out):
            return "error: the mutant does not build (see %s)" % where
        return "error: %s printed no closing line, exit %d (see %s)" % (suite, rc, where)
    passed, failed = c
    if passed + failed == 0:
        if re.search(r"^ok \d+ - .* # SKIP ", out, re.M):
            return "survived"   # every test it selects is skipped here (its reason in the log): the next catch
        return "error: %s selects no test" % label
    if not failed:
        return "survived"
    if baseline is None:
        return "killed"
    b_rc, b_out = baseline()
    b_counts = counts(b_out, suite)
    if b_counts is None or re.search(r"^not ok \d+ - setup", b_out, re.M):
        return "error: %s on the unmutated tree printed no closing line or aborted, exit %d" % (label, b_rc)
    if b_counts[1]:
        return "error: %s fails on the unmutated tree too (%s): not a kill" % (
            label, ", ".join(failed_tests(b_out)) or "%d failed" % b_counts[1])
    return "killed"


BASELINE = {}   # (suite, regex): (rc, out) on the unmutated tree


def run_catch(suite, regex, log, pristine_log, unmutate):
    """'killed', 'survived' or 'error: WHY', and the seconds it took. When the
    mutated run fails and this catch has no baseline yet, unmutate() puts the
    tree back as it was (source and build outputs) and the catch runs there
    once; the tree then stays unmutated (the verdict is decided)."""
    env = dict(os.environ)
    env.pop("ITEST_ONLY", None)
    if regex:
        env["ITEST_ONLY"] = regex
    rc, out, secs = sh(["make", "--no-print-directory", suite], TREE, env=env, log=log)
    spent = [secs]

    def baseline():
        key = (suite, regex)
        if key not in BASELINE:
            unmutate()
            b_rc, b_out, b_secs = sh(["make", "--no-print-directory", suite], TREE, env=env, log=pristine_log)
            spent[0] += b_secs
            BASELINE[key] = (b_rc, b_out)
        return BASELINE[key]

    return judge(suite, regex, rc, out, os.path.relpath(log, ROOT), baseline=baseline), spent[0]


def judge_selftest():
    """The judgement on made-up TAP outputs: None when it holds, else what
    went wrong. A catch that fails on the unmutated tree is an error naming
    its failed tests; one that passes there makes the failure a kill."""
    fail = "ok 1 - a\nnot ok 2 - arch-int80 # x\n1..2\n1 passed, 1 failed\n"
    good = "ok 1 - a\nok 2 - arch-int80\n1..2\n2 passed, 0 failed\n"
    asked = []

    def base(out):
        return lambda: asked.append(1) or (0, out)
    cases = [
        (judge("sandbox", "^arch", 1, fail, "log", base(fail)),
         "error: sandbox ^arch fails on the unmutated tree too (arch-int80): not a kill"),
        (judge("sandbox", "^arch", 1, fail, "log", base(good)), "killed"),
        (judge("sandbox", None, 0, good, "log", base(fail)), "survived"),
        (judge("sandbox", None, 1, "not ok 1 - setup # x\n", "log", base(good)),
         "error: sandbox aborted (see log)"),
        (judge("sandbox", "^z", 0, "1..0\n0 passed, 0 failed\n", "log", base(good)),
         "error: sandbox ^z selects no test"),
        (judge("sandbox", "^arch", 0, "ok 1 - arch-int80 # SKIP no int 0x80\n1..1\n0 passed, 0 failed, 1 skipped\n",
               "log", base(good)), "survived"),
    ]
    for got, want in cases:
        if got != want:
            return "judge: got %r, want %r" % (got, want)
    if len(asked) != 2:
        return "judge: the unmutated tree was asked %d times, want 2 (only when the mutant failed)" % len(asked)
    return None


def main(argv):
    check_only = "--check" in argv
    argv = [a for a in argv if a != "--check"]
    only = argv[0] if argv else None
    try:
        muts = parse(LIST)
        for m in muts:
            applies(m, ROOT)
        error = None
    except ListError as e:
        error = str(e)
    if check_only:
        # One result for the closing line of make check (tests/summary.sh).
        os.makedirs(os.path.join(ROOT, "build", "test-results"), exist_ok=True)
        judged = judge_selftest()
        with open(os.path.join(ROOT, "build", "test-results", "mutants-list"), "w") as f:
            f.write("%d %d\n" % ((error is None) + (judged is None), (error is not None) + (judged is not None)))
        if error:
            print("not ok 1 - mutants-list\n# %s" % error)
        else:
            print("ok 1 - mutants-list: %d mutations, each applies exactly once" % len(muts))
        if judged:
            print("not ok 2 - mutants-judge\n# %s" % judged)
        else:
            print("ok 2 - mutants-judge: a catch that fails on the unmutated tree is an error, never a kill")
        print("1..2\n%d passed, %d failed" % ((error is None) + (judged is None),
                                              (error is not None) + (judged is not None)))
        return 1 if error or judged else 0
    if error:
        print("mutants: %s" % error)
        return 1
    if only:
        muts = [m for m in muts if re.search(only, m["name"])]
    if not muts:
        print("mutants: no mutation matches %r" % only)
        return 1

    os.makedirs(WORK, exist_ok=True)
    logdir = os.path.join(WORK, "logs")
    shutil.rmtree(logdir, ignore_errors=True)
    os.makedirs(logdir)
    t_start = time.monotonic()
    rc, out, _ = sh(["make", "--no-print-directory", "deps"], ROOT)
    if rc != 0:
        print(out[-3000:])
        print("mutants: make deps failed")
        return 1
    copy_tree()
    suites = sorted({s for m in muts for s, _ in m["catch"]})
    # The unmutated build, once: the binary, and the host builds the chosen
    # suites use (unit tests, the valgrind build).
    targets = ["all", "helpers"] + (["build/vg/turninit"] if "valgrind" in suites else [])
    rc, out, secs = sh(["make", "--no-print-directory"] + targets, TREE, log=os.path.join(logdir, "pristine.log"))
    if rc != 0:
        print(out[-3000:])
        print("mutants: the unmutated tree does not build")
        return 1
    if "unit" in suites:
        sh(["make", "--no-print-directory", "unit"], TREE, log=os.path.join(logdir, "pristine.log"))
    save_outputs()
    print("mutants: %d mutations; scratch tree built in %.0f s" % (len(muts), time.monotonic() - t_start),
          flush=True)

    rows = []
    for m in muts:
        log = os.path.join(logdir, m["name"] + ".log")
        path = os.path.join(TREE, m["file"])
        st = os.stat(path)
        orig, mutated = applies(m, TREE)
        restore_outputs()
        with open(path, "w", encoding="utf-8") as f:
            f.write(mutated)
        verdict, by, total = "survived", "", 0.0

        def unmutate():
            with open(path, "w", encoding="utf-8") as f:
                f.write(orig)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            restore_outputs()
        try:
            for suite, regex in m["catch"]:
                v, secs = run_catch(suite, regex, log, os.path.join(logdir, "baseline.log"), unmutate)
                total += secs
                label = suite + (" " + regex if regex else "")
                if v != "survived":
                    verdict, by = v, label
                    break
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(orig)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        rows.append((m, verdict, by, total))
        print("mutants: %-40s %-9s %5.0f s  %s" % (m["name"], verdict.split(":")[0], total,
                                                   by if verdict == "killed" else verdict), flush=True)
    restore_outputs()

    killed = sum(1 for r in rows if r[1] == "killed")
    lines = ["| mutation | file | guarantee | verdict | caught by | s |", "|---|---|---|---|---|---|"]
    for m, verdict, by, secs in rows:
        lines.append("| %s | %s | %s | %s | %s | %.0f |" % (
            m["name"], m["file"], m["guarantee"], verdict, ("`%s`" % by) if by and verdict == "killed" else "",
            secs))
    lines.append("")
    lines.append("%d mutations: %d killed, %d survived, %d errors; %.0f s in all" % (
        len(rows), killed, sum(1 for r in rows if r[1] == "survived"),
        sum(1 for r in rows if r[1].startswith("error")), time.monotonic() - t_start))
    report = "\n".join(lines) + "\n"
    with open(os.path.join(WORK, "report.md"), "w") as f:
        f.write(report)
    print(report, end="")
    return 0 if killed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
