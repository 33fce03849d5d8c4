#!/bin/bash
# audit.sh - the disposable copy-on-write audit container (issue 7): the audit
# manifest oci/audit/manifest.json sealed into a test image, `turninit serve
# --audit-log` under the podman invocation of docs/audit.md (--read-only,
# --network none, --ipc none, tmpfs HOME and /tmp, the host tree as an overlay at
# /work and read-only at /audit/base, the log directory at /var/log/turninit).
# Checks: the host tree is byte-identical after a session that edits, creates
# and deletes files, and the diff shows those changes; writes outside HOME, /tmp
# and /work fail with EACCES or EROFS; every command appears in the log in order
# with the right status; a command cannot write, truncate or reach the log; the
# log of a container killed mid-command parses line by line; a log that stops
# taking lines refuses the later execs; every way the log cannot be opened or
# written safely refuses (exit 125, one line, nothing runs).
# Root, podman set up by `make setup`; run after `make` as
# `bash tests/integration/audit.sh`. Sessions are driven by tests/audit/cases.py
# and oci/audit/session.py (the reference client tests/serve/client.py).
#
# Every podman call has a hard timeout and runs with --pull never --network none
# and the label turninit-audit=PID; labelled containers are removed at exit.
# Prints TAP ("ok N - NAME", "not ok N - NAME") with the evidence, writes "PASS FAIL" to
# build/test-results/audit, and ends with "N passed, N failed".
#
# Environment: ITEST_ONLY=REGEX runs only the tests whose name matches;
# ITEST_BINARY=PATH tests another binary than build/turninit.
# shellcheck disable=SC2016 # '$X' is literal: it runs in the container
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VECTORS=$ROOT/tests/vectors
CASES=$ROOT/tests/audit/cases.py
SESSION=$ROOT/oci/audit/session.py
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
suite_open audit audittest "rootful podman" podman buildah minisign timeout python3 tar sha256sum b2sum jq

LABEL=turninit-audit=$$
PODMAN_RUN=(timeout 120 podman run --rm --pull never --network none --label "$LABEL")
IMG=localhost/turninit-audit-test
# A python with jsonschema validates every log line against the schema too.
PY=python3
for p in python3 /usr/bin/python3; do
	"$p" -c 'import jsonschema' 2>/dev/null && { PY=$p; break; }
done
export PYTHONDONTWRITEBYTECODE=1

mkdir -p "$WORK/m"
trap cleanup_containers EXIT


T0=$(now_ms)

# --- the image: the audit manifest, expiring far away, signed by the test key ---------
KEY_SEC=$VECTORS/test-trusted.key
KEY_PUB=$VECTORS/test-trusted.pub
KEY_ID=$(sed -n 's/^untrusted comment: minisign public key //p' "$KEY_PUB")
[[ -n $KEY_ID ]] || abort "no key id in $KEY_PUB"
# oci/audit/manifest.json carries no expiry (seal.sh --expires sets one): put
# one first, as seal.sh does, in the copy whose digest the log must name
sed '0,/{/s/{/{"expires": "2099-01-01T00:00:00Z", /' "$ROOT/oci/audit/manifest.json" > "$WORK/m/audit.json"
grep -q '"expires": "2099-01-01T00:00:00Z"' "$WORK/m/audit.json" || abort "could not set expires"
DIGEST=$(b2sum -l 256 "$WORK/m/audit.json" | cut -d' ' -f1)
sh "$ROOT/rootfs/build-image.sh" --trusted-key "$KEY_PUB" --tag "$IMG:base" \
	--root "$WORK/root-base" "$BIN" >"$WORK/build-base.log" 2>&1 \
	|| { cat "$WORK/build-base.log"; abort "rootfs/build-image.sh"; }
sh "$ROOT/oci/seal.sh" --image "$IMG:base" --tag "$IMG:sealed" --manifest "$WORK/m/audit.json" \
	--key "$KEY_SEC" --trusted-comment "turninit audit test" \
	>"$WORK/seal.log" 2>&1 || { cat "$WORK/seal.log"; abort "oci/seal.sh"; }

# fresh_tree: a sample tree owned by the manifest's uid in $TREE, an empty log
# directory owned by root (0700) in $LOGDIR, each new for every test.
N=0
fresh_tree() {
	N=$((N + 1))
	TREE=$WORK/t$N/tree LOGDIR=$WORK/t$N/log LOG=$WORK/t$N/log/audit.jsonl
	mkdir -p "$TREE/src" "$TREE/docs" "$LOGDIR"
	printf '# sample\n' > "$TREE/README.md"
	printf 'int main(void) { return 0; }\n' > "$TREE/src/main.c"
	printf 'old\n' > "$TREE/docs/old.txt"
	printf 'keep\n' > "$TREE/docs/keep.txt"
	printf '#!/bin/sh\necho run\n' > "$TREE/run.sh"
	chmod 0755 "$TREE/run.sh"
	chown -R 1000:1000 "$TREE"
	chmod 0700 "$LOGDIR"
}

# audit_argv [PODMAN OPTIONS...]: SERVER, the argv of the documented invocation.
audit_argv() {
	# shellcheck disable=SC2054 # the commas are --tmpfs options
	SERVER=(timeout 120 podman run --rm -i --pull never --network none --label "$LABEL"
		--read-only --read-only-tmpfs=false --ipc none
		--tmpfs /home/agent:rw,mode=0700,size=64m,U --tmpfs /tmp:rw,mode=1777,size=64m
		-v "$TREE:/work:O" -v "$TREE:/audit/base:ro" -v "$LOGDIR:/var/log/turninit"
		"$@" "$IMG:sealed" serve --audit-log /var/log/turninit/audit.jsonl)
}

tree_hash() {
	tar --sort=name --numeric-owner -C "$1" -cf - . | sha256sum | cut -d' ' -f1
}

# session FILE: run the commands of FILE through SERVER (oci/audit/session.py).
session() {
	run_cmd "$PY" "$SESSION" "$1" -- "${SERVER[@]}"
}

# --- the manifest -------------------------------------------------------------------------
if begin manifest-verifies; then
	prun --tmpfs "$HOME_TMPFS" "$IMG:sealed" verify
	expect_rc 0
	printf '%s' "$OUT" > "$WORK/policy.json"
	got=$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
