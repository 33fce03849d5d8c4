#!/bin/bash
# arm64.sh - the arm64 image and turninit for aarch64 on this x86_64 host
# (`make arm64`): rootfs/build-image.sh --arch arm64, oci/seal.sh on its
# image, `podman run --arch arm64` under qemu-user, and the multi-architecture
# manifest list of the base image.
#
# What it holds:
# - the arm64 image: its root's turninit, bash and busybox are static aarch64
#   ELF binaries (bash-static and busybox-static of Debian's arm64 archive),
#   the applet links are there, the config says arm64, and a second build of
#   the same root is "up to date" (the tar is reproducible); a binary of the
#   other architecture is refused before anything is built, either way;
# - the amd64 image is what it was: with and without --arch amd64 the same
#   root digest, bash and busybox the host's own bytes;
# - under qemu-user (Debian 12's qemu 7.2, binfmt), which refuses
#   prctl(PR_SET_SECCOMP) and seccomp(2) and has no Landlock: turninit fails
#   closed. A turn is refused, exit 125, one line naming seccomp, and the
#   command never ran (the file it would make is not there), in one-shot,
#   serve and non-root mode alike; verify exits 125 with the same line and
#   claims no layer qemu cannot give (a policy it prints must name seccomp,
#   the subreaper and Landlock ABI 0 as missing; today it prints none);
#   oci/seal.sh, whose check is that verify, refuses to seal there with
#   turninit's line, and oci/Containerfile.seal seals without it;
# - the manifest list (build-image.sh --manifest-list): two entries, amd64 and
#   arm64, each entry's image holding a /sbin/turninit of its architecture
#   (`file` on the binary taken out of it), and `podman manifest push --all`
#   to an OCI layout carries both.
#
# Host first: a binfmt_misc entry for aarch64 ELF, enabled, with the F flag
# (the interpreter opened when registered, so that it runs inside a
# container's root, which has no qemu) - without one every test that runs
# aarch64 code is skipped, saying why; likewise without the aarch64 turninit
# (build/aarch64/turninit, `make ARCH=aarch64`; ITEST_ARM64_BINARY=PATH for
# another). The arm64 packages come from Debian's archive (apt-get, the
# network) at the first run, then from build/apt-arm64.
#
# podman and buildah use a container store of the suite's own
# (CONTAINERS_STORAGE_CONF), removed at the end: podman 4.3 cannot list or
# prune images while a manifest list with an image of the host's platform is
# in the store (containers/podman#19757), and the shared store must never
# hold one. ITEST_ONLY=REGEX, ITEST_BINARY=PATH (the amd64 turninit) as in
# every suite.
# shellcheck disable=SC2016 # '$X' is literal: it runs in the container
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
suite_open arm64 a64test "rootful podman, a container store of its own, podman image mount" \
	podman buildah minisign file jq timeout python3 apt-get dpkg-deb
ARM_BIN=${ITEST_ARM64_BINARY:-$ROOT/build/aarch64/turninit}
IMG=localhost/turninit-a64test
T0=$(now_ms)

# --- a container store of the suite's own -----------------------------------------------
export CONTAINERS_STORAGE_CONF=$WORK/storage.conf
cat > "$CONTAINERS_STORAGE_CONF" <<EOF
[storage]
driver = "overlay"
graphroot = "$WORK/store"
runroot = "$WORK/runroot"
EOF
cleanup() {
	cleanup_containers
	timeout 60 podman manifest rm "$IMG:list" >/dev/null 2>&1
	timeout 120 podman rmi -af >/dev/null 2>&1
	findmnt -rn -o TARGET | grep -F "$WORK/" | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf "$WORK/store" "$WORK/runroot"
	return 0
}
trap cleanup EXIT

