#!/usr/bin/env python3
"""mcp_session.py - `turninit mcp` sessions for the valgrind suite
(tests/integration/valgrind.sh): JSON-RPC 2.0, one message a line.

    mcp_session.py -- SERVER_ARGV...           every kind of message, then end of stdin
    mcp_session.py --sigint -- SERVER_ARGV...  SIGINT while a call runs
    mcp_session.py --bridge MANIFEST -- SERVER_ARGV...
                                               turninit mcp --socket: the calls, a
                                               cancel, then end of stdin

The server is turninit under valgrind as PID 1 of a namespace of its own (the
grandchild of SERVER_ARGV's process: timeout, unshare, then it). The full
session wants a manifest with limits.result_bytes 256. With --bridge the server
is `turninit mcp --socket PATH` (the bridge), and its answers come from a
`turninit listen` whose manifest is the JSON file MANIFEST: the tool description
must say its workdir and limits.result_bytes, and a long output is cut only when
that limit is small (at most 64 KiB). Every step checks what came back; the
first mismatch prints "mcp_session: STEP: WHY" and exits 1. At the end the
server's exit status is printed as "server exit N". Standard library only;
bounds are wide (valgrind is twenty to fifty times slower).
"""
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

WAIT = 60  # seconds: the bound of every wait
# Polls (bounded) until a `sleep 1000` runs, or until none is left (then: left=N).
# (The sleep ends only when the session ends it, however slow the machine.)
SLEEP_UP = "for i in $(seq 300); do ps -eo args | grep -q '^sleep 1000' && break; sleep 0.1; done"
NO_SLEEP = ("for i in $(seq 300); do n=$(ps -eo args | grep -c '^sleep 1000'); "
            "[ \"$n\" = 0 ] && break; sleep 0.1; done; echo left=$n")


def fail(step, why):
    print("mcp_session: %s: %s" % (step, why))
    sys.exit(1)


def want(step, got, expected):
    if got != expected:
        fail(step, "got %r, want %r" % (got, expected))


class Server:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.buf = b""
        self.eof = False

    def send(self, msg):
        line = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
        self.p.stdin.write(line + b"\n")
        self.p.stdin.flush()

    def next(self, step):
        """The next message (a dict), or None at end of stdout."""
        deadline = time.monotonic() + WAIT
        while b"\n" not in self.buf and not self.eof:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                fail(step, "no line within %d s" % WAIT)
            data = os.read(self.p.stdout.fileno(), 65536)
            self.buf += data
            self.eof = not data
        if b"\n" not in self.buf:
            want(step + ": end of stdout", self.buf, b"")
            return None
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            fail(step, "not JSON: %r" % line)

    def reply(self, step, id, progress=None):
        """The next message, a reply to id; notifications before it go to progress."""
        while True:
            m = self.next(step)
            if m is None:
                fail(step, "end of stdout before the reply to %r" % id)
            if "id" in m:
                want(step + ": id", m["id"], id)
                want(step + ": jsonrpc", m.get("jsonrpc"), "2.0")
                return m
            if progress is None:
                fail(step, "a notification: %r" % m)
            progress.append(m)

    def wait(self, step):
        """End of stdout, then the server's exit status."""
        m = self.next(step)
        if m is not None:
            fail(step, "a message after the last reply: %r" % m)
        try:
            return self.p.wait(WAIT)
        except subprocess.TimeoutExpired:
            fail(step, "no exit within %d s" % WAIT)


def rpc(id, method, params=None):
    m = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        m["params"] = params
    return m


def call(id, arguments, name="bash", **more):
    return rpc(id, "tools/call", dict(name=name, arguments=arguments, **more))


def tool(step, m, text, is_error):
    """A tool result of text; with an audit log (the suite gives turninit
    one) a call that ran also carries the log's head in _meta."""
    r = dict(m.get("result") or {})
    meta = r.pop("_meta", None)
    if meta is not None:
        head = meta.get("turninit/audit_head") if isinstance(meta, dict) else None
        if not (isinstance(head, str) and len(head) == 64 and all(c in "0123456789abcdef" for c in head)):
            fail(step, "_meta %r: not {\"turninit/audit_head\": 64 hex digits}" % (meta,))
    want(step, r, {"content": [{"type": "text", "text": text}], "isError": is_error})


def error(step, m, code):
    want(step + ": error code", (m.get("error") or {}).get("code"), code)


def handshake(s):
    """initialize, ping, tools/list; the tools."""
    s.send(rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "vg", "version": "1"}}))
    r = s.reply("initialize", 1)["result"]
    want("initialize: version", r["protocolVersion"], "2025-06-18")
    want("initialize: server", r["serverInfo"]["name"], "turninit")
    s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    s.send(rpc("p", "ping"))
    want("ping", s.reply("ping", "p")["result"], {})
    s.send(rpc(2, "tools/list"))
    tools = s.reply("tools/list", 2)["result"]["tools"]
    want("tools/list", [(t["name"], t["inputSchema"]["required"]) for t in tools], [("bash", ["command"])])
    return tools


def exit3(s):
    s.send(call(10, {"command": "echo out; echo err >&2; exit 3", "timeout": 30}))
    tool("exit 3", s.reply("exit 3", 10), "out\nerr\n[exit code 3]\n", True)


