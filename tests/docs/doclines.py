#!/usr/bin/env python3
"""doclines.py - the shell lines of README.md and docs/, and how each is tested.

A block is a run of lines indented four spaces after a blank line (Markdown's
indented code), or a fenced block marked sh, bash or console. Blocks whose
first word is not a command (JSON, YAML, transcripts of events) are not shell
lines and are left out. tests/docs/ledger lists every shell block by its file
and its first and last lines, as written, and says how it is tested:

  run ENGINE       tests/integration/doclines.sh runs it as written under
                   ENGINE (podman, docker, ctr), in order; run keepid:
                   tests/integration/keepid.sh runs it as the rootless user;
  test NAME        the suite test NAME extracts and runs it as written;
  not-run WHY      why no suite can run it here (a systemd service, a cluster).

ledger lines: FILE<TAB>FIRST LINE<TAB>LAST LINE<TAB>HOW ("#" starts a comment).

usage: doclines.py check ROOT          every block in the ledger, every entry a block
       doclines.py feed FILE -- CMD...   (a "$ " transcript's run) CMD fed FILE's requests
       doclines.py emit ROOT ENGINE DIR  DIR/NN.sh for each run block of ENGINE,
                                       DIR/list: "NN FILE:LINE" a line
"""
import os
import re
import sys

FILES = ["README.md", "docs/deployment.md", "docs/packaging.md", "docs/audit.md",
         "docs/mcp.md", "docs/manifest.md"]
# a block is shell when its first word is one of these
COMMANDS = {"make", "mkdir", "minisign", "sh", "sed", "podman", "docker", "ctr", "test",
            "claude", "codex", "gemini", "systemctl", "containerd", "dockerd", "export",
            "kubectl", "npm", "python3", "turninit", "sudo", "git", "cp", "cd", "ls",
            "apt-get", "dpkg", "tar", "curl", "bash", "pi", "node", "oc", "turninit-build-image",
            "turninit-seal", "$"}
# What a run gives that the text leaves to the reader: the placeholders the
# text spells in capitals (IMAGE, HOSTDIR, LOGDIR), from the environment.
# Nothing else is replaced: the suite runs the lines in a container store of
# its own, so the images they name are never a user's.
def substitute(text, env):
    for name in ("IMAGE", "HOSTDIR", "LOGDIR"):
        if name in env:
            text = re.sub(r"\b%s\b" % name, env[name], text)
    return text


def transcript(body):
    """A "$ COMMAND" block: the command (with its continuation lines), the
    lines it is fed (JSON requests: {"op" ...), and the lines it answers."""
    cmd, feed, answer, i = [body[0][2:]], [], [], 1
    while cmd[-1].rstrip().endswith("\\") and i < len(body):
        cmd.append(body[i])
        i += 1
    for line in body[i:]:
        (feed if line.startswith('{"op"') else answer).append(line)
    return "\n".join(cmd), feed, answer


def blocks(root):
    out = []
    for f in FILES:
        path = os.path.join(root, f)
        if not os.path.exists(path):
            continue
        lines = open(path, encoding="utf-8").read().split("\n")
        i, fence = 0, None
        while i < len(lines):
            line = lines[i]
            m = re.match(r"^```\s*(\w*)", line)
            if m:
                lang, start, body = m.group(1), i + 1, []
                i += 1
                while i < len(lines) and not lines[i].startswith("```"):
                    body.append(lines[i])
                    i += 1
                if lang in ("sh", "bash", "console") and body:
                    out.append((f, start + 1, body))
                i += 1
                continue
            # indented code after a blank line; in a list item, six spaces
            m = re.match(r"^( {4}| {6})\S", line)
            if m and (i == 0 or lines[i - 1].strip() == ""):
                ind = len(m.group(1))
                if ind == 6 and not re.match(r"^\s*$", lines[i - 1]):
                    i += 1
                    continue
                start, body = i, []
                # a blank line ends a block: each paragraph of a code block
                # is a block of its own (podman's line, then Docker's)
                while i < len(lines) and lines[i].startswith(" " * ind) and lines[i].strip():
                    body.append(lines[i][ind:])
                    i += 1
                out.append((f, start + 1, body))
                continue
            i += 1
    shell = []
    for f, line, body in out:
        first = body[0].strip()
        word = first.split()[0] if first else ""
        if word in COMMANDS:
            shell.append((f, line, body))
    return shell


