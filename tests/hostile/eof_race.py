#!/usr/bin/env python3
"""eof_race.py - the end of stdin and the last command's end in the same poll
round of `turninit serve`, for tests/integration/hostile.sh:

    eof_race.py -- SERVER_ARGV...

Starts the server (SERVER_ARGV: `turninit serve` in its namespaces), runs
as exec "x" a command that waits until a file is made, and waits for its
started event; then stops turninit (SIGSTOP, from outside its PID namespace),
makes the file, waits until the command's keeper has reported its end (the
command is gone and the keeper sleeps again: its exit message is then
pending), closes turninit's stdin, and lets it go on (SIGCONT): its next poll
finds both at once. (The command ends only once turninit is stopped, however
slow the machine.)
Prints the events of "x" (pid and duration_ms as 0) and `serve status N`, or
`serve still running after 60 s` (then kills turninit). Bounded waits only.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "serve"))
import cases as sv  # noqa: E402  (tests/serve/cases.py)

WAIT = 60


def children(pid):
    """(pid, comm, state) of each child of pid: tests/serve/cases.py's children."""
    out = []
    for line in sv.children(pid):
        p, state, comm = line.split(" ", 2)
        out.append((int(p), comm, state))
    return out


def find(root, comm):
    """The first descendant of root named comm."""
    todo = [root]
    while todo:
        for pid, c, _ in children(todo.pop(0)):
            if c == comm:
                return pid
            todo.append(pid)
    return None


def until(what, cond):
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.01)
    print("timed out: %s" % what)
    sys.exit(1)


def shown(line):
    ev = json.loads(line)
    for k in ("pid", "duration_ms"):
        if k in ev:
            ev[k] = 0
    return json.dumps(ev, separators=(",", ":"))


def main(argv):
    server = argv[argv.index("--") + 1:]
    # the file the command waits for: in a directory the command's uid can read
    d = tempfile.mkdtemp(prefix="turninit-eof-race.")
    try:
        os.chmod(d, 0o755)
        run(server, os.path.join(d, "go"))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def run(server, go):
    p = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    cmd = "until [ -e %s ]; do sleep 0.05; done" % go
    p.stdin.write(json.dumps({"op": "exec", "id": "x", "command": cmd}, separators=(",", ":")).encode() + b"\n")
    p.stdin.flush()
    started = p.stdout.readline()
    print(shown(started))
    t = until("turninit", lambda: find(p.pid, "turninit"))
    os.kill(t, signal.SIGSTOP)
    until("turninit stopped", lambda: open("/proc/%d/stat" % t).read().rsplit(")", 1)[1].split()[0] == "T")
    # The keeper is turninit's child; once it is a zombie (or gone), its
    # message and SIGCHLD wait for turninit.
    kids = children(t)
    if not kids:
        print("the command ended before turninit was stopped")
        sys.exit(1)
    # The keeper outlives its command (one per slot, reused): once its
    # child is gone and it sleeps again, waiting for the next command, its
    # exit message waits for turninit.
    keeper = kids[0][0]
    open(go, "w").close()   # the command may end now

    def reported():
        st = [s for p, _, s in children(t) if p == keeper]
        return not children(keeper) and st == ["S"]
    until("the keeper's report", reported)
    p.stdin.close()
    p.stdin = None   # closed: communicate must not flush it
    os.kill(t, signal.SIGCONT)
    try:
        out, _ = p.communicate(timeout=WAIT)
    except subprocess.TimeoutExpired:
        print("serve still running after %d s" % WAIT)
        os.kill(t, signal.SIGKILL)   # PID 1 of its namespace: unshare and timeout follow
        p.wait(WAIT)
        return
    for line in out.splitlines():
        print(shown(line))
    print("serve status %d" % p.returncode)


if __name__ == "__main__":
    main(sys.argv[1:])
