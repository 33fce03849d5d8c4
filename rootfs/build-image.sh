#!/bin/sh
# build-image.sh - assemble a minimal image root around turninit and import it as a
# local podman image, without a registry (`make image`).
#
# usage: build-image.sh [OPTIONS] BINARY
#   --trusted-key FILE  minisign public key installed as /etc/turninit/trusted.pub
#                       (env IMAGE_TRUSTED_KEY; else TRUSTED_KEYS, the make variable
#                       for compiled-in keys). Required unless --no-trusted-key.
#   --no-trusted-key    no trusted.pub: the binary has its keys compiled in
#   --tag TAG           image name (env IMAGE_TAG; default localhost/turninit:latest)
#   --overlay DIR       copy DIR's tree over the root last (env IMAGE_OVERLAY; tests)
#   --root DIR          where to assemble (env IMAGE_ROOT; default build/rootfs in a
#                       checkout, else a temporary directory)
#   --context DIR       no import: DIR/root and DIR/Containerfile (oci/Containerfile),
#                       a build context for `podman build DIR` or `docker build DIR`
#   --arch ARCH         amd64 or arm64 (env IMAGE_ARCH; default the host's): the image's
#                       architecture; BINARY must be a turninit built for it
#   --manifest-list LIST  also put the image in the local manifest list LIST (made
#                       when missing), in place of the entry of its architecture
#
# The root:
#   /bin/bash            static bash (Debian bash-static); /bin/sh -> bash
#   /bin/busybox         static busybox (Debian busybox-static), with applet links for
#                        the basic utilities in APPLETS below, never over bash or sh
#   /sbin/turninit       BINARY; the image ENTRYPOINT is ["/sbin/turninit"], no CMD
#   /etc/turninit/       trusted.pub (0644)
#   /home/agent 0755, /tmp 1777, /work 1777, /proc /sys /dev /run (mount points)
# and nothing else: no /etc/passwd, /etc/group or /etc/nsswitch.conf, because
# turninit takes uid and gid from the manifest as numbers and never looks names up.
# /work is world-writable so the manifest's uid, whatever it is, has a working
# directory when no project volume is mounted there.
#
# bash-static and busybox-static: for the host's architecture, the host's
# installed packages. For another one (arm64 on an amd64 host), Debian's
# binary packages of that architecture, fetched with `apt-get download`
# through a private APT configuration (its lists, cache and status in
# build/apt-ARCH of a checkout, or in the temporary directory when installed;
# /etc/apt and dpkg's own architectures are never touched) and unpacked with
# dpkg-deb -x. Listing the foreign busybox's applets runs it: through
# qemu-user's binfmt entry, or qemu-ARCH-static.
#
# A manifest list (--manifest-list) is what a multi-architecture release
# pushes: build each architecture's image under a tag of its own with the same
# LIST, then `podman manifest push --all LIST DESTINATION`. podman 4.3 cannot
# list or prune images while a list holding an image of the host's platform
# is in its storage (`podman images` fails; containers/podman#19757): remove
# the list once pushed (`podman manifest rm LIST`).
#
# Idempotent and fast: the tar stream is reproducible (sorted, fixed owners and
# times); its sha256 is stored in the label org.turninit.root, and an existing image
# with the same label is kept as is. A replaced image is removed when nothing uses
# it; nothing else is removed.
set -eu

ROOT_DIR=$(cd "$(dirname "$0")/.." && pwd)
INSTALLED_DATADIR=$ROOT_DIR/share/turninit   # make install writes DATADIR/turninit here
APPLETS="awk basename cat chmod cp cut date dd df diff dirname du echo env expr false find
	grep head hostname id kill ln ls mkdir mktemp mv nproc od printf ps pwd readlink
	realpath rm rmdir sed seq sleep sort stat tac tail tee test timeout touch tr true truncate
	uname uniq wc which xargs yes"

die() { echo "build-image: $*" >&2; exit 1; }
short() { printf '%.12s' "$1"; }
usage() { sed -n '4,19s/^# \{0,1\}//p' "$0" >&2; exit 2; }

