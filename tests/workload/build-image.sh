#!/bin/sh
# build-image.sh - the workload test's image: a Debian root made by debootstrap
# (--variant=minbase) with the tools of a real agent session, and turninit as its
# ENTRYPOINT (issue 3, "Deliver" 7); its curl and pip are the clients of the
# network suite's HTTPS tests, whose server runs in the base image.
# Registry-free; root; needs debootstrap, podman and buildah.
#
# usage: build-image.sh [--tag TAG] [--trusted-key FILE.pub] [BINARY]
#   --tag TAG           image name (default localhost/turninit-workload:latest)
#   --trusted-key FILE  installed as /etc/turninit/trusted.pub
#                       (default tests/vectors/test-trusted.pub)
#   BINARY              the turninit to install (default build/turninit)
# Environment: WORKLOAD_MIRROR=URI overrides the Debian mirror, which is otherwise
# the first one apt's configuration names for the suite (/etc/apt/sources.list.d/
# *.sources, then /etc/apt/sources.list).
#
# Two layers, each made only when its inputs change:
#   1. base: debootstrap of SUITE with PACKAGES, minus apt's caches, /dev and the
#      host's resolv.conf and hostname. Several minutes, so it is cached twice,
#      both keyed by a hash of the package list and of this script: as a tarball,
#      build/workload/debian-KEY.tar, and as the image localhost/turninit-workload-
#      base:latest, labelled org.turninit.workload.base=KEY.
#   2. turninit: BINARY at /sbin/turninit, FILE at /etc/turninit/trusted.pub, an
#      empty /home/agent (0755) and /work (1777); ENTRYPOINT ["/sbin/turninit"], no
#      CMD. A few MB; labelled org.turninit.workload.layer, a hash of the base key,
#      BINARY and FILE, so it is redone only when one of them changes.
# The root otherwise stays as Debian makes it: it has /etc/passwd and friends, which
# turninit never reads (uid and gid are numbers from the manifest).
# Prints how long each step took.
set -eu

SUITE=bookworm
PACKAGES="git python3 python3-pip curl gcc libc6-dev make coreutils findutils tar gzip xz-utils procps diffutils"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
BASE_TAG=localhost/turninit-workload-base:latest

SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
ROOT_DIR=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=$ROOT_DIR/build/workload

die() { echo "workload-image: $*" >&2; exit 1; }
usage() { sed -n '7,12s/^# \{0,1\}//p' "$SELF" >&2; exit 2; }
short() { printf '%.12s' "$1"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
T_STEP=$(now_ms)
T_ALL=$T_STEP
# step TEXT: how long the step that just ended took.
step() {
	t=$(now_ms)
	printf 'workload-image: %s (%d.%01d s)\n' "$1" $(((t - T_STEP) / 1000)) $(((t - T_STEP) % 1000 / 100))
	T_STEP=$t
}
label_of() { # label_of IMAGE LABEL: the label's value, empty when no such image
	timeout 60 podman image inspect --format "{{index .Config.Labels \"$2\"}}" "$1" 2>/dev/null || true
}
id_of() {
	timeout 60 podman image inspect --format '{{.Id}}' "$1" 2>/dev/null || true
}

tag=localhost/turninit-workload:latest
key=$ROOT_DIR/tests/vectors/test-trusted.pub
binary=$ROOT_DIR/build/turninit
while [ $# -gt 0 ]; do
	case $1 in
	--tag) [ $# -ge 2 ] || usage; tag=$2; shift 2 ;;
	--trusted-key) [ $# -ge 2 ] || usage; key=$2; shift 2 ;;
	-h|--help) usage ;;
	--) shift; break ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -le 1 ] || usage
[ $# -eq 0 ] || binary=$1

[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap, rootful podman)"
[ -x "$binary" ] || die "$binary: not an executable (run make first)"
[ -r "$key" ] || die "trusted key $key: not readable"
head -n 1 "$key" | grep -q '^untrusted comment:' || die "trusted key $key: not a minisign public key file"
for c in podman buildah sha256sum tar; do
	command -v "$c" >/dev/null || die "$c not found (make setup)"
done

mkdir -p "$CACHE"
# One build at a time: two would debootstrap into the same directory.
exec 9>"$CACHE/.lock"
flock 9

base_key=$( { printf 'suite %s\npackages %s\n' "$SUITE" "$PACKAGES"; cat "$SELF"; } |
	sha256sum | cut -d' ' -f1)
tarball=$CACHE/debian-$(short "$base_key").tar

# mirror: the Debian mirror apt is configured with for SUITE (deb822 first).
mirror() {
	if [ -n "${WORKLOAD_MIRROR:-}" ]; then
		echo "$WORKLOAD_MIRROR"
		return
	fi
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		# One paragraph a record; a record with Types deb and Suites naming SUITE.
		awk -v suite="$SUITE" '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") && uris != "" && enabled)
					{ split(uris, u, " "); print u[1]; found = 1; exit }
				types = suites = uris = ""; enabled = 1
			}
			BEGIN { enabled = 1 }
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			{ k = tolower($1); $1 = "" ; sub(/^ +/, "") }
			k == "types:" { types = $0 } k == "suites:" { suites = $0 }
			k == "uris:" { uris = $0 } k == "enabled:" { enabled = ($0 != "no") }
			END { if (!found) flush() }' "$f"
	done | head -n 1 | grep . && return
	[ -r /etc/apt/sources.list ] && awk -v suite="$SUITE" '
		$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++
			if ($(i + 1) == suite) { print $i; exit } }' /etc/apt/sources.list | grep . && return
	return 1
}

