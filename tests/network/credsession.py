#!/usr/bin/env python3
"""credsession.py - a serve session that sends its requests one at a time,
each once the one before it is answered (the network suite's tests of the
credential request, docs/protocol.md "credential").

usage: credsession.py OUT REQUEST... -- COMMAND...
Runs COMMAND (a `podman run -i ... serve`) and sends each REQUEST line in
turn: the next once the one before it has its last answer (an exec its exit
or error event, any other request its first event). A REQUEST that is not
JSON is sent as it is and answered by an error event. Writes OUT.events (the
events as they came, the turn's last ones included), OUT.output (one line a
request: "ID credential NAME", "ID error MESSAGE", "ID exit CODE", and a
command's output decoded, each line "ID STREAM LINE") and OUT.stderr. Exits
with COMMAND's status.
"""
import base64, json, subprocess, sys
out, rest = sys.argv[1], sys.argv[2:]
split = rest.index("--")
reqs, cmd = rest[:split], rest[split + 1:]
with open(out + ".events", "w") as raw, open(out + ".output", "w") as dec, \
        open(out + ".stderr", "w") as err:
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
    for req in reqs:
        try:
            op = json.loads(req).get("op")
        except ValueError:
            op = None
        p.stdin.write(req + "\n"); p.stdin.flush()
        for line in p.stdout:
            raw.write(line)
            e = json.loads(line)
            kind = e.get("event")
            if kind == "output":
                for t in base64.b64decode(e["data"]).decode(errors="replace").splitlines():
                    dec.write("%s %s %s\n" % (e["id"], e["stream"], t))
                continue
            if kind == "net":
                continue
            if kind == "credential":
                dec.write("%s credential %s\n" % (e["id"], e["name"]))
            elif kind == "error":
                dec.write("%s error %s\n" % (e["id"], e["message"]))
            elif kind == "exit":
                dec.write("%s exit %s\n" % (e["id"], e["code"]))
            if op != "exec" or kind in ("exit", "error"):
                break
    p.stdin.close()
    raw.writelines(p.stdout)   # the turn's end: turn_end
    sys.exit(p.wait(timeout=60))