key=${IMAGE_TRUSTED_KEY:-${TRUSTED_KEYS:-}}
no_key=0
tag=${IMAGE_TAG:-localhost/turninit:latest}
overlay=${IMAGE_OVERLAY:-}
context=
arch=${IMAGE_ARCH:-}
list=
# From a checkout: build/rootfs; installed (turninit-build-image): a fresh
# directory under TMPDIR, removed at exit.
root=${IMAGE_ROOT:-}
[ -n "$root" ] || [ ! -f "$ROOT_DIR/Makefile" ] || root=$ROOT_DIR/build/rootfs
while [ $# -gt 0 ]; do
	case $1 in
	--trusted-key) [ $# -ge 2 ] || usage; key=$2; shift 2 ;;
	--no-trusted-key) no_key=1; shift ;;
	--tag) [ $# -ge 2 ] || usage; tag=$2; shift 2 ;;
	--overlay) [ $# -ge 2 ] || usage; overlay=$2; shift 2 ;;
	--root) [ $# -ge 2 ] || usage; root=$2; shift 2 ;;
	--context) [ $# -ge 2 ] || usage; context=$2; shift 2 ;;
	--arch) [ $# -ge 2 ] || usage; arch=$2; shift 2 ;;
	--manifest-list) [ $# -ge 2 ] || usage; list=$2; shift 2 ;;
	--) shift; break ;;
	-h|--help) usage ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || usage
