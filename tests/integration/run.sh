#!/bin/bash
# run.sh - integration tests of build/turninit in real podman containers
# (`make integration`; issue 2, "Deliver" 8 a-h). Root, podman set up by
# `make setup`; or, with ITEST_ROOTLESS=1, an unprivileged user under rootless
# podman (tests/integration/rootless.sh); or, with ITEST_ENGINE=docker, under
# the dockerd of tests/integration/docker.sh, where the tests of what only
# podman has are skipped, each saying why. Builds its own images
# (localhost/turninit-itest:*) with rootfs/build-image.sh and oci/seal.sh,
# trusting tests/vectors/test-trusted.pub (under Docker: podman save | docker load).
#
# Every podman (or docker) call has a hard timeout (60 s) and runs with --pull never
# --network none; containers are labelled and removed at exit. Prints TAP ("ok N - NAME", "not ok N - NAME") with the evidence, then "N passed, N failed"; exits 1 on any failure.
#
# Environment: ITEST_ONLY=REGEX runs only the tests whose name matches (the images
# are built all the same); ITEST_BINARY=PATH tests another binary than
# build/turninit (to see the suite go red against a naive entrypoint).
# shellcheck disable=SC2016,SC2088 # '$X' and '~' are literal: they run in the container
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VECTORS=$ROOT/tests/vectors
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
ENGINES="podman docker"
suite_open integration itest "rootful $ENGINE_NAME" podman buildah minisign python3 timeout pgrep

IMG=localhost/turninit-itest$ENGINE_TAG
VERSION=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")

mkdir -p "$WORK/m"
trap cleanup_containers EXIT


T0=$(now_ms)

# --- keys ----------------------------------------------------------------------
# The committed test vectors (made by tests/vectors/make-vectors.sh with the
# minisign CLI); a fresh throw-away pair stands in for one that is missing.
keypair() { # keypair NAME: sets KEY_<NAME>_SEC and KEY_<NAME>_PUB
	local sec=$VECTORS/test-$1.key pub=$VECTORS/test-$1.pub
	if [[ ! -r $sec || ! -r $pub ]]; then
		sec=$WORK/keys/test-$1.key pub=$WORK/keys/test-$1.pub
		mkdir -p "$WORK/keys"
		minisign -G -W -f -s "$sec" -p "$pub" </dev/null >/dev/null || abort "minisign -G"
		echo "# tests/vectors/test-$1.{key,pub} missing: using a temporary pair in build/itest/keys"
	fi
	printf -v "KEY_${1^^}_SEC" '%s' "$sec"
	printf -v "KEY_${1^^}_PUB" '%s' "$pub"
}
keypair trusted
keypair other

# --- manifests -----------------------------------------------------------------
# Written byte for byte; a far "expires" keeps them deterministic.
M=$WORK/m
MANIFEST_KEY=$KEY_TRUSTED_SEC
manifest main "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\"]}}"
manifest allow-ld "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\",\"LD_PRELOAD\"]}}"
manifest set-ld "{$HEAD,\"env\":{\"set\":{\"PATH\":\"/usr/bin:/bin\",\"LD_PRELOAD\":\"/x.so\"},\"allow\":[\"TZ\"]}}"
manifest expired "{${HEAD/2099-01-01/2001-01-01},\"env\":{$SET,\"allow\":[\"TZ\"]}}"
manifest timeout "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\"]},\"limits\":{\"timeout_s\":1}}"
# 10 s: time enough for a command's traps to be set on a loaded machine
manifest timeout10 "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\"]},\"limits\":{\"timeout_s\":10}}"
manifest ll-optional "{$HEAD,\"env\":{$SET},\"landlock\":{\"optional\":true}}"
manifest ll-narrow "{$HEAD,\"env\":{$SET},\"landlock\":{\"writable\":[\"/home/agent\"]}}"
manifest ll-no-shm "{$HEAD,\"env\":{$SET},\"landlock\":{\"shm\":false}}"
manifest ll-proc-link "{$HEAD,\"env\":{$SET},\"landlock\":{\"writable\":[\"/home/agent\",\"/proclink\"]}}"
manifest ll-shm-link "{$HEAD,\"env\":{$SET},\"landlock\":{\"shm\":false,\"writable\":[\"/home/agent\",\"/shmlink\"]}}"
manifest shell-noexec "{$HEAD,\"shell\":\"/etc/turninit/trusted.pub\",\"env\":{$SET,\"allow\":[]}}"
manifest shell-missing "{$HEAD,\"shell\":\"/bin/no-such-shell\",\"env\":{$SET,\"allow\":[]}}"
manifest home-missing "{${HEAD/\/home\/agent/\/home\/missing},\"env\":{$SET}}"
manifest file "{$HEAD,\"env\":{\"set\":{\"PATH\":\"/usr/bin:/bin\",\"FROM\":\"file\"},\"allow\":[]}}"
# One byte changed after signing ("dumb" -> "dumc"); the signature is the good one.
cp "$M/main.json" "$M/tampered.json"
cp "$M/main.json.minisig" "$M/tampered.json.minisig"
sed -i 's/"TERM":"dumb"/"TERM":"dumc"/' "$M/tampered.json"
[[ $(cmp -l "$M/main.json" "$M/tampered.json" | wc -l) -eq 1 ]] || abort "tampered.json differs by other than one byte"
# The right bytes, signed by a key the image does not trust.
cp "$M/main.json" "$M/other.json"
sign "$M/other.json" "$KEY_OTHER_SEC" || abort "minisign -S other.json"

# The exact environment of a command under main.json (docs/manifest.md, "The environment"):
# env.set, HOME, and what bash adds itself: PWD (the workdir), SHLVL and _. For a
# command string that is one simple command bash execs it in place and lowers
# SHLVL again: 0; _ is the program's path (/bin/env in these images). An argv
# goes through bash's `exec "$@"`, which sets no _.
ENV_MAIN=$'HOME=/home/agent\nLANG=C.UTF-8\nPATH=/usr/local/bin:/usr/bin:/bin\nPWD=/work\nSHLVL=0\nTERM=dumb\n_=/bin/env\n'
ENV_MAIN_ARGV=$'HOME=/home/agent\nLANG=C.UTF-8\nPATH=/usr/local/bin:/usr/bin:/bin\nPWD=/work\nSHLVL=0\nTERM=dumb\n'

