#!/bin/sh
# musl-deps.sh - build static musl copies of libseccomp, libcap, libsodium and
# jansson from Debian's source packages (`apt-get source`, debian/patches applied)
# into a private prefix. Called by the Makefile; nothing here is committed output.
#
# usage: musl-deps.sh WORKDIR [ARCH]
#   WORKDIR/prefix/{include,lib}  the result (lib*.a and headers)
#   WORKDIR/versions.txt          the Debian source versions that were built, and
#                                 musl's (also in prefix/, for a MUSL_PREFIX given to make)
#   WORKDIR/prefix/share/licenses/NAME/copyright   each one's licence (debian/copyright)
# ARCH (x86_64 or aarch64; default the host's, uname -m): another architecture
# than the host's is a cross build: musl itself is then built first, from
# Debian's musl source package, with CROSS_COMPILE=ARCH-linux-gnu- into the
# prefix, and the libraries use the musl-gcc wrapper its `make install` writes
# there (prefix/bin/musl-gcc). On the host's architecture musl is Debian's
# musl-tools and musl-dev, as installed.
#
# usage: musl-deps.sh --cmocka WORKDIR CC
#   WORKDIR/cmocka/{include,lib}  cmocka (Debian's source package) built with
#   CC, a musl-gcc, and cmake: the unit tests of a cross build (make ARCH=aarch64
#   unit). Test only: never linked into turninit, not in versions.txt.
#
# The versions come from .ci/deps.lock. Facts of Debian 12 this script relies
# on (docs/design.md, "Build"):
# - musl-gcc's specs use -nostdinc: the kernel UAPI headers are exposed through
#   the prefix by symlinks (the host's /usr/include, or a cross build's
#   /usr/ARCH-linux-gnu/include of linux-libc-dev-DEBARCH-cross);
#   -L/usr/lib/x86_64-linux-gnu must never be added.
# - deb-src is enabled with a private APT_CONFIG; /etc/apt is not touched.
# - libsodium and jansson tarballs ship no configure (autoreconf -fi); libseccomp
#   needs gperf; libcap has its own Makefile.
set -eu
CMOCKA=0
if [ "${1:-}" = --cmocka ]; then
	CMOCKA=1
	shift
fi
W=${1:?usage: musl-deps.sh WORKDIR [ARCH] | musl-deps.sh --cmocka WORKDIR CC}
mkdir -p "$W"
W=$(cd "$W" && pwd)
P=$W/prefix
JOBS=$(nproc)
CFLAGS_DEPS="-Os -fstack-protector-strong -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables"
T0=$(date +%s)
say() { echo "deps: [$(( $(date +%s) - T0 ))s] $*"; }
fail_log() { echo "deps: FAILED: $1"; tail -30 "$2"; exit 1; }
LOCK=$(dirname "$0")/deps.lock
lock_version() { # lock_version NAME: its version in .ci/deps.lock
	v=$(awk -v n="$1" '$1 == n { print $2 }' "$LOCK")
	[ -n "$v" ] || { echo "deps: FAILED: $1 is not in $LOCK" >&2; exit 1; }
	echo "$v"
}

# The private deb-src configuration: APT_CONFIG=$A/apt.conf.
apt_config() {
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
}

# apt_source DIR NAME...: each NAME's source at the version of .ci/deps.lock
# into DIR; the archive's own where it has dropped one.
apt_source() {
	dir=$1
	shift
	: > "$W/apt-source.log"
	for name in "$@"; do
		want=$(lock_version "$name")
		say "apt-get source $name=$want"
		if ! ( cd "$dir" && APT_CONFIG=$A/apt.conf apt-get source "$name=$want" ) >>"$W/apt-source.log" 2>&1; then
			say "WARNING: apt-get source $name=$want (.ci/deps.lock) failed (a security update replaced it, or the archive is not reachable): trying the archive's version"
			( cd "$dir" && APT_CONFIG=$A/apt.conf apt-get source "$name" ) >>"$W/apt-source.log" 2>&1 \
				|| fail_log "apt-get source $name" "$W/apt-source.log"
		fi
	done
}