# --- 1. the Debian base ----------------------------------------------------------
if [ "$(label_of "$BASE_TAG" org.turninit.workload.base)" = "$base_key" ]; then
	step "base image $BASE_TAG up to date (key $(short "$base_key"))"
else
	if [ -s "$tarball" ]; then
		step "debootstrap cached: $(basename "$tarball")"
	else
		command -v debootstrap >/dev/null || /usr/sbin/debootstrap --version >/dev/null 2>&1 ||
			die "debootstrap not found (apt-get install debootstrap; make setup)"
		PATH=$PATH:/usr/sbin:/sbin
		[ -r "$KEYRING" ] || die "$KEYRING missing (apt-get install debian-archive-keyring)"
		uri=$(mirror) || die "no Debian mirror for $SUITE in apt's sources; set WORKLOAD_MIRROR"
		# Tarballs of other keys are stale: this script or the package list changed.
		rm -f "$CACHE"/debian-*.tar "$CACHE"/debian-*.tar.partial
		rootdir=$CACHE/root
		case $rootdir in */build/workload/root) ;; *) die "refusing root $rootdir" ;; esac
		rm -rf "$rootdir"
		mkdir -p "$rootdir"
		echo "workload-image: debootstrap --variant=minbase $SUITE from $uri (several minutes)"
		incl=$(echo "$PACKAGES" | tr ' ' ',')
		if ! debootstrap --variant=minbase --components=main --keyring="$KEYRING" \
			--include="$incl" "$SUITE" "$rootdir" "$uri" >"$CACHE/debootstrap.log" 2>&1; then
			tail -n 20 "$CACHE/debootstrap.log" >&2
			[ ! -r "$rootdir/debootstrap/debootstrap.log" ] || tail -n 20 "$rootdir/debootstrap/debootstrap.log" >&2
			die "debootstrap failed (log: build/workload/debootstrap.log)"
		fi
		step "debootstrap: $(grep -c '^I: Unpacking ' "$CACHE/debootstrap.log" || true) packages unpacked"
		# What a container gets from its runtime, and what only made the root.
		rm -rf "${rootdir:?}"/var/cache/apt/archives/*.deb "${rootdir:?}"/var/lib/apt/lists/* \
			"${rootdir:?}"/var/log/* "${rootdir:?}"/dev/* "${rootdir:?}"/etc/resolv.conf \
			"${rootdir:?}"/etc/hostname
		tar --numeric-owner --xattrs --sort=name -C "$rootdir" -cf "$tarball.partial" .
		mv "$tarball.partial" "$tarball"
		rm -rf "$rootdir"
		step "root packed: $(basename "$tarball"), $(($(stat -c %s "$tarball") / 1048576)) MiB"
	fi
	old_id=$(id_of "$BASE_TAG")
	new_id=$(timeout 600 podman import -q \
		--change "LABEL org.turninit.workload.base=$base_key" \
		--message "turninit workload base: debootstrap $SUITE minbase + $PACKAGES" \
		"$tarball" "$BASE_TAG") || die "podman import $tarball failed"
	new_id=${new_id#sha256:}
	[ -z "$old_id" ] || [ "$old_id" = "$new_id" ] || timeout 120 podman rmi "$old_id" >/dev/null 2>&1 || true
	step "base image $BASE_TAG imported ($(short "$new_id"))"
fi

# --- 2. the turninit layer -----------------------------------------------------------
layer_key=$( { echo "$base_key"; sha256sum <"$binary"; sha256sum <"$key"; } | sha256sum | cut -d' ' -f1)
if [ "$(label_of "$tag" org.turninit.workload.layer)" = "$layer_key" ] &&
	[ "$(label_of "$tag" org.turninit.workload.base)" = "$base_key" ]; then
	step "image $tag up to date ($(short "$(id_of "$tag")"), layer $(short "$layer_key"))"
else
	old_id=$(id_of "$tag")
	ctr=
	cleanup() { [ -z "$ctr" ] || timeout 60 buildah rm "$ctr" >/dev/null 2>&1 || true; }
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	ctr=$(timeout 60 buildah from --pull-never --quiet "$BASE_TAG") || die "buildah from $BASE_TAG failed"
	mnt=$(timeout 60 buildah mount "$ctr") || die "buildah mount failed"
	install -D -m 0755 "$binary" "$mnt/sbin/turninit"
	install -D -m 0644 "$key" "$mnt/etc/turninit/trusted.pub"
	chmod 0755 "$mnt/etc/turninit"
	rm -rf "$mnt/home/agent" "$mnt/work"
	mkdir -p "$mnt/home/agent" "$mnt/work"
	chmod 0755 "$mnt/home/agent"
	chmod 1777 "$mnt/work"
	timeout 60 buildah umount "$ctr" >/dev/null || die "buildah umount failed"
	timeout 60 buildah config --entrypoint '["/sbin/turninit"]' --cmd '' \
		--label "org.turninit.workload.base=$base_key" \
		--label "org.turninit.workload.layer=$layer_key" "$ctr" || die "buildah config failed"
	new_id=$(timeout 300 buildah commit --quiet --rm "$ctr" "$tag") || die "buildah commit $tag failed"
	ctr=
	new_id=${new_id#sha256:}
	[ -z "$old_id" ] || [ "$old_id" = "$new_id" ] || timeout 120 podman rmi "$old_id" >/dev/null 2>&1 || true
	step "image $tag built ($(short "$new_id"), layer $(short "$layer_key"))"
fi
t=$(now_ms)
printf 'workload-image: %s ready in %d.%01d s\n' "$tag" $(((t - T_ALL) / 1000)) $(((t - T_ALL) % 1000 / 100))
