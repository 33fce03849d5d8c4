#!/usr/bin/env python3
"""report.py WORK DOCS [--only gateway|notify] - docs/benchmarks.md and
docs/benchmarks/*.png from the raw figures of tests/bench/run.sh
(WORK/results.tsv, WORK/machine.tsv); with --only gateway, section 10 alone,
with --only notify section 11, put in place of its old text in
DOCS/benchmarks.md.

Every figure is a median over interleaved rounds, shown with the ratio to its
baseline and the spread (lowest and highest round). Plots are drawn by gnuplot
(Debian's gnuplot-nox, pngcairo). Standard library only."""
import collections
import os
import statistics
import subprocess
import sys

WORK, DOCS = sys.argv[1], sys.argv[2]
# --only SECTION: that section alone, spliced into the page (run.sh's BENCH_ONLY)
OPTS = {"only": sys.argv[4]} if sys.argv[3:4] == ["--only"] and len(sys.argv) == 5 else {}
PLOTS = os.path.join(DOCS, "benchmarks")
os.makedirs(PLOTS, exist_ok=True)

raw = collections.defaultdict(list)   # (section, variant, key) -> [values]
words = {}                            # (section, variant, key) -> text (a reason)
for line in open(os.path.join(WORK, "results.tsv")):
    sec, var, key, val = line.rstrip("\n").split("\t")
    try:
        raw[(sec, var, key)].append(float(val))
    except ValueError:
        words[(sec, var, key)] = val
machine = dict(l.rstrip("\n").split("\t", 1) for l in open(os.path.join(WORK, "machine.tsv")))


def vals(sec, var, key):
    v = raw.get((sec, var, key))
    if not v:
        sys.exit(f"report: no figures for {sec}/{var}/{key}")
    return v


def med(sec, var, key):
    return statistics.median(vals(sec, var, key))


def one(sec, key):
    return int(vals(sec, "all", key)[0])


def fmt(x, digits=3):
    """x with `digits` significant digits, thousands grouped."""
    if x == 0:
        return "0"
    if abs(x) >= 10 ** (digits - 1):
        return f"{x:,.0f}"
    s = f"{x:.{digits}g}"
    return s if "e" not in s else f"{x:.1f}"


def ratio(x, base):
    return f"{x / base:.2f}×"


goals = []   # (item, goal, figure, met)


def goal(item, text, figure, met):
    goals.append((item, text, figure, "**met**" if met else "**not met**"))


# plot NAME TITLE YLABEL ROWS [GOAL]: a bar per row (label, median, low, high).
def plot(name, title, ylabel, rows, goal_line=None, goal_label="", spread=True):
    data = os.path.join(WORK, name + ".dat")
    with open(data, "w") as f:
        for i, (label, m, lo, hi) in enumerate(rows):
            f.write(f'{i} "{label}" {m} {lo} {hi}\n')
    top = max(r[3] for r in rows + [("", 0, 0, goal_line or 0)]) * 1.25
    script = f"""
set terminal pngcairo size 760,420 font "DejaVu Sans,10"
set output "{os.path.join(PLOTS, name + '.png')}"
set title "{title}"
set ylabel "{ylabel}"
set style fill solid 0.6 border -1
set boxwidth 0.6
set grid ytics
set yrange [0:{top}]
set xrange [-0.6:{len(rows) - 0.4}]
set key top left
unset xtics
set xtics scale 0
"""
    if goal_line is not None:
        script += f'set arrow from -0.6,{goal_line} to {len(rows) - 0.4},{goal_line} nohead dt 2 lw 2 lc rgb "#c03030"\n'
        script += (f'set label "{goal_label}" at {len(rows) - 0.5},{goal_line} right '
                   f'offset 0,0.7 tc rgb "#c03030"\n')
    if spread:
        script += (f'plot "{data}" using 1:3:xtic(2) with boxes lc rgb "#4878a8" title "median", '
                   f'"" using 1:3:4:5 with yerrorbars lc rgb "black" pt 0 title "lowest, highest round", '
                   f'"" using 1:3:($3 >= 1000 ? sprintf("%.0f", $3) : sprintf("%.4g", $3)) with labels offset 0,1.2 notitle\n')
    else:
        script += (f'plot "{data}" using 1:3:xtic(2) with boxes lc rgb "#4878a8" notitle, '
                   f'"" using 1:3:($3 >= 1000 ? sprintf("%.0f", $3) : sprintf("%.4g", $3)) with labels offset 0,1.2 notitle\n')
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    return f"![{title}](benchmarks/{name}.png)"


def rows_of(sec, variants, key, scale, labels=None):
    out = []
    for v in variants:
        x = [y * scale for y in vals(sec, v, key)]
        out.append(((labels or {}).get(v, v), statistics.median(x), min(x), max(x)))
    return out


def table(header, rows):
    s = "| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n"
    for r in rows:
        s += "| " + " | ".join(str(c) for c in r) + " |\n"
    return s


def spread(sec, var, key):
    v = vals(sec, var, key)
    return f"{fmt(min(v) / statistics.median(v), 2)}–{fmt(max(v) / statistics.median(v), 2)}"