binary=$1
case $context in ""|/*) ;; *) context=$PWD/$context ;; esac
[ -z "$context" ] || root=$context/root
# Every temporary file is made inside a directory of mktemp -d (mode 0700,
# a fresh name): none at a name another user could guess and make first in a
# world-writable TMPDIR (the root's tarball among them).
tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/turninit-build.XXXXXX") || die "mktemp"
trap 'rm -rf "$tmpdir"' EXIT
[ -n "$root" ] || root=$tmpdir/root

[ -x "$binary" ] || die "$binary: not an executable (run make first)"
# The architectures this script knows, by Debian's names: what uname -m says
# for each, and the ELF machine (e_machine) of its binaries.
host_arch=$(uname -m)
case $host_arch in x86_64) host_arch=amd64 ;; aarch64|arm64) host_arch=arm64 ;; esac
[ -n "$arch" ] || arch=$host_arch
# the kernel's names (make's ARCH) stand for Debian's
case $arch in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; esac
case $arch in
amd64) elf_machine=3e00 qemu_arch=x86_64 ;;
arm64) elf_machine=b700 qemu_arch=aarch64 ;;
*) die "--arch $arch: give amd64 or arm64" ;;
esac
# elf_is FILE: FILE is a 64-bit little-endian ELF for $arch (its first 20
# bytes: the magic, class 2, data 1, and e_machine at offset 18). An image of
# one architecture with a turninit, bash or busybox of another would not run.
elf_is() {
	h=$(od -An -tx1 -N20 "$1" 2>/dev/null | tr -d ' \n')
	case $h in 7f454c460201????????????????????????$elf_machine) return 0 ;; esac
	return 1
}
elf_is "$binary" || die "$binary: not an ELF binary for $arch ($(file -bL "$binary" | cut -d, -f1-2)); give --arch for its architecture, or the turninit built for $arch"
[ -z "$list" ] || [ -z "$context" ] || die "--manifest-list and --context: a build context is imported by podman build, not here"
[ -z "$list" ] || command -v jq >/dev/null || die "jq not found: --manifest-list reads podman manifest inspect with it (apt-get install jq)"
if [ "$no_key" -eq 1 ]; then
	key=
elif [ -z "$key" ]; then
	die "no trusted key: pass --trusted-key FILE.pub (make image IMAGE_TRUSTED_KEY=FILE.pub), or --no-trusted-key when keys are compiled in"
else
	[ -r "$key" ] || die "trusted key $key: not readable"
	head -n 1 "$key" | grep -q '^untrusted comment:' || die "trusted key $key: not a minisign public key file"
	# A secret key file passes the line above (minisign -G writes the same
	# comment form): installed as trusted.pub it would put the signing key,
	# readable by every command, into the image. Every key line of a public
	# key file is 42 bytes, 56 base64 characters; a secret key's is 158.
	grep -qi '^untrusted comment:.*secret key' "$key" &&
		die "trusted key $key: a minisign secret key: give its public key (the .pub file); a secret key must never go into an image"
	awk 'NF && !/^untrusted comment:/ && length($0) != 56 { bad = 1 } END { exit bad }' "$key" ||
		die "trusted key $key: not a minisign public key file (a key line is not 56 base64 characters)"
fi
[ -z "$overlay" ] || [ -d "$overlay" ] || die "overlay $overlay: not a directory"
abs() { case $1 in /*|"") printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
binary=$(abs "$binary") key=$(abs "$key") overlay=$(abs "$overlay") root=$(abs "$root")

# fetch_deb PACKAGE: the candidate .deb of PACKAGE downloaded into $A/debs,
# checked, and unpacked into $tmpdir/deb-PACKAGE; prints its version.
fetch_deb() {
	v=$(APT_CONFIG=$A/apt.conf apt-cache show --no-all-versions "$1" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
	[ -n "$v" ] || die "no $1 for $arch in the Debian lists of $A"
	deb=$A/debs/${1}_$(printf '%s' "$v" | sed 's/:/%3a/')_$arch.deb
	# earlier versions go; the candidate's file stays for apt to check
	find "$A/debs" -name "${1}_*.deb" ! -path "$deb" -delete
	(cd "$A/debs" && APT_CONFIG=$A/apt.conf timeout 600 apt-get download "$1=$v") >"$A/download.log" 2>&1 ||
		die "apt-get download $1=$v ($arch) failed: $(grep -v '^W: Download is performed unsandboxed' "$A/download.log" | tail -n 1)"
	[ "$(dpkg-deb -f "$deb" Package Version Architecture 2>/dev/null | tr '\n' ' ')" = "Package: $1 Version: $v Architecture: $arch " ] ||
		die "$deb: not $1 $v of $arch"
	rm -rf "$tmpdir/deb-$1"
	dpkg-deb -x "$deb" "$tmpdir/deb-$1" || die "dpkg-deb -x $deb failed"
	printf '%s\n' "$v"
}
# foreign_packages: bash_static and busybox from Debian's bash-static and
# busybox-static of $arch, downloaded by apt-get through a private APT
# configuration: the host's Debian sources (as .ci/musl-deps.sh takes them
# for deb-src), APT::Architecture $arch, and lists, cache and an empty dpkg
# status of its own, so that neither /etc/apt nor dpkg's architectures
# change. apt checks each .deb against the signed Release of the lists. The
# lists are fetched again when a day old; a .deb already downloaded is
# reused when it is the candidate's (apt-get download checks its hash).
foreign_packages() {
	for c in apt-get apt-cache dpkg-deb; do
		command -v "$c" >/dev/null || die "$c not found: an $arch image on this $host_arch host takes Debian's $arch packages"
	done
	if [ -f "$ROOT_DIR/Makefile" ]; then A=$ROOT_DIR/build/apt-$arch; else A=$tmpdir/apt-$arch; fi
	mkdir -p "$A/sources.d" "$A/lists/partial" "$A/cache/archives/partial" "$A/state" "$A/debs" ||
		die "cannot make $A"
	: > "$A/state/status"
	: > "$A/none.list"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		awk 'BEGIN{RS="";ORS="\n\n"} /(^|\n)Types:[^\n]*deb/ && /(^|\n)URIs:[^\n]*debian/ && !/(^|\n)Enabled:[ \t]*no/ {
		     sub(/Types:[^\n]*/, "Types: deb"); gsub(/\nArchitectures:[^\n]*/, ""); print }' "$f"
	done > "$A/sources.d/debian.sources.new"
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -e "$f" ] || continue
		sed -n 's/arch=[^] ]*//; s/\[[[:space:]]*\]//; s/^[[:space:]]*\(deb[[:space:]].*debian.*\)$/\1/p' "$f"
	done > "$A/sources.d/debian.list.new"
	[ -s "$A/sources.d/debian.sources.new" ] || [ -s "$A/sources.d/debian.list.new" ] ||
		die "no Debian source in /etc/apt/sources.list or sources.list.d: nowhere to fetch the $arch packages from"
	# new sources, new lists
	for f in debian.sources debian.list; do
		cmp -s "$A/sources.d/$f.new" "$A/sources.d/$f" || rm -f "$A/updated"
		mv "$A/sources.d/$f.new" "$A/sources.d/$f"
	done
	cat > "$A/apt.conf" <<EOC
