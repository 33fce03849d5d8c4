#!/bin/bash
# rootless.sh - the podman suites again under rootless podman, as an
# unprivileged user (`make rootless`, part of `make check`; issue 9). Root.
#
# Sets up, idempotently:
#   - the user ITEST_ROOTLESS_USER (default turninit-rootless), made by useradd
#     with a home, no login shell and subordinate uid and gid ranges (added
#     with usermod when useradd gave none); newuidmap and newgidmap come from
#     the uidmap package (`make setup`);
#   - its XDG_RUNTIME_DIR, /run/user/UID (no login session makes one here);
#   - a copy of what the suites need (sources, tests, docs, build/turninit) in
#     the user's home: the checkout may sit below a folder only root enters;
#   - an empty tmpfs of host root's at /run/turninit-rootless-tmpfs, for
#     keepid.sh (ITEST_HOST_TMPFS), unmounted at exit.
# Podman keeps this user's images and containers in its own storage under its
# home, apart from root's (the same image tags do not collide). The user, its
# storage and the copy stay for the next run; to remove them:
#   runuser -u turninit-rootless -- podman system reset -f   (with XDG_RUNTIME_DIR set)
#   userdel -r turninit-rootless; rm -rf /run/user/UID
#
# Then runs, as that user with ITEST_ROOTLESS=1 (tests/integration/lib.sh),
# each under a hard timeout: run.sh (one-shot), sandbox.sh (escape probes),
# network.sh (the network key; its HTTPS tests skipped), serve.sh (serve,
# listen, call, sidecar) and keepid.sh (--userns=keep-id). Their counts go to
# build/test-results/rootless-integration, -sandbox, -network, -serve and
# -keepid of this checkout; the last line adds them up. Exits 1 when
# anything failed or did not run.
#
# Environment: ITEST_ROOTLESS_USER=NAME, ITEST_ONLY=REGEX (passed on),
# ITEST_BINARY=PATH (copied in as build/turninit), ROOTLESS_SUITES="run serve"
# (a subset, by file name).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=${ITEST_BINARY:-$ROOT/build/turninit}
RUSER=${ITEST_ROOTLESS_USER:-turninit-rootless}
RESULTS=$ROOT/build/test-results
# file name of the suite : its name in build/test-results
ALL=(run:integration sandbox:sandbox network:network serve:serve keepid:keepid)
SUITE_TIMEOUT=3600

say() { echo "# rootless: $*"; }
die() {
	echo "not ok 1 - rootless setup # $*"
	echo "1..1"
	echo "0 passed, 1 failed"
	exit 1
}

[[ $(id -u) -eq 0 ]] || die "run as root (it makes a user and runs the suites as it)"
[[ -x $BIN ]] || die "$BIN missing: run make first"
for c in useradd usermod runuser newuidmap newgidmap podman buildah tar timeout; do
	command -v "$c" >/dev/null || die "$c not found: run make setup (newuidmap and newgidmap: the uidmap package)"
done

# Rootless podman needs user namespaces an unprivileged user may make
# (CONFIG_USER_NS, and no sysctl or LSM closing them): asked bare first
# (tests/kernel/kfeatures.c). Without them every rootless suite is one skip,
# with the kernel's reason.
[[ -x $ROOT/build/helpers/kfeatures ]] || die "build/helpers/kfeatures missing: run make helpers"
userns=$("$ROOT/build/helpers/kfeatures" unpriv_userns)
if [[ $userns == "unpriv_userns no: "* ]]; then
	mkdir -p "$RESULTS"
	n=0
	for entry in "${ALL[@]}"; do
		n=$((n + 1))
		echo "ok $n - rootless-${entry#*:} # SKIP ${userns#*: }"
		echo "0 0 1" > "$RESULTS/rootless-${entry#*:}"
		echo "${userns#*: }" > "$RESULTS/rootless-${entry#*:}.skips"
	done
	echo "1..$n"
	echo "rootless: 0 passed, 0 failed, $n skipped"
	exit 0
fi

# --- the user ---------------------------------------------------------------------------
if ! id -u "$RUSER" >/dev/null 2>&1; then
	useradd --create-home --shell /usr/sbin/nologin --comment "turninit rootless tests" "$RUSER" \
		|| die "useradd $RUSER"
	say "made user $RUSER"
fi
RUID=$(id -u "$RUSER") RGID=$(id -g "$RUSER")
RHOME=$(getent passwd "$RUSER" | cut -d: -f6)
[[ $RUID -ne 0 && -d $RHOME ]] || die "$RUSER: uid $RUID, home $RHOME: want a non-root user with a home"
# range_of FILE: the user's subordinate range in FILE ("START COUNT"), if any.
range_of() {
	awk -F: -v u="$RUSER" -v id="$RUID" '($1 == u || $1 == id) && $3 >= 65536 { print $2, $3; exit }' "$1" 2>/dev/null
}
# free_start: the first id above every range in /etc/subuid and /etc/subgid.
free_start() {
	cat /etc/subuid /etc/subgid 2>/dev/null |
		awk -F: 'BEGIN { s = 100000 } $2 + $3 > s { s = $2 + $3 } END { print s }'
}
if [[ -z $(range_of /etc/subuid) || -z $(range_of /etc/subgid) ]]; then
	s=$(free_start)
	# usermod adds ranges only to files that exist
	touch /etc/subuid /etc/subgid || die "touch /etc/subuid /etc/subgid"
	opts=()
	[[ -n $(range_of /etc/subuid) ]] || opts+=(--add-subuids "$s-$((s + 65535))")
	[[ -n $(range_of /etc/subgid) ]] || opts+=(--add-subgids "$s-$((s + 65535))")
	usermod "${opts[@]}" "$RUSER" || die "usermod ${opts[*]} $RUSER"
	say "gave $RUSER subordinate ids from $s"
