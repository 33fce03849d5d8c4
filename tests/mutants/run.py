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
    MUTANTS_JOBS   (environment) the number of workers, default 2; 1 runs
                   one mutation at a time, in build/mutants/tree alone

Two workers run at once (MUTANTS_JOBS), each with a scratch copy of its own:
build/mutants/tree, then build/mutants/tree-1 (tree-N for more). A suite
waits on podman, conmon and crun for most of its time (about one core of
two), so two suites at once nearly halve the wall clock. The suites share
image tags, container names and networks between runs (run.sh builds
localhost/turninit-itest, network.sh makes the network turninit-ntest), so
two runs of the same suite never overlap: a free worker takes the first
pending mutation, in list order, none of whose catches' suites the other
workers' mutations name, and waits when there is none (schedule; unit and
fuzz-replay start no container and are never waited for). The unmutated
baselines are run the same way, one run per suite. Two suites at once share
root's container store, so with more than one worker the suites run with
ITEST_PARALLEL=1 (no suite prunes the store: tests/integration/lib.sh,
prune_images) and the store is pruned once, before the trees are built.

A scratch copy holds the files git knows of (tracked, and untracked ones that
are not ignored), and build/musl linked from the tree itself (the musl
dependencies, made by `make deps`). It is kept from run to run with its build
outputs: each run syncs it (a file whose bytes changed is written with the
time of now; a changed Makefile empties build/) and builds it unmutated, so
that make rebuilds only what changed. A mutation writes its file in its
worker's copy, make rebuilds the objects that file feeds and relinks, its
catches run (unit tests first), and the file is put back with the time of
now, so that the next build there rebuilds that file's outputs again and
nothing else.

A suite run counts only when it ran tests: an abort ("not ok N - setup"), a
missing closing line or a catch regex that selects no test is an error, and so
is a "from" text that does not occur exactly once, or a build that fails.
A mutation is killed only by tests that passed without it: before any
mutation, every catch (a suite and its regex) is run once on the unmutated
tree, one run per suite with an ITEST_ONLY that joins the regexes of its
catches; a catch that failed there is an error naming the tests that failed,
never a kill (a kernel without a feature, a busy machine or a broken test
would otherwise "kill" every mutation it catches), and a failure that no
catch's regex selects counts against every catch of its suite. --check also
runs the self-tests of that judgement (judge_selftest) and of the workers'
schedule (schedule_selftest). Each mutation's line is printed when it ends
(so not always in list order); its log is build/mutants/logs/NAME.log, a
baseline's logs/baseline-SUITE.log. The report (a Markdown table, in list
order) goes to stdout and build/mutants/report.md; its last line counts the
verdicts and gives the run's time and its number of workers. Exit status: 0
when every mutation was killed, 1 otherwise.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIST = os.path.join(ROOT, "tests", "mutants", "mutants.txt")
WORK = os.path.join(ROOT, "build", "mutants")
TREE = os.path.join(WORK, "tree")
# The suites that start no container, image or network of fixed name: a run
# of one in each tree at once is fine. Every other suite holds its image tags,
# container names and networks for as long as it runs (run.sh builds
# localhost/turninit-itest, network.sh makes the network turninit-ntest).
SHARED_OK = ("unit", "fuzz-replay")
SUITES = ("unit", "integration", "sandbox", "network", "workload", "serve", "pid1", "hostile", "fault",
          "valgrind", "audit", "pi", "mcp", "nonroot", "gvisor", "fuzz-replay", "packaging")
SUITE_TIMEOUT = 1800   # seconds, one suite run
FIELDS = ("guarantee", "file", "from", "to")


def build_argv(targets):
    """make's argv for the scratch tree's builds of TARGETS. -flto=auto: the
    link's LTRANS jobs in parallel, not one after the other (the same bytes;
    the link is most of a mutation's build: 27 s of 29 on a loaded 2-core
    machine); CFLAGS from the environment are kept."""
    cflags = (os.environ.get("CFLAGS", "") + " -flto=auto").strip()
    return ["make", "--no-print-directory", "CFLAGS=" + cflags] + targets


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


