#!/bin/bash
# packaging.sh - what a packager gets from `make install` (`make packaging`,
# part of make check; issue 17, Deliver 1): the layout under DESTDIR with the
# GNU directory variables, the man page rendered by man(1) and matching its
# source, the installed scripts runnable from PATH, the relink kit linking a
# working turninit, install-strip, uninstall leaving nothing behind, and a
# build in another folder, offline, with MUSL_PREFIX, byte for byte the
# same (issue 17, Deliver 2 and 3). Runs
# on the host (no container); writes only below build/.
# shellcheck disable=SC2016 # '$X' is literal: it runs in the container
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
# make repro (PACKAGING_REPRO=1) has results and a folder of its own: it leaves
# make check's packaging results as they were.
if [[ ${PACKAGING_REPRO:-0} == 1 ]]; then
	suite_open repro reprotest "make as a packager runs it" make musl-gcc git strings
else
	suite_open packaging pkgtest "make install as a packager runs it; unshare -n; podman build" make man go-md2man musl-gcc file git unshare podman minisign strace strings
fi

# make_install DEST ARGS...: make install (or ARGS' target) into DEST, quietly.
make_install() {
	local dest=$1
	shift
	run_cmd timeout 300 make --no-print-directory -C "$ROOT" DESTDIR="$dest" "$@"
	[[ $RC -eq 0 ]] || why "make $* failed: $(printf '%s' "$ERR" | tail -n 3)"
}
# listing DIR: every file and directory below DIR, "MODE PATH", sorted.
listing() {
	(cd "$1" && find . -mindepth 1 -printf '%m %P\n' | LC_ALL=C sort)
}
OBJS=$(cd "$ROOT" && for f in policy/*.c init/*.c init/*/*.c; do basename "${f%.c}.o"; done | LC_ALL=C sort)

# The install into d1 is what the tests after p-install-layout look at (the man
# page, the scripts, the relink kit, uninstall): made whichever are selected.
D=$WORK/d1
make_install "$D" install PREFIX=/usr
if begin p-install-layout; then
want=$(
	printf '755 usr\n755 usr/bin\n755 usr/bin/turninit-build-image\n755 usr/bin/turninit-seal\n'
	printf '755 usr/lib\n755 usr/lib/turninit\n755 usr/lib/turninit/relink\n'
	for o in $OBJS relink.md versions.txt; do printf '644 usr/lib/turninit/relink/%s\n' "$o"; done
	printf '755 usr/sbin\n755 usr/sbin/turninit\n755 usr/share\n755 usr/share/doc\n755 usr/share/doc/turninit\n'
	printf '755 usr/share/turninit\n644 usr/share/turninit/Containerfile\n644 usr/share/turninit/Containerfile.seal\n'
	printf '644 usr/share/doc/turninit/LICENSE\n755 usr/share/doc/turninit/third-party\n'
	for f in README.md manifest.md protocol.md mcp.md security.md audit.md exit-codes.md design.md \
		deployment.md packaging.md; do
		printf '644 usr/share/doc/turninit/%s\n' "$f"
	done
	for l in jansson libcap2 libseccomp libsodium mbedtls musl; do
		printf '755 usr/share/doc/turninit/third-party/%s\n644 usr/share/doc/turninit/third-party/%s/copyright\n' "$l" "$l"
	done
	printf '755 usr/share/man\n755 usr/share/man/man1\n644 usr/share/man/man1/turninit.1\n')
eq "installed files" "$(listing "$D")" "$(printf '%s\n' "$want" | LC_ALL=C sort)"
cmp -s "$D/usr/sbin/turninit" "$ROOT/build/turninit.unstripped" || why "usr/sbin/turninit is not build/turninit.unstripped"
run_cmd file "$D/usr/sbin/turninit"
expect_contains "file" "$OUT" "not stripped"
expect_contains "file" "$OUT" "BuildID[sha1]="
end; fi

# Each directory variable on its own, as a distribution sets them.
if begin p-install-gnu-directories; then
D=$WORK/d2
make_install "$D" install PREFIX=/opt/t SBINDIR=/sbin BINDIR=/usr/bin LIBDIR=/usr/lib/x86_64-linux-gnu \
	MANDIR=/usr/share/man DATADIR=/usr/share DOCDIR=/usr/share/doc/turninit-bin
for f in sbin/turninit usr/bin/turninit-seal usr/bin/turninit-build-image \
	usr/lib/x86_64-linux-gnu/turninit/relink/main.o usr/share/man/man1/turninit.1 \
	usr/share/doc/turninit-bin/LICENSE usr/share/doc/turninit-bin/third-party/libseccomp/copyright \
	usr/share/turninit/Containerfile; do
	[[ -f $D/$f ]] || why "$f not installed"
done
[[ ! -e $D/opt ]] || why "something went to PREFIX although every directory was given: $(cd "$D" && find opt | head -n 3)"
end; fi

# The man page: what man(1) shows, with no warning from groff.
if begin p-man-page-renders; then
run_cmd env MANWIDTH=80 man --warnings -l "$WORK/d1/usr/share/man/man1/turninit.1"
expect_rc 0
expect_err ""
expect_contains "man" "$OUT" "turninit(1)                      User Commands                     turninit(1)"
expect_contains "man" "$OUT" $'NAME\n       turninit  -  PID  1  for  disposable per-turn containers'
expect_contains "man" "$OUT" $'SYNOPSIS\n'
expect_contains "man" "$OUT" "turninit 0.1.0"
end; fi
# The committed page is what go-md2man makes of docs/turninit.1.md now.
# Every document the man page names is installed where it says (DOCDIR), and
# it names no path of a checkout.
if begin p-man-page-references-installed; then
for n in $(grep -o '[a-z][a-z0-9-]*\.md' "$ROOT/docs/turninit.1.md" | LC_ALL=C sort -u); do
	[[ -f $WORK/d1/usr/share/doc/turninit/$n ]] || why "the man page names $n, which install did not put in usr/share/doc/turninit"