# --- 10. the credential gateway ------------------------------------------------------
# Written before the other sections run: `--only gateway` (BENCH_ONLY=gateway)
# replaces this one section of the page and leaves the rest as it was.
def gateway_section():
    """Section 10's lines: a request and a download direct, through the
    gateway, and through the gateway checking the image's bundle."""
    out = []
    n, big, certs = one("gw", "requests"), one("gw", "bytes"), one("gw", "bundle_certs")
    rounds = len(vals("gw-latency", "direct", "request_ns"))
    mib = f"{big / 1048576:.0f} MiB"
    out.append("## 10. The credential gateway against TLS from the command\n")
    out.append(
        "On an internal network of the bench's own, the network suite's HTTPS server "
        "(tests/network/testsrv.py: Python's http.server behind its ssl module, in the Debian "
        "image of tests/workload/build-image.sh, started by tests/network/start-testsrv.sh) "
        f"serves a 1 KiB and a {mib} file of random bytes under `/auth/`, which it answers only "
        "with the bench's bearer token (a request without it gets a 401, and the round fails). "
        "The command is Debian's curl in a turn of that image, one container a variant a round:\n")
    out.append(
        "- **direct**: a manifest without the network key, the runtime's network; curl speaks "
        "TLS to the server itself (`--cacert` the test CA) and sends the token in its own "
        "`Authorization`;\n"
        "- **gateway**: the manifest names the credential on the server's entry (`\"as\": "
        "\"bearer\"`, `\"ca\"` the test CA), its value given by `podman run --secret`; curl "
        "sends plain HTTP (`http://gw.test.internal:8443/...`) to turninit's proxy, whose "
        "gateway opens TLS to the server, writes the token and relays the answer, the value "
        "redacted from it;\n"
        "- **gateway, image bundle**: the same to a second name of the server, whose entry has "
        f"no `ca`: the certificate is checked against the image's bundle (Debian's, {certs} "
        "certificates with the test CA), which the proxy parses once, before its first "
        "connection, as it does for a manifest that names none.\n")
    out.append(
        f"**Latency**: {n} requests of the 1 KiB file one after another, each on a connection of "
        "its own on both sides (the server closes each; `curl --no-sessionid`, so that a direct "
        "request resumes no TLS session, as the gateway, one TLS connection a request, never "
        "does); curl's `time_total` of each, from its start to the answer's last byte; the median "
        f"of a round's requests, then the median of {rounds} rounds. **Throughput**: one download "
        f"of the {mib} file a round, by curl's size and time.\n")
    d = med("gw-latency", "direct", "request_ns")
    fd = med("gw-fetch", "direct", "mib_s")
    labels = {"direct": "direct (TLS from curl)", "gateway": "through the gateway",
              "gateway-bundle": "through the gateway, image bundle"}
    rows = []
    for v in ("direct", "gateway", "gateway-bundle"):
        x = med("gw-latency", v, "request_ns")
        rows.append((f"a 1 KiB request, {labels[v]}", fmt(x / 1e6) + " ms", ratio(x, d),
                     "" if v == "direct" else f"{(x - d) / 1e6:+.2f} ms",
                     spread("gw-latency", v, "request_ns")))
    for v in ("direct", "gateway", "gateway-bundle"):
        x = med("gw-fetch", v, "mib_s")
        rows.append((f"download {mib}, {labels[v]}", fmt(x) + " MiB/s", ratio(x, fd), "",
                     spread("gw-fetch", v, "mib_s")))
    out.append(table(["", "median", "÷ direct", "added", "rounds ÷ median (low–high)"], rows))
    g, gb = med("gw-latency", "gateway", "request_ns"), med("gw-latency", "gateway-bundle", "request_ns")
    out.append(
        f"\nA request through the gateway adds {(g - d) / 1e6:.2f} ms to the same request with "
        f"TLS from the command ({ratio(g, d)}), {(gb - d) / 1e6:.2f} ms when the chain is "
        f"checked against the image's bundle of {certs} certificates; a download through it runs at "
        f"{ratio(med('gw-fetch', 'gateway', 'mib_s'), fd)} the direct rate. The gateway's "
        "work a request, which the direct side does not have: the command's connection to the "
        "proxy on loopback, the proxy's child for it, the request head parsed and rewritten, "
        "a random generator seeded, the handshake (mbedTLS), and "
        "every byte of the answer decrypted, searched for the value and copied on.\n")
    if "load_sections" in machine and OPTS.get("only"):
        load = machine["load_sections"].split()
        out.append(
            f"\nThis section was measured in a run of its own (`BENCH_ONLY=gateway`, "
            f"BENCH_SCALE={machine.get('scale', '1')}): commit {machine['turninit_commit']}, "
            f"{machine['duration_s']} s, runnable tasks at its start {load[0] if load else '?'}; "
            "the machine table above is the last whole run's.\n")
    out.append("\n" + plot("gateway", f"A 1 KiB request, {n} one after another", "ms a request",
                           rows_of("gw-latency", ["direct", "gateway", "gateway-bundle"], "request_ns",
                                   1e-6, {"direct": "direct", "gateway": "gateway",
                                          "gateway-bundle": "gateway, bundle"})) + "\n")
    return out


