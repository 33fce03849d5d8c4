#!/usr/bin/env python3
"""pty-drive.py WAIT SEND TIMEOUT -- ARGV...: run ARGV on a new pty (as a user's
terminal would: podman run -it), wait until its output holds WAIT, write SEND
(Python escapes: \\n, \\x03 for Ctrl-C, \\x04 for Ctrl-D), then read to the end.
Prints everything it read (raw, \\r kept) and exits with ARGV's status (128+N for
a signal); 124 when TIMEOUT seconds pass first."""
import os, pty, select, sys, time

def main():
    wait, send, limit = sys.argv[1].encode(), sys.argv[2].encode().decode("unicode_escape").encode("latin-1"), float(sys.argv[3])
    argv = sys.argv[5:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    deadline = time.monotonic() + limit
    out, sent = b"", False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            sys.stdout.write(out.decode("latin-1"))
            return 124
        r, _, _ = select.select([fd], [], [], min(left, 0.1))
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                chunk = b""
            if not chunk:
                break
            out += chunk
        if not sent and wait in out:
            os.write(fd, send)
            sent = True
    _, st = os.waitpid(pid, 0)
    sys.stdout.write(out.decode("latin-1"))
    return os.waitstatus_to_exitcode(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st)

sys.exit(main())