done
grep -n 'docs/' "$ROOT/docs/turninit.1.md" | head -n 3 | while IFS= read -r l; do echo "$l"; done > "$WORK/checkout-paths"
[[ ! -s $WORK/checkout-paths ]] || why "the man page names a checkout path: $(head -n 1 "$WORK/checkout-paths")"
end; fi
if begin p-man-page-matches-source; then
run_cmd bash -c "sed '1s/^# turninit(1)\$/# turninit 1 \"\" \"turninit $(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")\" \"User Commands\"/' '$ROOT/docs/turninit.1.md' | go-md2man > '$WORK/turninit.1'"
expect_rc 0
cmp -s "$WORK/turninit.1" "$ROOT/man/turninit.1" || why "man/turninit.1 is stale: run make man/turninit.1 after changing docs/turninit.1.md ($(diff "$ROOT/man/turninit.1" "$WORK/turninit.1" | head -n 4 | tr '\n' ' '))"
end; fi

# The scripts under their installed names, from PATH, outside the checkout.
if begin p-installed-scripts-run; then
run_cmd env -C / PATH="$WORK/d1/usr/bin:/usr/bin:/bin" turninit-seal --help
expect_rc 2
expect_contains "turninit-seal --help" "$ERR" "usage: seal.sh"
run_cmd env -C / PATH="$WORK/d1/usr/bin:/usr/bin:/bin" turninit-build-image --help
expect_rc 2
expect_contains "turninit-build-image --help" "$ERR" "--root DIR"
end; fi

# The installed build-image finds its Containerfile in a DATADIR that is not
# beside BINDIR, and takes a relative --context.
if begin p-build-image-context-datadir-apart; then
D=$WORK/d4
make_install "$D" install PREFIX=/opt/t BINDIR=/opt/b DATADIR=/opt/d
run_cmd env -C "$WORK" sh "$D/opt/b/turninit-build-image" --trusted-key "$ROOT/tests/vectors/test-trusted.pub" \
	--context rel-ctx "$ROOT/build/turninit"
expect_rc 1
# installed under DESTDIR it names the real DATADIR, which is not there yet
expect_contains "stderr" "$ERR" "Containerfile: not in $D/opt/oci, /opt/d/turninit or $D/opt/share/turninit"
sed -i "s|^INSTALLED_DATADIR=.*|INSTALLED_DATADIR=$D/opt/d/turninit|" "$D/opt/b/turninit-build-image"
run_cmd env -C "$WORK" sh "$D/opt/b/turninit-build-image" --trusted-key "$ROOT/tests/vectors/test-trusted.pub" \
	--context rel-ctx "$ROOT/build/turninit"
expect_rc 0
[[ -f $WORK/rel-ctx/Containerfile && -x $WORK/rel-ctx/root/sbin/turninit ]] || why "no context in $WORK/rel-ctx"
end; fi
# Installed in the default layout and still in its DESTDIR (a package being
# made, docs/packaging.md's first line), build-image finds the Containerfile
# beside its BINDIR, where the real DATADIR is not yet.
if begin p-build-image-context-in-destdir; then
run_cmd env -C "$WORK" sh "$WORK/d1/usr/bin/turninit-build-image" --trusted-key "$ROOT/tests/vectors/test-trusted.pub" \
	--context destdir-ctx "$ROOT/build/turninit"
expect_rc 0
cmp -s "$WORK/destdir-ctx/Containerfile" "$ROOT/oci/Containerfile" || why "the context's Containerfile is not oci/Containerfile"
end; fi
# A secret key given as the trusted key (FILE.key for FILE.pub, an easy
# slip): refused before anything is built, so the signing key never goes
# into an image (before: built, the secret key installed as a 0644
# /etc/turninit/trusted.pub that every command could read).
if begin p-build-image-refuses-secret-key; then
run_cmd sh "$ROOT/rootfs/build-image.sh" --trusted-key "$ROOT/tests/vectors/test-trusted.key" \
	--context "$WORK/secret-ctx" "$ROOT/build/turninit"
expect_rc 1
expect_err "build-image: trusted key $ROOT/tests/vectors/test-trusted.key: a minisign secret key: give its public key (the .pub file); a secret key must never go into an image"$'\n'
[[ ! -e $WORK/secret-ctx/root ]] || why "the context was made"
end; fi
# --root or --context naming a directory with other files: refused, nothing removed.
# refused_root ROOT OPTION DIR: build-image.sh OPTION DIR, whose image root
# is ROOT (holding keep.txt), refuses to empty it, and keep.txt stays.
refused_root() {
	echo precious > "$1/keep.txt"
	run_cmd sh "$ROOT/rootfs/build-image.sh" --trusted-key "$ROOT/tests/vectors/test-trusted.pub" \
		"$2" "$3" "$ROOT/build/turninit"
	expect_rc 1
	expect_contains "stderr" "$ERR" "refusing to empty $1: it is not an image root this script made"
	[[ $(cat "$1/keep.txt" 2>&1) == precious ]] || why "$1/keep.txt was removed"
}
if begin p-build-image-refuses-foreign-root; then
mkdir -p "$WORK/foreign/root"
refused_root "$WORK/foreign/root" --context "$WORK/foreign"
# /usr of a merged-/usr system after make install PREFIX=/usr: it has
# sbin/turninit and bin/busybox, and is not an image root either.
mkdir -p "$WORK/usrlike/sbin" "$WORK/usrlike/bin"
install -m 0755 "$ROOT/build/turninit" "$WORK/usrlike/sbin/turninit"
printf '#!/bin/sh\n' > "$WORK/usrlike/bin/busybox"
chmod 0755 "$WORK/usrlike/bin/busybox"
refused_root "$WORK/usrlike" --root "$WORK/usrlike"
end; fi

