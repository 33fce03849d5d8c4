#!/usr/bin/env python3
"""faults.py - the scenarios of tests/integration/fault.sh: turninit under a
fault, driven through the reference client (tests/serve/client.py) and the
helpers of tests/serve/cases.py. Standard library only; runs on the host, as
root (it reads /proc and signals processes of the container from outside).

    faults.py CASE --name CONTAINER [--opt VALUE]... -- SERVER_ARGV...
        serve mode: starts SERVER_ARGV (`podman run -i ... IMAGE serve`)
    faults.py CASE --name CONTAINER --socket PATH [--opt VALUE]... -- SERVER_ARGV...
        listen mode: starts SERVER_ARGV (`podman run ... IMAGE listen`) in the
        background and connects to PATH (host side) as uid 1000

Each case prints facts, one a line, on stdout; fault.sh compares them with the
exact text it expects. Measured times go to stderr as "# ..." lines. Every
event is checked against the protocol's shapes (a malformed one adds a
"malformed: ..." line).
"""
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "serve"))
from client import Client, Closed  # noqa: E402
import cases as sv  # noqa: E402  (tests/serve/cases.py: shapes, engine, connect_as)

say, note, js, within, ms_since = sv.say, sv.note, sv.js, sv.within, sv.ms_since
# What must happen at once: a bound a loaded machine does not reach (the time
# seen is a note); what it tells apart would wait for a sleep of 1000 s, or
# for ever.
AT_ONCE_MS, AT_ONCE = sv.AT_ONCE_MS, sv.AT_ONCE


def exit_fields(r):
    """exit_fields of tests/serve/cases.py, and lost/oom_killed when there."""
    s = sv.exit_fields(r)
    for k in ("lost", "oom_killed"):
        if r.exit is not None and k in r.exit:
            s += " %s=%s" % (k, js(r.exit[k]))
    return s


def host_pids(name):
    """{container pid: host pid} of every process of the container (NSpid):
    the processes in its PID namespace only (other containers, of another
    suite on a busy machine, have the same pids in theirs)."""
    top = sv.host_pid(name)
    pidns = os.readlink("/proc/%d/ns/pid" % top)
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if os.readlink("/proc/%s/ns/pid" % d) != pidns:
                continue
            with open("/proc/%s/status" % d) as f:
                ns = next((l.split()[1:] for l in f if l.startswith("NSpid:")), None)
        except OSError:
            continue
        if ns and len(ns) >= 2:
            out.setdefault(int(ns[-1]), int(d))
    return out


def ppid(host):
    with open("/proc/%d/stat" % host) as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


LISTER = ('for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = $$ ] && continue; '
          '[ "$p" = "$PPID" ] && continue; '
          'read -r c < "$d/comm" 2>/dev/null && echo "$p $c"; done')


def others(c, ignore=()):
    """The names of the processes of the container but PID 1, the lister and
    its keeper, and those named in ignore; polled (bounded) for the ones that
    are dying."""
    t0 = time.monotonic()
    while True:
        r = c.run(LISTER, timeout=30)
        left = [l for l in r.stdout.decode().splitlines()
                if not l.startswith("1 ") and l.split()[1] not in ignore]
        if not left or ms_since(t0) > AT_ONCE_MS:
            break
        time.sleep(0.1)
    return " ".join(sorted(l.split()[1] for l in left)) or "none"


# --- 1. memory: the OOM killer takes the command ------------------------------------
def case_oom(c, a):
    r = c.run("cat /proc/self/oom_score_adj /proc/1/oom_score_adj; echo 0 > /proc/self/oom_score_adj",
              timeout=30)
    say("oom_score_adj", js(r.stdout.decode()), "lowering:", js(r.stderr.decode().split(": ")[-1]))
    # The bystander sleeps until the test ends it (a cancel, once the hog is
    # gone): it is there, small, however long the hog takes to be killed.
    c.exec("memhog --sleep 1000", id="bystander")
    c.wait("bystander", timeout=30, until=lambda r: r.pid is not None)
    t0 = time.monotonic()
    hog = c.run("memhog 128", id="hog", timeout=90)
    note("hog's exit event %d ms after its exec" % ms_since(t0))
    say("hog", js(hog.stdout.decode()), exit_fields(hog))
    say("bystander running after the hog:", "no" if c.results["bystander"].done else "yes")
    c.cancel("bystander")
    by = c.wait("bystander", timeout=90)
    say("bystander", exit_fields(by))
    nx = c.run("echo next", id="next", timeout=30)
    say("next", js(nx.stdout.decode()), exit_fields(nx))
    say("serve status", c.close())