APT::Architecture "$arch";
APT::Architectures { "$arch"; };
Dir::Etc::SourceList "$A/none.list";
Dir::Etc::SourceParts "$A/sources.d";
Dir::State "$A/state";
Dir::State::status "$A/state/status";
Dir::State::Lists "$A/lists";
Dir::Cache "$A/cache";
EOC
	if [ -z "$(find "$A/updated" -mmin -1440 2>/dev/null)" ]; then
		APT_CONFIG=$A/apt.conf timeout 600 apt-get update >"$A/update.log" 2>&1 ||
			die "apt-get update for $arch failed: $(tail -n 1 "$A/update.log") (all of it in $A/update.log)"
		touch "$A/updated"
	fi
	version_bash=$(fetch_deb bash-static) && version_busybox=$(fetch_deb busybox-static) || exit 1
	bash_static=
	for f in "$tmpdir/deb-bash-static/bin/bash-static" "$tmpdir/deb-bash-static/usr/bin/bash-static"; do
		[ -f "$f" ] && { bash_static=$f; break; }
	done
	[ -n "$bash_static" ] || die "bash-static $version_bash ($arch) has no bin/bash-static"
	busybox=
	for f in "$tmpdir/deb-busybox-static/bin/busybox" "$tmpdir/deb-busybox-static/usr/bin/busybox"; do
		[ -f "$f" ] && { busybox=$f; break; }
	done
	[ -n "$busybox" ] || die "busybox-static $version_busybox ($arch) has no bin/busybox"
	for f in "$bash_static" "$busybox"; do
		elf_is "$f" || die "${f#"$tmpdir/deb-"}: not an ELF binary for $arch"
	done
}

if [ "$arch" = "$host_arch" ]; then
	bash_static=
	for f in /bin/bash-static /usr/bin/bash-static; do [ -x "$f" ] && { bash_static=$f; break; }; done
	[ -n "$bash_static" ] || die "bash-static not found (apt-get install bash-static; make setup)"
	busybox=
	for f in /bin/busybox /usr/bin/busybox; do [ -x "$f" ] && { busybox=$f; break; }; done
	[ -n "$busybox" ] || die "busybox not found (apt-get install busybox-static; make setup)"
else
	foreign_packages
fi
file -L "$bash_static" | grep -q 'statically linked' || die "$bash_static is not static (install bash-static)"
file -L "$busybox" | grep -q 'statically linked' || die "$busybox is not static (install busybox-static)"
[ -n "$context" ] || command -v podman >/dev/null || die "podman not found (make setup)"
# LIST is a manifest list of the local storage, or nothing yet (podman
# manifest exists: 0 a list, 1 nothing, else not a list): a name that holds
# an image is refused before anything is built.
list_rc=0
[ -z "$list" ] || timeout 60 podman manifest exists "$list" 2>/dev/null || list_rc=$?
[ "$list_rc" -le 1 ] || die "--manifest-list $list: that name holds an image that is not a manifest list"

# --- assemble -----------------------------------------------------------------
case $root in /|"") die "refusing root directory '$root'" ;; esac
# Emptied first: only an image root this script made (it has sbin/turninit,
# bin/busybox, etc/turninit and home/agent), or an empty or missing
# directory, never anything else: /usr after `make install PREFIX=/usr` on a
# merged-/usr system has sbin/turninit and bin/busybox too.
if [ -d "$root" ] && [ -n "$(ls -A "$root")" ] &&
   { [ ! -e "$root/sbin/turninit" ] || [ ! -e "$root/bin/busybox" ] ||
     [ ! -d "$root/etc/turninit" ] || [ ! -d "$root/home/agent" ]; }; then
	die "refusing to empty $root: it is not an image root this script made (no sbin/turninit, bin/busybox, etc/turninit and home/agent); give an empty or new directory"
fi
rm -rf "$root"
mkdir -p "$root"
cd "$root"
mkdir -p bin sbin etc/turninit home/agent tmp work proc sys dev run
chmod 0755 . bin sbin etc etc/turninit home home/agent proc sys dev run
chmod 1777 tmp work
install -m 0755 "$bash_static" bin/bash
ln -s bash bin/sh
install -m 0755 "$busybox" bin/busybox
# The foreign busybox runs through qemu-user: the kernel's binfmt entry, else
# qemu-ARCH-static by name.
have=$(bin/busybox --list 2>/dev/null) || have=
if [ -z "$have" ] && [ "$arch" != "$host_arch" ] && command -v "qemu-$qemu_arch-static" >/dev/null; then
	have=$("qemu-$qemu_arch-static" bin/busybox --list) || have=
fi
[ -n "$have" ] || die "bin/busybox --list failed: cannot list the applets of the $arch busybox$(
	[ "$arch" = "$host_arch" ] || echo " on this $host_arch host without qemu-user (apt-get install qemu-user-static binfmt-support)")"
for a in $APPLETS; do
	case $a in bash|sh|busybox) die "applet list names $a" ;; esac
	echo "$have" | grep -qx "$a" || die "busybox has no applet $a"
	ln -s busybox "bin/$a"
done
install -m 0755 "$binary" sbin/turninit
[ -z "$key" ] || install -m 0644 "$key" etc/turninit/trusted.pub
if [ -n "$overlay" ]; then
	cp -a "$overlay/." . || die "overlay $overlay: copy failed"