# --- 11. a connection's set-up under seccomp-notify ---------------------------------
# Like section 10, it can be written alone (`--only notify`, BENCH_ONLY=notify).
def notify_section():
    """Section 11's lines: connections to the proxy and to the command's own
    listener, in a namespace and under seccomp-notify, and their ratios."""
    out = []
    n = one("nf", "connections")
    rounds = len(vals("nf-proxy", "namespace", "connect_ns"))
    out.append("## 11. A connection's set-up: seccomp-notify against a namespace\n")
    out.append(
        "One image and one sealed manifest, which lists a busybox httpd of the bench's image "
        "on an internal network of the bench's own and leaves `network.isolation` out, so "
        "the start chooses (docs/manifest.md, \"How it holds\"; `turninit verify` checks "
        "which each mode takes before the rounds):\n")
    out.append(
        "- **namespace**: root in the container with `--cap-add SYS_ADMIN --cap-add NET_ADMIN`; "
        "the command in a network namespace of turninit's, loopback alone, its connect(2) the "
        "kernel's;\n"
        "- **seccomp-notify**: non-root mode (`--user 1000:1000 --cap-drop ALL --security-opt "
        "no-new-privileges`); each connect(2) of the command waits for turninit's supervisor "
        "thread, which reads the address, takes the socket (pidfd_getfd), decides, and "
        "connects it itself (for the proxy: after binding it and telling the proxy its "
        "source port).\n")
    out.append(
        f"The command (tests/bench/bench.c) makes {n} connections one after another, a "
        "container a mode and a workload a round:\n"
        "- **to the proxy** (`bench connect -p`): connect(2) to 127.0.0.1 at the port of "
        "`HTTP_PROXY`, then `CONNECT` of the listed server, until the proxy's `200` answer "
        "has been read (the proxy's accept, its peer check under seccomp-notify, its child, "
        "its own connection to the server); the connect(2) alone is timed too;\n"
        "- **to the command's own listener** (`bench accept`): the command listens on "
        "127.0.0.1 (a port the kernel picks), then each time a TCP socket, its connect(2) to "
        "that port and the accept(2) of it, both closed, the client first. Under "
        "seccomp-notify this port is allowed because a process of the turn listens on it: "
        "the supervisor reads /proc/net/tcp and tcp6 (the listening entries, and the "
        "TIME_WAIT entries of the connections before) and, for a listener at that port, "
        "looks for its socket in /proc/PID/fd of each process of the turn, each found "
        "below turninit by walking /proc/PID/stat.\n")
    out.append(f"Medians of each run's connections, then the median of {rounds} "
               f"round{'s' if rounds != 1 else ''}.\n")
    rows = []
    what = [("nf-proxy", "syscall_ns", "to the proxy: connect(2) to its port"),
            ("nf-proxy", "connect_ns", "to the proxy: until its `200` to `CONNECT`"),
            ("nf-listener", "connect_ns", "to the command's own listener: connect(2)"),
            ("nf-listener", "accept_ns", "to the command's own listener: socket(2) to accept(2)")]
    for sec, key, label in what:
        a, b = med(sec, "namespace", key), med(sec, "notify", key)
        rows.append((label, fmt(a / 1e3), fmt(b / 1e3), ratio(b, a), f"{(b - a) / 1e3:+,.0f} µs",
                     f"{spread(sec, 'namespace', key)} / {spread(sec, 'notify', key)}"))
    out.append(table(["connection", "namespace µs", "seccomp-notify µs", "notify ÷ namespace",
                      "added", "rounds ÷ median (low–high), namespace / notify"], rows))
    px, lx = med("nf-proxy", "notify", "syscall_ns"), med("nf-listener", "notify", "connect_ns")
    out.append(
        f"\nUnder seccomp-notify a connect(2) to the command's own listener took "
        f"{fmt(lx / 1e3)} µs, {ratio(lx, px)} a connect(2) to the proxy's port "
        f"({fmt(px / 1e3)} µs): the difference is the supervisor's look-up in /proc, which "
        "reads every TCP socket of the container's network namespace and, for a listener at "
        "the port, the parent chain and open files of each process in /proc (here the "
        "command is the turn's one process, with a few files).\n")
    load = machine.get("load_sections", "").split()
    out.append(
        f"\nThe machine of this run: {machine['cpu']}, {machine['memory']}, kernel "
        f"{machine['kernel']}, {machine['os']}, podman {machine['podman']}; turninit commit "
        f"{machine['turninit_commit']}, BENCH_SCALE={machine.get('scale', '1')}"
        + (f", runnable tasks at the section's start {load[-1]} (1 is the sampler)" if load else "")
        + (f", a run of its own (`BENCH_ONLY=notify`) of {machine['duration_s']} s."
           if OPTS.get("only") else ".") + "\n")
    out.append("\n" + plot("notify", f"connect(2), {n} one after another", "µs a connect(2)",
                            [("proxy, namespace",) + tuple(x * 1e-3 for x in
                                                           trio("nf-proxy", "namespace", "syscall_ns")),
                             ("proxy, notify",) + tuple(x * 1e-3 for x in
                                                        trio("nf-proxy", "notify", "syscall_ns")),
                             ("own listener, namespace",) + tuple(x * 1e-3 for x in
                                                                  trio("nf-listener", "namespace", "connect_ns")),
                             ("own listener, notify",) + tuple(x * 1e-3 for x in
                                                               trio("nf-listener", "notify", "connect_ns"))])
               + "\n")
    return out


def trio(sec, var, key):
    """median, lowest and highest of a figure's rounds"""
    v = vals(sec, var, key)
    return statistics.median(v), min(v), max(v)


def splice(section, number):
    """DOCS/benchmarks.md with section `number` replaced by section (or put
    before the notes, or at the end, where it has none yet), and the notes,
    which follow it, as tests/bench/notes.md has them now."""
    path = os.path.join(DOCS, "benchmarks.md")
    page = open(path).read()
    text = "\n".join(section) + "\n"
    start = page.find(f"\n## {number}. ")
    if start >= 0:
        end = page.find("\n## ", start + 1)
        page = page[:start + 1] + text + (page[end + 1:] if end >= 0 else "")
    else:
        notes_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "notes.md")
        first = open(notes_path).readline() if os.path.exists(notes_path) else None
        at = page.find("\n" + first) if first else -1
        page = page[:at + 1] + text + page[at + 1:] if at >= 0 else page + "\n" + text
    notes_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "notes.md")
    if os.path.exists(notes_path):
        notes = open(notes_path).read()
        at = page.find("\n" + notes.split("\n", 1)[0] + "\n")
        if at >= 0:
            page = page[:at + 1] + notes
    open(path, "w").write(page)


if OPTS.get("only") == "gateway":
    splice(gateway_section(), 10)
    print("report: section 10 of docs/benchmarks.md replaced")
    sys.exit(0)
if OPTS.get("only") == "notify":
    splice(notify_section(), 11)
    print("report: section 11 of docs/benchmarks.md replaced")
    sys.exit(0)


doc = []
W = doc.append

# --- 1. start to exit ------------------------------------------------------------
s1 = ["turninit", "catatonit", "tini", "dumb-init", "bash"]
base = med("start", "catatonit", "total_ns")
n1 = len(vals("start", "catatonit", "total_ns"))
W("## 1. Container start to exit\n")
W(f"`podman run --rm IMAGE` running `bash --noprofile --norc -c true`, {n1} rounds, "
  "each variant once a round in rotating order; every run has the same podman flags "
  "(`--network none`, `--tmpfs` HOME, `--pull never`), so only PID 1 differs:\n")
W("- **turninit**: the image's entrypoint, signed manifest from the image config, "
  "the tmpfs HOME checked and chowned, the full sandbox (seccomp `@default`, Landlock, "
  "no capabilities, uid 1000);\n- **catatonit**: `podman run --init`, bash as the "
  "entrypoint;\n- **tini**: `tini-static --` bash as the entrypoint;\n- **dumb-init**: "
  "Debian's dumb-init (dynamic, with its glibc in the image) `--` bash as the entrypoint;\n"
  "- **bash**: bash as the entrypoint and PID 1, no init.\n")
rows = []
for v in s1:
    m = med("start", v, "total_ns")
    rows.append((v, fmt(m / 1e6), ratio(m, base), spread("start", v, "total_ns")))
W(table(["PID 1", "median ms", "÷ catatonit", "rounds ÷ median (low–high)"], rows))
r1 = med("start", "turninit", "total_ns") / base
goal(1, "start to exit at most 5% slower than catatonit", f"{r1:.2f}× catatonit", r1 <= 1.05)
W("\n" + plot("start", "Container start to exit (podman run --rm IMAGE true)", "ms",
              rows_of("start", s1, "total_ns", 1e-6)) + "\n")