if [ "$CMOCKA" -eq 1 ]; then
	CC=${2:?usage: musl-deps.sh --cmocka WORKDIR CC}
	command -v cmake >/dev/null || { echo "deps: FAILED: cmocka needs cmake (apt-get install cmake; make setup installs it)"; exit 1; }
	C=$W/cmocka
	rm -rf "$C" "$W/cmocka-src" "$W/cmocka-build"
	mkdir -p "$C/include" "$C/lib" "$W/cmocka-src" "$W/cmocka-build"
	apt_config
	apt_source "$W/cmocka-src" cmocka
	# The static library only (cmocka-static; its shared one needs a libc.so
	# a static musl prefix has not), without its examples and tests; the
	# compiler is a musl-gcc of the other architecture: CMAKE_SYSTEM_NAME
	# tells cmake it cross-compiles, so it runs nothing it built.
	# -D__WORDSIZE=64: cmocka.h takes __WORDSIZE from glibc and guesses 32
	# without it off x86_64, then typedefs uintptr_t as unsigned int, which
	# musl's stdint.h contradicts on aarch64 (the unit tests pass it too).
	say "cmocka (cmake, CC=$CC)"
	( cd "$W/cmocka-build" && cmake "$(echo "$W"/cmocka-src/cmocka-[0-9]*)" -DCMAKE_SYSTEM_NAME=Linux \
		-DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=None \
		-DCMAKE_C_FLAGS="-O2 -D__WORDSIZE=64 -ffile-prefix-map=$W/cmocka-src/=" \
		-DWITH_STATIC_LIB=ON -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF && make -j"$JOBS" cmocka-static ) \
		>"$W/cmocka.log" 2>&1 || fail_log "cmocka" "$W/cmocka.log"
	lib=$(find "$W/cmocka-build" -name 'libcmocka*.a' | head -n 1)
	[ -n "$lib" ] || fail_log "cmocka: no static library built" "$W/cmocka.log"
	install -m 0644 "$lib" "$C/lib/libcmocka.a"
	install -m 0644 "$(echo "$W"/cmocka-src/cmocka-[0-9]*)/include/cmocka.h" "$C/include/cmocka.h"
	v=$(sed -n 's/^Version: //p' "$W"/cmocka-src/*.dsc)
	rm -rf "$W/cmocka-src" "$W/cmocka-build"
	say "done: cmocka $v in $C"
	exit 0
fi

HOST=$(uname -m)
ARCH=${2:-$HOST}
case $ARCH in
x86_64) DEBARCH=amd64 ;;
aarch64) DEBARCH=arm64 ;;
*) echo "deps: FAILED: ARCH=$ARCH: x86_64 or aarch64 only"; exit 1 ;;
esac
TRIPLET=$ARCH-linux-gnu
if [ "$ARCH" = "$HOST" ]; then
	CROSS=
	MUSL_GCC=musl-gcc
	UAPI=/usr/include
	UAPI_ASM=/usr/include/$TRIPLET/asm
else
	CROSS=$TRIPLET-
	MUSL_GCC=$P/bin/musl-gcc
	UAPI=/usr/$TRIPLET/include
	UAPI_ASM=$UAPI/asm
	command -v "${CROSS}gcc" >/dev/null \
		|| { echo "deps: FAILED: ${CROSS}gcc not found (apt-get install gcc-$(echo "$TRIPLET" | tr _ -))"; exit 1; }
	[ -d "$UAPI_ASM" ] \
		|| { echo "deps: FAILED: no $UAPI_ASM, the kernel headers of $ARCH (apt-get install linux-libc-dev-$DEBARCH-cross)"; exit 1; }
fi

rm -rf "$P" "$W/src" "$W/build"
mkdir -p "$P/include" "$P/lib" "$W/src" "$W/build"

apt_config
# musl's source only for a cross build; on the host's architecture its
# source version is musl-dev's, named in versions.txt below.
apt_source "$W/src" libseccomp libcap2 libsodium jansson mbedtls ${CROSS:+musl}
grep -h '^Version:' "$W"/src/*.dsc >/dev/null
for d in "$W"/src/*.dsc; do
	printf '%s %s\n' "$(sed -n 's/^Source: //p' "$d")" "$(sed -n 's/^Version: //p' "$d")"
done > "$W/versions.txt"
if [ -z "$CROSS" ]; then
	v=$(dpkg-query -W -f='${source:Version}' musl-dev 2>/dev/null) \
		|| { echo "deps: FAILED: musl-dev is not installed (apt-get install musl-tools)"; exit 1; }
	pin=$(lock_version musl)
	[ "$v" = "$pin" ] \
		|| say "WARNING: the host's musl-dev is $v, .ci/deps.lock names musl $pin (what a cross build builds)"
	echo "musl $v" >> "$W/versions.txt"
fi
cp "$W/versions.txt" "$P/versions.txt"

# The sources' folder mapped away: the libraries' assert(3) messages name
# their files, which would otherwise carry this build's absolute path into
# turninit (a packager's path in the binary; two folders, two binaries).
MAP_SRC="-ffile-prefix-map=$W/src/="

if [ -n "$CROSS" ]; then
	# As debian/rules builds it (Debian's fts added to libc, -O2 and the
	# stack protector of its hardening flags; no -g: Debian strips libc.a),
	# static only, into the prefix; make install writes prefix/bin/musl-gcc
	# and its specs (prefix/lib/musl-gcc.specs), which name the prefix.
	m=$(echo "$W"/src/musl-[0-9]*)
	say "musl (CROSS_COMPILE=$CROSS)"
	mkdir -p "$m/src/fts" "$W/build/musl"
	cp "$m/debian/musl-fts/fts.c" "$m/debian/musl-fts/config.h" "$m/src/fts/"
	cp "$m/debian/musl-fts/fts.h" "$m/include/"
	( cd "$W/build/musl" && "$m/configure" CROSS_COMPILE="$CROSS" CFLAGS="-O2 -fstack-protector-strong $MAP_SRC" \
		--prefix="$P" --disable-shared --enable-wrapper=gcc && make -j"$JOBS" && make install ) \
		>"$W/build/musl.log" 2>&1 || fail_log "musl" "$W/build/musl.log"
	[ -x "$MUSL_GCC" ] || fail_log "musl: no $MUSL_GCC after make install" "$W/build/musl.log"
fi

ln -sfn "$UAPI/linux" "$P/include/linux"
ln -sfn "$UAPI_ASM" "$P/include/asm"
ln -sfn "$UAPI/asm-generic" "$P/include/asm-generic"

autobuild() { # srcdir name configure-args...
	src=$1 name=$2
	shift 2
	b=$W/build/$name
	mkdir -p "$b"
	( cd "$b" && "$src/configure" CC="$MUSL_GCC" CFLAGS="$CFLAGS_DEPS $MAP_SRC" \
		CPPFLAGS="-isystem $P/include" --prefix="$P" --enable-static \
		--disable-shared ${CROSS:+--host=$TRIPLET} "$@" && make -j"$JOBS" && make install ) \
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

# CROSS_COMPILE for its ar and ranlib; BUILD_CC builds its generator, run here.
say "libcap (own Makefile)"
make -C "$(echo "$W"/src/libcap2-[0-9]*)/libcap" CC="$MUSL_GCC" BUILD_CC=gcc ${CROSS:+CROSS_COMPILE=$CROSS} \
	COPTS="$CFLAGS_DEPS $MAP_SRC" SHARED=no PAM_CAP=no GOLANG=no PTHREADS=no \
	prefix="$P" lib=lib libcap.a install-static-cap >"$W/build/libcap.log" 2>&1 \
	|| fail_log "libcap" "$W/build/libcap.log"

# mbedTLS, for the credential gateway's TLS client only (docs/design.md,
# "The TLS library"): its three static libraries and headers, built with a
# configuration of its own (.ci/mbedtls-config.sh: TLS 1.2 client, X.509
# parsing, the AEAD suites; no server, DTLS, PSA or legacy cipher) and
# CFLAGS_DEPS's sections, so that what the gateway does not call is not linked.
say "mbedTLS (own Makefile, configured by .ci/mbedtls-config.sh)"
mb=$(echo "$W"/src/mbedtls-[0-9]*)
sh "$(dirname "$0")/mbedtls-config.sh" "$mb" >"$W/build/mbedtls-config.log" 2>&1 \
	|| fail_log "mbedTLS configuration" "$W/build/mbedtls-config.log"
make -C "$mb/library" -j"$JOBS" CC="$MUSL_GCC" AR="${CROSS}ar" \
	CFLAGS="$CFLAGS_DEPS $MAP_SRC" static >"$W/build/mbedtls.log" 2>&1 \
	|| fail_log "mbedTLS" "$W/build/mbedtls.log"
mkdir -p "$P/include/mbedtls"
install -m 0644 "$mb"/include/mbedtls/*.h "$P/include/mbedtls/" \
	&& install -m 0644 "$mb/library/libmbedtls.a" "$mb/library/libmbedx509.a" "$mb/library/libmbedcrypto.a" "$P/lib/" \
	|| { echo "deps: FAILED: installing mbedTLS"; exit 1; }

# The licences of what is linked in (debian/copyright of each source, musl's
# among them in a cross build), which make install puts under DOCDIR; on the
# host's architecture musl's comes from the musl-dev package.
for c in "$W"/src/*/debian/copyright; do
	d=$(basename "$(dirname "$(dirname "$c")")")
	install -D -m 0644 "$c" "$P/share/licenses/${d%%-[0-9]*}/copyright" || { echo "deps: FAILED: copying $c"; exit 1; }
done
if [ -z "$CROSS" ]; then
	install -D -m 0644 /usr/share/doc/musl-dev/copyright "$P/share/licenses/musl/copyright" \
		|| { echo "deps: FAILED: copying musl's copyright (the musl-dev package)"; exit 1; }
fi

rm -rf "$W/src" "$W/build"
say "done: $(cat "$W/versions.txt" | tr '\n' ' ')"
