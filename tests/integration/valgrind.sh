#!/bin/bash
# valgrind.sh - memcheck over the host (glibc) build of turninit (issue 5,
# "Deliver" 3): one-shot runs, a refusal, verify, a serve session that walks
# every request kind (tests/valgrind/session.py), an mcp session that walks every
# kind of JSON-RPC message and tool result and one that SIGINT ends
# (tests/valgrind/mcp_session.py), and listen with `call` and with
# `mcp --socket` (the MCP bridge, driven by mcp_session.py --bridge) as its
# clients. Each run must leave no valgrind error: no invalid access, no use of
# an uninitialised value, no definite or indirect leak, no fd error.
#
# The binary is build/vg/turninit (`make valgrind` builds it): the same sources
# as the product, gcc and glibc, -O1 -g, with TURNINIT_VALGRIND defined. That
# define changes one thing: valgrind 3.19 has no wrapper for seccomp(2), so
# libseccomp is told its API level (seccomp_api_set(3)) instead of probing the
# kernel with seccomp(2); the exported filter is then loaded with prctl, as in
# the product. valgrind 3.19 has no wrapper for the Landlock syscalls either:
# their ENOSYS makes turninit run without Landlock, so these manifests say
# landlock.optional (every other suite runs with Landlock enforced).
#
# Runs are those of the PID 1 suite (tests/pid1/ns.sh through unshare): PID 1 of
# a PID and mount namespace, or a subreaper under a shell there. valgrind keeps
# 12 descriptors of its own above the client's RLIMIT_NOFILE and refuses a
# change of the hard limit, so it is started with 1024+12 descriptors: the
# manifest's nofile (1024) is then exactly the hard limit the client sees.
# Root (unshare, the key bind mount, the HOME tmpfs). Every run has a hard
# timeout. Prints TAP ("ok N - NAME", "not ok N - NAME"), then "N passed, N failed"; the
# counts go to build/test-results/valgrind.
# shellcheck disable=SC2016 # '$X' is literal: it runs in the command's bash
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=$ROOT/build/vg/turninit
NS=$ROOT/tests/pid1/ns.sh
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
suite_open valgrind vgtest "unshare, mount" unshare minisign timeout valgrind python3 prlimit


mkdir -p "$WORK/keys" "$WORK/vg"
cp "$ROOT/tests/vectors/test-trusted.pub" "$WORK/keys/trusted.pub"
LEFT=$WORK/left
VGLOG=$WORK/vg

MANIFEST_KEY=$ROOT/tests/vectors/test-trusted.key
# Writable: HOME only, so that the audit log in the clone's build/ folder is
# outside every writable path even when the clone lies under /tmp.
VGM='"landlock":{"optional":true,"writable":["/home/agent"]}'
ALLOW='"allow":["TZ"]'
manifest main "{${HEAD/\"\/work\"/\"\/home\/agent\"},\"env\":{$SET,$ALLOW},$VGM,\"callers\":{\"uids\":[0,1000]}}"
# mcp: main with a result of 256 bytes, so that a result is cut at 128 + 128.
manifest mcp "{${HEAD/\"\/work\"/\"\/home\/agent\"},\"env\":{$SET,$ALLOW},\"limits\":{\"result_bytes\":256},$VGM}"
# bridge: the listen server of the MCP bridge; main with a result of 256 bytes
# (a result is cut), and callers.uids [0]: the bridge runs as root, like this script.
manifest bridge "{${HEAD/\"\/work\"/\"\/home\/agent\"},\"env\":{$SET,$ALLOW},\"limits\":{\"result_bytes\":256},$VGM,\"callers\":{\"uids\":[0]}}"
manifest short "{${HEAD/\"\/work\"/\"\/tmp\"},\"env\":{$SET},\"limits\":{\"timeout_s\":1},$VGM}"

# VG: memcheck as strict as it goes for a C program: every leak kind that means
# lost memory is an error, errors make valgrind exit 99, and each process
# (turninit, and each fork of it until it execs bash) logs to a file of its own.
VG=(prlimit --nofile=1036:1036 valgrind -q --error-exitcode=99 --leak-check=full
	--show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
	--track-fds=no --trace-children=no --log-file="$VGLOG/%p.log")

