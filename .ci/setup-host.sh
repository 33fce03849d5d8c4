#!/bin/sh
# setup-host.sh - the one idempotent host setup step (`make setup`, run by `make demo`
# and `make check`): installs the Debian packages the project needs, then applies the
# three podman host fixes (sections 2, 3 and 3b below) only when this machine needs
# them. Prints one line per thing it did or found already done; exits non-zero with a
# "setup: FAILED: ..." line on failure. A second run installs nothing and needs no network.
# It also says whether node >= 20.6 and npm are there (section 4), which only the pi
# and mcp suites need; it does not install them. docker.io and containerd are
# installed for the docker suite, and their system services are not started (1b).
#
# Environment, for testing this script only: SETUP_CONTAINERS_CONF (default
# /etc/containers/containers.conf), the file the ulimit fix edits; SETUP_CGROUP_ROOT
# (default /sys/fs/cgroup), where the cgroup fix looks and mounts; SETUP_POLICY_RC
# (default /usr/sbin/policy-rc.d), the file of section 1b; SETUP_TUN (default
# /dev/net/tun), the device of section 3b; SETUP_BINFMT (default
# /proc/sys/fs/binfmt_misc), where section 5 looks and mounts.
set -eu

say() { echo "setup: $*"; }
die() { echo "setup: FAILED: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (it installs packages and mounts cgroups)"

# --- 1. packages -----------------------------------------------------------------
# build: toolchain, musl, autotools and gperf for the musl builds of the libraries,
#   dpkg-dev for `apt-get source`, the -dev packages and cmocka for the host build.
# run/test: podman and its runtime pieces (no recommends, so each is named), a static
#   bash and busybox for the image root, minisign to sign manifests, python3 to parse
#   `turninit verify` JSON in the integration suite (python3-jsonschema: the schema
#   checks of the serve and audit suites), valgrind for the memcheck suite; uidmap
#   (newuidmap, newgidmap) for rootless podman, which tests/integration/rootless.sh
#   runs as a user it makes; strace, whose syscall delay lets the hostile suite
#   swap the listen socket for a symlink between bind(2) and what follows it;
#   go-md2man, which renders man/turninit.1 from docs/turninit.1.md (the
#   packaging suite checks the committed page against it), and man-db to read it;
#   runsc (gVisor), the OCI runtime of the gvisor suite (podman --runtime);
#   docker.io (dockerd and its client, 20.10; it pulls in tini), containerd (and
#   its ctr) and runc, which tests/integration/docker.sh starts as its own daemons;
#   openssl and git, with which the network suite makes its test CA, certificate
#   and repository (tests/network/fixtures.py); slirp4netns, with which rootless
#   podman 4.3 joins a network the user made (the network suite, rootless); jq, with
#   which the audit suite runs docs/audit.md's b2sum-and-jq check of the chain;
#   clang-format (14), with which make layout checks the C files' layout.
# on x86_64, aarch64: its cross compiler and kernel headers for `make
#   ARCH=aarch64`, cmake for the cmocka of its unit tests, qemu-user-static and
#   binfmt-support to run what it builds (section 5). On aarch64 nothing more:
#   make check runs every suite on the arm64 kernel there, and x86_64 is
#   checked on x86_64 (make check-cross runs on x86_64 only).
HOST_ARCH=$(uname -m)
case $HOST_ARCH in
x86_64) CROSS_ARCH=aarch64 CROSS_DEB=arm64 ;;
*) CROSS_ARCH='' CROSS_DEB='' ;;
esac
CROSS_PACKAGES=
[ -z "$CROSS_ARCH" ] || CROSS_PACKAGES="gcc-$(echo "$CROSS_ARCH" | tr _ -)-linux-gnu
	linux-libc-dev-$CROSS_DEB-cross cmake qemu-user-static binfmt-support"
PACKAGES="build-essential musl-tools dpkg-dev autoconf automake libtool gperf
	linux-libc-dev xz-utils pkg-config file libcmocka-dev libseccomp-dev libcap-dev
	libsodium-dev libjansson-dev libmbedtls-dev podman crun runsc catatonit uidmap conmon buildah
	fuse-overlayfs golang-github-containers-common containernetworking-plugins
	bash-static busybox-static minisign util-linux procps coreutils python3
	debootstrap debian-archive-keyring clang libclang-rt-14-dev valgrind
	python3-jsonschema strace go-md2man man-db docker.io containerd runc
	openssl git slirp4netns jq clang-format $CROSS_PACKAGES"