# --- the host: x86_64, and can it run aarch64 code, in a container too? --------------------
# This suite is the arm64 image made on an x86_64 host; on an arm64 host
# every other suite runs the native turninit, and this one has nothing to add.
if [[ $(uname -m) != x86_64 ]]; then
	for t in a-image-refuses-other-architecture a-image-amd64-unchanged a-image-arm64 \
		a-image-arm64-reproducible a-seal-refused-under-qemu a-sealed-by-containerfile \
		a-run-refused-seccomp a-run-landlock-optional-refused-seccomp a-serve-refused-seccomp \
		a-nonroot-refused-seccomp a-verify-claims-no-seccomp a-manifest-list-entries \
		a-manifest-list-rebuild-keeps-one-per-arch a-manifest-list-refuses-an-image-name \
		a-manifest-list-push; do
		skip "$t" "this host is $(uname -m): the suite builds and emulates arm64 on x86_64"
	done
	results
	exit
fi
# binfmt_misc's entry for aarch64 ELF executables (the magic of e_machine
# 0xb7), whatever its name: enabled, and with the F flag. Sets NO_QEMU to
# why not, empty when it can.
NO_QEMU=
binfmt_aarch64() {
	local e found=
	[[ -d /proc/sys/fs/binfmt_misc ]] || { NO_QEMU="binfmt_misc is not mounted (/proc/sys/fs/binfmt_misc)"; return; }
	for e in /proc/sys/fs/binfmt_misc/*; do
		if [[ -f $e ]] && grep -q '^magic 7f454c460201010000000000000000000200b700$' "$e" 2>/dev/null; then
			found=$e
			break
		fi
	done
	if [[ -z $found ]]; then
		NO_QEMU="no binfmt_misc entry for aarch64 ELF on this host (apt-get install qemu-user-static binfmt-support)"
	elif ! grep -qx enabled "$found"; then
		NO_QEMU="the binfmt_misc entry ${found##*/} for aarch64 is disabled"
	elif ! grep -q '^flags: .*F' "$found"; then
		NO_QEMU="the binfmt_misc entry ${found##*/} for aarch64 lacks the F flag: its interpreter cannot be found inside a container"
	else
		QEMU_ENTRY=${found##*/}
		QEMU_INTERP=$(sed -n 's/^interpreter //p' "$found")
	fi
}
binfmt_aarch64
NO_ARM_BIN=
[[ -x $ARM_BIN ]] || NO_ARM_BIN="${ARM_BIN#"$ROOT"/} missing: make ARCH=aarch64"
if [[ -z $NO_QEMU && -z $NO_ARM_BIN ]]; then
	# (the interpreter by its own name: as aarch64-binfmt-P it takes its
	# first argument as the program)
	echo "# binfmt $QEMU_ENTRY: $QEMU_INTERP, $("$(readlink -f "$QEMU_INTERP")" --version 2>/dev/null | head -n 1)"
	# the aarch64 turninit runs on this host at all
	run_cmd "$ARM_BIN" --version
	[[ $RC -eq 0 && $OUT == "turninit version "* ]] ||
		abort "$ARM_BIN --version under $QEMU_ENTRY: status $RC: ${ERR:-$OUT}"
fi
# NO_ARM: why the tests of the arm64 image cannot run here (its build runs
# the arm64 busybox, its turns the aarch64 turninit), empty when they can;
# skip_all NAME...: each selected NAME skipped with that reason.
NO_ARM=${NO_QEMU:-$NO_ARM_BIN}
skip_all() {
	local t
	for t in "$@"; do
		skip "$t" "$NO_ARM"
	done
	return 0
}

trusted_keys
# --- the images ---------------------------------------------------------------------------
# build IMAGE-TAG ROOT ARGS...: rootfs/build-image.sh trusting $KEY_PUB,
# assembling in $WORK/ROOT, as a test's command (RC, OUT, ERR).
build() {
	local tag=$1 root=$2
	shift 2
	run_cmd timeout 900 sh "$ROOT/rootfs/build-image.sh" --trusted-key "$KEY_PUB" --tag "$tag" \
		--root "$WORK/$root" "$@"
}
# elf FILE: `file`'s words for FILE's kind: "aarch64 static", "x86-64 static".
elf() {
	local f
	f=$(file -b "$1")
	case $f in
	*"ARM aarch64"*) printf aarch64 ;;
	*x86-64*) printf x86-64 ;;
	*) printf '%s' "${f%%,*}" ;;
	esac
	[[ $f == *"statically linked"* ]] && printf ' static'
	printf '\n'
}