# ns MODE NAME [ENV...] -- ARGV...: set TI to run ARGV (turninit under valgrind)
# in a fresh namespace as MODE, with manifest NAME handed over in the environment.
ns() {
	local mode=$1 name=$2
	shift 2
	local env=()
	while [[ $1 != -- ]]; do env+=("$1"); shift; done
	shift
	TI=(timeout -k 5 "${TMO:-120}" unshare --pid --fork --kill-child --mount-proc
		sh "$NS" "$mode" "$WORK/keys" "$LEFT" env -i
		"TURNINIT_MANIFEST=$(b64 "$WORK/m/$name.json")"
		"TURNINIT_MANIFEST_SIG=$(b64 "$WORK/m/$name.json.minisig")" "${env[@]}"
		"${VG[@]}" "$BIN" "$@")
}

# expect_clean: no valgrind error in any log of the run (with -q, valgrind
# writes a "==PID==" line only for an error), and no warning but the Landlock
# syscalls it does not know (444-446). Then the logs are cleared.
expect_clean() {
	local f bad warn n=0
	for f in "$VGLOG"/*.log; do
		[[ -e $f ]] || continue
		n=$((n + 1))
		bad=$(grep -m 5 '^==[0-9]*==' "$f")
		[[ -z $bad ]] || why "valgrind error in $(basename "$f"): $bad"
		# valgrind 3.19 knows no landlock_* (444-446 on both architectures)
		warn=$(grep '^--[0-9]*-- WARNING' "$f" | grep -Ev 'unhandled (amd64|arm64)-linux syscall: 44[456]$')
		[[ -z $warn ]] || why "valgrind warning in $(basename "$f"): $warn"
	done
	((n > 0)) || why "no valgrind log: valgrind did not run"
	rm -f "$VGLOG"/*.log
}

# expect_audit_kinds N: $WORK/audit.log is one turn (one turn_start, one
# turn_end) with N exit lines, each line a JSON object.
expect_audit_kinds() {
	local kinds
	kinds=$(python3 -c 'import json, sys, collections
c = collections.Counter(json.loads(l)["event"] for l in open(sys.argv[1]))
print(" ".join("%s=%d" % kv for kv in sorted(c.items())))' "$WORK/audit.log" 2>&1)
	expect_contains "audit log events" "$kinds" "turn_start=1"
	expect_contains "audit log events" "$kinds" "turn_end=1"
	expect_contains "audit log events" "$kinds" "exit=$1"
}

# The harness can fail: a program that leaks and reads uninitialised memory
# makes valgrind exit 99 with both errors in its log.
if begin harness-catches-errors; then
need_helpers faulty
run_cmd timeout 60 "${VG[@]}" "$HELPERS/faulty"
expect_rc 99
log=$(cat "$VGLOG"/*.log)
expect_contains "valgrind log" "$log" "Conditional jump or move depends on uninitialised value(s)"
expect_contains "valgrind log" "$log" "definitely lost"
rm -f "$VGLOG"/*.log
end; fi

for M in pid1 subreaper; do
	if begin "$M-one-shot"; then
	ns "$M" main TZ=UTC GH_TOKEN=secret -- -- 'echo hi; env | sort | cut -d= -f1 | tr "\n" " "; exit 3'
	run_cmd "${TI[@]}"
	expect_rc 3
	expect_out $'hi\nHOME LANG PATH PWD SHLVL TERM TZ _ '
	expect_clean
	end; fi

	if begin "$M-one-shot-stdin"; then
	ns "$M" main -- -- 'tr a-z A-Z'
	run_input $'piped in\n' "${TI[@]}"
	expect_rc 0
	expect_out $'PIPED IN\n'
	expect_clean
	end; fi

	if begin "$M-one-shot-signal-death"; then
	ns "$M" main -- -- 'sleep 100 & kill -TERM $$'
	run_cmd "${TI[@]}"
	expect_rc 143
	expect_clean
	end; fi

	if begin "$M-one-shot-timeout"; then
	ns "$M" short -- -- 'sleep 100'
	run_cmd "${TI[@]}"
	expect_rc 124
	expect_clean
	end; fi

	# With the audit log: every line of it is a JSON object, and each exec
	# request that ran has its exit event (18 in the session).
	if begin "$M-serve-session"; then
	rm -f "$WORK/audit.log"
	ns "$M" main -- serve --audit-log "$WORK/audit.log"
	CMD="session.py -- [$M] turninit serve --audit-log $WORK/audit.log"
	run_cmd timeout -k 5 300 python3 "$ROOT/tests/valgrind/session.py" -- "${TI[@]}"
	expect_rc 0
	expect_out $'server exit 0\n'
	expect_clean
	expect_audit_kinds 18
	end; fi
done

# turninit mcp (JSON-RPC 2.0 over stdio): every kind of message and result
# (tests/valgrind/mcp_session.py), with the audit log; end of stdin ends it with
# 0. Each tools/call that ran has its exit event (6, the cancelled one too).
if begin pid1-mcp-session; then
rm -f "$WORK/audit.log"
ns pid1 mcp -- mcp --audit-log "$WORK/audit.log"
CMD="mcp_session.py -- [pid1] turninit mcp --audit-log $WORK/audit.log"
run_cmd timeout -k 5 300 python3 "$ROOT/tests/valgrind/mcp_session.py" -- "${TI[@]}"
expect_rc 0
expect_out $'server exit 0\n'
expect_clean
expect_audit_kinds 6
end; fi

# SIGINT to turninit mcp while a call runs: the call is answered (its command
# got SIGTERM), then exit 130.
if begin pid1-mcp-sigint; then
ns pid1 mcp -- mcp
CMD="mcp_session.py --sigint -- [pid1] turninit mcp"
run_cmd timeout -k 5 300 python3 "$ROOT/tests/valgrind/mcp_session.py" --sigint -- "${TI[@]}"
expect_rc 0
expect_out $'server exit 130\n'
expect_clean
end; fi

if begin refusal-tampered-manifest; then
cp "$WORK/m/main.json" "$WORK/m/tampered.json"
cp "$WORK/m/main.json.minisig" "$WORK/m/tampered.json.minisig"
sed -i 's/"uid":1000/"uid":1001/' "$WORK/m/tampered.json"
ns pid1 tampered -- -- 'echo ran'
run_cmd "${TI[@]}"
expect_refusal "signature"
expect_clean
end; fi

if begin verify; then
ns pid1 main -- verify
run_cmd "${TI[@]}"
expect_rc 0
expect_contains stdout "$OUT" '"uid": 1000'
expect_clean
end; fi

# listen: the server under valgrind as PID 1 of a namespace, `call` (also under
# valgrind) and session.py as clients from outside it; SIGTERM ends the server.
if begin listen-and-call; then
SOCK=$WORK/turninit.sock
rm -f "$SOCK"
ns pid1 main -- listen --socket "$SOCK"
"${TI[@]}" </dev/null >"$WORK/listen.out" 2>"$WORK/listen.err" &
BG=$!
wait_for 60 test -S "$SOCK" || why "no socket at $SOCK within 60 s"
run_cmd timeout 120 "${VG[@]}" "$BIN" call --socket "$SOCK" -- 'echo via call; exit 4'
expect_rc 4
expect_out $'via call\n'
run_cmd timeout -k 5 300 python3 "$ROOT/tests/valgrind/session.py" --socket "$SOCK"
expect_rc 0
# PID 1 of the namespace: the child of unshare, itself the child of timeout.
us=$(pgrep -P "$BG" -x unshare)
p1=$(pgrep -P "${us:-0}")
[[ -n $p1 ]] && kill -TERM "$p1"
wait "$BG"
RC=$?
CMD="[pid1] turninit listen, then SIGTERM"
[[ $RC == 0 || $RC == 143 ]] || why "listen ended with status $RC, want 0 or 143"
expect_clean
end; fi

# listen with the MCP bridge as its client: the server as in listen-and-call, and
# `turninit mcp --socket` under valgrind (as root: callers.uids [0]; the server's
# uid is 0, what the bridge checks by default) driven by mcp_session.py --bridge:
# initialize, tools/list (the description says the server manifest's workdir and
# result_bytes), an exit 3, a cut output, a cancel, then end of stdin: exit 0.
if begin listen-and-mcp-bridge; then
SOCK=$WORK/bridge.sock
rm -f "$SOCK"
ns pid1 bridge -- listen --socket "$SOCK"
"${TI[@]}" </dev/null >"$WORK/listen.out" 2>"$WORK/listen.err" &
BG=$!
wait_for 60 test -S "$SOCK" || why "no socket at $SOCK within 60 s"
run_cmd timeout -k 5 300 python3 "$ROOT/tests/valgrind/mcp_session.py" --bridge "$WORK/m/bridge.json" \
	-- timeout -k 5 240 "${VG[@]}" "$BIN" mcp --socket "$SOCK"
expect_rc 0
expect_out $'server exit 0\n'
expect_err ""
us=$(pgrep -P "$BG" -x unshare)
p1=$(pgrep -P "${us:-0}")
[[ -n $p1 ]] && kill -TERM "$p1"
wait "$BG"
RC=$?
[[ $RC == 0 || $RC == 143 ]] || why "listen ended with status $RC, want 0 or 143"
expect_clean
end; fi

results
