#!/bin/bash
# keepid.sh - turninit under rootless podman with --userns=keep-id, the desktop
# invocation (issue 9, Deliver 2 and 3). Runs as an unprivileged user whose
# podman is rootless, with ITEST_ROOTLESS=1: tests/integration/rootless.sh
# (`make rootless`) makes that user and runs this suite as it.
#
# The manifests name the invoking user's uid and gid. turninit starts as root
# of the container (`--user 0:0`, under keep-id a subordinate uid: neither the
# user nor host root) and runs each command as the user, so what a command
# writes in a bind-mounted workspace belongs to the user on the host. Asserted:
#   - workspace files owned by the user (control: without keep-id they belong
#     to a subordinate uid), also with keep-id:uid=1000,gid=1000 and an image
#     sealed for uid 1000;
#   - HOME a private, empty tmpfs of mode 0700 owned by the user; refused when
#     missing, when a bind of the user's own tmpfs directory or workspace, or a
#     whole tmpfs of host root's (ITEST_HOST_TMPFS); mounted by turninit itself
#     with --cap-add SYS_ADMIN;
#   - the command's capabilities (all five sets empty), securebits locked,
#     no_new_privs, seccomp (the probe table of sandbox.sh), Landlock, as under
#     rootful podman; turninit started without capabilities (keep-id without
#     --user 0:0) refuses at start, in one-shot and in serve mode;
#   - the README's keep-id example, run as written;
#   - start time, rootless and keep-id, against plain podman (notes only).
# Where rootless podman cannot do something here (pids limits on cgroup v1)
# the suite says so and skips that assertion.
#
# Every podman call has a hard timeout and runs with --pull never --network
# none; containers are labelled and removed at exit. Prints TAP ("ok N - NAME", "not ok N - NAME") with the evidence, writes "PASS FAIL" to build/test-results/keepid, and
# ends with "N passed, N failed"; exits 1 on any failure.
# shellcheck disable=SC2016 # '$X' is literal: it runs in the container
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
suite_open keepid kidtest "rootless podman" podman buildah minisign timeout file

IMG=localhost/turninit-kidtest
TMPDIRS=()

rootless || abort "--userns=keep-id is a rootless podman mode: run tests/integration/rootless.sh as root (or this suite with ITEST_ROOTLESS=1 as an unprivileged user)"
cleanup() {
	local d
	cleanup_containers
	for d in "${TMPDIRS[@]}"; do
		rm -rf "$d"
	done
}
mkdir -p "$WORK/m"
trap cleanup EXIT
T0=$(now_ms)
U=$(id -u) G=$(id -g)

# --- the probe (make helpers) ------------------------------------------------------------
need_helpers probe
PROBE=$HELPERS/probe
declare -A EXP_V EXP_C
NAMES=()
while read -r name verdict code _; do
	NAMES+=("$name")
	EXP_V[$name]=$verdict
	EXP_C[$name]=$code