# --- 1b. docker.io and containerd: installed, never started ------------------------
# Their maintainer scripts start the system services: docker.io's postinst runs
# `invoke-rc.d docker start` (its /etc/init.d/docker, where systemd does not
# run; a failure there fails the install) and, under systemd, deb-systemd-invoke
# starts docker.service, docker.socket and containerd.service. Both ask
# policy-rc.d first, and exit status 101 forbids. The docker suite starts a
# dockerd and a containerd of its own and wants no system one (nor a
# root-equivalent /run/docker.sock): while apt-get installs the packages, a
# policy-rc.d that forbids starting docker and containerd (and allows the
# rest) is put in place, and removed after. A host's own policy-rc.d (a
# container image's forbids everything) is kept and decides. Under systemd the
# units are still enabled, as Debian ships them, and start at the next boot:
# `systemctl disable docker.service docker.socket containerd.service` if they
# should not.
POLICY_RC=${SETUP_POLICY_RC:-/usr/sbin/policy-rc.d}
POLICY_OURS=0
services_guard() { # services_guard "PACKAGE...": the policy, when docker.io or containerd is among them
	case " $1 " in
	*" docker.io "*|*" containerd "*) ;;
	*) return 0 ;;
	esac
	if [ -e "$POLICY_RC" ]; then
		say "services: $POLICY_RC is the host's: kept (it decides whether docker and containerd start)"
		return 0
	fi
	cat > "$POLICY_RC" <<'EOF' || die "services: cannot write $POLICY_RC"
#!/bin/sh
# Written by turninit's .ci/setup-host.sh for one apt-get install, and removed
# after it: docker and containerd are not started (101), the rest may be (0).
for a; do
	case $a in
	docker|docker.service|docker.socket|containerd|containerd.service) exit 101 ;;
	esac
done
exit 0
EOF
	chmod 0755 "$POLICY_RC"
	POLICY_OURS=1
	trap 'rm -f "$POLICY_RC"' EXIT
}
services_unguard() {
	[ "$POLICY_OURS" -eq 1 ] || return 0
	rm -f "$POLICY_RC"
	trap - EXIT
	POLICY_OURS=0
	say "services: docker and containerd installed, not started ($POLICY_RC for the install only)"
}

missing=
for p in $PACKAGES; do
	s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$s" = installed ] || missing="$missing $p"
done
if [ -z "$missing" ]; then
	say "packages: all present"
else
	say "packages: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || die "apt-get update"
	services_guard "$missing"
	# shellcheck disable=SC2086 # word splitting of the package list is intended
	apt-get install -y -qq --no-install-recommends $missing >/dev/null \
		|| die "apt-get install$missing"
	services_unguard
	say "packages: installed$missing"
fi
if [ -S /run/docker.sock ] || [ -S /run/containerd/containerd.sock ]; then
	say "services: a system dockerd or containerd listens (/run/docker.sock, /run/containerd/containerd.sock); the docker suite uses neither and starts its own"
fi

# --- 2. cgroup: hybrid layout ------------------------------------------------------
# crun refuses cgroup hybrid mode while the cgroup2 mount still owns a controller
# ("cgroups in hybrid mode not supported, drop all controllers from cgroupv2"); on this
# machine kind that is hugetlb. Mounting a v1 hierarchy of it moves it out of cgroup2.
# The mounts do not survive a reboot, which is why this runs before every check.
CG=${SETUP_CGROUP_ROOT:-/sys/fs/cgroup}
U=$CG/unified
if [ ! -r "$U/cgroup.controllers" ] || [ "$(stat -f -c %T "$CG")" = cgroup2fs ]; then
	say "cgroup: not a hybrid layout, nothing to do"
else
	left=$(cat "$U/cgroup.controllers")
	if [ -z "$left" ]; then
		say "cgroup: no controllers left in cgroup2, nothing to do"
	fi
	for c in $left; do
		d=$CG/$c
		mkdir -p "$d" || die "cgroup: mkdir $d"
		if mountpoint -q "$d"; then
			say "cgroup: $d already mounted"
		else
			mount -t cgroup -o "$c" cgroup "$d" || die "cgroup: mount -t cgroup -o $c cgroup $d"
			say "cgroup: bound $c to $d"
		fi
	done
	left=$(cat "$U/cgroup.controllers")
	[ -z "$left" ] || die "cgroup: controllers still in cgroup2 after binding: $left"
fi

