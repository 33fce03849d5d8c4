#!/usr/bin/env python3
"""stormsession.py - a serve session with a connect storm beside a normal
command, for the network suite (net-notify-connect-storm).

usage: stormsession.py STORM NORMAL BOUND_MS -- COMMAND...
Runs COMMAND (a `podman run -i ... serve`) and sends the request line STORM;
once that command's output holds "storming", sends NORMAL and times it from
the request to its exit event. Prints, in this order:
  "normal stdout LINE" for each line of NORMAL's output,
  "normal exit CODE within BOUND_MS ms: yes|no (N ms)"  (N not compared),
  "storm stdout LINE" for each line of STORM's output,
  "storm exit CODE",
  "net refused N" (the refusals' net events of the session),
  "net other N" (its other net events: allowed, closed);
an error event ends the session. Exits with COMMAND's status.
"""
import base64, json, subprocess, sys, time

storm, normal, bound = sys.argv[1], sys.argv[2], int(sys.argv[3])
cmd = sys.argv[5:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def send(line):
    p.stdin.write(line + "\n")
    p.stdin.flush()


send(storm)
out = {"storm": [], "normal": []}
codes = {}
sent_at = took = None
refused = other = 0
for line in p.stdout:
    e = json.loads(line)
    kind = e.get("event")
    if kind == "output" and e["id"] in out:
        text = base64.b64decode(e["data"]).decode(errors="replace")
        out[e["id"]] += ["%s %s" % (e["stream"], t) for t in text.splitlines()]
        if e["id"] == "storm" and sent_at is None and "storming" in text:
            sent_at = time.monotonic()
            send(normal)
    elif kind == "exit" and e["id"] in out:
        codes[e["id"]] = e["code"]
        if e["id"] == "normal":
            took = int((time.monotonic() - sent_at) * 1000)
        if len(codes) == 2:
            break
    elif kind == "net":
        if e.get("verdict") == "refused":
            refused += 1
        else:
            other += 1
    elif kind == "error":
        print("error " + json.dumps(e, sort_keys=True))
        break
p.stdin.close()
for t in out["normal"]:
    print("normal " + t)
if "normal" in codes:
    print("normal exit %s within %d ms: %s (%d ms)" % (codes["normal"], bound,
                                                      "yes" if took <= bound else "no", took))
for t in out["storm"]:
    print("storm " + t)
print("storm exit %s" % codes.get("storm"))
print("net refused %d" % refused)
print("net other %d" % other)
sys.exit(p.wait(timeout=60))
