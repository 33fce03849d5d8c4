#!/bin/bash
# doclines.sh - the shell lines of README.md and docs/ run as written (issue
# 31: a doc line that drifts from the code fails make check).
#
# tests/docs/ledger lists every shell block of the docs (tests/docs/doclines.py
# finds them) and how each is tested; this suite checks the ledger against the
# docs (d-ledger-complete), then runs each "run ENGINE" block of this engine,
# in the ledger's order, with bash -e from the clone's root:
#   podman: the quick start first, then the others;
#   ITEST_ENGINE=docker (tests/integration/docker.sh, its dockerd and
#   containerd): the quick start to make the images, then the docker and ctr
#   blocks, then the private pair of docs/deployment.md (a dockerd and a
#   containerd of its own in /tmp/try, stopped at the end).
# What a run gives that the text leaves to the reader: HOME (the ~ of the
# lines) is a folder of the suite's; IMAGE, HOSTDIR and LOGDIR are given;
# podman and buildah use a container store of the suite's own
# (CONTAINERS_STORAGE_CONF), so the images, pods and volumes the lines name
# (localhost/agent-turn:1, turninit-home) are never a user's, and are gone
# at the end. Each block must exit 0; a turn that echoes "hello from ..." or
# "hi" must print it; the serve transcript's events must come back in order,
# with its exit code; the audit invocation must leave an audit log.
#
# Environment: ITEST_ONLY=REGEX (test names: d-ledger-complete, d-FILE-LINE),
# ITEST_BINARY=PATH.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
ENGINES="podman docker"
suite_open doclines doctest "podman's own container store, make install" podman buildah minisign timeout python3

# --- the ledger against the docs ----------------------------------------------------------------
if begin d-ledger-complete; then
	run_cmd python3 "$ROOT/tests/docs/doclines.py" check "$ROOT"
	expect_rc 0
	end
fi

# --- a container store, a HOME and placeholders of the suite's ----------------------------------
export CONTAINERS_STORAGE_CONF=$WORK/storage.conf
cat > "$CONTAINERS_STORAGE_CONF" <<EOF
[storage]
driver = "overlay"
graphroot = "$WORK/store"
runroot = "$WORK/runroot"
EOF
DL_HOME=$WORK/home
mkdir -p "$DL_HOME" "$WORK/hostdir" "$WORK/log"
printf 'a file of the session\n' > "$WORK/hostdir/README"
# the tree of the audit invocation, the manifest's uid's (docs/audit.md:
# the overlay keeps HOSTDIR's owners and modes)
chown -R 1000:1000 "$WORK/hostdir"
chmod 0755 "$WORK/log"
export IMAGE=localhost/agent-turn:1 HOSTDIR=$WORK/hostdir LOGDIR=$WORK/log
# The lines write /tmp/pkg, and agent-turn.tar in the clone, as a reader's
# would: this suite's podman and Docker runs, which make check may start at
# the same time (tests/check-steps.sh), take turns.
exec 9>"$ROOT/build/doclines.lock"
flock -w 1800 9 || abort "build/doclines.lock: another run of this suite held it for 30 minutes"
PKG_EXISTED=0
[[ -e /tmp/pkg ]] && PKG_EXISTED=1
TAR_EXISTED=0
[[ -e $ROOT/agent-turn.tar ]] && TAR_EXISTED=1
cleanup() {
	timeout 120 podman rm -af -t 0 >/dev/null 2>&1
	timeout 120 podman pod rm -af -t 0 >/dev/null 2>&1
	timeout 120 podman volume rm -af >/dev/null 2>&1
	timeout 120 podman rmi -af >/dev/null 2>&1
	((PKG_EXISTED)) || rm -rf /tmp/pkg
	((TAR_EXISTED)) || rm -f "$ROOT/agent-turn.tar"
	if docker_engine; then
		timeout 60 ctr image rm localhost/agent-turn:1 >/dev/null 2>&1
		timeout 60 docker rmi -f localhost/agent-turn:1 >/dev/null 2>&1
	fi
	findmnt -rn -o TARGET | grep -F "$WORK/" | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf "$WORK/store" "$WORK/runroot"
	((PAIR_STARTED)) && pair_stop
	return 0
}
PAIR_STARTED=0
trap cleanup EXIT