# --- 3. ulimits: root without CAP_SYS_RESOURCE -------------------------------------
# Rootful podman asks for RLIMIT_NOFILE 1048576 (and NPROC 1048576 once any --ulimit is
# given); without CAP_SYS_RESOURCE, or above the hard limit, crun's setrlimit fails with
# EPERM. default_ulimits in containers.conf makes podman ask for what this process has.
CONF=${SETUP_CONTAINERS_CONF:-/etc/containers/containers.conf}
PODMAN_NOFILE=1048576
capeff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
has_sys_resource=$(( (0x$capeff >> 24) & 1 ))       # CAP_SYS_RESOURCE is bit 24
hard() { # hard limit of /proc/self/limits row $1, "unlimited" as a large number
	awk -v row="$1" 'index($0, row) == 1 { v = $(NF - 1); if (v == "unlimited") v = 9223372036854775807; print v }' /proc/self/limits
}
hn=$(hard "Max open files")
hu=$(hard "Max processes")
[ -n "$hn" ] && [ -n "$hu" ] || die "ulimits: cannot read /proc/self/limits"
nproc=32768                                            # podman caps its own NPROC there
[ "$hu" -ge "$nproc" ] || nproc=$hu

if [ "$has_sys_resource" -eq 1 ] && [ "$hn" -ge "$PODMAN_NOFILE" ]; then
	say "ulimits: CAP_SYS_RESOURCE held and nofile hard limit $hn, nothing to do"
else
	why="nofile hard limit $hn"
	[ "$has_sys_resource" -eq 1 ] || why="no CAP_SYS_RESOURCE, $why"
	want="default_ulimits = [\"nofile=$hn:$hn\", \"nproc=$nproc:$nproc\"]"
	# An existing default_ulimits is kept when it names nofile and nproc and asks for
	# no more than this process may set; otherwise only that key is replaced.
	current=$( [ -r "$CONF" ] && awk '
		/^[ \t]*\[/ { sect = $0; gsub(/[ \t]/, "", sect) }
		sect == "[containers]" && /^[ \t]*default_ulimits[ \t]*=/ { grab = 1 }
		grab { v = v $0; if (index($0, "]")) { print v; exit } }' "$CONF" || true)
	fits() { # fits NAME HARD: the current value has NAME=S:H (or NAME=H), H <= HARD
		echo "$current" | awk -v name="$1" -v max="$2" '{
			n = split($0, parts, "\"")
			for (i = 2; i <= n; i += 2) {
				if (index(parts[i], name "=") != 1) continue
				v = substr(parts[i], length(name) + 2); k = split(v, sh, ":")
				if (sh[k] ~ /^[0-9]+$/ && sh[1] ~ /^[0-9]+$/ && sh[1] + 0 <= sh[k] + 0 && sh[k] + 0 <= max + 0) ok = 1
			}
		} END { exit !ok }'
	}
	if [ -n "$current" ] && fits nofile "$hn" && fits nproc "$hu"; then
		say "ulimits: $CONF already sets $(echo "$current" | tr -s ' \t' ' ') ($why)"
	elif [ ! -e "$CONF" ]; then
		mkdir -p "$(dirname "$CONF")" || die "ulimits: mkdir $(dirname "$CONF")"
		printf '# written by turninit .ci/setup-host.sh: %s\n[containers]\n%s\n' "$why" "$want" \
			> "$CONF" || die "ulimits: cannot write $CONF"
		say "ulimits: wrote $CONF: $want ($why)"
	else
		tmp=$CONF.turninit-tmp
		awk -v want="$want" '
			/^[ \t]*\[/ {
				if (insect && !done) { print want; done = 1 }
				sect = $0; gsub(/[ \t]/, "", sect); insect = (sect == "[containers]")
				print; next
			}
			skip { if (index($0, "]")) skip = 0; next }
			insect && /^[ \t]*default_ulimits[ \t]*=/ {
				if (!done) { print want; done = 1 }
				if (!index($0, "]")) skip = 1
				next
			}
			{ print }
			END {
				if (insect && !done) { print want; done = 1 }
				if (!done) { print "[containers]"; print want }
			}' "$CONF" > "$tmp" || die "ulimits: cannot write $tmp"
		cat "$tmp" > "$CONF" && rm -f "$tmp" || die "ulimits: cannot update $CONF"
		say "ulimits: set $want in $CONF, other settings kept ($why)"
	fi
fi
# --- 3b. /dev/net/tun, for rootless podman's networks --------------------------------
# Rootless podman joins a network its user made through slirp4netns, which opens
# /dev/net/tun. udev makes it 0666 (what it opens needs CAP_NET_ADMIN anyway, in
# the user's own namespace); a /dev made by a container runtime can leave it 0600,
# root's alone, and then the rootless network suite cannot start its server. It
# is then made 0666, as udev would.
TUN=${SETUP_TUN:-/dev/net/tun}
if [ ! -c "$TUN" ]; then
	say "tun: no $TUN: rootless podman cannot join a network here (the rootless network suite fails)"
elif [ "$(stat -c %a "$TUN")" = 666 ]; then
	say "tun: $TUN is 0666 already, nothing to do"
else
	was=$(stat -c %a "$TUN")
	chmod 0666 "$TUN" || die "tun: chmod 0666 $TUN"
	say "tun: $TUN made 0666 (was 0$was), as udev makes it: rootless podman's slirp4netns opens it"
fi

# --- 4. node, for the pi and mcp suites only ---------------------------------------
# Checked, never installed: Debian 12's nodejs is 18 and pi needs 20.6 (its engines),
# so node comes from elsewhere. Without it everything but `make pi` and `make mcp`
# works; `make check` then counts each of those suites as one failure with the same
# reason.
if ! command -v node >/dev/null 2>&1; then
	say "node: not found; the pi and mcp suites (make pi, make mcp, part of make check) need node >= 20.6 and npm (https://nodejs.org; Debian 12's nodejs is 18)"
elif ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 6) ? 0 : 1)' 2>/dev/null; then
	say "node: $(node --version 2>/dev/null) is too old; the pi and mcp suites (make pi, make mcp, part of make check) need node >= 20.6 (https://nodejs.org)"