print(" ".join(p["manifest"]["landlock"]["writable"]), p["landlock"]["abi"] > 0,
      p["manifest"]["landlock"]["optional"], p["manifest"]["audit"]["required"],
      all(s in json.dumps(p["seccomp"]) for s in ("\"mknod\"", "\"acct\"", "\"syslog\"")))' \
		"$WORK/policy.json" 2>&1)
	eq "writable, Landlock, optional, audit.required, the extra seccomp names" "$got" \
		"/home/agent /tmp /work True False True True"
	end
fi

# --- the session: host tree unchanged, the changes as a diff --------------------------------
if begin session-host-unchanged; then
	fresh_tree
	before=$(tree_hash "$TREE")
	cat > "$WORK/session1.txt" <<'EOF'
sed -i 's/return 0/return 42/' src/main.c
echo 'new file' > NEW.md
rm docs/old.txt
mv docs/keep.txt docs/kept.txt
chmod 0644 run.sh && touch -d 2001-01-01 README.md
mkdir -p a/b && echo deep > a/b/c.txt && rm -r src/../a/b && rmdir a
diff -ruN /audit/base /work
EOF
	audit_argv
	session "$WORK/session1.txt"
	expect_rc 0
	after=$(tree_hash "$TREE")
	eq "host tree sha256 after the session" "$after" "$before"
	# CW: the container's workspace, the audit manifest's workdir
	CW=/work
	for want in "+++ $CW/NEW.md" '+new file' '--- /audit/base/docs/old.txt' '-old' \
		"+++ $CW/docs/kept.txt" '-int main(void) { return 0; }' '+int main(void) { return 42; }'; do
		expect_contains "the diff" "$OUT" $'\n'"$want"$'\n'
	done
	[[ $OUT == *"$CW/a/"* ]] && why "the diff shows $CW/a, which the session removed again"
	eq "host src/main.c" "$(cat "$TREE/src/main.c")" 'int main(void) { return 0; }'
	[[ -e $TREE/docs/old.txt && ! -e $TREE/NEW.md && ! -e $TREE/docs/kept.txt ]] \
		|| why "the host tree holds the session's changes"
	end
fi

# --- writes outside HOME, /tmp and /work -----------------------------------------------------
if begin writes-outside-fail; then
	fresh_tree
	# try CMD...: one line "DENIED <CMD> :: <strerror>" or "WROTE <CMD>".
	cat > "$WORK/session2.txt" <<'EOF'
try() { local m; if m=$("$@" 2>&1 >/dev/null); then echo "WROTE $*"; else echo "DENIED $* :: ${m##*: }"; fi; }; for p in /x /etc/x /etc/turninit/x /bin/x /sbin/x /run/x /home/x /dev/x /dev/mqueue/x /audit/base/x /audit/base/README.md /var/log/turninit/x /sbin/turninit; do try bash -c ': > "$0"' "$p"; done; try mkdir /newdir; try rm -f /bin/cat; try mv /etc/turninit/trusted.pub /etc/turninit/t; try truncate -s 0 /audit/base/README.md; try ln -s /tmp /etc/t; try touch /dev/mqueue/q; try mkdir /dev/mqueue/d
try() { local m; if m=$("$@" 2>&1 >/dev/null); then echo "WROTE $*"; else echo "DENIED $* :: ${m##*: }"; fi; }; for p in /work/x /tmp/x /home/agent/x; do try bash -c ': > "$0"' "$p"; done
EOF
	audit_argv
	session "$WORK/session2.txt"
	expect_rc 0
	denied=0
	while IFS= read -r line; do
		case $line in
		"DENIED "*" :: Permission denied" | "DENIED "*" :: Read-only file system") denied=$((denied + 1)) ;;
		"DENIED "* | "WROTE "*/work/x | "WROTE "*/tmp/x | "WROTE "*/home/agent/x) ;;
		"WROTE "*) why "a write outside the writable set succeeded: $line" ;;
		esac
		case $line in "DENIED "*/work/x* | "DENIED "*/tmp/x* | "DENIED "*/home/agent/x*) why "$line" ;; esac
		case $line in "DENIED "*" :: "*) [[ $line == *" :: Permission denied" || $line == *" :: Read-only file system" ]] \
			|| why "not EACCES or EROFS: $line" ;; esac
	done <<<"$OUT"
	eq "denied writes" "$denied" 20
	# /dev/mqueue is mode 1777: only Landlock can refuse it.
	expect_contains stdout "$OUT" "DENIED touch /dev/mqueue/q :: Permission denied"
	expect_contains stdout "$OUT" "WROTE bash -c : > \"\$0\" /work/x"
	end
fi

# --- the log ---------------------------------------------------------------------------
if begin log-statuses; then
	fresh_tree
	audit_argv
	run_cmd "$PY" "$CASES" statuses "$LOG" "$KEY_ID" "$DIGEST" -- "${SERVER[@]}"
	expect_rc 0
	bad=$(printf '%s' "$OUT" | grep -v '^#' | head -5)
	[[ -z $bad ]] || why "$bad"
	end
fi

# The chain end to end: a session's log checks whole with the head turninit
# printed at the end; turn_start's protections are verify's record; each kind
# of tampering is a finding that names its line (docs/audit.md).
if begin log-chain-verified; then
	fresh_tree
	audit_argv
	printf '%s\n' 'echo one' 'echo two >&2; exit 3' 'printf "%s" three' > "$WORK/chain.txt"
	session "$WORK/chain.txt"
	expect_rc 0
	head=$(printf '%s' "$ERR" | sed -n 's/^turninit: audit: turn [0-9a-f]\{32\} ended, 8 lines, head \([0-9a-f]\{64\}\)$/\1/p')
	[[ -n $head ]] || why "no \"turninit: audit: turn ID ended, 8 lines, head HEX\" line on stderr: $ERR"
	eq "the head printed" "$head" "$(tail -n 1 "$LOG" | b2sum -l 256 | cut -d' ' -f1)"
	run_cmd "$BIN" audit-verify "$LOG" --head "$head"
	expect_rc 0
	expect_out "$LOG: 8 lines, 1 turns: whole, head $head"$'\n'
	# docs/audit.md's check with b2sum and jq, as written, LOG the log
	python3 -c 'import re, sys