# emit ENGINE DIR: the blocks of ENGINE as DIR/NN.sh, DIR/list "NN FILE:LINE"
emit() {
	rm -rf "$2"
	python3 "$ROOT/tests/docs/doclines.py" emit "$ROOT" "$1" "$2" || abort "doclines.py emit $1 failed"
}

# run_block DIR NN WHERE: run DIR/NN.sh as written, and check what it says.
run_block() {
	local dir=$1 n=$2 where=$3 name last
	name=d-$(printf '%s' "$where" | sed 's#^docs/##; s#\.md:#-#; s#[^A-Za-z0-9-]#-#g')
	begin "$name" || return 0
	CMD="(cd ROOT && HOME=... bash -e $where)"
	run_cmd env HOME="$DL_HOME" bash -c 'cd "$1" && exec timeout 900 bash -e "$2"' doclines "$ROOT" "$dir/$n.sh"
	CMD="bash -e <the block at $where>: $(head -n 1 "$dir/$n.sh")"
	expect_rc 0
	last=$(tail -n 1 "$dir/$n.sh")
	case $last in
	"export DOCKER_HOST=unix:///tmp/try/docker/docker.sock") pair_check ;;
	*"'echo \"hello from \$(id -u)\"'"*) eq "last line of stdout" "$(printf '%s' "$OUT" | tail -n 1)" "hello from 1000" ;;
	*"'echo hi'") eq "last line of stdout" "$(printf '%s' "$OUT" | tail -n 1)" "hi" ;;
	*"echo hello from a non-root start'") expect_contains stdout "$OUT" $'1000\nhello from a non-root start\n' ;;
	*" verify") expect_contains stdout "$OUT" '"start": {' ;;
	*"serve --audit-log /var/log/turninit/audit.jsonl")
		[[ -s $LOGDIR/audit.jsonl ]] || why "no audit log in LOGDIR"
		expect_contains "the audit log" "$(cat "$LOGDIR/audit.jsonl" 2>&1)" '"event":"turn_end"'
		rm -f "$LOGDIR/audit.jsonl" ;;
	esac
	if [[ -e $dir/$n.answer ]]; then
		# the transcript's events, in order, with the exit's code (pids and
		# times are the run's own)
		eq "events" "$(printf '%s' "$OUT" | python3 -c "$EVENTS")" "$(python3 -c "$EVENTS" < "$dir/$n.answer")"
	fi
	end
}
EVENTS='import json, sys
for line in sys.stdin:
    if line.strip():
        e = json.loads(line)
        print(e.get("event"), e.get("id"), e.get("code", ""), e.get("data", ""))'

# The private pair of docs/deployment.md (run pair): both daemons answer on
# the block's sockets, the host's network is as it was (no docker0, the same
# iptables rules naming docker), and they stop with kill; /tmp/try is gone at the end.
PAIR=/tmp/try
# the rules that name docker: the suites make check runs beside this one
# add and remove podman's (netavark's) at any time
pair_rules() { { iptables -S; iptables -t nat -S; } 2>/dev/null | grep -i docker; }
pair_up() {
	timeout 10 docker -H "unix://$PAIR/docker/docker.sock" version >/dev/null 2>&1 &&
		timeout 10 ctr -a "$PAIR/ctd/containerd.sock" version >/dev/null 2>&1
}
pair_pids() { # the pair's daemons: those whose command line names $PAIR/
	local p
	for p in $(pgrep -x dockerd) $(pgrep -x containerd); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF "$PAIR/" && echo "$p"
	done
}
pair_stop() {
	local p left
	for p in $(pair_pids); do kill "$p" 2>/dev/null; done
	pair_gone() { [[ -z $(pair_pids) ]]; }
	if ! wait_for 60 pair_gone; then
		left=$(pair_pids)
		# shellcheck disable=SC2086 # one pid a word
		kill -KILL $left 2>/dev/null
		wait_for 10 pair_gone
	fi
	findmnt -rn -o TARGET | grep -F "$PAIR/" | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf --one-file-system "$PAIR"
}
pair_check() {
	if ! wait_for 60 pair_up; then
		why "the pair did not answer within 60 s: $(tail -n 3 "$PAIR/dockerd.log" "$PAIR/containerd.log" 2>&1)"
	fi
	eq "dockerd's storage root" "$(timeout 10 docker -H "unix://$PAIR/docker/docker.sock" info --format '{{.DockerRootDir}}' 2>&1)" "$PAIR/docker/data"
	if ((!PAIR_HAD_DOCKER0)) && ip link show docker0 >/dev/null 2>&1; then
		why "a docker0 bridge appeared"
	fi
	eq "iptables rules (filter and nat)" "$(pair_rules)" "$PAIR_RULES"
	pair_stop
	[[ -z $(pair_pids) ]] || why "a daemon of the pair outlived kill: $(pair_pids)"
}

