#!/bin/bash
# docker.sh - the one-shot, escape-probe and serve suites again under Docker,
# and turninit as Docker's init and under containerd's ctr (`make docker`,
# part of `make check`; issue 16). Root; Debian's docker.io and containerd
# (`make setup`).
#
# Starts, in build/docker/, and stops by pid at exit (SIGTERM, SIGKILL after
# 30 s):
#   - a containerd of its own: its own --address, --root and --state, and a
#     config without the CRI plugin (Kubernetes' image and network service,
#     which would look for CNI) and with its opt directory inside;
#   - a dockerd of its own on that containerd (--containerd): its own unix
#     socket (-H, group root), --data-root, --exec-root and --pidfile, an
#     empty --config-file (the host's /etc/docker/daemon.json is not read),
#     --bridge=none --iptables=false (no default bridge, no NAT: a test runs
#     --network none, or on an --internal network of its own), and
#     --init-path build/turninit, so that `docker run --init` runs turninit.
# Nothing of a docker or containerd of the host is used or touched. While a
# container runs, its shim keeps a socket in /run/containerd/s/, whatever
# containerd's --state (containerd 1.6 fixes that path); the directories it
# makes there are removed at exit when they were not there before.
#
# Then, each under a hard timeout:
#   - docker-engine: the sealed image's config Env after `podman save |
#     docker load`, `docker info` showing turninit's commit as the init
#     version with no parse warning in dockerd's log, and what the
#     daemon-wide init means: every `--init` container gets turninit, and an
#     image whose ENTRYPOINT is turninit must have it cleared; and the
#     Containerfiles of docs/packaging.md under docker build;
#   - docker-containerd: `ctr image import` of sealed images, one turn by
#     `ctr run` with the HOME tmpfs as a --mount (exact output, environment,
#     status), Landlock under ctr, SIGTERM, and the refusal without the mount;
#   - run.sh, sandbox.sh, network.sh, serve.sh and doclines.sh with
#     ITEST_ENGINE=docker and DOCKER_HOST that socket (tests/integration/lib.sh):
#     docker-integration, docker-sandbox, docker-network, docker-serve,
#     docker-doclines (with ctr's CONTAINERD_ADDRESS this containerd's).
# Their counts go to build/test-results/docker-*; the last line adds them up.
# Exits 1 when anything failed or did not run.
#
# Environment: ITEST_ONLY=REGEX and ITEST_BINARY=PATH (passed on);
# ITEST_DOCKER, the docker client (default Debian's /usr/bin/docker, of the
# daemon's version, where there is one); DOCKER_SUITES="run serve", a subset
# of the five suites, by file name.
# shellcheck disable=SC2016 # '$X' is literal: it runs in the container
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VECTORS=$ROOT/tests/vectors
RESULTS=$ROOT/build/test-results
export ITEST_ENGINE=docker
if [[ -z ${ITEST_DOCKER:-} ]]; then
	ITEST_DOCKER=docker
	[[ -x /usr/bin/docker ]] && ITEST_DOCKER=/usr/bin/docker
fi
export ITEST_DOCKER
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
SUITE=docker-engine   # where a failure before suite_open is counted
BIN=${ITEST_BINARY:-$ROOT/build/turninit}
ENGINES=docker
# file name of the suite : its name in build/test-results (with docker-)
ALL=(run:integration sandbox:sandbox network:network serve:serve doclines:doclines)
# each one's hard bound: beside two other suites of make check a suite takes
# up to twice its time alone (docker-network: 633 s in one such run), and
# doclines may first wait up to 30 min for the podman run's turn (its lock)
SUITE_TIMEOUT=2400

D=$ROOT/build/docker
export CTD_SOCK=$D/containerd.sock   # doclines.sh points ctr at it
DOCKER_SOCK=$D/docker.sock
CTD_PID='' DOCKERD_PID=''
NS=turninit-itest          # the containerd namespace of the ctr tests
RUNC_ROOT=$D/ctr-runc FIFO_DIR=$D/ctr-fifo
CTR=(timeout 60 ctr -a "$CTD_SOCK" -n "$NS")
say() { echo "# docker: $*"; }