# --- images --------------------------------------------------------------------
# base: the plain root. dotfiles: the same with login-shell startup files that print
# and export, a home skeleton, and /etc/startup.sh (a BASH_ENV/ENV target that
# leaves a marker). filemf: a signed manifest as a file instead of in the Env.
OV=$WORK/overlay-dotfiles
mkdir -p "$OV/etc/profile.d" "$OV/home/agent"
startup() { # startup WHAT VAR: a startup file that talks, exports and prepends to PATH
	printf 'echo "DOTFILE %s ran"\nexport %s=1 GH_TOKEN=from-%s\nexport PATH=/dotfile-bin-%s:$PATH\n' \
		"$1" "$2" "$2" "$2"
}
# and /shmlink, a symbolic link to /dev/shm (as Debian's /run/shm is)
ln -s /dev/shm "$OV/shmlink"
ln -s /proc "$OV/proclink"   # and /proclink, one to /proc
startup /etc/profile PROFILE_VAR > "$OV/etc/profile"
printf 'for f in /etc/profile.d/*.sh; do . "$f"; done\n' >> "$OV/etc/profile"
startup /etc/bash.bashrc BASHRC_VAR > "$OV/etc/bash.bashrc"
startup /etc/profile.d/x.sh PROFILED_VAR > "$OV/etc/profile.d/x.sh"
startup '~/.bash_profile' BASH_PROFILE_VAR > "$OV/home/agent/.bash_profile"
startup '~/.bash_login' BASH_LOGIN_VAR > "$OV/home/agent/.bash_login"
startup '~/.profile' DOT_PROFILE_VAR > "$OV/home/agent/.profile"
startup '~/.bashrc' DOT_BASHRC_VAR > "$OV/home/agent/.bashrc"
printf 'echo STARTUP-RAN\n: > /tmp/startup-ran\nexport STARTUP_VAR=1\n' > "$OV/etc/startup.sh"
chmod -R a+rX "$OV"
mkdir -p "$WORK/overlay-filemf/etc/turninit"
cp "$M/file.json" "$WORK/overlay-filemf/etc/turninit/manifest.json"
cp "$M/file.json.minisig" "$WORK/overlay-filemf/etc/turninit/manifest.json.minisig"

build() { # build TAG [OVERLAY]
	sh "$ROOT/rootfs/build-image.sh" --trusted-key "$KEY_TRUSTED_PUB" --tag "$IMG:$1" \
		--root "$WORK/root-$1" ${2:+--overlay "$2"} "$BIN" >"$WORK/build-$1.log" 2>&1 \
		|| { cat "$WORK/build-$1.log"; abort "rootfs/build-image.sh $1"; }
}
seal() { # seal IN OUT MANIFEST [--legacy]
	sh "$ROOT/oci/seal.sh" --image "$IMG:$1" --tag "$IMG:$2" --manifest "$3" \
		--key "$KEY_TRUSTED_SEC" --trusted-comment "turninit integration test: $2" ${4:+"$4"} \
		>"$WORK/seal-$2.log" 2>&1 || { cat "$WORK/seal-$2.log"; abort "oci/seal.sh $2"; }
}
build base
build dotfiles-base "$OV"
build filemf "$WORK/overlay-filemf"
seal base sealed "$M/main.json"
seal base legacy "$M/main.json" --legacy
seal dotfiles-base dotfiles "$M/main.json"
# A forgery inside an image config: the sealed image with one manifest byte changed.
ctr=$(timeout 60 buildah from --pull-never --quiet "$IMG:sealed") || abort "buildah from"
if ! timeout 60 buildah config --env "TURNINIT_MANIFEST=$(b64 "$M/tampered.json")" "$ctr" >/dev/null ||
	! timeout 60 buildah commit --quiet --rm "$ctr" "$IMG:tampered" >/dev/null; then
	timeout 60 buildah rm "$ctr" >/dev/null 2>&1
	abort "buildah config/commit tampered"
fi
prune_images
engine_images "$IMG:base" "$IMG:dotfiles" "$IMG:filemf" "$IMG:sealed" "$IMG:legacy" "$IMG:tampered"
echo "# images built in $(( $(now_ms) - T0 )) ms"

SEALED=$IMG:sealed
DOT=$IMG:dotfiles
mapfile -t ENV_TAMPERED < <(manifest_env "$M/tampered.json")
mapfile -t ENV_OTHER < <(manifest_env "$M/other.json")
mapfile -t ENV_ALLOW_LD < <(manifest_env "$M/allow-ld.json")
mapfile -t ENV_SET_LD < <(manifest_env "$M/set-ld.json")
mapfile -t ENV_EXPIRED < <(manifest_env "$M/expired.json")
mapfile -t ENV_TIMEOUT < <(manifest_env "$M/timeout.json")
mapfile -t ENV_TIMEOUT10 < <(manifest_env "$M/timeout10.json")
mapfile -t ENV_LL_OPTIONAL < <(manifest_env "$M/ll-optional.json")
mapfile -t ENV_LL_NARROW < <(manifest_env "$M/ll-narrow.json")
mapfile -t ENV_LL_NO_SHM < <(manifest_env "$M/ll-no-shm.json")
mapfile -t ENV_LL_SHM_LINK < <(manifest_env "$M/ll-shm-link.json")
mapfile -t ENV_LL_PROC_LINK < <(manifest_env "$M/ll-proc-link.json")
# podman's own default seccomp profile without the landlock syscalls: to turninit
# that is a kernel without Landlock (they fail with the profile's ENOSYS).
# Docker takes the same file (one format).
NO_LANDLOCK=$WORK/seccomp-no-landlock.json
no_landlock_profile "$NO_LANDLOCK" || abort "making $NO_LANDLOCK"
mapfile -t ENV_SHELL_NOEXEC < <(manifest_env "$M/shell-noexec.json")
mapfile -t ENV_HOME_MISSING < <(manifest_env "$M/home-missing.json")
mapfile -t ENV_SHELL_MISSING < <(manifest_env "$M/shell-missing.json")
ATTACK=(-e GH_TOKEN=x -e BASH_ENV=/etc/startup.sh -e ENV=/etc/startup.sh
	-e 'BASH_FUNC_ls%%=() { echo pwned; }' -e SHELLOPTS=xtrace
	-e 'PS4=$(touch /tmp/pwn)' -e LD_PRELOAD=/x.so)
sorted() { LC_ALL=C sort; }