# --- 2. per command --------------------------------------------------------------
n = one("percmd", "commands")
base = med("percmd", "bash", "total_ns") / n
W("## 2. Per-command cost inside a turn\n")
W(f"{n} commands `true`, one after the other, inside one container (the bench "
  "image, podman's default seccomp profile): each a fork and exec of `bash --noprofile "
  "--norc -c true` by a small C harness (tests/bench/bench.c), against the same "
  "harness sending each as an `exec` request to `turninit serve` on pipes and waiting "
  "for its `exit` event. turninit is the harness's child there (a subreaper, not PID "
  "1): the figure is turninit's own work per command, without the podman pipes of "
  "section 3. **sandbox on** is the default manifest; **sandbox minimal** is the "
  "least a manifest allows (`seccomp.deny` empty: a filter with the architecture "
  "check only; Landlock `writable: [\"/\"]`); uid change, rlimits and capability "
  "drop are never optional. The last two rows drive turninit the other ways a client "
  "can, MCP and `turninit call` (below the table).\n")
rows = []
names = {"bash": "bare bash fork+exec", "bash-setsid": "bare bash, setsid(2) before exec",
         "serve": "turninit serve, sandbox on", "serve-min": "turninit serve, sandbox minimal",
         "mcp": "turninit mcp, a tools/call of bash", "call": "turninit call, to turninit listen"}
s2 = ["bash", "bash-setsid", "serve", "serve-min", "mcp", "call"]
base_s = med("percmd", "bash-setsid", "total_ns") / n
for v in s2:
    m = med("percmd", v, "total_ns") / n
    rows.append((names[v], fmt(m / 1e3), ratio(m, base), ratio(m, base_s),
                 spread("percmd", v, "total_ns")))
W(table(["", "median µs a command", "÷ bare bash", "÷ bash with setsid",
         "rounds ÷ median (low–high)"], rows))
W("\nEvery command of turninit starts a new session (setsid(2), so it has no "
  "controlling terminal: the brief's first step); the second row is a bare spawn "
  "with only that added.\n")
on = med("percmd", "serve", "total_ns") / n
mn = med("percmd", "serve-min", "total_ns") / n
if on > mn:
    W(f"\nThe sandbox's own cost (on − minimal): {fmt((on - mn) / 1e3)} µs a command "
      f"(on is {ratio(on, mn)} minimal).\n")
else:
    W(f"\nThe sandbox's own cost is below what this run resolves: *on* came out "
      f"{ratio(on, mn)} *minimal*, within the spread of the rounds.\n")
W("\n**turninit mcp**: the harness is an MCP client of `turninit mcp` on pipes; after "
  "the `initialize` handshake, each command is a `tools/call` of the tool `bash` with the "
  "command `true`, timed from writing the request to reading its result.\n")
W("\n**turninit call**: each command is a whole client process: the harness forks and "
  "execs `turninit call --socket PATH -- true` as uid 1000 (the manifest's user, whom "
  "`callers.uids` admits by default) and times it from fork to waitpid, against a "
  "`turninit listen` it started in the same container, as root. So the figure holds the "
  "client's own fork, exec and start (with the fork of its SO_PEERCRED self-check), its "
  "request and the command on listen's side, where a bare spawn has only the command's "
  "fork and exec.\n")
W(f"\nThe median single call, over the runs: {fmt(med('percmd', 'mcp', 'call_ns') / 1e3)} µs "
  f"through MCP, {fmt(med('percmd', 'call', 'call_ns') / 1e3)} µs with `turninit call`.\n")
r2 = on / base
goal(2, "serve at most 1.10× a bare bash spawn, one command after another",
     f"{r2:.2f}× bare bash ({on / base_s:.2f}× with setsid)", r2 <= 1.10)
W("\n" + plot("percmd", f"Per command, {n} commands in one turn", "µs a command",
              rows_of("percmd", s2, "total_ns", 1e-3 / n,
                      {"bash": "bare bash", "bash-setsid": "bash, setsid",
                       "serve": "serve, on", "serve-min": "serve, minimal",
                       "mcp": "mcp", "call": "call"})) + "\n")

W(f"\n### 8 at a time\n\nThe same {n} commands with 8 in flight at once: the harness "
  "starts a new one as soon as one ends (bare: fork and exec of bash; serve: an "
  "`exec` request for each exit event, under `limits.concurrency` 8). The figure is the "
  "whole run ÷ the commands: the machine's throughput, on its 2 cores.\n")
b8 = med("percmd", "bash-j8", "total_ns") / n
s8 = med("percmd", "serve-j8", "total_ns") / n
W(table(["", "median µs a command", "÷ bare bash, 8 at a time", "rounds ÷ median (low–high)"],
        [("bare bash fork+exec, 8 at a time", fmt(b8 / 1e3), "1.00×", spread("percmd", "bash-j8", "total_ns")),
         ("turninit serve, sandbox on, 8 at a time", fmt(s8 / 1e3), ratio(s8, b8),
          spread("percmd", "serve-j8", "total_ns"))]))
goal(2, "serve at most 1.25× a bare bash spawn at concurrency 8", f"{s8 / b8:.2f}× bare bash",
     s8 / b8 <= 1.25)
W("\n" + plot("percmd-j8", f"Per command, {n} commands 8 at a time", "µs a command",
              rows_of("percmd", ["bash-j8", "serve-j8"], "total_ns", 1e-3 / n,
                      {"bash-j8": "bare bash", "serve-j8": "serve, sandbox on"})) + "\n")

ls = med("latency", "serve", "started_ns")
le = med("latency", "serve", "exit_ns")
bs, be = med("latency", "bare", "started_ns"), med("latency", "bare", "exit_ns")
bss, bse = med("latency", "bare-setsid", "started_ns"), med("latency", "bare-setsid", "exit_ns")
W(f"\n### Latency\n\nOne command after another, each `/bench/bench stamp /tmp/stamp` "
  "(it writes the clock to a file, then exits): **request → started** is from the "
  "harness writing the `exec` line to reading the `started` event (the keeper's fork, "
  "the command's set-up and its execve of bash, then bash's exec of the stamp tool); "
  "**exit → exit event** is from the stamp to reading the `exit` event (the process's "
  "end, the keeper's report, turninit draining the pipes and writing the event). "
  "Medians of each run's commands, then the median of the runs.\n")
