#!/usr/bin/env python3
"""cases.py - the audit suite's sessions and log checks (tests/integration/audit.sh).

    cases.py statuses LOG KEY_ID DIGEST -- SERVER_ARGV...
    cases.py tamper LOG -- SERVER_ARGV...
    cases.py killed LOG NAME -- SERVER_ARGV...
    cases.py broken -- SERVER_ARGV...      (SERVER_ARGV: ... serve --audit-log fd:3)
    cases.py lines LOG
    cases.py mcp LOG -- SERVER_ARGV...     (SERVER_ARGV: ... mcp --audit-log ...)
    cases.py rejected LOG -- SERVER_ARGV...
    cases.py final-head LOG -- SERVER_ARGV...
    cases.py final-head-listen LOG SOCKET NAME   (NAME: the listen container)

SERVER_ARGV starts `turninit serve --audit-log ...` in podman; LOG is the host
path of that log. Each case drives a session with the reference client
(tests/serve/client.py), then reads LOG after the server is gone and checks it
line by line: every line whole (ends in a newline, one JSON object), every
field as docs/audit.md says (by hand; and against policy/audit.schema.json when
this python has jsonschema). Prints "# ..." notes; each unmet expectation is a
line "want: ..." on stdout; exits 1 if there is one.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "serve"))
from client import Client, Closed  # noqa: E402

SCHEMA = os.path.join(ROOT, "policy", "audit.schema.json")
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
FAILS = []


def want(cond, what):
    if not cond:
        FAILS.append(what)
        print("want: " + what)
    return cond


def schema_validator():
    try:
        import jsonschema
    except ImportError:
        print("# no jsonschema in this python: fields checked by hand only")
        return None
    schema = json.load(open(SCHEMA))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


# The fields of each event, by hand (the schema says the same).
FIELDS = {
    "turn_start": {"event", "prev", "turn", "time", "turninit", "mode", "manifest", "protections"},
    "exec": {"event", "prev", "time", "stream", "id", "cwd", "env_names", "timeout_s"},
    "refused": {"event", "prev", "time", "stream", "id", "reason"},
    "rejected": {"event", "prev", "time", "stream", "id", "reason"},
    "cancel": {"event", "prev", "time", "stream", "id"},
    "signal": {"event", "prev", "time", "stream", "id", "signal"},
    "exit": {"event", "prev", "time", "stream", "id", "pid", "start", "end", "code", "signal", "timed_out",
             "cancelled", "truncated", "lost", "oom_killed", "stdout_bytes", "stderr_bytes",
             "stdout_blake2b_256", "stderr_blake2b_256", "read_back"},
    "turn_end": {"event", "prev", "time", "exit_code", "lines"},
    "change": {"event", "prev", "time", "op", "what", "path", "base", "now"},
    "changes": {"event", "prev", "time", "base", "root", "added", "removed", "changed", "entries",
                "bytes_hashed", "unreadable", "unreadable_paths", "unreadable_paths_more", "not_compared", "skipped",
                "duration_ms", "complete", "stopped"},
}


def b2(data):
    """BLAKE2b-256, hex: what `b2sum -l 256` prints."""
    return hashlib.blake2b(data, digest_size=32).hexdigest()


DIGEST = {}   # id(event) -> the BLAKE2b-256 of its line, newline included


def line_digest(ev):
    """The digest of the log line ev was read from (read_log)."""
    return DIGEST.get(id(ev))


def read_log(path):
    """Every line of the log, parsed; checks that each is whole and valid."""
    data = open(path, "rb").read()
    want(data.endswith(b"\n"), "the log ends with a newline (no partial line)")
    events = []
    v = schema_validator()
    link = None   # what the next line's prev must be
    for n, line in enumerate(data.split(b"\n")[:-1], 1):
        digest = b2(line + b"\n")
        try:
            ev = json.loads(line)
        except ValueError:
            want(False, "line %d is JSON: %r" % (n, line[:80]))
            continue
        if not want(isinstance(ev, dict) and ev.get("event") in FIELDS,
                    "line %d is a known event" % n):
            continue
        keys = set(ev)
        need = FIELDS[ev["event"]]
        if ev["event"] == "exec":
            want(("command" in keys) != ("argv" in keys), "line %d: command or argv" % n)
            keys -= {"command", "argv", "stdin", "filter_in_command"}
        if ev["event"] == "rejected":
            want(not ("command" in keys and "argv" in keys), "line %d: command or argv or neither" % n)
            keys -= {"command", "argv"}
        want(keys == need, "line %d: fields %s, want %s" % (n, sorted(keys), sorted(need)))
        for k in ("time", "start", "end"):
            if k in ev:
                want(isinstance(ev[k], str) and TIME.match(ev[k]), "line %d: %s is RFC 3339 ms UTC" % (n, k))
        if v is not None:
            errs = [e.message for e in v.iter_errors(ev)]
            want(not errs, "line %d valid against the schema: %s" % (n, errs[:2]))
        # the chain (docs/audit.md): turn_start's prev is the digest of its
        # turn id, every other line's that of the line before it
        if ev["event"] == "turn_start":
            link = b2(ev.get("turn", "").encode())
        want(ev.get("prev") == link, "line %d: prev %s, want %s" % (n, ev.get("prev"), link))
        link = digest
        DIGEST[id(ev)] = digest
        events.append(ev)
    print("# %d log lines" % len(events))
    return events


def spawn(argv):
    return Client.spawn(argv)


def statuses(log, key_id, digest, argv):
    """Every kind of ending, in order, with the right status in the log."""
    c = spawn(argv)
    secret = "s3cret-value-never-logged"
    tricky = 'printf "%s\\n" "quote \\" back\\\\slash" \'tab\there\' # ünïcödé\necho line2'
    runs = [
        ("c1", dict(command="printf 12345")),
        ("c2", dict(command="echo err >&2; exit 3")),
        ("c3", dict(command="kill -TERM $$")),
        ("c4", dict(argv=["printf", "%s|", "a b", "c"])),
        ("c5", dict(command='printf %s "${TZ-unset}"', env={"TZ": secret, "NOT_ALLOWED": secret})),
        ("c6", dict(command="sleep 30", timeout_s=1)),
        ("c7", dict(command="echo never", cwd="/no/such/dir")),
        ("c8", dict(command=tricky)),
        ("c10", dict(command="bash", stdin=b"echo from-stdin > /tmp/s; rm -f /tmp/s\n")),
        ("c11", dict(argv=["true"])),
        ("c12", dict(command="echo one\u2028two\u0085three")),
    ]
    got = {}
    for id, kw in runs:
        got[id] = c.run(id=id, timeout=60, **kw)
    c9 = c.exec("sleep 1000", id="c9")   # ends by the cancel alone
    c.wait(c9, timeout=30, until=lambda r: r.pid is not None)
    c.cancel(c9)
    r9 = c.wait(c9, timeout=30)
    want(r9.exit is not None and r9.exit["signal"] == 15, "c9 cancelled: signal 15")
    c13 = c.exec("sleep 1000", id="c13")   # ends by a signal request
    c.wait(c13, timeout=30, until=lambda r: r.pid is not None)
    c.signal(c13, "USR1")
    r13 = c.wait(c13, timeout=30)
    want(r13.exit is not None and r13.exit["signal"] == 10, "c13 signalled: signal 10 (got %s)" % r13.exit)
    status = c.close(timeout=60)
    want(status == 0, "serve exits 0 at the end of stdin (got %s)" % status)

    evs = read_log(log)
    seq = [(e["event"], e.get("id")) for e in evs]
    expect = [("turn_start", None)]
    for id, _ in runs:
        expect += [("exec", id), ("refused" if id == "c7" else "exit", id)]
    expect += [("exec", "c9"), ("cancel", "c9"), ("exit", "c9"),
               ("exec", "c13"), ("signal", "c13"), ("exit", "c13"), ("turn_end", None)]
    want(seq == expect, "events in order %s, got %s" % (expect, seq))
    by = {}
    for e in evs:
        by.setdefault((e["event"], e.get("id")), e)
    ts = by.get(("turn_start", None), {})
    want(ts.get("mode") == "serve", "turn_start mode serve")
    m = ts.get("manifest", {})
    want(m.get("key_id") == key_id, "key_id %s (got %s)" % (key_id, m.get("key_id")))
    want(m.get("blake2b_256") == digest, "blake2b_256 of the manifest %s (got %s)" % (digest, m.get("blake2b_256")))

    def ex(id):
        return by.get(("exit", id), {})

    def st(id):
        e = ex(id)
        return (e.get("code"), e.get("signal"), e.get("timed_out"), e.get("cancelled"))

    want(st("c1") == (0, None, False, False) and ex("c1").get("stdout_bytes") == 5, "c1: code 0, 5 bytes of stdout")
    want(st("c2") == (3, None, False, False) and ex("c2").get("stderr_bytes") == 4, "c2: code 3, 4 bytes of stderr")
    want(st("c3") == (None, 15, False, False), "c3: signal 15 (got %s)" % (st("c3"),))
    want(by.get(("exec", "c4"), {}).get("argv") == ["printf", "%s|", "a b", "c"], "c4: argv logged as given")
    want(ex("c4").get("stdout_bytes") == 6, "c4: 6 bytes")
    # The names that reached the command: the audit manifest admits none.
    want(by.get(("exec", "c5"), {}).get("env_names") == [], "c5: env names admitted: none (got %s)"
         % by.get(("exec", "c5"), {}).get("env_names"))
    want(secret.encode() not in open(log, "rb").read(), "no env value in the log")
    want(ex("c5").get("stdout_bytes") == 5, "c5: the audit manifest admits no name: TZ unset")
    want(st("c6")[2] is True and st("c6")[1] == 15, "c6: timed_out, signal 15 (got %s)" % (st("c6"),))
    want(by.get(("exec", "c6"), {}).get("timeout_s") == 1, "c6: timeout_s 1")
    # c6 ran a second: its sandbox as the kernel showed it at its start
    rb = ex("c6").get("read_back") or {}
    want((rb.get("cap_inh"), rb.get("cap_prm"), rb.get("cap_eff"), rb.get("cap_bnd"), rb.get("cap_amb"),
          rb.get("no_new_privs"), rb.get("seccomp")) == ("0" * 16,) * 5 + (1, 2),
         "c6: read_back: every capability set empty, no_new_privs 1, seccomp 2 (got %s)" % rb)
    want("/no/such/dir" in by.get(("refused", "c7"), {}).get("reason", ""), "c7: refused, reason names the cwd")
    want(by.get(("exec", "c8"), {}).get("command") == tricky, "c8: the command string exactly (JSON escaped)")
    want(st("c8") == (0, None, False, False), "c8: code 0")
    want(by.get(("exec", "c10"), {}).get("stdin") == "ZWNobyBmcm9tLXN0ZGluID4gL3RtcC9zOyBybSAtZiAvdG1wL3MK",
         "c10: the script given on stdin is logged, base64 (got %s)" % by.get(("exec", "c10"), {}).get("stdin"))
    want("stdin" not in by.get(("exec", "c1"), {}), "c1: no stdin field without stdin")
    want(by.get(("exec", "c11"), {}).get("argv") == ["true"], "c11: a one-word argv is logged as argv")
    want(by.get(("exec", "c12"), {}).get("command") == "echo one\u2028two\u0085three",
         "c12: the command with U+2028 and U+0085, exactly")
    raw = open(log, "rb").read()
    want(all(b < 0x80 for b in raw), "the log is ASCII: every non-ASCII character escaped")
    want(st("c9") == (None, 15, False, True), "c9: cancelled, signal 15 (got %s)" % (st("c9"),))
    want(by.get(("exec", "c1"), {}).get("cwd") == "/work", "c1: cwd /work (the manifest's workdir)")
    want(by.get(("turn_end", None), {}).get("exit_code") == 0, "turn_end exit_code 0")
    for e in evs:
        if e["event"] == "exit":
            want(e["start"] <= e["end"], "%s: start <= end" % e["id"])
    want(all(e.get("stream", 0) == 0 for e in evs), "serve mode: every stream is 0")
    # anchors and output digests: each exit event carries the head after its
    # log line; the digests are those of what the client received (nothing cut)
    got["c9"] = r9
    got["c13"] = r13
    for cid, r in got.items():
        e = ex(cid)
        if not e:
            continue
        want(r.exit is not None and r.exit.get("audit_head") == line_digest(e),
             "%s: the exit event's audit_head %s is the digest of its log line %s"
             % (cid, r.exit and r.exit.get("audit_head"), line_digest(e)))
        want(e.get("stdout_blake2b_256") == b2(bytes(r.stdout)),
             "%s: stdout_blake2b_256 is b2sum -l 256 of the %d bytes received" % (cid, len(r.stdout)))
        want(e.get("stderr_blake2b_256") == b2(bytes(r.stderr)),
             "%s: stderr_blake2b_256 is b2sum -l 256 of the %d bytes received" % (cid, len(r.stderr)))
    times = [e["time"] for e in evs]
    want(times == sorted(times), "times never go back")


def rejected(log, argv):
    """Requests that run nothing and name no exec of their own: a duplicate of
    a running id and request lines that are not valid requests each leave a
    rejected line (the command text only where there is one)."""
    c = spawn(argv)
    c.exec("sleep 1000", id="r1")
    c.wait("r1", timeout=30, until=lambda r: r.pid is not None)
    n = len(c.errors)
    c.exec("echo dup", id="r1")                                    # a running id
    c.send({"op": "exec", "id": "r2", "command": "echo x", "timeout_s": 0})   # malformed
    c.send({"op": "exec", "id": "r3"})                              # neither command nor argv
    c.send_raw(b'{"op":"exec","id":\n')                            # not JSON, no id
    c.send_raw(b'{"op":"exec","id":"r4","command":"' + b"x" * (1 << 20) + b'"}\n')   # past 1 MiB
    while len(c.errors) < n + 5:
        c.event(30)
    c.cancel("r1")
    c.wait("r1", timeout=30)
    status = c.close(timeout=60)
    want(status == 0, "serve exits 0 at the end of stdin (got %s)" % status)
    evs = read_log(log)
    seq = [(e["event"], e.get("id")) for e in evs]
    expect = [("turn_start", None), ("exec", "r1"), ("rejected", "r1"), ("rejected", "r2"),
              ("rejected", "r3"), ("rejected", None), ("rejected", None), ("cancel", "r1"), ("exit", "r1"), ("turn_end", None)]
    want(seq == expect, "events in order %s, got %s" % (expect, seq))
    rj = [e for e in evs if e["event"] == "rejected"]
    if len(rj) == 5:
        want(rj[0].get("command") == "echo dup" and "already running" in rj[0].get("reason", ""),
             "the duplicate: its command and the error event's reason (got %s)" % rj[0])
        want(all("command" not in e and "argv" not in e for e in rj[1:]),
             "a line that did not parse: no command text (got %s)" % rj[1:])
        want("timeout_s" in rj[1].get("reason", ""), "r2: the reason names timeout_s (got %s)" % rj[1])
        want(rj[3].get("id", "") is None, "a line without an id: id null (got %s)" % rj[3])
        want(rj[4].get("id", "") is None and "longer than" in rj[4].get("reason", ""),
             "a line past 1 MiB: not read, id null (got %s)" % rj[4])
    errs = [e.get("message", "") for e in c.errors[n:]]
    for e, m in zip(rj, errs):
        want(e.get("reason") == m, "rejected's reason is the error event's message: %r, %r" % (e.get("reason"), m))


def tamper(log, argv):
    """A command cannot write, truncate, remove or reach the log."""
    c = spawn(argv)
    tries = {
        "append": "echo x >> /var/log/turninit/audit.jsonl",
        "truncate": ": > /var/log/turninit/audit.jsonl",
        "truncate-tool": "truncate -s 0 /var/log/turninit/audit.jsonl",
        "remove": "rm -f /var/log/turninit/audit.jsonl",
        "rename": "mv /var/log/turninit/audit.jsonl /tmp/a",
        "list-dir": "ls /var/log/turninit",
        "proc-fd": "ls /proc/1/fd",
        "proc-fd-write": "r=1; for n in $(seq 3 40); do echo x >> /proc/1/fd/$n && r=0; done; exit $r",
        "inherited-fd": "r=1; for n in $(seq 3 40); do echo x >&$n && r=0; done; exit $r",
        "keeper-fd": "r=1; for p in /proc/[0-9]*; do for f in $p/fd/*; do "
                     "[ -w \"$f\" ] && [ \"$(readlink $f)\" = /var/log/turninit/audit.jsonl ] && r=0; "
                     "done 2>/dev/null; done; exit $r",
    }
    for id, cmd in tries.items():
        r = c.run(cmd, id=id, timeout=60)
        code = r.exit["code"] if r.exit else None
        want(code not in (0, None), "%s fails (code %s, stderr %r)" % (id, code, bytes(r.stderr[-120:])))
    status = c.close(timeout=60)
    want(status == 0, "serve exits 0")
    evs = read_log(log)
    want(sum(e["event"] == "exec" for e in evs) == len(tries), "every try logged")
    want(evs and evs[0]["event"] == "turn_start" and evs[-1]["event"] == "turn_end",
         "the log is whole: turn_start first, turn_end last")
    want(b"\nx\n" not in open(log, "rb").read(), "no line written by a command")


def killed(log, name, argv):
    """SIGKILL of the container mid-command: what was written parses."""
    c = spawn(argv)
    c.run("echo first", id="c1", timeout=60)
    c.exec("echo started; sleep 1000", id="long")   # running when the container is killed
    c.wait("long", timeout=60, until=lambda r: r.pid is not None)
    # the exec line is written before the command starts
    deadline = time.monotonic() + 60
    while b'"id":"long"' not in open(log, "rb").read() and time.monotonic() < deadline:
        time.sleep(0.1)
    subprocess.run(["timeout", "60", "podman", "kill", "-s", "KILL", name],
                   stdout=subprocess.DEVNULL, check=False)
    try:
        c.proc.wait(60)
    except subprocess.TimeoutExpired:
        want(False, "the container ends within 60 s of SIGKILL")
        c.proc.kill()
    evs = read_log(log)
    seq = [(e["event"], e.get("id")) for e in evs]
    want(seq == [("turn_start", None), ("exec", "c1"), ("exit", "c1"), ("exec", "long")],
         "the killed turn's log: %s" % seq)


def broken(argv):
    """A log that stops taking lines after turn_start: later execs run nothing.
    fd 3 of the server is a pipe; the first line is read, then the read end
    closed, so every later write fails with EPIPE."""
    r, w = os.pipe()
    proc = subprocess.Popen(["bash", "-c", 'exec 3>&"$0"; exec "$@"', str(w)] + argv,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(w,))
    os.close(w)
    c = Client(proc.stdout.fileno(), proc.stdin.fileno(), proc=proc)
    first = b""
    while not first.endswith(b"\n"):
        b = os.read(r, 4096)
        if not b:
            break
        first += b
    want(b'"event":"turn_start"' in first, "the turn_start line on the pipe: %r" % first[:80])
    os.close(r)
    res = c.run("echo RAN", id="c1", timeout=60)
    want(res.error is not None and "audit log" in res.error.get("message", ""),
         "c1 refused: %s" % (res.error or res.exit))
    want(b"RAN" not in res.stdout, "c1 did not run")
    res = c.run("echo RAN", id="c2", timeout=60)
    want(res.error is not None, "c2 refused too")
    want(c.close(timeout=60) == 0, "serve exits 0")


def mcp(log, argv):
    """turninit mcp with an audit log: each tools/call result's
    _meta["turninit/audit_head"] is the digest of its exit line, and the log's
    chain is whole."""
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(msg):
        p.stdin.write(json.dumps(msg).encode() + b"\n")
        p.stdin.flush()

    def reply(want_id):
        while True:
            line = p.stdout.readline()
            if not line:
                raise Closed("mcp: end of stdout")
            m = json.loads(line)
            if m.get("id") == want_id:
                return m

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "cases.py", "version": "1"}}})
    reply(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    heads = []
    for n, command in enumerate(["echo one", "echo two >&2; exit 3"], 2):
        send({"jsonrpc": "2.0", "id": n, "method": "tools/call",
              "params": {"name": "bash", "arguments": {"command": command}}})
        r = reply(n).get("result", {})
        heads.append(r.get("_meta", {}).get("turninit/audit_head"))
    p.stdin.close()
    want(p.wait(timeout=60) == 0, "mcp exits 0 at the end of stdin")
    evs = read_log(log)
    exits = [e for e in evs if e["event"] == "exit"]
    want(len(exits) == 2, "two exit lines (got %d)" % len(exits))
    want(heads == [line_digest(e) for e in exits],
         "the results' _meta heads %s are the digests of the exit lines %s"
         % (heads, [line_digest(e) for e in exits]))
    want(evs and evs[0].get("mode") == "mcp", "turn_start mode mcp")


def final_event(log, c, evs, code):
    """The turn_end event ends the stream, after every exit event, with
    turninit's exit status and the log's final head: the digest of its last
    line, turn_end. Prints "head HEX" for audit-verify."""
    kinds = [e.get("event") for e in evs]
    want(kinds and kinds[-1] == "turn_end", "the last event is turn_end (got %s)" % kinds)
    want(kinds.count("turn_end") == 1, "one turn_end event (got %s)" % kinds)
    end = evs[-1] if evs else {}
    want(list(end) == ["event", "id", "exit_code", "audit_head"] and end.get("id") is None,
         "turn_end's keys and a null id (got %s)" % end)
    want(end.get("exit_code") == code, "turn_end's exit_code %s (got %s)" % (code, end.get("exit_code")))
    lines = read_log(log)
    want(lines and lines[-1]["event"] == "turn_end", "the log ends with turn_end")
    want(lines and end.get("audit_head") == line_digest(lines[-1]),
         "turn_end's audit_head %s is the digest of the log's last line %s"
         % (end.get("audit_head"), lines and line_digest(lines[-1])))
    print("head %s" % end.get("audit_head"))


def final_head(log, argv):
    """serve with --audit-changes: after the end of stdin, the last event on
    stdout carries the final head, written before stdout closes."""
    c = spawn(argv)
    r = c.run("echo new > NEW.md", timeout=60)
    want(r.exit is not None and r.exit["code"] == 0, "the command ran (got %s)" % r.exit)
    c.proc.stdin.close()
    evs = c.drain(timeout=60)
    want(c.proc.wait(timeout=60) == 0, "serve exits 0 at the end of stdin")
    final_event(log, c, evs, 0)


def final_head_listen(log, path, name):
    """listen with --audit-changes: a connection still open when SIGTERM ends
    the turn gets the turn_end event last, then the connection closes. The
    peer connects as uid 1000, the manifest's (SO_PEERCRED takes the
    effective uid at connect(2))."""
    import socket
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    os.setegid(1000)
    os.seteuid(1000)
    try:
        sock.connect(path)
    finally:
        os.seteuid(0)
        os.setegid(0)
    c = Client(sock.fileno(), sock.fileno(), sock=sock)
    r = c.run("echo new > NEW.md", timeout=60)
    want(r.exit is not None and r.exit["code"] == 0, "the command ran (got %s)" % r.exit)
    subprocess.run(["timeout", "120", "podman", "stop", "-t", "10", name],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    evs = c.drain(timeout=60)
    final_event(log, c, evs, 143)


def main(a):
    cmd = a[0]
    sep = a.index("--") if "--" in a else len(a)
    args, argv = a[1:sep], a[sep + 1:]
    try:
        if cmd == "statuses":
            statuses(args[0], args[1], args[2], argv)
        elif cmd == "tamper":
            tamper(args[0], argv)
        elif cmd == "killed":
            killed(args[0], args[1], argv)
        elif cmd == "broken":
            broken(argv)
        elif cmd == "lines":
            read_log(args[0])
        elif cmd == "mcp":
            mcp(args[0], argv)
        elif cmd == "rejected":
            rejected(args[0], argv)
        elif cmd == "final-head":
            final_head(args[0], argv)
        elif cmd == "final-head-listen":
            final_head_listen(args[0], args[1], args[2])
        else:
            sys.exit("cases.py: unknown case " + cmd)
    except (Closed, TimeoutError, KeyError, TypeError) as e:
        want(False, "the session ran: %r" % e)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
