#!/usr/bin/env python3
"""session.py - one serve session that walks every request kind, for the
valgrind suite (tests/integration/valgrind.sh).

    session.py -- SERVER_ARGV...     serve: start SERVER_ARGV, talk over its pipes
    session.py --socket PATH         listen: connect to the socket PATH

The server is turninit under valgrind, in a namespace of its own; the client is
tests/serve/client.py. Every step checks what came back; the first mismatch
prints "session: STEP: WHY" and exits 1. At the end the stream is closed (a
command still running is cancelled); for serve the server's exit status is
printed as "server exit N". Exits 0 when every step held.

Bounds are wide: turninit runs under valgrind, twenty to fifty times slower.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "serve"))
from client import Client  # noqa: E402

WAIT = 60  # seconds: the bound of every wait


def fail(step, why):
    print("session: %s: %s" % (step, why))
    sys.exit(1)


def want(step, got, expected):
    if got != expected:
        fail(step, "got %r, want %r" % (got, expected))


def exit_of(step, r):
    if r.exit is None:
        fail(step, "no exit event: %r" % (r.error or r.events))
    return r.exit


def main(argv):
    if argv[:1] == ["--socket"]:
        c = Client.connect(argv[1])
    else:
        c = Client.spawn(argv[1:] if argv[:1] == ["--"] else argv)

    r = c.run("echo hello; echo oops >&2; exit 3", timeout=WAIT)
    want("streams", (bytes(r.stdout), bytes(r.stderr)), (b"hello\n", b"oops\n"))
    want("exit code", exit_of("exit code", r)["code"], 3)

    r = c.run("env | sort", env={"TZ": "UTC", "GH_TOKEN": "secret"}, timeout=WAIT)
    names = [line.split("=", 1)[0] for line in r.stdout.decode().splitlines()]
    want("environment", names,
         ["HOME", "LANG", "PATH", "PWD", "SHLVL", "TERM", "TZ", "_"])

    r = c.wait(c.exec(argv=["printf", "%s\\n", "a b", "$HOME"], cwd="/tmp"), WAIT)
    want("argv", bytes(r.stdout), b"a b\n$HOME\n")

    r = c.wait(c.exec("tr a-z A-Z", stdin=b"from stdin\n"), WAIT)
    want("stdin", bytes(r.stdout), b"FROM STDIN\n")

    r = c.run("head -c 300000 /dev/zero", timeout=WAIT)
    want("300 kB of output", len(r.stdout), 300000)

    ids = [c.exec("echo $((%d * 2))" % n) for n in range(8)]
    outs = [bytes(c.wait(i, WAIT).stdout) for i in ids]
    want("8 at once", outs, [b"%d\n" % (n * 2) for n in range(8)])

    s = c.exec("sleep 1000", id="s")   # ends by the cancel alone
    c.wait(s, WAIT, until=lambda res: res.pid is not None)
    c.exec("true", id="s")  # a duplicate of a running id: an error event
    c.cancel("s")
    want("cancel", exit_of("cancel", c.wait(s, WAIT))["signal"], 15)
    if not any(e.get("id") == "s" for e in c.errors):
        fail("duplicate id", "no error event for a second exec of a running id")

    r = c.run("sleep 100", timeout=WAIT, timeout_s=1)
    want("timeout", exit_of("timeout", r)["timed_out"], True)

    t = c.exec("trap 'echo got INT; exit 7' INT; echo ready; sleep 100 & wait")
    c.wait(t, WAIT, until=lambda res: b"ready" in res.stdout)
    c.signal(t, "INT")
    r = c.wait(t, WAIT)
    want("signal", (bytes(r.stdout), exit_of("signal", r)["code"]), (b"ready\ngot INT\n", 7))

    n = len(c.errors)
    for bad in (b"{not json\n", b'{"op":"fly","id":"x"}\n', b'{"op":"exec"}\n',
                b'{"op":"cancel","id":"nobody"}\n',
                b'{"op":"exec","id":"b","command":"true","stdin":"@@"}\n',
                b'{"op":"exec","id":"t","command":"true","timeout_s":-1}\n'):
        c.send_raw(bad)
        deadline = time.monotonic() + WAIT
        while len(c.errors) == n:
            c.event(max(0.0, deadline - time.monotonic()))
        n = len(c.errors)
    r = c.run("echo still here", timeout=WAIT)
    want("after bad requests", bytes(r.stdout), b"still here\n")

    c.exec("sleep 1000", id="left")  # still running at the end: cancelled
    c.wait("left", WAIT, until=lambda res: res.pid is not None)
    status = c.close(WAIT)
    rest = [e for e in c.drain(WAIT) if e.get("id") != "left"]
    # with --audit-log the turn ends with a turn_end event carrying the
    # log's final head (docs/protocol.md), the stream's last
    if "--audit-log" in sys.argv and rest and rest[-1].get("event") == "turn_end":
        head = rest.pop().get("audit_head")
        want("turn_end's audit_head", isinstance(head, str) and len(head) == 64 and
             all(ch in "0123456789abcdef" for ch in head), True)
    want("end of the stream", rest, [])
    want("cancelled at the end", exit_of("end", c.results["left"])["signal"], 15)
    if status is not None:
        print("server exit %d" % status)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