W("\nTheir bare counterparts come from the same harness in the same rounds (`bench spawn "
  "--latency`), forking and executing `bash --noprofile --norc -c '/bench/bench stamp "
  "/tmp/stamp'` itself: **fork → bash exec'd** is from just before fork(2) to the end "
  "of file of a close-on-exec pipe whose write end only the child holds, that is the "
  "child's execve of bash; **exit → waitpid** is from the stamp to the harness's "
  "waitpid(2) returning. The *setsid* rows call setsid(2) in the child first, as "
  "turninit does for every command. Each of these figures ends when a process asleep on "
  "a pipe or in waitpid(2) is woken and runs, so the scheduler's delay counts in all.\n")
lat = [("request → started, turninit serve", "serve", "started_ns", ls, bs, bss),
       ("fork → bash exec'd, bare", "bare", "started_ns", bs, bs, bss),
       ("fork → bash exec'd, bare, setsid", "bare-setsid", "started_ns", bss, bs, bss),
       ("exit → exit event, turninit serve", "serve", "exit_ns", le, be, bse),
       ("exit → waitpid, bare", "bare", "exit_ns", be, be, bse),
       ("exit → waitpid, bare, setsid", "bare-setsid", "exit_ns", bse, be, bse)]
W(table(["", "median µs", "÷ bare", "÷ bare, setsid", "÷ a whole bare bash spawn",
         "rounds ÷ median (low–high)"],
        [(label, fmt(x / 1e3), ratio(x, b), ratio(x, b_s), ratio(x, base), spread("latency", v, k))
         for label, v, k, x, b, b_s in lat]))
W(f"\nWith setsid(2) first, the bare harness sees bash's exec after {fmt(bss / 1e3)} µs, "
  f"{ratio(bss, bs)} the {fmt(bs / 1e3)} µs without, while a whole bare spawn with it "
  f"costs {ratio(base_s, base)} one without (first table).\n")

# --- 2b. where the time goes ------------------------------------------------------------
W("\n### Where the time goes\n\n")
if ("profile", "all", "skipped") in words:
    W(f"Not measured in this run: {words[('profile', 'all', 'skipped')]}.\n")
else:
    n = one("profile", "commands")
    W(f"Each round, one bare spawn and one serve run of {n} `true` commands, one after "
      "another as in the first table, each under `perf sched record -a` (the scheduler's "
      "tracepoints; it slows both); `perf sched latency` gives the CPU time, the context "
      "switches and the mean wait for a CPU of each process name, and the "
      "`sched_migrate_task` events its moves between CPUs, each ÷ the commands. "
      "**turninit** is turninit, its keeper and each command's child up to its execve; "
      "**bash** is the commands after it; **harness** is tests/bench/bench.c and, in a bare "
      "spawn, its child up to the execve. Medians of the rounds.\n")
    names = [("bash", "bash"), ("turninit", "turninit"), ("bench", "harness")]
    rows, fig = [], {}
    for v, label in [("bash", "bare bash fork+exec"), ("serve", "turninit serve, sandbox on")]:
        per = lambda k: med("profile", v, k) / n
        cpu = {t: per(f"cpu_ms_{t}") * 1e3 for t, _ in names}
        sw = sum(per(f"switches_{t}") for t, _ in names)
        mig = sum(per(f"migrations_{t}") for t, _ in names)
        waits = [med("profile", v, f"wait_ms_{t}") * 1e3 for t, _ in names]
        wall = per("total_ns") / 1e3
        fig[v] = (wall, cpu, sw, mig)
        rows.append((label, fmt(wall), *(fmt(cpu[t]) for t, _ in names), fmt(sum(cpu.values())),
                     f"{sw:.1f}", f"{mig:.2f}", " / ".join(fmt(w) for w in waits)))
    W(table(["", "µs a command, wall", "CPU µs: bash", "turninit", "harness", "all three",
             "switches a command", "migrations a command",
             "mean wait for a CPU µs (bash / turninit / harness)"], rows))
    (bw, bc, bsw, bm), (sw_, sc, ssw, sm) = fig["bash"], fig["serve"]
    def more(d):
        return f"{fmt(abs(d))} µs {'more' if d >= 0 else 'less'}"
    W(f"\nUnder perf, serve took {more(sw_ - bw)} a command than a bare spawn "
      f"({ratio(sw_, bw)}). CPU time a command: bash {more(sc['bash'] - bc['bash'])} than "
      f"bare, turninit's processes {fmt(sc['turninit'])} µs, the harness "
      f"{more(sc['bench'] - bc['bench'])}; "
      f"{ssw:.1f} switches a command against {bsw:.1f}, and {sm:.2f} moves between CPUs "
      f"against {bm:.2f}. What the CPU times do not cover is time no process of the turn "
      "was running: the wake-ups and hand-offs between them.\n")

# --- 3. a turn -----------------------------------------------------------------------
n = one("turn", "commands")
base = med("turn", "oneshot", "total_ns")
W(f"## 3. A turn of {n} commands\n")
W(f"One container in serve mode (`podman run -i ... IMAGE serve`, the client on the "
  f"host, {n} `true` commands one after the other, from starting podman to its exit) "
  f"against {n} one-shot `podman run --rm IMAGE -- true`, one after the other.\n")
rows = []
for v, label in [("oneshot", f"{n} one-shot containers"), ("serve", "one serve container")]:
    key = "whole_ns" if v == "serve" else "total_ns"
    m = med("turn", v, key)
    rows.append((label, fmt(m / 1e6), fmt(m / n / 1e6), ratio(m, base), spread("turn", v, key)))
W(table(["", "median ms the turn", "ms a command", "÷ one-shot", "rounds ÷ median"], rows))
W("\n" + plot("turn", f"A turn of {n} commands", "ms the turn",
              [(f"{n} x podman run",) + rows_of("turn", ["oneshot"], "total_ns", 1e-6)[0][1:],
               ("one serve container",) + rows_of("turn", ["serve"], "whole_ns", 1e-6)[0][1:]]) + "\n")

# --- 4. seccomp -------------------------------------------------------------------------
nsys = one("seccomp", "getppid_calls")
nent = one("seccomp", "find_entries")
W("## 4. Seccomp cost\n")
W(f"Inside a container, the time of the workload alone: {nsys:,} `getppid(2)` calls "
  f"in a loop, and busybox `find` over a tree of {nent:,} entries (a read-only bind "
  "mount, readable by every uid). Filters: **none** (`--security-opt "
  "seccomp=unconfined`, no init); **podman** (podman's default profile, no init); "
  "**turninit** (turninit's filter alone: podman's profile off); **turninit+podman** "
  "(both stacked, as deployed). The turninit rows also carry Landlock, which "
  "handles writes only.\n")