# --- 2. a keeper lost: every process of its command ends ----------------------------
def case_keeper_lost(c, a):
    # The bystander sleeps until the test ends it (a cancel, at the end).
    c.exec("memhog --sleep 1000", id="bystander")
    c.exec("setsid sleep 1000 & setsid sh -c 'sleep 1000' & echo ready; sleep 1000", id="k")
    k = c.wait("k", timeout=30, until=lambda r: r.stdout)
    c.wait("bystander", timeout=30, until=lambda r: r.pid is not None)
    pids = host_pids(a.name)
    keeper = ppid(pids[k.pid])
    os.kill(keeper, signal.SIGKILL)
    t0 = time.monotonic()
    k = c.wait("k", timeout=90)
    ms = ms_since(t0)
    note("exit event %d ms after SIGKILL of the keeper (host pid %d)" % (ms, keeper))
    say("k", exit_fields(k))
    say("exit event %s:" % AT_ONCE, within(ms, AT_ONCE_MS))
    # the bystander: memhog and its keeper (a turninit)
    say("left of k", others(c, ignore=("memhog", "turninit")))
    say("bystander running after that:", "no" if c.results["bystander"].done else "yes")
    c.cancel("bystander")
    by = c.wait("bystander", timeout=90)
    say("bystander", exit_fields(by))
    say("serve status", c.close())


def case_keeper_stopped(c, a):
    """The keeper is stopped from the host (SIGSTOP): the timeout still ends
    the command, because a cancel sends the keeper SIGCONT with SIGTERM. The
    timeout is 10 s: the keeper is stopped well before it, also on a loaded
    machine (a note says when); the sleep ends only by the timeout."""
    t0 = time.monotonic()
    c.exec("echo ready; sleep 1000", id="s", timeout_s=10)
    s = c.wait("s", timeout=60, until=lambda r: r.stdout)
    keeper = ppid(host_pids(a.name)[s.pid])
    os.kill(keeper, signal.SIGSTOP)
    note("keeper stopped %d ms after the exec (its timeout: 10 s)" % ms_since(t0))
    t0 = time.monotonic()
    s = c.wait("s", timeout=90)
    note("exit event %d ms after SIGSTOP of the keeper" % ms_since(t0))
    say("s", exit_fields(s), AT_ONCE + ":", within(ms_since(t0), AT_ONCE_MS))
    say("serve status", c.close())


# --- 3. the audit log fails ---------------------------------------------------------
def run_until_refused(c, most=400):
    """echo N until an exec is refused; (execs run, the error message)."""
    for n in range(most):
        r = c.run("echo %d" % n, id="e%d" % n, timeout=30)
        if r.error is not None:
            return n, r.error["message"]
    return most, None


def case_audit_full(c, a):
    # The long command runs until the test, once the log is full, puts the
    # file it waits for into its /tmp (from the host: no exec is taken then).
    c.exec("echo started; until [ -e /tmp/audit-full-go ]; do sleep 0.1; done; echo still here", id="long")
    long = c.wait("long", timeout=30, until=lambda r: r.stdout)
    n, msg = run_until_refused(c)
    note("%d execs before the log's file system was full" % n)
    say("refused once full:", js(msg))
    say("long running then:", "no" if long.done else "yes")
    with open("/proc/%d/root/tmp/audit-full-go" % host_pids(a.name)[long.pid], "w"):
        pass
    r = c.wait("long", timeout=90)
    say("running command", js(r.stdout.decode()), exit_fields(r))
    r = c.run("echo after", id="after", timeout=30)
    say("after", "error " + js(r.error["message"]) if r.error else "ran")
    say("serve status", c.close())


def case_audit_fd_closed(c, a):
    r = c.run("echo one", id="one", timeout=30)
    say("one", js(r.stdout.decode()), exit_fields(r))
    os.close(a.audit_read)   # the collector goes away
    n, msg = run_until_refused(c, 5)
    say("refused at once:", "yes" if n == 0 else "after %d" % n, js(msg))
    say("serve status", c.close())


# --- 4. file descriptors run out ----------------------------------------------------
def cpu_ms(host):
    """utime + stime of a process, in ms (proc(5): fields 14 and 15, in ticks)."""
    with open("/proc/%d/stat" % host) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) * 1000 // os.sysconf("SC_CLK_TCK")


