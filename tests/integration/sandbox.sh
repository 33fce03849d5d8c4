#!/bin/bash
# sandbox.sh - the escape-probe suite: what a command under build/turninit may do
# (issue 3, Deliver 1, 2, 4, 5 and 6, and the probe table of 8). Root, podman set
# up by `make setup`; run after `make` as `bash tests/integration/sandbox.sh`.
#
# Takes tests/probe/probe.c built static by make helpers (build/helpers/probe),
# an image with it as /bin/probe
# (rootfs/build-image.sh --overlay, trusting tests/vectors/test-trusted.pub) and
# sealed manifests (oci/seal.sh), then asserts:
#   - every probe's verdict under turninit is the one the probe table expects
#     (tests/probe/probe.c: attacks blocked or killed, controls allowed), inside
#     podman's default seccomp profile and, so that turninit's own filter is what
#     is measured, with the runtime's profile off;
#   - the same probe under plain podman (default profile, --user 1000:1000):
#     recorded, controls allowed; both columns go to the marked probe-table
#     section of a copy of docs/security.md, build/stest/security.md (the
#     suite never writes a tracked file: `make update-docs` copies it);
#   - without turninit's filter (seccomp.deny []) the attacks reach the kernel:
#     the suite can go red;
#   - `probe status`: no capabilities, NoNewPrivs, seccomp, locked securebits, ids,
#     fds 0 1 2 only (also with podman --preserve-fds), rlimits, PID 1's /proc
#     closed, a session leader without a controlling tty (also under podman -t);
#   - i386 and x32 syscalls kill the probe, not turninit: status 159.
#
# With ITEST_ENGINE=docker the same under the dockerd of
# tests/integration/docker.sh ("podman" then reads "docker", and the table of
# docs/security.md is not written); what only podman has is skipped, saying why.
#
# Every podman (or docker) call has a hard timeout (60 s) and runs with --pull never
# --network none; containers are labelled and removed at exit. Prints TAP ("ok N - NAME",
# "not ok N - NAME") with the evidence, writes "PASS FAIL" to
# build/test-results/sandbox, and ends with "N passed, N failed"; exits 1 on any
# failure. ITEST_BINARY=PATH tests another binary than build/turninit (to see
# the suite go red against a naive entrypoint).
# shellcheck disable=SC2016 # '$?' and the like run in the container
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VECTORS=$ROOT/tests/vectors
DOC=$ROOT/docs/security.md
RESULTS=$ROOT/build/test-results
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
ENGINES="podman docker"
suite_open sandbox stest "rootful $ENGINE_NAME" podman buildah minisign timeout file

IMG=localhost/turninit-stest$ENGINE_TAG


mkdir -p "$WORK/m"
trap cleanup_containers EXIT

T0=$(now_ms)

# --- the probe ---------------------------------------------------------------------
# Static (make helpers), so it runs in the image's empty root.
need_helpers probe
PROBE=$HELPERS/probe
file "$PROBE" | grep -q 'statically linked' || abort "build/helpers/probe is not static"

# The probe table: NAME EXPECTED CODE FLAGS CALL... (`probe list` calls nothing).
declare -A EXP_V EXP_C CALL
NAMES=()
while read -r name verdict code _flags call; do
	NAMES+=("$name")
	EXP_V[$name]=$verdict
	EXP_C[$name]=$code
	CALL[$name]=$call