sv = ["none", "podman", "turninit", "turninit+podman"]
rows = []
for v in sv:
    g = med("seccomp-getppid", v, "total_ns")
    f = med("seccomp-find", v, "total_ns")
    rows.append((v, fmt(g / nsys), ratio(g, med("seccomp-getppid", "none", "total_ns")),
                 ratio(g, med("seccomp-getppid", "podman", "total_ns")),
                 fmt(f / 1e6), ratio(f, med("seccomp-find", "none", "total_ns")),
                 ratio(f, med("seccomp-find", "podman", "total_ns"))))
W(table(["filter", "getppid ns a call", "÷ none", "÷ podman", "find ms", "÷ none", "÷ podman"], rows))
rg = med("seccomp-getppid", "turninit", "total_ns") / med("seccomp-getppid", "podman", "total_ns")
rf = med("seccomp-find", "turninit", "total_ns") / med("seccomp-find", "podman", "total_ns")
W("\n'No slower' is judged with a 5% band: the rounds of one variant differ by more "
  "than that on this machine (spread of podman's own rounds: getppid "
  f"{spread('seccomp-getppid', 'podman', 'total_ns')}, find "
  f"{spread('seccomp-find', 'podman', 'total_ns')} of its median).\n")
goal(4, "turninit's filter no slower than podman's default profile",
     f"getppid {rg:.2f}×, find {rf:.2f}× podman's", rg <= 1.05 and rf <= 1.05)
W("\n" + plot("seccomp-getppid", f"{nsys:,} getppid calls", "ns a call",
              rows_of("seccomp-getppid", sv, "total_ns", 1 / nsys)) + "\n")
W("\n" + plot("seccomp-find", f"find over {nent:,} entries", "ms",
              rows_of("seccomp-find", sv, "total_ns", 1e-6)) + "\n")

# --- 5. reaping -------------------------------------------------------------------------
n = one("reap", "orphans")
base = med("reap", "catatonit", "reap_ns")
W("## 5. Reaping\n")
W(f"A command starts {n:,} children through a middle process that exits, so all are "
  "orphaned to PID 1; then it releases them at once (they exit) and times how long "
  "until none is left in the container's /proc (zombies included), polling every "
  "0.5 ms for at most 60 s; what is left then is the zombie count. Run with "
  "`--pids-limit -1`.\n")
rows = []
left_all = 0
for v in ["turninit", "catatonit", "tini"]:
    m = med("reap", v, "reap_ns")
    left = int(max(vals("reap", v, "left")))
    left_all = max(left_all, left) if v == "turninit" else left_all
    rows.append((v, fmt(m / 1e6), ratio(m, base), spread("reap", v, "reap_ns"), left))
W(table(["PID 1", "median ms until the last is reaped", "÷ catatonit", "rounds ÷ median",
         "zombies left (worst round)"], rows))
goal(5, f"{n:,} orphans reaped, no zombie left", f"{left_all} left, "
     f"{med('reap', 'turninit', 'reap_ns') / base:.2f}× catatonit's time", left_all == 0)
W("\n" + plot("reap", f"Reaping {n:,} orphans", "ms until the last is reaped",
              rows_of("reap", ["turninit", "catatonit", "tini"], "reap_ns", 1e-6)) + "\n")

# --- 6. start-up steps --------------------------------------------------------------
W("## 6. turninit's start-up work\n")
W("tests/bench/startup.c links turninit's own objects (all but init/main.o) and "
  "calls its steps in init/main.c's order, reading the clock around each; the product "
  "binary has no timing code. It runs as the entrypoint of the sealed image with "
  "podman's tmpfs HOME, like turninit. *first* is the first call in the process "
  "(cold: page faults, first allocations); *again* is the median of 41 more calls "
  "in the same process. **exec** is spawn_command as one-shot mode runs it: "
  "clone(CLONE_VM | CLONE_VFORK), every sandbox step of the child and the execve of "
  "bash, until clone returns; **bare exec** is fork and execve of the same bash with "
  "nothing in between, up to a close-on-exec pipe's end of file. Medians over the "
  "containers of the run.\n")
steps = [("verify", "manifest: trust roots, signature, parsing"),
         ("filter", "seccomp filter build (libseccomp) and export"),
         ("env", "command environment and argv"),
         ("home", "HOME: statfs, mountinfo, chown, chmod"),
         ("landlock", "Landlock ruleset"),
         ("caps", "capability drop (once)"),
         ("lockdown", "securebits and bounding set, in turninit (once)"),
         ("exec", "first exec: clone (CLONE_VFORK), sandbox steps, execve"),
         ("bare_exec", "bare fork + execve of bash (baseline)")]
total_first = sum(med("startup", s, "first_ns") for s, _ in steps if s != "bare_exec")
bare = med("startup", "bare_exec", "median_ns")
rows = []
for s, what in steps:
    f = med("startup", s, "first_ns")
    a = med("startup", s, "median_ns")
    share = "" if s == "bare_exec" else f"{100 * f / total_first:.0f}%"
    rows.append((s.replace("_", " "), what, fmt(f / 1e3), fmt(a / 1e3), share, ratio(a, bare)))
W(table(["step", "what", "first µs", "again µs", "share of first", "again ÷ bare exec again"], rows))
parts = [("fork", "fork of turninit and the child's exit, alone"),
         ("landlock_restrict", "landlock_restrict_self(2) in the child"),
         ("seccomp_attach", "seccomp(2) attaching the filter in the child"),
         ("plain_syscalls", "62 cheap syscalls, as many as the child's signal step makes in one-shot mode"),
         ("setsid_exec", "bare exec with setsid(2) before the execve (whole, not a part)")]
W("\nParts of *exec*, each timed alone in 42 children (the figure is the kernel's "
  "work for that call, inside the container: under podman's seccomp profile):\n")
W(table(["part", "what", "first µs", "again µs", "again ÷ bare exec"],
        [(p.replace("_", " "), what, fmt(med("startup", p, "first_ns") / 1e3),
          fmt(med("startup", p, "median_ns") / 1e3),
          ratio(med("startup", p, "median_ns"), bare)) for p, what in parts]))
W(f"\nThe seccomp program of the `full` manifest has {int(med('startup', 'filter_insns', 'first_ns'))} "
  f"BPF instructions (BPF JIT: {machine.get('bpf_jit', '?')}).\n")
