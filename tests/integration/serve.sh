#!/bin/bash
# serve.sh - integration tests of `turninit serve`, `turninit listen` and
# `turninit call` in real podman containers, and of the Kubernetes sidecar
# example oci/k8s/sidecar.yaml under `podman kube play` (issue 4, Deliver 6 and
# 7). Root, podman set up by `make setup`; run after `make` as
# `bash tests/integration/serve.sh`. With ITEST_ROOTLESS=1, an unprivileged
# user under rootless podman (tests/integration/rootless.sh): the host-side
# clients that take a container uid run in podman's user namespace (userns).
# With ITEST_ENGINE=docker, the same under the dockerd of
# tests/integration/docker.sh (serve over `docker run -i`, listen and call in
# two containers); the sidecar under podman kube play is skipped, saying why.
#
# The client runs on the host: tests/serve/cases.py drives the reference client
# tests/serve/client.py over the pipes of `podman run -i ... IMAGE serve`, or over
# a listen socket in a host directory bind-mounted at /run/turninit (as uid 1000,
# or 4242, through setpriv). `turninit call` runs in a second container that
# mounts the same directory. The image is rootfs/build-image.sh's (busybox and a
# static bash: no python in it), sealed with oci/seal.sh and the committed test
# key tests/vectors/test-trusted.{key,pub}.
#
# Every podman (or docker) call has a hard timeout (and runs with --pull never --network
# none); containers are labelled and removed at exit, and so are the pod and the
# volumes of the sidecar test. Prints TAP ("ok N - NAME", "not ok N - NAME") with the evidence
# (measured times as "# ..." lines), writes "PASS FAIL" to
# build/test-results/serve, and ends with "N passed, N failed"; exits 1 on any
# failure.
#
# Environment: ITEST_ONLY=REGEX runs only the tests whose name matches (the
# images are built all the same); ITEST_BINARY=PATH tests another binary than
# build/turninit.
# shellcheck disable=SC2016 # '$X' is literal: it runs in the container
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CASES=$ROOT/tests/serve/cases.py
YAML=$ROOT/oci/k8s/sidecar.yaml
RESULTS=$ROOT/build/test-results
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"

IMG=localhost/turninit-svtest$ENGINE_TAG
SOCK_IN=/run/turninit/turninit.sock
# Debian's python3 where there is one: a pyenv or venv python3 on root's PATH
# may live in root's home, which other uids cannot enter.
PY=python3
[[ -x /usr/bin/python3 ]] && PY=/usr/bin/python3
ENGINES="podman docker"
suite_open serve svtest "rootful $ENGINE_NAME" podman buildah minisign timeout setpriv strace "$PY"
export PYTHONDONTWRITEBYTECODE=1
POD=turninit-svtest-$$
VOL_HOME=svtest-$$-home
VOL_SOCK=svtest-$$-socket
TMPDIRS=()


cleanup() {
	if ! docker_engine; then
		timeout 60 podman pod rm -f -t 0 "$POD" >/dev/null 2>&1
		timeout 60 podman volume rm -f "$VOL_HOME" "$VOL_SOCK" >/dev/null 2>&1
	fi
	cleanup_containers
	local d
	for d in "${TMPDIRS[@]}"; do
		rm -rf "$d"
	done
}

mkdir -p "$WORK/m"
trap cleanup EXIT


# sockdir: a fresh host directory for a listen socket, searchable by every uid
# (uid 1000 and 4242 connect from the host); its path in $SOCKDIR.
sockdir() {
	SOCKDIR=$(mktemp -d "${TMPDIR:-/tmp}/turninit-svtest.XXXXXX") || abort "mktemp"
	chmod 0755 "$SOCKDIR"
	TMPDIRS+=("$SOCKDIR")
}

# show_notes: the "# ..." lines (measured times) of the last case, on every run.
show_notes() {
	printf '%s' "$ERR" | grep '^# ' || true
}

T0=$(now_ms)

# --- keys, manifests, images -------------------------------------------------------
trusted_keys
# main: the default limits (timeout_s 600, output_bytes 16 MiB, concurrency 8) and
# callers.uids defaulting to [1000]; small: output_bytes 1 MiB and timeout_s 2.
manifest main "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\"]}}"
manifest small "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\"]},\"limits\":{\"timeout_s\":2,\"output_bytes\":1048576}}"
manifest shell-missing "{$HEAD,\"shell\":\"/bin/no-such-shell\",\"env\":{$SET}}"
mapfile -t ENV_SMALL < <(manifest_env "$M/small.json")
# one: limits.concurrency 1, so that a second exec waits
manifest one "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\"]},\"limits\":{\"concurrency\":1}}"
mapfile -t ENV_ONE < <(manifest_env "$M/one.json")
mapfile -t ENV_SHELL_MISSING < <(manifest_env "$M/shell-missing.json")
# noppid: a filter that refuses getppid, which keepers call
manifest noppid "{$HEAD,\"env\":{$SET},\"seccomp\":{\"deny\":[\"@default\",\"getppid\"]}}"
mapfile -t ENV_NOPPID < <(manifest_env "$M/noppid.json")

