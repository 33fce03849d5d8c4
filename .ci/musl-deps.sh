#!/bin/sh
# musl-deps.sh - build static musl copies of libseccomp, libcap, libsodium and
# jansson from Debian's source packages (`apt-get source`, debian/patches applied)
# into a private prefix. Called by the Makefile; nothing here is committed output.
#
# usage: musl-deps.sh WORKDIR
#   WORKDIR/prefix/{include,lib}  the result (lib*.a and headers)
#   WORKDIR/versions.txt          the Debian source versions that were built (also
#                                 in prefix/, for a MUSL_PREFIX given to make)
#   WORKDIR/prefix/share/licenses/NAME/copyright   each one's licence (debian/copyright)
# Facts of Debian 12 this script relies on (docs/design.md, "Build"):
# - musl-gcc's specs use -nostdinc: the kernel UAPI headers are exposed through
#   the prefix by symlinks; -L/usr/lib/x86_64-linux-gnu must never be added.
# - deb-src is enabled with a private APT_CONFIG; /etc/apt is not touched.
# - libsodium and jansson tarballs ship no configure (autoreconf -fi); libseccomp
#   needs gperf; libcap has its own Makefile.
set -eu
W=${1:?usage: musl-deps.sh WORKDIR}
mkdir -p "$W"
W=$(cd "$W" && pwd)
P=$W/prefix
JOBS=$(nproc)
CFLAGS_DEPS="-Os -fstack-protector-strong -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables"
T0=$(date +%s)
say() { echo "deps: [$(( $(date +%s) - T0 ))s] $*"; }
fail_log() { echo "deps: FAILED: $1"; tail -30 "$2"; exit 1; }

rm -rf "$P" "$W/src" "$W/build"
mkdir -p "$P/include" "$P/lib" "$W/src" "$W/build"

say "private deb-src configuration"
A=$W/apt
mkdir -p "$A/sources.d" "$A/lists/partial" "$A/cache/archives/partial"
: > "$A/sources.d/debian-src.sources"
for f in /etc/apt/sources.list.d/*.sources; do
	[ -e "$f" ] || continue
	awk 'BEGIN{RS="";ORS="\n\n"} /(^|\n)Types:[^\n]*deb/ && /(^|\n)URIs:[^\n]*debian/ && !/(^|\n)Enabled:[ \t]*no/ {
	     sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" >> "$A/sources.d/debian-src.sources"
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ -e "$f" ] || continue
	sed -n 's/^[[:space:]]*deb\([[:space:]].*debian.*\)$/deb-src\1/p' "$f"
done > "$A/sources.d/debian-src.list"
: > "$A/none.list"
cat > "$A/apt.conf" <<EOC
Dir::Etc::SourceList "$A/none.list";
Dir::Etc::SourceParts "$A/sources.d";
Dir::State::Lists "$A/lists";
Dir::Cache "$A/cache";
EOC
APT_CONFIG=$A/apt.conf apt-get update >"$W/apt-update.log" 2>&1 || fail_log "apt-get update (deb-src)" "$W/apt-update.log"

# The versions of .ci/deps.lock; the archive's own where it has dropped one.
LOCK=$(dirname "$0")/deps.lock
: > "$W/apt-source.log"
for name in libseccomp libcap2 libsodium jansson; do
	want=$(awk -v n="$name" '$1 == n { print $2 }' "$LOCK")
	[ -n "$want" ] || { echo "deps: FAILED: $name is not in $LOCK"; exit 1; }
	say "apt-get source $name=$want"
	if ! ( cd "$W/src" && APT_CONFIG=$A/apt.conf apt-get source "$name=$want" ) >>"$W/apt-source.log" 2>&1; then
		say "WARNING: apt-get source $name=$want (.ci/deps.lock) failed (a security update replaced it, or the archive is not reachable): trying the archive's version"
		( cd "$W/src" && APT_CONFIG=$A/apt.conf apt-get source "$name" ) >>"$W/apt-source.log" 2>&1 \
			|| fail_log "apt-get source $name" "$W/apt-source.log"
	fi
done
grep -h '^Version:' "$W"/src/*.dsc >/dev/null
for d in "$W"/src/*.dsc; do
	printf '%s %s\n' "$(sed -n 's/^Source: //p' "$d")" "$(sed -n 's/^Version: //p' "$d")"
done > "$W/versions.txt"
cp "$W/versions.txt" "$P/versions.txt"

ln -sfn /usr/include/linux "$P/include/linux"
ln -sfn /usr/include/x86_64-linux-gnu/asm "$P/include/asm"
ln -sfn /usr/include/asm-generic "$P/include/asm-generic"

# The sources' folder mapped away: the libraries' assert(3) messages name
# their files, which would otherwise carry this build's absolute path into
# turninit (a packager's path in the binary; two folders, two binaries).
MAP_SRC="-ffile-prefix-map=$W/src/="

autobuild() { # srcdir name configure-args...
	src=$1 name=$2
	shift 2
	b=$W/build/$name
	mkdir -p "$b"
	( cd "$b" && "$src/configure" CC=musl-gcc CFLAGS="$CFLAGS_DEPS $MAP_SRC" \
		CPPFLAGS="-isystem $P/include" --prefix="$P" --enable-static \
		--disable-shared "$@" && make -j"$JOBS" && make install ) \
		>"$b.log" 2>&1 || fail_log "$name" "$b.log"
}

say "libseccomp"
autobuild "$(echo "$W"/src/libseccomp-[0-9]*)" libseccomp

say "libsodium (autoreconf, --enable-minimal)"
( cd "$W"/src/libsodium-[0-9]* && autoreconf -fi ) >"$W/build/sodium-autoreconf.log" 2>&1 \
	|| fail_log "libsodium autoreconf" "$W/build/sodium-autoreconf.log"
autobuild "$(echo "$W"/src/libsodium-[0-9]*)" libsodium --enable-minimal

say "jansson (autoreconf)"
( cd "$W"/src/jansson-[0-9]* && autoreconf -fi ) >"$W/build/jansson-autoreconf.log" 2>&1 \
	|| fail_log "jansson autoreconf" "$W/build/jansson-autoreconf.log"
autobuild "$(echo "$W"/src/jansson-[0-9]*)" jansson

say "libcap (own Makefile)"
make -C "$(echo "$W"/src/libcap2-[0-9]*)/libcap" CC=musl-gcc BUILD_CC=gcc \
	COPTS="$CFLAGS_DEPS $MAP_SRC" SHARED=no PAM_CAP=no GOLANG=no PTHREADS=no \
	prefix="$P" lib=lib libcap.a install-static-cap >"$W/build/libcap.log" 2>&1 \
	|| fail_log "libcap" "$W/build/libcap.log"

# The licences of what is linked in (debian/copyright of each source), which
# make install puts under DOCDIR; musl's comes from the musl-dev package.
for c in "$W"/src/*/debian/copyright; do
	d=$(basename "$(dirname "$(dirname "$c")")")
	install -D -m 0644 "$c" "$P/share/licenses/${d%%-[0-9]*}/copyright" || { echo "deps: FAILED: copying $c"; exit 1; }
done
install -D -m 0644 /usr/share/doc/musl-dev/copyright "$P/share/licenses/musl/copyright" \
	|| { echo "deps: FAILED: copying musl's copyright (the musl-dev package)"; exit 1; }

rm -rf "$W/src" "$W/build"
say "done: $(cat "$W/versions.txt" | tr '\n' ' ')"