# A binary of the other architecture: refused before anything is built or
# fetched, either way round.
if begin a-image-refuses-other-architecture; then
	build "$IMG:wrong" root-wrong --arch arm64 "$BIN"
	expect_rc 1
	expect_err "build-image: $BIN: not an ELF binary for arm64 (ELF 64-bit LSB executable, x86-64); give --arch for its architecture, or the turninit built for arm64"$'\n'
	timeout 60 podman image exists "$IMG:wrong" && why "an image was made"
	[[ ! -e $WORK/root-wrong ]] || why "a root was assembled"
	if [[ -x $ARM_BIN ]]; then
		build "$IMG:wrong" root-wrong "$ARM_BIN"
		expect_rc 1
		expect_contains stderr "$ERR" "build-image: $ARM_BIN: not an ELF binary for amd64 (ELF 64-bit LSB executable, ARM aarch64)"
		timeout 60 podman image exists "$IMG:wrong" && why "an image was made"
	fi
	end
fi

# The amd64 image is what it was before --arch: the default and --arch
# amd64 give the same root (the label is its tar's sha256), with the host's
# own bash-static and busybox.
build "$IMG:amd64" root-amd64 "$BIN" >/dev/null
[[ $RC -eq 0 ]] || { printf '%s' "$ERR"; abort "rootfs/build-image.sh (amd64)"; }
AMD64_BUILT=$OUT
if begin a-image-amd64-unchanged; then
	build "$IMG:amd64" root-amd64 --arch amd64 "$BIN"
	expect_rc 0
	[[ $OUT == "image: $IMG:amd64 up to date ("* ]] || why "--arch amd64 did not give the default's root: $OUT (default: $AMD64_BUILT)"
	cmp -s "$WORK/root-amd64/bin/bash" /bin/bash-static || why "bin/bash is not the host's /bin/bash-static"
	cmp -s "$WORK/root-amd64/bin/busybox" /bin/busybox || why "bin/busybox is not the host's /bin/busybox"
	run_cmd timeout 60 podman image inspect --format '{{.Architecture}} {{.Os}} {{json .Config.Entrypoint}}' "$IMG:amd64"
	expect_out $'amd64 linux ["/sbin/turninit"]\n'
	end
fi

# The arm64 image: Debian's arm64 bash-static and busybox-static, the
# aarch64 turninit, every applet link; the config says arm64.
if [[ -n $NO_ARM ]]; then
	skip_all a-image-arm64 a-image-arm64-reproducible
else
	build "$IMG:arm64" root-arm64 --arch arm64 "$ARM_BIN"
	[[ $RC -eq 0 ]] || { printf '%s' "$ERR"; abort "rootfs/build-image.sh --arch arm64"; }
	ARM64_BUILT=$OUT
	echo "# ${ARM64_BUILT%$'\n'}"
	if begin a-image-arm64; then
		[[ $ARM64_BUILT == "image: $IMG:arm64 built ("*", arm64: bash-static "*", busybox-static "*")"$'\n' ]] ||
			why "build line: $ARM64_BUILT"
		R=$WORK/root-arm64
		eq "sbin/turninit" "$(elf "$R/sbin/turninit")" "aarch64 static"
		eq "bin/bash" "$(elf "$R/bin/bash")" "aarch64 static"
		eq "bin/busybox" "$(elf "$R/bin/busybox")" "aarch64 static"
		cmp -s "$R/sbin/turninit" "$ARM_BIN" || why "sbin/turninit is not $ARM_BIN"
		eq "links" "$(cd "$R/bin" && find . -type l -lname busybox | wc -l)" \
			"$(cd "$WORK/root-amd64/bin" && find . -type l -lname busybox | wc -l)"
		[[ $(readlink "$R/bin/sh") == bash ]] || why "bin/sh is not a link to bash"
		run_cmd timeout 60 podman image inspect --format '{{.Architecture}} {{.Os}} {{json .Config.Entrypoint}}' "$IMG:arm64"
		expect_out $'arm64 linux ["/sbin/turninit"]\n'
		end
	fi
	# The same root again: the tar is reproducible, so the image stays.
	if begin a-image-arm64-reproducible; then
		build "$IMG:arm64" root-arm64 --arch arm64 "$ARM_BIN"
		expect_rc 0
		[[ $OUT == "image: $IMG:arm64 up to date ("* ]] || why "not up to date: $OUT"
		end
	fi