# --- g. no passwd, group or nsswitch.conf in any image ---------------------------
# root_problems DIR: what is wrong with the image root at DIR, one line each.
root_problems() {
	local f
	for f in passwd group nsswitch.conf; do
		[[ ! -e $1/etc/$f && ! -L $1/etc/$f ]] || echo "the image has /etc/$f"
	done
	[[ -x $1/sbin/turninit && -x $1/bin/bash && -L $1/bin/sh ]] || echo "the image lacks /sbin/turninit, /bin/bash or /bin/sh"
}
# image_problems IMAGE: mount IMAGE and print what is wrong with its files, one
# line each. Rootless podman mounts images only in its user namespace: there
# the function runs whole (userns).
image_problems() {
	local mnt
	mnt=$(timeout 60 podman image mount "$1")
	if [[ $? -ne 0 || ! -d $mnt/etc ]]; then
		echo "podman image mount failed"
	else
		root_problems "$mnt"
	fi
	timeout 60 podman image unmount "$1" >/dev/null 2>&1
	return 0
}
# docker_image_problems IMAGE DIR: the same of the image docker loaded, whose
# root a created container's `docker export` unpacks into DIR (Docker mounts
# no image on the host).
docker_image_problems() {
	local id
	rm -rf "$2"
	mkdir -p "$2"
	if ! id=$(timeout 60 "$ENGINE" create --label "$LABEL" "$1"); then
		echo "docker create failed"
		return 0
	fi
	timeout 60 "$ENGINE" export "$id" | tar -C "$2" -xf - || echo "docker export failed"
	engine_rm "$id"
	root_problems "$2"
}
for tag in base dotfiles filemf sealed legacy; do
	begin "g-image-has-no-passwd-$tag" || continue
	if docker_engine; then
		run_cmd docker_image_problems "$IMG:$tag" "$WORK/export-$tag"
	else
		run_cmd userns bash -c "$(declare -f root_problems image_problems)"'; image_problems "$1"' bash "$IMG:$tag"
	fi
	[[ $RC -eq 0 ]] || why "the image check failed"
	while IFS= read -r line; do
		why "$line"
	done < <(printf '%s' "$OUT")
	end
done

if begin g-turn-sees-no-passwd; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" \
		'for f in /etc/passwd /etc/group /etc/nsswitch.conf; do test -e $f && echo "$f exists"; done; echo checked'
	expect_rc 0
	expect_out $'checked\n'
	expect_err ""
	end
fi

# --- a. login-shell startup files and the home skeleton never run ----------------
# The dotfiles image has a home skeleton, which podman's --tmpfs would copy up into
# HOME (tmpcopyup is its default); turninit wants an empty HOME, so: notmpcopyup
# (NOCOPYUP; Docker never copies).
DOT_TMPFS=$HOME_TMPFS$NOCOPYUP
if begin a-control-login-shell-runs-them; then
	# Control: the fixture works; `bash -lc` in the same image prints and exports.
	prun -e HOME=/home/agent --entrypoint /bin/bash "$DOT" -lc 'echo "PATH=$PATH"'
	expect_rc 0
	for s in '/etc/profile ran' '/etc/profile.d/x.sh ran' '~/.bash_profile ran' 'PATH=/dotfile-bin-BASH_PROFILE_VAR:/dotfile-bin-PROFILED_VAR:/dotfile-bin-PROFILE_VAR:'; do
		expect_contains stdout "$OUT" "$s"
	done
	end
fi
if begin a-echo-hi-exact; then
	prun --tmpfs "$DOT_TMPFS" "$DOT" 'echo hi'
	expect_rc 0
	expect_out $'hi\n'
	expect_err ""
	end
fi
if begin a-true-prints-nothing; then
	prun --tmpfs "$DOT_TMPFS" "$DOT" true
	expect_rc 0
	expect_out ""
	expect_err ""
	end
fi
if begin a-no-startup-variables-or-path; then
	prun --tmpfs "$DOT_TMPFS" "$DOT" env
	expect_rc 0
	eq "env (sorted)" "$(printf '%s' "$OUT" | sorted; echo .)" "${ENV_MAIN}."
	expect_err ""
	end
fi
if begin a-nested-bash-runs-no-startup-file; then
	prun --tmpfs "$DOT_TMPFS" "$DOT" 'bash -c "echo \$PATH; echo \${PROFILE_VAR-unset}"'
	expect_rc 0
	expect_out $'/usr/local/bin:/usr/bin:/bin\nunset\n'
	expect_err ""
	end
fi
if podman_test a-tmpcopyup-refused-naming-notmpcopyup "Docker's --tmpfs never copies the image's files in; the a- tests above run the image with a home skeleton under a plain --tmpfs"; then
	# Without notmpcopyup podman copies the skeleton into the tmpfs: HOME is not empty.
	prun --tmpfs "$HOME_TMPFS" "$DOT" 'echo COMMAND-RAN'
	expect_refusal notmpcopyup
	end
fi

# --- b. hostile caller environment ------------------------------------------------
if begin b-control-attack-works-without-turninit; then
	# Control: the same -e options hit a plain bash (uid 1000, where bash imports PS4).
	prun --user 1000:1000 "${ATTACK[@]}" --entrypoint /bin/bash "$DOT" \
		-c 'ls -d /; test -e /tmp/pwn && echo PWN-MARKER; true'
	for s in STARTUP-RAN pwned PWN-MARKER; do
		expect_contains stdout "$OUT" "$s"
	done
	end
fi
if begin b-env-is-exactly-the-manifest; then
	prun --tmpfs "$DOT_TMPFS" "${ATTACK[@]}" "$DOT" env
	expect_rc 0
	eq "env (sorted)" "$(printf '%s' "$OUT" | sorted; echo .)" "${ENV_MAIN}."
	expect_err ""
	end
fi
if begin b-no-startup-file-function-or-ps4; then
	prun --tmpfs "$DOT_TMPFS" "${ATTACK[@]}" "$DOT" \
		'ls -d /; bash -c "ls -d /"; test -e /tmp/startup-ran && echo STARTUP-MARKER; test -e /tmp/pwn && echo PWN-MARKER; echo end'
	expect_rc 0
	expect_out $'/\n/\nend\n'
	expect_err ""
	end
fi