_running, _running_lock = set(), threading.Lock()


def end_group(p, sig):
    """The output of P after SIG to its process group (a suite's trap removes
    its containers), or, 120 s on, SIGKILL: what it printed until then."""
    try:
        os.killpg(p.pid, sig)
        out, _ = p.communicate(timeout=120)
    except ProcessLookupError:
        out, _ = p.communicate()
    except subprocess.TimeoutExpired as e:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        out = e.output
    return out or b""


def interrupt_running():
    """SIGTERM to the process group of every command sh() runs now: each is a
    session of its own, which a ^C at the terminal does not reach (and SIGINT
    would not end what a script started in the background)."""
    with _running_lock:
        for p in _running:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def sh(argv, cwd, env=None, timeout=SUITE_TIMEOUT, log=None):
    """(status, output, seconds) of ARGV, run in a process group of its own:
    past TIMEOUT the whole group is sent SIGTERM (end_group), and the status
    is -1. (Killing make alone left the suite's script running beside the
    next run of that suite, which the schedule had let start.) A ^C here
    ends it the same way, and is raised again."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    with _running_lock:
        _running.add(p)
    try:
        out, _ = p.communicate(timeout=timeout)
        out, rc = out.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired:
        out, rc = end_group(p, signal.SIGTERM).decode(errors="replace") + "\n(timed out)\n", -1
    except KeyboardInterrupt:
        end_group(p, signal.SIGTERM)
        raise
    finally:
        with _running_lock:
            _running.discard(p)
    if log:
        with open(log, "a") as f:
            f.write("$ %s\n%s\n" % (" ".join(argv), out))
    return rc, out, time.monotonic() - t0


def tree_files():
    """The files git knows of in the work tree (tracked, and untracked ones
    that are not ignored), relative paths, those deleted but not yet in git
    left out."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, stdout=subprocess.PIPE, check=True).stdout.split(b"\0")
    return [f.decode() for f in files if f and os.path.lexists(os.path.join(ROOT, f.decode()))]


def same_file(a, b):
    """True when a and b hold the same bytes (or are the same symlink)."""
    if os.path.islink(a) or os.path.islink(b):
        return os.path.islink(a) and os.path.islink(b) and os.readlink(a) == os.readlink(b)
    if not os.path.isfile(b) or os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def sync_tree(tree):
    """TREE, a worker's scratch tree (tree_of), made the work tree's files
    again, its build outputs kept from the last run: a file copied new keeps
    its mtime, a file whose bytes changed (or that a cut-off run left mutated)
    is written with the time of now, so that make rebuilds what it feeds and
    nothing else; files git no longer knows of are removed (build/ is the
    tree's own). A changed Makefile empties build/ first: no object depends
    on it, and it may change how each one is made. The number of files
    written."""
    known = set(tree_files())
    mk = os.path.join(tree, "Makefile")
    if os.path.exists(mk) and not same_file(os.path.join(ROOT, "Makefile"), mk):
        shutil.rmtree(os.path.join(tree, "build"), ignore_errors=True)
    written = 0
    for rel in sorted(known):
        src, dst = os.path.join(ROOT, rel), os.path.join(tree, rel)
        if os.path.lexists(dst) and same_file(src, dst):
            continue
        fresh = not os.path.lexists(dst)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.lexists(dst) and (os.path.islink(dst) or os.path.islink(src)):
            os.unlink(dst)
        shutil.copy2(src, dst, follow_symlinks=False)
        if not fresh and not os.path.islink(dst):
            os.utime(dst)
        written += 1
    for top, dirs, names in os.walk(tree):
        rel_top = os.path.relpath(top, tree)
        if rel_top == "build":
            dirs[:] = []
            continue
        for n in names:
            rel = os.path.normpath(os.path.join(rel_top, n))
            if rel not in known:
                os.unlink(os.path.join(top, n))
    musl = os.path.join(tree, "build", "musl")
    os.makedirs(os.path.dirname(musl), exist_ok=True)
    if not os.path.lexists(musl):
        os.symlink(os.path.join(ROOT, "build", "musl"), musl)
    return written