fi

# --- turninit under qemu-user ---------------------------------------------------------------
# qemu-user runs the aarch64 turninit as an x86_64 process: the kernel sees
# qemu's syscalls, not the guest's, and Debian 12's qemu 7.2 answers the
# sandbox's own calls itself: prctl(PR_SET_SECCOMP) EINVAL, seccomp(2) and the
# Landlock calls ENOSYS, PR_SET_CHILD_SUBREAPER EINVAL. No filter could hold
# there (an aarch64 program would see x86_64 calls), so every start must be
# refused, naming seccomp, before any command runs.
QEMU_TESTS=(a-seal-refused-under-qemu a-sealed-by-containerfile a-run-refused-seccomp
	a-run-landlock-optional-refused-seccomp a-serve-refused-seccomp a-nonroot-refused-seccomp
	a-verify-claims-no-seccomp)
if [[ -n $NO_ARM ]]; then
	skip_all "${QEMU_TESTS[@]}"
else
	# strict: Landlock required (the default); optional: landlock.optional,
	# so that only seccomp is left to refuse
	manifest strict "{$HEAD,\"env\":{$SET}}"
	manifest optional "{$HEAD,\"env\":{$SET},\"landlock\":{\"optional\":true}}"
	mapfile -t ENV_OPTIONAL < <(manifest_env "$M/optional.json")
	PODMAN_RUN+=(--arch arm64)
	workspace
	trap 'cleanup; rm -rf "$WS"' EXIT
	# expect_seccomp_refusal: what every start under qemu gives: status 125,
	# nothing on stdout, one line on stderr, turninit's, about seccomp; and
	# the command's file is not in the workspace (it never ran)
	expect_seccomp_refusal() {
		expect_refusal seccomp
		[[ $ERR == "turninit: seccomp: this platform has no seccomp(2) "* ]] || why "the refusal is not seccomp's"
		[[ ! -e $WS/marker ]] || why "the command ran: $WS/marker is there ($(cat "$WS/marker"))"
		rm -f "$WS/marker"
	}
	MARK='echo ran > /mnt/ws/marker; echo hi'

	# oci/seal.sh checks the manifest with the image's own turninit (verify),
	# which refuses under qemu-user: no sealed image is made here.
	if begin a-seal-refused-under-qemu; then
		run_cmd timeout 300 sh "$ROOT/oci/seal.sh" --image "$IMG:arm64" --manifest "$M/strict.json" \
			--key "$KEY_SEC" --tag "$IMG:seal-sh" --trusted-comment "turninit arm64 test: seal.sh"
		expect_rc 1
		expect_contains stderr "$ERR" "seal: turninit in $IMG:arm64 refuses this manifest, so $IMG:seal-sh is not made: turninit: seccomp: "
		timeout 60 podman image exists "$IMG:seal-sh" && why "$IMG:seal-sh was made"
		echo "# ${ERR%$'\n'}"
		end
	fi
	# The recipe without the check (oci/Containerfile.seal, podman build)
	# seals the arm64 image: the image every turn below runs.
	SEALED=$IMG:sealed
	run_cmd timeout 300 podman build --pull=never -q --platform linux/arm64 -f "$ROOT/oci/Containerfile.seal" \
		-t "$SEALED" --build-arg BASE="$IMG:arm64" --build-arg TURNINIT_MANIFEST="$(b64 "$M/strict.json")" \
		--build-arg TURNINIT_MANIFEST_SIG="$(b64 "$M/strict.json.minisig")" "$ROOT/oci"
	[[ $RC -eq 0 ]] || { printf '%s' "$ERR"; abort "podman build -f oci/Containerfile.seal --platform linux/arm64"; }
	if begin a-sealed-by-containerfile; then
		run_cmd timeout 60 podman image inspect --format '{{.Architecture}} {{json .Config.Entrypoint}}' "$SEALED"
		expect_out $'arm64 ["/sbin/turninit"]\n'
		run_cmd timeout 60 podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$SEALED"
		expect_contains "config Env" "$OUT" "TURNINIT_MANIFEST=$(b64 "$M/strict.json")"$'\n'
		end
	fi

	# A one-shot turn: refused, the command never ran.
	if begin a-run-refused-seccomp; then
		prun --tmpfs "$HOME_TMPFS" -v "$WS:/mnt/ws" "$SEALED" -- "$MARK"
		expect_seccomp_refusal
		echo "# ${ERR%$'\n'}"
		end
	fi
	# Landlock optional (qemu has none): seccomp still refuses.
	if begin a-run-landlock-optional-refused-seccomp; then
		prun --tmpfs "$HOME_TMPFS" -v "$WS:/mnt/ws" "${ENV_OPTIONAL[@]}" "$SEALED" -- "$MARK"
		expect_seccomp_refusal
		end
	fi
	# serve, given a request: refused at the start, no event, nothing ran.
	if begin a-serve-refused-seccomp; then
		run_input '{"op":"exec","id":"c1","command":"echo ran > /mnt/ws/marker"}'$'\n' \
			"${PODMAN_RUN[@]}" -i --tmpfs "$HOME_TMPFS" -v "$WS:/mnt/ws" "${ENV_OPTIONAL[@]}" "$SEALED" serve
		expect_seccomp_refusal
		end
	fi
	# Non-root mode (no capability to start with): the same refusal.
	if begin a-nonroot-refused-seccomp; then
		prun --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges --tmpfs "$HOME_TMPFS" \
			-v "$WS:/mnt/ws" "${ENV_OPTIONAL[@]}" "$SEALED" -- "$MARK"
		expect_seccomp_refusal
		end
	fi
	# verify runs nothing, and must not claim what qemu cannot give: 125 with
	# the start's seccomp line; a policy, where it prints one, names seccomp,
	# Landlock (ABI 0) and the subreaper among the layers this platform
	# weakens or refuses. (This turninit prints none here: verify's own
	# probe of the seccomp action is what refuses.)
	if begin a-verify-claims-no-seccomp; then
		prun --tmpfs "$HOME_TMPFS" "$SEALED" verify
		expect_rc 125
		[[ $ERR == "turninit: seccomp: "*$'\n' && $(printf '%s' "$ERR" | wc -l) -eq 1 ]] ||
			why "stderr is not one turninit line about seccomp"
		if [[ -n $OUT ]]; then
			eq "verify's policy" "$(printf '%s' "$OUT" | jq -r '[(.platform.weakened | index("seccomp") != null),
				(.platform.weakened | index("subreaper") != null), .landlock.abi] | @tsv' 2>&1)" $'true\ttrue\t0'
		fi
		echo "# verify: status $RC, stdout ${#OUT} bytes, stderr: ${ERR%$'\n'}"
		end
	fi