fi
for f in etc/passwd etc/group etc/nsswitch.conf; do
	[ ! -e "$f" ] || echo "build-image: warning: the overlay adds /$f; turninit never reads it" >&2
done

# --- a build context, or import --------------------------------------------------
if [ -n "$context" ]; then
	# a checkout's oci/, or where make install put it (DATADIR/turninit,
	# written into the installed copy of this script), or beside this
	# script's BINDIR as the default DATADIR is (an install still in its
	# DESTDIR: BINDIR/../share/turninit)
	cf=$ROOT_DIR/oci/Containerfile
	[ -r "$cf" ] || cf=$INSTALLED_DATADIR/Containerfile
	[ -r "$cf" ] || cf=$ROOT_DIR/share/turninit/Containerfile
	[ -r "$cf" ] || die "Containerfile: not in $ROOT_DIR/oci, $INSTALLED_DATADIR or $ROOT_DIR/share/turninit"
	install -m 0644 "$cf" "$context/Containerfile" || die "writing $context/Containerfile"
	plat=
	[ "$arch" = "$host_arch" ] || plat="--platform linux/$arch "
	echo "context: $context (podman build ${plat}-t $tag $context; docker build ${plat}-t $tag -f $context/Containerfile $context)"
	exit 0
fi
tarball=$tmpdir/root.tar
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
	--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
	-C "$root" -cf "$tarball" .
digest=$(sha256sum "$tarball" | cut -d' ' -f1)

old_id=$(timeout 60 podman image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
old_digest=
[ -z "$old_id" ] || old_digest=$(timeout 60 podman image inspect \
	--format '{{index .Config.Labels "org.turninit.root"}} {{.Architecture}}' "$tag" 2>/dev/null || true)
# what the foreign packages were, for the line that says what was made
from=
[ "$arch" = "$host_arch" ] || from=", $arch: bash-static $version_bash, busybox-static $version_busybox"
if [ -n "$old_id" ] && [ "$old_digest" = "$digest $arch" ]; then
	rm -f "$tarball"
	new_id=$old_id
	echo "image: $tag up to date ($(short "$old_id"), root sha256:$(short "$digest")$from)"
else
	new_id=$(timeout 60 podman import -q --arch "$arch" \
		--change 'ENTRYPOINT ["/sbin/turninit"]' \
		--change "LABEL org.turninit.root=$digest" \
		--message "turninit image root" \
		"$tarball" "$tag") || die "podman import failed"
	rm -f "$tarball"
	new_id=${new_id#sha256:}
	# The image this tag named before goes when the tag was its only name and no
	# container uses it: nothing this run did not replace (another name of the
	# user's keeps it, and another user's images stay).
	if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ] &&
	   [ -z "$(timeout 60 podman image inspect --format '{{range .RepoTags}}{{.}} {{end}}' "$old_id" 2>/dev/null | tr -d ' ')" ]; then
		timeout 60 podman rmi "$old_id" >/dev/null 2>&1 || true
	fi
	echo "image: $tag built ($(short "$new_id"), root sha256:$(short "$digest"), $(du -sk "$root" | cut -f1) KiB$from)"
fi
[ -n "$list" ] || exit 0

# --- the manifest list ----------------------------------------------------------------
# LIST, made when it was not there; this image replaces the list's entries of
# its architecture, so that building again leaves one entry per architecture.
[ "$list_rc" -eq 0 ] || timeout 60 podman manifest create "$list" >/dev/null ||
	die "podman manifest create $list failed"
entries() { # the digests of LIST's entries of this architecture
	timeout 60 podman manifest inspect "$list" | jq -r --arg a "$arch" \
		'.manifests[]? | select(.platform.os == "linux" and .platform.architecture == $a) | .digest'
}
want=$(timeout 60 podman image inspect --format '{{.Digest}}' "$new_id") || die "podman image inspect $new_id failed"
entry=$(entries) || die "podman manifest inspect $list failed"
if [ "$entry" != "$want" ]; then
	for d in $entry; do
		timeout 60 podman manifest remove "$list" "$d" >/dev/null || die "podman manifest remove $list $d failed"
	done
	timeout 60 podman manifest add "$list" "containers-storage:$new_id" >/dev/null ||
		die "podman manifest add $list $tag failed"
	entry=$(entries) || die "podman manifest inspect $list failed"
	[ "$entry" = "$want" ] || die "$list: its $arch entry is ${entry:-missing}, not $tag ($want)"
fi
echo "manifest list: $list, $arch: $tag ($want)"