if begin b-pid1-environ-wiped-seen-from-host; then
	# What turninit promises itself, read from the host where no uid check
	# hides it: PID 1's /proc/PID/environ during a turn started with a secret
	# in its environment holds the same number of bytes, every one NUL. Read
	# once the command runs (turninit wipes before it forks), as root of the
	# container's user namespace (userns: the non-dumpable PID 1 is readable
	# only with CAP_SYS_PTRACE there).
	secret=turninit-test-secret-$$-$RANDOM
	name=turninit-itest-$$-environ
	# The sleep ends only when the container is removed (engine_rm).
	run_cmd "${ENGINE_RUN[@]}" -d --name "$name" --tmpfs "$HOME_TMPFS" -e "GH_TOKEN=$secret" \
		"$SEALED" 'sleep 1000'
	expect_rc 0
	pid=$(timeout 60 "$ENGINE" inspect --format '{{.State.Pid}}' "$name" 2>/dev/null)
	has_child() { [[ -n $(cat "/proc/$pid/task/$pid/children" 2>/dev/null) ]]; }
	if [[ ! $pid =~ ^[1-9][0-9]*$ ]]; then
		why "$ENGINE_NAME inspect: no pid ($(printf '%q' "$pid"))"
	elif ! wait_for 60 has_child; then
		why "turninit (host pid $pid) started no command within 60 s"
	else
		userns cat "/proc/$pid/environ" > "$WORK/pid1-environ" 2>"$WORK/stderr" \
			|| why "reading /proc/$pid/environ: $(cat "$WORK/stderr")"
		size=$(stat -c %s "$WORK/pid1-environ")
		nonzero=$(tr -d '\0' < "$WORK/pid1-environ" | wc -c)
		((size > ${#secret})) || why "environ holds $size bytes: too few to have held the secret"
		eq "non-NUL bytes in PID 1's environ" "$nonzero" 0
		grep -qaF "$secret" "$WORK/pid1-environ" && why "PID 1's environ holds the secret"
		grep -qaF "${secret:0:12}" "$WORK/pid1-environ" && why "PID 1's environ holds part of the secret"
	fi
	engine_rm "$name"
	end
fi

# --- c. trusted signatures only ----------------------------------------------------
if begin c-tz-passes; then
	prun --tmpfs "$HOME_TMPFS" -e TZ=UTC -e LC_ALL=C -e GH_TOKEN=x "$SEALED" env
	expect_rc 0
	eq "env (sorted)" "$(printf '%s' "$OUT" | sorted; echo .)" "$(printf '%sTZ=UTC\n' "$ENV_MAIN" | sorted; echo .)"
	expect_err ""
	end
fi
if begin c-one-byte-changed-refused; then
	prun --tmpfs "$HOME_TMPFS" "${ENV_TAMPERED[@]}" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal signature
	end
fi
if begin c-one-byte-changed-in-image-config-refused; then
	prun --tmpfs "$HOME_TMPFS" "$IMG:tampered" 'echo COMMAND-RAN'
	expect_refusal signature
	end
fi
if podman_test c-seal-refuses-what-turninit-refuses "oci/seal.sh makes podman images whatever the engine: make integration runs it"; then
	# Sealing runs the image's own turninit over the signed manifest: what a
	# turn would refuse is refused now, with turninit's line, and no image made.
	manifest seal-expired "{${HEAD/2099-01-01/2020-01-01},\"env\":{$SET}}"
	manifest seal-unknown-key "{$HEAD,\"env\":{$SET},\"colour\":\"blue\"}"
	for m in seal-expired:"manifest: expired at 2020-01-01T00:00:00Z" seal-unknown-key:"manifest: colour: unknown key" \
		untrusted:"manifest: signature: key id"; do
		name=${m%%:*} key=$KEY_TRUSTED_SEC file=$M/${m%%:*}.json
		[[ $name == untrusted ]] && key=$KEY_OTHER_SEC file=$M/main.json
		run_cmd sh "$ROOT/oci/seal.sh" --image "$IMG:base" --tag "$IMG:refused-$name" --manifest "$file" --key "$key"
		[[ $RC -ne 0 ]] || why "$name: seal.sh exited 0"
		expect_contains "$name: stderr" "$ERR" "turninit in $IMG:base refuses this manifest, so $IMG:refused-$name is not made: turninit: ${m#*:}"
		timeout 60 podman image exists "$IMG:refused-$name" && why "$name: the image $IMG:refused-$name was made"
	done
	end
fi
if podman_test c-seal-expires "oci/seal.sh makes podman images whatever the engine: make integration runs it"; then
	# The example manifests carry no expiry: --expires sets it in the copy
	# signed (Nd from now, or a time); without it turninit's check refuses.
	run_cmd sh "$ROOT/oci/seal.sh" --image "$IMG:base" --tag "$IMG:expires" \
		--manifest "$ROOT/oci/manifest.example.json" --expires 30d --key "$MANIFEST_KEY"
	expect_rc 0
	got=$(timeout 60 podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$IMG:expires" |
		sed -n 's/^TURNINIT_MANIFEST=//p' | base64 -d | python3 -c '
import datetime, json, sys
t = datetime.datetime.strptime(json.load(sys.stdin)["expires"], "%Y-%m-%dT%H:%M:%SZ")
d = (t - datetime.datetime.utcnow()).total_seconds() / 86400
print("30 days" if 29.9 < d <= 30.0 else f"{d} days")')
	eq "expires of the sealed manifest" "$got" "30 days"
	run_cmd sh "$ROOT/oci/seal.sh" --image "$IMG:base" --tag "$IMG:no-expires" \
		--manifest "$ROOT/oci/manifest.example.json" --key "$MANIFEST_KEY"
	[[ $RC -ne 0 ]] || why "sealed a manifest without expires"
	expect_contains stderr "$ERR" "turninit: manifest: expires"
	run_cmd sh "$ROOT/oci/seal.sh" --image "$IMG:base" --tag "$IMG:no-expires" \
		--manifest "$ROOT/oci/manifest.example.json" --expires tomorrow --key "$MANIFEST_KEY"
	[[ $RC -ne 0 ]] || why "took --expires tomorrow"
	expect_contains stderr "$ERR" "--expires tomorrow: give Nd, Nh or YYYY-MM-DDTHH:MM:SSZ"
	# an expiry bounds replay: not beyond 3650 days, not a number date(1)
	# cannot take, not a time already past
	for e in 99999999999d 3651d 2020-01-01T00:00:00Z; do
		run_cmd sh "$ROOT/oci/seal.sh" --image "$IMG:base" --tag "$IMG:no-expires" \
			--manifest "$ROOT/oci/manifest.example.json" --expires "$e" --key "$MANIFEST_KEY"
		[[ $RC -ne 0 ]] || why "took --expires $e"
		case $e in
		2020*) expect_contains stderr "$ERR" "--expires $e: already past" ;;
		*) expect_contains stderr "$ERR" "--expires $e: more than 3650 days (10 years) from now" ;;
		esac
	done
	timeout 60 podman image exists "$IMG:no-expires" && why "an image $IMG:no-expires was made"
	timeout 60 podman rmi -f "$IMG:expires" >/dev/null 2>&1
	end
fi
if podman_test c-seal-refuses-unprintable-trusted-comment "oci/seal.sh makes podman images whatever the engine: make integration runs it"; then
	# turninit refuses such a signature at run time; oci/seal.sh refuses to
	# make the image at all, and says why.
	run_cmd sh "$ROOT/oci/seal.sh" --image "$IMG:base" --tag "$IMG:badcomment" --manifest "$M/main.json" \
		--key "$MANIFEST_KEY" --trusted-comment "$(printf 'turn\033[2Jinit')"
	[[ $RC -ne 0 ]] || why "seal.sh exited 0"
	expect_contains stderr "$ERR" "--trusted-comment must be printable text"
	timeout 60 podman image exists "$IMG:badcomment" && why "the image $IMG:badcomment was made"
	end
fi
if begin c-untrusted-key-refused; then
	prun --tmpfs "$HOME_TMPFS" "${ENV_OTHER[@]}" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "not trusted"
	end
fi
if begin c-ld-preload-allowed-refused; then
	prun --tmpfs "$HOME_TMPFS" "${ENV_ALLOW_LD[@]}" -e LD_PRELOAD=/x.so "$SEALED" 'echo COMMAND-RAN'
	expect_refusal LD_PRELOAD
	end
fi
if begin c-ld-preload-set-refused; then
	prun --tmpfs "$HOME_TMPFS" "${ENV_SET_LD[@]}" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal LD_PRELOAD
	end
fi
if begin c-expired-refused; then
	prun --tmpfs "$HOME_TMPFS" "${ENV_EXPIRED[@]}" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal expire
	end
fi
if begin c-no-manifest-refused; then
	prun --tmpfs "$HOME_TMPFS" "$IMG:base" 'echo COMMAND-RAN'
	expect_refusal "manifest: none: no TURNINIT_MANIFEST in the environment (an image sealed with turninit-seal"
	end
fi
if begin c-legacy-signature-accepted; then
	prun --tmpfs "$HOME_TMPFS" "$IMG:legacy" 'echo hi'
	expect_rc 0
	expect_out $'hi\n'
	expect_err ""
	end
fi
if begin c-manifest-file-accepted; then
	prun --tmpfs "$HOME_TMPFS" "$IMG:filemf" 'echo "$FROM"'
	expect_rc 0
	expect_out $'file\n'
	expect_err ""
	end
fi

# --- d. the sandbox of a command ----------------------------------------------------
if begin d-home-is-private-tmpfs; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" \
		'stat -f -c %T "$HOME"; stat -c "%a %u %g" "$HOME"; ls -A "$HOME" | wc -l'
	expect_rc 0
	expect_out $'tmpfs\n700 1000 1000\n0\n'
	expect_err ""
	end
fi
if begin d-no-caps-nnp-seccomp; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" \
		'grep -E "^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):" /proc/self/status'
	expect_rc 0
	expect_out $'CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n'
	expect_err ""
	end
fi
if begin d-ids-numeric-no-groups; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" 'id -u; id -g; id -G'
	expect_rc 0
	expect_out $'1000\n1000\n1000\n'
	expect_err ""
	end
fi

# --- e. HOME without a runtime tmpfs --------------------------------------------------
if begin e-no-tmpfs-refused-naming-flag; then
	prun "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "--tmpfs /home/agent"
	end
fi
if begin e-home-missing-refused-naming-flags; then
	# A HOME the image does not have at all: the refusal names the flags of
	# both engines for that path.
	prun "${ENV_HOME_MISSING[@]}" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "HOME /home/missing: No such file or directory"
	expect_contains stderr "$ERR" "add --tmpfs /home/missing:rw,mode=0700,size=64m,U to podman run, --tmpfs /home/missing:exec,mode=0700,uid=1000,gid=1000 to docker run"
	end
fi
if begin "e-refusal-names-working-$ENGINE_NAME-flag"; then
	# What a user of this engine reads without a HOME tmpfs: the one line
	# names the flag of podman run and of docker run (init/sandbox/home.h); this
	# engine's, added as written, gives a turn.
	prun "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "to $ENGINE_NAME run"
	expect_err "turninit: HOME /home/agent is not a private tmpfs mount and turninit lacks CAP_SYS_ADMIN to mount one: add --tmpfs /home/agent:rw,mode=0700,size=64m,U to podman run, --tmpfs /home/agent:exec,mode=0700,uid=1000,gid=1000 to docker run (Kubernetes: an emptyDir with medium: Memory)"$'\n'
	flag=$(printf '%s' "$ERR" | sed -n "s/.* --tmpfs \([^ ]*\) to $ENGINE_NAME run.*/\1/p")
	if [[ -z $flag ]]; then
		why "the refusal names no --tmpfs for $ENGINE_NAME run"
	else
		echo "# the flag it names for $ENGINE_NAME run: --tmpfs $flag"
		prun --tmpfs "$flag" "$SEALED" 'stat -f -c %T "$HOME"; stat -c "%a %u %g" "$HOME"'
		expect_rc 0
		expect_out $'tmpfs\n700 1000 1000\n'
		expect_err ""
	fi
	end
fi
if begin e-sys-admin-mounts-home-itself; then
	prun --cap-add SYS_ADMIN "$SEALED" \
		'stat -f -c %T "$HOME"; stat -c "%a %u %g" "$HOME"; ls -A "$HOME" | wc -l; grep -E "^Cap(Eff|Bnd):" /proc/self/status'
	expect_rc 0
	expect_out $'tmpfs\n700 1000 1000\n0\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n'
	expect_err ""
	end
fi

# --- hardening found by review: HOME that is not private, launcher-chosen inputs ----
if begin e-home-owned-by-another-uid-refused; then
	# An empty tmpfs of the container's own (a podman tmpfs volume: --tmpfs
	# takes no uid=; Docker's --tmpfs does), but owned by uid 4242, neither
	# root nor turninit nor the manifest's uid: refused, not given to the
	# manifest's uid.
	vol=itest-$$-home4242
	if docker_engine; then
		prun --tmpfs /home/agent:mode=0700,uid=4242,gid=4242 "$SEALED" 'echo COMMAND-RAN'
		expect_refusal "HOME /home/agent is owned by uid 4242, not 1000"
	elif timeout 60 podman volume create --label "$LABEL" --opt type=tmpfs --opt device=tmpfs \
		--opt o=uid=4242,gid=4242,mode=0700 "$vol" >/dev/null; then
		prun -v "$vol:/home/agent" "$SEALED" 'echo COMMAND-RAN'
		expect_refusal "HOME /home/agent is owned by uid 4242, not 1000"
		timeout 60 podman volume rm -f "$vol" >/dev/null 2>&1
	else
		why "podman volume create $vol failed"
	fi
	end
fi
if begin e-bind-of-host-tmpfs-dir-refused; then
	# A directory inside a host tmpfs, bind-mounted at HOME: empty and a tmpfs, but
	# not a private one. Refused, and the host directory keeps its owner.
	shared=$(mktemp -d /dev/shm/turninit-itest.XXXXXX)
	chmod 0700 "$shared"
	prun -v "$shared:/home/agent" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "not a private tmpfs"
	eq "host dir owner" "$(stat -c '%u:%g %a' "$shared")" "$(id -u):$(id -g) 700"
	rmdir "$shared"
	end
fi
if begin e-memory-emptydir-home-taken; then
	# What a kubelet mounts for an emptyDir with medium: Memory: a root-owned
	# tmpfs of mode 1777 (exec: Docker's --tmpfs is noexec without it, and
	# turninit would say so). turninit takes it for the manifest's uid.
	prun --tmpfs "/home/agent:rw,exec,mode=1777,size=64m$NOCOPYUP" "$SEALED" 'stat -c "%a %u %g" "$HOME"'
	expect_rc 0
	expect_out $'700 1000 1000\n'
	expect_err ""
	end
fi
# turninit that cannot lock a command down refuses before it sets anything up.
if begin e-no-setpcap-refused; then
	prun --cap-drop SETPCAP --tmpfs "$HOME_TMPFS" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "running without CAP_SETPCAP, turninit cannot"
	end
fi
if begin e-user-1000-refused; then
	prun --user 1000:1000 --tmpfs "$HOME_TMPFS" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "running as uid 1000 without CAP_SETPCAP, CAP_SETUID, CAP_SETGID"
	end
fi
if begin c-no-trusted-keys-option; then
	# Trust roots are never chosen by whoever launches the container.
	prun --tmpfs "$HOME_TMPFS" "$SEALED" --trusted-keys /etc/hostname 'echo COMMAND-RAN'
	expect_refusal "unknown option --trusted-keys"
	end
fi
if begin c-manifest-not-a-regular-file; then
	t0=$(now_ms)
	# /dev/stdin is /dev/null here; a pipe (podman run -i) is refused the same way,
	# but podman's -i attach can lose the stderr of a container this quick.
	# docker run has no --unsetenv: the image without a manifest in its Env.
	unsealed=(--unsetenv TURNINIT_MANIFEST --unsetenv TURNINIT_MANIFEST_SIG "$SEALED")
	docker_engine && unsealed=("$IMG:base")
	prun --tmpfs "$HOME_TMPFS" "${unsealed[@]}" --manifest /dev/stdin 'echo COMMAND-RAN'
	expect_refusal "not a regular file"
	# no hang (the engine's own timeout is 60 s); a loaded machine may be slow
	ms=$(( $(now_ms) - t0 ))
	((ms < 50000)) || why "took $ms ms"
	echo "# c-manifest-not-a-regular-file: refused in $ms ms"
	end
fi
if begin c-refusal-stays-one-line; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" $'--bogus\nturninit: forged line' 'echo COMMAND-RAN'
	expect_refusal "unknown option --bogus?turninit: forged line"
	end
fi
if begin f-command-starting-with-dash; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" -- '-x'
	expect_rc 127
	expect_out ""
	expect_contains stderr "$ERR" "-x: command not found"
	end
fi

# --- f. exit statuses, signals, stdin, argv -----------------------------------------
for n in 0 1 7 255; do
	begin "f-exit-$n" || continue
	prun --tmpfs "$HOME_TMPFS" "$SEALED" "exit $n"
	expect_rc "$n"
	expect_out ""
	expect_err ""
	end
done
if begin f-killed-by-sigterm-143; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" 'kill -TERM $$'
	expect_rc 143
	expect_out ""
	end
fi
if begin f-missing-program-127; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" 'no-such-program-xyz'
	expect_rc 127
	expect_out ""
	expect_contains stderr "$ERR" "no-such-program-xyz"
	end
fi
if begin f-shell-not-executable-126; then
	prun --tmpfs "$HOME_TMPFS" "${ENV_SHELL_NOEXEC[@]}" "$SEALED" 'echo COMMAND-RAN'
	expect_rc 126
	expect_out ""
	expect_contains stderr "$ERR" /etc/turninit/trusted.pub
	end
fi
if begin f-shell-missing-127; then
	prun --tmpfs "$HOME_TMPFS" "${ENV_SHELL_MISSING[@]}" "$SEALED" 'echo COMMAND-RAN'
	expect_rc 127
	expect_out ""
	expect_contains stderr "$ERR" /bin/no-such-shell
	end
fi
if begin f-timeout-124; then
	t0=$(now_ms)
	# The sleep ends only by the timeout. The bound tells turninit's 124 from
	# that of the engine's hard timeout (60 s), whatever the machine's load.
	prun --tmpfs "$HOME_TMPFS" "${ENV_TIMEOUT[@]}" "$SEALED" 'sleep 1000'
	ms=$(( $(now_ms) - t0 ))
	expect_rc 124
	expect_out ""
	((ms < 45000)) || why "the turn took $ms ms with limits.timeout_s 1"
	echo "# f-timeout-124: the turn took $ms ms with limits.timeout_s 1"
	end
fi
if begin l-landlock-writes-outside-fail; then
	# /work and /tmp are world-writable in the image: only Landlock stops these.
	prun --tmpfs "$HOME_TMPFS" "${ENV_LL_NARROW[@]}" "$SEALED" \
		'for p in /work/x /tmp/x "$HOME/x"; do touch "$p" 2>/dev/null && echo "$p ok" || echo "$p denied"; done
		 mkdir /tmp/d 2>&1 | sed "s/.*: //"; : > /dev/null && echo devnull ok'
	expect_rc 0
	expect_out $'/work/x denied\n/tmp/x denied\n/home/agent/x ok\nPermission denied\ndevnull ok\n'
	end
fi
if begin l-landlock-default-writable; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" \
		'touch /work/x /tmp/x "$HOME/x" && echo ok; ln -s /tmp/x /tmp/y && echo link ok'
	expect_rc 0
	expect_out $'ok\nlink ok\n'
	end
fi
if begin l-landlock-shm-false; then
	# landlock.shm false: /dev/shm (the pod's IPC namespace) is not writable;
	# by default it is. verify lists the paths always writable.
	prun --tmpfs "$HOME_TMPFS" "${ENV_LL_NO_SHM[@]}" "$SEALED" \
		'touch /dev/shm/x 2>&1 | sed "s/.*: //"; touch /tmp/x && echo tmp ok'
	expect_rc 0
	expect_out $'Permission denied\ntmp ok\n'
	prun --tmpfs "$HOME_TMPFS" "$SEALED" 'touch /dev/shm/x && echo shm ok'
	eq "default" "$OUT" $'shm ok\n'
	prun --tmpfs "$HOME_TMPFS" "${ENV_LL_NO_SHM[@]}" "$SEALED" verify
	aw=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["landlock"]["always_writable"]))' 2>&1)
	eq "verify: always_writable" "$aw" "/dev/null /dev/zero /dev/full /dev/tty /dev/ptmx /dev/pts"
	end