done < <("$PROBE" list)
[[ ${#NAMES[@]} -gt 0 ]] || abort "probe list printed nothing"

# --- manifests and images ----------------------------------------------------------------
trusted_keys
KHEAD=${HEAD/'"uid":1000,"gid":1000'/"\"uid\":$U,\"gid\":$G"}
[[ $KHEAD == *"\"uid\":$U,\"gid\":$G"* ]] || abort "lib.sh HEAD has no uid 1000, gid 1000 to replace"
manifest main "{$KHEAD,\"env\":{$SET,\"allow\":[]},\"limits\":{\"nproc\":64}}"
manifest narrow "{$KHEAD,\"env\":{$SET,\"allow\":[]},\"landlock\":{\"writable\":[\"/home/agent\"]}}"
manifest uid1000 "{$HEAD,\"env\":{$SET,\"allow\":[]}}"
OV=$WORK/overlay
mkdir -p "$OV/bin"
install -m 0755 "$PROBE" "$OV/bin/probe"
sh "$ROOT/rootfs/build-image.sh" --trusted-key "$KEY_PUB" --tag "$IMG:base" \
	--root "$WORK/root" --overlay "$OV" "$BIN" >"$WORK/build.log" 2>&1 \
	|| { cat "$WORK/build.log"; abort "rootfs/build-image.sh"; }
for t in main narrow uid1000; do
	sh "$ROOT/oci/seal.sh" --image "$IMG:base" --tag "$IMG:$t" --manifest "$M/$t.json" \
		--key "$KEY_SEC" --trusted-comment "turninit keep-id test: $t" >"$WORK/seal-$t.log" 2>&1 \
		|| { cat "$WORK/seal-$t.log"; abort "oci/seal.sh $t"; }
done
prune_images
echo "# images built in $(( $(now_ms) - T0 )) ms; user uid $U gid $G"

KEEPID=(--userns=keep-id --user 0:0)
SEALED=$IMG:main
# workspace: a fresh host directory of the user's, its path in $WS.
workspace() {
	WS=$(mktemp -d "$WORK/ws.XXXXXX") || abort "mktemp"
	chmod 0755 "$WS"
}
# stat_of KEY: the value of "KEY VALUE..." in $OUT (probe status).
stat_of() {
	printf '%s\n' "$OUT" | sed -n "s/^$1 //p" | head -n 1
}

# --- a command's files in the workspace -------------------------------------------------
WRITE='id -u; id -g; touch /work/file; mkdir /work/dir; echo x > /work/dir/inner; ln -s file /work/link'
if begin k-workspace-files-owned-by-user; then
workspace
prun "${KEEPID[@]}" --tmpfs "$HOME_TMPFS" -v "$WS:/work" "$SEALED" "$WRITE"
expect_rc 0
expect_out "$U"$'\n'"$G"$'\n'
expect_err ""
for f in file dir dir/inner link; do
	eq "host owner of $f" "$(stat -c '%u:%g' "$WS/$f" 2>&1)" "$U:$G"
done
end; fi

# Control: the same run in rootless podman's default user namespace. The
# command's uid (the user's number) is then a subordinate uid on the host; the
# workspace must be world-writable for it to write at all.
if begin k-control-default-userns-files-not-users; then
workspace
chmod 0777 "$WS"
prun --tmpfs "$HOME_TMPFS" -v "$WS:/work" "$SEALED" "$WRITE"
expect_rc 0
owner=$(stat -c '%u:%g' "$WS/file" 2>&1)
[[ $owner =~ ^[0-9]+:[0-9]+$ && $owner != "$U:$G" && $owner != 0:0 ]] \
	|| why "host owner of file: got $owner, want a subordinate uid, not $U:$G"
echo "# without keep-id the command's files belong to $owner on the host"
end; fi

# podman 4.3 and later: keep-id:uid=1000,gid=1000 maps the user to uid 1000 in
# the container, so an image sealed for uid 1000 serves every user.
if begin k-keep-id-as-uid-1000; then
workspace
prun --userns=keep-id:uid=1000,gid=1000 --user 0:0 --tmpfs "$HOME_TMPFS" -v "$WS:/work" "$IMG:uid1000" "$WRITE"
expect_rc 0
expect_out $'1000\n1000\n'
expect_err ""
for f in file dir dir/inner link; do
	eq "host owner of $f" "$(stat -c '%u:%g' "$WS/$f" 2>&1)" "$U:$G"
done
end; fi

# --- HOME -----------------------------------------------------------------------------
if begin k-home-private-tmpfs; then
prun "${KEEPID[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" \
	'stat -f -c %T "$HOME"; stat -c "%a %u %g" "$HOME"; ls -A "$HOME" | wc -l
	 awk -v h="$HOME" '\''$5 == h { for (i = 7; $i != "-"; i++); print $4, $(i + 1) }'\'' /proc/self/mountinfo'
expect_rc 0
expect_out "tmpfs"$'\n'"700 $U $G"$'\n0\n/ tmpfs\n'
expect_err ""
end; fi

if begin k-no-tmpfs-refused-naming-flag; then
prun "${KEEPID[@]}" "$SEALED" 'echo COMMAND-RAN'
expect_refusal "--tmpfs /home/agent"
end; fi

# The user's own directory in a host tmpfs: empty, a tmpfs, owned by the
# manifest's uid under keep-id, so only the whole-mount check stops it.
if begin k-bind-of-own-tmpfs-dir-refused; then
shared=$(mktemp -d /dev/shm/turninit-kidtest.XXXXXX)
TMPDIRS+=("$shared")
chmod 0700 "$shared"
prun "${KEEPID[@]}" -v "$shared:/home/agent" "$SEALED" 'echo COMMAND-RAN'
expect_refusal "not a private tmpfs"
eq "host dir" "$(stat -c '%u:%g %a' "$shared") $(find "$shared" -mindepth 1 | wc -l)" "$U:$G 700 0"
end; fi

# A whole, empty tmpfs of host root's (rootless.sh mounts one): rootful
# turninit would take it (a kubelet's memory emptyDir looks the same); here its
# owner is not mapped into the user namespace, shows as the overflow uid, and
# is refused.
if [[ -n ${ITEST_HOST_TMPFS:-} ]] && mountpoint -q "$ITEST_HOST_TMPFS"; then
	if begin k-host-root-tmpfs-refused; then
	prun "${KEEPID[@]}" -v "$ITEST_HOST_TMPFS:/home/agent" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "owned by uid 65534, not $U (the overflow uid"
	eq "host tmpfs" "$(stat -c '%u:%g %a' "$ITEST_HOST_TMPFS")" "0:0 1777"
	end; fi
else
	skip k-host-root-tmpfs-refused "no tmpfs of host root's in ITEST_HOST_TMPFS (tests/integration/rootless.sh mounts one)"
fi

if begin k-bind-of-workspace-at-home-refused; then
workspace
prun "${KEEPID[@]}" -v "$WS:/home/agent" "$SEALED" 'echo COMMAND-RAN'
expect_refusal "not a private tmpfs"
end; fi

if begin k-sys-admin-mounts-home-itself; then
prun "${KEEPID[@]}" --cap-add SYS_ADMIN "$SEALED" \
	'stat -f -c %T "$HOME"; stat -c "%a %u %g" "$HOME"; grep -E "^Cap(Eff|Bnd):" /proc/self/status'
expect_rc 0
expect_out "tmpfs"$'\n'"700 $U $G"$'\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n'
expect_err ""
end; fi

# --- the command's privileges, as under rootful podman ------------------------------------
if begin k-caps-securebits-nnp-seccomp-ids; then
prun "${KEEPID[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" 'exec /bin/probe status'
expect_rc 0
expect_err ""
for k in CapInh CapPrm CapEff CapBnd CapAmb; do
	eq "$k" "$(stat_of "$k")" 0000000000000000
done
eq NoNewPrivs "$(stat_of NoNewPrivs)" 1
eq Seccomp "$(stat_of Seccomp)" 2
eq securebits "$(stat_of securebits)" 0x2f
eq uid "$(stat_of uid)" "$U $U $U"
eq gid "$(stat_of gid)" "$G $G $G"
eq groups "$(stat_of groups)" none
eq fds "$(stat_of fds)" "0 1 2"
end; fi

# Every probe of the table gets the verdict sandbox.sh asserts under rootful
# podman: attacks blocked or killed, controls allowed. A row that relies on a
# kernel feature is not asserted where the kernel lacks it (sandbox.sh's
# ROW_FEATURE: int 0x80 never reaches the filter without IA32 emulation).
declare -A ROW_FEATURE=([int80_getpid]=int80 [x32_getpid]=x86_64) ROW_SKIP=()
for name in "${!ROW_FEATURE[@]}"; do
	[[ -n ${EXP_V[$name]-} ]] || abort "ROW_FEATURE names $name, which probe list does not"
	kernel_lacks "${ROW_FEATURE[$name]}" && ROW_SKIP[$name]=$KERNEL_WHY
done
if begin k-probe-table-as-rootful; then
prun "${KEEPID[@]}" --security-opt seccomp=unconfined --tmpfs "$HOME_TMPFS" "$SEALED" 'exec /bin/probe'
expect_rc 0
expect_err ""
declare -A GOT=()
while read -r name verdict code; do
	[[ -n $name ]] && GOT[$name]="$verdict $code"
done <<<"$OUT"
for name in "${NAMES[@]}"; do
	got=${GOT[$name]-missing}
	if [[ -n ${ROW_SKIP[$name]-} ]]; then
		echo "# $name not asserted: ${ROW_SKIP[$name]}"
	elif [[ ${EXP_V[$name]} == allowed ]]; then
		[[ $got == "allowed "* ]] || why "$name: got $got, want allowed"
	else
		[[ $got == "${EXP_V[$name]} ${EXP_C[$name]}" ]] || why "$name: got $got, want ${EXP_V[$name]} ${EXP_C[$name]}"
	fi
done
end; fi

if begin k-landlock-writes-outside-fail; then
workspace
prun "${KEEPID[@]}" --tmpfs "$HOME_TMPFS" -v "$WS:/work" "$IMG:narrow" \
	'for p in /work/x /tmp/x "$HOME/x"; do touch "$p" 2>/dev/null && echo "$p ok" || echo "$p denied"; done'
expect_rc 0
expect_out $'/work/x denied\n/tmp/x denied\n/home/agent/x ok\n'
[[ ! -e $WS/x ]] || why "the workspace has x"
end; fi

# --- turninit without capabilities refuses at start ------------------------------------------
# keep-id without --user 0:0: turninit is the user, with no capability at all;
# it cannot lock a command down, so nothing runs.
if begin k-no-capabilities-refused; then
prun --userns=keep-id --tmpfs "$HOME_TMPFS" "$SEALED" 'echo COMMAND-RAN'
expect_refusal "--user 0:0"
end; fi
# serve with stdin at its end would otherwise start, log its Landlock line and
# exit 0: it must refuse before serving.
if begin k-no-capabilities-serve-refused; then
prun --userns=keep-id --tmpfs "$HOME_TMPFS" "$SEALED" serve
expect_refusal "without CAP_SETPCAP, CAP_SETUID, CAP_SETGID"
end; fi

# --- limits ----------------------------------------------------------------------------------
# The manifest's rlimits hold in any user namespace; a cgroup pids limit needs
# cgroup v2 with the pids controller delegated to the user.
if begin k-nproc-rlimit; then
prun "${KEEPID[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" 'ulimit -u; ulimit -Hu'
expect_rc 0
expect_out $'64\n64\n'
end; fi
cgv=$(timeout 60 podman info --format '{{.Host.CgroupsVersion}}' 2>&1)
if [[ $cgv != v2 ]]; then
	skip k-pids-limit "rootless podman on cgroup $cgv ignores --pids-limit (\"Resource limits are not supported and ignored on cgroups V1 rootless systems\"); limits.nproc is the bound here"
else
	if begin k-pids-limit; then
	prun "${KEEPID[@]}" --pids-limit 32 --tmpfs "$HOME_TMPFS" "$SEALED" 'cat /sys/fs/cgroup/pids.max'
	expect_rc 0
	expect_out $'32\n'
	end; fi
fi

# --- the README's keep-id example, as written --------------------------------------------------
# The lines between the markers, run in the checkout with a fresh HOME (its
# ~/.turninit key and ~/agent-work are this test's own).
if begin k-readme-example; then
block=$(sed -n '/^<!-- keep-id example/,/^<!-- end of keep-id example/{/^    /s/^    //p}' "$ROOT/README.md")
if [[ -z $block ]]; then
	why "README.md has no keep-id example between the markers"
else
	rhome=$WORK/readme-home
	mkdir -p "$rhome"
	CMD="(cd ROOT && HOME=$rhome bash -e README-block)"
	# podman keeps this user's storage and configuration (XDG_*), not $rhome's.
	xdata=${XDG_DATA_HOME:-$HOME/.local/share} xconfig=${XDG_CONFIG_HOME:-$HOME/.config}
	(cd "$ROOT" && HOME=$rhome XDG_DATA_HOME=$xdata XDG_CONFIG_HOME=$xconfig \
		timeout 600 bash -e -c "$block") >"$WORK/stdout" 2>"$WORK/stderr"
	RC=$?
	slurp "$WORK/stdout" OUT
	slurp "$WORK/stderr" ERR
	expect_rc 0
	expect_contains stdout "$OUT" "uid $U in /work"
	eq "host owner of ~/agent-work/notes.txt" "$(stat -c '%u:%g' "$rhome/agent-work/notes.txt" 2>&1)" "$U:$G"
	# docs/deployment.md's keep-id line (tests/docs/ledger: run keepid), as
	# written, with the image the block above made; ~/project is the
	# reader's project folder, made here
	mkdir -p "$rhome/project"
	if python3 "$ROOT/tests/docs/doclines.py" emit "$ROOT" keepid "$WORK/doc-keepid" >/dev/null; then
		while read -r n where; do
			(cd "$ROOT" && HOME=$rhome XDG_DATA_HOME=$xdata XDG_CONFIG_HOME=$xconfig \
				timeout 600 bash -e "$WORK/doc-keepid/$n.sh") >"$WORK/stdout" 2>"$WORK/stderr"
			RC=$?
			slurp "$WORK/stdout" OUT
			slurp "$WORK/stderr" ERR
			CMD="(cd ROOT && HOME=$rhome bash -e <the block at $where>)"
			expect_rc 0
			eq "$where: stdout" "$OUT" "hello from $U"$'\n'
		done < "$WORK/doc-keepid/list"
		[[ -s $WORK/doc-keepid/list ]] || why "tests/docs/ledger lists no keepid block"
	else
		why "tests/docs/doclines.py emit keepid failed"
	fi
	timeout 60 podman rmi localhost/agent-turn-keepid:1 localhost/agent-base:1 >/dev/null 2>&1
fi
end; fi

# --- start time (notes, not assertions) ----------------------------------------------------------
# median_ms N CMD...: the median wall time of N runs of CMD, in ms.
median_ms() {
	local n=$1 i t ts=()
	shift
	for ((i = 0; i < n; i++)); do
		t=$(now_ms)
		"$@" </dev/null >/dev/null 2>&1
		ts+=($(($(now_ms) - t)))
	done
	printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(((n + 1) / 2))p"
}
plain=$(median_ms 5 "${PODMAN_RUN[@]}" --entrypoint /bin/true "$IMG:base")
rl=$(median_ms 5 "${PODMAN_RUN[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" true)
kid=$(median_ms 5 "${PODMAN_RUN[@]}" "${KEEPID[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" true)
echo "# start, median of 5 (ms): rootless podman /bin/true $plain; turninit 'true' rootless $rl, keep-id $kid"

echo "# suite ran in $(( $(now_ms) - T0 )) ms"
results