# The image, with the static helpers tests/serve/peerrace.c and fdpass.c
# (make helpers) and setsid.
overlay_image "$IMG" serve peerrace fdpass
prune_images
engine_images "$IMG:base" "$SEALED"
echo "# images built in $(( $(now_ms) - T0 )) ms"

# Is serve there at all? One clear line instead of thirty failures.
run_cmd "${ENGINE_RUN[@]}" -i --tmpfs "$HOME_TMPFS" "$SEALED" serve
if [[ $RC -eq 125 && $ERR == *"not available in this version"* ]]; then
	abort "$BIN has no serve mode: $ERR"
fi

# serve_case NAME CASE [PODMAN_RUN_OPTIONS...]: run cases.py CASE against
# `podman run -i ... $SEALED serve` (or docker run; container name
# turninit-svtest-PID-NAME).
serve_case() {
	local name=turninit-svtest-$$-$1 case=$2
	shift 2
	run_cmd timeout 300 "$PY" "$CASES" "$case" --name "$name" -- \
		"$ENGINE" run -i --rm --pull never --network none --label "$LABEL" --name "$name" \
		--tmpfs "$HOME_TMPFS" "$@" "$SEALED" serve "${SERVE_EXTRA[@]}"
	show_notes
}
SERVE_EXTRA=()   # serve's own flags, after "serve"

EXIT_OK='code=0 signal=null timed_out=false truncated=false'
EXIT_TERM='code=null signal=15 timed_out=false truncated=false'
EXIT_KILL='code=null signal=9 timed_out=false truncated=false'

# --- serve: the basics ---------------------------------------------------------------
if begin s-basics; then
	serve_case basics basics
	env_want='["HOME=/home/agent", "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin", "PWD=/work", "SHLVL=0", "TERM=dumb", "TZ=UTC", "_=/bin/env"]'
	expect_out "kinds started output output exit
