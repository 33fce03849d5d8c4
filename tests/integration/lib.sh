# shellcheck shell=bash
# lib.sh - helpers of the integration suites (sourced by each suite; bash): podman,
# or Docker under ITEST_ENGINE=docker.
#
# A test is written once, in one form, its name once:
#
#     if begin NAME; then <set up>; <run something>; <expect ...>...; end; fi
#
# begin is the runner: it gives the test a fresh directory (T_DIR) and a time
# limit (limit SECONDS asks for another), and end reports it. Each run_* sets
# RC, OUT and ERR (stdout and stderr byte-exact, trailing newlines kept) and
# CMD (the command, quoted). The output is TAP (the Test Anything Protocol):
# end prints "ok N - NAME # time=1.42s", or "not ok N - NAME # time=1.42s" and,
# as "# " lines, every unmet expectation and the evidence: the last command,
# its status, stdout and stderr. results prints the plan "1..N" last, then the
# closing line "N passed, N failed" that make check adds up.

PASS=0
FAIL=0
SKIPPED=0
TAP_N=0   # the number of the last TAP test line

# tap_ok NAME, tap_not_ok NAME: one TAP test line, counted.
tap_ok() {
	TAP_N=$((TAP_N + 1))
	PASS=$((PASS + 1))
	echo "ok $TAP_N - $*"
}
tap_not_ok() {
	TAP_N=$((TAP_N + 1))
	FAIL=$((FAIL + 1))
	echo "not ok $TAP_N - $*"
}

# SUITE: the name under which a suite's counts go to build/test-results/ (for
# the closing line of make check); each suite sets it before it runs anything.

# SUITE_T0: when the suite started (lib.sh sourced), in microseconds.
SUITE_T0=${EPOCHREALTIME/[.,]/}