done < <("$PROBE" list)
[[ ${#NAMES[@]} -gt 0 ]] || abort "probe list printed nothing"
is_control() { [[ $1 == ctl_* ]]; }

# Rows that rely on a kernel feature (docs/testing.md, "Kernel features"):
# ROW_FEATURE[NAME]=FEATURE. Where the kernel lacks it, the row is not asserted
# in the tables (its own TAP line is a skip with the kernel's reason), nor
# written to docs/security.md as measured. int 0x80 never reaches the filter
# on a kernel without IA32 emulation (SIGSEGV at the entry); there the x32 rows
# still hold the filter's architecture check (killed whether or not the kernel
# has the x32 ABI: the filter sees the x32 bit first). Neither entry exists
# off x86_64 (aarch64: tests/unit/test_filter_arch.c simulates 32-bit ARM's).
declare -A ROW_FEATURE=([int80_getpid]=int80 [x32_getpid]=x86_64) ROW_SKIP=()
for name in "${!ROW_FEATURE[@]}"; do
	[[ -n ${EXP_V[$name]-} ]] || abort "ROW_FEATURE names $name, which probe list does not"
	kernel_lacks "${ROW_FEATURE[$name]}" && ROW_SKIP[$name]=$KERNEL_WHY
done

# --- keys and manifests ------------------------------------------------------------
KEY_SEC=$VECTORS/test-trusted.key KEY_PUB=$VECTORS/test-trusted.pub
if [[ ! -r $KEY_SEC || ! -r $KEY_PUB ]]; then
	KEY_SEC=$WORK/keys/test-trusted.key KEY_PUB=$WORK/keys/test-trusted.pub
	mkdir -p "$WORK/keys"
	minisign -G -W -f -s "$KEY_SEC" -p "$KEY_PUB" </dev/null >/dev/null || abort "minisign -G"
	echo "# tests/vectors/test-trusted.{key,pub} missing: using a temporary pair in build/stest/keys"
fi
M=$WORK/m
# nproc: a value of its own, above the default 512: RLIMIT_NPROC counts every
# process of host uid 1000, and the turns of the suites beside this one in
# make check run as that uid too (pid1's 100 orphans alone are 200 at a time)
LIMITS='"limits":{"nofile":512,"nproc":2048,"fsize_bytes":10485760}'
printf '%s\n' "{$HEAD,\"env\":{$SET,\"allow\":[]},$LIMITS,\"seccomp\":{\"deny\":[\"@default\"],\"allow\":[]}}" > "$M/main.json"
printf '%s\n' "{$HEAD,\"env\":{$SET,\"allow\":[]},$LIMITS,\"seccomp\":{\"deny\":[],\"allow\":[]}}" > "$M/nofilter.json"
# A bare syscall name denies the whole syscall, not the argument rules of a
# group that names it (@tty-inject, @unusual-sockets, @namespaces).
printf '%s\n' "{$HEAD,\"env\":{$SET,\"allow\":[]},$LIMITS,\"seccomp\":{\"deny\":[\"ioctl\",\"socket\",\"unshare\"],\"allow\":[]}}" > "$M/whole.json"

# --- images -----------------------------------------------------------------------
OV=$WORK/overlay
mkdir -p "$OV/bin"
install -m 0755 "$PROBE" "$OV/bin/probe"
sh "$ROOT/rootfs/build-image.sh" --trusted-key "$KEY_PUB" --tag "$IMG:base" \
	--root "$WORK/root" --overlay "$OV" "$BIN" >"$WORK/build.log" 2>&1 \
	|| { cat "$WORK/build.log"; abort "rootfs/build-image.sh"; }
seal() { # seal TAG MANIFEST
	sh "$ROOT/oci/seal.sh" --image "$IMG:base" --tag "$IMG:$1" --manifest "$2" \
		--key "$KEY_SEC" --trusted-comment "turninit sandbox test: $1" \
		>"$WORK/seal-$1.log" 2>&1 || { cat "$WORK/seal-$1.log"; abort "oci/seal.sh $1"; }
}
seal sealed "$M/main.json"
seal nofilter "$M/nofilter.json"
seal whole "$M/whole.json"
prune_images
engine_images "$IMG:base" "$IMG:sealed" "$IMG:nofilter" "$IMG:whole"
echo "# images built in $(( $(now_ms) - T0 )) ms"

SEALED=$IMG:sealed
PLAIN=(--user 1000:1000 --entrypoint /bin/probe "$IMG:base")
UNCONFINED=(--security-opt seccomp=unconfined)
# RUNTIME[NAME]: what the engine's own default seccomp profile answers to the
# probe NAME, where that is not the table's verdict. Docker's allows unshare
# only with CAP_SYS_ADMIN, even unshare(0); podman's allows unshare(0).
declare -A RUNTIME=()
docker_engine && RUNTIME[ctl_unshare_none]="blocked EPERM"

# --- the probe table ----------------------------------------------------------------
# parse_table ARRAY TEXT: ARRAY[name]="VERDICT CODE" for each line of TEXT.
# shellcheck disable=SC2034 # into is a nameref: the caller's array is written
parse_table() {
	local -n into=$1
	local name verdict code
	while read -r name verdict code; do
		[[ -n $name ]] && into["$name"]="$verdict $code"
	done <<<"$2"
}

# matches NAME GOT: GOT ("VERDICT CODE") is what the table expects of NAME.
matches() {
	if [[ ${EXP_V[$1]} == allowed ]]; then
		[[ $2 == "allowed "* ]]
	else
		[[ $2 == "${EXP_V[$1]} ${EXP_C[$1]}" ]]
	fi
}

# check_table ARRAY [profile]: every probe ran and got its expected verdict;
# with "profile" (the runtime's default profile was on) RUNTIME's where it
# has one.
check_table() {
	local -n table=$1
	local name got want
	for name in "${NAMES[@]}"; do
		[[ -n ${ROW_SKIP[$name]-} ]] && continue
		got=${table[$name]-missing}
		if [[ ${2:-} == profile && -n ${RUNTIME[$name]-} ]]; then
			[[ $got == "${RUNTIME[$name]}" ]] || why "$name: got $got, want ${RUNTIME[$name]} (the runtime's profile)"
			continue
		fi
		want=${EXP_V[$name]}
		[[ $want == allowed ]] || want+=" ${EXP_C[$name]}"
		matches "$name" "$got" || why "$name: got $got, want $want"
	done
	for name in "${!table[@]}"; do
		[[ -n ${EXP_V[$name]-} ]] || why "unknown probe line: $name ${table[$name]}"
	done
}

declare -A TURNINIT UNCONF PODMAN NOFILTER

begin probes-under-turninit   # always run: the rows and the table below need its figures
prun --tmpfs "$HOME_TMPFS" "$SEALED" 'exec /bin/probe'
expect_rc 0
expect_err ""
parse_table TURNINIT "$OUT"
check_table TURNINIT profile
end

# The runtime's profile off: the figures are turninit's filter alone (a
# Kubernetes pod runs Unconfined unless it asks for RuntimeDefault).
begin probes-under-turninit-runtime-unconfined   # always run: the rows and the table below need its figures
prun "${UNCONFINED[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" 'exec /bin/probe'
expect_rc 0
expect_err ""
parse_table UNCONF "$OUT"
check_table UNCONF
end
# The rows the kernel cannot hold here: a skip each, with its reason.
for name in "${!ROW_SKIP[@]}"; do
	skip "probes-row-$name" "${ROW_SKIP[$name]}"
done

# Plain podman (or docker): no verdict is asserted but the controls'.
begin "probes-$ENGINE_NAME-default-controls-allowed"   # always run: the rows and the table below need its figures
prun "${PLAIN[@]}"
expect_rc 0
expect_err ""
parse_table PODMAN "$OUT"
for name in "${NAMES[@]}"; do
	[[ -n ${PODMAN[$name]-} ]] || why "$name: no result"
	if [[ -n ${RUNTIME[$name]-} ]]; then
		[[ ${PODMAN[$name]-} == "${RUNTIME[$name]}" ]] || why "$name: got ${PODMAN[$name]-missing}, want ${RUNTIME[$name]}"
	elif is_control "$name"; then
		[[ ${PODMAN[$name]-} == "allowed "* ]] || why "$name: got ${PODMAN[$name]-missing}, want allowed"
	fi
done
end

# The same turninit without its filter (deny []) and without the runtime's:
# the attacks must reach the kernel, or the table above proves nothing. Where
# the kernel alone gives the expected answer, the probe cannot tell; say which.
begin probes-without-filter-reach-kernel   # always run: the rows and the table below need its figures
prun "${UNCONFINED[@]}" --tmpfs "$HOME_TMPFS" "$IMG:nofilter" 'exec /bin/probe'
expect_rc 0
expect_err ""
parse_table NOFILTER "$OUT"
KERNEL_SAME=() KERNEL_REFUSES=() n_reach=0
for name in "${NAMES[@]}"; do
	got=${NOFILTER[$name]-missing}
	if is_control "$name"; then
		[[ $got == "allowed "* ]] || why "$name: got $got, want allowed"
		continue
	fi
	[[ ${EXP_V[$name]} == killed ]] && continue # the bad-arch action stays
	[[ -n ${ROW_SKIP[$name]-} ]] && continue
	if matches "$name" "$got"; then
		KERNEL_SAME+=("$name")
	elif [[ $got == "allowed "* ]]; then
		n_reach=$((n_reach + 1))
	else
		KERNEL_REFUSES+=("$name (${got#* })")
	fi
done
((n_reach > 0)) || why "no attack reached the kernel without the filter"
[[ ${#KERNEL_SAME[@]} -eq 0 ]] || echo "# without the filter the kernel gives the same answer (probe cannot tell): ${KERNEL_SAME[*]}"
[[ ${#KERNEL_REFUSES[@]} -eq 0 ]] || echo "# without the filter the kernel itself refuses: ${KERNEL_REFUSES[*]}"
end

echo "# probe table (expected | turninit | turninit, runtime unconfined | $ENGINE_NAME default, uid 1000 | turninit without filter)"
for name in "${NAMES[@]}"; do
	want=${EXP_V[$name]}
	[[ $want == allowed ]] || want+=" ${EXP_C[$name]}"
	printf '# %-34s | %-14s | %-18s | %-18s | %-18s | %s\n' "$name" "$want" \
		"${TURNINIT[$name]-missing}" "${UNCONF[$name]-missing}" "${PODMAN[$name]-missing}" \
		"${NOFILTER[$name]-missing}"
done

# --- the probe table in docs/security.md ---------------------------------------------
cell() { # cell "VERDICT CODE": "blocked (EPERM)"
	if [[ -z $1 ]]; then
		echo "not run"
	else
		echo "${1%% *} (${1#* })"
	fi
}
write_doc() {
	local name podman_v kernel
	podman_v=$(timeout 60 podman version --format '{{.Client.Version}}' 2>/dev/null || echo unknown)
	kernel="$(uname -r) $(uname -m)"
	echo "Generated $(date -u +%Y-%m-%d) with podman $podman_v on Linux $kernel."
	echo "\`make sandbox\` writes this section from its own run to build/stest/security.md,"
	echo "and \`make update-docs\` copies it here."
	echo
	echo "Each probe (tests/probe/probe.c) makes one syscall with an argument the kernel"
	echo "rejects before anything happens, so EFAULT, EBADF, EINVAL, ... mean the call"
	echo "reached the kernel (**allowed**), EPERM or ENOSYS mean a filter refused it"
	echo "(**blocked**), and SIGSYS means the filter killed the process (**killed**)."
	echo "\`ctl_*\` rows are controls a workload needs. *Under turninit*: the default"
	echo "manifest (\`seccomp.deny: [\"@default\"]\`, uid 1000) inside podman's default"
	echo "profile; the suite asserts the same figures with the runtime's profile off"
	echo "(\`--security-opt seccomp=unconfined\`), so they are turninit's filter alone."
	echo "*podman default profile*: \`podman run --user 1000:1000 --entrypoint /bin/probe\`"
	echo "with podman's default seccomp profile and capabilities."
	echo
	echo "| probe | under turninit | podman default profile (uid 1000) |"
	echo "|---|---|---|"
	for name in "${NAMES[@]}"; do
		is_control "$name" && continue
		if [[ -n ${ROW_SKIP[$name]-} ]]; then
			echo "| \`$name\` | not measured: ${ROW_SKIP[$name]} | not measured |"
			continue
		fi
		echo "| \`$name\` | $(cell "${TURNINIT[$name]-}") | $(cell "${PODMAN[$name]-}") |"
	done
	for name in "${NAMES[@]}"; do
		is_control "$name" || continue
		echo "| \`$name\` | $(cell "${TURNINIT[$name]-}") | $(cell "${PODMAN[$name]-}") |"
	done
	echo
	echo "In the podman column a refusal may be the kernel's rather than the profile's:"
	echo "uid 1000 holds no capability there, and a kernel built without a feature (the"
	echo "x32 ABI, kexec, modules) answers ENOSYS. The probes of fsopen, fspick, fsmount,"
	echo "move_mount and pivot_root first try \`unshare(CLONE_NEWUSER|CLONE_NEWNS)\`, as"
	echo "an attacker would, because the kernel checks CAP_SYS_ADMIN over the mount"
	echo "namespace before it looks at their arguments; under turninit that unshare is"
	echo "refused too."
	echo
	echo "The suite also runs turninit without its filter (\`seccomp.deny: []\`, runtime"
	echo "profile off): every attack then reaches the kernel except the i386 and x32"
	echo "ones, which the filter's architecture check kills whatever the deny list says$(
		[[ ${#KERNEL_REFUSES[@]} -eq 0 ]] || printf ';\nthe kernel itself refuses %s' "$(join_comma "${KERNEL_REFUSES[@]}")")."
	if [[ ${#KERNEL_SAME[@]} -gt 0 ]]; then
		echo "For $(join_comma "${KERNEL_SAME[@]}") the kernel alone answers as the filter"
		echo "does, so this probe cannot tell the two apart here."
	else
		echo "So every figure in the first column is the filter's own answer."
	fi
	echo
	echo "Rows that depend on the kernel (docs/testing.md, \"Kernel features\"):"
	echo "\`int80_getpid\` needs a kernel that delivers \`int \$0x80\` (IA32 emulation);"
	echo "without it the call dies of SIGSEGV at the entry, before any filter, so the"
	echo "row is skipped and written here as not measured. \`x32_getpid\` is killed by"
	echo "the filter's architecture check whether or not the kernel has the x32 ABI;"
	echo "without the filter such a kernel answers ENOSYS. The \`io_uring_*\` rows"
	echo "and the rows that first try \`unshare(CLONE_NEWUSER)\` are the filter's"
	echo "answer under turninit on any kernel; in the plain-podman column a kernel"
	echo "with io_uring disabled or user namespaces closed refuses by itself."
	echo
	echo "How each probe calls, and what the kernel answers when the call reaches it:"
	echo
	for name in "${NAMES[@]}"; do
		echo "- \`$name\`: ${CALL[$name]}"
	done
}
join_comma() { # join_comma WORD...: "a, b, c"
	local IFS=,
	printf '%s' "$*" | sed 's/,/, /g'
}
mask_date() { sed 's/^Generated [0-9-]* /Generated DATE /' "$1"; }
# splice DOC TABLE OUT: DOC with the lines between the probe-table markers
# replaced by TABLE.
splice() {
	python3 - "$@" <<'PYEOF'
import sys
doc, table, out = sys.argv[1:4]
begin = "<!-- probe-table: generated by tests/integration/sandbox.sh; edits are overwritten -->"
end = "<!-- probe-table end -->"
text = open(doc).read()
if begin not in text or end not in text:
    sys.exit("probe-table markers missing in " + doc)
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(out, "w").write(head + begin + "\n" + open(table).read() + end + tail)
PYEOF
}
if docker_engine; then
	echo "# docs/security.md: its probe table is podman's, not written under Docker"
elif ! { write_doc > "$WORK/probe-table.md" && splice "$DOC" "$WORK/probe-table.md" "$WORK/security.md"; }; then
	echo "# docs/security.md: probe table not written"
elif cmp -s <(mask_date "$DOC") <(mask_date "$WORK/security.md"); then
	echo "# docs/security.md: probe table unchanged"
else
	echo "# docs/security.md: this run's probe table differs; make update-docs copies it from build/stest/security.md"
fi

# --- probe status -------------------------------------------------------------------
# stat_of TEXT KEY: the value of "KEY VALUE..." in TEXT (\r stripped).
stat_of() {
	printf '%s\n' "$1" | tr -d '\r' | sed -n "s/^$2 //p" | head -n 1
}
expect_stat() { # expect_stat KEY WANT
	eq "$1" "$(stat_of "$OUT" "$1")" "$2"
}
expect_unreadable() { # expect_unreadable KEY: EACCES, EPERM or empty
	local v
	v=$(stat_of "$OUT" "$1")
	[[ $v == EACCES || $v == EPERM || $v == empty ]] || why "$1: got $(printf '%q' "$v"), want EACCES, EPERM or empty"
}

prun --tmpfs "$HOME_TMPFS" "$SEALED" 'exec /bin/probe status'
S_RC=$RC S_OUT=$OUT S_ERR=$ERR S_CMD=$CMD
status_test() { # status_test NAME: a test on the output of the one status run
	begin "$1" || return 1
	RC=$S_RC OUT=$S_OUT ERR=$S_ERR CMD=$S_CMD
	expect_rc 0
	expect_err ""
}

if status_test status-no-capabilities-nnp-seccomp; then
for k in CapInh CapPrm CapEff CapBnd CapAmb; do
	expect_stat "$k" 0000000000000000
done
expect_stat NoNewPrivs 1
expect_stat Seccomp 2
end; fi

# linux/securebits.h: NOROOT 1<<0, NOROOT_LOCKED 1<<1, NO_SETUID_FIXUP 1<<2,
# NO_SETUID_FIXUP_LOCKED 1<<3, KEEP_CAPS 1<<4 (clear), KEEP_CAPS_LOCKED 1<<5.
if status_test status-securebits-locked; then
expect_stat securebits 0x2f
end; fi

if status_test status-ids-numeric-no-groups; then
expect_stat uid "1000 1000 1000"
expect_stat gid "1000 1000 1000"
expect_stat groups none
end; fi

# The probe lists /proc/self/fd through one more fd of its own, left out of "fds"
# and reported as fds_listing_dirfd (3).
if status_test status-fds-0-1-2; then
expect_stat fds "0 1 2"
expect_stat fds_listing_dirfd 3
end; fi

if status_test status-rlimits; then
expect_stat RLIMIT_CORE "0 0"
expect_stat RLIMIT_NOFILE "512 512"
expect_stat RLIMIT_NPROC "2048 2048"
expect_stat RLIMIT_FSIZE "10485760 10485760"
end; fi

if status_test status-pid1-environ-and-mem-closed; then
expect_unreadable proc1_environ
expect_unreadable proc1_mem
end; fi

# Non-dumpable, seen where the uid does not already hide PID 1: turninit started
# as uid 1000, the manifest's uid, holding its four capabilities as ambient ones
# (podman gives --cap-add to a non-root --user that way). A command of PID 1's
# own uid would own /proc/1/* were PID 1 dumpable; non-dumpable, they belong to
# root (proc(5)). The command itself is dumpable (execve resets the flag), so
# the owner is PID 1's flag, not a property of every process here.
if podman_test status-pid1-not-dumpable-same-uid "docker run --user 1000:1000 --cap-add gives no ambient capabilities: turninit as uid 1000 holds none and refuses (e-user-1000-refused)"; then
	prun --user 1000:1000 --cap-add SETPCAP,SETUID,SETGID,KILL --tmpfs "$HOME_TMPFS" "$SEALED" \
		'grep "^Uid:" /proc/1/status; exec /bin/probe status'
	expect_rc 0
	expect_err ""
	expect_contains stdout "$OUT" $'Uid:\t1000\t1000\t1000\t1000\n'
	expect_stat uid "1000 1000 1000"
	expect_stat proc1_environ_uid 0
	expect_stat dumpable 1
	expect_unreadable proc1_environ
	# serve: PID 1 starts no command itself (its keepers do), so nothing but
	# its own flag keeps its files root's; nor are its keepers' files the uid's
	serve_session '{"op":"exec","id":"a","command":"while read -r k v; do [ \"$k\" = PPid: ] && pp=$v; done < /proc/$$/status; stat -c %u /proc/1/environ /proc/$pp/environ | tr \"\\n\" \" \""}' \
		-- "${PODMAN_RUN[@]}" -i --user 1000:1000 --cap-add SETPCAP,SETUID,SETGID,KILL \
		--tmpfs "$HOME_TMPFS" "$SEALED" serve
	expect_rc 0
	expect_out "a exit 0 None
a stdout 0 0 
"
	end
fi

# Supplementary groups the runtime gives PID 1 are not the command's: with
# --group-add, PID 1 holds them (/proc/1/status) and the command has none.
# Docker gives PID 1 its gid 0 as a supplementary group too.
if begin status-groups-dropped-after-group-add; then
prun --group-add 10 --group-add 27 --tmpfs "$HOME_TMPFS" "$SEALED" 'exec /bin/probe status'
expect_rc 0
expect_err ""
expect_stat proc1_groups "$(docker_engine && echo "0 ")10 27"
expect_stat groups none
end; fi

# turninit calls setsid before exec; `exec /bin/probe` makes the probe that process.
if status_test status-session-leader-no-ctty; then
pid=$(stat_of "$OUT" pid)
[[ -n $pid && $pid != 1 ]] || why "pid: got $(printf '%q' "$pid")"
expect_stat sid "$pid"
expect_stat pgid "$pid"
expect_stat ppid 1
expect_stat tty_nr 0
expect_stat dev_tty ENXIO
end; fi

# --- a terminal: podman run -t -------------------------------------------------------
# Control: without turninit the probe has the pty podman made as its controlling tty.
if begin "tty-control-$ENGINE_NAME-gives-ctty"; then
run_cmd timeout 60 "$ENGINE" run -t --rm --pull never --network none --label "$LABEL" "${PLAIN[@]}" status
expect_rc 0
[[ $(stat_of "$OUT" tty_nr) =~ ^[1-9][0-9]*$ ]] || why "tty_nr: got $(printf '%q' "$(stat_of "$OUT" tty_nr)"), want non-zero"
expect_stat dev_tty opened
end; fi

if begin tty-t-no-ctty-under-turninit; then
run_cmd timeout 60 "$ENGINE" run -t --rm --pull never --network none --label "$LABEL" \
	--tmpfs "$HOME_TMPFS" "$SEALED" 'exec /bin/probe status'
expect_rc 0
expect_stat tty_nr 0
expect_stat dev_tty ENXIO
pid=$(stat_of "$OUT" pid)
expect_stat sid "$pid"
expect_stat fds "0 1 2"
end; fi

# --- fds the runtime passes on: podman --preserve-fds ----------------------------------
with_fds() { "$@" 3</dev/null 4</dev/null; }
NO_PRESERVE="docker run has no --preserve-fds: Docker hands a container no fd but 0, 1 and 2 (status-fds-0-1-2)"
if podman_test fds-control-podman-passes-preserved "$NO_PRESERVE"; then
	run_cmd with_fds "${PODMAN_RUN[@]}" --preserve-fds 2 "${PLAIN[@]}" status
	expect_rc 0
	expect_stat fds "0 1 2 3 4"
	end
fi

if podman_test fds-preserved-not-inherited-under-turninit "$NO_PRESERVE"; then
	run_cmd with_fds "${PODMAN_RUN[@]}" --preserve-fds 2 --tmpfs "$HOME_TMPFS" "$SEALED" 'exec /bin/probe status'
	expect_rc 0
	expect_err ""
	expect_stat fds "0 1 2"
	end
fi

# --- a bare syscall name denies the whole syscall --------------------------------------
# Under @default, ioctl TCGETS, socket(AF_UNIX) and unshare(0) are allowed (the
# controls of the probe table); denied by name, each fails with EPERM. Under
# Docker with its profile off, which refuses unshare(0) itself (RUNTIME).
WHOLE_PROBES="ctl_ioctl_tcgets ctl_socket_unix ctl_unshare_none"
OWN=()
docker_engine && OWN=("${UNCONFINED[@]}")
if begin seccomp-default-allows-tcgets-unix-socket-unshare-0; then
prun "${OWN[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" "exec /bin/probe $WHOLE_PROBES"
expect_rc 0
expect_out $'ctl_ioctl_tcgets allowed ENOTTY\nctl_socket_unix allowed success\nctl_unshare_none allowed success\n'
end; fi
if begin seccomp-deny-by-name-denies-the-whole-syscall; then
prun "${OWN[@]}" --tmpfs "$HOME_TMPFS" "$IMG:whole" "exec /bin/probe $WHOLE_PROBES"
expect_rc 0
expect_out $'ctl_ioctl_tcgets blocked EPERM\nctl_socket_unix blocked EPERM\nctl_unshare_none blocked EPERM\n'
expect_err ""
end; fi
# verify says so: whole for the names, "when" for the argument rules of @default.
denied_of() { # denied_of IMAGE: "name action whole|when..." a line, from verify
	prun --tmpfs "$HOME_TMPFS" "$1" verify
	printf '%s' "$OUT" | python3 -c 'import json, sys
for d in json.load(sys.stdin)["seccomp"]["denied"]:
    if d["name"] in ("ioctl", "socket", "unshare", "clone3", "mount"):
        print(d["name"], d["action"], "whole" if d["whole"] else "when: " + "; ".join(d["when"])[:40])'
}
if begin seccomp-verify-shows-whole-or-arguments; then
OUT=$(denied_of "$IMG:whole")
expect_out $'ioctl EPERM whole\nsocket EPERM whole\nunshare EPERM whole'
OUT=$(denied_of "$SEALED")
expect_out $'mount EPERM whole\nunshare EPERM when: clone and unshare with a namespace flag \nclone3 ENOSYS whole\nioctl EPERM when: ioctl with request TIOCSTI or TIOCLINUX \nsocket EPERM when: socket with family AF_ALG or AF_VSOCK (l'
end; fi

# --- non-native architectures: the probe dies, turninit does not ----------------------
# The guard of the int80 rows is the bare probe's own death: kfeatures asks
# the kernel outside any filter and container, and the escape probe itself,
# run bare on the host, must agree (SIGSEGV, status 139, for "no"; the call
# reaching the kernel for "yes"). Anything else fails here: a guard that
# answered "no" for another reason would skip the rows on a guess.
# Off x86_64 there is no int 0x80 to ask about (kfeatures says so).
if kernel_test kernel-guard-int80-is-the-bare-probe x86_64; then
kernel_ask int80
run_cmd "$PROBE" int80_getpid
case $KERNEL_ANSWER in
yes) expect_rc 0; expect_out $'int80_getpid allowed success\n' ;;
no)
	expect_rc 139
	eq "kfeatures' reason" "$KERNEL_WHY" "this kernel does not deliver int 0x80: a bare int 0x80 getpid dies of SIGSEGV without any filter"
	;;
*) why "kfeatures int80 answered $KERNEL_ANSWER: $KERNEL_WHY" ;;
esac
echo "# kernel guard: int80 $KERNEL_ANSWER ($KERNEL_WHY); the bare probe: status $RC, ${OUT%$'\n'}"
end; fi

# row_test NAME PROBE: begin NAME, and where PROBE relies on a kernel
# feature (ROW_FEATURE), skipped with the kernel's reason when it lacks it.
row_test() {
	if [[ -n ${ROW_FEATURE[$2]-} ]]; then
		kernel_test "$1" "${ROW_FEATURE[$2]}"
	else
		begin "$1"
	fi
}
for p in int80_getpid x32_getpid; do
	# exec: the probe is the command; turninit reports its death as 128+SIGSYS.
	if row_test "arch-$p-exit-159" "$p"; then
		prun --tmpfs "$HOME_TMPFS" "$SEALED" "exec /bin/probe $p"
		expect_rc 159
		expect_out ""
		expect_err ""
		end
	fi
	# The shell that ran it lives on and sees the probe killed by SIGSYS.
	if row_test "arch-$p-kills-only-the-probe" "$p"; then
		prun --tmpfs "$HOME_TMPFS" "$SEALED" "/bin/probe $p; echo \"status \$?\""
		expect_rc 0
		expect_out $'status 159\n'
		end
	fi
done

echo "# suite ran in $(( $(now_ms) - T0 )) ms"
results
