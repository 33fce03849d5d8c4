#!/usr/bin/env python3
"""stall.py - a listen-mode peer that stops reading must not hold the others,
for tests/integration/hostile.sh: stall.py SOCKET

Connection A shrinks its receive buffer, starts a command that writes 3 MB,
shuts down its write side (its end of the turn: the command is cancelled) and
never reads again. Then connection B runs `echo alive` and must get its exit
event, and a new connection C must get one too. Prints
"B: alive code=0 in N ms" and "C: alive code=0" (or what came instead) and
keeps A open until the end. Bounded waits only.
"""
import fcntl
import os
import socket
import struct
import sys
import termios
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "serve"))
from client import Client  # noqa: E402

WAIT = 60   # seconds: a bound a loaded machine does not reach


def queued(sock):
    """The bytes queued on sock, not read yet (SIOCINQ): nothing is read."""
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]


def run(c, name):
    t = time.monotonic()
    try:
        r = c.run("echo alive", timeout=WAIT)
        if r.exit is None:
            print("%s: no exit event: %r" % (name, r.error or r.events))
            return
        print("%s: %s code=%s in %d ms" % (name, r.stdout.decode().strip(), r.exit["code"],
                                           (time.monotonic() - t) * 1000))
    except TimeoutError:
        print("%s: no exit event within %d s" % (name, WAIT))


def main(path):
    a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    a.connect(path)
    b = Client.connect(path)
    a.sendall(b'{"op":"exec","id":"flood","command":"head -c 3000000 /dev/zero"}\n')
    # The flood fills A's socket: wait (bounded) until the bytes queued for A
    # stop growing, however slow the machine.
    t0 = time.monotonic()
    n, since = queued(a), time.monotonic()
    while time.monotonic() - since < 0.5 and time.monotonic() - t0 < WAIT:
        time.sleep(0.02)
        m = queued(a)
        if m != n or m == 0:
            n, since = m, time.monotonic()
    print("# %d bytes queued for A after %d ms" % (n, (time.monotonic() - t0) * 1000), file=sys.stderr)
    a.shutdown(socket.SHUT_WR)
    run(b, "B")
    run(Client.connect(path), "C")
    a.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