stdout \"hi\\n\" stderr \"err\\n\"
exit $EXIT_OK
started pid is \$\$: yes
\"exit 3\" code=3 signal=null timed_out=false truncated=false
\"kill -TERM \$\$\" $EXIT_TERM
\"no-such-program-xyz\" code=127 signal=null timed_out=false truncated=false
127 stderr names it: yes
argv \"[a b][\$HOME][;id]\" $EXIT_OK
cwd \"/tmp\\n/home/agent\\n\"
default cwd \"/work\\n\"
env $env_want
env without env ${env_want/\"TZ=UTC\", /}
reused id \"again 1\\n\" $EXIT_OK
reused id \"again 2\\n\" $EXIT_OK
"
	end
fi

# --- serve: timeout, setsid, process control ---------------------------------------------
if begin s-setsid-spammer-timeout; then
	# The spammer leaves the command's process group and session with setsid; the
	# 1 s timeout must still end it (SIGTERM, 5 s grace, SIGKILL), and the exit
	# event comes only after it is gone.
	serve_case setsid setsid_timeout
	expect_out "exit code=null signal=15 timed_out=true truncated=false
exit event within 60 s: yes
stdout is spam lines only: yes
stderr \"\"
processes left \"1 turninit\\n\"
no output after the exit event: yes
"
	end
fi
if begin s-setsid-child-gets-term; then
	# Timeout and cancel send SIGTERM to what left the process group too, at
	# once: a setsid'd child's TERM trap runs (tests/serve/cases.py).
	serve_case trapterm setsid_trap_term
	expect_out "timeout \"ready\\nsetsid child got TERM\\nmain done\\n\" code=0 signal=null timed_out=true truncated=false
timeout exit event within 60 s: yes
cancel \"ready\\nsetsid child got TERM\\nmain done\\n\" $EXIT_OK
cancel exit event within 60 s: yes
"
	end
fi
if begin s-left-running-ends-with-the-command; then
	serve_case leftrunning left_running
	expect_out "left running \"bye\\n\" $EXIT_OK
exit event within 60 s: yes
sleeps left \"\"
"
	end
fi
if begin s-keeper-pool; then
	# The keepers of a turn: one per slot, reused; a late cancel; an idle one
	# killed from outside.
	serve_case pool pool "${ENV_ONE[@]}"
	expect_out "one keeper for three commands: yes
a request's env stays with its command: yes
seccomp: keeper turninit+1, command turninit+1
a command's SigIgn: 0000000000000000
late cancels: next command ran to its end: 3 of 3
turninit's children while idle: 1
after the idle keeper was killed: $EXIT_OK a new keeper: yes turninit's children: 1 zombies: 0
a keeper stopped while idle, then a command: \"ran\\n\" $EXIT_OK
"
	end
fi
# PID 1 never waits on a keeper (issue 27, finding 1): a command that loops
# kill(-1, SIGSTOP) beside 15 others; where Landlock scopes signals (ABI 6)
# it stops nothing, and below it every command still gets an answer.
if begin s-stopper-beside-15; then
	serve_case stopper stopper
	kernel_ask landlock
	if [[ $KERNEL_ANSWER =~ ^[0-9]+$ ]] && ((KERNEL_ANSWER >= 6)); then
		expect_out "every command answered: 15 of 15
ran to their end with their output: 15 of 15
stopper: \"stopper done\\n\" $EXIT_OK
the turn ended at the end of stdin: 0
"
	else
		expect_contains stdout "$OUT" "every command answered: 15 of 15"
		expect_contains stdout "$OUT" "the turn ended at the end of stdin: 0"
	fi
	end
fi
# In privileged mode too, a command cannot signal another's processes.
if kernel_test s-sibling-stop-refused landlock 6; then
	serve_case sibling sibling_stop
	expect_contains stdout "$OUT" "kill -STOP of another command's process: \"rc=1\\n\" \"bash: line 1: kill: ("
	expect_contains stdout "$OUT" ") - Operation not permitted\\n\""
	expect_contains stdout "$OUT" "its state: \"S\\n\""
	expect_contains stdout "$OUT" "victim: code=null signal=15"
	end
fi
# A keeper held before its command's exec (strace delays its clone 120 s from
# the host): the start is refused within two SERVE_START_MS, and the turn goes on.
# host_strace NAME: true where strace on the host can attach to a keeper, else
# NAME is skipped.
host_strace() {
	! rootless && return 0
	skip "$1" "rootless: strace from the host cannot attach to a keeper in podman's user namespace"
	return 1
}
if host_strace s-held-start-bounded && begin s-held-start-bounded; then
	serve_case held held_start
	expect_out "one keeper: 1
held: error \"exec: the command did not start within 10000 ms (its process was held before its exec): killed\"
after: after $EXIT_OK a new keeper: yes
"
	expect_contains stderr "$ERR" "turninit: serve: held: its start has not been reported in 5000 ms: continuing its process"
	expect_contains stderr "$ERR" "turninit: serve: held: its start has not been reported in 10000 ms: killing its keeper and the process"
	end
fi
# A start held 3 s before its exec (strace delays the keeper's clone): the
# command's timeout (1 s) counts from its exec, not from the hand-off.
if host_strace s-held-start-keeps-timeout && begin s-held-start-keeps-timeout; then
	serve_case heldtmo held_start_timeout
	expect_out "one keeper: 1
held: \"ran\\n\" $EXIT_OK
its duration_ms holds the held start: yes
"
	end
fi
# A cancel, then the command's timeout inside the cancel's grace: the exit
# is the cancel's (SIGKILL after the grace), not a timeout.
if begin s-cancel-then-timeout; then
	serve_case canceltmo cancel_then_timeout
	expect_out "cancelled: code=null signal=9 timed_out=false truncated=false
"
	end
fi
# A keeper whose clone(2) of a command fails (strace injects EAGAIN once from
# the host): an error event at once, and the exec report handed over for it is
# closed, so the next command on that keeper takes its own (the started pid).
if host_strace s-clone-failure-report-closed && begin s-clone-failure-report-closed; then
	serve_case clonefail clone_fails
	expect_out "one keeper: 1
failed: error \"exec: clone: Resource temporarily unavailable\" at once: yes
after: $EXIT_OK started pid is \$\$: yes the same keeper: yes
"
	end
fi
# Execs start without waiting for the answer to the one before; the answers,
# and what a later request does, keep their order.
if host_strace s-answers-keep-order && begin s-answers-keep-order; then
	serve_case order answers_in_order
	expect_out "one keeper: 1
order: held:error b:started fds:started nope:error
held: error \"exec: the command did not start within 10000 ms (its process was held before its exec): killed\"
b ran before the held exec's answer: yes $EXIT_OK
b's duration_ms under 5000: yes
fds of a command: 0 1 2 3 $EXIT_OK
"
	end
fi
# Ids in one write: an id freed by a failed start is taken again; a running
# one is refused, and the audit log of it all verifies whole.
if begin s-burst-ids; then
	mkdir -m 0700 "$WORK/burst-log"
	SERVE_EXTRA=(--audit-log /var/log/turninit/a.jsonl)
	serve_case burst burst_ids --tmpfs /locked:rw,mode=0700 -v "$WORK/burst-log:/var/log/turninit"
	SERVE_EXTRA=()
	expect_out "x error \"exec: command setup: workdir /locked: Permission denied\"
x started
x output \"second-x\\n\"
x exit $EXIT_OK
d started
d error \"exec: id d is already running or waiting\"
d exit $EXIT_TERM
"
	run_cmd "$BIN" audit-verify "$WORK/burst-log/a.jsonl"
	expect_rc 0
	end
fi
if begin s-filter-per-command; then
	# A filter that refuses a keeper's call is loaded in each command.
	serve_case noppid filter_per_command "${ENV_NOPPID[@]}"
	expect_out "command \"ran\\n\" $EXIT_OK
seccomp: keeper turninit+0, command turninit+1
"
	expect_contains stderr "$ERR" "turninit: seccomp: the filter is loaded in each command: it refuses getppid, which a keeper calls"
	# the audit log says so on each command's exec line (docs/audit.md)
	mkdir -m 0700 "$WORK/noppid-log"
	SERVE_EXTRA=(--audit-log /var/log/turninit/a.jsonl)
	serve_case noppid-log filter_per_command "${ENV_NOPPID[@]}" -v "$WORK/noppid-log:/var/log/turninit"
	SERVE_EXTRA=()
	eq "exec lines with filter_in_command" "$(grep -c '"event":"exec",.*"filter_in_command":true' "$WORK/noppid-log/a.jsonl")" \
		"$(grep -c '"event":"exec"' "$WORK/noppid-log/a.jsonl")"
	grep -q '"event":"exec"' "$WORK/noppid-log/a.jsonl" || why "no exec line in the log"
	end
fi
if begin s-timeout-capped-by-manifest; then
	serve_case capped timeout_capped "${ENV_SMALL[@]}"
	expect_out "exit code=null signal=15 timed_out=true truncated=false capped at 2 s: yes
"
	end
fi
if begin s-cancel-and-signal; then
	serve_case cancel cancel
	expect_out "cancel sleep $EXIT_TERM within 60 s: yes
cancel TERM-proof $EXIT_KILL after the 5 s grace: yes
signal INT \"ready\\ngot INT\\n\" code=5 signal=null timed_out=false truncated=false
signal KILL $EXIT_KILL
signal USR1 \"ready\\ngot USR1\\ndone\\n\" $EXIT_OK
"
	end
fi

if begin s-hardening; then
	# Found by review: a command handing its stdout to another must not hold
	# its exit event; cancel reaches a stopped command; argv words are words.
	serve_case hardening hardening
	expect_out "fd handed on $EXIT_OK A-done within 60 s: yes
cancel stopped $EXIT_TERM within 60 s: yes
argv dash code=127 signal=null timed_out=false truncated=false \"\"
"
	end
fi

# --- serve: stdin ----------------------------------------------------------------------
if begin s-stdin; then
	serve_case stdin stdin
	expect_out "cat without stdin $EXIT_OK stdout \"\" at once: yes
stdin is /dev/null [\"0\"]
stdin bytes arrive: yes $EXIT_OK
300000 stdin bytes arrive: yes
empty stdin $EXIT_OK \"\"
"
	end
fi

# --- serve: output ----------------------------------------------------------------------
if begin s-8-concurrent-1mib; then
	serve_case parallel parallel
	want="all 8 ran at once: yes"$'\n'
	for i in 0 1 2 3 4 5 6 7; do
		want+="p$i stdout ok stderr ok $EXIT_OK"$'\n'
	done
	expect_out "$want"
	end
fi
if begin s-output-truncated; then
	serve_case truncated truncated "${ENV_SMALL[@]}"
	expect_out "exit code=3 signal=null timed_out=false truncated=true
delivered 1048576 at most 1 MiB: yes
prefix of the output: yes
stdout+stderr 786432 262144 code=0 signal=null timed_out=false truncated=true
exactly the limit 1048576 $EXIT_OK
next \"still works\\n\" $EXIT_OK
"
	end
fi

# --- serve: bad requests --------------------------------------------------------------------
if begin s-bad-lines; then
	serve_case bad badlines
	want=
	for n in "invalid JSON" "not an object" "unknown op" "no op" "unknown field" \
		"command not a string" "command and argv" "neither command nor argv" "empty argv" \
		"argv not strings" "id with a space" "empty id" "id of 129 bytes" "id a number" "no id" \
		"relative cwd" "missing cwd" "cwd a file" "bad base64" "timeout_s 0" "timeout_s 1.5" \
		"timeout_s a string" "env value a number" "env an array" "duplicate key" \
		"cancel of no command" "signal of no command" "cancel with a field"; do
		want+="$n: error"$'\n'
	done
	want+="empty line: no event"$'\n'
	for n in "duplicate running id" "signal STOP" "signal SIGINT" "signal 2"; do
		want+="$n: error"$'\n'
	done
	want+="d1 after all that: started events started exit $EXIT_TERM
line of 1048576 bytes: ran, all stdin back
line of 1048577 bytes: error
line of 3 MiB: error one error: yes
next request \"next works\\n\" $EXIT_OK
nothing else arrived
"
	expect_out "$want"
	end
fi

# --- serve: concurrency and the end of the turn ------------------------------------------------
if begin s-concurrency-limit; then
	serve_case conc concurrency
	expect_out "signal to a waiting exec: error null \"signal: k9 has not started: it waits for a slot\"
a duplicate of a waiting exec: error null \"exec: id k9 is already running or waiting\"
cancel of a waiting exec: error \"k10\" \"exec: cancelled before it started\"
k9 started while 8 run: no
k0 $EXIT_TERM
k9 after a slot freed \"NINTH\\n\" $EXIT_OK
end of stdin: exit events 9 all SIGTERM: yes serve status 0
a waiting exec at the end: \"exec: the turn ended before it started\"
"
	end
fi
if begin s-queued-exec-times-out; then
	# An exec that waited for a slot keeps its own timeout from its start:
	# nothing else wakes the loop here (found by a fresh-user review).
	serve_case queuedtimeout queued_timeout "${ENV_ONE[@]}"
	expect_out "A code=null signal=15 timed_out=true truncated=false
B code=null signal=15 timed_out=true truncated=false
B ended at its own timeout, from its start: yes
"
	end
fi
if begin s-queue-200-at-once-in-order; then
	serve_case queue queue
	expect_out "200 at once: exit 0: 200 errors: 0
started in arrival order: yes
the 1025th waiting: \"exec: 8 commands running and 1024 waiting, the most that may wait (1024, 67108864 bytes of requests)\"
errors before the end: 1
at the end, the 1024 waiting: [\"exec: the turn ended before it started\"] serve status 0
"
	end
fi
if begin s-end-of-stdin; then
	serve_case eof end_of_stdin
	expect_out "events after EOF exit:e1 exit:e2
e1 $EXIT_TERM
e2 $EXIT_KILL
grace then SIGKILL: yes
serve status 0
"
	end
fi
# serve's stdout with no reader (its write fails: the connection is dead)
# while request lines wait unhandled: a cancel held behind the answer to the
# exec before it, an exec after it in the buffer. The turn ends, as when
# stdin ends. turninit runs as a shell's child here, its stdout a pipe whose
# reader closed it before the requests were sent (a FIFO orders the two),
# in one write (cat), so that turninit reads the three lines at once.
# (It used to wait for good: the lines were never handled, and stdin, no
# longer read, could not end the turn.)
if begin s-dead-stdout-pending-lines; then
	run_cmd "${ENGINE_RUN[@]}" --tmpfs "$HOME_TMPFS" --entrypoint /bin/sh "$SEALED" -c '
cd /tmp && /bin/busybox mkfifo go done && exec 3>&1
printf "%s\n" "{\"op\":\"exec\",\"id\":\"a1\",\"command\":\"true\"}" \
	"{\"op\":\"cancel\",\"id\":\"nosuch\"}" "{\"op\":\"exec\",\"id\":\"a2\",\"command\":\"true\"}" >rq
{ read _ <go; cat rq; read _ <done; } |
{ timeout 30 /sbin/turninit serve 2>/tmp/err; echo "serve ended: $?" >&3; echo >done; } |
{ exec <&-; echo >go; }
grep "not handled" /tmp/err'
	expect_rc 0
	expect_out $'serve ended: 0\nturninit: serve: a client that reads no more events: 2 request line(s) of it not handled\n'
	end
fi
# serve and mcp without -i: stdin is /dev/null, and they would read its end at
# once and exit 0 with nothing run (an MCP client shows only "failed to
# connect"): refused, naming -i.
if begin s-stdin-devnull-refused; then
	run_cmd "${ENGINE_RUN[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" serve
	expect_refusal "serve: stdin is /dev/null (podman run or docker run without -i): no request can reach it; add -i"
	run_cmd "${ENGINE_RUN[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" mcp
	expect_refusal "mcp: stdin is /dev/null"
	end
fi
if begin s-sigterm-143; then
	serve_case term sigterm
	expect_out "events after SIGTERM exit:t1
t1 $EXIT_TERM
status 143
"
	end
fi
if begin s-sigkill-client-ends-turn; then
	serve_case kill sigkill_client
	expect_out "turninit ended within 60 s: yes
$ENGINE_NAME ps lists it: no
"
	end
fi
if begin s-1000-true-no-leak; then
	serve_case many many
	expect_out "1000 true, failures 0
fds equal: yes
VmRSS within +256 KiB: yes
zombies \"0\\n\"
children of turninit after: 1 idle keeper(s): 1
"
	end
fi
if begin s-shell-missing-error-event; then
	serve_case noshell shell_missing "${ENV_SHELL_MISSING[@]}"
	expect_out "events error message names the shell: yes
then nothing
again error
serve status 0
"
	end
fi

# --- the schema ------------------------------------------------------------------------------
# policy/protocol.schema.json against every line of a real session (the one in
# docs/protocol.md). Needs a python3 with jsonschema (Debian: python3-jsonschema);
# without one the test is skipped, and says so.
SCHEMA_PY=
for p in "$PY" python3; do
	"$p" -c 'import jsonschema' 2>/dev/null && { SCHEMA_PY=$p; break; }
done
if [[ -z $SCHEMA_PY ]]; then
	! selected p-schema-matches-session || echo "# p-schema-matches-session skipped: no python3 with jsonschema"
elif begin p-schema-matches-session; then
	serve_case transcript transcript
	printf '%s' "$OUT" > "$WORK/session.txt"
	cat > "$WORK/validate.py" <<'PYEOF'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
def part(name):
    return jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/" + name})
want = {"->": part("request"), "<-": part("event")}
whole = jsonschema.Draft202012Validator(schema)
ok = {"->": 0, "<-": 0}
bad = []
for line in open(sys.argv[2]):
    d, _, text = line.partition(" ")
    if d not in want:
        continue
    try:
        obj = json.loads(text)
    except ValueError:
        bad.append("not JSON")
        continue
    if want[d].is_valid(obj) and whole.is_valid(obj):
        ok[d] += 1
    else:
        bad.append(obj.get("id", "?") if isinstance(obj, dict) else "?")
print("valid requests", ok["->"], "valid events", ok["<-"], "invalid", " ".join(map(str, bad)))
PYEOF
	run_cmd "$SCHEMA_PY" "$WORK/validate.py" "$ROOT/policy/protocol.schema.json" "$WORK/session.txt"
	expect_rc 0
	expect_out "valid requests 10 valid events 25 invalid c5 not JSON
"
	end
fi

# --- listen -------------------------------------------------------------------------------------
# One listen container for the tests below, its socket directory bind-mounted.
sockdir
LSOCK=$SOCKDIR
LNAME=turninit-svtest-$$-listen
run_cmd timeout 60 "$ENGINE" run -d --pull never --network none --label "$LABEL" --name "$LNAME" \
	--tmpfs "$HOME_TMPFS" -v "$LSOCK:/run/turninit" "$SEALED" listen --socket "$SOCK_IN"
LISTEN_UP=0
if [[ $RC -eq 0 ]] && wait_for 60 test -S "$LSOCK/turninit.sock"; then
	LISTEN_UP=1
else
	echo "# the listen container did not make its socket: $(timeout 60 "$ENGINE" logs "$LNAME" 2>&1 | head -n 5)"
fi
# as_uid UID CASE: cases.py CASE on the listen socket, connecting as UID from
# the host (the connection is made by a child that takes UID; cases.py stays root
# for its podman calls). Rootless, cases.py runs as root of podman's user
# namespace, where UID is the container uid UID.
as_uid() {
	run_cmd userns timeout 300 "$PY" "$CASES" "$2" --name "$LNAME" --socket "$LSOCK/turninit.sock" --uid "$1"
	show_notes
}
# call ARGS...: `turninit call` in a second container, as uid 1000, sharing the socket.
CALL=(timeout 60 "$ENGINE" run --rm --pull never --network none --label "$LABEL"
	-v "$LSOCK:/run/turninit" --entrypoint /sbin/turninit)
call() {
	run_cmd "${CALL[@]}" --user 1000:1000 "$IMG:base" call --socket "$SOCK_IN" "$@"
}
listen_test() { # listen_test NAME: begin NAME when selected and the listener is up
	begin "$1" || return 1
	if [[ $LISTEN_UP -ne 1 ]]; then
		why "the listen container is not up"
		end
		return 1
	fi
}

if listen_test l-socket-mode-0666; then
	# made by the container's root: root, or under rootless podman this user
	eq "socket" "$(stat -c '%F %a %u' "$LSOCK/turninit.sock")" "socket 666 $(id -u)"
	end
fi
if listen_test l-caller-1000-accepted; then
	as_uid 1000 caller_ok
	expect_out "stdout \"1000\\n/home/agent\\n\" $EXIT_OK
exit 3 code=3 signal=null timed_out=false truncated=false
"
	end
fi
for uid in 4242 0; do
	listen_test "l-uid-$uid-refused" || continue
	as_uid "$uid" refused
	expect_out "events error:null
"
	end
done
if listen_test l-refused-request-never-ran; then
	as_uid 1000 marker
	expect_out "\"not-ran\\n\"
"
	end
fi
if listen_test l-command-cannot-connect; then
	# A command of the turn runs uid 1000, a uid callers.uids admits: only the
	# check that the peer is not one of turninit's descendants stops it.
	as_uid 1000 inner_call
	expect_out "stdout \"status 125\\n\" $EXIT_OK
stderr is one turninit line: yes
"
	end
fi
if listen_test l-command-peer-race; then
	# The same, from a connection whose connecting process is gone (reaped) by
	# the time turninit checks it; its child holds the connection and sends an
	# exec request. 200 tries: every one must be refused.
	as_uid 1000 peer_race
	expect_out "peerrace \"tries 200 refused 200 escaped 0 other 0\\n\" $EXIT_OK
"
	end
fi
# The 200 refusals just made are not 200 log lines: at most 10 a 10 s
# window, the rest counted in one line once the window has passed.
if listen_test l-refusals-log-bounded; then
	wait_for 60 bash -c "timeout 60 $ENGINE logs $LNAME 2>&1 | grep -q 'listen: refused [0-9]* more peer(s) in 10 s, not each logged'" \
		|| why "no line counting the refusals not logged within 60 s"
	n=$(timeout 60 "$ENGINE" logs "$LNAME" 2>&1 | grep -c 'listen: refused a peer')
	((n <= 60)) || why "$n lines 'listen: refused a peer' (want at most 10 a 10 s window)"
	echo "# refused-peer lines in the listen log: $n"
	end
fi
if listen_test l-slow-neighbour-does-not-stall; then
	# Two connections are independent streams: one whose client stops reading
	# its events must not hold up the other's.
	as_uid 1000 slow_neighbour
	expect_out "answered while a neighbour stalls: yes \"hi\\n\" $EXIT_OK
after the neighbour closed \"hi\\n\" $EXIT_OK
"
	end
fi
# One connection's exec held before its exec (strace holds its keeper in
# clone(2) from the host) holds none of another connection's answers.
if ! rootless && listen_test l-held-exec-holds-no-neighbour; then
	as_uid 1000 held_neighbour
	expect_out "neighbour: \"b\\n\" $EXIT_OK before the held exec's answer: yes
held: error \"exec: the command did not start within 10000 ms (its process was held before its exec): killed\"
"
	end
elif rootless; then
	skip l-held-exec-holds-no-neighbour "rootless: strace from the host cannot attach to a keeper in podman's user namespace"
fi
if listen_test l-two-connections-independent; then
	as_uid 1000 two_connections
	expect_out "A \"A\\n\" $EXIT_OK B \"B\\n\" $EXIT_OK
at the same time: yes
closed connection's command \"gone\\n\"
"
	end
fi

# --- turninit call: the statuses of one-shot mode ----------------------------------------
call_test() { # call_test NAME WANT_RC WANT_STDOUT [CALL ARGS...]
	local name=$1 rc=$2 out=$3
	shift 3
	listen_test "$name" || return 0
	call "$@"
	expect_rc "$rc"
	expect_out "$out"
	end
}
call_test c-call-exit-0 0 $'hi\n' 'echo hi'
call_test c-call-exit-3 3 '' 'exit 3'
call_test c-call-sigterm-143 143 '' 'kill -TERM $$'
call_test c-call-argv 0 '[a b][$HOME][;id]' -- printf '[%s]' 'a b' '$HOME' ';id'
call_test c-call-stdin-is-dev-null 0 $'0\n' 'wc -c'
if listen_test c-call-missing-program-127; then
	call 'no-such-program-xyz'
	expect_rc 127
	expect_out ""
	expect_contains stderr "$ERR" "no-such-program-xyz"
	end
fi
if listen_test c-call-stderr; then
	call 'echo out; echo err >&2'
	expect_rc 0
	expect_out $'out\n'
	expect_err $'err\n'
	end
fi
if listen_test c-call-timeout-124; then
	# The sleep ends only by the timeout. The bound tells the call's 124 from
	# that of the engine's hard timeout (60 s), whatever the machine's load.
	t0=$(now_ms)
	call --timeout 1 'sleep 1000'
	ms=$(( $(now_ms) - t0 ))
	expect_rc 124
	expect_out ""
	((ms < 45000)) || why "call --timeout 1 took $ms ms"
	echo "# call --timeout 1 'sleep 1000': $ms ms"
	end
fi
if listen_test c-call-env-filtered; then
	# Each name sent (--env), and the server's filter still decides.
	run_cmd "${CALL[@]}" --user 1000:1000 -e TZ=UTC -e GH_TOKEN=x -e LD_PRELOAD=/x.so \
		"$IMG:base" call --socket "$SOCK_IN" --env TZ --env GH_TOKEN --env LD_PRELOAD \
		'echo "${TZ-unset} ${GH_TOKEN-unset} ${LD_PRELOAD-unset} $HOME"'
	expect_rc 0
	expect_out $'UTC unset unset /home/agent\n'
	end
fi
if listen_test c-call-env-only-named; then
	# TZ is admitted by the manifest, but call sends only what --env names:
	# it used to send its whole environment.
	run_cmd "${CALL[@]}" --user 1000:1000 -e TZ=UTC -e LANG=x \
		"$IMG:base" call --socket "$SOCK_IN" --env LANG 'echo "${TZ-unset} $LANG"'
	expect_rc 0
	expect_out $'unset C.UTF-8\n'
	end
fi
if listen_test c-call-stdin; then
	run_input $'x\ny\n' "${CALL[@]}" -i --user 1000:1000 "$IMG:base" call --socket "$SOCK_IN" --stdin cat
	expect_rc 0
	expect_out $'x\ny\n'
	end
fi
if listen_test c-call-uid-4242-refused; then
	run_cmd "${CALL[@]}" --user 4242:4242 "$IMG:base" call --socket "$SOCK_IN" 'echo COMMAND-RAN'
	expect_refusal ""
	end
fi
if listen_test c-call-no-socket-125; then
	call_nosock() { run_cmd "${CALL[@]}" --user 1000:1000 "$IMG:base" call --socket /run/turninit/none.sock 'echo COMMAND-RAN'; }
	call_nosock
	expect_refusal ""
	end
fi
if listen_test l-sigterm-143; then
	# Last of the listen tests: podman (or docker) stop ends the listener.
	as_uid 1000 listen_sigterm
	expect_out "events exit:t1
t1 $EXIT_TERM
container exit code 143
"
	end
fi
engine_rm "$LNAME"

# --- listen: the socket path --------------------------------------------------------------
if begin l-stale-socket-replaced; then
	sockdir
	"$PY" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$SOCKDIR/turninit.sock"
	name=turninit-svtest-$$-stale
	run_cmd timeout 60 "$ENGINE" run -d --pull never --network none --label "$LABEL" --name "$name" \
		--tmpfs "$HOME_TMPFS" -v "$SOCKDIR:/run/turninit" "$SEALED" listen --socket "$SOCK_IN"
	[[ $RC -eq 0 ]] || why "$ENGINE_NAME run -d failed"
	# uid 1000 runs a copy: the checkout may sit below a folder only root can
	# enter (a clone in a mktemp -d folder, as CI may make).
	install -m 0644 "$ROOT/tests/serve/client.py" "$SOCKDIR/client.py"
	# Up when a connection is answered (the stale file was there from the start).
	wait_for 60 userns setpriv --reuid 1000 --regid 1000 --clear-groups "$PY" "$SOCKDIR/client.py" \
		--socket "$SOCKDIR/turninit.sock" true 2>/dev/null
	run_cmd userns timeout 60 setpriv --reuid 1000 --regid 1000 --clear-groups "$PY" \
		"$SOCKDIR/client.py" --socket "$SOCKDIR/turninit.sock" 'echo fresh'
	expect_rc 0
	expect_out $'fresh\n'
	engine_rm "$name"
	end
fi
if begin l-other-file-refused; then
	sockdir
	echo keep > "$SOCKDIR/turninit.sock"
	prun --tmpfs "$HOME_TMPFS" -v "$SOCKDIR:/run/turninit" "$SEALED" listen --socket "$SOCK_IN"
	expect_refusal "$SOCK_IN"
	eq "the file" "$(cat "$SOCKDIR/turninit.sock")" keep
	end
fi

# --- the Kubernetes sidecar example under podman kube play ----------------------------------
if begin k-kubelet-memory-emptydir-home; then
	# HOME as a kubelet mounts an emptyDir with medium: Memory: a whole tmpfs
	# with no mode option, so its root is root-owned and mode 1777 (kubelet's
	# setupTmpfs mounts it after setupDir; podman kube play cannot show this: it
	# chmods a volume to the image directory's mode; exec: Docker mounts a
	# --tmpfs noexec without it, and turninit would say so). turninit must take it.
	prun --tmpfs "/home/agent:rw,exec,mode=1777$NOCOPYUP" "$SEALED" \
		'stat -f -c %T "$HOME"; stat -c "%a %u %g" "$HOME"'
	expect_rc 0
	expect_out $'tmpfs\n700 1000 1000\n'
	expect_err ""
	end
fi
if podman_test k-sidecar-kube-play "podman kube play: Docker runs no Kubernetes YAML; listen and call between two docker containers are the l- and c- tests"; then
	# The example as written, with this run's images, pod and volume names.
	sh "$ROOT/oci/seal.sh" --image "$IMG:base" --tag "$IMG:sidecar" --manifest "$M/main.json" \
		--key "$KEY_SEC" --trusted-comment "turninit serve test: sidecar" >"$WORK/seal-sidecar.log" 2>&1 \
		|| why "oci/seal.sh sidecar: $(tail -n 1 "$WORK/seal-sidecar.log")"
	sed -e "s|localhost/agent-turn:1|$IMG:sidecar|; s|localhost/agent-base:1|$IMG:base|" \
		-e "s|name: agent-turn\$|name: $POD|; s|turninit-home|$VOL_HOME|; s|turninit-socket|$VOL_SOCK|" \
		"$YAML" > "$WORK/sidecar.yaml"
	# podman kube play (4.3) makes every emptyDir a plain volume on disk, ignoring
	# medium: Memory; a volume of that name made beforehand is used instead. This
	# one is what a kubelet mounts for medium: Memory: a tmpfs with no mode
	# option (so its root is root-owned, mode 1777) and no size without sizeLimit.
	run_cmd timeout 60 podman volume create --opt type=tmpfs --opt device=tmpfs "$VOL_HOME"
	[[ $RC -eq 0 ]] || why "podman volume create $VOL_HOME failed"
	# podman gives a new volume to the user of the first container that mounts it:
	# the agent (uid 1000) may come first, and turninit (root, without
	# CAP_DAC_OVERRIDE) could not make its socket there. A volume made with an
	# owner keeps it.
	run_cmd timeout 60 podman volume create --opt o=uid=0,gid=0 "$VOL_SOCK"
	[[ $RC -eq 0 ]] || why "podman volume create $VOL_SOCK failed"
	run_cmd timeout 120 podman kube play --network none "$WORK/sidecar.yaml"
	if [[ $RC -ne 0 ]]; then
		why "podman kube play failed"
	else
		run_cmd timeout 60 podman wait "$POD-agent"
		eq "agent container status" "${OUT%$'\n'}" 0
		run_cmd timeout 60 podman logs "$POD-agent"
		expect_out 'hello from uid 1000 in /work, HOME /home/agent
status 0
[a b]
[$HOME]
status 0
to stderr
status 3
'
		expect_err ""
		side_logs=$(timeout 60 podman logs "$POD-turninit" 2>&1)
		side_state=$(timeout 60 podman inspect --format '{{.State.Status}}' "$POD-turninit" 2>&1)
		eq "sidecar state after the agent's calls" "$side_state" running
		run_cmd timeout 60 podman pod stop -t 10 "$POD"
		eq "sidecar exit code" "$(timeout 60 podman inspect --format '{{.State.ExitCode}}' "$POD-turninit" 2>&1)" 143
		[[ -z $side_logs ]] || echo "# sidecar log: ${side_logs//$'\n'/ | }"
	fi
	run_cmd timeout 120 podman kube down "$WORK/sidecar.yaml"
	[[ $RC -eq 0 ]] || why "podman kube down failed"
	timeout 60 podman volume rm -f "$VOL_HOME" "$VOL_SOCK" >/dev/null 2>&1
	end
fi

echo "# suite ran in $(( $(now_ms) - T0 )) ms"
results
