#!/usr/bin/env python3
"""cases.py - the scenarios of tests/integration/serve.sh, driven through the
reference client (client.py). Standard library only; runs on the host.

    cases.py CASE [--name CONTAINER] -- SERVER_ARGV...   serve mode: starts
        SERVER_ARGV (`podman run -i ... IMAGE serve`) on pipes
    cases.py CASE [--name CONTAINER] --socket PATH       listen mode

The container CONTAINER is inspected, signalled and stopped with the client
ITEST_ENGINE_BIN names (tests/integration/lib.sh: podman, or the docker client
under ITEST_ENGINE=docker; default podman).

Each case prints facts, one a line, on stdout; serve.sh compares them with the
exact text it expects. Measured times go to stderr as "# ..." lines (the bounds
themselves are facts on stdout). Every event seen is also checked against the
protocol's shapes (docs/protocol.md): a malformed or non-compact event line
adds a "malformed: ..." line, which no expectation contains.
"""
import base64
import fcntl
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import termios
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client import Client, Closed, Result  # noqa: E402

MiB = 1 << 20
PODMAN_TIMEOUT = 60
# What must happen "at once" is bounded by AT_ONCE_MS, which a loaded machine
# (a load average of 8 on 2 cores) does not reach, and the time seen is a note:
# a fact never depends on the machine's speed. What the bound tells apart is
# what would otherwise wait for a sleep of 1000 s (or for ever).
AT_ONCE_MS = 60000
AT_ONCE = "within %d s" % (AT_ONCE_MS // 1000)
ENGINE = os.environ.get("ITEST_ENGINE_BIN") or "podman"
ENGINE_NAME = os.path.basename(ENGINE)


def say(*words):
    print(*words, flush=True)


def note(text):
    print("# " + text, file=sys.stderr, flush=True)


def js(v):
    return json.dumps(v)


def exit_fields(r):
    """The exit event without id and duration_ms, as compact JSON; or the error."""
    if r.error is not None:
        return "error " + js(r.error["message"])
    if r.exit is None:
        return "no exit event"
    return " ".join("%s=%s" % (k, js(r.exit[k])) for k in ("code", "signal", "timed_out", "truncated"))


def within(ms, limit_ms):
    return "yes" if ms <= limit_ms else "no"


def ms_since(t0):
    return int((time.monotonic() - t0) * 1000)


def engine(*args, check=False):
    """The container engine's client (ENGINE) with args; its stdout, stripped."""
    p = subprocess.run((ENGINE,) + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=PODMAN_TIMEOUT, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("%s %s: %s" % (ENGINE_NAME, " ".join(args), p.stderr.strip()))
    return p.stdout.strip()


def host_pid(name):
    return int(engine("inspect", "--format", "{{.State.Pid}}", name, check=True))


def pid1_figures(pid):
    """turninit's open fd count and VmRSS (kB), read from the host (root)."""
    fds = len(os.listdir("/proc/%d/fd" % pid))
    with open("/proc/%d/status" % pid) as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    return fds, rss


def pattern(tag, stream):
    """1 MiB: 65536 lines of 16 bytes, "cT:o:1000000000\\n" and up (T < 10)."""
    p = ("c%d:%s:" % (tag, stream[0])).encode()
    return b"".join(p + b"%d\n" % n for n in range(1000000000, 1000065536))


def pattern_cmd(tag, stream):
    sed = "sed 's/^/c%d:%s:/'" % (tag, stream[0])
    return "seq 1000000000 1000065535 | " + sed + (" >&2" if stream == "stderr" else "")


def first_diff(got, want):
    n = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return "first difference at byte %d of %d (want %d)" % (n, len(got), len(want))


# --- shapes of the events (docs/protocol.md) ---------------------------------------
SHAPES = {
    "started": {"pid": int},
    "output": {"stream": str, "data": str},
    "exit": {"code": (int, type(None)), "signal": (int, type(None)), "timed_out": bool,
             "truncated": bool, "duration_ms": int},
    "error": {"message": str},
}
# Keys an event has only when they are true (docs/protocol.md, "exit").
OPTIONAL = {"exit": ("lost", "oom_killed")}
# Keys an event has only with an audit log: a string of 64 hex digits.
HEADS = {"exit": ("audit_head",)}


def malformed(line):
    try:
        ev = json.loads(line)
    except ValueError:
        return "not JSON"
    if not isinstance(ev, dict) or ev.get("event") not in SHAPES:
        return "no known event"
    if json.dumps(ev, separators=(",", ":"), ensure_ascii=False).encode() + b"\n" != line:
        return "not compact JSON"
    shape = SHAPES[ev["event"]]
    extra = set(ev) - {"event", "id"} - set(shape)
    heads = extra & set(HEADS.get(ev["event"], ()))
    extra -= heads
    if not set(shape) <= set(ev) or not extra <= set(OPTIONAL.get(ev["event"], ())):
        return "keys %s" % sorted(ev)
    if any(not (isinstance(ev[k], str) and re.fullmatch("[0-9a-f]{64}", ev[k])) for k in heads):
        return "an audit head that is not 64 hex digits: %s" % [ev[k] for k in heads]
    if any(ev[k] is not True for k in extra):
        return "an optional key that is not true: %s" % sorted(extra)
    for k, t in shape.items():
        if not isinstance(ev[k], t) or (t is int and isinstance(ev[k], bool)):
            return "%s is %s" % (k, js(ev[k]))
    if ev["id"] is not None and not isinstance(ev["id"], str):
        return "id is %s" % js(ev["id"])
    if ev["id"] is None and ev["event"] != "error":
        return "id null"
    if ev["event"] == "output":
        if ev["stream"] not in ("stdout", "stderr"):
            return "stream %s" % js(ev["stream"])
        try:
            raw = base64.b64decode(ev["data"], validate=True)
        except ValueError:
            return "data is not base64"
        if not 0 < len(raw) <= 65536:
            return "a chunk of %d bytes" % len(raw)
    if ev["event"] == "exit":
        if (ev["code"] is None) == (ev["signal"] is None):
            return "code and signal both %s" % ("null" if ev["code"] is None else "set")
        if ev["duration_ms"] < 0:
            return "negative duration"
    if ev["event"] == "started" and ev["pid"] < 2:
        return "pid %d" % ev["pid"]
    return None


def check_log(c):
    for d, line in c.log:
        if d == "<-":
            why = malformed(line)
            if why:
                say("malformed: %s: %s" % (why, line[:200]))


# --- serve mode ------------------------------------------------------------------------
def case_basics(c, a):
    r = c.run("echo hi; echo err >&2", timeout=30)
    say("kinds", " ".join(e["event"] for e in r.events))
    say("stdout", js(r.stdout.decode()), "stderr", js(r.stderr.decode()))
    say("exit", exit_fields(r))
    r = c.run("echo $$; true", timeout=30)
    say("started pid is $$:", "yes" if r.stdout == b"%d\n" % r.pid else "no (%s)" % r.stdout)
    for cmd in ("exit 3", "kill -TERM $$", "no-such-program-xyz"):
        r = c.run(cmd, timeout=30)
        say(js(cmd), exit_fields(r))
    say("127 stderr names it:", "yes" if b"no-such-program-xyz" in r.stderr else "no")
    r = c.run(argv=["printf", "[%s]", "a b", "$HOME", ";id"], timeout=30)
    say("argv", js(r.stdout.decode()), exit_fields(r))
    r = c.run("pwd; cd; pwd", cwd="/tmp", timeout=30)
    say("cwd", js(r.stdout.decode()))
    r = c.run("pwd", timeout=30)
    say("default cwd", js(r.stdout.decode()))
    env = {"TZ": "UTC", "GH_TOKEN": "x", "LD_PRELOAD": "/x.so", "BASH_ENV": "/etc/x",
           "HOME": "/root", "PATH": "/evil", "SHELLOPTS": "xtrace", "BASH_FUNC_ls%%": "() { :; }"}
    r = c.run("env", env=env, timeout=30)
    say("env", js(sorted(r.stdout.decode().splitlines())))
    r = c.run("env", timeout=30)
    say("env without env", js(sorted(r.stdout.decode().splitlines())))
    # the same id again once it has ended
    for n in (1, 2):
        r = c.run("echo again %d" % n, id="same", timeout=30)
        say("reused id", js(r.stdout.decode()), exit_fields(r))


def case_setsid_timeout(c, a):
    t0 = time.monotonic()
    r = c.run("setsid sh -c 'while :; do echo spam; sleep 0.1; done' & sleep 1000",
              timeout_s=1, timeout=90)
    ms = ms_since(t0)
    note("exit event %d ms after the request (duration_ms %s)" % (ms, r.exit and r.exit["duration_ms"]))
    say("exit", exit_fields(r))
    say("exit event %s:" % AT_ONCE, within(ms, AT_ONCE_MS))
    lines = set(r.stdout.decode().splitlines())
    say("stdout is spam lines only:", "yes" if lines <= {"spam"} and r.stdout.endswith(b"spam\n") else js(sorted(lines)[:5]))
    say("stderr", js(r.stderr.decode()))
    # Every process of the container but turninit and the lister itself (bash,
    # reading with builtins only): nothing of the spammer may be left.
    # The lister's parent is skipped too when it is not turninit itself (a per-
    # command helper process of turninit's, if it has one).
    lister = ('read -r _ _ _ pp _ < /proc/$$/stat; '
              'for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = $$ ] && continue; '
              '[ "$p" = "$pp" ] && [ "$p" != 1 ] && continue; '
              'read -r c < "$d/comm" 2>/dev/null && echo "$p $c"; done')
    t1 = time.monotonic()
    attempt = 0
    while True:
        attempt += 1
        r2 = c.run(lister, timeout=30)
        if r2.stdout == b"1 turninit\n" or ms_since(t1) > AT_ONCE_MS:
            break
        time.sleep(0.1)
    note("process listing after %d attempt(s), %d ms: %s" % (attempt, ms_since(t1), r2.stdout.decode().split("\n")))
    say("processes left", js(r2.stdout.decode()))
    time.sleep(0.5)
    say("no output after the exit event:", "yes" if r.events[-1]["event"] == "exit" else "no")


def cancel_when(c, cmd, id, until):
    """exec cmd as id, cancel it once until(result) holds; the result and the
    ms from the cancel to its exit event."""
    c.exec(cmd, id=id)
    c.wait(id, timeout=60, until=until)
    t0 = time.monotonic()
    c.cancel(id)
    r = c.wait(id, timeout=90)
    return r, ms_since(t0)


def case_setsid_trap_term(c, a):
    """Timeout and cancel send SIGTERM at once to a child that left the
    command's process group and session with setsid, not only SIGKILL after
    the grace period: its TERM trap prints a line and exits 3. The main shell
    traps TERM too (once: as a member of the group, not again as a descendant)
    and waits until that child is gone, so the exit event comes as soon
    as the child is done (at the timeout, 10 s after the request: time enough
    for both traps to be set on a loaded machine; at once for cancel, sent
    once the child said ready); were the child not sent SIGTERM, only the
    SIGKILL after the 5 s grace would end it, with no line. What the child
    leaves running (a sleep of 1000 s) ends with the command."""
    cmd = ("trap : TERM; "
           "setsid bash -c 'trap \"echo setsid child got TERM; exit 3\" TERM; echo ready; sleep 1000 & wait' & "
           "c=$!; while kill -0 $c 2>/dev/null; do wait $c; done; echo main done")
    t0 = time.monotonic()
    r = c.run(cmd, timeout_s=10, timeout=90)
    ms = ms_since(t0)
    note("timeout: exit event %d ms after the request (timeout_s 10)" % ms)
    say("timeout", js(r.stdout.decode()), exit_fields(r))
    say("timeout exit event %s:" % AT_ONCE, within(ms, AT_ONCE_MS))
    r, ms = cancel_when(c, cmd, "trap-cancel", lambda r: r.stdout)
    note("cancel: exit event %d ms after the cancel" % ms)
    say("cancel", js(r.stdout.decode()), exit_fields(r))
    say("cancel exit event %s:" % AT_ONCE, within(ms, AT_ONCE_MS))


def case_left_running(c, a):
    """What a command leaves running, in its process group or out of it with
    setsid, ends with it: the exit event comes at once, not when they end."""
    t0 = time.monotonic()
    r = c.run("sleep 1000 & setsid sleep 1000 & echo bye", timeout=90)
    ms = ms_since(t0)
    note("exit event %d ms after the request" % ms)
    say("left running", js(r.stdout.decode()), exit_fields(r))
    say("exit event %s:" % AT_ONCE, within(ms, AT_ONCE_MS))
    r = c.run("for d in /proc/[0-9]*; do read -r c < $d/comm 2>/dev/null && "
              "[ \"$c\" = sleep ] && echo \"${d#/proc/} $c\"; done; true", timeout=30)
    say("sleeps left", js(r.stdout.decode()))


def case_stdin(c, a):
    t0 = time.monotonic()
    r = c.run("cat", timeout=90)
    ms = ms_since(t0)
    note("cat without stdin: %d ms" % ms)
    say("cat without stdin", exit_fields(r), "stdout", js(r.stdout.decode()), "at once:", within(ms, AT_ONCE_MS))
    r = c.run("wc -c; cat", timeout=30)
    say("stdin is /dev/null", js(r.stdout.decode().split()))
    data = b"hello\x00\xff\n"
    r = c.run("cat", stdin=data, timeout=30)
    say("stdin bytes arrive:", "yes" if r.stdout == data else js(bytes(r.stdout).hex()), exit_fields(r))
    big = os.urandom(300000)
    r = c.run("cat", stdin=big, timeout=60)
    say("300000 stdin bytes arrive:", "yes" if r.stdout == big else first_diff(r.stdout, big))
    r = c.run("cat", stdin=b"", timeout=30)
    say("empty stdin", exit_fields(r), js(r.stdout.decode()))


def case_parallel(c, a):
    t0 = time.monotonic()
    ids = [c.exec(pattern_cmd(i, "stdout") + " & " + pattern_cmd(i, "stderr") + "; wait", id="p%d" % i)
           for i in range(8)]
    running = 0
    while not all(c.results[i].done for i in ids):
        c.event(120)
        running = max(running, sum(1 for i in ids if c.results[i].pid and not c.results[i].done))
    note("8 x (1 MiB stdout + 1 MiB stderr) in %d ms; at most %d running at once" % (ms_since(t0), running))
    say("all 8 ran at once:", "yes" if running == 8 else "no (%d)" % running)
    for n, i in enumerate(ids):
        r = c.results[i]
        out = "ok" if r.stdout == pattern(n, "stdout") else first_diff(r.stdout, pattern(n, "stdout"))
        err = "ok" if r.stderr == pattern(n, "stderr") else first_diff(r.stderr, pattern(n, "stderr"))
        say(i, "stdout", out, "stderr", err, exit_fields(r))


def case_truncated(c, a):
    chunk = b"0123456789abcde\n"  # `yes 0123456789abcde` prints 16-byte lines
    r = c.run("yes 0123456789abcde | head -c 8388608; exit 3", timeout=120)
    n = len(r.stdout) + len(r.stderr)
    note("delivered %d bytes" % n)
    say("exit", exit_fields(r))
    say("delivered", n, "at most 1 MiB:", "yes" if n <= MiB else "no")
    say("prefix of the output:", "yes" if r.stdout == (chunk * (MiB // 16))[:len(r.stdout)] else "no")
    # both streams count together
    r = c.run("yes 0123456789abcde | head -c 786432; yes 0123456789abcde | head -c 786432 >&2",
              timeout=60)
    say("stdout+stderr", len(r.stdout), len(r.stderr), exit_fields(r))
    r = c.run("yes 0123456789abcde | head -c 1048576", timeout=60)
    say("exactly the limit", len(r.stdout), exit_fields(r))
    r = c.run("echo still works", timeout=30)
    say("next", js(r.stdout.decode()), exit_fields(r))


def case_timeout_capped(c, a):
    t0 = time.monotonic()
    r = c.run("sleep 1000", timeout_s=100, timeout=90)
    ms = ms_since(t0)
    note("timeout_s 100 under limits.timeout_s 2: exit event after %d ms (duration_ms %s)"
         % (ms, r.exit and r.exit["duration_ms"]))
    # not before 2 s; well before the 100 s asked (however slow the machine)
    say("exit", exit_fields(r), "capped at 2 s:", "yes" if 1800 <= ms <= AT_ONCE_MS else "no")


def case_cancel(c, a):
    r, ms = cancel_when(c, "sleep 1000", "s1", lambda r: r.pid is not None)
    note("cancel of sleep 1000: exit event after %d ms" % ms)
    say("cancel sleep", exit_fields(r), AT_ONCE + ":", within(ms, AT_ONCE_MS))
    # A command that ignores SIGTERM (so do its children: ignored stays ignored
    # across exec) gets SIGKILL after the 5 s grace.
    r, ms = cancel_when(c, "trap '' TERM; echo ready; while :; do sleep 0.1; done", "s2",
                        lambda r: r.stdout)
    note("cancel of a TERM-ignoring loop: exit event after %d ms" % ms)
    say("cancel TERM-proof", exit_fields(r), "after the 5 s grace:", "yes" if 4500 <= ms <= AT_ONCE_MS else "no")
    # signal: INT reaches the group; the trap runs
    id = c.exec("trap 'echo got INT; exit 5' INT; echo ready; sleep 100 & wait", id="s3")
    c.wait(id, timeout=30, until=lambda r: r.stdout)
    c.signal(id, "INT")
    r = c.wait(id, timeout=30)
    say("signal INT", js(r.stdout.decode()), exit_fields(r))
    id = c.exec("echo ready; sleep 100", id="s4")
    c.wait(id, timeout=30, until=lambda r: r.stdout)
    c.signal(id, "KILL")
    r = c.wait(id, timeout=30)
    say("signal KILL", exit_fields(r))
    # The command waits (in short waits, which the signal interrupts) until
    # its trap has run: however late the signal comes, it is waited for.
    id = c.exec("trap 'echo got USR1; got=1' USR1; echo ready; "
                "until [ -n \"$got\" ]; do sleep 0.1 & wait; done; echo done", id="s5")
    c.wait(id, timeout=30, until=lambda r: r.stdout)
    c.signal(id, "USR1")
    r = c.wait(id, timeout=30)
    say("signal USR1", js(r.stdout.decode()), exit_fields(r))


def expect_error(c, line, id):
    """Send a raw line; the next event must be one error event."""
    n = len(c.errors)
    c.send_raw(line)
    ev = c.event(30)
    if ev["event"] != "error" or len(c.errors) != n + 1:
        return "no error event but %s" % js(ev)[:200]
    note("%s -> %s" % (line[:100].decode(errors="replace").rstrip("\n"), js(ev)[:300]))
    if ev["id"] != id:
        return "error with id %s (want %s)" % (js(ev["id"]), js(id))
    return "error" if ev["message"] else "error with an empty message"


BAD_LINES = [
    # (name, line, id the error event carries)
    ("invalid JSON", b'{"op":"exec","id":"b1","command":"true"\n', None),
    ("not an object", b'["exec"]\n', None),
    ("unknown op", b'{"op":"launch","id":"b2","command":"true"}\n', "b2"),
    ("no op", b'{"id":"b3","command":"true"}\n', "b3"),
    ("unknown field", b'{"op":"exec","id":"b4","command":"true","colour":"red"}\n', "b4"),
    ("command not a string", b'{"op":"exec","id":"b5","command":42}\n', "b5"),
    ("command and argv", b'{"op":"exec","id":"b6","command":"true","argv":["true"]}\n', "b6"),
    ("neither command nor argv", b'{"op":"exec","id":"b7"}\n', "b7"),
    ("empty argv", b'{"op":"exec","id":"b8","argv":[]}\n', "b8"),
    ("argv not strings", b'{"op":"exec","id":"b9","argv":["echo",1]}\n', "b9"),
    ("id with a space", b'{"op":"exec","id":"bad id","command":"true"}\n', None),
    ("empty id", b'{"op":"exec","id":"","command":"true"}\n', None),
    ("id of 129 bytes", b'{"op":"exec","id":"' + b"i" * 129 + b'","command":"true"}\n', None),
    ("id a number", b'{"op":"exec","id":7,"command":"true"}\n', None),
    ("no id", b'{"op":"exec","command":"true"}\n', None),
    ("relative cwd", b'{"op":"exec","id":"b10","command":"true","cwd":"work"}\n', "b10"),
    ("missing cwd", b'{"op":"exec","id":"b11","command":"true","cwd":"/no/such/dir"}\n', "b11"),
    ("cwd a file", b'{"op":"exec","id":"b12","command":"true","cwd":"/etc/turninit/trusted.pub"}\n', "b12"),
    ("bad base64", b'{"op":"exec","id":"b13","command":"cat","stdin":"!!!"}\n', "b13"),
    ("timeout_s 0", b'{"op":"exec","id":"b14","command":"true","timeout_s":0}\n', "b14"),
    ("timeout_s 1.5", b'{"op":"exec","id":"b15","command":"true","timeout_s":1.5}\n', "b15"),
    ("timeout_s a string", b'{"op":"exec","id":"b16","command":"true","timeout_s":"5"}\n', "b16"),
    ("env value a number", b'{"op":"exec","id":"b17","command":"true","env":{"TZ":1}}\n', "b17"),
    ("env an array", b'{"op":"exec","id":"b18","command":"true","env":["TZ=UTC"]}\n', "b18"),
    ("duplicate key", b'{"op":"exec","id":"b19","command":"true","command":"false"}\n', None),
    ("cancel of no command", b'{"op":"cancel","id":"nosuch"}\n', "nosuch"),
    ("signal of no command", b'{"op":"signal","id":"nosuch","signal":"INT"}\n', "nosuch"),
    ("cancel with a field", b'{"op":"cancel","id":"b20","signal":"INT"}\n', "b20"),
]


def case_badlines(c, a):
    for name, line, id in BAD_LINES:
        say(name + ":", expect_error(c, line, id))
    # An empty line is no request: no event at all.
    c.send_raw(b"\n")
    try:
        say("empty line:", "event " + js(c.event(1)))
    except TimeoutError:
        say("empty line: no event")
    # duplicate running id; unknown signal names on a running command
    c.exec("sleep 100", id="d1")
    c.wait("d1", timeout=30, until=lambda r: r.pid is not None)
    for name, line in (("duplicate running id", b'{"op":"exec","id":"d1","command":"echo DUP"}\n'),
                       ("signal STOP", b'{"op":"signal","id":"d1","signal":"STOP"}\n'),
                       ("signal SIGINT", b'{"op":"signal","id":"d1","signal":"SIGINT"}\n'),
                       ("signal 2", b'{"op":"signal","id":"d1","signal":2}\n')):
        say(name + ":", expect_error(c, line, "d1"))
    c.cancel("d1")
    r = c.wait("d1", timeout=30)
    say("d1 after all that:", "started" if r.pid else "never started",
        "events", " ".join(e["event"] for e in r.events if e["event"] != "error"), exit_fields(r))
    # lines at the bound: 1048576 bytes before the newline pass, one more is refused
    head = b'{"op":"exec","id":"long","command":"cat","stdin":"'
    for size, want in ((1048576, "ran"), (1048577, "error")):
        k = (size - len(head) - 2) // 4 * 4  # base64 "AAAA" is 3 zero bytes
        line = head + b"A" * k + b'"' + b" " * (size - len(head) - k - 2) + b"}"
        c.results["long"] = Result("long")
        n = len(c.errors)
        c.send_raw(line + b"\n")
        r = c.wait("long", timeout=60, until=lambda r: len(c.errors) > n)
        got = "error" if r.error or len(c.errors) > n else "ran"
        if got == "ran":
            got += ", all stdin back" if r.stdout == bytes(k // 4 * 3) else ", %d bytes back" % len(r.stdout)
        say("line of %d bytes:" % size, got)
    # a 3 MiB line: refused once, and the stream resynchronises at its newline
    n = len(c.errors)
    c.send_raw(b'{"op":"exec","id":"huge","command":"' + b"x" * (3 * MiB) + b'"}\n')
    ev = c.event(60)
    say("line of 3 MiB:", ev["event"], "one error:", "yes" if len(c.errors) == n + 1 else "no")
    r = c.run("echo next works", timeout=30)
    say("next request", js(r.stdout.decode()), exit_fields(r))
    try:
        extra = c.event(1)
        say("unexpected event", js(extra)[:200])
    except TimeoutError:
        say("nothing else arrived")


def case_concurrency(c, a):
    """Past limits.concurrency (8) an exec waits for a slot: a signal to it is an
    error, a cancel takes it out (an error event answers it), and the next one
    starts when a running command ends."""
    ids = [c.exec("sleep 1000", id="k%d" % i) for i in range(8)]
    for i in ids:
        c.wait(i, timeout=30, until=lambda r: r.pid is not None)
    c.exec("echo NINTH", id="k9")
    c.exec("echo TENTH", id="k10")
    c.signal("k9", "TERM")
    ev = c.event(30)
    say("signal to a waiting exec:", ev["event"], js(ev.get("id")), js(ev.get("message")))
    c.exec("echo AGAIN", id="k9")
    ev = c.event(30)
    say("a duplicate of a waiting exec:", ev["event"], js(ev.get("id")), js(ev.get("message")))
    c.cancel("k10")
    ev = c.event(30)
    say("cancel of a waiting exec:", ev["event"], js(ev.get("id")), js(ev.get("message")))
    say("k9 started while 8 run:", "yes" if c.results["k9"].pid is not None else "no")
    c.cancel("k0")
    r = c.wait("k0", timeout=30)
    say("k0", exit_fields(r))
    r = c.wait("k9", timeout=30)
    say("k9 after a slot freed", js(r.stdout.decode()), exit_fields(r))
    c.exec("sleep 1000", id="k0")
    c.wait("k0", timeout=30, until=lambda r: r.pid is not None)
    c.exec("echo ELEVENTH", id="k11")
    c.proc.stdin.close()
    c.drain(30)
    status = c.proc.wait(30)
    evs = [e for e in c.results.values() if e.exit]
    say("end of stdin: exit events", len(evs), "all SIGTERM:",
        "yes" if all(c.results[i].exit["signal"] == 15 for i in ids) else "no", "serve status", status)
    e = c.results["k11"].error
    say("a waiting exec at the end:", js(e and e["message"]))


def case_queued_timeout(c, a):
    """At limits.concurrency 1, B waits for A; both have timeout_s 1. B's
    exit event must come about 1 s after A's (its own timeout, from its
    start), with stdin kept open and nothing else happening: were B's
    deadline unseen, its sleep of 1000 s would run on. The bound is one a
    loaded machine does not reach; the times seen are a note."""
    c.exec("sleep 1000", id="A", timeout_s=1)
    c.exec("sleep 1000", id="B", timeout_s=1)
    ra = c.wait("A", timeout=90)
    t0 = time.monotonic()
    rb = c.wait("B", timeout=90)
    ms = ms_since(t0)
    note("B's exit event %d ms after A's (duration_ms %s)" % (ms, rb.exit and rb.exit["duration_ms"]))
    say("A", exit_fields(ra))
    say("B", exit_fields(rb))
    say("B ended at its own timeout, from its start:", "yes" if rb.exit
        and 900 <= rb.exit["duration_ms"] < AT_ONCE_MS and ms < AT_ONCE_MS else "no")


def send_all(c, reqs):
    """File every request's id, then write them all in one write."""
    for q in reqs:
        c.results[q["id"]] = Result(q["id"])
    c.send_raw(b"".join(json.dumps(q, separators=(",", ":")).encode() + b"\n" for q in reqs))


def case_queue(c, a):
    """200 execs of true sent at once at concurrency 8: all run, exit 0, and
    start in the order they arrived. Then the queue's bound: 8 running and
    SERVE_QUEUE_MAX (1024) waiting, one more is refused; at the end of the
    turn every waiting one gets an error event."""
    t0 = time.monotonic()
    send_all(c, [{"op": "exec", "id": "q%d" % i, "command": "true"} for i in range(200)])
    for i in range(200):
        c.wait("q%d" % i, timeout=120)
    note("200 execs of true at concurrency 8: %d ms" % ms_since(t0))
    codes = [c.results["q%d" % i].exit and c.results["q%d" % i].exit["code"] for i in range(200)]
    say("200 at once: exit 0:", sum(1 for x in codes if x == 0), "errors:", len(c.errors))
    started = [json.loads(l)["id"] for d, l in c.log if d == "<-" and b'"event":"started"' in l]
    say("started in arrival order:", "yes" if started == ["q%d" % i for i in range(200)] else js(started[:20]))
    send_all(c, [{"op": "exec", "id": "r%d" % i, "command": "sleep 1000"} for i in range(8)])
    for i in range(8):
        c.wait("r%d" % i, timeout=30, until=lambda r: r.pid is not None)
    send_all(c, [{"op": "exec", "id": "w%d" % i, "command": "true"} for i in range(1025)])
    ev = c.wait("w1024", timeout=30)
    say("the 1025th waiting:", js(ev.error and ev.error["message"]))
    say("errors before the end:", len(c.errors))
    c.proc.stdin.close()
    c.drain(60)
    status = c.proc.wait(60)
    msgs = {c.results["w%d" % i].error and c.results["w%d" % i].error["message"] for i in range(1024)}
    say("at the end, the 1024 waiting:", js(sorted(m or "none" for m in msgs)), "serve status", status)


def case_many(c, a):
    c.run("true", timeout=60)  # the container is up once a command has run
    pid = host_pid(a.name)
    for _ in range(20):  # warm up: the first commands allocate what the rest reuse
        c.run("true", timeout=30)
    fds0, rss0 = pid1_figures(pid)
    t0 = time.monotonic()
    bad = 0
    for n in range(1000):
        r = c.run("true", id="t", timeout=30)
        if r.exit is None or r.exit["code"] != 0:
            bad += 1
    ms = ms_since(t0)
    fds1, rss1 = pid1_figures(pid)
    note("1000 x true in %d ms; /proc/1: fds %d -> %d, VmRSS %d -> %d kB" % (ms, fds0, fds1, rss0, rss1))
    say("1000 true, failures", bad)
    say("fds equal:", "yes" if fds1 == fds0 else "no (%d -> %d)" % (fds0, fds1))
    say("VmRSS within +256 KiB:", "yes" if rss1 - rss0 <= 256 else "no (%d -> %d kB)" % (rss0, rss1))
    r = c.run('cat /proc/[0-9]*/stat | awk \'$3 == "Z"\' | wc -l', timeout=30)
    say("zombies", js(r.stdout.decode()))
    # turninit's children seen from the host once the last command is over:
    # one after another, the commands ran in the first slot, and its keeper,
    # idle (asleep, waiting for the next), is turninit's one child
    # (init/process/keeper.h). It goes to sleep a moment after its report.
    deadline = time.monotonic() + AT_ONCE_MS / 1000
    while True:
        kids = children(pid)
        if all(k.endswith(" S turninit") for k in kids) or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    say("children of turninit after:", len(kids), "idle keeper(s):",
        sum(1 for k in kids if k.endswith(" S turninit")))


def children(pid):
    """"PID STATE COMM" of each child of host process pid."""
    out = []
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % d) as f:
                head, tail = f.read().rsplit(")", 1)
        except (OSError, ValueError):
            continue
        fields = tail.split()
        if fields[1] == str(pid):
            out.append("%s %s %s" % (d, fields[0], head.split("(", 1)[1]))
    return out


def descendants(pid):
    """"PID STATE COMM" of each descendant of host process pid."""
    out, todo = [], [pid]
    while todo:
        kids = children(todo.pop())
        out += kids
        todo += [int(k.split()[0]) for k in kids]
    return out


def container_gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def case_sigkill_client(c, a):
    c.exec("sleep 1000", id="z")
    c.wait("z", timeout=60, until=lambda r: r.pid is not None)
    pid = host_pid(a.name)
    t0 = time.monotonic()
    os.kill(c.proc.pid, signal.SIGKILL)
    c.proc.wait(30)
    while not container_gone(pid) and ms_since(t0) < AT_ONCE_MS:
        time.sleep(0.02)
    ms = ms_since(t0)
    note("turninit (host pid %d) gone %d ms after SIGKILL of the client" % (pid, ms))
    say("turninit ended %s:" % AT_ONCE, within(ms, AT_ONCE_MS) if container_gone(pid) else "no (still running)")
    deadline = time.monotonic() + 60
    while engine("ps", "-q", "--filter", "name=^%s$" % a.name) and time.monotonic() < deadline:
        time.sleep(0.1)
    say(ENGINE_NAME + " ps lists it:", "yes" if engine("ps", "-q", "--filter", "name=^%s$" % a.name) else "no")


def case_end_of_stdin(c, a):
    c.exec("sleep 1000", id="e1")
    c.exec("trap '' TERM; echo ready; while :; do sleep 0.1; done", id="e2")
    c.wait("e2", timeout=30, until=lambda r: r.stdout)
    c.wait("e1", timeout=30, until=lambda r: r.pid is not None)
    t0 = time.monotonic()
    c.proc.stdin.close()
    evs = c.drain(90)
    status = c.proc.wait(90)
    ms = ms_since(t0)
    note("end of stdin to end of turn: %d ms" % ms)
    say("events after EOF", " ".join("%s:%s" % (e["event"], e["id"]) for e in sorted(evs, key=lambda e: e["id"])))
    say("e1", exit_fields(c.results["e1"]))
    say("e2", exit_fields(c.results["e2"]))
    # not before the 5 s grace; the upper bound only catches a hang
    say("grace then SIGKILL:", "yes" if 4500 <= ms <= AT_ONCE_MS else "no")
    say("serve status", status)


def case_sigterm(c, a):
    c.exec("sleep 1000", id="t1")
    c.wait("t1", timeout=30, until=lambda r: r.pid is not None)
    t0 = time.monotonic()
    engine("kill", "--signal", "TERM", a.name, check=True)
    evs = c.drain(30)
    status = c.proc.wait(30) if c.proc else None
    note("SIGTERM to the end of the turn: %d ms" % ms_since(t0))
    say("events after SIGTERM", " ".join("%s:%s" % (e["event"], e["id"]) for e in evs))
    say("t1", exit_fields(c.results["t1"]))
    say("status", status)


def case_shell_missing(c, a):
    r = c.run("echo COMMAND-RAN", id="m1", timeout=30)
    say("events", " ".join(e["event"] for e in r.events), "message names the shell:",
        "yes" if r.error and "/bin/no-such-shell" in r.error["message"] else "no")
    try:
        say("then", js(c.event(1)))
    except TimeoutError:
        say("then nothing")
    r = c.run("echo again", id="m1", timeout=30)
    say("again", " ".join(e["event"] for e in r.events))
    say("serve status", c.close())


def case_transcript(c, a):
    """A session for docs/protocol.md; prints the raw lines."""
    c.run("echo hello; echo oops >&2; exit 3", id="c1", timeout=30)
    c.run("env", id="c2", env={"TZ": "UTC", "GH_TOKEN": "secret"}, timeout=30)
    c.run(argv=["printf", "%s\\n", "a b", "$HOME"], id="c3", cwd="/tmp", timeout=30)
    c.run("tr a-z A-Z", id="c4", stdin=b"from stdin\n", timeout=30)
    c.send_raw(b'{"op":"exec","id":"c5","command":"true","cwd":"work"}\n')
    c.event(30)
    c.send_raw(b"not json\n")
    c.event(30)
    c.exec("sleep 100", id="c6")
    c.wait("c6", timeout=30, until=lambda r: r.pid is not None)
    c.cancel("c6")
    c.wait("c6", timeout=30)
    c.run("sleep 100", id="c7", timeout_s=1, timeout=30)
    c.exec("trap 'echo got INT; exit 130' INT; echo ready; sleep 100 & wait", id="c8")
    c.wait("c8", timeout=30, until=lambda r: r.stdout)
    c.signal("c8", "INT")
    c.wait("c8", timeout=30)
    c.exec("sleep 100", id="c9")
    c.wait("c9", timeout=30, until=lambda r: r.pid is not None)
    c.proc.stdin.close()
    c.log.append(("--", b"(end of stdin)\n"))
    c.drain(30)
    status = c.proc.wait(30)
    for d, line in c.log:
        sys.stdout.buffer.write(d.encode() + b" " + line)
    print("-- (turninit exits %d)" % status)


# --- listen mode ---------------------------------------------------------------------
def connect_as(path, uid):
    """A Client on the listen socket whose peer credentials are uid's: a child
    process takes uid (and gid) and connects, then hands the connection back
    (SCM_RIGHTS). SO_PEERCRED keeps what it was at connect(2), so this process
    can stay root for the engine's calls."""
    if uid is None:
        return Client.connect(path)
    uid = int(uid)
    parent, child = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        try:
            parent.close()
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            socket.send_fds(child, [b"x"], [s.fileno()])
            os._exit(0)
        except BaseException as e:  # noqa: B036 - report anything, exit the child
            print("connect_as: %s" % e, file=sys.stderr)
            os._exit(1)
    child.close()
    _, fds, _, _ = socket.recv_fds(parent, 1, 1)
    os.waitpid(pid, 0)
    parent.close()
    if not fds:
        raise OSError("connect_as %d: the child could not connect" % uid)
    sock = socket.socket(fileno=fds[0])
    return Client(sock.fileno(), sock.fileno(), sock=sock)



def case_caller_ok(c, a):
    r = c.run("id -u; echo $HOME", timeout=30)
    say("stdout", js(r.stdout.decode()), exit_fields(r))
    r = c.run("exit 3", timeout=30)
    say("exit 3", exit_fields(r))


def case_refused(c, a):
    # Send a request at once: it must not be read, let alone run. The server may
    # have closed the connection already (EPIPE): the error event is still there.
    try:
        c.exec("touch /tmp/refused-ran; echo REFUSED-RAN")
    except (BrokenPipeError, ConnectionResetError):
        note("the request could not be sent: the connection was closed")
    evs = c.drain(30)
    say("events", " ".join("%s:%s" % (e["event"], js(e["id"])) for e in evs))
    for e in evs:
        note("message: %s" % e.get("message"))


def case_marker(c, a):
    r = c.run("test -e /tmp/refused-ran && echo RAN || echo not-ran", timeout=30)
    say(js(r.stdout.decode()))


def case_inner_call(c, a):
    r = c.run("/sbin/turninit call --socket /run/turninit/turninit.sock 'echo INNER-RAN'; echo \"status $?\"",
              timeout=60)
    say("stdout", js(r.stdout.decode()), exit_fields(r))
    lines = r.stderr.decode().splitlines()
    say("stderr is one turninit line:", "yes" if len(lines) == 1 and lines[0].startswith("turninit: ") else js(lines))
    note("inner call stderr: %s" % r.stderr.decode().strip())


def case_two_connections(c, a):
    d = connect_as(a.socket, a.uid)
    # Each command marks that it runs and waits for the other's mark: both
    # end only when they ran at the same time (one after the other, the first
    # would wait until its timeout). /tmp is the listen container's, shared.
    tag = "/tmp/two-%d-%d" % (os.getpid(), int(time.monotonic() * 1000))
    both = "touch %s.%%s; until [ -e %s.%%s ]; do sleep 0.05; done; echo %%s" % (tag, tag)
    t0 = time.monotonic()
    c.exec(both % ("A", "B", "A"), id="x", timeout_s=60)
    d.exec(both % ("B", "A", "B"), id="x", timeout_s=60)
    ra, rb = c.wait("x", timeout=90), d.wait("x", timeout=90)
    ms = ms_since(t0)
    note("two commands waiting for each other on two connections: %d ms" % ms)
    say("A", js(ra.stdout.decode()), exit_fields(ra), "B", js(rb.stdout.decode()), exit_fields(rb))
    say("at the same time:", "yes" if ra.stdout == b"A\n" and rb.stdout == b"B\n" else "no")
    # close one connection with a command running: it is cancelled
    d.exec("echo $$; sleep 1000", id="y")
    r = d.wait("y", timeout=30, until=lambda r: r.stdout)
    pid = int(r.stdout)
    d.sock.close()
    t0 = time.monotonic()
    r = c.run("for i in $(seq 600); do [ -e /proc/%d ] || { echo gone; exit 0; }; sleep 0.1; done; echo left" % pid,
              timeout=120)
    note("command of a closed connection gone after %d ms" % ms_since(t0))
    say("closed connection's command", js(r.stdout.decode()))


def case_peer_race(c, a):
    r = c.run("peerrace /run/turninit/turninit.sock 200", timeout=250)
    say("peerrace", js(r.stdout.decode()), exit_fields(r))
    if r.stderr:
        note("peerrace stderr: %s" % r.stderr.decode().strip())


def unread(sock):
    """The bytes queued on sock, not read yet (SIOCINQ)."""
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]


def case_slow_neighbour(c, a):
    """A connection whose client stops reading must not stall the others."""
    d = connect_as(a.socket, a.uid)
    d.exec("yes 0123456789abcde | head -c 8000000", id="flood")  # d is never read
    # The socket buffers fill; turninit has more to write to d: wait until the
    # bytes queued for d stop growing (bounded; a slow machine takes longer).
    t0 = time.monotonic()
    queued, since = unread(d.sock), time.monotonic()
    while time.monotonic() - since < 1 and ms_since(t0) < AT_ONCE_MS:
        time.sleep(0.05)
        n = unread(d.sock)
        if n != queued or n == 0:
            queued, since = n, time.monotonic()
    note("%d bytes queued for the neighbour after %d ms" % (queued, ms_since(t0)))
    c.exec("echo hi", id="n")
    t0 = time.monotonic()
    try:
        r = c.wait("n", timeout=AT_ONCE_MS / 1000)
        note("the other connection answered in %d ms" % ms_since(t0))
        say("answered while a neighbour stalls:", "yes", js(r.stdout.decode()), exit_fields(r))
    except TimeoutError:
        say("answered while a neighbour stalls: no (nothing %s)" % AT_ONCE)
    d.sock.close()
    r = c.wait("n", timeout=30)
    say("after the neighbour closed", js(r.stdout.decode()), exit_fields(r))


def case_listen_sigterm(c, a):
    c.exec("sleep 1000", id="t1")
    c.wait("t1", timeout=30, until=lambda r: r.pid is not None)
    t0 = time.monotonic()
    p = subprocess.Popen([ENGINE, "stop", "-t", "10", a.name], stdout=subprocess.DEVNULL)
    evs = c.drain(30)
    p.wait(PODMAN_TIMEOUT)
    note("%s stop of listen: %d ms" % (ENGINE_NAME, ms_since(t0)))
    say("events", " ".join("%s:%s" % (e["event"], e["id"]) for e in evs))
    say("t1", exit_fields(c.results["t1"]))
    say("container exit code", engine("inspect", "--format", "{{.State.ExitCode}}", a.name))


def case_hardening(c, a):
    # A command hands its stdout to another one and exits: its exit event must
    # not wait for the other (which would hold its timeout and its slot). The
    # holder holds it for 120 s and the giver's timeout is 90 s, both past the
    # bound, which a loaded machine does not reach.
    b = c.exec("fdpass recv hold 120", id="holder", timeout_s=180)
    c.wait(b, timeout=60, until=lambda r: r.stdout)
    t0 = time.monotonic()
    r = c.run("fdpass send hold; echo A-done", id="giver", timeout_s=90, timeout=150)
    ms = ms_since(t0)
    note("fd handed on: the giver's exit event after %d ms" % ms)
    say("fd handed on", exit_fields(r), "A-done" if b"A-done" in r.stdout else "no A-done",
        AT_ONCE + ":", within(ms, AT_ONCE_MS))
    c.cancel(b)
    c.wait(b, timeout=60)
    # cancel reaches a stopped command at once (SIGCONT with the SIGTERM):
    # sent once the command is seen stopped from the host (bounded)
    id = c.exec("kill -STOP $$; echo not reached", id="stopped")
    c.wait(id, timeout=60, until=lambda r: r.pid is not None)
    t0 = time.monotonic()
    pid = host_pid(a.name)
    while ms_since(t0) < AT_ONCE_MS and not any(k.split()[1] == "T" for k in descendants(pid)):
        time.sleep(0.02)
    note("the command seen stopped after %d ms" % ms_since(t0))
    t0 = time.monotonic()
    c.cancel(id)
    r = c.wait(id, timeout=90)
    ms = ms_since(t0)
    note("cancel of the stopped command: exit event after %d ms" % ms)
    say("cancel stopped", exit_fields(r), AT_ONCE + ":", within(ms, AT_ONCE_MS))
    # an argv word that starts with '-' is a word, not an option of exec
    r = c.run(argv=["-a", "FAKE0", "sh", "-c", "echo argv0=$0"], id="dash", timeout=30)
    say("argv dash", exit_fields(r), js(r.stdout.decode()))


def filters(c):
    """How many seccomp filters the keeper and a command run under, against
    turninit (PID 1: the runtime's alone)."""
    # the keeper's pid from the command's own status ($PPID needs getppid,
    # which a filter may refuse)
    r = c.run("while read -r k v; do [ \"$k\" = PPid: ] && pp=$v; done < /proc/$$/status; "
              "for p in 1 $pp $$; do grep -h '^Seccomp_filters' /proc/$p/status; done",
              timeout=30)
    n = [int(l.split()[1]) for l in r.stdout.decode().splitlines()]
    if len(n) != 3:
        return "unread: %r" % r.stdout
    return "keeper turninit+%d, command turninit+%d" % (n[1] - n[0], n[2] - n[0])


def case_filter_per_command(c, a):
    """A manifest whose filter refuses a call of the keepers (getppid): it is
    loaded in each command instead, after the set-up, and commands run."""
    r = c.run("echo ran", timeout=30)
    say("command", js(r.stdout.decode()), exit_fields(r))
    say("seccomp:", filters(c))


def keeper_idle(pid):
    """turninit (host pid pid) has one child, a keeper asleep with no child
    of its own: its command reaped and reported, it waits for the next job."""
    kids = children(pid)
    return len(kids) == 1 and kids[0].split()[1] == "S" and not children(int(kids[0].split()[0]))


def case_pool(c, a):
    """limits.concurrency 1: the slot's keeper is reused from one command to
    the next; a cancel that reaches it after its command ended does nothing to
    the next one; a keeper killed while idle is replaced at the next command,
    and reaped."""
    # The command's parent is its keeper (bash execs the last word in place).
    ppids = [c.run("echo $PPID", timeout=30).stdout.decode().strip() for _ in range(3)]
    say("one keeper for three commands:", "yes" if len(set(ppids)) == 1 and ppids[0] else ppids)
    envs = [c.run("env | sort", timeout=30, env={"TZ": "X"}).stdout.decode(),
            c.run("env | sort", timeout=30).stdout.decode()]
    say("a request's env stays with its command:",
        "yes" if "TZ=X" in envs[0] and "TZ=X" not in envs[1] else envs)
    say("seccomp:", filters(c))
    # turninit and its keepers ignore SIGPIPE; a command ignores nothing
    r = c.run("grep -E '^SigIgn' /proc/self/status", timeout=30)
    say("a command's", r.stdout.decode().strip().replace("\t", " "))
    pid = host_pid(a.name)
    # A late cancel: turninit is stopped while A ends, so the keeper has
    # reported A's end and is idle when turninit, continued, reads the cancel
    # first (its client's line) and gives it to the keeper; B, waiting for
    # the slot, then runs on that keeper.
    ok = 0
    for i in range(3):
        c.exec("sleep 0.2", id="A%d" % i)
        c.wait("A%d" % i, timeout=30, until=lambda r: r.pid is not None)
        os.kill(pid, signal.SIGSTOP)
        try:
            # A ends meanwhile, and its keeper reports it and goes idle: it
            # has reaped A (no child left) and sleeps waiting for a job
            # (bounded; a slow machine takes longer)
            t0 = time.monotonic()
            while ms_since(t0) < AT_ONCE_MS and not keeper_idle(pid):
                time.sleep(0.02)
            note("late cancel %d: the keeper idle after %d ms" % (i, ms_since(t0)))
            c.cancel("A%d" % i)
            c.exec("echo ok", id="B%d" % i)
        finally:
            os.kill(pid, signal.SIGCONT)
        ra = c.wait("A%d" % i, timeout=30)
        rb = c.wait("B%d" % i, timeout=30)
        ok += ra.exit is not None and ra.exit["code"] == 0 and rb.exit is not None \
            and rb.exit["code"] == 0 and bytes(rb.stdout) == b"ok\n"
    say("late cancels: next command ran to its end:", "%d of 3" % ok)
    kids = children(pid)
    say("turninit's children while idle:", len(kids))
    os.kill(int(kids[0].split()[0]), signal.SIGKILL)
    deadline = time.monotonic() + AT_ONCE_MS / 1000
    gone = kids[0].split()[0]
    while time.monotonic() < deadline and gone in [k.split()[0] for k in children(pid)]:
        time.sleep(0.01)
    r = c.run("echo $PPID", timeout=30)
    after = children(pid)
    say("after the idle keeper was killed:", exit_fields(r), "a new keeper:",
        "yes" if r.stdout.decode().strip() not in ("", ppids[0]) else "no",
        "turninit's children:", len(after), "zombies:", sum(1 for k in after if k.split()[1] == "Z"))
    # stopped while idle (SIGSTOP from the host): given the next command, it
    # is continued, and the command runs
    os.kill(int(after[0].split()[0]), signal.SIGSTOP)
    deadline = time.monotonic() + AT_ONCE_MS / 1000
    stopped = after[0].split()[0] + " T"
    while time.monotonic() < deadline and not any(k.startswith(stopped) for k in children(pid)):
        time.sleep(0.01)
    r = c.run("echo ran", timeout=30)
    say("a keeper stopped while idle, then a command:", js(r.stdout.decode()), exit_fields(r))


# --- a command that signals the others (issue 27, finding 1) --------------------------
STOPPER_S = 30


def case_stopper(c, a):
    """One command loops kill(-1, SIGSTOP) for STOPPER_S seconds beside 15
    others, started after it: each of them still gets its exit event (or, on
    a kernel where Landlock cannot scope signals, an error or a timeout: an
    answer all the same), and the turn ends at the end of stdin."""
    # kill(-1) says success even when every target refused (kill_something_info
    # keeps only errors other than EPERM), so its status tells nothing here
    c.exec("end=$((SECONDS+%d)); while [ $SECONDS -lt $end ]; do kill -STOP -1 2>/dev/null; done;"
           " echo stopper done" % STOPPER_S, id="stopper", timeout_s=STOPPER_S + 60)
    c.wait("stopper", timeout=AT_ONCE_MS / 1000, until=lambda r: r.pid is not None)
    ids = [c.exec("echo c%d" % i, id="c%d" % i, timeout_s=STOPPER_S + 30) for i in range(15)]
    deadline = time.monotonic() + STOPPER_S + AT_ONCE_MS / 1000
    try:
        for i in ids + ["stopper"]:
            c.wait(i, timeout=max(1, deadline - time.monotonic()))
    except TimeoutError:
        say("no answer by the deadline:", " ".join(i for i in ids + ["stopper"] if not c.results[i].done))
        raise
    ran = sum(1 for n, i in enumerate(ids)
              if c.results[i].exit and c.results[i].exit["code"] == 0 and bytes(c.results[i].stdout) == b"c%d\n" % n)
    answered = sum(1 for i in ids if c.results[i].done)
    st = c.results["stopper"]
    say("every command answered:", "%d of 15" % answered)
    say("ran to their end with their output:", "%d of 15" % ran)
    say("stopper:", js(st.stdout.decode()), exit_fields(st))
    t0 = time.monotonic()
    c.proc.stdin.close()
    try:
        rc = c.proc.wait(AT_ONCE_MS / 1000)
    except subprocess.TimeoutExpired:
        rc = "still running"
    note("the turn ended %d ms after the end of stdin" % ms_since(t0))
    say("the turn ended at the end of stdin:", rc)


def case_sibling_stop(c, a):
    """Landlock scopes signals in privileged mode too: a command cannot stop
    another command's process (they share the manifest's uid)."""
    c.exec("echo ready; sleep 1000", id="victim")
    v = c.wait("victim", timeout=AT_ONCE_MS / 1000, until=lambda r: r.stdout)
    r = c.run("kill -STOP %d; echo rc=$?" % v.pid, id="stopper", timeout=AT_ONCE_MS / 1000)
    say("kill -STOP of another command's process:", js(r.stdout.decode()), js(r.stderr.decode()))
    state = c.run("cut -d' ' -f3 /proc/%d/stat" % v.pid, id="state", timeout=AT_ONCE_MS / 1000)
    say("its state:", js(state.stdout.decode()))
    c.cancel("victim")
    say("victim:", exit_fields(c.wait("victim", timeout=AT_ONCE_MS / 1000)))


def hold_keeper_clone(pid, inject="delay_enter=120000000"):
    """Say how many keepers turninit (host pid) has, and hold the first one's
    next clone(2) for 120 s with strace on the host, as a command's process
    stopped before its exec would hold it (or inject what inject says into
    it: strace's inject=clone:INJECT). Returns the tracer (to kill),
    attached (or after AT_ONCE_MS)."""
    kids = [int(k.split()[0]) for k in children(pid)]
    say("one keeper:", len(kids))
    tracer = subprocess.Popen(["strace", "-qq", "-o", "/dev/null", "-p", str(kids[0]), "-e", "trace=clone",
                               "-e", "inject=clone:" + inject],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t0 = time.monotonic()
    while ms_since(t0) < AT_ONCE_MS:
        with open("/proc/%d/status" % kids[0]) as f:
            if any(l.startswith("TracerPid:") and l.split()[1] != "0" for l in f):
                break
        time.sleep(0.02)
    note("strace attached to the keeper after %d ms" % ms_since(t0))
    return tracer


def case_held_start(c, a):
    """A keeper held in clone(2) (strace on the host delays it 120 s, as a
    command's process stopped before its exec would hold it): PID 1 does not
    wait for it. The start is refused after SERVE_START_MS twice (continued,
    then killed), and the next command runs on a new keeper."""
    r = c.run("echo $PPID", timeout=AT_ONCE_MS / 1000)
    keeper = int(r.stdout.decode())   # in the container: find it on the host
    pid = host_pid(a.name)
    tracer = hold_keeper_clone(pid)
    try:
        t0 = time.monotonic()
        h = c.wait(c.exec("echo held", id="held"), timeout=AT_ONCE_MS / 1000)
        note("held: answered %d ms after the request" % ms_since(t0))
        say("held:", exit_fields(h))
        b = c.run("echo after; echo $PPID", id="after", timeout=AT_ONCE_MS / 1000)
        out = b.stdout.decode().split()
        say("after:", out[0] if out else "", exit_fields(b), "a new keeper:",
            "yes" if len(out) > 1 and out[1] != str(keeper) else "no")
    finally:
        tracer.kill()
        tracer.wait()


def case_held_start_timeout(c, a):
    """A command whose start is held 3 s before its exec (strace on the host
    delays its keeper's clone), with timeout_s 1: its timeout counts from
    its exec, so it runs to its end, and its duration_ms (from the hand-off
    to its keeper) holds the wait."""
    c.run("true", timeout=AT_ONCE_MS / 1000)
    tracer = hold_keeper_clone(host_pid(a.name), "delay_enter=3000000")
    try:
        r = c.wait(c.exec("echo ran", id="held", timeout_s=1), timeout=AT_ONCE_MS / 1000)
        say("held:", js(r.stdout.decode()), exit_fields(r))
        d = r.exit["duration_ms"] if r.exit else -1
        say("its duration_ms holds the held start:", "yes" if d >= 2500 else "no (%d)" % d)
    finally:
        tracer.kill()
        tracer.wait()


def case_cancel_then_timeout(c, a):
    """A command that ignores SIGTERM, cancelled at once, whose timeout
    (4 s) falls inside the cancel's grace (5 s): it is ended by the cancel's
    SIGKILL, and its exit says so, not timed_out."""
    c.exec('trap "" TERM; echo r; while :; do sleep 0.1; done', id="c", timeout_s=4)
    c.wait("c", timeout=AT_ONCE_MS / 1000, until=lambda r: r.stdout)
    t0 = time.monotonic()
    c.cancel("c")
    r = c.wait("c", timeout=AT_ONCE_MS / 1000)
    say("cancelled:", exit_fields(r))
    note("cancel to exit: %d ms" % ms_since(t0))


def case_clone_fails(c, a):
    """The keeper's clone(2) of a command fails once (strace on the host
    injects EAGAIN): that exec is an error event at once, the exec report
    it was handed is closed with it, and the next command on the same
    keeper takes its own report: started with its own pid."""
    r = c.run("echo $PPID", timeout=AT_ONCE_MS / 1000)
    keeper = r.stdout.decode().strip()
    tracer = hold_keeper_clone(host_pid(a.name), "error=EAGAIN:when=1")
    try:
        t0 = time.monotonic()
        f = c.wait(c.exec("echo never", id="failed"), timeout=AT_ONCE_MS / 1000)
        say("failed:", exit_fields(f), "at once:", "yes" if ms_since(t0) < AT_ONCE_MS else "no")
        b = c.run("echo $$; echo $PPID", id="after", timeout=AT_ONCE_MS / 1000)
        out = b.stdout.decode().split()
        say("after:", exit_fields(b), "started pid is $$:",
            "yes" if out and b.pid is not None and out[0] == str(b.pid) else "no (%s)" % out,
            "the same keeper:", "yes" if len(out) > 1 and out[1] == keeper else "no")
    finally:
        tracer.kill()
        tracer.wait()


def case_answers_in_order(c, a):
    """Execs do not wait for one another's started answer, and the answers
    keep the order of the requests (docs/protocol.md): the first exec's
    keeper is held in clone(2) by strace on the host; the execs after it
    start at once on other keepers, but their started events, and the answer
    to a later request that is not an exec, come after the held exec's
    error event. The exec report's write end reaches no command."""
    c.run("true", timeout=AT_ONCE_MS / 1000)
    tracer = hold_keeper_clone(host_pid(a.name))
    try:
        reqs = [{"op": "exec", "id": "held", "command": "echo held"},
                {"op": "exec", "id": "b", "command": "cut -d' ' -f1 /proc/uptime"},
                {"op": "exec", "id": "fds", "command": "ls /proc/self/fd"},
                {"op": "cancel", "id": "nope"}]
        for r in reqs[:3]:
            c.results[r["id"]] = Result(r["id"])
        c.send_raw(b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in reqs))
        h = c.wait("held", timeout=AT_ONCE_MS / 1000)
        t_answer = time.clock_gettime(time.CLOCK_BOOTTIME)   # /proc/uptime's clock
        b = c.wait("b", timeout=AT_ONCE_MS / 1000)
        fds = c.wait("fds", timeout=AT_ONCE_MS / 1000)
        t0 = time.monotonic()
        while not any(e.get("id") == "nope" for e in c.errors) and ms_since(t0) < AT_ONCE_MS:
            c.event(timeout=AT_ONCE_MS / 1000)
    finally:
        tracer.kill()
        tracer.wait()
    order = []
    for way, line in c.log:
        ev = json.loads(line) if way == "<-" else {}
        if ev.get("id") in ("held", "b", "fds", "nope") and ev.get("event") in ("started", "error"):
            order.append("%s:%s" % (ev["id"], ev["event"]))
    say("order:", " ".join(order))
    say("held:", exit_fields(h))
    try:
        ran = float(b.stdout.decode().strip())
        early = ran < t_answer - 2
        note("b ran %.1f s before the held exec's answer" % (t_answer - ran))
    except ValueError:
        early = False
        note("b's output: %r" % bytes(b.stdout))
    say("b ran before the held exec's answer:", "yes" if early else "no", exit_fields(b))
    # its own time, not the wait for its started answer (docs/protocol.md)
    say("b's duration_ms under 5000:", "yes" if b.exit["duration_ms"] < 5000 else b.exit["duration_ms"])
    say("fds of a command:", " ".join(fds.stdout.decode().split()), exit_fields(fds))


def case_burst_ids(c, a):
    """Ids in one write, handled without waiting for earlier answers: an exec
    that reuses the id of one whose start fails runs (the id is free once
    that answer is given); one that reuses a running id is refused."""
    reqs = [{"op": "exec", "id": "x", "command": "true", "cwd": "/locked"},
            {"op": "exec", "id": "x", "command": "echo second-x"},
            {"op": "exec", "id": "d", "command": "echo ready; sleep 1000"},
            {"op": "exec", "id": "d", "command": "echo dup"}]
    c.send_raw(b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in reqs))

    def events():
        return [json.loads(line) for way, line in c.log if way == "<-"]

    def until(done):
        t0 = time.monotonic()
        while not done(events()) and ms_since(t0) < AT_ONCE_MS:
            c.event(timeout=AT_ONCE_MS / 1000)

    until(lambda evs: any(e["event"] == "exit" and e["id"] == "x" for e in evs) and
          any(e["event"] == "error" and e["id"] == "d" for e in evs))
    c.cancel("d")
    until(lambda evs: any(e["event"] == "exit" and e["id"] == "d" for e in evs))
    for id in ("x", "d"):
        for e in events():
            if e.get("id") != id or (id == "d" and e["event"] == "output"):
                continue
            if e["event"] == "error":
                say(id, "error", js(e["message"]))
            elif e["event"] == "output":
                say(id, "output", js(e["text"] if "text" in e else base64.b64decode(e["data"]).decode()))
            elif e["event"] == "exit":
                say(id, "exit", " ".join("%s=%s" % (k, js(e[k])) for k in ("code", "signal", "timed_out",
                                                                          "truncated")))
            else:
                say(id, e["event"])


def case_held_neighbour(c, a):
    """Listen: an exec of one connection held before its exec (strace on the
    host holds its keeper in clone(2)) holds none of another connection's
    answers: connections share only the concurrency limit."""
    d = connect_as(a.socket, a.uid)
    c.run("true", timeout=AT_ONCE_MS / 1000)   # a keeper at least
    kids = [int(k.split()[0]) for k in children(host_pid(a.name))]
    tracers = {k: subprocess.Popen(["strace", "-qq", "-o", "/dev/null", "-p", str(k), "-e", "trace=clone",
                                    "-e", "inject=clone:delay_enter=120000000"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL) for k in kids}

    def state(k, field):
        try:
            with open("/proc/%d/status" % k) as f:
                return next((l.split()[1] for l in f if l.startswith(field)), "")
        except OSError:
            return ""
    try:
        t0 = time.monotonic()
        while any(state(k, "TracerPid:") in ("0", "") for k in kids) and ms_since(t0) < AT_ONCE_MS:
            time.sleep(0.02)
        c.exec("echo held", id="h")
        held = None
        t0 = time.monotonic()
        while held is None and ms_since(t0) < AT_ONCE_MS:   # stopped in clone's entry
            held = next((k for k in kids if state(k, "State:") == "t"), None)
            time.sleep(0.02)
        for k, t in tracers.items():
            if k != held:
                t.kill()
                t.wait()
        t0 = time.monotonic()
        r = d.run("echo b", timeout=AT_ONCE_MS / 1000)
        ms = ms_since(t0)
        note("the neighbour's command took %d ms while the held exec waited" % ms)
        say("neighbour:", js(r.stdout.decode()), exit_fields(r), "before the held exec's answer:",
            "yes" if ms < 4000 and not c.results["h"].done else "no")
        say("held:", exit_fields(c.wait("h", timeout=AT_ONCE_MS / 1000)))
    finally:
        for t in tracers.values():
            t.kill()
            t.wait()


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}


class Args:
    name = None
    socket = None
    uid = None


def parse_args(argv, a):
    """CASE [--opt VALUE]... [-- SERVER_ARGV...]: sets a.opt; (CASE, SERVER_ARGV)."""
    case = argv.pop(0)
    while argv and argv[0] != "--":
        opt = argv.pop(0)
        setattr(a, opt[2:], argv.pop(0))
    return case, argv[1:]


def run_case(fn, c, a):
    """fn(c, a); an error it raises is said as a fact; then every event seen
    is checked (check_log) and a serve-mode server gets the end of stdin."""
    try:
        fn(c, a)
    except (Closed, TimeoutError, OSError, KeyError, ValueError, RuntimeError,
            subprocess.TimeoutExpired) as e:
        say("case stopped: %s: %s" % (type(e).__name__, e))
    finally:
        if c is not None:
            check_log(c)
        if c is not None and c.proc and c.proc.poll() is None:
            try:
                c.proc.stdin.close()
                c.proc.wait(30)
            except (OSError, subprocess.TimeoutExpired):
                c.proc.kill()


def main(argv):
    a = Args()
    case, server = parse_args(argv, a)
    c = connect_as(a.socket, a.uid) if a.socket else Client.spawn(server)
    run_case(CASES[case], c, a)


if __name__ == "__main__":
    main(sys.argv[1:])