def long_output(s, limit):
    """Longer than limits.result_bytes: the first and last limit/2 bytes."""
    half, n = limit // 2, 1000
    out = "".join("%d\n" % i for i in range(1, n + 1))
    while len(out) <= 2 * limit:
        n *= 2
        out = "".join("%d\n" % i for i in range(1, n + 1))
    s.send(call("long", {"command": "seq %d" % n}))
    tool("long output", s.reply("long output", "long"),
         out[:half] + "\n[... %d bytes of output cut here: a result keeps the first %d and the "
         "last %d bytes ...]\n" % (len(out) - 2 * half, half, half) + out[-half:], False)


def cancel(s):
    """A cancelled call ends its command and is never answered."""
    s.send(call(12, {"command": "sleep 1000"}))
    s.send(call(13, {"command": SLEEP_UP + "; echo up"}))
    tool("sleep 1000 runs", s.reply("sleep 1000 runs", 13), "up\n", False)
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 12, "reason": "vg"}})
    s.send(call(14, {"command": NO_SLEEP}))
    tool("cancel", s.reply("cancel", 14), "left=0\n", False)
    s.send(rpc(15, "ping"))
    s.reply("ping after cancel", 15)


def session(s):
    handshake(s)

    # Bad messages: each answered with its error (id null when there is none to
    # give), or not at all (a response, an unknown notification, a cancel of no call).
    for line, id, code in ((b"{not json", None, -32700), (b"[1,2]", None, -32600),
                           (b'{"jsonrpc":"1.0","id":3,"method":"ping"}', 3, -32600),
                           (json.dumps(rpc(4, "resources/list")).encode(), 4, -32601),
                           (json.dumps(call(5, {"command": "true"}, name="nope")).encode(), 5, -32602),
                           (json.dumps(rpc(6, "tools/call", {"arguments": {}})).encode(), 6, -32602)):
        s.send(line)
        error("bad message %r" % line, s.reply("bad message %r" % line, id), code)
    s.send({"jsonrpc": "2.0", "id": 99, "result": {}})
    s.send({"jsonrpc": "2.0", "method": "notifications/whatever"})
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 404}})

    # Invalid arguments: a tool error the model can read.
    for id, args, text in ((7, {}, 'the argument "command" is required: a non-empty string'),
                           (8, {"command": "true", "timeout": 0},
                            'the argument "timeout" must be an integer of at least 1 (seconds; at most 600 are used)'),
                           ("a b", {"command": "true", "cwd": "/"},
                            'unknown argument "cwd": the tool takes "command" and "timeout"')):
        s.send(call(id, args))
        tool("arguments %r" % args, s.reply("arguments %r" % args, id), text, True)

    exit3(s)
    long_output(s, 256)   # the manifest's limits.result_bytes

    # The command runs until a progress notification has come (then the file
    # it waits for is made), however slow the machine.
    seen = []
    d = tempfile.mkdtemp(prefix="turninit-vg-progress.")
    try:
        os.chmod(d, 0o755)
        go = os.path.join(d, "go")
        s.send(call(11, {"command": "echo one; until [ -e %s ]; do sleep 0.1; done; echo two" % go},
                    _meta={"progressToken": "tok"}))
        m = s.next("progress")
        if m is None or "id" in m:
            fail("progress", "no notifications/progress before %r" % m)
        seen.append(m)
        open(go, "w").close()
        tool("progress", s.reply("progress", 11, seen), "one\ntwo\n", False)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    want("progress notifications", seen,
         [{"jsonrpc": "2.0", "method": "notifications/progress",
           "params": {"progressToken": "tok", "progress": i + 1, "message": "one"}}
          for i in range(len(seen))])

    cancel(s)
    s.p.stdin.close()
    return s.wait("end of stdin")


def bridge(manifest):
    """turninit mcp --socket: what the listen server's manifest says, its calls."""
    with open(manifest) as f:
        m = json.load(f)
    limit = m.get("limits", {}).get("result_bytes", 30000)

    def run(s):
        desc = handshake(s)[0]["description"]
        for part in ("Every call starts in %s. " % m["workdir"],
                     "Output longer than %d bytes " % limit):
            if part not in desc:
                fail("tools/list: description", "no %r in %r" % (part, desc))
        exit3(s)
        if limit <= 65536:
            long_output(s, limit)
        cancel(s)
        s.p.stdin.close()
        return s.wait("end of stdin")
    return run


def sigint(s):
    s.send(call(1, {"command": "echo started; sleep 1000"}))
    s.send(call(2, {"command": SLEEP_UP}))
    tool("sleep 1000 runs", s.reply("sleep 1000 runs", 2), "(no output)", False)
    # PID 1 of the namespace: the grandchild of timeout (its child is unshare).
    kids = {}
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            kids.setdefault(ppid, []).append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    p1 = [g for c in kids.get(s.p.pid, []) for g in kids.get(c, [])]
    want("PID 1 of the namespace", len(p1), 1)
    os.kill(p1[0], signal.SIGINT)
    tool("SIGINT", s.reply("SIGINT", 1), "started\n[stopped: the session ended while it ran (SIGTERM, then SIGKILL)]\n", True)
    return s.wait("after SIGINT")


def main(argv):
    mode = session
    if argv[:1] == ["--sigint"]:
        mode, argv = sigint, argv[1:]
    elif argv[:1] == ["--bridge"] and len(argv) > 1:
        mode, argv = bridge(argv[1]), argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    print("server exit %d" % mode(Server(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