def run_feed(path, argv):
    """Run argv (a serve), send the request lines of path, print what it
    writes, and close its stdin once each request has its exit event (or
    an error event comes); its exit status."""
    import json, subprocess
    reqs = [l for l in open(path).read().split("\n") if l.strip()]
    ids = {json.loads(r)["id"] for r in reqs}
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for r in reqs:
        p.stdin.write(r + "\n")
    p.stdin.flush()
    for line in p.stdout:
        sys.stdout.write(line)
        e = json.loads(line)
        if e.get("event") == "exit":
            ids.discard(e.get("id"))
        if not ids or e.get("event") == "error":
            break
    p.stdin.close()
    sys.stdout.write(p.stdout.read())
    return p.wait()


def ledger(root):
    entries = []
    for n, raw in enumerate(open(os.path.join(root, "tests/docs/ledger"), encoding="utf-8"), 1):
        raw = raw.rstrip("\n")
        if not raw or raw.startswith("#"):
            continue
        parts = raw.split("\t")
        if len(parts) != 4:
            sys.exit(f"tests/docs/ledger:{n}: want FILE<TAB>FIRST LINE<TAB>LAST LINE<TAB>HOW, got {raw!r}")
        entries.append(tuple(parts))
    return entries


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd, root = sys.argv[1], sys.argv[2]
    if cmd == "feed":
        if len(sys.argv) < 5 or sys.argv[3] != "--":
            sys.exit(__doc__)
        sys.exit(run_feed(root, sys.argv[4:]))
    found = blocks(root)
    led = ledger(root)
    key = {(f, b[0].rstrip(), b[-1].rstrip()): (f, ln, b) for f, ln, b in found}
    if cmd == "check":
        bad = 0
        seen = set()
        for f, first, last, how in led:
            if (f, first, last) not in key:
                print(f"ledger: {f}: no shell block runs from {first!r} to {last!r} (the docs changed: update tests/docs/ledger)")
                bad += 1
            seen.add((f, first, last))
            if not re.match(r"^(run (podman|docker|ctr|keepid|pair|host)|test [\w-]+|not-run .+)$", how):
                print(f"ledger: {f}: {first!r}: how {how!r} is not run ENGINE, test NAME or not-run WHY")
                bad += 1
        for (f, first, last), (_, ln, _) in key.items():
            if (f, first, last) not in seen:
                print(f"{f}:{ln}: a shell block the ledger does not list:\n{f}\t{first}\t{last}\t")
                bad += 1
        print(f"{len(found)} shell blocks, {len(led)} ledger entries, {bad} problems")
        sys.exit(1 if bad else 0)
    if cmd == "emit":
        engine, out = sys.argv[3], sys.argv[4]
        env = dict(os.environ)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "list"), "w") as lst:
            n = 0
            for f, first, last, how in led:
                if how != f"run {engine}" or (f, first, last) not in key:
                    continue
                _, ln, body = key[(f, first, last)]
                n += 1
                name = f"{n:02d}"
                with open(os.path.join(out, name + ".sh"), "w") as sh:
                    if body[0].startswith("$ "):
                        # the command as written, fed the transcript's
                        # requests by "feed", which keeps its stdin open
                        # until each has its exit (end of stdin would end
                        # the turn and cancel them)
                        cmd, feed, answer = transcript(body)
                        fpath = os.path.abspath(os.path.join(out, name + ".feed"))
                        with open(fpath, "w") as fd:
                            fd.write("\n".join(feed) + "\n")
                        sh.write("python3 %s feed %s -- \\\n" % (os.path.abspath(__file__), fpath) +
                                 substitute(cmd, env) + "\n")
                        with open(os.path.join(out, name + ".answer"), "w") as a:
                            a.write("\n".join(answer) + "\n")
                    else:
                        sh.write(substitute("\n".join(body).rstrip("\n") + "\n", env))
                lst.write(f"{name} {f}:{ln}\n")
        sys.exit(0)
    sys.exit(__doc__)


if __name__ == "__main__":
    main()
