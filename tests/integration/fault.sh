#!/bin/bash
# fault.sh - turninit under faults (issue 14): memory pressure, a keeper lost,
# an audit log that fails, file descriptors running out, the container killed,
# commands that stop or ignore SIGTERM, a client that goes away mid-line. Each
# case asserts what survives and what is lost; docs/hostile-input.md
# ("Faults") names every fault with its test, and the last test here checks
# that the table and the suite agree.
#
# Root, rootful podman (make setup). The image is rootfs/build-image.sh's
# (busybox and a static bash) with the static helper tests/fault/memhog.c,
# sealed with oci/seal.sh and the committed test key. The client side is
# tests/fault/cases.py, on the reference client tests/serve/client.py. The
# audit log is a file in a host directory bind-mounted at /audit (outside
# every writable path, not writable by the commands' uid).
#
# Every podman call has a hard timeout and runs with --pull never --network
# none; containers are labelled and removed at exit. Prints TAP ("ok N - NAME",
# "not ok N - NAME") with the evidence, writes "PASS FAIL SKIP" to
# build/test-results/fault, and ends with "N passed, N failed".
# Environment: ITEST_ONLY=REGEX runs only the tests whose name matches (the
# image is built all the same); ITEST_BINARY=PATH tests another binary.
# shellcheck disable=SC2016 # '$X' is literal: it runs in the container
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VECTORS=$ROOT/tests/vectors
CASES=$ROOT/tests/fault/faults.py
DOC=$ROOT/docs/hostile-input.md
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
PY=python3
[[ -x /usr/bin/python3 ]] && PY=/usr/bin/python3
suite_open fault fttest "rootful podman" podman buildah minisign timeout "$PY"
export PYTHONDONTWRITEBYTECODE=1
IMG=localhost/turninit-fttest
LABEL=turninit-fttest=$$
trap cleanup_containers EXIT

T0=$(now_ms)
KEY_SEC=$VECTORS/test-trusted.key
KEY_PUB=$VECTORS/test-trusted.pub
[[ -r $KEY_SEC && -r $KEY_PUB ]] || abort "tests/vectors/test-trusted.{key,pub} missing"
MANIFEST_KEY=$KEY_SEC
M=$WORK/m
# main: the defaults (timeout_s 600, concurrency 8); short: timeout_s 2.
manifest main "{$HEAD,\"env\":{$SET}}"
manifest short "{$HEAD,\"env\":{$SET},\"limits\":{\"timeout_s\":2}}"
mapfile -t ENV_SHORT < <(manifest_env "$M/short.json")
# wide: 64 slots, each with a keeper of its own once it has had a command
manifest wide "{$HEAD,\"env\":{$SET},\"limits\":{\"concurrency\":64}}"
mapfile -t ENV_WIDE < <(manifest_env "$M/wide.json")

overlay_image "$IMG" fault memhog
echo "# image built in $(( $(now_ms) - T0 )) ms"

# auditdir NAME: a fresh host directory for an audit log, root's, mode 0755; AUD.
auditdir() {
	AUD=$WORK/audit-$1
	rm -rf "$AUD"
	mkdir -p "$AUD"
	chmod 0755 "$AUD"
}

