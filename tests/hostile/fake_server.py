#!/usr/bin/env python3
"""fake_server.py - a listen socket that is not turninit, for the `turninit
call` rows of tests/integration/hostile.sh: fake_server.py SOCK OUT [UID]

Binds SOCK (mode 0666) as root and calls listen(2) with UID (when given) as its
effective uid and gid: SO_PEERCRED shows a client the credentials of whoever
called listen, so the server looks like one a command of that uid made. Creates OUT.ready once it
listens. It accepts one connection, writes to OUT every byte it reads up to the
first newline (nothing, when the client sends nothing), answers with an exit
event of code 0, and exits. 30 s bound on every wait. Exits 120 on a setup error.
"""
import json
import os
import socket
import sys

WAIT = 30


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: fake_server.py SOCK OUT [UID]", file=sys.stderr)
        sys.exit(120)
    path, out = argv[0], argv[1]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chmod(path, 0o666)
    if len(argv) == 3:
        uid = int(argv[2])
        os.setegid(uid)
        os.seteuid(uid)
        s.listen(1)
        os.seteuid(0)
        os.setegid(0)
    else:
        s.listen(1)
    open(out, "wb").close()
    open(out + ".ready", "w").close()
    s.settimeout(WAIT)
    c, _ = s.accept()
    c.settimeout(WAIT)
    got = b""
    while b"\n" not in got:
        try:
            b = c.recv(65536)
        except OSError:
            break
        if not b:
            break
        got += b
    with open(out, "wb") as f:
        f.write(got.split(b"\n")[0])
    ev = {"event": "exit", "id": "call", "code": 0, "signal": None, "timed_out": False,
          "truncated": False, "duration_ms": 0}
    try:
        c.sendall(json.dumps(ev, separators=(",", ":")).encode() + b"\n")
    except OSError:
        pass
    c.close()


if __name__ == "__main__":
    main(sys.argv[1:])