t = open(sys.argv[1]).read()
print(re.search(r"```sh\n(# turn_start.s link.*?)```", t, re.S).group(1).replace("LOG", sys.argv[2]))' \
		"$ROOT/docs/audit.md" "$LOG" > "$WORK/chain-check.sh"
	run_cmd bash -e "$WORK/chain-check.sh"
	expect_rc 0
	eq "the doc's head" "$(printf '%s' "$OUT" | cut -d' ' -f1)" "$head"
	# turn_start's protections: verify's record under the same flags
	run_cmd timeout 120 podman run --rm --pull never --network none --label "$LABEL" \
		--read-only --read-only-tmpfs=false --ipc none \
		--tmpfs /home/agent:rw,mode=0700,size=64m,U --tmpfs /tmp:rw,mode=1777,size=64m \
		-v "$TREE:/work:O" -v "$TREE:/audit/base:ro" -v "$LOGDIR:/var/log/turninit" \
		"$IMG:sealed" verify --audit-log /var/log/turninit/audit.jsonl
	expect_rc 0
	printf '%s' "$OUT" > "$WORK/chain-verify.json"
	got=$(python3 -c 'import json, sys
ts = json.loads(open(sys.argv[1]).readline())["protections"]
v = json.load(open(sys.argv[2]))
diff = [k for k in ts if ts[k] != v.get(k)]
print("same %d keys" % len(ts) if not diff and len(ts) == 8 else "differ: %s" % diff)
print(len(ts["seccomp"]["program_blake2b_256"]))' "$LOG" "$WORK/chain-verify.json" 2>&1)
	eq "turn_start's protections against verify's" "$got" $'same 8 keys\n64'
	# tampering: av EXPECT-LINE-PREFIX FILE [--head H]: exit 1, the finding names the line
	av() {
		local want=$1
		shift
		run_cmd "$BIN" audit-verify "$@"
		expect_rc 1
		expect_contains "audit-verify's findings" "$OUT" "$want"
	}
	t=$WORK/tampered.jsonl
	sed 3d "$LOG" > "$t"                           # a line removed
	av "line 3: the chain breaks here" "$t"
	{ sed -n '1,2p' "$LOG"; sed -n 4p "$LOG"; sed -n 3p "$LOG"; sed -n '5,$p' "$LOG"; } > "$t"   # two lines swapped
	av "line 3: the chain breaks here" "$t"
	sed '5s/"code":3/"code":0/' "$LOG" > "$t"      # an exit code edited
	cmp -s "$t" "$LOG" && why "the edit changed nothing"
	av "line 6: the chain breaks here" "$t"
	head -c -20 "$LOG" > "$t"                      # cut inside the last line
	av "line 8: no newline at its end" "$t"
	sed '$d' "$LOG" > "$t"                         # turn_end cut away: whole, but not the head held
	run_cmd "$BIN" audit-verify "$t"
	expect_rc 0
	expect_contains "audit-verify's note" "$OUT" "has no turn_end"
	av "the head given" "$t" --head "$head"
	# spliced from two turns: a second session's lines after this one's first two
	LOG1=$LOG
	fresh_tree
	audit_argv
	session "$WORK/chain.txt"
	expect_rc 0
	{ sed -n '1,2p' "$LOG1"; sed -n '3,$p' "$LOG"; } > "$t"
	av "line 3: the chain breaks here" "$t"
	# two turns appended to one file are whole
	cat "$LOG1" "$LOG" > "$t"
	run_cmd "$BIN" audit-verify "$t"
	expect_rc 0
	expect_contains "two turns" "$OUT" ": 16 lines, 2 turns: whole"
	# refusals of the tool itself: 125 and one line
	run_cmd "$BIN" audit-verify "$WORK/no-such.jsonl"
	expect_rc 125
	expect_err "turninit: audit-verify: $WORK/no-such.jsonl: No such file or directory"$'\n'
	run_cmd "$BIN" audit-verify "$LOG" --head abc
	expect_rc 125
	expect_err "turninit: audit-verify: --head abc: not 64 hex digits (a BLAKE2b-256 head)"$'\n'
	# and its command line, and the flags it goes with: 125, one line, nothing read
	for bad in "audit-verify:audit-verify needs LOG (a path, or - for stdin)" \
		"audit-verify $LOG $LOG:audit-verify takes one LOG" \
		"audit-verify $LOG --follow:audit-verify: unknown option --follow (LOG [--head HEX]... [--summary])" \
		"--audit-log /x audit-verify $LOG:audit-verify takes LOG, --head HEX and --summary only" \
		"serve --audit-changes /audit/base:--audit-changes goes with --audit-log (the change record is written there)" \
		"serve --audit-log /a --audit-log /b:--audit-log given twice" \
		"serve --audit-log /a --audit-changes /b --audit-changes /c:--audit-changes given twice"; do
		# shellcheck disable=SC2086 # the words of the command line
		run_cmd "$BIN" ${bad%%:*}
		expect_rc 125
		expect_err "turninit: ${bad#*:}"$'\n'
		expect_out ""
	done
	end
fi

# Requests that ran nothing and name no exec line of their own (a duplicate
# of a running id, a line that is not a valid request or is past 1 MiB): each
# a rejected line, and the log checks whole.
if begin log-rejected-requests; then
	fresh_tree
	audit_argv
	run_cmd "$PY" "$CASES" rejected "$LOG" -- "${SERVER[@]}"
	expect_rc 0
	bad=$(printf '%s' "$OUT" | grep -v '^#' | head -5)
	[[ -z $bad ]] || why "$bad"
	run_cmd "$BIN" audit-verify "$LOG"
	expect_rc 0
	expect_contains "audit-verify" "$OUT" ": 10 lines, 1 turns: whole"
	end
fi

# A whole turn forged ahead of the real one: with --head, every turn of the
# file needs a head given that anchors it, else a finding that names the turn
# (one head vouched for the file, a note aside, and audit-verify exited 0).
if begin log-unanchored-turn; then
	fresh_tree
	audit_argv
	printf '%s\n' 'echo real' > "$WORK/real.txt"
	session "$WORK/real.txt"
	expect_rc 0
	real=$LOG
	head=$(printf '%s' "$ERR" | sed -n 's/^turninit: audit: turn [0-9a-f]\{32\} ended, [0-9]* lines, head \([0-9a-f]\{64\}\)$/\1/p')
	[[ -n $head ]] || why "no head on stderr: $ERR"
	fresh_tree
	audit_argv
	printf '%s\n' 'echo forged' > "$WORK/forged.txt"
	session "$WORK/forged.txt"
	expect_rc 0
	forged_head=$(printf '%s' "$ERR" | sed -n 's/^turninit: audit: turn [0-9a-f]\{32\} ended, [0-9]* lines, head \([0-9a-f]\{64\}\)$/\1/p')
	forged_turn=$(head -n 1 "$LOG" | jq -r .turn)
	t=$WORK/forged-ahead.jsonl
	cat "$LOG" "$real" > "$t"
	run_cmd "$BIN" audit-verify "$t" --head "$head"
	expect_rc 1
	expect_contains "audit-verify's finding" "$OUT" "line 1: turn $forged_turn (lines 1 to 4): no head given anchors it"
	expect_contains "audit-verify's summary" "$OUT" ": 8 lines, 2 turns: 1 finding"$'\n'
	# a head per turn, in either order: whole
	run_cmd "$BIN" audit-verify "$t" --head "$head" --head="$forged_head"
	expect_rc 0
	expect_out "$t: 8 lines, 2 turns: whole, head $head"$'\n'
	# a head given twice is one head
	run_cmd "$BIN" audit-verify "$t" --head "$forged_head" --head "$head" --head "$head"
	expect_rc 0
	end
fi

# The head a client holds, its last exit event's, on a turn with a change
# record: that record and turn_end come after the last exit, so no exit
# event's head covers them. The head verifies the turn up to its line, and
# the lines after it are a note when they are only those; any other line
# after a head is a finding. The final head verifies the whole turn.
if begin log-head-of-last-exit; then
	fresh_tree
	audit_argv
	SERVER+=(--audit-changes /audit/base)
	printf '%s\n' 'echo new > NEW.md' > "$WORK/last-exit.txt"
	session "$WORK/last-exit.txt"
	expect_rc 0
	final=$(printf '%s' "$ERR" | sed -n 's/^turninit: audit: turn [0-9a-f]\{32\} ended, [0-9]* lines, head \([0-9a-f]\{64\}\)$/\1/p')
	n=$(grep -n '"event":"exit"' "$LOG" | tail -n 1 | cut -d: -f1)
	eq "the log's lines" "$(wc -l < "$LOG") $n $(sed -n "$((n + 1)),\$p" "$LOG" | jq -r .event | tr '\n' ' ')" \
		"6 3 change changes turn_end "
	# the exit event's audit_head is its line's digest (log-statuses checks that)
	h=$(sed -n "${n}p" "$LOG" | b2sum -l 256 | cut -d' ' -f1)
	run_cmd "$BIN" audit-verify "$LOG" --head "$h"
	expect_rc 0
	expect_contains "audit-verify's note" "$OUT" "note: line 3: the head given (${h:0:16}...) is this line's: the 3 lines of its turn after it are its change record and turn_end"
	expect_contains "audit-verify's summary" "$OUT" "$LOG: 6 lines, 1 turns: whole, head "
	run_cmd "$BIN" audit-verify "$LOG" --head "$final"
	expect_rc 0
	expect_out "$LOG: 6 lines, 1 turns: whole, head $final"$'\n'
	# the exec line's head: the exit line after it is not the change record
	h=$(sed -n "$((n - 1))p" "$LOG" | b2sum -l 256 | cut -d' ' -f1)
	run_cmd "$BIN" audit-verify "$LOG" --head "$h"
	expect_rc 1
	expect_contains "audit-verify's finding" "$OUT" "line 2: the head given (${h:0:16}...) is this line's: 4 lines of its turn follow it"
	end
fi

# The event that ends a turn carries the final head, so a client holds the
# head of the whole log, change record included, without reading stderr:
# serve writes it after the end of stdin, before stdout closes; listen to each
# connection still open when SIGTERM ends the turn.
# final_head_verifies: the "head HEX" line of cases.py's output anchors the
# whole log, with no note of lines left unanchored.
final_head_verifies() {
	local h
	h=$(printf '%s' "$OUT" | sed -n 's/^head \([0-9a-f]\{64\}\)$/\1/p')
	[[ -n $h ]] || { why "no head in the events: $OUT"; return; }
	run_cmd "$BIN" audit-verify "$LOG" --head "$h"
	expect_rc 0
	expect_out "$LOG: 6 lines, 1 turns: whole, head $h"$'\n'
}

if begin log-final-head-serve; then
	fresh_tree
	audit_argv
	SERVER+=(--audit-changes /audit/base)
	run_cmd "$PY" "$CASES" final-head "$LOG" -- "${SERVER[@]}"
	expect_rc 0
	final_head_verifies
	end
fi

if begin log-final-head-listen; then
	fresh_tree
	SOCKD=$WORK/t$N/sock
	mkdir -p "$SOCKD"
	chmod 0755 "$SOCKD"
	LNAME=turninit-audit-final-$$
	run_cmd timeout 120 podman run -d --pull never --network none --label "$LABEL" --name "$LNAME" \
		--read-only --read-only-tmpfs=false --ipc none \
		--tmpfs /home/agent:rw,mode=0700,size=64m,U --tmpfs /tmp:rw,mode=1777,size=64m \
		-v "$TREE:/work:O" -v "$TREE:/audit/base:ro" -v "$LOGDIR:/var/log/turninit" -v "$SOCKD:/run/turninit" \
		"$IMG:sealed" listen --socket /run/turninit/t.sock --audit-log /var/log/turninit/audit.jsonl \
		--audit-changes /audit/base
	if [[ $RC -ne 0 ]] || ! wait_for 60 test -S "$SOCKD/t.sock"; then
		why "the listen container did not make its socket"
	else
		run_cmd "$PY" "$CASES" final-head-listen "$LOG" "$SOCKD/t.sock" "$LNAME"
		expect_rc 0
		final_head_verifies
	fi
	timeout 60 podman rm -f -t 0 "$LNAME" >/dev/null 2>&1
	end
fi

# mcp mode: the tool results carry the head after their exit line (_meta)
if begin log-mcp-heads; then
	fresh_tree
	audit_argv
	SERVER[${#SERVER[@]} - 3]=mcp
	run_cmd "$PY" "$CASES" mcp "$LOG" -- "${SERVER[@]}"
	expect_rc 0
	bad=$(printf '%s' "$OUT" | grep -v '^#' | head -5)
	[[ -z $bad ]] || why "$bad"
	run_cmd "$BIN" audit-verify "$LOG"
	expect_rc 0
	end
fi

if begin log-out-of-reach; then
	fresh_tree
	audit_argv
	run_cmd "$PY" "$CASES" tamper "$LOG" -- "${SERVER[@]}"
	expect_rc 0
	[[ $(stat -c '%u %a' "$LOG") == "0 600" ]] || why "the log is not root's, mode 600: $(stat -c '%u %a' "$LOG")"
	end
fi

if begin log-fd; then
	fresh_tree
	cat > "$WORK/session3.txt" <<'EOF'
echo via fd
echo x >&3
EOF
	# fd 3: a pipe to a writer on the launcher's side (cat), as docs/audit.md
	# says to hand in a log no path in the container names.
	# shellcheck disable=SC2054 # the commas are --tmpfs options
	SERVER=(bash -c 'exec 3> >(exec cat >>"$0"); exec "$@"' "$LOGDIR/fd.jsonl"
		timeout 120 podman run --rm -i --pull never --network none --label "$LABEL"
		--preserve-fds 1 --read-only --read-only-tmpfs=false --ipc none
		--tmpfs /home/agent:rw,mode=0700,size=64m,U --tmpfs /tmp:rw,mode=1777,size=64m
		-v "$TREE:/work:O" "$IMG:sealed" serve --audit-log fd:3)
	session "$WORK/session3.txt"
	expect_rc 0
	expect_contains stdout "$OUT" "Bad file descriptor"
	# cat ends once every holder of the pipe's write end has gone
	wait_for 60 grep -q '"turn_end"' "$LOGDIR/fd.jsonl" || why "no turn_end line within 60 s"
	run_cmd "$PY" "$CASES" lines "$LOGDIR/fd.jsonl"
	expect_rc 0
	got=$(python3 -c 'import json, sys
print(" ".join(e["event"] + (":" + str(e.get("code")) if e["event"] == "exit" else "") for e in map(json.loads, open(sys.argv[1]))))' "$LOGDIR/fd.jsonl")
	eq "events" "$got" "turn_start exec exit:0 exec exit:1 turn_end"
	end
fi

if begin log-broken-refuses-execs; then
	fresh_tree
	run_cmd "$PY" "$CASES" broken -- timeout 120 podman run --rm -i --pull never --network none \
		--label "$LABEL" --preserve-fds 1 --tmpfs /home/agent:rw,mode=0700,size=64m,U \
		"$IMG:sealed" serve --audit-log fd:3
	expect_rc 0
	expect_contains stderr "$ERR" "turninit: audit log: write failed: Broken pipe; further commands are refused"
	end
fi

if begin log-listen-streams; then
	# listen: two `turninit call` connections, both using call's fixed id; the
	# log tells them apart by stream, and SIGTERM ends the turn (143).
	fresh_tree
	SOCKD=$WORK/t$N/sock
	mkdir -p "$SOCKD"
	chmod 0755 "$SOCKD"
	LNAME=turninit-audit-listen-$$
	run_cmd timeout 120 podman run -d --pull never --network none --label "$LABEL" --name "$LNAME" \
		--read-only --read-only-tmpfs=false --ipc none \
		--tmpfs /home/agent:rw,mode=0700,size=64m,U --tmpfs /tmp:rw,mode=1777,size=64m \
		-v "$TREE:/work:O" -v "$LOGDIR:/var/log/turninit" -v "$SOCKD:/run/turninit" \
		"$IMG:sealed" listen --socket /run/turninit/t.sock --audit-log /var/log/turninit/audit.jsonl
	if [[ $RC -ne 0 ]] || ! wait_for 60 test -S "$SOCKD/t.sock"; then
		why "the listen container did not make its socket"
	else
		for word in one two; do
			run_cmd timeout 120 podman run --rm --pull never --network none --label "$LABEL" \
				-v "$SOCKD:/run/turninit" --entrypoint /sbin/turninit --user 1000:1000 \
				"$IMG:base" call --socket /run/turninit/t.sock "echo $word"
			eq "call $word" "$RC $OUT" "0 $word"$'\n'
		done
		timeout 120 podman stop -t 10 "$LNAME" >/dev/null 2>&1
		run_cmd "$PY" "$CASES" lines "$LOG"
		expect_rc 0
		got=$(python3 -c 'import json, sys
print(" ".join("%s:%s:%s" % (e["event"], e.get("stream", e.get("mode")), e.get("command", e.get("code", e.get("exit_code", ""))))
               for e in map(json.loads, open(sys.argv[1]))))' "$LOG")
		eq "events" "$got" "turn_start:listen: exec:1:echo one exit:1:0 exec:2:echo two exit:2:0 turn_end:None:143"
	fi
	timeout 60 podman rm -f -t 0 "$LNAME" >/dev/null 2>&1
	end
fi

if begin log-killed-container; then
	fresh_tree
	audit_argv --name "turninit-audit-kill-$$"
	run_cmd "$PY" "$CASES" killed "$LOG" "turninit-audit-kill-$$" -- "${SERVER[@]}"
	expect_rc 0
	# after kill -9 the log is whole up to its last line, without turn_end
	run_cmd "$BIN" audit-verify "$LOG"
	expect_rc 0
	expect_contains "audit-verify" "$OUT" "has no turn_end: it ends at line"
	end
fi

# --- refusals: exit 125, one line, nothing runs ---------------------------------------------
REQ='{"op":"exec","id":"r","command":"echo RAN"}'$'\n'
# refuse NAME SUBSTRING LOGSPEC [PODMAN OPTIONS...]
# run_refused CMD...: run_input "$REQ" CMD..., for a container that is to
# refuse. podman run -i under load sometimes loses the stderr of a container
# that exits at once (status 125, nothing on stderr); such a run is repeated,
# at most twice, and said so.
run_refused() {
	local try
	for try in 1 2 3; do
		run_input "$REQ" "$@"
		[[ $RC -eq 125 && -z $ERR && -z $OUT ]] || break
		echo "# $T_NAME: podman lost the container's stderr (try $try)"
	done
}

refuse() {
	local name=$1 sub=$2 spec=$3
	shift 3
	begin "$name" || return 0
	run_refused timeout 120 podman run --rm -i --pull never --network none --label "$LABEL" \
		--read-only --read-only-tmpfs=false --ipc none \
		--tmpfs /home/agent:rw,mode=0700,size=64m,U --tmpfs /tmp:rw,mode=1777,size=64m \
		-v "$TREE:/work:O" -v "$LOGDIR:/var/log/turninit" "$@" \
		"$IMG:sealed" serve --audit-log "$spec"
	expect_refusal "$sub"
	# REFUSE_CHECK: more expectations, run here (bash), before end
	[[ -z ${REFUSE_CHECK:-} ]] || eval "$REFUSE_CHECK"
	end
}
fresh_tree
refuse refuse-log-in-tmp "inside /tmp" /tmp/audit.jsonl
refuse refuse-log-in-work "inside /work" /work/audit.jsonl
refuse refuse-log-in-home "inside /home/agent" /home/agent/audit.jsonl
refuse refuse-log-dir-missing "No such file" /var/log/turninit/none/audit.jsonl
refuse refuse-log-relative "absolute path" audit.jsonl
# A device that is not among those commands may write: not a regular file.
refuse refuse-log-path-a-device "/dev/urandom: not a regular file" /dev/urandom
refuse refuse-log-fd-low "N >= 3" fd:2
# fd 3 is the first fd turninit could open itself: the log is opened before any.
refuse refuse-log-fd-closed "fd:3: not an open file descriptor" fd:3
# A file the command's uid could write, or a directory it owns.
printf '' > "$LOGDIR/open.jsonl"
chmod 0666 "$LOGDIR/open.jsonl"
refuse refuse-log-world-writable "writable by group or others" /var/log/turninit/open.jsonl
ln -s /tmp/x "$LOGDIR/link.jsonl"
refuse refuse-log-symlink "audit log /var/log/turninit/link.jsonl: is a symbolic link (give the path it leads to)" /var/log/turninit/link.jsonl
# A directory link out of the log directory into /tmp: the path named is out
# of reach, where it leads is not (the check of the resolved path).
ln -s /tmp "$LOGDIR/tmplink"
refuse refuse-log-dir-link-into-tmp "is /tmp/audit.jsonl, inside /tmp" /var/log/turninit/tmplink/audit.jsonl
OWNED=$WORK/owned
mkdir -p "$OWNED"
chown 1000:1000 "$OWNED"
chmod 0700 "$OWNED"
refuse refuse-log-dir-owned-by-uid "owned by uid 1000" /var/log/owned/audit.jsonl -v "$OWNED:/var/log/owned"
if begin refuse-log-fd-read-only; then
	run_refused bash -c 'exec 3<"$0"; exec "$@"' /dev/null \
		timeout 120 podman run --rm -i --pull never --network none --label "$LABEL" --preserve-fds 1 \
		--tmpfs /home/agent:rw,mode=0700,size=64m,U "$IMG:sealed" serve --audit-log fd:3
	expect_refusal "not open for writing"
	end
fi
# A host file handed in as fd:3 while the container binds its directory
# writable at /work: a command could remove it and write a forged one. In the
# container /proc/self/fd/3 names the host path, which is another file or none
# there: turninit cannot check it, and refuses. (It used to take any regular
# file as an fd.)
if begin refuse-log-fd-host-file-in-work; then
	fresh_tree
	run_refused bash -c 'exec 3>>"$0"; exec "$@"' "$TREE/audit.jsonl" \
		timeout 120 podman run --rm -i --pull never --network none --label "$LABEL" --preserve-fds 1 \
		--tmpfs /home/agent:rw,mode=0700,size=64m,U -v "$TREE:/work" "$IMG:sealed" serve --audit-log fd:3
	expect_refusal "audit log fd:3: cannot check where it is: $TREE/audit.jsonl names another file or none"
	end
fi
# /dev/null (or any device) keeps nothing: a log in name only.
if begin refuse-log-fd-device; then
	run_refused bash -c 'exec 3>"$0"; exec "$@"' /dev/null \
		timeout 120 podman run --rm -i --pull never --network none --label "$LABEL" --preserve-fds 1 \
		--tmpfs /home/agent:rw,mode=0700,size=64m,U "$IMG:sealed" serve --audit-log fd:3
	expect_refusal "a device (such as /dev/null), which keeps nothing"
	end
fi
# A log refused for its directory is not left behind, empty, in that directory.
if begin refuse-log-dir-world-writable-leaves-nothing; then
	fresh_tree
	chmod 0777 "$LOGDIR"
	# shellcheck disable=SC2016 # evaluated in refuse
	REFUSE_CHECK='[[ ! -e $LOGDIR/a.jsonl ]] || why "$LOGDIR/a.jsonl was left behind"' \
		refuse refuse-log-dir-world-writable-leaves-nothing "writable by group or others" \
		/var/log/turninit/a.jsonl
	chmod 0700 "$LOGDIR"
fi
if begin refuse-log-unwritable; then
	# fd 3: a pipe whose read end no process holds, so every write is EPIPE
	run_refused "$PY" -c 'import os, sys
r, w = os.pipe(); os.close(r); os.dup2(w, 3); os.execvp(sys.argv[1], sys.argv[1:])' \
		timeout 120 podman run --rm -i --pull never --network none --label "$LABEL" --preserve-fds 1 \
		--tmpfs /home/agent:rw,mode=0700,size=64m,U "$IMG:sealed" serve --audit-log fd:3
	expect_refusal "cannot write the turn_start line: Broken pipe"
	end
fi
if begin refuse-no-log-required; then
	run_refused timeout 120 podman run --rm -i --pull never --network none --label "$LABEL" \
		--tmpfs /home/agent:rw,mode=0700,size=64m,U "$IMG:sealed" serve
	expect_refusal "audit.required: give --audit-log"
	end
fi
if begin refuse-one-shot-log-required; then
	prun --tmpfs /home/agent:rw,mode=0700,size=64m,U "$IMG:sealed" -- 'echo RAN'
	expect_refusal "audit.required: one-shot mode keeps no audit log"
	end
fi
# The change record (--audit-changes /audit/base): written by turninit at the
# end of the turn, one line per path added, removed or changed, with digests;
# times alone are no change, a path made and removed again is none either.
if begin log-change-record; then
	fresh_tree
	audit_argv
	SERVER+=(--audit-changes /audit/base)
	cat > "$WORK/changes.txt" <<'EOF2'
sed -i 's/return 0/return 42/' src/main.c
echo 'new file' > NEW.md
rm docs/old.txt
mv docs/keep.txt docs/kept.txt
chmod 0644 run.sh && touch -d 2001-01-01 README.md
mkdir -p a/b && echo deep > a/b/c.txt && rm -r a
mkdir -p d/e && echo deeper > d/e/f.txt && ln -s ../NEW.md d/link
EOF2
	session "$WORK/changes.txt"
	expect_rc 0
	got=$(python3 - "$LOG" "$TREE" <<'PY' 2>&1
import hashlib, json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ch = [l for l in lines if l["event"] == "change"]
b2 = lambda b: hashlib.blake2b(b, digest_size=32).hexdigest()
for c in ch:
    now, base = c["now"], c["base"]
    print(c["op"], c["path"], (base or {}).get("mode"), (now or {}).get("mode"),
          (now or {}).get("type"))
main = [c for c in ch if c["path"] == "src/main.c"][0]
print("main.c base digest is the host file's:",
      main["base"]["blake2b_256"] == b2(open(sys.argv[2] + "/src/main.c", "rb").read()))
print("main.c now digest:", main["now"]["blake2b_256"] == b2(b"int main(void) { return 42; }\n"))
print("link digest:", [c for c in ch if c["path"] == "d/link"][0]["now"]["blake2b_256"] == b2(b"../NEW.md"))
end = [l for l in lines if l["event"] == "changes"][0]
print("changes:", end["added"], end["removed"], end["changed"], end["complete"], end["stopped"],
      lines[-1]["event"], lines[-2]["event"])
PY
)
	want='added NEW.md None 0644 file
added d None 0755 dir
added d/e None 0755 dir
added d/e/f.txt None 0644 file
added d/link None 0777 symlink
removed docs/keep.txt 0644 None None
added docs/kept.txt None 0644 file
removed docs/old.txt 0644 None None
changed run.sh 0755 0644 file
changed src/main.c 0644 0644 file
main.c base digest is the host file'"'"'s: True
main.c now digest: True
link digest: True
changes: 6 2 2 True None turn_end changes'
	eq "the change record" "$got" "$want"
	run_cmd "$BIN" audit-verify "$LOG"
	expect_rc 0
	# what a command does to hide a change: an edit in a directory it then
	# makes unreadable, a private new directory, a chmod of the root, a tree
	# past the depth bound before a later change (the bound skips that
	# subtree and the walk goes on; the record says it is not complete)
	fresh_tree
	audit_argv
	SERVER+=(--audit-changes /audit/base)
	cat > "$WORK/hide.txt" <<'EOF2'
echo evil >> docs/keep.txt && chmod 000 docs
mkdir -m 0700 priv && echo secret > priv/s.txt && chmod 000 priv
chmod 0777 .
mkdir -p aa$(printf "/x%.0s" $(seq 140)) && echo later > zz.txt
EOF2
	session "$WORK/hide.txt"
	expect_rc 0
	got=$(python3 - "$LOG" <<'PY' 2>&1
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ch = {c["path"]: c for c in lines if c["event"] == "change"}
e = [l for l in lines if l["event"] == "changes"][0]
print("docs/keep.txt", ch.get("docs/keep.txt", {}).get("op"), bool((ch.get("docs/keep.txt", {}).get("now") or {}).get("blake2b_256")))
print("priv/s.txt", ch.get("priv/s.txt", {}).get("op"))
print(".", ch.get(".", {}).get("op"), (ch.get(".", {}).get("now") or {}).get("mode"))
print("zz.txt", ch.get("zz.txt", {}).get("op"))
print("end", e["complete"], e["stopped"], e["skipped"], e["unreadable"])
# turninit kept a capability to read for the walk: no command has one
rb = [l["read_back"] for l in lines if l["event"] == "exit" and l["read_back"]]
print("commands' capabilities", sorted({r["cap_prm"] + r["cap_eff"] + r["cap_bnd"] for r in rb}) == ["0" * 48])
PY
)
	eq "the hidden changes" "$got" "docs/keep.txt changed True
priv/s.txt added
. changed 0777
zz.txt added
end False None 1 0
commands' capabilities True"
	run_cmd "$BIN" audit-verify "$LOG"
	expect_rc 0
	expect_contains "audit-verify's note" "$OUT" "the change record is not complete"
	# refused: a base the commands may write, and one holding the workdir
	for bad in "/tmp:inside /tmp, which commands may write" "/:the base and the workdir /work may not hold one another" \
		"/audit/../audit:expected an absolute path without . or .. parts" \
		"/no/such/base:--audit-changes /no/such/base: no such directory: bind the tree as it was there, read-only, beside its copy-on-write view at /work (podman run -v HOSTDIR:/work:O -v HOSTDIR:/no/such/base:ro; docs/audit.md)"; do
		run_refused timeout 120 podman run --rm -i --pull never --network none --label "$LABEL" \
			--read-only --read-only-tmpfs=false --ipc none \
			--tmpfs /home/agent:rw,mode=0700,size=64m,U --tmpfs /tmp:rw,mode=1777,size=64m \
			-v "$TREE:/work:O" -v "$LOGDIR:/var/log/turninit" "$IMG:sealed" \
			serve --audit-log /var/log/turninit/refused.jsonl --audit-changes "${bad%%:*}"
		expect_refusal "${bad#*:}"
	done
	end
fi

# A walker without CAP_DAC_OVERRIDE or CAP_DAC_READ_SEARCH (root here with
# both dropped; non-root mode has neither: the nonroot suite) cannot look
# into a directory a command left readable but not searchable (mode 0444):
# its names list, but no entry can be stat'd. Unread is not unchanged: the
# record is not complete and names the directory ("." for the workdir
# itself), audit-verify notes each path, and turn_start's protections say
# beforehand that a command can do this.
if begin log-change-record-unsearchable; then
	for c in 'echo evil >> docs/keep.txt && echo new > docs/new.txt && chmod 0444 docs:docs' \
		'echo evil >> src/main.c && echo new > NEW.md && chmod 0444 .:.'; do
		fresh_tree
		audit_argv --cap-drop DAC_OVERRIDE,DAC_READ_SEARCH
		SERVER+=(--audit-changes /audit/base)
		printf '%s\n' "${c%:*}" > "$WORK/unsearchable.txt"
		session "$WORK/unsearchable.txt"
		expect_rc 0
		got=$(python3 "$ROOT/tests/audit/changes_end.py" "$LOG" 2>&1)
		eq "the record of ${c%:*}" "$got" "end False True [{'path': '${c##*:}'}] more 0
protections: True"
		run_cmd "$BIN" audit-verify "$LOG"
		expect_rc 0
		expect_contains "audit-verify's note" "$OUT" "the change record is not complete"
		expect_contains "audit-verify's path" "$OUT" "could not be read: \"${c##*:}\""
	done
	# 40 decoy directories made unsearchable ahead of (in name order) the one
	# changed: the list names the first 32, and says that 9 more are not named
	fresh_tree
	audit_argv --cap-drop DAC_OVERRIDE,DAC_READ_SEARCH
	SERVER+=(--audit-changes /audit/base)
	printf '%s\n' 'echo evil >> src/main.c && chmod 0444 src && for i in $(seq -w 1 40); do mkdir d$i && : > d$i/f && chmod 0444 d$i; done' \
		> "$WORK/decoys.txt"
	session "$WORK/decoys.txt"
	expect_rc 0
	got=$(python3 "$ROOT/tests/audit/changes_end.py" "$LOG" 2>&1)
	eq "the record of 40 decoys" "$got" "end False True 32 paths more 9
protections: True"
	run_cmd "$BIN" audit-verify "$LOG"
	expect_rc 0
	expect_contains "audit-verify's note of the rest" "$OUT" "9 more path(s) that could not be read, not named (the record names the first 32)"
	# verify says the same beforehand, under the same flags
	run_cmd timeout 120 podman run --rm --pull never --network none --label "$LABEL" \
		--read-only --read-only-tmpfs=false --ipc none --cap-drop DAC_OVERRIDE,DAC_READ_SEARCH \
		--tmpfs /home/agent:rw,mode=0700,size=64m,U --tmpfs /tmp:rw,mode=1777,size=64m \
		-v "$TREE:/work:O" -v "$TREE:/audit/base:ro" -v "$LOGDIR:/var/log/turninit" \
		"$IMG:sealed" verify --audit-log /var/log/turninit/v.jsonl --audit-changes /audit/base
	expect_rc 0
	printf '%s' "$OUT" > "$WORK/unsearchable-verify.json"
	got=$(python3 -c 'import json, sys
ts = json.loads(open(sys.argv[1]).readline())["protections"]
v = json.load(open(sys.argv[2]))
print(ts["changes"] == v.get("changes"))' "$LOG" "$WORK/unsearchable-verify.json" 2>&1)
	eq "verify's changes against turn_start's" "$got" True
	end
fi

# audit-verify --summary: the whole text of a turn's summary (docs/audit.md "A
# summary"), one line per command, the change record in `git status` form with
# what changed; durations and the turn id vary from run to run, and are
# replaced (N ms, TURN), the rest is compared as it is. A log with a finding
# still prints its summary, and exits 1.
if begin log-summary; then
	fresh_tree
	audit_argv
	SERVER+=(--audit-changes /audit/base)
	cat > "$WORK/summary.txt" <<'EOF2'
sed -i 's/return 0/return 42/' src/main.c
echo 'new file' > NEW.md
chmod 0644 run.sh
echo oops >&2; exit 3
rm -r docs && echo docs > docs
kill -9 $$
EOF2
	session "$WORK/summary.txt"
	expect_rc 0
	run_cmd "$BIN" audit-verify "$LOG" --summary
	expect_rc 0
	got=$(printf '%s\n' "$OUT" | sed -E "s/ [0-9]+ ms,/ N ms,/; s/^turn [0-9a-f]{32} /turn TURN /;
		s|^$LOG: (.*), head [0-9a-f]{64}\$|LOG: \\1, head HEX|")
	eq "the summary" "$got" "turn TURN (serve): 6 commands, 0 rejected, ended with exit 0
  cmd 0 c1: N ms, exit 0, out 0 B, err 0 B
  cmd 0 c2: N ms, exit 0, out 0 B, err 0 B
  cmd 0 c3: N ms, exit 0, out 0 B, err 0 B
  cmd 0 c4: N ms, exit 3, out 0 B, err 5 B
  cmd 0 c5: N ms, exit 0, out 0 B, err 0 B
  cmd 0 c6: N ms, signal 9, out 0 B, err 0 B
  A  NEW.md
   D docs (type)
   D docs/keep.txt
   D docs/old.txt
  A  docs (type)
   m run.sh (mode)
   M src/main.c (content)
  changes: 2 added, 3 removed, 2 changed
LOG: 22 lines, 1 turns: whole, head HEX"
	# a finding: the summary is still printed, the status is 1
	sed '2s/"c1"/"c9"/' "$LOG" > "$WORK/summary-edited.jsonl"
	run_cmd "$BIN" audit-verify "$WORK/summary-edited.jsonl" --summary
	expect_rc 1
	expect_contains "the summary of an edited log" "$OUT" "  cmd 0 c9: no end in the log"
	expect_contains "the verdict" "$OUT" " findings"
	end
fi

# Two turns on one log file would interleave their chains: the second is
# refused while the first holds it (flock), and the log stays one turn's.
if begin refuse-log-held-by-another-turn; then
	fresh_tree
	audit_argv
	mkfifo "$WORK/hold"
	"${SERVER[@]}" < "$WORK/hold" > /dev/null 2> "$WORK/hold.err" &
	holder=$!
	exec 7> "$WORK/hold"
	has_start() { grep -q '"event":"turn_start"' "$LOG" 2>/dev/null; }
	wait_for 120 has_start || why "the first turn wrote no turn_start: $(cat "$WORK/hold.err")"
	run_refused "${SERVER[@]}"
	expect_refusal "audit log /var/log/turninit/audit.jsonl: another turn holds it (flock): give each turn a file of its own"
	exec 7>&-
	wait "$holder"
	run_cmd "$BIN" audit-verify "$LOG"
	expect_rc 0
	expect_contains "audit-verify" "$OUT" ": 2 lines, 1 turns: whole"
	end
fi

# verify --audit-log checks the log as serve would, and writes nothing: a
# refused place gives serve's own line, exit 125, the policy still printed;
# a good one exits 0 and leaves no file behind.
if begin verify-checks-audit-log; then
	fresh_tree
	vargs=(timeout 120 podman run --rm --pull never --network none --label "$LABEL"
		--read-only --read-only-tmpfs=false --ipc none
		--tmpfs /home/agent:rw,mode=0700,size=64m,U --tmpfs /tmp:rw,mode=1777,size=64m
		-v "$TREE:/work:O" -v "$LOGDIR:/var/log/turninit" "$IMG:sealed")
	run_cmd "${vargs[@]}" verify --audit-log /tmp/audit.jsonl
	expect_rc 125
	expect_err "turninit: audit log /tmp/audit.jsonl: inside /tmp, which commands may write"$'\n'
	expect_contains stdout "$OUT" '"mode": "refused"'
	run_cmd "${vargs[@]}" verify --audit-log /var/log/turninit/audit.jsonl
	expect_rc 0
	expect_err ""
	[[ ! -e $LOGDIR/audit.jsonl ]] || why "verify left $LOGDIR/audit.jsonl"
	end
fi
if begin refuse-log-one-shot; then
	prun --tmpfs /home/agent:rw,mode=0700,size=64m,U -v "$LOGDIR:/var/log/turninit" \
		"$IMG:sealed" --audit-log /var/log/turninit/a.jsonl -- 'echo RAN'
	expect_refusal "--audit-log goes with serve, mcp or listen"
	end
fi

echo "# suite ran in $(( $(now_ms) - T0 )) ms"
results