# fcase NAME CASE [PODMAN_RUN_OPTIONS...] -- [TURNINIT_ARGS...]: cases.py CASE
# against `podman run -i ... $SEALED serve TURNINIT_ARGS` (container
# turninit-fttest-PID-NAME); RC, OUT, ERR.
fcase() {
	local name=turninit-fttest-$$-$1 case=$2 opts=()
	shift 2
	while [[ $# -gt 0 && $1 != -- ]]; do
		opts+=("$1")
		shift
	done
	shift
	# From the scratch directory: podman's conmon writes a file "oom" into
	# its working directory when the container's cgroup meets the OOM killer.
	pushd "$WORK" >/dev/null || abort "cd $WORK"
	run_cmd timeout 300 "$PY" "$CASES" "$case" --name "$name" -- \
		podman run -i --rm --pull never --network none --label "$LABEL" --name "$name" \
		--tmpfs "$HOME_TMPFS" "${opts[@]}" "$SEALED" serve "$@"
	popd >/dev/null || abort "cd back"
	printf '%s' "$ERR" | grep '^# ' || true
}

MOUNTS=()
TMPDIRS=()
cleanup() {
	cleanup_containers
	local m
	for m in "${MOUNTS[@]}"; do
		umount "$m" 2>/dev/null
	done
	for m in "${TMPDIRS[@]}"; do
		rm -rf "$m"
	done
}

# sockdir: a fresh host directory for a listen socket, root's, mode 0755, in
# TMPDIR: uid 1000 connects from the host, and the tree may sit in a directory
# only root can enter (a mktemp -d clone); its path in SOCKDIR.
sockdir() {
	SOCKDIR=$(mktemp -d "${TMPDIR:-/tmp}/turninit-fttest.XXXXXX") || abort "mktemp"
	chmod 0755 "$SOCKDIR"
	TMPDIRS+=("$SOCKDIR")
}
trap cleanup EXIT

# auditlog FILE [ID.KEY...]: the facts faults.py tells of an audit log; in AL.
auditlog() {
	AL=$("$PY" "$CASES" auditlog "$@" 2>&1)
}

# --- 1. memory: the OOM killer takes commands, never turninit -----------------------
if kernel_test f-oom-takes-the-command oom_kill; then
	# A memfd filled past the container's memory limit by a process of 112 kB
	# resident, while a smaller one sleeps: the OOM killer must take the hog
	# (oom_score_adj 1000), not PID 1 or a keeper (0), which are larger. The
	# bystander sleeps until the test cancels it, once the hog is gone (it is
	# there however slow the machine): still running then, and ended by the
	# cancel's SIGTERM, not by the OOM killer.
	auditdir oom
	fcase oom oom --memory 96m --memory-swap 96m -v "$AUD:/audit" -- --audit-log /audit/turn.jsonl
	expect_out "oom_score_adj \"1000\\n0\\n\" lowering: \"Permission denied\\n\"
hog \"memhog: filling\\n\" code=null signal=9 timed_out=false truncated=false oom_killed=true
bystander running after the hog: yes
bystander code=null signal=15 timed_out=false truncated=false
next \"next\\n\" code=0 signal=null timed_out=false truncated=false
serve status 0
"
	auditlog "$AUD/turn.jsonl" hog.signal hog.oom_killed bystander.signal
	eq "audit log" "$AL" "ends with a newline: yes
lines that are not JSON: 0
events turn_start exec:c1 exit:c1 exec:bystander exec:hog exit:hog cancel:bystander exit:bystander exec:next exit:next turn_end
hog.signal 9
hog.oom_killed true
bystander.signal 15"
	end
fi
if begin f-oom-score-adj-one-shot; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" 'cat /proc/self/oom_score_adj; echo 0 > /proc/self/oom_score_adj'
	expect_rc 1
	expect_out "1000"$'\n'
	expect_contains stderr "$ERR" "/proc/self/oom_score_adj: Permission denied"
	end
fi

# --- 2. a lost keeper fails closed -------------------------------------------------
if begin f-keeper-lost; then
	# The keeper of a command with two setsid children is killed from the host:
	# turninit kills every process of that command (orphaned to it), at once,
	# says "lost", and leaves the other command alone: it runs on until the
	# test cancels it at the end (SIGTERM), not lost.
	auditdir lost
	fcase lost keeper_lost -v "$AUD:/audit" -- --audit-log /audit/turn.jsonl
	expect_out "k code=null signal=9 timed_out=false truncated=false lost=true
exit event within 60 s: yes
left of k none
bystander running after that: yes
bystander code=null signal=15 timed_out=false truncated=false
serve status 0
"
	expect_contains stderr "$ERR" "serve: k: its keeper ended without reporting the command's end: killed "
	auditlog "$AUD/turn.jsonl" k.lost k.signal bystander.lost
	eq "audit log" "$AL" "ends with a newline: yes
lines that are not JSON: 0
events turn_start exec:bystander exec:k exit:k exec:c1 exit:c1 cancel:bystander exit:bystander turn_end
k.lost true
k.signal 9
bystander.lost false"
	end
fi

if begin f-keeper-stopped; then
	fcase stopped-keeper keeper_stopped --
	expect_out "s code=null signal=15 timed_out=true truncated=false within 60 s: yes
serve status 0
"
	end
fi

# --- 3. the audit log fails ---------------------------------------------------------
if begin f-audit-log-full; then
	# The audit log's file system fills up (a host tmpfs of 8 KiB): the exec that
	# cannot be logged is refused, and so is every one after it; the command
	# that was running ends as it would; the log holds whole lines only.
	auditdir full
	mount -t tmpfs -o size=8k,mode=0755 turninit-fttest "$AUD" && MOUNTS+=("$AUD")
	fcase full audit_full -v "$AUD:/audit" -- --audit-log /audit/turn.jsonl
	expect_out "refused once full: \"exec: the audit log cannot be written\"
long running then: yes
running command \"started\\nstill here\\n\" code=0 signal=null timed_out=false truncated=false
after error \"exec: the audit log cannot be written\"
serve status 0
"
	expect_contains stderr "$ERR" "audit log: write failed: No space left on device; further commands are refused"
	auditlog "$AUD/turn.jsonl"
	eq "audit log, first lines" "$(printf '%s\n' "$AL" | head -n 2)" "ends with a newline: yes
lines that are not JSON: 0"
	expect_contains "audit log" "$AL" "events turn_start exec:long exec:e0 exit:e0"
	# what the full file system kept is one chain, whole: a line that could
	# not be written is not in it, and the next one links to the last written;
	# the exits lost are findings (an exec with no end before turn_end). Where
	# the room the cut-back line left is too small for turn_end too (the
	# lines' lengths vary with pids and times), the turn has no turn_end, and
	# the open exec is a note: audit-verify exits 0 and says so.
	run_cmd "$BIN" audit-verify "$AUD/turn.jsonl"
	if grep -q '"event":"turn_end"' "$AUD/turn.jsonl"; then
		expect_rc 1
		expect_contains "audit-verify" "$OUT" "exec 0/long has no exit or refused before its turn's turn_end"
	else
		echo "# the full file system had no room for turn_end either"
		expect_rc 0
		expect_contains "audit-verify" "$OUT" "exec 0/long has no exit or refused: its turn has no turn_end"
	fi
	[[ $OUT == *"chain breaks"* ]] && why "the chain broke where lines were lost: $OUT"
	end
fi
if begin f-audit-fd-closed; then
	# --audit-log fd:3 is a pipe whose reader (a log collector) goes away.
	fcase fdclosed audit_fd_closed --preserve-fds 1 -- --audit-log fd:3
	expect_out "one \"one\\n\" code=0 signal=null timed_out=false truncated=false
refused at once: yes \"exec: the audit log cannot be written\"
serve status 0
"
	expect_contains stderr "$ERR" "audit log: write failed: Broken pipe; further commands are refused"
	end
fi

# --- 4. file descriptors run out ----------------------------------------------------
if begin f-nofile-many-connections; then
	# turninit's own RLIMIT_NOFILE (64) is reached by 70 connections that each
	# start a command (four fds a command, one a connection): what does not fit
	# is answered with an error naming the limit (a connection turninit cannot
	# take is accepted on a spare fd to be told so), turninit does not spin on
	# a listen socket it cannot accept from, and once they are gone a new
	# connection runs a command. (podman given only a nofile
	# ulimit sets an RLIMIT_NPROC that crun cannot: nproc is given too.)
	sockdir
	sockdir=$SOCKDIR
	name=turninit-fttest-$$-nofile
	run_cmd timeout 300 "$PY" "$CASES" nofile --name "$name" --socket "$sockdir/t.sock" -- \
		podman run --rm --pull never --network none --label "$LABEL" --name "$name" \
		--tmpfs "$HOME_TMPFS" --ulimit nofile=64:64 --ulimit nproc=4096:4096 -v "$sockdir:/run/turninit" \
		"$SEALED" listen --socket /run/turninit/t.sock
	printf '%s' "$ERR" | grep '^# ' || true
	expect_out "every connection answered: yes
some ran: yes
errors name the limit: yes
turninit did not spin: yes
afterwards \"fresh\\n\" code=0 signal=null timed_out=false truncated=false
"
	end
fi

if begin f-nofile-keepers; then
	# serve, 64 slots, RLIMIT_NOFILE 40: new keepers run out of fds too
	fcase nofilek nofile_keepers --ulimit nofile=40:40 --ulimit nproc=4096:4096 "${ENV_WIDE[@]}" --
	expect_out "some ran: yes
some refused: yes
errors name the limit: yes
each that ran ends at its cancel: yes
afterwards \"fresh\\n\" code=0 signal=null timed_out=false truncated=false
serve status 0
"
	end
fi

# --- 5. the container killed mid-command --------------------------------------------
if begin f-podman-kill-mid-command; then
	auditdir killed
	fcase killed killed -v "$AUD:/audit" -- --audit-log /audit/turn.jsonl
	expect_out "client saw \"begun\\n\" exit event: no
serve status 137
"
	auditlog "$AUD/turn.jsonl"
	eq "audit log" "$AL" "ends with a newline: yes
lines that are not JSON: 0
events turn_start exec:k"
	# after kill -9 the log is whole up to its last line, without turn_end
	run_cmd "$BIN" audit-verify "$AUD/turn.jsonl"
	expect_rc 0
	expect_contains "audit-verify" "$OUT" "turn_end: it ends at line 2"
	expect_contains "audit-verify" "$OUT" ": 2 lines, 1 turns: whole, head "
	end
fi

# --- 6. stopped, or deaf to SIGTERM ---------------------------------------------------
if begin f-stopped-and-term-ignoring; then
	fcase stopped stopped --
	expect_out "timeout stopped \"stopping\\n\" code=null signal=15 timed_out=true truncated=false within 60 s: yes
cancel stopped \"stopping\\n\" code=null signal=15 timed_out=false truncated=false within 60 s: yes
timeout ignoring code=null signal=9 timed_out=true truncated=false after the grace: yes
cancel ignoring code=null signal=9 timed_out=false truncated=false after the grace: yes
left none
serve status 0
"
	end
fi

# --- 7. half a line, then gone --------------------------------------------------------
if begin f-half-line-then-gone; then
	sockdir
	sockdir=$SOCKDIR
	name=turninit-fttest-$$-half
	run_cmd timeout 300 "$PY" "$CASES" half_line --name "$name" --socket "$sockdir/t.sock" -- \
		podman run --rm --pull never --network none --label "$LABEL" --name "$name" \
		--tmpfs "$HOME_TMPFS" -v "$sockdir:/run/turninit" \
		"$SEALED" listen --socket /run/turninit/t.sock
	expect_out "next connection \"still serving\\n\" code=0 signal=null timed_out=false truncated=false
"
	end
fi
if begin f-half-line-serve; then
	# In serve mode the end of stdin inside a line ends the turn: the half line
	# is not run, and turninit says so.
	run_input '{"op":"exec","id":"half","command":"echo RAN' "${PODMAN_RUN[@]}" -i \
		--tmpfs "$HOME_TMPFS" "$SEALED" serve
	expect_rc 0
	expect_out ""
	end
fi

# --- the table of docs/hostile-input.md, "Faults" -------------------------------------
if begin f-doc-table; then
	mapfile -t doc < <(sed -n '/^## Faults/,/^## /p' "$DOC" | grep -o '`f-[a-z0-9-]*`' | tr -d '`' | grep -v '^f-doc-table$' | sort -u)
	mapfile -t suite < <(grep -oE "^if (begin|kernel_test) f-[a-z0-9-]*" "$0" | sed -E "s/^if (begin|kernel_test) //" | grep -v "^f-doc-table$" | sort -u)
	eq "tests named in docs/hostile-input.md, Faults" "${doc[*]}" "${suite[*]}"
	end
fi

echo "# fault suite: $(( ($(now_ms) - T0) / 1000 )) s"
results
