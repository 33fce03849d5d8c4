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
usage() { sed -n '4,15s/^# \{0,1\}//p' "$0" >&2; exit 2; }

key=${IMAGE_TRUSTED_KEY:-${TRUSTED_KEYS:-}}
no_key=0
tag=${IMAGE_TAG:-localhost/turninit:latest}
overlay=${IMAGE_OVERLAY:-}
context=
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
bash_static=
for f in /bin/bash-static /usr/bin/bash-static; do [ -x "$f" ] && { bash_static=$f; break; }; done
[ -n "$bash_static" ] || die "bash-static not found (apt-get install bash-static; make setup)"
busybox=
for f in /bin/busybox /usr/bin/busybox; do [ -x "$f" ] && { busybox=$f; break; }; done
[ -n "$busybox" ] || die "busybox not found (apt-get install busybox-static; make setup)"
file -L "$busybox" | grep -q 'statically linked' || die "$busybox is not static (install busybox-static)"
[ -n "$context" ] || command -v podman >/dev/null || die "podman not found (make setup)"

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
have=$(bin/busybox --list)
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
	echo "context: $context (podman build -t $tag $context; docker build -t $tag -f $context/Containerfile $context)"
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
	--format '{{index .Config.Labels "org.turninit.root"}}' "$tag" 2>/dev/null || true)
if [ -n "$old_id" ] && [ "$old_digest" = "$digest" ]; then
	rm -f "$tarball"
	echo "image: $tag up to date ($(short "$old_id"), root sha256:$(short "$digest"))"
	exit 0
fi
new_id=$(timeout 60 podman import -q \
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
echo "image: $tag built ($(short "$new_id"), root sha256:$(short "$digest"), $(du -sk "$root" | cut -f1) KiB)"