def case_nofile(c, a):
    """70 connections, each with a command, against RLIMIT_NOFILE 64: more
    than turninit can hold (a connection takes one fd, a command four)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not os.path.exists(a.socket):
        time.sleep(0.05)
    pid1 = sv.host_pid(a.name)
    cpu0, t0 = cpu_ms(pid1), time.monotonic()
    conns, started, errors = [], 0, {}
    for i in range(70):
        x = sv.connect_as(a.socket, 1000)
        conns.append(x)
        try:
            x.exec("sleep 2", id="s")
        except OSError:
            pass   # refused and closed at once: its error event is still to read
    for x in conns:
        try:
            r = x.wait("s", timeout=60)
        except Closed:
            r = None
        msgs = [e["message"] for e in x.errors]
        if r is not None and r.exit is not None:
            started += 1
        elif msgs:
            errors[msgs[0]] = errors.get(msgs[0], 0) + 1
        else:
            errors["nothing"] = errors.get("nothing", 0) + 1
        x.sock.close()
    cpu = cpu_ms(pid1) - cpu0
    note("70 connections: %d ran; errors %s; turninit used %d ms of CPU in %d ms"
         % (started, js(errors), cpu, ms_since(t0)))
    say("every connection answered:", "yes" if "nothing" not in errors else "no")
    say("some ran:", "yes" if started > 0 else "no")
    say("errors name the limit:", "yes" if errors and all("RLIMIT_NOFILE" in m for m in errors) else js(errors))
    say("turninit did not spin:", "yes" if cpu < 1000 else "no (%d ms of CPU)" % cpu)
    x = sv.connect_as(a.socket, 1000)
    r = x.run("echo fresh", id="f", timeout=30)
    say("afterwards", js(r.stdout.decode()), exit_fields(r))


def case_nofile_keepers(c, a):
    """serve with concurrency 64 and RLIMIT_NOFILE 40: a burst of 30 execs,
    each a new slot whose keeper takes a socket pair and a pipe, more than
    turninit can hold beside the commands' pipes. Every exec is answered;
    each that does not fit gets the one line that names the limit, whether
    its pipes or its keeper's ran out; the ones that ran end at a cancel,
    and the next command runs."""
    ids = ["n%d" % i for i in range(30)]
    for i in ids:
        c.exec("echo up; sleep 1000", id=i)
    ran, errors = [], {}
    for i in ids:
        r = c.wait(i, timeout=AT_ONCE_MS / 1000, until=lambda r: r.stdout or r.error is not None)
        if r.error is not None:
            m = r.error["message"]
            errors[m] = errors.get(m, 0) + 1
        else:
            ran.append(i)
    note("30 execs: %d ran; errors %s" % (len(ran), js(errors)))
    say("some ran:", "yes" if ran else "no")
    say("some refused:", "yes" if errors else "no")
    say("errors name the limit:", "yes" if all(
        m.startswith("exec: turninit has no file descriptor to spare (RLIMIT_NOFILE): ") for m in errors)
        else js(errors))
    for i in ran:
        c.cancel(i)
    ends = [exit_fields(c.wait(i, timeout=AT_ONCE_MS / 1000)) for i in ran]
    say("each that ran ends at its cancel:", "yes" if all("signal=15" in e for e in ends) else js(ends))
    r = c.run("echo fresh", id="fresh", timeout=AT_ONCE_MS / 1000)
    say("afterwards", js(r.stdout.decode()), exit_fields(r))
    say("serve status", c.close())


# --- 5. the container killed mid-command --------------------------------------------
def case_killed(c, a):
    c.exec("echo begun; sleep 1000", id="k")
    c.wait("k", timeout=30, until=lambda r: r.stdout)
    sv.engine("kill", "--signal", "KILL", a.name, check=True)
    try:
        c.drain(30)
    except Closed:
        pass
    k = c.results["k"]
    say("client saw", js(k.stdout.decode()), "exit event:", "yes" if k.exit else "no")
    say("serve status", c.proc.wait(30))


# --- 6. commands that stop themselves or ignore SIGTERM -----------------------------
def stopped_seen(c, a, id):
    """Wait (bounded) until command id is stopped (state T), seen from the
    host: SIGCONT must be what wakes it."""
    t0 = time.monotonic()
    pid = host_pids(a.name)[c.results[id].pid]
    while ms_since(t0) < AT_ONCE_MS:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "T":
                    break
        except OSError:
            break
        time.sleep(0.02)
    note("%s seen stopped after %d ms" % (id, ms_since(t0)))


def case_stopped(c, a):
    # The timeouts are 10 s: a command has stopped itself, or set its trap,
    # well before, also on a loaded machine. The bounds above them only catch
    # a hang (which the timeout and the grace tell apart by the signal).
    for how in ("timeout", "cancel"):
        t0 = time.monotonic()
        if how == "timeout":
            r = c.run("echo stopping; kill -STOP $$; echo resumed", id="st", timeout_s=10, timeout=90)
        else:
            c.exec("echo stopping; kill -STOP $$; echo resumed", id="sc")
            c.wait("sc", timeout=30, until=lambda r: r.stdout)
            stopped_seen(c, a, "sc")
            t0 = time.monotonic()
            c.cancel("sc")
            r = c.wait("sc", timeout=90)
        ms = ms_since(t0)
        note("%s of a stopped command: exit event after %d ms" % (how, ms))
        say(how, "stopped", js(r.stdout.decode()), exit_fields(r), AT_ONCE + ":", within(ms, AT_ONCE_MS))
    for how in ("timeout", "cancel"):
        cmd = "trap '' TERM; echo ignoring; while :; do sleep 0.2; done"
        t0 = time.monotonic()
        if how == "timeout":
            r = c.run(cmd, id="it", timeout_s=10, timeout=150)
        else:
            c.exec(cmd, id="ic")
            c.wait("ic", timeout=30, until=lambda r: r.stdout)
            t0 = time.monotonic()
            c.cancel("ic")
            r = c.wait("ic", timeout=90)
        ms = ms_since(t0)
        # not before the timeout and the 5 s grace (or the grace alone)
        lo, hi = (14500, 15000 + AT_ONCE_MS) if how == "timeout" else (4500, AT_ONCE_MS)
        note("%s of a command that ignores SIGTERM: exit event after %d ms" % (how, ms))
        say(how, "ignoring", exit_fields(r), "after the grace:", "yes" if lo <= ms <= hi else "no")
    say("left", others(c))
    say("serve status", c.close())


# --- 7. half a line, then gone ------------------------------------------------------
def case_half_line(c, a):
    x = sv.connect_as(a.socket, 1000)
    x.send_raw(b'{"op":"exec","id":"half","command":"echo RAN')
    x.sock.close()
    y = sv.connect_as(a.socket, 1000)
    r = y.run("echo still serving; ls /tmp", id="n", timeout=30)
    say("next connection", js(r.stdout.decode()), exit_fields(r))


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}


def audit_log(path, fields):
    """faults.py auditlog FILE [ID.KEY...]: whether every line of the audit log
    FILE is one whole JSON object, its events in order (exec and exit with
    their id), and the value of KEY in ID's exit line for each ID.KEY."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    say("ends with a newline:", "yes" if data.endswith(b"\n") else "no")
    evs, bad = [], 0
    for l in lines[:-1] if data.endswith(b"\n") else lines:
        try:
            evs.append(json.loads(l))
        except ValueError:
            bad += 1
    say("lines that are not JSON:", bad)
    say("events", " ".join(e.get("event", "?") + (":" + e["id"] if e.get("id") else "") for e in evs))
    for f in fields:
        id, key = f.split(".", 1)
        got = [e.get(key) for e in evs if e.get("event") == "exit" and e.get("id") == id]
        say("%s %s" % (f, js(got[0]) if got else "no exit line"))