fi
if begin l-landlock-shm-false-link-refused; then
	# A writable path that leads to /dev/shm through a symbolic link is
	# refused at start: the manifest's names alone cannot tell.
	prun --tmpfs "$HOME_TMPFS$NOCOPYUP" "${ENV_LL_SHM_LINK[@]}" "$IMG:dotfiles" 'echo COMMAND-RAN'
	expect_refusal "landlock.writable: /shmlink leads to /dev/shm, which makes /dev/shm writable, and landlock.shm is false"
	end
fi
if begin l-landlock-proc-link-refused; then
	# /proc writable would let a command lower its oom_score_adj: the
	# manifest refuses the name, and turninit a path that leads there.
	prun --tmpfs "$HOME_TMPFS$NOCOPYUP" "${ENV_LL_PROC_LINK[@]}" "$IMG:dotfiles" 'echo COMMAND-RAN'
	expect_refusal "landlock.writable: /proclink leads into /proc, which commands may not write"
	end
fi
if begin l-landlock-unavailable-refused; then
	prun --security-opt seccomp="$NO_LANDLOCK" --tmpfs "$HOME_TMPFS" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "landlock.optional is false"
	end
fi
if begin l-landlock-unavailable-optional; then
	prun --security-opt seccomp="$NO_LANDLOCK" --tmpfs "$HOME_TMPFS" "${ENV_LL_OPTIONAL[@]}" \
		"$SEALED" 'echo COMMAND-RAN'
	expect_rc 0
	expect_out $'COMMAND-RAN\n'
	[[ $ERR == "turninit: landlock: not available; "*$'\n' && $(printf '%s' "$ERR" | wc -l) -eq 1 ]] \
		|| why "stderr is not the one landlock line"
	end
