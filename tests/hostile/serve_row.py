#!/usr/bin/env python3
"""serve_row.py - one hostile-input row of the serve protocol, for
tests/integration/hostile.sh: serve_row.py CASE -- SERVER_ARGV...

Starts the server (SERVER_ARGV: `turninit serve` in its namespaces), sends the
hostile request(s) of CASE byte for byte, then a good exec (id "alive",
`echo alive`) in the same session, and reads until its exit event. It prints,
one a line: every event that is not the good exec's, as compact JSON (pid and
duration_ms replaced by 0, output data decoded into "text"); then
`alive: STDOUT code=N`; then `serve status N` once stdin is closed. A
bounded wait on every read: nothing here can hang the suite.
Uses the reference client tests/serve/client.py.
"""
import base64
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "serve"))
from client import Client  # noqa: E402

WAIT = 60  # seconds for any one answer: a bound a loaded machine does not reach


def line(obj):
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def shown(ev):
    ev = dict(ev)
    for k in ("pid", "duration_ms"):
        if k in ev:
            ev[k] = 0
    if ev.get("event") == "output":
        ev["text"] = base64.b64decode(ev.pop("data")).decode("utf-8", "replace")
    return json.dumps(ev, separators=(",", ":"))


def env_sorted(c, env):
    """A command that prints its environment, sorted, with env given raw."""
    c.send_raw(line({"op": "exec", "id": "e1", "command": "env | sort", "env": env}))


def big_env(n):
    # 3-letter names from A-Z a-z: 52**3 > 100000; TZ among them.
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    env = {}
    for i in range(n - 1):
        a, b, d = i // 2704, (i // 52) % 52, i % 52
        env["V" + letters[a] + letters[b] + letters[d]] = ""
        if i == n // 2:
            env["TZ"] = "UTC"
    return env


CASES = {
    "invalid-json": lambda c: c.send_raw(b'{"op":"exec","id":"j1","command":"echo RAN"\n'),
    "line-2mib": lambda c: c.send_raw(b'{"op":"exec","id":"big","command":"echo RAN #'
                                      + b"x" * (2 << 20) + b'"}\n'),
    "unknown-op": lambda c: c.send_raw(line({"op": "run", "id": "u1", "command": "echo RAN"})),
    "missing-id": lambda c: c.send_raw(line({"op": "exec", "command": "echo RAN"})),
    "cancel-unknown-id": lambda c: c.send_raw(line({"op": "cancel", "id": "nope"})),
    "cwd-utf8-long": lambda c: c.send_raw(line({"op": "exec", "id": "w1", "command": "echo RAN",
                                                "cwd": "/a" + "\u00e9" * 300})),
    "bad-base64": lambda c: c.send_raw(line({"op": "exec", "id": "b1", "command": "cat; echo RAN",
                                             "stdin": "!!!="})),
    "timeout-negative": lambda c: c.send_raw(line({"op": "exec", "id": "t1", "command": "echo RAN",
                                                   "timeout_s": -1})),
    "timeout-zero": lambda c: c.send_raw(line({"op": "exec", "id": "t0", "command": "echo RAN",
                                               "timeout_s": 0})),
    "timeout-beyond-int64": lambda c: c.send_raw(
        b'{"op":"exec","id":"t2","command":"echo RAN","timeout_s":99999999999999999999}\n'),
    "argv-empty": lambda c: c.send_raw(line({"op": "exec", "id": "a1", "argv": []})),
    "argv-empty-string": lambda c: c.send_raw(line({"op": "exec", "id": "a2", "argv": [""]})),
    "argv-one-word": lambda c: c.send_raw(line({"op": "exec", "id": "a4",
                                                "argv": ["echo RAN; echo $HOME"]})),
    "command-empty-string": lambda c: c.send_raw(line({"op": "exec", "id": "a3", "command": ""})),
    "env-empty-name": lambda c: env_sorted(c, {"": "x", "TZ": "UTC"}),
    "env-odd-names": lambda c: env_sorted(c, {"LC_\u0001": "b", "LC_ ALL": "d", "LC_\u00ff": "c",
                                              "LC_ALL\n": "e", "TZ=evil": "x", "LC_ALL": "C"}),
    "env-nul-in-name": lambda c: c.send_raw(
        b'{"op":"exec","id":"n1","command":"echo RAN","env":{"TZ\\u0000X":"UTC"}}\n'),
    "env-1mib-value": lambda c: c.send_raw(line({"op": "exec", "id": "v1", "command": "echo ${#TZ}",
                                                 "env": {"TZ": "a" * ((1 << 20) - 100)}})),
    "env-100000-variables": lambda c: env_sorted(c, big_env(100000)),
}


def duplicate_running_id(c):
    c.exec("sleep 1000", id="d1")   # running until cancelled, however slow the machine
    c.wait("d1", WAIT, until=lambda r: r.pid is not None)
    c.send_raw(line({"op": "exec", "id": "d1", "command": "echo RAN"}))


def timeout_huge(c):
    # A timeout above the manifest's is capped to it (limits.timeout_s, 2 here).
    c.send_raw(line({"op": "exec", "id": "t3", "command": "sleep 30; echo RAN",
                     "timeout_s": 9223372036854775807}))


def started_not_ended(c):
    started, ended = set(), set()
    for direction, raw in c.log:
        if direction == "<-":
            ev = json.loads(raw)
            if ev.get("event") == "started":
                started.add(ev["id"])
            elif ev.get("event") == "exit":
                ended.add(ev["id"])
    return started - ended


def main(argv):
    case, server = argv[0], argv[2:]
    c = Client.spawn(server)
    if case == "duplicate-running-id":
        duplicate_running_id(c)
    elif case == "timeout-huge":
        timeout_huge(c)
    else:
        CASES[case](c)
    c.exec("echo alive", id="alive")
    alive = c.wait("alive", WAIT)
    if case == "duplicate-running-id":
        c.cancel("d1")
    # wait (bounded) for the exit event of every command of the case that started
    while started_not_ended(c):
        c.event(WAIT)
    for direction, raw in c.log:
        if direction != "<-":
            continue
        ev = json.loads(raw)
        if ev.get("id") != "alive":
            print(shown(ev))
    code = alive.exit["code"] if alive.exit else None
    print("alive: %r code=%s" % (bytes(alive.stdout).decode(), code))
    status = c.close(WAIT)
    rest = c.drain(WAIT)
    for ev in rest:
        print("after end of stdin: " + shown(ev))
    print("serve status %s" % status)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except Exception as e:  # one line the suite can show, never a hang
        print("serve_row.py: %s: %s" % (type(e).__name__, e))
        sys.exit(1)