W(f"\nAll steps, first calls: {fmt(total_first / 1e3)} µs, "
  f"{ratio(total_first, med('start', 'catatonit', 'total_ns'))} of a whole "
  "catatonit container's start to exit (section 1).\n")
W("\n" + plot("startup", "turninit start-up steps, first call", "µs",
              [(s.replace("_", " "), med("startup", s, "first_ns") / 1e3,
                min(vals("startup", s, "first_ns")) / 1e3,
                max(vals("startup", s, "first_ns")) / 1e3) for s, _ in steps]) + "\n")

# --- 7. size and memory --------------------------------------------------------------
W("## 7. Size and memory\n")
sz = {v: med("size", v, "bytes") for v in ["turninit", "tini-static", "catatonit", "dumb-init"]}
BEFORE = 383656   # build/turninit at commit 5f60477, before the size changes (notes below)
rows = [("turninit (static musl, stripped)", f"{sz['turninit']:,.0f}", fmt(sz['turninit'] / 1024),
         ratio(sz["turninit"], sz["catatonit"])),
        ("turninit before the size changes (5f60477)", f"{BEFORE:,}", fmt(BEFORE / 1024),
         ratio(BEFORE, sz["catatonit"])),
        ("tini-static (Debian, static glibc)", f"{sz['tini-static']:,.0f}", fmt(sz['tini-static'] / 1024),
         ratio(sz["tini-static"], sz["catatonit"])),
        ("catatonit (Debian, static glibc)", f"{sz['catatonit']:,.0f}", fmt(sz['catatonit'] / 1024), "1.00×"),
        ("dumb-init (Debian: dynamic, libc not counted)", f"{sz['dumb-init']:,.0f}",
         fmt(sz['dumb-init'] / 1024), ratio(sz["dumb-init"], sz["catatonit"]))]
W(table(["binary", "bytes", "KiB", "÷ catatonit"], rows))
W("\nSize is a figure here, not a goal: the 256 KiB goal of the first rounds was "
  "dropped when MCP, non-root mode, gVisor and arm64 came in; turninit stays about half "
  "the size of catatonit and tini-static, and every change of it is reported.\n")
W("\n" + plot("size", "Stripped binary size", "KiB",
              [("turninit before", BEFORE / 1024, BEFORE / 1024, BEFORE / 1024)] +
              [(k, v / 1024, v / 1024, v / 1024) for k, v in sz.items()], spread=False) + "\n")
W("\nWhat each archive costs, from the linker map (`make size`, tests/bench/size.py):\n\n```\n"
  + open(os.path.join(WORK, "size.txt")).read().rstrip("\n") + "\n```\n")
n = one("rss", "commands")
W(f"\nPID 1's memory, read from /proc/PID/status on the host: VmHWM (peak resident "
  f"set) and VmRSS. Idle: the container's command is `sleep 30`, read after 1 s. "
  f"serve: `podman run -i IMAGE serve` with the client on the host, read after 3 "
  f"warm-up commands and after {n} more.\n")
rv = [("turninit", "turninit one-shot, idle"), ("serve-idle", "turninit serve, after 3 commands"),
      ("serve-after", f"turninit serve, after {n + 3:,} commands"),
      ("catatonit", "catatonit, idle"), ("tini", "tini-static, idle")]
cat_hwm = med("rss", "catatonit", "hwm_kib")
rows = [(label, fmt(med("rss", v, "hwm_kib")), fmt(med("rss", v, "rss_kib")),
         ratio(med("rss", v, "hwm_kib"), cat_hwm)) for v, label in rv]
W(table(["PID 1", "VmHWM KiB", "VmRSS KiB", "VmHWM ÷ catatonit"], rows))
worst = max(med("rss", v, "hwm_kib") for v in ["turninit", "serve-idle", "serve-after"])
goal(7, "PID 1 peak RSS at most 1 MiB", f"{worst:.0f} KiB (worst of idle, serve after {n + 3:,})",
     worst <= 1024)
W("\n" + plot("rss", "PID 1 peak resident set (VmHWM)", "KiB",
              [(label.replace("turninit ", "").replace(", idle", ""),) +
               tuple(x for x in (statistics.median(vals("rss", v, "hwm_kib")),
                                 min(vals("rss", v, "hwm_kib")), max(vals("rss", v, "hwm_kib"))))
               for v, label in rv], 1024, "goal: 1 MiB") + "\n")

# --- 8. the network ---------------------------------------------------------------------
W("## 8. The network: turninit's proxy against a direct connection\n")
nconn, nbig = one("net", "connections"), one("net", "bytes")
W(f"On an internal network of the bench's own (`podman network create --internal`), to "
  f"a busybox httpd serving a {nbig / 1048576:.0f} MiB file. *direct*: the default "
  f"manifest and the runtime's network, the command connecting itself; *proxy*: the "
  f"same manifest with `network.allow` listing the server, the command in turninit's "
  f"namespace with loopback alone, through turninit's proxy (`CONNECT`). Connect: the "
  f"median of {nconn} connections one after the other, each until it is made (through "
  f"the proxy: until its `200` answer); download: `GET` over HTTP/1.0, read to the end.\n")
c_d, c_p = med("net-connect", "direct", "connect_ns"), med("net-connect", "proxy", "connect_ns")
f_d, f_p = med("net-fetch", "direct", "mib_s"), med("net-fetch", "proxy", "mib_s")
rows = [("connect, direct", fmt(c_d / 1000) + " µs", "1.00×", spread("net-connect", "direct", "connect_ns")),
        ("connect, through the proxy", fmt(c_p / 1000) + " µs", ratio(c_p, c_d),
         spread("net-connect", "proxy", "connect_ns")),
        (f"download {nbig / 1048576:.0f} MiB, direct", fmt(f_d) + " MiB/s", "1.00×",
         spread("net-fetch", "direct", "mib_s")),
        (f"download {nbig / 1048576:.0f} MiB, through the proxy", fmt(f_p) + " MiB/s", ratio(f_p, f_d),
         spread("net-fetch", "proxy", "mib_s"))]