fi
if begin l-verify-reports-abi; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" verify
	expect_rc 0
	abi=$(printf '%s' "$OUT" | python3 -c 'import json,sys; l=json.load(sys.stdin)["landlock"]; print(l["abi"], l["status"])' 2>&1)
	want=$(python3 -c 'import ctypes; l=ctypes.CDLL(None); l.syscall.restype=ctypes.c_long; print(l.syscall(444, None, 0, 1))')
	eq "landlock abi and status" "$abi" "$want enforced"
	end
fi
if begin f-timeout-terms-setsid-child; then
	# The timeout ends what left the process group too, with SIGTERM at once
	# (the terminate engine, as in serve mode): the setsid'd child's TERM trap
	# runs, and the shell, which traps TERM, waits for it; the turn ends at
	# its timeout (10 s: the traps are set by then on a loaded machine), not
	# after the 5 s grace, whose SIGKILL would leave no "child got TERM" and
	# no "main done". The sleep ends only when killed.
	t0=$(now_ms)
	prun --tmpfs "$HOME_TMPFS" "${ENV_TIMEOUT10[@]}" "$SEALED" \
		'trap : TERM; busybox setsid bash -c '\''trap "echo child got TERM; exit 3" TERM; echo ready; sleep 1000 & wait'\'' & c=$!; while kill -0 $c 2>/dev/null; do wait $c; done; echo main done'
	ms=$(( $(now_ms) - t0 ))
	expect_rc 124
	expect_out $'ready\nchild got TERM\nmain done\n'
	((ms >= 10000 && ms < 50000)) || why "the turn took $ms ms with limits.timeout_s 10"
	echo "# f-timeout-terms-setsid-child: the turn took $ms ms with limits.timeout_s 10"
	end