elif ! command -v npm >/dev/null 2>&1; then
	say "node: $(node --version) found but npm not; the pi and mcp suites (make pi, make mcp, part of make check) need npm"
else
	say "node: $(node --version) and npm $(npm --version 2>/dev/null) found (the pi and mcp suites need node >= 20.6)"
fi

# --- 5. binfmt_misc: the other architecture's binaries under qemu-user --------------
# make check runs the cross build's unit tests and fuzz replays under
# qemu-ARCH-static by name, which needs no binfmt entry; the arm64 suite runs
# aarch64 binaries in containers, where the kernel must hand them to qemu: the
# entry qemu-user-static gives binfmt-support (qemu-aarch64, with the F flag:
# the interpreter is opened when registered, so it runs in a container's root,
# which has no qemu). binfmt_misc is mounted where it is not; a mount or an
# entry refused (a container without the privilege) is said, and not fatal:
# only the suites that run aarch64 code in containers need it, and they skip.
BINFMT=${SETUP_BINFMT:-/proc/sys/fs/binfmt_misc}
if [ -n "$CROSS_ARCH" ]; then
	entry=$BINFMT/qemu-$CROSS_ARCH
	if [ ! -e "$BINFMT/status" ]; then
		if mount -t binfmt_misc binfmt_misc "$BINFMT" 2>/dev/null; then
			say "binfmt: mounted binfmt_misc on $BINFMT"
		else
			say "binfmt: $BINFMT is not mounted and cannot be (mount -t binfmt_misc refused): $CROSS_ARCH binaries run only under qemu-$CROSS_ARCH-static by name"
		fi
	fi
	if [ ! -e "$BINFMT/status" ]; then
		: # said above
	elif [ -e "$entry" ] && [ "$(head -n 1 "$entry")" = enabled ]; then
		say "binfmt: qemu-$CROSS_ARCH enabled already (flags: $(sed -n 's/^flags: //p' "$entry"))"
	elif [ -e "$entry" ] && echo 1 2>/dev/null > "$entry"; then
		say "binfmt: qemu-$CROSS_ARCH was registered but disabled: enabled (flags: $(sed -n 's/^flags: //p' "$entry"))"
	elif update-binfmts --enable "qemu-$CROSS_ARCH" >/dev/null 2>&1 && [ -e "$entry" ]; then
		say "binfmt: qemu-$CROSS_ARCH registered (update-binfmts --enable; flags: $(sed -n 's/^flags: //p' "$entry"))"
	else
		say "binfmt: qemu-$CROSS_ARCH could not be registered or enabled (update-binfmts --enable, $entry): $CROSS_ARCH binaries run only under qemu-$CROSS_ARCH-static by name"
	fi
fi
say "done"