W(table(["", "median", "÷ direct", "spread"], rows))
goal(8, "a connection through the proxy adds at most 1 ms", f"{(c_p - c_d) / 1e6:.3f} ms", c_p - c_d <= 1e6)
goal(8, "a download through the proxy at least 0.9× direct", ratio(f_p, f_d), f_p >= 0.9 * f_d)
n, ntun = one("tunnels", "commands"), one("tunnels", "tunnels")
W(f"\nWith {ntun} tunnels open and stalled (each asked for the {nbig / 1048576:.0f} MiB file, "
  f"and nothing read: the server and the proxy blocked on full buffers) and with none: "
  f"serve's events over {n} commands (`bench serve --latency`, as in section 2, "
  f"turninit serve the harness's child), turninit's VmRSS, and the sum of the proxy's "
  f"processes' (one per tunnel, and the listener), read after the commands.\n")
rows = []
for v, label in (("none", "no tunnel"), ("tunnels", f"{ntun} stalled tunnels")):
    rows.append((label, fmt(med("tunnels", v, "started_ns") / 1000) + " µs",
                 fmt(med("tunnels", v, "exit_ns") / 1000) + " µs",
                 fmt(med("tunnels", v, "rss_kib")), fmt(med("tunnels", v, "proxy_rss_kib"))))
W(table(["", "request → started", "last write → exit", "turninit VmRSS KiB", "proxy's VmRSS KiB, summed"], rows))
lat_n, lat_t = med("tunnels", "none", "exit_ns"), med("tunnels", "tunnels", "exit_ns")
W(f"\nThe exit event with the tunnels stalled: {ratio(lat_t, lat_n)} of that with none; "
  f"the started event: {ratio(med('tunnels', 'tunnels', 'started_ns'), med('tunnels', 'none', 'started_ns'))}.\n")
rss_t = med("tunnels", "tunnels", "rss_kib")
goal(8, f"turninit's RSS with {ntun} tunnels open within 1 MiB", f"{rss_t:.0f} KiB", rss_t <= 1024)
goal(8, f"{ntun} stalled tunnels delay no event (exit event within 1.25× of none)", ratio(lat_t, lat_n),
     lat_t <= 1.25 * lat_n)

# --- 9. the audit log's digests -----------------------------------------------------------
n = one("audit", "commands")
nb = one("audit", "bytes")
pl = med("audit", "plain", "total_ns") / n
lg = med("audit", "logged", "total_ns") / n
W("## 9. The audit log's digests\n")
W(f"`bench serve` runs {n:,} commands, each writing {nb / 1048576:.0f} MiB to stdout "
  "(`head -c ... /dev/zero`), through `turninit serve` without a log and with "
  "`--audit-log` (on a tmpfs of root's): with the log, turninit hashes every byte of "
  "each stream as it reads it (BLAKE2b-256) and writes two chained lines a command. "
  "The output is read and sent either way; the difference is the digests, the "
  "chain and the log's writes.\n")
W(table(["serve", "median ms a command", "÷ without the log", "rounds ÷ median"],
        [("without --audit-log", fmt(pl / 1e6), "1.00", spread("audit", "plain", "total_ns")),
         ("with --audit-log", fmt(lg / 1e6), ratio(lg, pl), spread("audit", "logged", "total_ns"))]))
goal(9, f"output digests: no second pass ({nb / 1048576:.0f} MiB a command)",
     f"{lg / pl:.2f}× a command without the log", lg / pl <= 1.10)

doc.extend(gateway_section())
doc.extend(notify_section())

# --- the page -----------------------------------------------------------------------
notes_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "notes.md")
notes = open(notes_path).read() if os.path.exists(notes_path) else ""
loads = [float(x) for x in machine["load_sections"].split()]
head = ["# Benchmarks\n",
        "turninit against what a user would run instead: catatonit (`podman run "
        "--init`), tini-static, dumb-init and a bare bash as PID 1. Written by `make "
        "bench` (tests/bench/run.sh, report.py); every figure below comes from its last "
        "run, and the plots beside this file too.\n",
        "## Method\n",
        "- Every figure is the **median** of several rounds, and each is given as a "
        "**ratio** to a baseline; a time alone says little on a shared machine. In each "
        "round every variant runs once, in an order rotated by one each round, so a load "
        "that comes and goes falls on all of them alike. The spread of the rounds "
        "(lowest and highest ÷ median) is shown beside each figure, and as bars in the "
        "plots.\n",
        "- Times are CLOCK_MONOTONIC, taken by tests/bench/bench.c (a static C harness), "
        "in nanoseconds, shown in ms or µs.\n",
        "- One image for all (tests/bench/run.sh builds it with rootfs/build-image.sh: "
        "static bash 5.2, busybox, turninit, tini-static, the harness), sealed with "
        "two manifests (`full`: the default sandbox; `min`: the least sandbox a manifest "
        "allows). Every container runs with `--pull never`, and `--network none` but in "
        "sections 8, 10 and 11 (networks of the bench's own).\n",
        "## Machine\n",
        table(["", ""], [("CPU", machine["cpu"]), ("memory", machine["memory"]),
                         ("kernel", machine["kernel"]), ("OS", machine["os"]),
                         ("podman, runtime", machine["podman"]),
                         ("cgroups", machine["cgroups"]),
                         ("catatonit", machine["catatonit"]), ("tini", machine["tini"]),
                         ("dumb-init", machine["dumb_init"]), ("bash", machine["bash"]),
                         ("turninit", f"commit {machine['turninit_commit']}"),
                         ("runnable tasks at the start of sections 1 to 5, 8, 10 and 11 (mean of 10 samples; 1 is the sampler)",
                          ", ".join(f"{x:.1f}" for x in loads)),
                         ("duration of the run", f"{machine['duration_s']} s")])]
if max(loads) >= 2:
    head.append("\n**This run happened on a loaded machine**: between the bench's own "
                "runs other tasks were runnable, competing for the 2 cores (the row "
                "above). Absolute times are noisy; the ratios, taken from interleaved "
                "rounds, are the figures to read.\n")
if machine.get("scale", "1") != "1":
    head.append(f"\n**A quick trial run** (BENCH_SCALE={machine['scale']}): rounds and "
                "workloads divided; not the figures of a full `make bench`.\n")
head.append("\n## Goals\n")
head.append(table(["item", "goal", "figure", ""], goals))
page = "\n".join(head) + "\n" + "\n".join(doc) + ("\n" + notes if notes else "")
open(os.path.join(DOCS, "benchmarks.md"), "w").write(page)
print("report: " + "; ".join(f"{g[1]}: {g[2]} ({g[3].strip('*')})" for g in goals))