fi

# --- the manifest list of the base image ------------------------------------------------
# Both images in one list, as a release builds it (build-image.sh
# --manifest-list), in this suite's own store.
LIST=$IMG:list
ML_TESTS=(a-manifest-list-entries a-manifest-list-rebuild-keeps-one-per-arch
	a-manifest-list-refuses-an-image-name a-manifest-list-push)
if [[ -n $NO_ARM ]]; then
	skip_all "${ML_TESTS[@]}"
else
	build "$IMG:amd64" root-amd64 --manifest-list "$LIST" "$BIN"
	[[ $RC -eq 0 ]] || { printf '%s' "$ERR"; abort "build-image.sh --manifest-list (amd64)"; }
	build "$IMG:arm64" root-arm64 --arch arm64 --manifest-list "$LIST" "$ARM_BIN"
	[[ $RC -eq 0 ]] || { printf '%s' "$ERR"; abort "build-image.sh --arch arm64 --manifest-list"; }
	# list_entries: "ARCH OS DIGEST" of each entry of LIST, in its order
	list_entries() {
		timeout 60 podman manifest inspect "$LIST" | jq -r '.manifests[] | "\(.platform.architecture) \(.platform.os) \(.digest)"'
	}
	# entry_binary DIGEST: `elf` of /sbin/turninit in the image the list's
	# entry DIGEST names (found by repository@digest in this store, mounted)
	entry_binary() {
		local mnt
		mnt=$(timeout 60 podman image mount "${IMG}@$1" 2>&1) || { echo "podman image mount ${IMG}@$1: $mnt"; return; }
		elf "$mnt/sbin/turninit"
		timeout 60 podman image unmount "${IMG}@$1" >/dev/null 2>&1
	}
	if begin a-manifest-list-entries; then
		run_cmd list_entries
		expect_rc 0
		eq "architectures" "$(printf '%s' "$OUT" | cut -d' ' -f1,2 | tr '\n' ' ')" "amd64 linux arm64 linux "
		while read -r a _ d; do
			case $a in
			amd64) eq "amd64 entry's /sbin/turninit" "$(entry_binary "$d")" "x86-64 static"
			       eq "amd64 entry" "$d" "$(timeout 60 podman image inspect --format '{{.Digest}}' "$IMG:amd64")" ;;
			arm64) eq "arm64 entry's /sbin/turninit" "$(entry_binary "$d")" "aarch64 static"
			       eq "arm64 entry" "$d" "$(timeout 60 podman image inspect --format '{{.Digest}}' "$IMG:arm64")" ;;
			esac
		done <<<"$OUT"
		end
	fi
	# Building an architecture again with another root replaces its entry:
	# still one entry per architecture, the new image's.
	if begin a-manifest-list-rebuild-keeps-one-per-arch; then
		mkdir -p "$WORK/overlay-list/etc"
		echo rebuilt > "$WORK/overlay-list/etc/rebuilt"
		build "$IMG:arm64" root-arm64 --arch arm64 --manifest-list "$LIST" --overlay "$WORK/overlay-list" "$ARM_BIN"
		expect_rc 0
		expect_contains stdout "$OUT" "manifest list: $LIST, arm64: $IMG:arm64 (sha256:"
		run_cmd list_entries
		eq "entries" "$(printf '%s' "$OUT" | cut -d' ' -f1,3 | tr '\n' ' ')" \
			"amd64 $(timeout 60 podman image inspect --format '{{.Digest}}' "$IMG:amd64") arm64 $(timeout 60 podman image inspect --format '{{.Digest}}' "$IMG:arm64") "
		end
	fi
	# A name that holds an image is not a list: refused before anything is built.
	if begin a-manifest-list-refuses-an-image-name; then
		build "$IMG:other" root-other --manifest-list "$IMG:amd64" "$BIN"
		expect_rc 1
		expect_err "build-image: --manifest-list $IMG:amd64: that name holds an image that is not a manifest list"$'\n'
		timeout 60 podman image exists "$IMG:other" && why "$IMG:other was made"
		end
	fi
	# What a release pushes: `podman manifest push --all` into an OCI layout
	# (a directory, no registry) holds an index of both, each with its config.
	if begin a-manifest-list-push; then
		run_cmd timeout 120 podman manifest push --all --quiet "$LIST" "oci:$WORK/oci-layout:base"
		expect_rc 0
		got=$(python3 - "$WORK/oci-layout" <<'PYEOF' 2>&1
import json, sys
d = sys.argv[1]
blob = lambda h: json.load(open(f"{d}/blobs/{h.replace(':', '/')}"))
top = json.load(open(f"{d}/index.json"))["manifests"]
assert len(top) == 1, top
index = blob(top[0]["digest"])
for m in index["manifests"]:
    cfg = blob(blob(m["digest"])["config"]["digest"])
    print(m["platform"]["architecture"], cfg["architecture"], cfg["os"], cfg["config"]["Entrypoint"])
PYEOF
)
		eq "the pushed index" "$got" $'amd64 amd64 linux [\'/sbin/turninit\']\narm64 arm64 linux [\'/sbin/turninit\']'
		end
	fi
	# The list leaves this store at once (containers/podman#19757: while it
	# is here, podman images and image prune fail).
	timeout 60 podman manifest rm "$LIST" >/dev/null 2>&1
fi

no_container_left
echo "# suite ran in $(( $(now_ms) - T0 )) ms"
results