fi
say "user $RUSER uid $RUID gid $RGID, subuid $(range_of /etc/subuid), subgid $(range_of /etc/subgid)"

# XDG_RUNTIME_DIR: podman's runtime files and the rootless pause process's state.
RUNDIR=/run/user/$RUID
install -d -m 0755 /run/user || die "mkdir /run/user"
install -d -m 0700 -o "$RUID" -g "$RGID" "$RUNDIR" || die "mkdir $RUNDIR"
[[ $(stat -c '%u %a' "$RUNDIR") == "$RUID 700" ]] || die "$RUNDIR: not the user's, mode 0700"

# --- the copy the user runs --------------------------------------------------------------
COPY=$RHOME/turninit
rm -rf "$COPY"
install -d -m 0755 -o "$RUID" -g "$RGID" "$COPY" || die "mkdir $COPY"
(cd "$ROOT" && tar -cf - Makefile README.md docs oci policy rootfs tests) | tar -C "$COPY" -xf - \
	|| die "copying the checkout to $COPY"
install -D -m 0755 "$BIN" "$COPY/build/turninit" || die "copying $BIN"
cp -a "$ROOT/build/helpers" "$COPY/build/helpers" || die "copying build/helpers (make helpers)"
chown -R "$RUID:$RGID" "$COPY" || die "chown $COPY"
say "copy of the checkout in $COPY"

# An empty tmpfs of host root's (mode 1777, as a kubelet's memory emptyDir):
# rootful turninit takes such a HOME; under rootless podman its owner is not
# mapped, and keepid.sh asserts that turninit refuses it. Unmounted at exit.
HOST_TMPFS=/run/turninit-rootless-tmpfs
mkdir -p "$HOST_TMPFS" || die "mkdir $HOST_TMPFS"
if ! mountpoint -q "$HOST_TMPFS"; then
	mount -t tmpfs -o mode=1777,size=1m,nosuid,nodev turninit-rootless "$HOST_TMPFS" \
		|| die "mount a tmpfs on $HOST_TMPFS"
fi
trap 'umount "$HOST_TMPFS" 2>/dev/null; rmdir "$HOST_TMPFS" 2>/dev/null' EXIT
trap 'exit 130' INT TERM

# as_user CMD...: CMD as the user, in the copy, with a clean environment.
as_user() {
	(cd "$COPY" && runuser -u "$RUSER" -- env -i HOME="$RHOME" USER="$RUSER" LOGNAME="$RUSER" \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
		XDG_RUNTIME_DIR="$RUNDIR" ITEST_ROOTLESS=1 ITEST_HOST_TMPFS="$HOST_TMPFS" \
		${ITEST_ONLY:+ITEST_ONLY="$ITEST_ONLY"} "$@")
}
# Rootless podman's mount namespace is a copy made when its pause process
# started, and "/" is not a shared mount here: a host mount made later is not
# seen in it. podman system migrate stops the pause process; the next podman
# call makes a new namespace, with the tmpfs above in it.
as_user timeout 120 podman system migrate >/dev/null 2>&1 || die "podman system migrate as $RUSER"
info=$(as_user timeout 120 podman info --format '{{.Host.Security.Rootless}} {{.Store.GraphDriverName}} {{.Host.CgroupsVersion}} {{.Host.CgroupManager}} {{.Host.OCIRuntime.Name}} {{.Store.GraphRoot}}' 2>&1 | tail -n 1)
[[ $info == "true "* ]] || die "rootless podman as $RUSER: $info"
say "podman as $RUSER: rootless, storage ${info#true }"

# --- the suites -----------------------------------------------------------------------------
mkdir -p "$RESULTS"
passed=0 failed=0
for entry in "${ALL[@]}"; do
	file=${entry%%:*} name=${entry#*:}
	if [[ -n ${ROOTLESS_SUITES:-} && " $ROOTLESS_SUITES " != *" $file "* ]]; then
		continue
	fi
	rm -f "$COPY/build/test-results/$name" "$COPY/build/test-results/$name.skips" \
		"$RESULTS/rootless-$name" "$RESULTS/rootless-$name.skips"
	say "tests/integration/$file.sh as $RUSER (uid $RUID)"
	as_user timeout "$SUITE_TIMEOUT" bash "tests/integration/$file.sh"
	rc=$?
	if [[ -r $COPY/build/test-results/$name ]]; then
		cp "$COPY/build/test-results/$name" "$RESULTS/rootless-$name"
		[[ ! -r $COPY/build/test-results/$name.skips ]] \
			|| cp "$COPY/build/test-results/$name.skips" "$RESULTS/rootless-$name.skips"
		read -r p f _ < "$RESULTS/rootless-$name"
	else
		say "$file.sh wrote no result (status $rc)"
		p=0 f=1
	fi
	passed=$((passed + p)) failed=$((failed + f))
done
echo "rootless: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