class Args:
    name = None
    socket = None
    audit_read = None


def main(argv):
    a = Args()
    if argv[0] == "auditlog":
        return audit_log(argv[1], argv[2:])
    case, server = sv.parse_args(argv, a)
    pass_fds = ()
    if case == "audit_fd_closed":
        r, w = os.pipe()
        # both ends above 3 first: fd 3 may be one of them
        a.audit_read = fcntl.fcntl(r, fcntl.F_DUPFD_CLOEXEC, 10)
        high = fcntl.fcntl(w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(r)
        os.close(w)
        os.dup2(high, 3)   # inheritable
        os.close(high)
        pass_fds = (3,)
    bg, c = None, None
    if a.socket:
        # listen mode: the server in the background; the case connects
        bg = subprocess.Popen(server, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not os.path.exists(a.socket) and time.monotonic() < deadline and bg.poll() is None:
            time.sleep(0.05)
    else:
        proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                pass_fds=pass_fds)
        if pass_fds:
            os.close(3)
        c = Client(proc.stdout.fileno(), proc.stdin.fileno(), proc=proc)
    try:
        sv.run_case(CASES[case], c, a)
    finally:
        if bg is not None:
            sv.engine("kill", "--signal", "TERM", a.name)
            try:
                bg.wait(30)
            except subprocess.TimeoutExpired:
                bg.kill()


if __name__ == "__main__":
    main(sys.argv[1:])
