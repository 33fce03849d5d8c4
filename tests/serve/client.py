#!/usr/bin/env python3
"""client.py - reference client of turninit's serve/listen protocol
(docs/protocol.md). Python 3.7+, standard library only.

A Client wraps a pair of file descriptors: the pipes of
`podman run -i IMAGE serve` (Client.spawn) or a connected unix socket
(Client.connect). Requests are written whole, events are read line by line and
filed under their id, so several commands can run at once:

    c = Client.spawn(["podman", "run", "-i", "--rm", "--tmpfs",
                      "/home/agent:rw,mode=0700,size=64m,U", "IMAGE", "serve"])
    r = c.run("echo hi")            # r.stdout == b"hi\\n", r.exit["code"] == 0
    c.exec("sleep 100", id="s")     # returns at once
    c.cancel("s")
    c.wait("s").exit["signal"]      # 15
    c.close()                       # end of stdin: the turn ends

As a program it is a minimal `turninit call` for scripts and tests:
    client.py --socket PATH [--timeout S] [--] COMMAND...
    client.py --serve [--timeout S] -- COMMAND -- SERVER_ARGV...
prints the command's output and exits with its status (N, 128+signal, 124 for
a timeout, 125 for an error event or a lost connection).
"""
import base64
import itertools
import json
import os
import select
import socket
import subprocess
import sys
import time


class Closed(Exception):
    """The server closed the stream (EOF) before the awaited event."""


class Result:
    """One command: started event, collected output, exit or error event."""

    def __init__(self, id):
        self.id = id
        self.pid = None  # from the started event
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.exit = None  # the exit event (a dict)
        self.error = None  # an error event that ended this exec (did not start)
        self.events = []  # every event of this id, in order

    @property
    def done(self):
        return self.exit is not None or self.error is not None

    def status(self):
        """The exit status `turninit call` gives: N, 128+N, 124, or 125."""
        if self.error is not None or self.exit is None:
            return 125
        if self.exit["timed_out"]:
            return 124
        if self.exit["signal"] is not None:
            return 128 + self.exit["signal"]
        return self.exit["code"]