run_all() { # run_all ENGINE: every block of ENGINE
	local n where
	emit "$1" "$WORK/blocks-$1"
	while read -r n where; do
		run_block "$WORK/blocks-$1" "$n" "$where"
	done < "$WORK/blocks-$1/list"
}

# run host: a block on the host, from a folder of the suite's that holds the
# reader's manifest.json (oci/manifest.example.json with the expires that
# oci/seal.sh --expires adds) and the clone's policy/; the block must pass
# that manifest and refuse one with a key the schema does not know.
run_host() {
	local n where dir=$WORK/blocks-host hostdir=$WORK/hostrun
	emit host "$dir"
	mkdir -p "$hostdir"
	ln -sfn "$ROOT/policy" "$hostdir/policy"
	while read -r n where; do
		python3 - "$ROOT/oci/manifest.example.json" "$hostdir/manifest.json" "$hostdir/unknown.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["expires"] = "2099-01-01T00:00:00Z"
json.dump(m, open(sys.argv[2], "w"))
m["no_such_key"] = 1
json.dump(m, open(sys.argv[3], "w"))
PY
		begin "d-$(printf '%s' "$where" | sed 's#^docs/##; s#\.md:#-#; s#[^A-Za-z0-9-]#-#g')" || continue
		CMD="(cd a folder with manifest.json and policy/ && bash -e $where)"
		run_cmd bash -c 'cd "$1" && exec timeout 300 bash -e "$2"' doclines "$hostdir" "$dir/$n.sh"
		expect_rc 0
		mv "$hostdir/unknown.json" "$hostdir/manifest.json"
		CMD="the same, manifest.json with a key the schema does not know (\"no_such_key\")"
		run_cmd bash -c 'cd "$1" && exec timeout 300 bash -e "$2"' doclines "$hostdir" "$dir/$n.sh"
		expect_rc 1
		expect_contains stderr "$ERR" "ValidationError"
		end
	done < "$dir/list"
}

if docker_engine; then
	# the images, made by the quick start as a reader makes them
	emit podman "$WORK/blocks-podman"
	read -r n where < "$WORK/blocks-podman/list"
	env HOME="$DL_HOME" bash -c 'cd "$1" && exec timeout 900 bash -e "$2"' doclines "$ROOT" \
		"$WORK/blocks-podman/$n.sh" > "$WORK/quickstart.log" 2>&1 \
		|| abort "the quick start ($where) failed: $(tail -n 3 "$WORK/quickstart.log")"
	# ctr talks to the docker suite's containerd
	export CONTAINERD_ADDRESS=${CTD_SOCK:?docker.sh exports CTD_SOCK}
	run_all docker
	run_all ctr
	if [[ -e $PAIR ]]; then
		skip d-deployment-pair "$PAIR exists: the private pair's folder is someone's (docs/deployment.md)"
	else
		PAIR_RULES=$(pair_rules)
		PAIR_HAD_DOCKER0=0
		ip link show docker0 >/dev/null 2>&1 && PAIR_HAD_DOCKER0=1
		PAIR_STARTED=1
		run_all pair
	fi
else
	run_host
	run_all podman
fi
results
