#!/usr/bin/env python3
"""session.py - a serve session for the suites (lib.sh serve_session).

usage: session.py FIRST [MARK SECOND] -- COMMAND...
Runs COMMAND (a `podman run -i ... serve`), sends the request line FIRST, then,
once a command's output holds MARK, SECOND; stdin stays open until every
command sent has exited (end of stdin would end the turn and cancel what
runs). Prints "ID STREAM LINE" for each output line (decoded) and "ID exit
CODE SIGNAL" for each exit, "net VERDICT HOST:PORT REASON" for each decision
of turninit's proxy, sorted; an error event ends the session. Exits
with COMMAND's status. With SESSION_NET_ID set in the environment, a decision
is "net VERDICT REQUEST HOST:PORT id=ID" instead: the command it names.
"""
import base64, json, os, subprocess, sys
first, rest = sys.argv[1], sys.argv[2:]
second = mark = None
if rest[0] != "--":
    mark, second, rest = rest[0], rest[1], rest[2:]
p = subprocess.Popen(rest[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def send(line):
    p.stdin.write(line + "\n"); p.stdin.flush()
send(first)
sent, exited, out = 1, 0, []
for line in p.stdout:
    e = json.loads(line)
    if e.get("event") == "output":
        text = base64.b64decode(e["data"]).decode(errors="replace")
        out += ["%s %s %s" % (e["id"], e["stream"], t) for t in text.splitlines()]
        if mark and mark in text:
            send(second); sent += 1; mark = None
    elif e.get("event") == "exit":
        out.append("%s exit %s %s" % (e["id"], e["code"], e["signal"]))
        exited += 1
        if exited == sent and mark is None:
            break
    elif e.get("event") == "net" and os.environ.get("SESSION_NET_ID"):
        out.append("net %s %s %s:%s id=%s" % (e["verdict"], e["request"], e["host"], e["port"], e["id"]))
    elif e.get("event") == "net":
        out.append("net %s %s:%s %s" % (e["verdict"], e["host"], e["port"], e["reason"]))
    elif e.get("event") == "error":
        out.append("error " + json.dumps(e, sort_keys=True))
        break
p.stdin.close()
print("\n".join(sorted(out)))
sys.exit(p.wait(timeout=30))
