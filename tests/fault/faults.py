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


def exit_fields(r):
    """exit_fields of tests/serve/cases.py, and lost/oom_killed when there."""
    s = sv.exit_fields(r)
    for k in ("lost", "oom_killed"):
        if r.exit is not None and k in r.exit:
            s += " %s=%s" % (k, js(r.exit[k]))
    return s


def host_pids(name):
    """{container pid: host pid} of every process of the container (NSpid)."""
    top = sv.host_pid(name)
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/status" % d) as f:
                ns = next((l.split()[1:] for l in f if l.startswith("NSpid:")), None)
        except OSError:
            continue
        if ns and len(ns) >= 2 and (int(d) == top or ns[-1] != ns[0]):
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
    its keeper, and those named in ignore; polled up to 2 s for the ones that
    are dying."""
    for _ in range(20):
        r = c.run(LISTER, timeout=30)
        left = [l for l in r.stdout.decode().splitlines()
                if not l.startswith("1 ") and l.split()[1] not in ignore]
        if not left:
            break
        time.sleep(0.1)
    return " ".join(sorted(l.split()[1] for l in left)) or "none"


# --- 1. memory: the OOM killer takes the command ------------------------------------
def case_oom(c, a):
    r = c.run("cat /proc/self/oom_score_adj /proc/1/oom_score_adj; echo 0 > /proc/self/oom_score_adj",
              timeout=30)
    say("oom_score_adj", js(r.stdout.decode()), "lowering:", js(r.stderr.decode().split(": ")[-1]))
    c.exec("memhog --sleep 3", id="bystander")
    c.wait("bystander", timeout=30, until=lambda r: r.pid is not None)
    t0 = time.monotonic()
    hog = c.run("memhog 128", id="hog", timeout=60)
    note("hog's exit event %d ms after its exec" % ms_since(t0))
    say("hog", js(hog.stdout.decode()), exit_fields(hog))
    by = c.wait("bystander", timeout=30)
    say("bystander", exit_fields(by))
    nx = c.run("echo next", id="next", timeout=30)
    say("next", js(nx.stdout.decode()), exit_fields(nx))
    say("serve status", c.close())


# --- 2. a keeper lost: every process of its command ends ----------------------------
def case_keeper_lost(c, a):
    c.exec("memhog --sleep 3", id="bystander")
    c.exec("setsid sleep 100 & setsid sh -c 'sleep 100' & echo ready; sleep 100", id="k")
    k = c.wait("k", timeout=30, until=lambda r: r.stdout)
    c.wait("bystander", timeout=30, until=lambda r: r.pid is not None)
    pids = host_pids(a.name)
    keeper = ppid(pids[k.pid])
    os.kill(keeper, signal.SIGKILL)
    t0 = time.monotonic()
    k = c.wait("k", timeout=30)
    ms = ms_since(t0)
    note("exit event %d ms after SIGKILL of the keeper (host pid %d)" % (ms, keeper))
    say("k", exit_fields(k))
    say("exit event within 2 s:", within(ms, 2000))
    # the bystander: memhog and its keeper (a turninit)
    say("left of k", others(c, ignore=("memhog", "turninit")))
    by = c.wait("bystander", timeout=30)
    say("bystander", exit_fields(by))
    say("serve status", c.close())


def case_keeper_stopped(c, a):
    """The keeper is stopped from the host (SIGSTOP): the timeout still ends
    the command, because a cancel sends the keeper SIGCONT with SIGTERM."""
    c.exec("echo ready; sleep 100", id="s", timeout_s=2)
    s = c.wait("s", timeout=30, until=lambda r: r.stdout)
    keeper = ppid(host_pids(a.name)[s.pid])
    os.kill(keeper, signal.SIGSTOP)
    t0 = time.monotonic()
    s = c.wait("s", timeout=30)
    note("exit event %d ms after SIGSTOP of the keeper" % ms_since(t0))
    say("s", exit_fields(s), "within 4 s:", within(ms_since(t0), 4000))
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
    c.exec("echo started; sleep 1; echo still here", id="long")
    c.wait("long", timeout=30, until=lambda r: r.stdout)
    n, msg = run_until_refused(c)
    note("%d execs before the log's file system was full" % n)
    say("refused once full:", js(msg))
    r = c.wait("long", timeout=30)
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


# --- 5. the container killed mid-command --------------------------------------------
def case_killed(c, a):
    c.exec("echo begun; sleep 100", id="k")
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
def case_stopped(c, a):
    for how in ("timeout", "cancel"):
        t0 = time.monotonic()
        if how == "timeout":
            r = c.run("echo stopping; kill -STOP $$; echo resumed", id="st", timeout_s=1, timeout=30)
        else:
            c.exec("echo stopping; kill -STOP $$; echo resumed", id="sc")
            c.wait("sc", timeout=30, until=lambda r: r.stdout)
            time.sleep(0.2)   # let it stop: SIGCONT must be what wakes it
            t0 = time.monotonic()
            c.cancel("sc")
            r = c.wait("sc", timeout=30)
        ms = ms_since(t0)
        note("%s of a stopped command: exit event after %d ms" % (how, ms))
        say(how, "stopped", js(r.stdout.decode()), exit_fields(r), "within 2.5 s:", within(ms, 2500))
    for how in ("timeout", "cancel"):
        cmd = "trap '' TERM; echo ignoring; while :; do sleep 0.2; done"
        t0 = time.monotonic()
        if how == "timeout":
            r = c.run(cmd, id="it", timeout_s=1, timeout=30)
        else:
            c.exec(cmd, id="ic")
            c.wait("ic", timeout=30, until=lambda r: r.stdout)
            t0 = time.monotonic()
            c.cancel("ic")
            r = c.wait("ic", timeout=30)
        ms = ms_since(t0)
        lo, hi = (5500, 8000) if how == "timeout" else (4500, 7000)
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