# results: write "PASS FAIL SKIPPED SECONDS" (SECONDS: the suite's wall time,
# whole seconds) to build/test-results/$SUITE, print the closing line "N
# passed, N failed", and return non-zero if anything failed.
results() {
	t_unwatch
	mkdir -p "$ROOT/build/test-results"
	echo "$PASS $FAIL $SKIPPED $(((${EPOCHREALTIME/[.,]/} - SUITE_T0 + 500000) / 1000000))" \
		> "$ROOT/build/test-results/$SUITE"
	((${#SKIP_WHY[@]} == 0)) || printf '%s\n' "${SKIP_WHY[@]}" > "$ROOT/build/test-results/$SUITE.skips"
	echo "1..$TAP_N"
	echo "$PASS passed, $FAIL failed$( ((SKIPPED == 0)) || echo ", $SKIPPED skipped")"
	[[ $FAIL -eq 0 ]]
}

# abort WHY: a suite that cannot run counts one failure and stops.
abort() {
	t_unwatch
	tap_not_ok "setup # $*"
	results
	exit 1
}

# ITEST_ROOTLESS=1: the suite runs as an unprivileged user under rootless
# podman (tests/integration/rootless.sh makes the user and runs the suites as
# it); a suite then skips what only root can do, and says so (skip).
rootless() {
	[[ ${ITEST_ROOTLESS:-0} == 1 ]]
}

# ITEST_ENGINE=docker: the suite's containers run under Docker instead of
# podman (tests/integration/docker.sh starts a dockerd of its own, sets
# DOCKER_HOST to its socket and ITEST_DOCKER to its client, and runs run.sh,
# sandbox.sh, network.sh and serve.sh so; the other suites are podman's only).
# Images are still built with buildah and podman (rootfs/build-image.sh,
# oci/seal.sh) and handed over with `podman save | docker load` (engine_images).
# ENGINE is the client, ENGINE_NAME its name in test names and messages; SUITE
# and WORK get the prefix docker- (build/test-results/docker-integration, build/docker-itest).
docker_engine() {
	[[ ${ITEST_ENGINE:-podman} == docker ]]
}
# shellcheck disable=SC2034 # ENGINE_NAME: used by the suites
if docker_engine; then
	ENGINE=${ITEST_DOCKER:-docker}
	ENGINE_NAME=docker
else
	ENGINE=podman
	ENGINE_NAME=podman
fi
# tests/serve/cases.py calls the same client
export ITEST_ENGINE_BIN=$ENGINE
# ENGINE_TAG: what the suites written for both engines add to their image
# names under Docker (localhost/turninit-itest-docker): the podman store that
# builds them is root's, where make check runs the podman run of the same
# suite at the same time (tests/check-steps.sh).
# shellcheck disable=SC2034 # ENGINE_TAG: used by the suites
ENGINE_TAG=
docker_engine && ENGINE_TAG=-docker

# skip NAME WHY: the test NAME is not made in this setup: a TAP skip line that
# says why, counted apart from passes and failures; results writes each WHY
# to build/test-results/SUITE.skips, for the closing lines of make check.
# Nothing when ITEST_ONLY does not select NAME.
SKIP_WHY=()
skip() {
	selected "$1" || return 0
	if [[ -n $T_DIR && $1 == "$T_NAME" ]]; then   # a test begun, then skipped
		t_unwatch
		rm -rf "$T_DIR" 2>/dev/null || userns rm -rf "$T_DIR"
		T_DIR=
	fi
	TAP_N=$((TAP_N + 1))
	SKIPPED=$((SKIPPED + 1))
	SKIP_WHY+=("$2")
	echo "ok $TAP_N - $1 # SKIP $2"
}

# kernel_ask FEATURE: what the kernel answers for FEATURE, asked bare on the
# host by build/helpers/kfeatures (tests/kernel/kfeatures.c: int80, x32,
# landlock, cgroup, oom_kill, userns, unpriv_userns, io_uring): sets
# KERNEL_ANSWER ("yes", "no", a number, a cgroup layout, or "unknown") and
# KERNEL_WHY, its reason. A suite asks before a test relies on the feature
# (docs/testing.md, "Kernel features"); the helper missing or answering out of
# form aborts the suite, never skips a test.
KERNEL_ANSWER= KERNEL_WHY=
kernel_ask() {
	local line
	need_helpers kfeatures
	line=$("$HELPERS/kfeatures" "$1") || abort "build/helpers/kfeatures $1 failed"
	[[ $line == "$1 "?*": "?* ]] || abort "build/helpers/kfeatures $1: answer out of form: $line"
	line=${line#"$1 "}
	KERNEL_ANSWER=${line%%: *}
	KERNEL_WHY=${line#*: }
}

# kernel_lacks FEATURE [MIN]: true when the kernel lacks FEATURE (its answer is
# "no", or a number below MIN); KERNEL_WHY says why. "unknown" is not lacking:
# the test then runs and speaks for itself.
kernel_lacks() {
	kernel_ask "$1"
	[[ $KERNEL_ANSWER == no ]] && return 0
	if [[ -n ${2:-} && $KERNEL_ANSWER =~ ^[0-9]+$ ]] && ((KERNEL_ANSWER < $2)); then
		KERNEL_WHY+=" (the test needs $1 $2)"
		return 0
	fi
	return 1
}

# kernel_test NAME FEATURE [MIN]: begin NAME, for a test that relies on the
# kernel feature FEATURE (at least MIN, for landlock's ABI): where the kernel
# lacks it the test is skipped with the kernel's reason, and false. Written
# `if kernel_test NAME FEATURE; then ... end; fi`, as begin is.
kernel_test() {
	selected "$1" || return 1
	if kernel_lacks "$2" "${3:-}"; then
		skip "$1" "$KERNEL_WHY"
		return 1
	fi
	begin "$1"
}

# podman_test NAME WHY: begin NAME, for a test of what only podman has: under
# Docker it is skipped (skip NAME WHY) and false.
podman_test() {
	selected "$1" || return 1
	if docker_engine; then
		skip "$1" "$2"
		return 1
	fi
	begin "$1"
}

# userns CMD...: CMD as root of rootless podman's user namespace (podman
# unshare: the uid mapping every rootless container of this user shares), so
# that it may take a container uid or mount an image; as root, CMD itself.
userns() {
	if rootless; then
		timeout 300 podman unshare "$@"
	else
		"$@"
	fi
}

# suite_open NAME DIR WHY TOOL...: how every suite opens. NAME: where its
# counts go (build/test-results/NAME, SUITE); DIR: its scratch directory
# build/DIR (WORK), made empty; BIN: the binary under test, ITEST_BINARY or
# build/turninit unless the suite set BIN; the preflight (WHY: what it needs
# root for; the binary; the tools TOOL...); INT and TERM end it with status
# 130. The suite sets its own EXIT trap. A suite written for both engines sets
# ENGINES="podman docker" first; under ITEST_ENGINE=docker NAME and DIR get
# the prefix docker-, and any other suite aborts.
suite_open() {
	SUITE=$1
	WORK=$ROOT/build/$2
	local why=$3
	shift 3
	if docker_engine; then
		SUITE=docker-$SUITE
		WORK=$ROOT/build/docker-$2
		[[ " ${ENGINES:-podman} " == *" docker "* ]] \
			|| abort "this suite runs under podman only (ITEST_ENGINE=docker: run.sh, sandbox.sh, network.sh, serve.sh)"
	fi
	BIN=${BIN:-${ITEST_BINARY:-$ROOT/build/turninit}}
	preflight "$why" "$BIN" "$@"
	# Landlock is part of every default manifest: on a kernel without it
	# turninit refuses each turn, as it should, so no suite can say anything
	# there. One clear failure, not a suite of skips that would pass.
	kernel_lacks landlock 1 && abort "this kernel has no Landlock ($KERNEL_WHY): turninit refuses every turn whose manifest does not make it optional; the suites need a kernel with Landlock"
	rm -rf "$WORK"
	mkdir -p "$WORK"
	trap 'exit 130' INT TERM
}

# preflight WHY BINARY TOOL...: root (for WHY), or with ITEST_ROOTLESS=1 an
# unprivileged user whose podman is rootless; the binary built, the tools there.
preflight() {
	local why=$1 bin=$2 c
	shift 2
	if rootless; then
		[[ $(id -u) -ne 0 ]] || abort "ITEST_ROOTLESS=1 wants an unprivileged user (tests/integration/rootless.sh runs the suites as one)"
		[[ $(timeout 60 podman info --format '{{.Host.Security.Rootless}}' 2>&1) == true ]] \
			|| abort "podman is not rootless for uid $(id -u): $(timeout 60 podman info 2>&1 | tail -n 1)"
	else
		[[ $(id -u) -eq 0 ]] || abort "run as root ($why)"
	fi
	[[ -x $bin ]] || abort "$bin missing: run make first"
	if docker_engine; then
		[[ -n ${DOCKER_HOST:-} ]] || abort "ITEST_ENGINE=docker wants DOCKER_HOST (tests/integration/docker.sh starts a dockerd and sets it)"
		command -v "$ENGINE" >/dev/null || abort "$ENGINE not found: run make setup (docker.io)"
		timeout 60 "$ENGINE" version >/dev/null 2>&1 \
			|| abort "no dockerd answers at $DOCKER_HOST: $(timeout 60 "$ENGINE" version 2>&1 | tail -n 1)"
	fi
	for c in "$@"; do
		command -v "$c" >/dev/null || abort "$c not found: run make setup"
	done
}
# selected NAME: true when the test NAME is to run: ITEST_ONLY=REGEX (bash's
# =~) runs only the tests whose name matches, in every suite; unset, all.
# A REGEX bash cannot read aborts the suite, rather than select nothing.
selected() {
	[[ -z ${ITEST_ONLY:-} ]] && return 0
	[[ $1 =~ $ITEST_ONLY ]]
	case $? in
	0) return 0 ;;
	2) abort "ITEST_ONLY=$(printf '%q' "$ITEST_ONLY") is not a regular expression bash reads" ;;
	esac
	return 1
}

# need_helpers NAME...: the static test helpers build/helpers/NAME (built by
# `make helpers`, which every suite target of the Makefile depends on) are
# there, or the suite aborts and says how to build them. HELPERS is the
# directory.
HELPERS=$ROOT/build/helpers
need_helpers() {
	local h
	for h in "$@"; do
		[[ -x $HELPERS/$h ]] || abort "build/helpers/$h missing: run make helpers"
	done
}

T_NAME=
T_WHY=()
RC=0 OUT='' ERR='' CMD=''

# The suite's run flags: never pull, no network, a label for cleanup, and the
# hard timeout of every podman (or docker) call. ENGINE_RUN is the engine's;
# PODMAN_RUN, which prun runs, is the same unless a podman-only suite sets its own.
LABEL=turninit-itest=$$
ENGINE_RUN=(timeout 60 "$ENGINE" run --rm --pull never --network none --label "$LABEL")
PODMAN_RUN=("${ENGINE_RUN[@]}")
# HOME_TMPFS: the --tmpfs of the manifest's HOME. podman's U gives it to the
# container's user (root); Docker refuses U and takes the owner itself (the
# flag turninit's refusal names for docker run: init/sandbox/home.h, HOME_DOCKER_HINT;
# exec, as the docs' Docker lines say: Docker mounts a --tmpfs noexec
# otherwise). NOCOPYUP: what the
# --tmpfs options of an image with files in HOME need: podman copies them in
# unless told notmpcopyup; Docker never copies, and refuses the option.
# shellcheck disable=SC2034 # used by the suites
if docker_engine; then
	HOME_TMPFS=/home/agent:exec,mode=0700,uid=1000,gid=1000
	NOCOPYUP=
else
	HOME_TMPFS=/home/agent:rw,mode=0700,size=64m,U
	NOCOPYUP=,notmpcopyup
fi

# slurp FILE: print FILE's bytes into the variable named by $2, trailing newlines kept.
slurp() {
	local s
	s=$(cat "$1"; echo .)
	printf -v "$2" '%s' "${s%.}"
}

# run_cmd CMD...: run CMD with stdin from /dev/null.
run_cmd() {
	CMD=$(printf '%q ' "$@")
	"$@" </dev/null >"$WORK/stdout" 2>"$WORK/stderr"
	RC=$?
	slurp "$WORK/stdout" OUT
	slurp "$WORK/stderr" ERR
}

# run_input TEXT CMD...: run CMD with TEXT on stdin.
run_input() {
	local input=$1
	shift
	CMD="printf %s $(printf '%q' "$input") | $(printf '%q ' "$@")"
	printf '%s' "$input" | "$@" >"$WORK/stdout" 2>"$WORK/stderr"
	RC=$?
	slurp "$WORK/stdout" OUT
	slurp "$WORK/stderr" ERR
}

# prun ARGS...: the engine's run with the suite's flags (PODMAN_RUN) and ARGS.
prun() {
	run_cmd "${PODMAN_RUN[@]}" "$@"
}

# begin NAME: a test starts; its checks (why, eq, expect_*) gather until end.
# Returns 1, and starts nothing, when ITEST_ONLY does not select NAME: a test
# is written `if begin NAME; then ... end; fi`, so that every suite honours
# ITEST_ONLY (a block that gathers what later tests need runs unconditioned).
# A row function that begins its NAME may be called inside `if begin NAME`: the
# second begin of the running test is a no-op. The test gets T_DIR, a fresh directory of its own ($WORK/t/NAME), and a time
# limit: T_LIMIT seconds, ITEST_LIMIT or 600 (limit SECONDS asks for another).
T_DIR=
T_LIMIT=${ITEST_LIMIT:-600}
begin() {
	# a row function's own begin NAME inside the test NAME: the same test
	[[ -n $T_DIR && $1 == "$T_NAME" ]] && return 0
	t_unwatch
	T_NAME=$1
	T_WHY=()
	T_DIR=
	RC=0 OUT='' ERR='' CMD=''
	# timed even when not selected: a block that always runs (sandbox.sh's
	# probe runs) calls end all the same
	T_BEGUN_US=${EPOCHREALTIME/[.,]/}
	selected "$1" || return 1
	T_DIR=$WORK/t/${1//[^A-Za-z0-9._-]/_}
	# an empty name (an unset row argument), "." or "..": T_DIR would be t/
	# or above, and its removal every kept directory of the run
	if [[ $T_DIR == "$WORK/t/" || $T_DIR == "$WORK/t/." || $T_DIR == "$WORK/t/.." ]]; then
		T_DIR=
		abort "begin: the test name $(printf '%q' "$1") names no directory of its own"
	fi
	if [[ -e $T_DIR ]]; then
		rm -rf "$T_DIR" 2>/dev/null || userns rm -rf "$T_DIR"
	fi
	mkdir -p "$T_DIR"
	T_SINCE=
	t_watch "$T_LIMIT"
	# the test's processes are those that started since its first
	# watchdog: limit's watchdog, started later, kills them too
	local line fields
	read -r line < "/proc/$T_WATCH/stat" && read -ra fields <<< "${line##*) }" && T_SINCE=${fields[19]}
}

# limit SECONDS: the running test's time limit is SECONDS from its begin, not
# T_LIMIT (a test that is slow by nature: an image build, a debootstrap).
limit() {
	local left=$(($1 - (${EPOCHREALTIME/[.,]/} - T_BEGUN_US) / 1000000))
	t_watch $((left > 1 ? left : 1))
	T_TOOK_LIMIT=$1
}

# t_procs ROOT SKIP SINCE: the pids of the processes below ROOT (children,
# theirs, ...) that started at SINCE or later (clock ticks since boot, field
# 22 of /proc/PID/stat), but not SKIP or below it; one a line.
t_procs() {
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$1" -v skip="$2" -v since="$3" '
		{
			pid = $1
			sub(/^.*\) /, "")   # the comm field may hold spaces and parentheses
			parent[pid] = $2
			start[pid] = $20
		}
		END {
			for (p in parent) {
				if (start[p] + 0 < since + 0)
					continue
				q = p
				while (q != root && q != skip && (q in parent) && q > 1)
					q = parent[q]
				if (q == root && p != root)
					print p
			}
		}'
}

# t_sweep SIGNAL SKIP SINCE: send SIGNAL, in one kill, to what t_procs $$ SKIP
# SINCE names.
t_sweep() {
	local pids
	pids=$(t_procs $$ "$2" "$3")
	# shellcheck disable=SC2086 # one pid a word
	[[ -z $pids ]] || kill -"$1" $pids 2>/dev/null
	return 0
}

# t_watch SECONDS: (re)start the test's watchdog. It waits SECONDS on a timer;
# then it marks the test out of time ($WORK/t/.expired, which holds when the
# watchdog started) and kills every process below the suite's shell that
# started since the test's first watchdog did (begin's, whose start T_SINCE
# holds for the one limit starts; in the same clock tick or later), TERM first
# and KILL from 2 s on, again every 0.2 s until end stops it, so that the
# test's remaining lines run through to end; end sends the last KILL. The
# suite's shell, what it started before the test, and the watchdog itself are
# never signalled. A process that left the tree (a daemon that forked twice; a
# container, whose conmon podman reparents) is not the watchdog's: the suite's
# EXIT cleanup has it.
T_WATCH=
T_TOOK_LIMIT=
T_SINCE=
t_watch() {
	local limit=$1
	t_unwatch
	T_TOOK_LIMIT=$T_LIMIT
	rm -f "$WORK/t/.expired"
	(
		me=$BASHPID sp=
		trap '[[ -z $sp ]] || kill "$sp" 2>/dev/null; exit 0' TERM
		sleep "$limit" &
		sp=$!
		wait "$sp"
		kill -0 $$ 2>/dev/null || exit 0
		stat=$(cat /proc/$me/stat)
		# shellcheck disable=SC2086 # the fields after the comm
		set -- ${stat##*) }
		since=${T_SINCE:-${20}}
		echo "$since" > "$WORK/t/.expired"
		sig=TERM rounds=0
		while kill -0 $$ 2>/dev/null; do
			t_sweep "$sig" "$me" "$since"
			rounds=$((rounds + 1))
			((rounds < 10)) || sig=KILL
			sleep 0.2 &
			sp=$!
			wait "$sp"
		done
	) </dev/null >/dev/null 2>&1 &
	T_WATCH=$!
}

# t_unwatch: stop the watchdog, if one runs, and wait until it has gone.
t_unwatch() {
	[[ -n $T_WATCH ]] || return 0
	kill "$T_WATCH" 2>/dev/null
	wait "$T_WATCH" 2>/dev/null
	T_WATCH=
}

why() {
	T_WHY+=("$*")
}

# eq WHAT GOT WANT: exact comparison.
eq() {
	[[ $2 == "$3" ]] || why "$1: got $(printf '%q' "$2"), want $(printf '%q' "$3")"
}

expect_rc() { eq "exit status" "$RC" "$1"; }
expect_out() { eq stdout "$OUT" "$1"; }
expect_err() { eq stderr "$ERR" "$1"; }

# expect_contains WHAT TEXT SUBSTRING
expect_contains() {
	[[ $2 == *"$3"* ]] || why "$1 does not contain $(printf '%q' "$3")"
}

# expect_refusal SUBSTRING: turninit refused before running anything: status 125,
# nothing on stdout (the command would have printed a marker), exactly one line on
# stderr, starting "turninit: " and containing SUBSTRING (case-insensitive).
expect_refusal() {
	expect_rc 125
	expect_out ""
	local lines
	lines=$(printf '%s' "$ERR" | wc -l)
	[[ $ERR == *$'\n' && $lines -eq 1 ]] || why "stderr is not exactly one line ($lines newlines)"
	[[ $ERR == "turninit: "* ]] || why "stderr does not start with 'turninit: '"
	[[ ${ERR,,} == *"${1,,}"* ]] || why "stderr does not mention $(printf '%q' "$1")"
}

# end: the test's TAP line, its duration as node-tap's time directive
# ("# time=1.42s", which tap-parser reads as the test's time and other TAP
# parsers keep as a comment), and on a failure the evidence. A test that ran
# out of time fails with the line "ran out of time" first. T_DIR is removed
# when the test passed, kept (and named) when it failed.
end() {
	local took expired=
	t_unwatch
	took=$((${EPOCHREALTIME/[.,]/} - T_BEGUN_US))
	took=$(printf '%d.%02d' $((took / 1000000)) $((took % 1000000 / 10000)))
	if [[ -e $WORK/t/.expired ]]; then
		t_sweep KILL 0 "$(cat "$WORK/t/.expired")"
		expired="ran out of time: its limit is ${T_TOOK_LIMIT:-$T_LIMIT} s; the processes it started were killed"
		rm -f "$WORK/t/.expired"
	fi
	if [[ ${#T_WHY[@]} -eq 0 && -z $expired ]]; then
		tap_ok "$T_NAME # time=${took}s"
		rm -rf "$T_DIR" 2>/dev/null || userns rm -rf "$T_DIR"
		T_DIR=
		T_NAME=
		return
	fi
	tap_not_ok "$T_NAME # time=${took}s"
	local w
	[[ -z $expired ]] || echo "#   $T_NAME $expired"
	for w in "${T_WHY[@]}"; do
		echo "#   - $w"
	done
	echo "#   command: $CMD"
	echo "#   status: $RC"
	printf '%s' "$OUT" | head -n 30 | sed 's/^/#   stdout| /'
	printf '%s' "$ERR" | head -n 30 | sed 's/^/#   stderr| /'
	[[ -z $T_DIR ]] || echo "#   directory: ${T_DIR#"$ROOT"/} (kept)"
	T_DIR=
	T_NAME=
}

# b64 FILE: base64 of FILE's bytes, one line.
b64() {
	base64 -w0 "$1"
}

# sign FILE KEY [-l]: FILE.minisig by the stock minisign CLI, fixed trusted comment.
sign() {
	# shellcheck disable=SC2086 # $3 is empty or -l
	minisign -S ${3:-} -s "$2" -m "$1" -x "$1.minisig" \
		-t "turninit integration test: $(basename "$1")" </dev/null >/dev/null
}

# The manifests of the suites are composed of these pieces of JSON: HEAD
# (version, a far expiry that keeps them deterministic, user, home, workdir) and
# SET (env.set). manifest NAME JSON writes $WORK/m/NAME.json byte for byte and
# signs it with the minisign secret key $MANIFEST_KEY.
# shellcheck disable=SC2034 # used by the suites
SET='"set":{"PATH":"/usr/local/bin:/usr/bin:/bin","LANG":"C.UTF-8","TERM":"dumb"}'
HEAD='"turninit":1,"expires":"2099-01-01T00:00:00Z","user":{"uid":1000,"gid":1000},"home":"/home/agent","workdir":"/work"'
manifest() {
	mkdir -p "$WORK/m"
	printf '%s\n' "$2" > "$WORK/m/$1.json"
	sign "$WORK/m/$1.json" "$MANIFEST_KEY" || abort "minisign -S $1.json"
}

# serve_session FIRST [MARK SECOND] -- COMMAND...: a serve session over the
# pipes of COMMAND (tests/integration/session.py): the request FIRST, then
# (when a command's output holds MARK) SECOND; stdin stays open until every
# command sent has exited. Sets RC, OUT ("ID STREAM LINE" and "ID exit CODE
# SIGNAL" lines, sorted) and ERR.
serve_session() {
	run_cmd timeout 120 python3 "$ROOT/tests/integration/session.py" "$@"
}

# --- Kubernetes examples under podman kube play (run.sh, nonroot.sh) ---
# kube_volume NAME OPTS...: a podman volume for an emptyDir of the YAML (podman
# kube play makes an emptyDir a plain volume on disk, ignoring medium: Memory).
VOLS=()
kube_volume() {
	local name=$1
	shift
	timeout 60 podman volume create --label "$LABEL" "$@" "$name" >/dev/null || why "podman volume create $name"
	VOLS+=("$name")
}
kube_down() { # kube_down YAML: the pod and the volumes gone
	timeout 120 podman kube down "$1" >/dev/null 2>&1
	((${#VOLS[@]} == 0)) || timeout 60 podman volume rm -f "${VOLS[@]}" >/dev/null 2>&1
	VOLS=()
}
# job_pod YAML IMAGE NAME [SED...]: the pod template of the Job in YAML
# (oci/k8s/) as a Pod named NAME (podman kube play has no Job kind) with
# IMAGE, its volumes NAME-home and NAME-ws, in $WORK/NAME.yaml.
job_pod() {
	local yaml=$1 image=$2 pod=$3
	shift 3
	awk -v pod="$pod" '
		/^  template:$/ { on = 1; print "apiVersion: v1"; print "kind: Pod"; next }
		on { sub(/^    /, ""); print; if ($0 == "metadata:") print "  name: " pod }' \
		"$yaml" | sed -e "s|localhost/agent-turn:1|$image|" \
		-e "s|turninit-home|$pod-home|; s|name: workspace|name: $pod-ws|" "$@" > "$WORK/$pod.yaml"
}
# kube_job NAME WANT_OUT WANT_ERR: play $WORK/NAME.yaml (job_pod) with a tmpfs
# volume of mode 1777 for its HOME emptyDir (a kubelet's memory emptyDir),
# wait for the turn, check its status (3, the examples' command) and log.
kube_job() {
	local pod=$1
	kube_volume "$pod-home" --opt type=tmpfs --opt device=tmpfs --opt o=mode=1777
	VOLS+=("$pod-ws")   # made by kube play
	run_cmd timeout 120 podman kube play --network none "$WORK/$pod.yaml"
	if [[ $RC -ne 0 ]]; then
		why "podman kube play failed"
	else
		run_cmd timeout 60 podman wait "$pod-turn"
		eq "container status" "${OUT%$'\n'}" 3
		run_cmd timeout 60 podman logs "$pod-turn"
		expect_out "$2"
		expect_err "$3"
	fi
	kube_down "$WORK/$pod.yaml"
}
# trusted_keys: the committed test key pair (tests/vectors, made by
# make-vectors.sh) as KEY_SEC and KEY_PUB, MANIFEST_KEY for manifest, and M,
# the suite's manifest directory ($WORK/m); aborts when the pair is missing.
trusted_keys() {
	KEY_SEC=$ROOT/tests/vectors/test-trusted.key KEY_PUB=$ROOT/tests/vectors/test-trusted.pub
	[[ -r $KEY_SEC && -r $KEY_PUB ]] || abort "tests/vectors/test-trusted.{key,pub} missing"
	# shellcheck disable=SC2034 # used by the suites and manifest
	MANIFEST_KEY=$KEY_SEC M=$WORK/m
}

# no_landlock_profile FILE: podman's own default seccomp profile without the
# landlock syscalls, written to FILE: to turninit that is a kernel without
# Landlock (they fail with the profile's ENOSYS).
no_landlock_profile() {
	python3 - "$1" <<'PYEOF'
import json, sys
d = json.load(open("/usr/share/containers/seccomp.json"))
for s in d["syscalls"]:
    s["names"] = [n for n in s["names"] if not n.startswith("landlock_")]
d["syscalls"] = [s for s in d["syscalls"] if s["names"]]
json.dump(d, open(sys.argv[1], "w"))
PYEOF
}

# manifest_env FILE: the -e options that hand FILE and FILE.minisig to PID 1, the
# way a caller who controls the container's environment can.
manifest_env() {
	printf '%s\n' -e "TURNINIT_MANIFEST=$(b64 "$1")" -e "TURNINIT_MANIFEST_SIG=$(b64 "$1.minisig")"
}

# overlay_image IMG WHAT HELPER...: the image IMG:base (rootfs/build-image.sh,
# trusting $KEY_PUB) with an overlay of setsid (a busybox applet the base image
# does not link) and the static helpers HELPER... in /bin, and IMG:sealed, that
# image sealed with $M/main.json by $KEY_SEC (oci/seal.sh; trusted comment
# "turninit WHAT test: sealed"). Sets SEALED; aborts the suite on a failure.
overlay_image() {
	local img=$1 what=$2 h
	shift 2
	mkdir -p "$WORK/overlay/bin"
	ln -sf busybox "$WORK/overlay/bin/setsid"
	need_helpers "$@"
	for h in "$@"; do
		install -m 0755 "$HELPERS/$h" "$WORK/overlay/bin/"
	done
	sh "$ROOT/rootfs/build-image.sh" --trusted-key "$KEY_PUB" --tag "$img:base" \
		--root "$WORK/root-base" --overlay "$WORK/overlay" "$BIN" >"$WORK/build-base.log" 2>&1 \
		|| { cat "$WORK/build-base.log"; abort "rootfs/build-image.sh"; }
	sh "$ROOT/oci/seal.sh" --image "$img:base" --tag "$img:sealed" --manifest "$M/main.json" \
		--key "$KEY_SEC" --trusted-comment "turninit $what test: sealed" \
		>"$WORK/seal.log" 2>&1 || { cat "$WORK/seal.log"; abort "oci/seal.sh"; }
	SEALED=$img:sealed
}

# engine_rm NAME...: remove the containers NAME... at once, killed if they
# run (docker rm -f kills without a grace; podman's wants -t 0 for that).
engine_rm() {
	if docker_engine; then
		timeout 60 "$ENGINE" rm -f "$@" >/dev/null 2>&1
	else
		timeout 60 podman rm -f -t 0 "$@" >/dev/null 2>&1
	fi
}

# cleanup: remove every container this run labelled (after a timeout or a failure).
cleanup_containers() {
	local ids
	ids=$(timeout 60 "$ENGINE" ps -aq --filter "label=$LABEL" 2>/dev/null) || return 0
	# shellcheck disable=SC2086 # one id a word
	[[ -z $ids ]] || engine_rm $ids || true
}

# engine_images IMAGE...: under Docker, the podman images IMAGE... handed to
# dockerd (`podman save -m | docker load`), each checked to keep its config
# Env (where oci/seal.sh puts TURNINIT_MANIFEST) and Entrypoint, and the
# images they replace removed; under podman nothing. Aborts the suite on a
# failure.
engine_images() {
	docker_engine || return 0
	local img want got
	timeout 300 podman save -m "$@" 2>"$WORK/save.log" | timeout 300 "$ENGINE" load >"$WORK/load.log" 2>&1
	[[ ${PIPESTATUS[0]} -eq 0 && ${PIPESTATUS[1]} -eq 0 ]] \
		|| { cat "$WORK/save.log" "$WORK/load.log"; abort "podman save -m $* | docker load"; }
	for img in "$@"; do
		want=$(timeout 60 podman image inspect --format '{{json .Config.Env}} {{json .Config.Entrypoint}}' "$img" 2>&1)
		got=$(timeout 60 "$ENGINE" image inspect --format '{{json .Config.Env}} {{json .Config.Entrypoint}}' "$img" 2>&1)
		[[ $got == "$want" ]] || abort "docker load of $img: config Env and Entrypoint $got, want podman's $want"
	done
	timeout 60 "$ENGINE" image prune -f >/dev/null 2>&1
	return 0
}

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds; false on timeout.
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# node_tap_report TAP LOG RC: the tests of a `node --test` run (its TAP report in
# file TAP, its log in LOG, its exit status RC) as this suite's TAP lines: one per
# top-level test, with node's report of a failure; a run that failed with no
# failing test, or ran none, is a failure too.
node_tap_report() {
	local tap=$1 log=$2 rc=$3 line name taplines=()
	# Top-level "ok N - NAME" / "not ok N - NAME" lines: one per test.
	[[ -r $tap ]] && mapfile -t taplines <"$tap"
	for line in "${taplines[@]}"; do
		case $line in
		"ok "*" - "*)
			name=${line#* - }
			if [[ $name == *" # SKIP"* ]]; then
				skip "${name% # SKIP*}" "${name#* # SKIP}"
				continue
			fi
			tap_ok "${name% # *}"
			;;
		"not ok "*" - "*)
			name=${line#* - }
			tap_not_ok "${name% # *}"
			# node's report of it: the YAML block that follows, as TAP comments.
			printf '%s\n' "${taplines[@]}" \
				| awk -v want="$line" '$0 == want { on = 1; next } on && /^(ok|not ok) / { exit } on' \
				| head -n 40 | sed 's/^/#   /'
			;;
		esac
	done
	if [[ $rc -ne 0 && $FAIL -eq 0 ]]; then
		tap_not_ok "node --test exited $rc"
		tail -n 30 "$log" | sed 's/^/#   /'
	fi
	if [[ $((PASS + FAIL)) -eq 0 ]]; then
		tap_not_ok "no test ran"
		tail -n 30 "$log" | sed 's/^/#   /'
	fi
	# node's own "# ..." notes, but not its counts
	grep '^# ' "$log" | grep -v '^# \(tests\|suites\|pass\|fail\|cancelled\|skipped\|todo\|duration_ms\) ' || true
}

# no_container_left: one TAP test: no container with this run's $LABEL is left,
# whatever the tests did.
no_container_left() {
	local left
	left=$(timeout 60 "$ENGINE" ps -aq --filter "label=$LABEL" 2>/dev/null | wc -l)
	if [[ $left -eq 0 ]]; then
		tap_ok "no container left after the suite"
	else
		tap_not_ok "no container left after the suite # $left left"
	fi
}

# need_node: node >= 20.6 and npm, or the suite aborts saying which is missing.
# They are not Debian packages here (Debian 12's nodejs is 18; pi's engines want
# 20.6), so make setup only says what it found.
need_node() {
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		abort "node >= 20.6 and npm not found: the $SUITE suite needs them (https://nodejs.org; make setup says what it found)"
	fi
	node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 6) ? 0 : 1)' \
		|| abort "node $(node --version) is too old: the $SUITE suite needs node >= 20.6"
}

# npm_install DIR PACKAGE_DIR HAVE: the packages of PACKAGE_DIR's package.json,
# as pinned in its package-lock.json, installed from the npm registry with
# `npm ci --ignore-scripts` into DIR; again only when the lock file changed or
# the path HAVE (below DIR) is missing. The log goes to $WORK/npm.log. One
# install of DIR at a time (DIR.lock): suites that make check runs side by
# side share one (network.sh's podman and Docker runs, Node.js 22).
npm_install() {
	local dir=$1 pkg=$2 have=$3 lk
	mkdir -p "$(dirname "$dir")"
	exec {lk}>"$dir.lock"
	flock -w 1800 "$lk" || abort "${dir#"$ROOT"/}.lock: another install held it for 30 minutes"
	if cmp -s "$pkg/package-lock.json" "$dir/package-lock.json" && [[ -e $dir/$have ]]; then
		exec {lk}>&-
		return 0
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$pkg/package.json" "$pkg/package-lock.json" "$dir/"
	(cd "$dir" && timeout 900 npm ci --ignore-scripts --no-audit --no-fund) >"$WORK/npm.log" 2>&1 \
		|| { tail -n 20 "$WORK/npm.log"; rm -rf "$dir"; abort "npm ci in ${dir#"$ROOT"/} (${pkg#"$ROOT"/}/package-lock.json)"; }
	exec {lk}>&-
}

# prune_images: the images of turninit's roots that no tag names any more
# (a build or seal whose image a container still used when it replaced it)
# removed, unless ITEST_PARALLEL=1: then suites run beside this one in the
# same container store, and a prune between one's import and its tag would
# take the image it is making; tests/check-steps.sh prunes once before it
# starts them.
prune_images() {
	[[ ${ITEST_PARALLEL:-} == 1 ]] && return 0
	timeout 60 podman image prune -f --filter label=org.turninit.root >/dev/null 2>&1
	return 0
}

# seal_images IMG WHAT NAME...: IMG:base (rootfs/build-image.sh around $BIN,
# trusting $WORK/key.pub), and for each NAME the image IMG:NAME sealed with
# $WORK/m/NAME.json by $WORK/key.key (oci/seal.sh; trusted comment "turninit
# WHAT test: NAME"); the intermediate roots are pruned. Aborts on a failure,
# with its log.
seal_images() {
	local img=$1 what=$2 m
	shift 2
	sh "$ROOT/rootfs/build-image.sh" --trusted-key "$WORK/key.pub" --tag "$img:base" \
		--root "$WORK/root-base" "$BIN" >"$WORK/build-base.log" 2>&1 \
		|| { cat "$WORK/build-base.log"; abort "rootfs/build-image.sh"; }
	for m in "$@"; do
		sh "$ROOT/oci/seal.sh" --image "$img:base" --tag "$img:$m" --manifest "$WORK/m/$m.json" \
			--key "$WORK/key.key" --trusted-comment "turninit $what test: $m" \
			>"$WORK/seal-$m.log" 2>&1 || { cat "$WORK/seal-$m.log"; abort "oci/seal.sh $m"; }
	done
	prune_images
}

# workspace: a fresh host directory for the manifest's workdir, owned by uid
# 1000, mode 0755, outside build/ (the clone's folder may be closed to other
# uids); its path in WS.
workspace() {
	WS=$(mktemp -d "${TMPDIR:-/tmp}/turninit-$SUITE.XXXXXX") || abort "mktemp"
	chmod 0755 "$WS"
	userns chown 1000:1000 "$WS"
}