fi
if begin f-orphans-reaped; then
	# Orphans are reparented to PID 1, which must reap them: no zombie stays.
	# Five orphans sleep until the command kills them, which then waits
	# (bounded) until all five are gone from /proc, and counts the zombies.
	prun --tmpfs "$HOME_TMPFS" "$SEALED" \
		'for i in 1 2 3 4 5; do p="$p $(sleep 1000 >/dev/null 2>&1 & echo $!)"; done; kill $p
		for t in $(seq 300); do n=0; for q in $p; do [ -e /proc/$q ] && n=$((n+1)); done; [ $n = 0 ] && break; sleep 0.1; done
		cat /proc/[0-9]*/stat 2>/dev/null | awk "\$3 == \"Z\"" | wc -l'
	expect_rc 0
	expect_out $'0\n'
	expect_err ""
	end
fi
if begin f-argv-not-reparsed; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" printf '[%s]' 'a b' '$HOME' ';id'
	expect_rc 0
	expect_out '[a b][$HOME][;id]'
	expect_err ""
	end
fi
if begin f-argv-env-exact; then
	prun --tmpfs "$HOME_TMPFS" -e TZ=UTC "$SEALED" env -u TZ
	expect_rc 0
	eq "env (sorted)" "$(printf '%s' "$OUT" | sorted; echo .)" "${ENV_MAIN_ARGV}."
	expect_err ""
	end
fi
if begin f-stdin-passes-through; then
	run_input $'x\ny\n' "${ENGINE_RUN[@]}" -i --tmpfs "$HOME_TMPFS" "$SEALED" cat
	expect_rc 0
	expect_out $'x\ny\n'
	expect_err ""
	end
fi
if begin "f-$ENGINE_NAME-stop-143-before-the-kill"; then
	# The stop's SIGTERM ends the turn: status 143, before the engine's SIGKILL
	# at the end of -t (that would be 137); the time is reported, not bounded
	# by the machine's speed. The sleep ends only by the stop.
	name=turninit-itest-$$-stop
	run_cmd timeout 60 "$ENGINE" run -d --pull never --network none --label "$LABEL" \
		--name "$name" --tmpfs "$HOME_TMPFS" "$SEALED" 'sleep 1000'
	if [[ $RC -ne 0 ]]; then
		why "$ENGINE_NAME run -d failed"
	else
		pid1=$(timeout 60 "$ENGINE" inspect --format '{{.State.Pid}}' "$name")
		if ! wait_for 60 pgrep -x -P "$pid1" sleep >/dev/null; then
			why "the command (sleep) did not start under PID 1 ($pid1) within 60 s"
		else
			t0=$(now_ms)
			run_cmd timeout 90 "$ENGINE" stop -t 60 "$name"
			ms=$(( $(now_ms) - t0 ))
			expect_rc 0
			((ms < 60000)) || why "$ENGINE_NAME stop took $ms ms (want < 60000, its -t)"
			code=$(timeout 60 "$ENGINE" inspect --format '{{.State.ExitCode}}' "$name")
			eq "container exit code" "$code" 143
			echo "# $ENGINE_NAME stop returned in $ms ms"
		fi
	fi
	engine_rm "$name"
	end
fi

# --- h. turninit as the engine's init: podman's --init-path, dockerd's ---------------------
if begin h-init-path; then
	# podman runs /run/podman-init -- CMD...; the image's own ENTRYPOINT is
	# cleared. Docker runs /sbin/docker-init -- CMD..., the binary of the
	# daemon's --init-path, which tests/integration/docker.sh sets to $BIN
	# (it checks that docker info shows turninit's commit).
	if docker_engine; then
		init=(--init --entrypoint '')
	else
		init=(--init --init-path "$BIN" --entrypoint '[]')
	fi
	prun "${init[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" \
		'echo hi; echo "$LANG"; grep -E "^CapEff:" /proc/self/status; echo "${GH_TOKEN-unset}"'
	expect_rc 0
	expect_out $'hi\nC.UTF-8\nCapEff:\t0000000000000000\nunset\n'
	expect_err ""
	end
