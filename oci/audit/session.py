#!/usr/bin/env python3
"""session.py - run an audit session: each line of COMMANDS (a file, "#" lines
and blank lines skipped) is sent as one exec request to `turninit serve` in the
container started by SERVER_ARGV, one after the other; prints each command,
its output and how it ended.

    session.py COMMANDS -- SERVER_ARGV...

Exits 0 when the session ran (whatever the commands' statuses), 1 when the
server refused or went away. Uses the reference client tests/serve/client.py.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "serve"))
from client import Client, Closed  # noqa: E402


def main(argv):
    if len(argv) < 3 or argv[1] != "--":
        sys.exit("usage: session.py COMMANDS -- SERVER_ARGV...")
    with open(argv[0]) as f:
        commands = [l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")]
    c = Client.spawn(argv[2:])
    try:
        for cmd in commands:
            r = c.run(cmd, timeout=120)
            print("$ " + cmd)
            sys.stdout.write(r.stdout.decode(errors="replace"))
            sys.stdout.write(r.stderr.decode(errors="replace"))
            if r.error is not None:
                print("[refused: %s]" % r.error["message"])
            elif r.exit["signal"] is not None:
                print("[killed by signal %d]" % r.exit["signal"])
            else:
                print("[exit %d]" % r.exit["code"])
            sys.stdout.flush()
    except (Closed, TimeoutError) as e:
        print("session: %s" % e, file=sys.stderr)
        c.proc.kill()
        return 1
    return 0 if c.close(timeout=60) == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
