#!/usr/bin/env python3
"""withfd.py - exec a program with fd 3 set up as one kind of audit log, for
the `--audit-log fd:3` rows of tests/integration/hostile.sh:

    withfd.py KIND [ARG...] -- PROGRAM [ARG]...

  file PATH        PATH opened for appending (created mode 0600)
  deleted PATH     the same, then PATH removed: an fd of a deleted file
  detached DIR     a tmpfs mounted on DIR, DIR/a.jsonl opened, the tmpfs
                   lazily unmounted: a file whose /proc/self/fd path names
                   nothing (run it in a mount namespace of its own)
  fifo PATH OUT    the FIFO PATH opened for writing; a reader child copies
                   what comes to OUT
  pipe OUT         a pipe; a reader child copies it to OUT
  socket OUT       a socketpair; a reader child copies it to OUT
  eventfd          an eventfd: an fd that is no file, pipe or socket

A reader child copies until end of file (every writer gone), then exits; the
suite polls OUT for the last line it waits for. Exits 120 on a usage or setup
error, with one line on stderr.
"""
import os
import socket
import subprocess
import sys


def die(msg):
    print("withfd: %s" % msg, file=sys.stderr)
    sys.exit(120)


def only(keep):
    """Close every fd but keep; 0, 1 and 2 become /dev/null. A reader child
    holds nothing of its parent's: not the write end it waits to see closed,
    not a lock or a pipe of whoever started the suite."""
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd != keep:
            try:
                os.close(fd)
            except OSError:
                pass  # the listing's own fd, closed already


def reader(rfd, out):
    """Fork a child that copies rfd to the file out until end of file."""
    if os.fork() == 0:
        try:
            only(rfd)
            with open(out, "ab", buffering=0) as f:
                while True:
                    b = os.read(rfd, 65536)
                    if not b:
                        break
                    f.write(b)
        finally:
            os._exit(0)
    os.close(rfd)


def main(argv):
    if "--" not in argv or not argv:
        die("usage: withfd.py KIND [ARG...] -- PROGRAM [ARG]...")
    cut = argv.index("--")
    kind, args, prog = argv[0], argv[1:cut], argv[cut + 1:]
    if not prog:
        die("no program")
    append = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    if kind == "file" and len(args) == 1:
        fd = os.open(args[0], append, 0o600)
    elif kind == "deleted" and len(args) == 1:
        fd = os.open(args[0], append, 0o600)
        os.unlink(args[0])
    elif kind == "detached" and len(args) == 1:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", args[0]], check=True)
        fd = os.open(os.path.join(args[0], "a.jsonl"), append, 0o600)
        subprocess.run(["umount", "-l", args[0]], check=True)
    elif kind == "fifo" and len(args) == 2:
        if os.fork() == 0:
            only(-1)
            reader(os.open(args[0], os.O_RDONLY), args[1])
            os._exit(0)
        fd = os.open(args[0], os.O_WRONLY)
    elif kind == "pipe" and len(args) == 1:
        r, fd = os.pipe()
        reader(r, args[0])
    elif kind == "socket" and len(args) == 1:
        a, b = socket.socketpair()
        fd = os.dup(b.fileno())
        reader(os.dup(a.fileno()), args[0])
        a.close()
        b.close()
    elif kind == "eventfd" and not args:
        fd = os.eventfd(0)
    else:
        die("unknown kind or wrong arguments: %s %s" % (kind, " ".join(args)))
    if fd != 3:
        os.dup2(fd, 3, inheritable=True)
        os.close(fd)
    os.set_inheritable(3, True)
    try:
        os.execvp(prog[0], prog)
    except OSError as e:
        die("exec %s: %s" % (prog[0], e))


if __name__ == "__main__":
    main(sys.argv[1:])