fi

# --- verify, --version, --help ---------------------------------------------------------
if begin v-verify-prints-policy-json; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" verify
	expect_rc 0
	expect_err ""
	got=$(printf '%s' "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
m = d["manifest"]
print(d["turninit"], d["commit"], "|", d["source"], "|", m["user"]["uid"], m["user"]["gid"], m["home"], m["workdir"], m["env"]["set"]["PATH"], m["env"]["allow"])' 2>&1)
	# version and commit as --version names them
	commit=$("$BIN" --version | sed -n 's/^turninit version .* - git\.//p')
	eq "parsed policy" "$got" "$VERSION $commit | image config Env (TURNINIT_MANIFEST) | 1000 1000 /home/agent /work /usr/local/bin:/usr/bin:/bin ['TZ']"
	end
fi
if begin e-home-runs-scripts; then
	# HOME's flag, as the docs give it for this engine, lets a command run a
	# script it wrote there (Docker mounts a --tmpfs noexec unless told exec:
	# its line once left exec out, and such a script failed with 126).
	prun --tmpfs "$HOME_TMPFS" "$SEALED" 'printf "#!/bin/sh\necho script ran\n" > ~/s.sh && chmod +x ~/s.sh && ~/s.sh'
	expect_rc 0
	expect_out $'script ran\n'
	end
fi
if begin e-home-noexec-warned; then
	# A HOME mounted noexec (Docker's --tmpfs without exec; podman's with
	# noexec): one line at the start and in verify, not only a 126 later.
	if docker_engine; then
		noexec=/home/agent:mode=0700,uid=1000,gid=1000
	else
		noexec=/home/agent:rw,noexec,mode=0700,size=64m,U
	fi
	warn="turninit: HOME /home/agent is mounted noexec: a script or program the commands put there fails with 126 (Docker mounts a --tmpfs noexec unless its options say exec: --tmpfs /home/agent:exec,mode=0700,uid=1000,gid=1000)"
	prun --tmpfs "$noexec" "$SEALED" 'printf "#!/bin/sh\necho script ran\n" > ~/s.sh && chmod +x ~/s.sh && ~/s.sh'
	expect_rc 126
	eq "stderr's first line" "$(printf '%s' "$ERR" | head -n 1)" "$warn"
	prun --tmpfs "$noexec" "$SEALED" verify
	expect_rc 0
	expect_err "$warn"$'\n'
	prun --tmpfs "$HOME_TMPFS" "$SEALED" 'echo RAN'
	expect_err ""
	end
fi
if begin v-verify-refuses-as-a-run-would; then
	# verify answers for the flags it is given: without the HOME tmpfs a turn
	# refuses, and verify says so with the turn's own line, exit 125, the
	# policy still printed (before: exit 0 and "privileged").
	prun "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "HOME /home/agent is not a private tmpfs mount"
	run_line=$ERR
	prun "$SEALED" verify
	expect_rc 125
	expect_err "$run_line"
	got=$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); s=d["start"]; print(s["mode"], s["refusal"]); print(d["workdir"])' 2>&1)
	eq "verify start" "$got" "refused ${run_line#turninit: }not checked: the start is refused"
	end
fi
if begin v-workdir-not-writable-warned; then
	# A workdir the commands cannot write: one line at the start (and in
	# verify), not only bash's "Permission denied" later.
	wd=$(mktemp -d "${TMPDIR:-/tmp}/turninit-itest-wd.XXXXXX")
	chmod 0755 "$wd"
	warn="turninit: workdir /work (owner 0:0, mode 0755) is not writable by the commands' 1000:1000: they cannot write there (give them the folder, for example -v DIR:/work with DIR theirs, or set the manifest's \"workdir\")"
	prun --tmpfs "$HOME_TMPFS" -v "$wd:/work" "$SEALED" 'echo RAN; echo x > x'
	expect_rc 1
	expect_out $'RAN\n'
	eq "stderr's first line" "$(printf '%s' "$ERR" | head -n 1)" "$warn"
	expect_contains stderr "$ERR" "Permission denied"
	prun --tmpfs "$HOME_TMPFS" -v "$wd:/work" "$SEALED" verify
	expect_rc 0
	expect_err "$warn"$'\n'
	eq "verify workdir" "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["workdir"])' 2>&1)" "${warn#turninit: }"
	chmod 1777 "$wd"
	prun --tmpfs "$HOME_TMPFS" -v "$wd:/work:ro" "$SEALED" 'echo RAN'
	expect_rc 0
	expect_out $'RAN\n'
	expect_err "turninit: workdir /work is on a read-only mount: commands cannot write there (mount it read-write, or set the manifest's \"workdir\" to a folder they can)"$'\n'
	prun --tmpfs "$HOME_TMPFS" -v "$wd:/work" "$SEALED" 'echo RAN'
	expect_err ""
	rmdir "$wd"
	end
fi
if begin v-verify-refuses-forgery; then
	prun --tmpfs "$HOME_TMPFS" "${ENV_TAMPERED[@]}" "$SEALED" verify
	expect_refusal signature
	end
fi
if begin v-version; then
	prun "$SEALED" --version
	expect_rc 0
	[[ $OUT == turninit* && $OUT == *$'\n' && $(printf '%s' "$OUT" | wc -l) -eq 1 ]] \
		|| why "stdout is not one line starting 'turninit'"
	expect_contains stdout "$OUT" "$VERSION"
	# Docker's init-path check (parseInitVersion) takes the commit after " - git.";
	# without it, docker info says "N/A" and dockerd logs a parse warning
	[[ $OUT =~ ^turninit\ version\ [^\ ]+\ -\ git\.([0-9a-f]{12}|unknown)$'\n'$ ]] \
		|| why "stdout is not 'turninit version V - git.COMMIT' (tini's form, which Docker parses)"
	end
fi
if begin v-help; then
	prun "$SEALED" --help
	expect_rc 0
	expect_contains stdout "$OUT" "verify"
	end
fi

# --- the Kubernetes Job example: its pod template under podman kube play ------------------
if podman_test k-job-pod-template "podman kube play: Docker runs no Kubernetes YAML"; then
	# podman kube play has no Job kind: the Job's pod template becomes a Pod of
	# this run's name, with this suite's image and a tmpfs volume for the HOME
	# emptyDir (podman ignores medium: Memory; see oci/k8s/job.yaml).
	job_pod "$ROOT/oci/k8s/job.yaml" "$SEALED" "turninit-itest-$$-job"
	kube_job "turninit-itest-$$-job" $'hello from uid 1000 in /work, HOME /home/agent\n' ""
	end
fi

echo "# suite ran in $(( $(now_ms) - T0 )) ms"
results