def put_back(path, text):
    """PATH holds TEXT again, with the time of now: newer than anything built
    from the mutated text, so that make rebuilds what that fed (and only that)
    the next time it is asked for."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    now = time.time_ns()
    os.utime(path, ns=(now, now))


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


def catch_env(regex):
    """The environment of a suite run: ITEST_ONLY=REGEX, or none for the
    whole suite."""
    env = dict(os.environ)
    env.pop("ITEST_ONLY", None)
    if regex:
        env["ITEST_ONLY"] = regex
    return env


def tap_tests(out):
    """[(name, failed)] of a TAP output's test lines, the name without its
    "# SKIP ..." or "# ..." tail."""
    return [(name.split(" # ")[0], bool(neg))
            for neg, name in re.findall(r"^(not )?ok \d+ - (.*)$", out, re.M)]


def catch_baseline(out, suite, regex, regexes):
    """The TAP output of the catch (suite, regex) on the unmutated tree, cut
    from OUT, the run of all the catches REGEXES of that suite at once: the
    tests the catch's regex selects, and every failed test that no catch's
    regex selects (a failure that cannot be put on one catch counts against
    them all: the error side, never a kill), then its own closing line. An
    output that aborted or has no closing line is given whole."""
    if counts(out, suite) is None or re.search(r"^not ok \d+ - setup", out, re.M):
        return out
    lines, passed, failed = [], 0, 0
    for name, bad in tap_tests(out):
        mine = regex is None or re.search(regex, name)
        nobody = not any(r is None or re.search(r, name) for r in regexes)
        if mine or (bad and nobody):
            passed, failed = passed + (not bad), failed + bad
            lines.append("%s %d - %s" % ("not ok" if bad else "ok", len(lines) + 1, name))
    return "\n".join(lines + ["1..%d" % len(lines), "%d passed, %d failed" % (passed, failed)]) + "\n"


def join_regexes(regexes):
    """One ITEST_ONLY (bash's =~, POSIX ERE) selecting what each of REGEXES
    selects; None (the whole suite) when one of them is None."""
    if any(r is None for r in regexes):
        return None
    return "|".join("(%s)" % r for r in regexes)


def run_baselines(muts, logdir, jobs):
    """Each catch of MUTS run once on the unmutated trees, before any
    mutation: one run per suite, its ITEST_ONLY joining the regexes of all its
    catches, the whole suite when one catch names no regex; JOBS suites at
    once, each in its worker's tree, never the same suite twice at once
    (schedule); its log logs/baseline-SUITE.log. A dict (suite, regex):
    (rc, out), out cut to that catch (catch_baseline)."""
    by_suite = {}
    for m in muts:
        for suite, regex in m["catch"]:
            by_suite.setdefault(suite, [])
            if regex not in by_suite[suite]:
                by_suite[suite].append(regex)
    base = {}

    def one(suite, worker):
        regexes = by_suite[suite]
        rc, out, secs = sh(["make", "--no-print-directory", suite], tree_of(worker),
                           env=catch_env(join_regexes(regexes)),
                           log=os.path.join(logdir, "baseline-%s.log" % suite))
        c = counts(out, suite)
        say("mutants: unmutated %-12s %3d catches %5.0f s  %s" % (
            suite, len(regexes), secs, "%d passed, %d failed" % c if c else "no closing line"))
        for regex in regexes:
            base[(suite, regex)] = (rc, catch_baseline(out, suite, regex, regexes))
    schedule(sorted(by_suite, key=suite_rank), lambda suite: suites_held([suite]), one, jobs)
    return base


def suite_rank(suite):
    """The order catches are tried in: the unit tests first (no image to
    build), then the suites as the list names them (a stable sort)."""
    return suite != "unit"


def run_catch(tree, suite, regex, log, baseline):
    """'killed', 'survived' or 'error: WHY', and the seconds it took, of the
    catch run in TREE. baseline: (rc, out) of the same catch on the unmutated
    tree (run_baselines), asked only when the mutated run failed."""
    rc, out, secs = sh(["make", "--no-print-directory", suite], tree, env=catch_env(regex), log=log)
    return judge(suite, regex, rc, out, os.path.relpath(log, ROOT), baseline=lambda: baseline), secs


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
    # One run of a suite's catches at once, cut per catch: a failure is put
    # on the catches that select it, one that none selects on them all.
    both = "ok 1 - a-x\nnot ok 2 - b-y # why\nok 3 - c # SKIP no\n1..3\n1 passed, 1 failed, 1 skipped\n"
    stray = "ok 1 - a-x\nnot ok 2 - z\n1..2\n1 passed, 1 failed\n"
    cut = [
        (catch_baseline(both, "serve", "^a-", ["^a-", "^b-"]), "ok 1 - a-x\n1..1\n1 passed, 0 failed\n"),
        (catch_baseline(both, "serve", "^b-", ["^a-", "^b-"]), "not ok 1 - b-y\n1..1\n0 passed, 1 failed\n"),
        (catch_baseline(stray, "serve", "^a-", ["^a-", "^b-"]),
         "ok 1 - a-x\nnot ok 2 - z\n1..2\n1 passed, 1 failed\n"),
        (catch_baseline("not ok 1 - setup # x\n", "serve", "^a-", ["^a-"]), "not ok 1 - setup # x\n"),
        (join_regexes(["^a-", "^b$"]), "(^a-)|(^b$)"),
        (join_regexes(["^a-", None]), None),
    ]
    for got, want in cut:
        if got != want:
            return "catch_baseline: got %r, want %r" % (got, want)
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
        judged, scheduled = judge_selftest(), schedule_selftest()
        bad = (error is not None) + (judged is not None) + (scheduled is not None)
        with open(os.path.join(ROOT, "build", "test-results", "mutants-list"), "w") as f:
            f.write("%d %d\n" % (3 - bad, bad))
        if error:
            print("not ok 1 - mutants-list\n# %s" % error)
        else:
            print("ok 1 - mutants-list: %d mutations, each applies exactly once" % len(muts))
        if judged:
            print("not ok 2 - mutants-judge\n# %s" % judged)
        else:
            print("ok 2 - mutants-judge: a catch that fails on the unmutated tree is an error, never a kill")
        if scheduled:
            print("not ok 3 - mutants-schedule\n# %s" % scheduled)
        else:
            print("ok 3 - mutants-schedule: two workers never run one suite at once, and skip to what is free")
        print("1..3\n%d passed, %d failed" % (3 - bad, bad))
        return 1 if bad else 0
    if error:
        print("mutants: %s" % error)
        return 1
    jobs = mutants_jobs()
    if jobs is None:
        return 1
    if only:
        muts = [m for m in muts if re.search(only, m["name"])]
    if not muts:
        print("mutants: no mutation matches %r" % only)
        return 1

    return run_all(muts, jobs)


def tree_of(worker):
    """The scratch tree of WORKER (0..jobs-1): build/mutants/tree for the
    first, build/mutants/tree-N for the others."""
    return TREE if worker == 0 else "%s-%d" % (TREE, worker)


def suites_held(suites):
    """The suites of SUITES that a run holds for itself (all but SHARED_OK):
    a frozenset."""
    return frozenset(s for s in suites if s not in SHARED_OK)


_say = threading.Lock()


def say(line):
    """LINE printed whole, flushed: the workers print one line each at the
    end of what they ran."""
    with _say:
        print(line, flush=True)


def schedule(items, needs, work, jobs):
    """work(item, worker) for each of ITEMS, on JOBS threads (worker 0..JOBS-1,
    each its own scratch tree); the results in ITEMS' order. A free worker
    takes the first pending item whose needs(item), a set of suites, shares
    none with what the items running now need, and waits when there is none:
    two runs of one suite (its image tags, container names and networks)
    never overlap. An exception in one work, or ^C, lets the running items
    end and starts no other; then it is raised."""
    cond = threading.Condition()
    pending, held, results, raised = list(range(len(items))), {}, [None] * len(items), []

    def take(worker):
        # Taken and held under one lock: no other worker sees it free between.
        with cond:
            while pending and not raised:
                used = frozenset().union(*held.values())
                i = next((i for i in pending if not needs(items[i]) & used), None)
                if i is not None:
                    pending.remove(i)
                    held[worker] = needs(items[i])
                    return i
                cond.wait()
            return None

    def loop(worker):
        while True:
            i = take(worker)
            if i is None:
                return
            try:
                results[i] = work(items[i], worker)
            except BaseException as e:
                with cond:
                    raised.append(e)
            finally:
                with cond:
                    held.pop(worker, None)
                    cond.notify_all()
    threads = [threading.Thread(target=loop, args=(w,), daemon=True) for w in range(jobs)]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    except KeyboardInterrupt:
        # Each command runs in a session of its own (sh): the ^C is passed on
        # to them, and the workers put their files back and end.
        with cond:
            raised.append(KeyboardInterrupt())
            cond.notify_all()
        interrupt_running()
        for t in threads:
            t.join()
    if raised:
        raise raised[0]
    return results


def schedule_selftest():
    """The scheduler on made-up items: None when it holds, else what went
    wrong. Two workers, a and b need the same suite, c another: c starts
    while a runs (b skipped, not waited for), b only after a ended, and the
    results come back in the items' order; with one worker, one at a time in
    list order."""
    seen, lock, c_started = [], threading.Lock(), threading.Event()

    def work(item, worker):
        with lock:
            seen.append("start " + item)
        if item == "c":
            c_started.set()
        if item == "a" and not c_started.wait(30):
            with lock:
                seen.append("c did not start while a ran")
        with lock:
            seen.append("end " + item)
        return item.upper()
    needs = {"a": {"sandbox", "unit"}, "b": {"sandbox"}, "c": {"serve", "unit"}}
    got = schedule(["a", "b", "c"], lambda i: suites_held(needs[i]), work, 2)
    if got != ["A", "B", "C"]:
        return "schedule: results %r, want ['A', 'B', 'C']" % got
    if ("c did not start while a ran" in seen or seen.index("start c") > seen.index("end a")
            or seen.index("start b") < seen.index("end a")):
        return "schedule: two workers ran %s" % ", ".join(seen)
    seen[:] = []
    c_started.set()
    schedule(["a", "b", "c"], lambda i: suites_held(needs[i]), work, 1)
    if seen != ["start a", "end a", "start b", "end b", "start c", "end c"]:
        return "schedule: one worker ran %s" % ", ".join(seen)
    return None


def mutant_targets(suites):
    """The build targets of a tree whose catches run SUITES: the binary, the
    helpers, and the valgrind build when a catch runs that suite (the unit
    tests are built by make unit)."""
    return ["all", "helpers"] + (["build/vg/turninit"] if "valgrind" in suites else [])


def prepare(muts, logdir, jobs):
    """The JOBS scratch trees synced and built unmutated, at once, and every
    catch of MUTS run there once (run_baselines): the baselines, or None when
    an unmutated tree does not build (said)."""
    rc, out, _ = sh(["make", "--no-print-directory", "deps"], ROOT)
    if rc != 0:
        print(out[-3000:])
        print("mutants: make deps failed")
        return None
    targets = mutant_targets({s for m in muts for s, _ in m["catch"]})

    def build(worker, _):
        t0 = time.monotonic()
        tree = tree_of(worker)
        written = sync_tree(tree)
        rc, out, _ = sh(build_argv(targets), tree,
                        log=os.path.join(logdir, "pristine%s.log" % ("-%d" % worker if worker else "")))
        if rc != 0:
            say(out[-3000:])
            say("mutants: the unmutated tree %s does not build" % os.path.relpath(tree, ROOT))
            return False
        say("mutants: %d mutations; %s synced (%d files written) and built in %.0f s" % (
            len(muts), os.path.relpath(tree, ROOT), written, time.monotonic() - t0))
        return True
    # One build per worker, each in its own tree: no suite is held.
    if not all(schedule(list(range(jobs)), lambda _: frozenset(), build, jobs)):
        return None
    return run_baselines(muts, logdir, jobs)


def run_mutation(m, worker, logdir, base):
    """(verdict, caught by, seconds, of them the build's) of one mutation in
    WORKER's tree: its edit written there, make rebuilding what the file
    feeds, its catches tried unit first until one decides; the file then put
    back (put_back), so that the next build in that tree rebuilds that file's
    outputs and nothing else."""
    tree = tree_of(worker)
    log = os.path.join(logdir, m["name"] + ".log")
    path = os.path.join(tree, m["file"])
    orig, mutated = applies(m, tree)
    verdict, by, total, built = "survived", "", 0.0, 0.0
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(mutated)
        rc, out, built = sh(build_argv(mutant_targets({s for s, _ in m["catch"]})), tree, log=log)
        total = built
        if rc != 0:
            return "error: the mutant does not build (see %s)" % os.path.relpath(log, ROOT), "", total, built
        for suite, regex in sorted(m["catch"], key=lambda c: suite_rank(c[0])):
            v, secs = run_catch(tree, suite, regex, log, base[(suite, regex)])
            total += secs
            if v != "survived":
                verdict, by = v, suite + (" " + regex if regex else "")
                break
    finally:
        put_back(path, orig)
    return verdict, by, total, built


def mutants_jobs():
    """MUTANTS_JOBS from the environment (default 2): the number of workers,
    or None when it is not a whole number of 1 or more (said)."""
    val = os.environ.get("MUTANTS_JOBS", "2")
    if not re.fullmatch(r"[1-9][0-9]*", val):
        print("mutants: MUTANTS_JOBS=%r: the number of workers, a whole number of 1 or more" % val)
        return None
    return int(val)


def run_all(muts, jobs):
    """Every mutation of MUTS run (run_mutation) by JOBS workers, each in its
    own tree, never two with a suite in common at once (schedule); each
    mutation's line printed as it ends, the report written in the list's
    order; the exit status: 0 when each was killed."""
    os.makedirs(WORK, exist_ok=True)
    logdir = os.path.join(WORK, "logs")
    shutil.rmtree(logdir, ignore_errors=True)
    os.makedirs(logdir)
    t_start = time.monotonic()
    if jobs > 1:
        # Two suites at once share root's container store: neither may prune
        # it while the other makes an image (tests/integration/lib.sh,
        # prune_images); it is pruned once, here.
        os.environ["ITEST_PARALLEL"] = "1"
        sh(["podman", "image", "prune", "-f", "--filter", "label=org.turninit.root"], ROOT, timeout=60)
    base = prepare(muts, logdir, jobs)
    if base is None:
        return 1
    say("mutants: unmutated build and every catch's baseline in %.0f s" % (time.monotonic() - t_start))

    def one(m, worker):
        verdict, by, total, built = run_mutation(m, worker, logdir, base)
        say("mutants: %-40s %-9s %5.0f s (build %3.0f s)  %s" % (
            m["name"], verdict.split(":")[0], total, built, by if verdict == "killed" else verdict))
        return m, verdict, by, total
    rows = schedule(muts, lambda m: suites_held(s for s, _ in m["catch"]), one, jobs)
    killed = sum(1 for r in rows if r[1] == "killed")
    lines = ["| mutation | file | guarantee | verdict | caught by | s |", "|---|---|---|---|---|---|"]
    for m, verdict, by, secs in rows:
        lines.append("| %s | %s | %s | %s | %s | %.0f |" % (
            m["name"], m["file"], m["guarantee"], verdict, ("`%s`" % by) if by and verdict == "killed" else "",
            secs))
    lines.append("")
    lines.append("%d mutations: %d killed, %d survived, %d errors; %.0f s in all, %d worker%s" % (
        len(rows), killed, sum(1 for r in rows if r[1] == "survived"),
        sum(1 for r in rows if r[1].startswith("error")), time.monotonic() - t_start, jobs,
        "" if jobs == 1 else "s"))
    report = "\n".join(lines) + "\n"
    with open(os.path.join(WORK, "report.md"), "w") as f:
        f.write(report)
    print(report, end="")
    return 0 if killed == len(rows) else 1

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