class Client:
    def __init__(self, rfd, wfd, proc=None, sock=None):
        self.rfd, self.wfd, self.proc, self.sock = rfd, wfd, proc, sock
        os.set_blocking(rfd, False)
        os.set_blocking(wfd, False)
        self.buf = bytearray()
        self.eof = False
        self.results = {}  # id -> Result of the latest exec with that id
        self.errors = []  # every error event, in order (id null ones too)
        self.log = []  # ("->" | "<-", line bytes): the raw transcript
        self.ids = (f"c{n}" for n in itertools.count(1))

    @classmethod
    def spawn(cls, argv, stderr=None):
        """Start a serve-mode server (e.g. podman run -i ... serve) on pipes."""
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=stderr)
        return cls(proc.stdout.fileno(), proc.stdin.fileno(), proc=proc)

    @classmethod
    def connect(cls, path):
        """Connect to a listen-mode server's socket."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        return cls(sock.fileno(), sock.fileno(), sock=sock)

    # --- the wire ---------------------------------------------------------------
    def send_raw(self, data):
        """Write bytes as they are (a bad line for tests; add the newline)."""
        self.log.append(("->", bytes(data)))
        view = memoryview(data)
        while view:
            r, w, _ = select.select([] if self.eof else [self.rfd], [self.wfd], [])
            if r:
                self._fill()  # keep reading: the server may be blocked writing
            if w:
                try:
                    view = view[os.write(self.wfd, view):]
                except BlockingIOError:
                    pass

    def send(self, obj):
        """Write one request: compact JSON and a newline."""
        self.send_raw(json.dumps(obj, separators=(",", ":")).encode() + b"\n")

    def _fill(self):
        try:
            data = os.read(self.rfd, 1 << 20)
        except BlockingIOError:
            return
        except ConnectionResetError:
            data = b""
        if data:
            self.buf += data
        else:
            self.eof = True

    def event(self, timeout=None):
        """The next event (a dict), filed under its id. Raises TimeoutError, or
        Closed at the end of the stream."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buf:
            if self.eof:
                raise Closed("the server closed the stream")
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError("no event within %s s" % timeout)
            if select.select([self.rfd], [], [], left)[0]:
                self._fill()
        line, _, rest = self.buf.partition(b"\n")
        self.buf = bytearray(rest)
        self.log.append(("<-", bytes(line) + b"\n"))
        ev = json.loads(line)
        self._file(ev)
        return ev

    def _file(self, ev):
        kind, id = ev.get("event"), ev.get("id")
        if kind == "error":
            self.errors.append(ev)
        r = self.results.get(id)
        if r is None:
            return
        r.events.append(ev)
        if kind == "started":
            r.pid = ev["pid"]
        elif kind == "output":
            getattr(r, ev["stream"]).extend(base64.b64decode(ev["data"]))
        elif kind == "exit":
            r.exit = ev
        elif kind == "error" and r.pid is None and not r.done:
            r.error = ev  # the exec itself was refused or could not start

    # --- requests ---------------------------------------------------------------
    def exec(self, command=None, argv=None, id=None, stdin=None, **fields):
        """Start a command; returns its id at once. stdin: bytes or None.
        fields: cwd, env, timeout_s (passed as they are)."""
        id = next(self.ids) if id is None else id
        req = {"op": "exec", "id": id}
        if argv is not None:
            req["argv"] = list(argv)
        else:
            req["command"] = command
        if stdin is not None:
            req["stdin"] = base64.b64encode(stdin).decode()
        req.update(fields)
        old = self.results.get(id)
        if old is None or old.done:
            # A running id stays filed: the server refuses the duplicate with an
            # error event, which then lands in self.errors only.
            self.results[id] = Result(id)
        self.send(req)
        return id

    def cancel(self, id):
        self.send({"op": "cancel", "id": id})

    def signal(self, id, name):
        self.send({"op": "signal", "id": id, "signal": name})

    def wait(self, id, timeout=None, until=None):
        """Read events until command id has ended (or until(result) is true);
        returns its Result."""
        deadline = None if timeout is None else time.monotonic() + timeout
        r = self.results[id]
        while not r.done and not (until and until(r)):
            self.event(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return r

    def run(self, command=None, timeout=None, **kw):
        """exec and wait: the Result with stdout, stderr and the exit event."""
        return self.wait(self.exec(command, **kw), timeout)

    def close(self, timeout=30):
        """End the stream: EOF on serve's stdin or the socket's write side.
        For serve, wait for the server and return its exit status."""
        if self.sock is not None:
            self.sock.shutdown(socket.SHUT_WR)
            return None
        self.proc.stdin.close()
        return self.proc.wait(timeout)

    def drain(self, timeout=None):
        """Read every event until the end of the stream; returns them."""
        evs = []
        try:
            while True:
                evs.append(self.event(timeout))
        except Closed:
            return evs


def main(args):
    timeout, path, server = None, None, None
    while args and args[0].startswith("--") and args[0] != "--":
        opt = args.pop(0)
        if opt == "--timeout":
            timeout = int(args.pop(0))
        elif opt == "--socket":
            path = args.pop(0)
        elif opt == "--serve":
            server = []
        else:
            sys.exit("client.py: unknown option " + opt)
    if args[:1] == ["--"]:
        args.pop(0)
    if server is not None:
        cut = args.index("--")
        args, server = args[:cut], args[cut + 1:]
    if not args or (path is None) == (server is None):
        sys.exit(__doc__.split("As a program")[1])
    try:
        c = Client.connect(path) if server is None else Client.spawn(server)
        kw = {"command": args[0]} if len(args) == 1 else {"argv": args}
        if timeout is not None:
            kw["timeout_s"] = timeout
        kw["env"] = dict(os.environ)
        id = c.exec(**kw)
        r = c.results[id]
        while not r.done:
            ev = c.event()
            if ev["event"] == "error" and ev.get("id") is None:
                print("client.py: " + ev["message"], file=sys.stderr)
                return 125
            for name, out in (("stdout", sys.stdout), ("stderr", sys.stderr)):
                data = getattr(r, name)
                out.buffer.write(data)
                out.flush()
                del data[:]
        if r.error is not None:
            print("client.py: " + r.error["message"], file=sys.stderr)
    except (OSError, Closed, ValueError) as e:
        print("client.py: %s" % e, file=sys.stderr)
        return 125
    return r.status()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