# An install directory the installed script would carry badly (a space, $( ),
# ;, a quote, |) or a relative one: refused in one line, nothing installed.
# DATADIR too, on its own: it is written into the installed build-image
# script, between single quotes that a quote in it would end.
if begin p-install-odd-directory-refused; then
for bad in "/opt/a b" '/opt/x;touch /tmp/p' "/opt/o'q" '/opt/a|b' 'opt/rel' '/../../tmp/out' '/opt/..' \
	"DATADIR=/opt/o'q" "DATADIR=/opt/x';touch /tmp/p;'"; do
	var=PREFIX
	[[ $bad != DATADIR=* ]] || { var=DATADIR; bad=${bad#DATADIR=}; }
	D=$WORK/d-odd
	rm -rf "$D"
	run_cmd timeout 300 make --no-print-directory -C "$ROOT" DESTDIR="$D" install "$var=$bad"
	[[ $RC -ne 0 ]] || why "$var=$bad: make install succeeded"
	[[ $ERR == *"install: $var must be an absolute path of letters, digits and / . _ + - only, without ..: $bad"* ]] \
		|| why "$var=$bad: no refusal line: $(printf '%s' "$ERR" | head -n 2)"
	[[ ! -e $D ]] || why "$var=$bad: something was installed: $(cd "$D" && find . | head -n 3)"
done
end; fi

# A build folder with a blank in its name: one line before anything is
# fetched or built (musl's configure and -ffile-prefix-map break on it).
if begin p-build-folder-with-blank-refused; then
B="$WORK/with blank"
rm -rf "$B"
mkdir -p "$B"
cp "$ROOT/Makefile" "$B/"
run_cmd timeout 60 make --no-print-directory -C "$B" ARCH=aarch64
[[ $RC -ne 0 ]] || why "make succeeded in a folder with a blank"
expect_contains stderr "$ERR" "the build folder \"$B\" has a blank in its name: clone turninit into a folder without one"
[[ ! -e $B/build ]] || why "something was built: $(cd "$B" && find build | head -n 3)"
rm -rf "$B"
end; fi

# DATADIR is written into the installed script quoted.
if begin p-installed-datadir-quoted; then
run_cmd grep '^INSTALLED_DATADIR=' "$WORK/d1/usr/bin/turninit-build-image"
expect_out "INSTALLED_DATADIR='/usr/share/turninit'
"
end; fi

# The installed build-image makes no file at a name another user of a
# world-writable TMPDIR could make first: every file it creates there is in a
# directory of its own mktemp -d (strace: each creating open, mkdir).
if begin p-build-image-temporary-files-in-own-directory; then
T=$WORK/tmpdir
rm -rf "$T"
mkdir -m 1777 "$T"
run_cmd env TMPDIR="$T" PATH="$WORK/d1/usr/bin:/usr/bin:/bin" strace -f -qq -o "$WORK/build-image.strace" \
	-e trace=open,openat,creat,mkdir,mkdirat,rename,renameat,renameat2,link,symlink \
	turninit-build-image --trusted-key "$ROOT/tests/vectors/test-trusted.pub" --tag localhost/turninit-pkgtest:tmpfiles \
	"$ROOT/build/turninit"
expect_rc 0
flat=$(grep -E "\"$T/[^/\"]+\"" "$WORK/build-image.strace" | grep -E 'O_CREAT|creat\(|rename|link\(|symlink' | head -n 3)
[[ -z $flat ]] || why "a file made directly in TMPDIR: $flat"
made=$(grep -cE "mkdir(at)?\(.*\"$T/turninit-build\.[A-Za-z0-9]{6}\", 0700\)" "$WORK/build-image.strace")
[[ $made -ge 1 ]] || why "no mkdir of a mode 0700 mktemp directory in TMPDIR seen"
left=$(ls -A "$T")
[[ -z $left ]] || why "left in TMPDIR: $left"
timeout 60 podman rmi localhost/turninit-pkgtest:tmpfiles >/dev/null 2>&1
end; fi

# LGPL-2.1 section 6: the kit relinks into a turninit that runs.
if begin p-relink-kit-links; then
K=$WORK/d1/usr/lib/turninit/relink
run_cmd musl-gcc -static -Wl,--gc-sections -o "$WORK/relinked" "$K"/*.o -L"$ROOT/build/musl/prefix/lib" \
	-lseccomp -lcap -lsodium -ljansson -lmbedtls -lmbedx509 -lmbedcrypto
expect_rc 0
run_cmd "$WORK/relinked" --version
expect_rc 0
expect_contains "relinked --version" "$OUT" "turninit version 0.1.0 - git."
# versions.txt names musl too: the source version of the host's musl-dev
grep -qx "musl $(dpkg-query -W -f='${source:Version}' musl-dev)" "$K/versions.txt" \
	|| why "versions.txt does not name musl-dev's source version: $(tr '\n' ' ' < "$K/versions.txt")"
end; fi

if begin p-install-strip; then
D=$WORK/d3
make_install "$D" install-strip PREFIX=/usr
run_cmd file "$D/usr/sbin/turninit"
expect_contains "file" "$OUT" "statically linked"
expect_contains "file" "$OUT" ", stripped"
# the build id stays: a debug-symbol package finds its binary by it
[[ $OUT == *"BuildID[sha1]=$(file "$ROOT/build/turninit.unstripped" | sed -n 's/.*BuildID\[sha1\]=\([0-9a-f]*\).*/\1/p')"* ]] \
	|| why "the stripped binary lost the build id"
end; fi

if begin p-uninstall-leaves-nothing; then
mkdir -p "$WORK/d1/usr/share/doc/turninit/third-party/other"
echo theirs > "$WORK/d1/usr/share/doc/turninit/third-party/other/copyright"
make_install "$WORK/d1" uninstall PREFIX=/usr
left=$(cd "$WORK/d1" && find . -type f | LC_ALL=C sort)
# what install did not put there stays
eq "files left after uninstall" "$left" "./usr/share/doc/turninit/third-party/other/copyright"
end; fi

# A packager's build: another folder, later, no network (a network namespace
# of its own: unshare -n), the dependencies given as MUSL_PREFIX, the commit
# as COMMIT (no .git there). It gives the same bytes as build/turninit.
if begin p-build-offline-reproducible; then
S=$WORK/src
mkdir -p "$S"
(cd "$ROOT" && git ls-files -z | tar --null -T - -cf -) | tar -C "$S" -xf - || why "copying the tracked files"
commit=$(sed -n 's/^#define TURNINIT_COMMIT "\(.*\)"$/\1/p' "$ROOT/build/gen/commit.h")
run_cmd timeout 300 unshare -n make --no-print-directory -C "$S" MUSL_PREFIX="$ROOT/build/musl/prefix" COMMIT="$commit"
expect_rc 0
eq "sha256 of the two builds" "$(sha256sum < "$S/build/turninit")" "$(sha256sum < "$ROOT/build/turninit")"
[[ ! -e $S/build/musl ]] || why "the build made build/musl although MUSL_PREFIX was given"
end; fi

# Two clones in two folders of different lengths, each building its own
# dependencies from Debian's source packages (as two packagers, or Debian's
# reproducible-builds check that varies the build path), give the same
# bytes, and neither names its folder. (Before: the libraries' assert(3)
# file names carried each build's path, and the bytes differed there.) Not in
# make check: `make repro` (PACKAGING_REPRO=1). Building every dependency
# again took 182 s with both cores of an idle machine busy, about a tenth of
# make check's processor time; make check keeps p-deps-name-no-build-path
# below, which fails on the same fault (docs/design.md, "Packaging").
if [[ ${PACKAGING_REPRO:-0} != 1 ]]; then
skip p-build-two-folders-own-deps "a second clone building its own dependencies: make repro"
elif begin p-build-two-folders-own-deps; then
# the dependencies built again: some 200 s alone, more beside other suites
limit 1500
S2=$WORK/another-folder-for-a-second-clone
mkdir -p "$S2"
(cd "$ROOT" && git ls-files -z | tar --null -T - -cf -) | tar -C "$S2" -xf - || why "copying the tracked files"
commit=$(sed -n 's/^#define TURNINIT_COMMIT "\(.*\)"$/\1/p' "$ROOT/build/gen/commit.h")
run_cmd timeout 1200 env -u MUSL_PREFIX make --no-print-directory -C "$S2" COMMIT="$commit"
expect_rc 0
[[ -e $S2/build/musl/prefix/lib/libseccomp.a ]] || why "the second clone did not build its own dependencies"
eq "sha256 of the two builds" "$(sha256sum < "$S2/build/turninit")" "$(sha256sum < "$ROOT/build/turninit")"
found=$(strings "$S2/build/turninit" | grep -F -e "$S2" -e "$ROOT" | head -n 3)
eq "build paths in the second build (strings)" "$found" ""
rm -rf "$S2"
end; fi

# The dependencies' archives name no folder of the machine that built them:
# every object in them, linked into turninit or not (.ci/musl-deps.sh maps the
# sources' folder away). The libraries' assert(3) file names carried it before.
# The host's archives (MUSL_PREFIX's when given, searched for its own build
# folder too: $(dirname PREFIX)/src/), and the aarch64 build's (musl's own
# too) when check-cross has made them.
if begin p-deps-name-no-build-path; then
prefixes=("${MUSL_PREFIX:-$ROOT/build/musl/prefix}")
[[ ! -d $ROOT/build/aarch64/musl/prefix/lib ]] || prefixes+=("$ROOT/build/aarch64/musl/prefix")
for DP in "${prefixes[@]}"; do
	n=0
	for a in "$DP"/lib/*.a; do
		[[ -e $a ]] || continue
		n=$((n + 1))
		found=$(strings -a "$a" | grep -F -e "$ROOT/" -e "$(dirname "$DP")/src/" -e "/build/musl/" | head -n 3)
		eq "build paths in ${DP#"$ROOT"/}/lib/$(basename "$a") (strings)" "$found" ""
	done
	((n >= 7)) || why "$n archives in $DP/lib, not the seven of the five dependencies"
done
end; fi

# The binary names no folder of the machine that built it: the libraries'
# assert(3) file names are mapped away (.ci/musl-deps.sh, -ffile-prefix-map).
if begin p-binary-names-no-build-path; then
found=$(strings "$BIN" | grep -F -e "$ROOT" -e "/build/musl/" | head -n 3)
eq "build paths in $BIN (strings)" "$found" ""
end; fi

# --- arm64, cross-built on x86_64 (make ARCH=aarch64; docs/packaging.md) ---------
# The aarch64 build of this tree (build/aarch64/: its dependencies and musl
# made from Debian's source packages once, then reused) is made when one of
# the aarch64 tests below is selected. Without the cross compiler, its kernel headers or
# qemu-user, each is skipped, saying what is missing.
A64=$ROOT/build/aarch64
A64_WHY=
if [[ $(uname -m) != x86_64 ]]; then
	A64_WHY="the aarch64 cross build is tested from x86_64 (this host is $(uname -m): its plain make is tested above)"
else
	for c in aarch64-linux-gnu-gcc qemu-aarch64-static; do
		command -v "$c" >/dev/null || A64_WHY+=" $c"
	done
	[[ -d /usr/aarch64-linux-gnu/include/asm ]] || A64_WHY+=" /usr/aarch64-linux-gnu/include/asm"
	[[ -z $A64_WHY ]] || A64_WHY="no$A64_WHY (make setup installs gcc-aarch64-linux-gnu, linux-libc-dev-arm64-cross and qemu-user-static)"
fi
a64_begin() { # a64_begin NAME: begin NAME, or skip it saying A64_WHY
	if [[ -n $A64_WHY ]]; then
		skip "$1" "$A64_WHY"
		return 1
	fi
	begin "$1"
}
A64_RC=0 A64_ERR=
a64_selected() { # any of the aarch64 tests below selected (ITEST_ONLY): their names read from this file
	local n
	for n in $(sed -n 's/^if a64_begin \(p-aarch64-[a-z0-9-]*\);.*/\1/p' "${BASH_SOURCE[0]}"); do
		selected "$n" && return 0
	done
	return 1
}
if [[ -z $A64_WHY ]] && a64_selected; then
	run_cmd timeout 1200 make --no-print-directory -C "$ROOT" -j"$(nproc)" ARCH=aarch64
	A64_RC=$RC A64_ERR=$ERR
fi
# Static, stripped, aarch64; it runs under qemu-user; no folder of this
# machine in it (the dependencies' and musl's sources are mapped away too).
if a64_begin p-aarch64-build; then
[[ $A64_RC -eq 0 ]] || why "make ARCH=aarch64 failed ($A64_RC): $(printf '%s' "$A64_ERR" | tail -n 5)"
run_cmd file "$A64/turninit"
expect_contains "file" "$OUT" "ELF 64-bit LSB executable, ARM aarch64"
expect_contains "file" "$OUT" "statically linked"
expect_contains "file" "$OUT" ", stripped"
run_cmd qemu-aarch64-static "$A64/turninit" --version
expect_rc 0
expect_contains "turninit --version under qemu-aarch64-static" "$OUT" "turninit version 0.1.0 - git."
found=$(strings "$A64/turninit.unstripped" | grep -F -e "$ROOT" -e "/build/aarch64/musl/" | head -n 3)
eq "build paths in build/aarch64/turninit.unstripped (strings)" "$found" ""
end; fi
# Reproducible, as p-build-offline-reproducible: the tracked files in another
# folder, no network, its dependencies given as MUSL_PREFIX: the same bytes.
if a64_begin p-aarch64-build-offline-reproducible; then
S3=$WORK/another-folder-aarch64
rm -rf "$S3"
mkdir -p "$S3"
(cd "$ROOT" && git ls-files -z | tar --null -T - -cf -) | tar -C "$S3" -xf - || why "copying the tracked files"
commit=$(sed -n 's/^#define TURNINIT_COMMIT "\(.*\)"$/\1/p' "$ROOT/build/gen/commit.h")
run_cmd timeout 600 unshare -n make --no-print-directory -C "$S3" -j"$(nproc)" ARCH=aarch64 \
	MUSL_PREFIX="$A64/musl/prefix" COMMIT="$commit"
expect_rc 0
eq "sha256 of the two aarch64 builds" "$(sha256sum < "$S3/build/aarch64/turninit")" "$(sha256sum < "$A64/turninit")"
[[ ! -e $S3/build/aarch64/musl ]] || why "the build made build/aarch64/musl although MUSL_PREFIX was given"
rm -rf "$S3"
end; fi
# make ARCH=aarch64 install: the files of the host's install, the binary
# build/aarch64/turninit.unstripped, the relink kit's objects aarch64 and
# its versions.txt naming musl at .ci/deps.lock's version (built from that
# source); the kit relinks with the aarch64 musl-gcc into a turninit that
# runs under qemu-user.
if a64_begin p-aarch64-install-and-relink; then
D=$WORK/d-a64
rm -rf "$D" "$WORK/d-host"
make_install "$D" install ARCH=aarch64 PREFIX=/usr
make_install "$WORK/d-host" install PREFIX=/usr
eq "installed files, against the host's install" "$(listing "$D")" "$(listing "$WORK/d-host")"
cmp -s "$D/usr/sbin/turninit" "$A64/turninit.unstripped" || why "usr/sbin/turninit is not build/aarch64/turninit.unstripped"
run_cmd file "$D/usr/sbin/turninit"
expect_contains "file" "$OUT" "ARM aarch64"
expect_contains "file" "$OUT" "not stripped"
K=$D/usr/lib/turninit/relink
other=$(for o in "$K"/*.o; do file -b "$o" | grep -q '^ELF 64-bit LSB relocatable, ARM aarch64' || basename "$o"; done)
eq "relink objects that are not aarch64" "$other" ""
pin=$(awk '$1 == "musl" { print $2 }' "$ROOT/.ci/deps.lock")
grep -qx "musl $pin" "$K/versions.txt" || why "versions.txt does not name musl $pin: $(tr '\n' ' ' < "$K/versions.txt")"
run_cmd "$A64/musl/prefix/bin/musl-gcc" -static -Wl,--gc-sections -o "$WORK/relinked-a64" "$K"/*.o \
	-L"$A64/musl/prefix/lib" -lseccomp -lcap -lsodium -ljansson -lmbedtls -lmbedx509 -lmbedcrypto
expect_rc 0
run_cmd qemu-aarch64-static "$WORK/relinked-a64" --version
expect_rc 0
expect_contains "relinked --version under qemu-aarch64-static" "$OUT" "turninit version 0.1.0 - git."
rm -rf "$WORK/d-host"
end; fi
# install-strip strips with aarch64-linux-gnu-strip (the host's strip cannot
# read an aarch64 binary), the build id kept.
if a64_begin p-aarch64-install-strip; then
D=$WORK/d-a64s
rm -rf "$D"
make_install "$D" install-strip ARCH=aarch64 PREFIX=/usr
run_cmd file "$D/usr/sbin/turninit"
expect_contains "file" "$OUT" "ARM aarch64"
expect_contains "file" "$OUT" ", stripped"
[[ $OUT == *"BuildID[sha1]=$(file "$A64/turninit.unstripped" | sed -n 's/.*BuildID\[sha1\]=\([0-9a-f]*\).*/\1/p')"* ]] \
	|| why "the stripped binary lost the build id"
end; fi

# No committed example carries an "expires" (or a --expires time) that will
# pass within a year: the quick start, the demos and the docs would stop
# working on that day (oci/seal.sh --expires sets it at sealing instead).
# Past times (examples of a refusal) and far ones stay.
if begin p-no-example-expires-within-a-year; then
found=$(cd "$ROOT" && git ls-files -z README.md docs oci clients | python3 -c '
import datetime, re, sys
now = datetime.datetime.now(datetime.timezone.utc)
soon = now + datetime.timedelta(days=365)
for path in sys.stdin.read().split("\0"):
    if not path:
        continue
    try:
        text = open(path, encoding="utf-8").read()
    except (UnicodeDecodeError, IsADirectoryError):
        continue
    # the "expires" of a manifest example, or a seal.sh --expires of a fixed time
    for m in re.finditer(r"(?:\"expires\"\s*:\s*\"|--expires\s+)(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z", text):
        try:
            t = datetime.datetime(*map(int, m.groups()), tzinfo=datetime.timezone.utc)
        except ValueError:
            continue
        if now < t <= soon:
            print(f"{path}: {m.group(0)}")')
eq "committed times that pass within a year" "$found" ""
end; fi

# --- images without buildah: oci/Containerfile and oci/Containerfile.seal -------------------
# build-image.sh makes the context; podman build makes the base image and
# seals a manifest signed with the minisign CLI; a turn runs in it.
IMG=localhost/turninit-pkgtest
LABEL=turninit-itest=$$
cleanup() {
	timeout 60 podman rmi -f "$IMG:base" "$IMG:sealed" >/dev/null 2>&1
}
trap cleanup EXIT
if begin p-containerfile-base-and-seal; then
C=$WORK/context
run_cmd sh "$ROOT/rootfs/build-image.sh" --trusted-key "$ROOT/tests/vectors/test-trusted.pub" \
	--context "$C" "$ROOT/build/turninit"
expect_rc 0
[[ -f $C/Containerfile && -x $C/root/sbin/turninit && -f $C/root/etc/turninit/trusted.pub ]] || why "the context lacks Containerfile, root/sbin/turninit or the key"
run_cmd timeout 300 podman build --pull=never -q -t "$IMG:base" -f "$C/Containerfile" \
	--build-arg VERSION=0.1.0 --build-arg REVISION=abc123 "$C"
expect_rc 0
run_cmd timeout 60 podman image inspect --format '{{index .Config.Labels "org.opencontainers.image.version"}} {{index .Config.Labels "org.opencontainers.image.revision"}} {{json .Config.Entrypoint}}' "$IMG:base"
expect_out $'0.1.0 abc123 ["/sbin/turninit"]\n'
HEAD_M='"turninit":1,"expires":"2099-01-01T00:00:00Z","user":{"uid":1000,"gid":1000},"home":"/home/agent","workdir":"/work"'
printf '{%s,"env":{"set":{"PATH":"/bin"}}}\n' "$HEAD_M" > "$WORK/m.json"
minisign -S -s "$ROOT/tests/vectors/test-trusted.key" -m "$WORK/m.json" -t "packaging test" </dev/null >/dev/null || why "minisign -S"
run_cmd timeout 300 podman build --pull=never -q -f "$ROOT/oci/Containerfile.seal" -t "$IMG:sealed" \
	--build-arg BASE="$IMG:base" --build-arg TURNINIT_MANIFEST="$(base64 -w0 "$WORK/m.json")" \
	--build-arg TURNINIT_MANIFEST_SIG="$(base64 -w0 "$WORK/m.json.minisig")" "$WORK"
expect_rc 0
run_cmd timeout 60 podman run --rm --pull never --network none --label "$LABEL" \
	--tmpfs /home/agent:rw,mode=0700,size=64m,U "$IMG:sealed" 'echo "hello from $(id -u)"; env'
expect_rc 0
expect_out $'hello from 1000\nPWD=/work\nHOME=/home/agent\nSHLVL=0\nPATH=/bin\n_=/bin/env\n'
expect_err ""
end; fi
# Sealing again under the same tag removes the image it replaced only where
# that tag was its one name: another name the user gave it keeps it.
if begin p-seal-keeps-an-image-the-user-named; then
run_cmd timeout 60 podman tag "$IMG:sealed" "$IMG:users-own"
expect_rc 0
printf '{%s,"env":{"set":{"PATH":"/bin:/usr/bin"}}}\n' "$HEAD_M" > "$WORK/m2.json"
run_cmd sh "$ROOT/oci/seal.sh" --image "$IMG:base" --manifest "$WORK/m2.json" \
	--key "$ROOT/tests/vectors/test-trusted.key" --tag "$IMG:sealed" --trusted-comment "packaging test 2"
expect_rc 0
timeout 60 podman image exists "$IMG:users-own" || why "seal.sh removed $IMG:users-own, the image its tag named before"
timeout 60 podman rmi -f "$IMG:users-own" >/dev/null 2>&1
end; fi

# --- sealing one base twice, with two manifests (issue 46) ---------------------------
# Each documented path makes an image that holds the manifest it was given.
# Before, the second `podman build -f oci/Containerfile.seal` printed `Using
# cache` at its ENV step (podman 4.3 keys that step on its text, not on the
# build arguments' values) and made an image with the first manifest, signed
# and accepted: a tightened policy shipped as the looser one.
RESEAL_HEAD='"turninit":1,"expires":"2099-01-01T00:00:00Z","user":{"uid":1000,"gid":1000},"home":"/home/agent","workdir":"/work"'
# reseal_base: $IMG:base, made as p-containerfile-base-and-seal makes it,
# when it is not there (a test selected on its own).
reseal_base() {
	timeout 60 podman image exists "$IMG:base" && return 0
	sh "$ROOT/rootfs/build-image.sh" --trusted-key "$ROOT/tests/vectors/test-trusted.pub" \
		--context "$WORK/reseal-context" "$ROOT/build/turninit" >/dev/null 2>&1 &&
		timeout 300 podman build --pull=never -q -t "$IMG:base" -f "$WORK/reseal-context/Containerfile" \
			"$WORK/reseal-context" >/dev/null 2>&1 || why "could not build $IMG:base"
}
# reseal_manifest NAME PATH: $WORK/NAME.json, a manifest whose env.set.PATH
# is PATH, signed ($WORK/NAME.json.minisig).
reseal_manifest() {
	printf '{%s,"env":{"set":{"PATH":"%s"}}}\n' "$RESEAL_HEAD" "$2" > "$WORK/$1.json"
	minisign -S -s "$ROOT/tests/vectors/test-trusted.key" -m "$WORK/$1.json" -t "packaging test $1" \
		</dev/null >/dev/null || why "minisign -S $1.json"
}
# seal_check TAG NAME: docs/packaging.md's check that TAG holds $WORK/NAME.json
# and its signature byte for byte, run as written but for the tag and the
# file names (the block between its markers). Sets RC, OUT and ERR.
seal_check() {
	local block
	block=$(sed -n '/^<!-- seal check/,/^<!-- end of seal check -->/{/^    /s/^    //p}' "$ROOT/docs/packaging.md")
	[[ -n $block ]] || why "docs/packaging.md has no seal check between its markers"
	block=${block//localhost\/agent-turn:1/$1}
	block=${block//manifest.json/$2.json}
	run_cmd env -C "$WORK" timeout 120 bash -e -c "$block"
	CMD="docs/packaging.md's seal check of $1 against $2.json"
}
# sealed_as TAG NAME: TAG's config Env holds $WORK/NAME.json and its
# signature byte for byte (seal_check), and verify in TAG shows that
# manifest's PATH.
sealed_as() {
	seal_check "$1" "$2"
	expect_rc 0
	expect_out ""
	expect_err ""
	run_cmd timeout 60 podman run --rm --pull never --network none --label "$LABEL" \
		--tmpfs /home/agent:rw,mode=0700,size=64m,U "$1" verify
	expect_rc 0
	eq "verify in $1: the manifest's PATH" "$(printf '%s' "$OUT" | python3 -c 'import json, sys; print(json.load(sys.stdin)["manifest"]["env"]["set"]["PATH"])' 2>&1)" \
		"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["env"]["set"]["PATH"])' "$WORK/$2.json")"
}
# seal_by_recipe TAG NAME: podman build -f oci/Containerfile.seal, as
# docs/packaging.md gives it, sealing $WORK/NAME.json into $IMG:base.
seal_by_recipe() {
	run_cmd timeout 300 podman build --pull=never -f "$ROOT/oci/Containerfile.seal" -t "$1" \
		--build-arg BASE="$IMG:base" --build-arg TURNINIT_MANIFEST="$(base64 -w0 "$WORK/$2.json")" \
		--build-arg TURNINIT_MANIFEST_SIG="$(base64 -w0 "$WORK/$2.json.minisig")" "$ROOT/oci"
	expect_rc 0
	[[ $OUT != *"Using cache"* ]] || echo "# $1: $(printf '%s' "$OUT" | grep -c 'Using cache') steps from the cache"
}
if begin p-containerfile-seal-twice; then
reseal_base
reseal_manifest twice-loose /bin:/usr/bin:/usr/local/bin
reseal_manifest twice-tight /bin
seal_by_recipe "$IMG:twice-loose" twice-loose
seal_by_recipe "$IMG:twice-tight" twice-tight
sealed_as "$IMG:twice-loose" twice-loose
sealed_as "$IMG:twice-tight" twice-tight
# and back: the first manifest again, from the cache or not, is the first's
seal_by_recipe "$IMG:twice-again" twice-loose
sealed_as "$IMG:twice-again" twice-loose
timeout 60 podman rmi -f "$IMG:twice-loose" "$IMG:twice-tight" "$IMG:twice-again" >/dev/null 2>&1
end; fi
# docs/packaging.md's check fails on an image that kept another manifest:
# made here by the recipe as it was (the ENV step alone, which podman 4.3
# takes from its cache whatever the arguments), sealed twice.
if begin p-containerfile-seal-check-catches-stale; then
reseal_base
reseal_manifest stale-first /bin:/usr/bin
reseal_manifest stale-second /bin
# shellcheck disable=SC2016 # the Containerfile's own ${ARG}
printf '%s\n' 'ARG BASE' 'FROM ${BASE}' 'ARG TURNINIT_MANIFEST' 'ARG TURNINIT_MANIFEST_SIG' \
	'ENV TURNINIT_MANIFEST=${TURNINIT_MANIFEST} TURNINIT_MANIFEST_SIG=${TURNINIT_MANIFEST_SIG}' > "$WORK/Containerfile.env-only"
for n in stale-first stale-second; do
	run_cmd timeout 300 podman build --pull=never -q -f "$WORK/Containerfile.env-only" -t "$IMG:$n" \
		--build-arg BASE="$IMG:base" --build-arg TURNINIT_MANIFEST="$(base64 -w0 "$WORK/$n.json")" \
		--build-arg TURNINIT_MANIFEST_SIG="$(base64 -w0 "$WORK/$n.json.minisig")" "$WORK"
	expect_rc 0
done
seal_check "$IMG:stale-second" stale-second
if [[ $RC -eq 0 ]]; then
	# an engine that keys ENV on the values kept nothing stale: nothing to catch
	echo "# podman's cache kept no stale manifest here"
	run_cmd timeout 60 podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$IMG:stale-second"
	expect_contains "config Env" "$OUT" "TURNINIT_MANIFEST=$(base64 -w0 "$WORK/stale-second.json")"$'\n'
else
	expect_rc 1
	expect_contains "the check's stdout" "$OUT" " differ: "
fi
timeout 60 podman rmi -f "$IMG:stale-first" "$IMG:stale-second" >/dev/null 2>&1
end; fi
# oci/seal.sh, twice on one base with two manifests: each image its own.
if begin p-seal-sh-twice; then
reseal_base
reseal_manifest sh-loose /bin:/usr/bin:/usr/local/bin
reseal_manifest sh-tight /bin
for n in sh-loose sh-tight; do
	run_cmd sh "$ROOT/oci/seal.sh" --image "$IMG:base" --manifest "$WORK/$n.json" \
		--key "$ROOT/tests/vectors/test-trusted.key" --tag "$IMG:$n" --trusted-comment "packaging test $n"
	expect_rc 0
	# seal.sh signs a copy itself: the signature the check compares is the image's
	timeout 60 podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$IMG:$n" \
		| sed -n 's/^TURNINIT_MANIFEST_SIG=//p' | base64 -d > "$WORK/$n.json.minisig"
done
sealed_as "$IMG:sh-loose" sh-loose
sealed_as "$IMG:sh-tight" sh-tight
timeout 60 podman rmi -f "$IMG:sh-loose" "$IMG:sh-tight" >/dev/null 2>&1
end; fi
# seal.sh reads the image back: a buildah whose config seals another
# manifest than the one given (as a stale cache would) makes seal.sh fail,
# and the tag names no image.
if begin p-seal-sh-refuses-image-not-signed; then
reseal_base
reseal_manifest other-given /bin
reseal_manifest other-stale /bin:/usr/bin
mkdir -p "$WORK/stale-buildah"
cat > "$WORK/stale-buildah/buildah" <<'SHIM'
#!/bin/bash
# buildah, but its config seals the manifest of $RESEAL_STALE
args=()
for a in "$@"; do
	[[ $a == TURNINIT_MANIFEST=* ]] && a=TURNINIT_MANIFEST=$RESEAL_STALE
	args+=("$a")
done
exec /usr/bin/buildah "${args[@]}"
SHIM
chmod 0755 "$WORK/stale-buildah/buildah"
timeout 60 podman rmi -f "$IMG:other" >/dev/null 2>&1
run_cmd env PATH="$WORK/stale-buildah:$PATH" RESEAL_STALE="$(base64 -w0 "$WORK/other-stale.json")" \
	sh "$ROOT/oci/seal.sh" --image "$IMG:base" --manifest "$WORK/other-given.json" \
	--key "$ROOT/tests/vectors/test-trusted.key" --tag "$IMG:other" --trusted-comment "packaging test other"
expect_rc 1
expect_err "seal: $IMG:other: TURNINIT_MANIFEST in the image config Env is not the manifest.json signed, so $IMG:other is not made"$'\n'
timeout 60 podman image exists "$IMG:other" && why "$IMG:other was made"
end; fi

results