[[ $(id -u) -eq 0 ]] || abort "run as root (it starts a dockerd and a containerd)"
[[ -x $BIN ]] || abort "$BIN missing: run make first"
for c in dockerd containerd ctr runc "$ITEST_DOCKER" podman buildah minisign timeout; do
	command -v "$c" >/dev/null || abort "$c not found: run make setup (docker.io, containerd, runc)"
done
# sun_path holds 108 bytes; containerd adds ".ttrpc" to its socket's path
((${#CTD_SOCK} + 6 < 108)) || abort "$CTD_SOCK: too long a path for a unix socket"
mkdir -p "$RESULTS"
rm -f "$RESULTS"/docker-*

# --- what an earlier run left -------------------------------------------------------
# exited PID: the process PID is gone, or a zombie.
exited() {
	[[ ! -e /proc/$1 || $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d ' ' -f 1) == Z ]]
}
# stop_pid NAME PID: SIGTERM, then SIGKILL after 30 s; reaped when a child.
stop_pid() {
	kill -TERM "$2" 2>/dev/null || return 0
	if ! wait_for 30 exited "$2"; then
		say "$1 (pid $2) still runs 30 s after SIGTERM: SIGKILL"
		kill -KILL "$2" 2>/dev/null
		wait_for 10 exited "$2"
	fi
	wait "$2" 2>/dev/null
	return 0
}
# A daemon of an earlier run that was killed before its exit trap: the pid in
# its file, if its command line names this directory, is that daemon.
for f in dockerd containerd; do
	pid=$(cat "$D/$f.pid" 2>/dev/null) || continue
	if [[ $pid =~ ^[0-9]+$ ]] && { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF "$D/"; then
		say "the $f of an earlier run (pid $pid) still runs: stopping it"
		stop_pid "$f" "$pid"
	fi
done
# and its mounts (a container's root, a network namespace), deepest first
awk -v d="$D/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r m; do
	umount "$m" 2>/dev/null || umount -l "$m"
done
rm -rf --one-file-system "$D" || abort "cannot empty $D"
mkdir -p "$D"
HAD_RUN_CONTAINERD=0
[[ -e /run/containerd ]] && HAD_RUN_CONTAINERD=1

# --- containerd and dockerd -----------------------------------------------------------------
cleanup() {
	local ids id
	if [[ -n $DOCKERD_PID ]]; then
		ids=$(timeout 60 "$ENGINE" ps -aq 2>/dev/null)
		# shellcheck disable=SC2086 # one id a word
		[[ -z $ids ]] || timeout 60 "$ENGINE" rm -f $ids >/dev/null 2>&1
		stop_pid dockerd "$DOCKERD_PID"
	fi
	if [[ -n $CTD_PID ]]; then
		for id in $("${CTR[@]}" containers ls -q 2>/dev/null); do
			"${CTR[@]}" task kill -s SIGKILL "$id" >/dev/null 2>&1
			"${CTR[@]}" task delete -f "$id" >/dev/null 2>&1
			"${CTR[@]}" containers delete "$id" >/dev/null 2>&1
		done
		stop_pid containerd "$CTD_PID"
	fi
	if [[ $HAD_RUN_CONTAINERD -eq 0 ]]; then
		rmdir /run/containerd/s /run/containerd 2>/dev/null
	fi
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat > "$D/containerd.toml" <<EOF
# tests/integration/docker.sh: a containerd for the tests alone
version = 2
# the CRI plugin serves a kubelet (and looks for CNI): no kubelet here
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[plugins."io.containerd.internal.v1.opt"]
  path = "$D/containerd-opt"
EOF
containerd --config "$D/containerd.toml" --address "$CTD_SOCK" --root "$D/containerd-root" \
	--state "$D/containerd-state" --log-level warn >"$D/containerd.log" 2>&1 &
CTD_PID=$!
echo "$CTD_PID" > "$D/containerd.pid"
ctd_up() { exited "$CTD_PID" || timeout 10 ctr -a "$CTD_SOCK" version >/dev/null 2>&1; }
if ! wait_for 60 ctd_up || exited "$CTD_PID"; then
	tail -n 20 "$D/containerd.log"
	abort "containerd did not answer on $CTD_SOCK within 60 s"
fi

echo '{}' > "$D/daemon.json"
dockerd --config-file "$D/daemon.json" --host "unix://$DOCKER_SOCK" --group root \
	--data-root "$D/data" --exec-root "$D/exec" --pidfile "$D/dockerd.pid" \
	--containerd "$CTD_SOCK" --bridge=none --iptables=false --ip-masq=false \
	--userland-proxy=false --init-path "$BIN" >"$D/dockerd.log" 2>&1 &
DOCKERD_PID=$!
export DOCKER_HOST=unix://$DOCKER_SOCK
# the client reads no ~/.docker of the host's (buildah and podman read
# DOCKER_CONFIG too, for registry logins: an empty one)
export DOCKER_CONFIG=$D/client
mkdir -p "$DOCKER_CONFIG" && echo '{"auths":{}}' > "$DOCKER_CONFIG/config.json"
dockerd_up() { exited "$DOCKERD_PID" || timeout 10 "$ENGINE" version >/dev/null 2>&1; }
if ! wait_for 60 dockerd_up || exited "$DOCKERD_PID"; then
	tail -n 20 "$D/dockerd.log"
	abort "dockerd did not answer on $DOCKER_SOCK within 60 s"
fi
say "dockerd $(timeout 60 "$ENGINE" version --format '{{.Server.Version}}') (pid $DOCKERD_PID, client $ITEST_DOCKER $(timeout 60 "$ENGINE" version --format '{{.Client.Version}}')) on containerd $(timeout 60 ctr -a "$CTD_SOCK" version 2>/dev/null | awk '/Version:/ { v = $2 } END { print v }') (pid $CTD_PID)"

# --- docker-engine: its own tests --------------------------------------------------------------
suite_open engine dtest "it starts a dockerd and a containerd" podman buildah minisign timeout ctr base64
IMG=localhost/turninit-dtest
cp "$VECTORS/test-trusted.key" "$VECTORS/test-trusted.pub" "$WORK/" || abort "tests/vectors/test-trusted.{key,pub} missing"
mv "$WORK/test-trusted.key" "$WORK/key.key"
mv "$WORK/test-trusted.pub" "$WORK/key.pub"
MANIFEST_KEY=$WORK/key.key
manifest main "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\"]}}"
# narrow: Landlock lets commands write HOME only (/work is world-writable)
manifest narrow "{$HEAD,\"env\":{$SET},\"landlock\":{\"writable\":[\"/home/agent\"]}}"
# netlo: loopback only (ctr's default network already is)
manifest netlo "{$HEAD,\"env\":{$SET},\"network\":{\"allow\":[]}}"
seal_images "$IMG" docker main narrow netlo
engine_images "$IMG:base" "$IMG:main"
COMMIT=$(timeout 10 "$BIN" --version | sed -n 's/^turninit version [^ ]* - git\.\([^ ]*\)$/\1/p')

if begin docker-load-keeps-manifest-env; then
	# oci/seal.sh puts the signed manifest in the image config Env: after
	# podman save | docker load it must be the same bytes, and turninit must
	# find it there.
	env_mf=$(timeout 60 "$ENGINE" image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$IMG:main" \
		| sed -n 's/^TURNINIT_MANIFEST=//p')
	eq "TURNINIT_MANIFEST, decoded" "$(printf '%s' "$env_mf" | base64 -d 2>&1; echo .)" "$(cat "$WORK/m/main.json"; echo .)"
	prun --tmpfs "$HOME_TMPFS" "$IMG:main" verify
	expect_rc 0
	eq "verify: source" "$(printf '%s' "$OUT" | python3 -c 'import json, sys; print(json.load(sys.stdin)["source"])' 2>&1)" \
		"image config Env (TURNINIT_MANIFEST)"
	end
fi
if begin docker-info-init-version-is-turninit; then
	# dockerd runs its init-path with --version and takes the commit after
	# " - git." (tini's form); `docker info` shows it as the init version.
	run_cmd timeout 60 "$ENGINE" info --format '{{.InitBinary}} {{.InitCommit.ID}}'
	expect_rc 0
	[[ -n $COMMIT ]] || why "$BIN --version does not end in ' - git.COMMIT': $("$BIN" --version)"
	expect_out "$BIN $COMMIT"$'\n'
	run_cmd timeout 60 "$ENGINE" info
	expect_contains "docker info" "$OUT" " init version: $COMMIT"$'\n'
	end
fi
if begin docker-dockerd-logs-no-init-version-warning; then
	# With a --version it cannot parse, dockerd logs "failed to parse PATH
	# version: unknown output format" at every docker info (and shows N/A).
	timeout 60 "$ENGINE" info >/dev/null 2>&1
	run_cmd grep -F "$BIN version" "$D/dockerd.log"
	expect_rc 1
	expect_out ""
	end
fi
if begin docker-init-of-every-init-container; then
	# The init-path is the daemon's: every `docker run --init` container of
	# this dockerd gets turninit as PID 1, also one of an image that holds no
	# manifest, which turninit then refuses.
	prun --init --entrypoint '' --tmpfs "$HOME_TMPFS" "$IMG:base" 'echo COMMAND-RAN'
	expect_refusal "manifest"
	end
fi
if begin docker-build-containerfile; then
	# docs/packaging.md's recipe with docker build: the context of
	# build-image.sh --context, oci/Containerfile, then the seal by
	# oci/Containerfile.seal; a turn runs in the result.
	ctx=$WORK/context
	run_cmd sh "$ROOT/rootfs/build-image.sh" --trusted-key "$WORK/key.pub" --context "$ctx" "$BIN"
	expect_rc 0
	run_cmd timeout 300 "$ENGINE" build -q -t "$IMG:cf-base" -f "$ctx/Containerfile" \
		--build-arg VERSION=0.1.0 --build-arg REVISION="$COMMIT" "$ctx"
	expect_rc 0
	run_cmd timeout 300 "$ENGINE" build -q -f "$ROOT/oci/Containerfile.seal" -t "$IMG:cf-sealed" \
		--build-arg BASE="$IMG:cf-base" --build-arg TURNINIT_MANIFEST="$(base64 -w0 "$WORK/m/main.json")" \
		--build-arg TURNINIT_MANIFEST_SIG="$(base64 -w0 "$WORK/m/main.json.minisig")" "$ROOT/oci"
	expect_rc 0
	run_cmd timeout 60 "$ENGINE" image inspect --format '{{index .Config.Labels "org.opencontainers.image.revision"}}' "$IMG:cf-sealed"
	expect_out "$COMMIT"$'\n'
	prun --tmpfs "$HOME_TMPFS" "$IMG:cf-sealed" 'echo "hello from $(id -u)"'
	expect_rc 0
	expect_out $'hello from 1000\n'
	expect_err ""
	# The same base sealed again with another manifest (issue 46: podman's
	# cache once kept the first): each image holds its own, by
	# docs/packaging.md's check (its lines as written, with docker image
	# inspect, this tag and these files), and verify shows it.
	run_cmd timeout 300 "$ENGINE" build -q -f "$ROOT/oci/Containerfile.seal" -t "$IMG:cf-sealed2" \
		--build-arg BASE="$IMG:cf-base" --build-arg TURNINIT_MANIFEST="$(base64 -w0 "$WORK/m/narrow.json")" \
		--build-arg TURNINIT_MANIFEST_SIG="$(base64 -w0 "$WORK/m/narrow.json.minisig")" "$ROOT/oci"
	expect_rc 0
	check=$(sed -n '/^<!-- seal check/,/^<!-- end of seal check -->/{/^    /s/^    //p}' "$ROOT/docs/packaging.md")
	[[ -n $check ]] || why "docs/packaging.md has no seal check between its markers"
	check=${check//podman image inspect/\"\$ENGINE\" image inspect}
	for pair in cf-sealed:main cf-sealed2:narrow; do
		tag=${pair%:*} m=${pair#*:}
		c=${check//localhost\/agent-turn:1/$IMG:$tag}
		run_cmd env -C "$WORK/m" ENGINE="$ENGINE" timeout 120 bash -e -c "${c//manifest.json/$m.json}"
		CMD="docs/packaging.md's seal check of $IMG:$tag against $m.json"
		expect_rc 0
		expect_out ""
		expect_err ""
		prun --tmpfs "$HOME_TMPFS" "$IMG:$tag" verify
		# main's Landlock takes the default (/tmp among it), narrow's HOME alone
		want="turninit integration test: $m.json True"
		[[ $m == narrow ]] && want="turninit integration test: $m.json False"
		eq "verify in $IMG:$tag: the signature's comment, /tmp writable" \
			"$(printf '%s' "$OUT" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["signature"]["trusted_comment"], "/tmp" in d["manifest"]["landlock"]["writable"])' 2>&1)" \
			"$want"
	done
	timeout 60 "$ENGINE" rmi -f "$IMG:cf-sealed" "$IMG:cf-sealed2" "$IMG:cf-base" >/dev/null 2>&1
	end
fi
# verify of the binary that runs: Docker runs `/sbin/docker-init --
# ENTRYPOINT CMD` always, so `docker run --init IMAGE verify` (the ENTRYPOINT
# kept) gives docker-init `/sbin/turninit verify`, which it answers itself:
# the host's binary (its commit), privileged. Before, verify could not be
# reached (`--entrypoint '' IMAGE verify` ran a command named verify: 127).
if begin docker-init-verify; then
	prun --init --tmpfs "$HOME_TMPFS" "$IMG:main" verify
	expect_rc 0
	expect_err ""
	eq "verify" "$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["commit"], d["start"]["mode"], d["platform"]["weakened"])' 2>&1)" \
		"$COMMIT privileged []"
	end
fi
if begin docker-init-entrypoint-not-cleared; then
	# Without --entrypoint '' docker-init runs the image's ENTRYPOINT, a second
	# turninit, as the command (with the command's environment, which holds no
	# TURNINIT_MANIFEST): the outer one refuses it, naming the flag.
	prun --init --tmpfs "$HOME_TMPFS" "$IMG:main" 'echo COMMAND-RAN'
	expect_refusal "turninit: the command is turninit itself: a runtime's init (docker run --init) runs the image's ENTRYPOINT as its command; clear it (--entrypoint '')"
	end
fi
results

# --- docker-containerd: ctr ---------------------------------------------------------------------
PASS=0 FAIL=0 SKIPPED=0 TAP_N=0 SKIP_WHY=()
SUITE=docker-containerd
mkdir -p "$RUNC_ROOT" "$FIFO_DIR"
# ctr run: runc's state and the fifos of the task's stdio in this directory,
# not below /run/containerd
CTR_RUN=("${CTR[@]}" run --rm --runc-root "$RUNC_ROOT" --fifo-dir "$FIFO_DIR")
CTR_HOME=type=tmpfs,src=tmpfs,dst=/home/agent,options=rw:nosuid:nodev:mode=0700:uid=1000:gid=1000
IMPORTED=0
if begin ctr-image-import; then
	timeout 120 podman save -m -o "$WORK/images.tar" "$IMG:main" "$IMG:narrow" "$IMG:netlo" >/dev/null 2>&1 \
		|| why "podman save -m -o images.tar $IMG:main $IMG:narrow $IMG:netlo failed"
	run_cmd "${CTR[@]}" image import "$WORK/images.tar"
	expect_rc 0
	refs=$("${CTR[@]}" image ls -q 2>&1)
	for ref in "$IMG:main" "$IMG:narrow" "$IMG:netlo"; do
		[[ $'\n'$refs$'\n' == *$'\n'"$ref"$'\n'* ]] || why "ctr image ls -q does not list $ref: $refs"
	done
	[[ ${#T_WHY[@]} -eq 0 ]] && IMPORTED=1
	end
fi
# ctr_test NAME: begin NAME when selected and the image was imported
ctr_test() {
	begin "$1" || return 1
	[[ $IMPORTED -eq 1 ]] && return 0
	why "the image was not imported (ctr-image-import)"
	end
	return 1
}
if ctr_test ctr-run-one-turn; then
	# ctr's args replace the image's ENTRYPOINT and CMD: /sbin/turninit is
	# named. ctr gives the container a network namespace of its own (no
	# interface but lo) and no seccomp profile: the filter is turninit's.
	run_cmd "${CTR_RUN[@]}" --env TZ=UTC --env GH_TOKEN=x --env LD_PRELOAD=/x.so --mount "$CTR_HOME" \
		"$IMG:main" "turninit-ctr-$$-turn" /sbin/turninit -- \
		'env | sort; grep -E "^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):" /proc/self/status
		 stat -f -c %T "$HOME"; stat -c "%a %u %g" "$HOME"; id -u; id -G
		 sed 1,2d /proc/net/dev | cut -d: -f1 | tr -d " "; exit 3'
	expect_rc 3
	expect_out 'HOME=/home/agent
LANG=C.UTF-8
PATH=/usr/local/bin:/usr/bin:/bin
PWD=/work
SHLVL=1
TERM=dumb
TZ=UTC
_=/bin/env
CapInh:	0000000000000000
CapPrm:	0000000000000000
CapEff:	0000000000000000
CapBnd:	0000000000000000
CapAmb:	0000000000000000
NoNewPrivs:	1
Seccomp:	2
tmpfs
700 1000 1000
1000
1000
lo
'
	expect_err ""
	end
fi
if ctr_test ctr-run-landlock-writes-home-only; then
	run_cmd "${CTR_RUN[@]}" --mount "$CTR_HOME" "$IMG:narrow" "turninit-ctr-$$-narrow" /sbin/turninit -- \
		'for p in "$PWD/x" /tmp/x "$HOME/x"; do touch "$p" 2>/dev/null && echo "${p%/x} ok" || echo "${p%/x} denied"; done'
	expect_rc 0
	# the manifest's workdir, /tmp and HOME: only HOME is in narrow's writable set
	wd=$(sed -n 's/.*"workdir":"\([^"]*\)".*/\1/p' <<<"$HEAD")
	expect_out "$wd denied"$'\n/tmp denied\n/home/agent ok\n'
	# said once at start: the workdir is outside what Landlock lets them write
	expect_err "turninit: workdir $wd is outside landlock.writable: Landlock keeps commands from writing there (add it to landlock.writable)"$'\n'
	end
fi
if ctr_test ctr-run-without-home-tmpfs-refused; then
	run_cmd "${CTR_RUN[@]}" "$IMG:main" "turninit-ctr-$$-nohome" /sbin/turninit -- 'echo COMMAND-RAN'
	expect_refusal "HOME /home/agent is not a private tmpfs mount"
	end
fi
# ctr's own network namespace has lo alone: "allow": [] keeps it, with no
# capability added, and verify says so.
if ctr_test ctr-run-network-loopback-only; then
	run_cmd "${CTR_RUN[@]}" --mount "$CTR_HOME" "$IMG:netlo" "turninit-ctr-$$-netlo" /sbin/turninit -- \
		'sed 1,2d /proc/net/dev | cut -d: -f1 | tr -d " "'
	expect_rc 0
	expect_out $'lo\n'
	run_cmd "${CTR_RUN[@]}" --mount "$CTR_HOME" "$IMG:netlo" "turninit-ctr-$$-netlo-verify" /sbin/turninit verify
	expect_rc 0
	expect_contains "verify" "$OUT" "loopback only: the container's network namespace has no interface but lo"
	end
fi
if ctr_test ctr-run-sigterm-143; then
	run_cmd "${CTR_RUN[@]}" --mount "$CTR_HOME" "$IMG:main" "turninit-ctr-$$-term" /sbin/turninit -- 'kill -TERM $$'
	expect_rc 143
	expect_out ""
	expect_err ""
	end
fi
left=$("${CTR[@]}" containers ls -q 2>/dev/null | wc -l)
if [[ $left -eq 0 ]]; then
	tap_ok "no ctr container left"
else
	tap_not_ok "no ctr container left # $left left"
fi
results

# --- the suites under Docker ------------------------------------------------------------------------
passed=0 failed=0 skipped=0
for name in engine containerd; do
	read -r p f k _ < "$RESULTS/docker-$name"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + ${k:-0}))
done
for entry in "${ALL[@]}"; do
	file=${entry%%:*} name=${entry#*:}
	if [[ -n ${DOCKER_SUITES:-} && " $DOCKER_SUITES " != *" $file "* ]]; then
		continue
	fi
	say "tests/integration/$file.sh under this dockerd"
	timeout "$SUITE_TIMEOUT" bash "$HERE/$file.sh"
	rc=$?
	if [[ -r $RESULTS/docker-$name ]]; then
		read -r p f k _ < "$RESULTS/docker-$name"
	else
		say "$file.sh wrote no result (status $rc)"
		p=0 f=1 k=0
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + ${k:-0}))
done
echo "docker: $passed passed, $failed failed$( ((skipped == 0)) || echo ", $skipped skipped")"
[[ $failed -eq 0 ]]
