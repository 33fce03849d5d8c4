#!/bin/bash
# run.sh - `make bench`: turninit against catatonit (podman --init), tini-static,
# dumb-init and a bare bash, side by side in one run, then docs/benchmarks.md and
# its plots (tests/bench/report.py, gnuplot). Root, podman (make setup first).
#
# Every figure comes from rounds in which the variants take turns (their order
# rotates each round), so a load that comes and goes hits them all alike; the
# report gives medians and ratios to a baseline, never a lone time.
#
# Environment: BENCH_SCALE=N divides every round count and workload by N (a
# quick trial; the doc then says so). BENCH_ONLY=gateway runs section 10 (the
# credential gateway, tests/bench/gateway.sh) alone, BENCH_ONLY=notify section
# 11 (a connection's set-up under seccomp-notify against a namespace,
# tests/bench/notify.sh), and the report replaces that section of
# docs/benchmarks.md, the rest left as the last whole run wrote it. Raw figures: build/bench/results.tsv.
# Containers carry the label turninit-bench=PID and images the name
# localhost/turninit-bench:*; only those are ever removed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORK=$ROOT/build/bench
RES=$WORK/results.tsv
IMG=localhost/turninit-bench
LABEL=turninit-bench=$$
KEY=$ROOT/tests/vectors/test-trusted.key
PUB=$ROOT/tests/vectors/test-trusted.pub
HOME_TMPFS=/home/agent:rw,mode=0700,size=64m,U
SCALE=${BENCH_SCALE:-1}
ONLY=${BENCH_ONLY:-}
MUSL=${MUSL_PREFIX:-$ROOT/build/musl/prefix}
PODMAN=$(command -v podman) || { echo "bench: podman not found (make setup)"; exit 1; }
T0=$SECONDS

die() { echo "bench: $*" >&2; cleanup; exit 1; }
say() { printf 'bench: [%3ds] %s\n' $((SECONDS - T0)) "$*"; }
cleanup() {
	local ids
	ids=$(timeout 60 podman ps -aq --filter "label=$LABEL" 2>/dev/null) || return 0
	# shellcheck disable=SC2086 # one id a word
	[[ -z $ids ]] || timeout 60 podman rm -f -t 0 $ids >/dev/null 2>&1 || true
}
trap 'cleanup; exit 130' INT TERM
scaled() { local n=$(($1 / SCALE)); echo $((n < $2 ? $2 : n)); }

[[ $(id -u) -eq 0 ]] || die "run as root (podman, as make check does)"
[[ -z $ONLY || $ONLY == gateway || $ONLY == notify ]] \
	|| die "BENCH_ONLY=$ONLY: the sections that run alone are gateway and notify"
sh "$HERE/setup.sh" || die "tests/bench/setup.sh failed"
for c in minisign gnuplot python3 musl-gcc tini-static; do
	command -v "$c" >/dev/null || die "$c not found (make setup; tests/bench/setup.sh)"
done
rm -rf "$WORK"
mkdir -p "$WORK/overlay/bench" "$WORK/m"
: > "$RES"

# --- build: the product, the tools, the instrumented start-up copy ----------
say "build"
make -C "$ROOT" --no-print-directory all >"$WORK/make.log" 2>&1 || { cat "$WORK/make.log"; die "make"; }
BIN=$ROOT/build/turninit
musl-gcc -static -O2 -Wall -Wextra -Werror -o "$WORK/overlay/bench/bench" "$HERE/bench.c" \
	|| die "cc bench.c"
mapfile -t OBJS < <(find "$ROOT/build/musl-obj" -name '*.o' ! -path '*/init/main.o' | sort)
musl-gcc -std=gnu11 -Os -Wall -Wextra -Werror -I"$ROOT/init" -I"$ROOT" \
	-I"$ROOT/build/gen" -isystem "$MUSL/include" \
	-o "$WORK/overlay/bench/startup" "$HERE/startup.c" "${OBJS[@]}" -static \
	-L"$MUSL/lib" -lseccomp -lcap -lsodium -ljansson -lmbedtls -lmbedx509 -lmbedcrypto || die "cc startup.c"
install -m 0755 "$(command -v tini-static)" "$WORK/overlay/bench/tini-static"
# dumb-init as Debian ships it (dynamic): with its loader and libraries, at
# their own paths in the image.
install -m 0755 "$(command -v dumb-init)" "$WORK/overlay/bench/dumb-init"
for lib in $(ldd "$(command -v dumb-init)" | awk '$2 == "=>" { print $3 } $1 ~ /^\// { print $1 }'); do
	mkdir -p "$WORK/overlay$(dirname "$lib")"
	cp -L "$lib" "$WORK/overlay$lib"
done
BB=$WORK/overlay/bench/bench
# rss.sh: "T X", the VmRSS (KiB) of the turninit whose parent is bench (not its
# keepers, also named turninit) and the sum over the proxy's processes.
cat > "$WORK/overlay/bench/rss.sh" <<'EOF'
#!/bin/sh
t= x=0
for p in /proc/[0-9]*; do
	c=$(cat "$p/comm" 2>/dev/null) || continue
	r=$(awk '/^VmRSS:/ { print $2 }' "$p/status" 2>/dev/null)
	case $c in
	turninit)
		pp=$(awk '/^PPid:/ { print $2 }' "$p/status" 2>/dev/null)
		[ "$(cat "/proc/$pp/comm" 2>/dev/null)" = bench ] && t=$r ;;
	turninit-proxy) x=$((x + ${r:-0})) ;;
	esac
done
echo "$t $x"
EOF
chmod 0755 "$WORK/overlay/bench/rss.sh"

# --- images: one root, two sealed manifests ---------------------------------
say "images"
sh "$ROOT/rootfs/build-image.sh" --trusted-key "$PUB" --tag "$IMG:base" \
	--overlay "$WORK/overlay" --root "$WORK/rootfs" "$BIN" >"$WORK/image.log" 2>&1 \
	|| { cat "$WORK/image.log"; die "rootfs/build-image.sh"; }
HEAD='"turninit":1,"expires":"2099-01-01T00:00:00Z","user":{"uid":1000,"gid":1000},"home":"/home/agent","workdir":"/work"'
CALLER=1000:1000   # the manifest's user: callers.uids admits it by default (section 2's call)
ENV='"env":{"set":{"PATH":"/usr/local/bin:/usr/bin:/bin","LANG":"C.UTF-8","TERM":"dumb"}}'
LIM='"limits":{"nproc":30000,"concurrency":8}'
# full: the default sandbox (seccomp @default, Landlock on home, workdir, /tmp).
printf '{%s,%s,%s}\n' "$HEAD" "$ENV" "$LIM" > "$WORK/m/full.json"
# min: the least the manifest allows: a filter with the architecture check only
# and a Landlock ruleset that lets everything be written.
printf '{%s,%s,%s,"seccomp":{"deny":[]},"landlock":{"writable":["/"]}}\n' "$HEAD" "$ENV" "$LIM" > "$WORK/m/min.json"
for m in full min; do
	sh "$ROOT/oci/seal.sh" --image "$IMG:base" --manifest "$WORK/m/$m.json" --key "$KEY" \
		--tag "$IMG:$m" >"$WORK/seal-$m.log" 2>&1 || { cat "$WORK/seal-$m.log"; die "oci/seal.sh $m"; }
done

RUN=("$PODMAN" run --rm --pull never --network none --label "$LABEL" --tmpfs "$HOME_TMPFS")
BASH_TRUE='"/bin/bash","--noprofile","--norc","-c","true"'

# record SECTION VARIANT KEY VALUE
record() { printf '%s\t%s\t%s\t%s\n' "$@" >> "$RES"; }

# measure SECTION VARIANT KEY... -- ARGV: run ARGV (a tool printing "KEY VALUE"
# lines, or `bench timeit ...`), record the listed keys. A failed run is fatal:
# a figure with a hole is no figure.
measure() {
	local sec=$1 var=$2 keys=() k out
	shift 2
	while [[ $1 != -- ]]; do keys+=("$1"); shift; done
	shift
	out=$(timeout 300 "$@" 2>>"$WORK/stderr.log") || { tail -5 "$WORK/stderr.log"; die "$sec/$var failed: $*"; }
	for k in "${keys[@]}"; do
		local v
		v=$(awk -v k="$k" '$1 == k { print $2 }' <<<"$out" | tail -1)
		[[ -n $v ]] || die "$sec/$var: no $k in: $out"
		record "$sec" "$var" "$k" "$v"
	done
}

# interleave ROUNDS FUNCTION VARIANT...: call FUNCTION VARIANT for each variant in
# each round, the order rotated by one every round.
interleave() {
	local rounds=$1 fn=$2 r i n
	shift 2
	local vars=("$@")
	n=${#vars[@]}
	for ((r = 0; r < rounds; r++)); do
		for ((i = 0; i < n; i++)); do
			"$fn" "${vars[$(((i + r) % n))]}"
		done
	done
}

# How busy the machine is at the start of sections 1 to 5, 8, 10 and 11, between
# the bench's own runs: runnable tasks (/proc/loadavg, 4th field, the sampling
# awk included), the mean of 10 samples over a second. Not the load average:
# section 5's 10000 orphans raise that for minutes after.
loadmark() {
	local i n=0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		n=$((n + $(awk '{ split($4, a, "/"); print a[1] }' /proc/loadavg)))
		sleep 0.1
	done
	printf '%s ' "$(awk -v n="$n" 'BEGIN { printf "%.1f", n / 10 }')" >> "$WORK/load"
}
: > "$WORK/load"

# finish [REPORT-FLAG]: the run's load and duration, then the report.
finish() {
	echo "load_sections	$(cat "$WORK/load")" >> "$WORK/machine.tsv"
	echo "duration_s	$((SECONDS - T0))" >> "$WORK/machine.tsv"
	cleanup
	say "report"
	python3 "$HERE/report.py" "$WORK" "$ROOT/docs" "$@" || die "tests/bench/report.py"
	say "done: docs/benchmarks.md"
}
# shellcheck source=tests/bench/gateway.sh
source "$HERE/gateway.sh"
# shellcheck source=tests/bench/notify.sh
source "$HERE/notify.sh"

# --- 0. the machine -----------------------------------------------------------
{
	echo "cpu	$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1) ($(nproc) cores)"
	echo "memory	$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "kernel	$(uname -r)"
	# shellcheck disable=SC1091 # the machine's own file
	echo "os	$(. /etc/os-release && echo "$PRETTY_NAME")"
	echo "podman	$(podman --version | awk '{ print $3 }'), $(crun --version 2>/dev/null | head -1)"
	if [[ -d /sys/fs/cgroup/unified ]]; then echo "cgroups	v1 (hybrid: cgroup2 at /sys/fs/cgroup/unified)"
	else echo "cgroups	$(stat -fc %T /sys/fs/cgroup)"; fi
	echo "bpf_jit	$(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null || echo unknown)"
	echo "scale	$SCALE"
	echo "catatonit	$(catatonit --version 2>&1 | head -1)"
	echo "tini	$(tini-static --version 2>&1 | head -1)"
	echo "dumb_init	$(dpkg-query -W -f '${Version}' dumb-init)"
	echo "bash	$(dpkg-query -W -f '${Version}' bash-static) (bash-static)"
	echo "turninit_commit	$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
} > "$WORK/machine.tsv"

# BENCH_ONLY=gateway: section 10 alone, then its part of the report.
if [[ $ONLY == gateway ]]; then
	gateway_bench
	finish --only gateway
	exit 0
fi
# BENCH_ONLY=notify: section 11 alone, then its part of the report.
if [[ $ONLY == notify ]]; then
	notify_bench
	finish --only notify
	exit 0
fi

# --- 1. container start to exit -----------------------------------------------
start_run() {
	case $1 in
	turninit) measure start "$1" total_ns -- "$BB" timeit "${RUN[@]}" "$IMG:full" -- true ;;
	catatonit) measure start "$1" total_ns -- "$BB" timeit "${RUN[@]}" --init \
		--entrypoint "[$BASH_TRUE]" "$IMG:full" ;;
	tini) measure start "$1" total_ns -- "$BB" timeit "${RUN[@]}" \
		--entrypoint "[\"/bench/tini-static\",\"--\",$BASH_TRUE]" "$IMG:full" ;;
	dumb-init) measure start "$1" total_ns -- "$BB" timeit "${RUN[@]}" \
		--entrypoint "[\"/bench/dumb-init\",\"--\",$BASH_TRUE]" "$IMG:full" ;;
	bash) measure start "$1" total_ns -- "$BB" timeit "${RUN[@]}" \
		--entrypoint "[$BASH_TRUE]" "$IMG:full" ;;
	esac
}
N1=$(scaled 40 3)
loadmark
say "1. container start to exit: $N1 rounds"
interleave "$N1" start_run turninit catatonit tini dumb-init bash

# --- 2. per-command cost inside a turn ----------------------------------------
NCMD=$(scaled 1000 50)
percmd_run() {
	local e=("${RUN[@]}" --entrypoint /bench/bench)
	case $1 in
	bash) measure percmd "$1" total_ns -- "${e[@]}" "$IMG:full" spawn "$NCMD" \
		/bin/bash --noprofile --norc -c true ;;
	bash-setsid) measure percmd "$1" total_ns -- "${e[@]}" "$IMG:full" spawn --setsid "$NCMD" \
		/bin/bash --noprofile --norc -c true ;;
	serve) measure percmd "$1" total_ns -- "${e[@]}" "$IMG:full" serve "$NCMD" true \
		-- /sbin/turninit serve ;;
	serve-min) measure percmd "$1" total_ns -- "${e[@]}" "$IMG:min" serve "$NCMD" true \
		-- /sbin/turninit serve ;;
	bash-j8) measure percmd "$1" total_ns -- "${e[@]}" "$IMG:full" spawn -j 8 "$NCMD" \
		/bin/bash --noprofile --norc -c true ;;
	serve-j8) measure percmd "$1" total_ns -- "${e[@]}" "$IMG:full" serve -j 8 "$NCMD" true \
		-- /sbin/turninit serve ;;
	latency) measure latency serve started_ns exit_ns -- "${e[@]}" "$IMG:full" serve "$NCMD" \
		"/bench/bench stamp /tmp/stamp" --latency /tmp/stamp -- /sbin/turninit serve ;;
	# latency's bare counterparts: the same command through bash, forked by the
	# harness, and with setsid(2) first as turninit's commands are
	latency-bare) measure latency bare started_ns exit_ns -- "${e[@]}" "$IMG:full" spawn \
		--latency /tmp/stamp "$NCMD" /bin/bash --noprofile --norc -c "/bench/bench stamp /tmp/stamp" ;;
	latency-bare-setsid) measure latency bare-setsid started_ns exit_ns -- "${e[@]}" "$IMG:full" spawn \
		--setsid --latency /tmp/stamp "$NCMD" /bin/bash --noprofile --norc -c "/bench/bench stamp /tmp/stamp" ;;
	mcp) measure percmd "$1" total_ns call_ns -- "${e[@]}" "$IMG:full" mcp "$NCMD" true \
		-- /sbin/turninit mcp ;;
	# listen as the harness's child (root, as in a sidecar); each call run as
	# the manifest's uid (callers.uids' default) and not below listen, so the
	# peer checks admit it. /run: root's 0755, out of landlock.writable.
	call) measure percmd "$1" total_ns call_ns -- "${e[@]}" "$IMG:full" calls --as "$CALLER" \
		"$NCMD" /run/bench.sock /sbin/turninit listen --socket /run/bench.sock \
		-- /sbin/turninit call --socket /run/bench.sock -- true ;;
	esac
}
N2=$(scaled 8 2)
loadmark
say "2. per-command cost, sequential and 8 at a time, latency, mcp and call: $N2 rounds of $NCMD commands"
record percmd all commands "$NCMD"
interleave "$N2" percmd_run bash bash-setsid serve serve-min bash-j8 serve-j8 latency latency-bare \
	latency-bare-setsid mcp call

# --- 2b. where the time goes: perf sched over serve and a bare spawn ----------
# The profile that section 2's ratios need beside them: each round records one
# serve run and one bare spawn of the same commands under `perf sched record
# -a` (the scheduler's tracepoints, system-wide: podman's own processes too,
# never counted below), then `perf sched latency` gives each process name's CPU
# time, context switches and mean wait for a CPU, and the sched_migrate_task
# events its moves between CPUs. Names: bash (the commands after their exec),
# turninit (turninit, its keepers and each command's child before its exec),
# bench (the harness, and a bare spawn's child before its exec). Skipped, with
# the reason in the report, where perf or the tracepoints are missing.
NPROF=$(scaled 1000 50)
# profile_stats VARIANT FILE: record "profile VARIANT KEY VALUE" for each name.
profile_stats() {
	local v=$1 f=$2
	perf sched latency -i "$f" 2>/dev/null | awk -F'|' -v v="$v" '
		NF >= 4 && $1 ~ /:/ {
			t = $1; gsub(/^ +| +$/, "", t); sub(/:[^:]*$/, "", t)
			rt = $2; gsub(/[^0-9.]/, "", rt); sw = $3; gsub(/[^0-9]/, "", sw)
			d = $4; sub(/avg:/, "", d); gsub(/[^0-9.]/, "", d)
			run[t] += rt; n[t] += sw; w[t] += d * sw
		}
		END { split("bash turninit bench", names, " ")
			for (i = 1; i <= 3; i++) { t = names[i]
				printf "profile\t%s\tcpu_ms_%s\t%.3f\n", v, t, run[t]
				printf "profile\t%s\tswitches_%s\t%d\n", v, t, n[t]
				printf "profile\t%s\twait_ms_%s\t%.6f\n", v, t, n[t] ? w[t] / n[t] : 0 } }' >> "$RES"
	perf script -i "$f" -F event,trace 2>/dev/null | awk -v v="$v" '
		/sched_migrate_task/ { c = $0; sub(/.*comm=/, "", c); sub(/ .*/, "", c); m[c]++ }
		END { split("bash turninit bench", names, " ")
			for (i = 1; i <= 3; i++)
				printf "profile\t%s\tmigrations_%s\t%d\n", v, names[i], m[names[i]] + 0 }' >> "$RES"
}
profile_run() {
	local e=("${RUN[@]}" --entrypoint /bench/bench) f=$WORK/perf-$1.data out
	local argv
	case $1 in
	bash) argv=(spawn "$NPROF" /bin/bash --noprofile --norc -c true) ;;
	serve) argv=(serve "$NPROF" true -- /sbin/turninit serve) ;;
	esac
	out=$(timeout 300 perf sched record -a -o "$f" -- "${e[@]}" "$IMG:full" "${argv[@]}" 		2>>"$WORK/stderr.log") || die "profile/$1 failed: perf sched record"
	record profile "$1" total_ns "$(awk '$1 == "total_ns" { print $2 }' <<<"$out" | tail -1)"
	profile_stats "$1" "$f"
	rm -f "$f"
}
NP=$(scaled 3 1)
if ! command -v perf >/dev/null; then
	record profile all skipped "perf not found (tests/bench/setup.sh installs linux-perf)"
elif ! perf sched record -a -o "$WORK/perf-probe.data" -- true >/dev/null 2>"$WORK/perf-probe.log"; then
	record profile all skipped "perf sched record fails here: $(tail -1 "$WORK/perf-probe.log" | tr '\t' ' ')"
else
	rm -f "$WORK/perf-probe.data"
	say "2b. where the time goes: $NP rounds of $NPROF commands under perf sched record"
	record profile all commands "$NPROF"
	interleave "$NP" profile_run bash serve
fi

# --- 3. a turn of 100 commands ------------------------------------------------
NTURN=$(scaled 100 10)
turn_run() {
	case $1 in
	serve) measure turn "$1" whole_ns -- "$BB" serve "$NTURN" true -- \
		"${RUN[@]}" -i "$IMG:full" serve ;;
	oneshot) measure turn "$1" total_ns -- "$BB" spawn "$NTURN" "${RUN[@]}" "$IMG:full" -- true ;;
	esac
}
N3=$(scaled 4 1)
loadmark
say "3. a turn of $NTURN commands: $N3 rounds"
record turn all commands "$NTURN"
interleave "$N3" turn_run serve oneshot

# --- 4. seccomp cost -------------------------------------------------------------
NSYS=$(scaled 5000000 100000)
# A tree of its own, readable by every uid (a system tree has directories only
# root may read, which would give root and uid 1000 different work).
TREE=$WORK/tree
NDIRS=$(scaled 1000 20)
python3 -c 'import os, sys
for d in range(int(sys.argv[2])):
    p = os.path.join(sys.argv[1], "d%03d" % (d % 50), "e%04d" % d)
    os.makedirs(p)
    for f in range(100):
        open(os.path.join(p, "f%03d" % f), "w").close()' "$TREE" "$NDIRS" || die "making $TREE"
chmod -R a+rX "$TREE"
TREE_ENTRIES=$(find "$TREE" | wc -l)
record seccomp all getppid_calls "$NSYS"
record seccomp all find_entries "$TREE_ENTRIES"
seccomp_run() {
	local v=$1 args
	for w in getppid find; do
		if [[ $w == getppid ]]; then args=(getppid "$NSYS"); else args=(timeit /bin/find /tree); fi
		local r=("${RUN[@]}" -v "$TREE:/tree:ro")
		case $v in
		none) measure "seccomp-$w" "$v" total_ns -- "${r[@]}" --security-opt seccomp=unconfined \
			--entrypoint /bench/bench "$IMG:full" "${args[@]}" ;;
		podman) measure "seccomp-$w" "$v" total_ns -- "${r[@]}" \
			--entrypoint /bench/bench "$IMG:full" "${args[@]}" ;;
		turninit) measure "seccomp-$w" "$v" total_ns -- "${r[@]}" --security-opt seccomp=unconfined \
			"$IMG:full" -- /bench/bench "${args[@]}" ;;
		turninit+podman) measure "seccomp-$w" "$v" total_ns -- "${r[@]}" \
			"$IMG:full" -- /bench/bench "${args[@]}" ;;
		esac
	done
}
N4=$(scaled 7 1)
loadmark
say "4. seccomp: $N4 rounds of $NSYS getppid and find over $TREE_ENTRIES entries"
interleave "$N4" seccomp_run none podman turninit turninit+podman

# --- 5. reaping ---------------------------------------------------------------------
NORPH=$(scaled 10000 500)
reap_run() {
	local r=("${RUN[@]}" --pids-limit -1)
	case $1 in
	turninit) measure reap "$1" reap_ns left -- "${r[@]}" "$IMG:full" -- /bench/bench orphans "$NORPH" ;;
	catatonit) measure reap "$1" reap_ns left -- "${r[@]}" --init --entrypoint /bench/bench \
		"$IMG:full" orphans "$NORPH" ;;
	tini) measure reap "$1" reap_ns left -- "${r[@]}" \
		--entrypoint '["/bench/tini-static","--","/bench/bench"]' "$IMG:full" orphans "$NORPH" ;;
	esac
}
N5=$(scaled 7 1)
loadmark
say "5. reaping $NORPH orphans: $N5 rounds"
record reap all orphans "$NORPH"
interleave "$N5" reap_run turninit catatonit tini

# --- 6. turninit's start-up work ------------------------------------------------------
N6=$(scaled 3 1)
say "6. start-up steps: $N6 containers"
for ((r = 0; r < N6; r++)); do
	out=$(timeout 120 "${RUN[@]}" --entrypoint /bench/startup "$IMG:full" 2>>"$WORK/stderr.log") \
		|| die "startup: $(tail -3 "$WORK/stderr.log")"
	while read -r step first median; do
		record startup "$step" first_ns "$first"
		record startup "$step" median_ns "$median"
	done <<<"$out"
done

# --- 7. size and memory --------------------------------------------------------------
say "7. size and memory"
size_of() { stat -c %s "$1"; }
record size turninit bytes "$(size_of "$BIN")"
record size tini-static bytes "$(size_of "$(command -v tini-static)")"
record size catatonit bytes "$(size_of "$(command -v catatonit)")"
record size dumb-init bytes "$(size_of "$(command -v dumb-init)")"
# What each archive and object costs in the binary (make size: the linker map).
make -C "$ROOT" --no-print-directory size >"$WORK/size.txt" 2>>"$WORK/stderr.log" || die "make size"

# rss_of NAME: VmHWM and VmRSS (KiB) of the PID 1 of container NAME.
rss_of() {
	local pid
	pid=$(timeout 60 podman inspect -f '{{.State.Pid}}' "$1") || return 1
	awk '/^VmHWM:/ { h = $2 } /^VmRSS:/ { r = $2 } END { print h, r }' "/proc/$pid/status"
}
idle_rss() { # idle_rss VARIANT PODMAN-ARGS...
	local v=$1 name=turninit-bench-rss-$$ hr
	shift
	timeout 60 "$PODMAN" run -d --name "$name" --pull never --network none --label "$LABEL" \
		--tmpfs "$HOME_TMPFS" "$@" >/dev/null 2>>"$WORK/stderr.log" || die "rss $v: podman run -d"
	sleep 1
	hr=$(rss_of "$name") || die "rss $v: inspect"
	timeout 60 podman rm -f -t 0 "$name" >/dev/null 2>&1
	record rss "$v" hwm_kib "${hr% *}"
	record rss "$v" rss_kib "${hr#* }"
}
N7=$(scaled 3 1)
for ((r = 0; r < N7; r++)); do
	idle_rss turninit "$IMG:full" -- 'sleep 30'
	idle_rss catatonit --init --entrypoint '["/bin/sleep","30"]' "$IMG:full"
	idle_rss tini --entrypoint '["/bench/tini-static","--","/bin/sleep","30"]' "$IMG:full"
done
NRSS=$(scaled 10000 50)
record rss all commands "$NRSS"
for ((r = 0; r < N7; r++)); do
	name=turninit-bench-serve-$$
	probe="awk '/^VmHWM:/ { h = \$2 } /^VmRSS:/ { r = \$2 } END { print h, r }' /proc/\$(podman inspect -f '{{.State.Pid}}' $name)/status >> $WORK/serve-rss"
	rm -f "$WORK/serve-rss"
	timeout 300 "$BB" serve "$NRSS" true --probe "$probe" -- "${RUN[@]}" -i --name "$name" \
		"$IMG:full" serve >/dev/null 2>>"$WORK/stderr.log" || die "rss serve"
	[[ $(wc -l < "$WORK/serve-rss") -eq 2 ]] || die "rss serve: no readings"
	{ read -r h1 r1; read -r h2 r2; } < "$WORK/serve-rss"
	record rss serve-idle hwm_kib "$h1"
	record rss serve-idle rss_kib "$r1"
	record rss serve-after hwm_kib "$h2"
	record rss serve-after rss_kib "$r2"
done

# --- 8. the network: turninit's proxy against a direct connection ----------------------
# On an internal network of the bench's own (podman network create --internal),
# to a busybox httpd of the bench's image serving a 256 MiB file: nothing else is
# ever sent a packet. Direct: the full manifest, the runtime's network, the
# command connecting itself. Proxy: the same with "network" listing the server,
# the command in turninit's namespace with loopback alone, through the proxy.
NET=turninit-bench-net
SRVC=turninit-bench-srv-$$
net_down() {
	timeout 60 podman rm -f -t 0 "$SRVC" >/dev/null 2>&1
	timeout 60 podman network rm -f "$NET" >/dev/null 2>&1
}
say "8. network: setting up $NET"
net_down
mkdir -p "$WORK/www"
NBIG=$((256 * 1048576 / SCALE))
head -c "$NBIG" /dev/zero > "$WORK/www/big" || die "the 256 MiB file"
timeout 120 podman network create --internal "$NET" >/dev/null 2>>"$WORK/stderr.log" || die "network create"
timeout 120 podman run -d --name "$SRVC" --label "$LABEL" --network "$NET" --pull never \
	-v "$WORK/www:/www:ro" --entrypoint /bin/busybox "$IMG:base" httpd -f -p 8080 -h /www \
	>/dev/null 2>>"$WORK/stderr.log" || die "the server container"
SRV_IP=$(timeout 60 podman inspect --format "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" "$SRVC")
[[ $SRV_IP =~ ^[0-9.]+$ ]] || die "the server's address: '$SRV_IP'"
printf '{%s,%s,%s,"network":{"allow":[{"host":"%s","ports":[8080]}]}}\n' "$HEAD" "$ENV" "$LIM" "$SRV_IP" > "$WORK/m/net.json"
sh "$ROOT/oci/seal.sh" --image "$IMG:base" --manifest "$WORK/m/net.json" --key "$KEY" \
	--tag "$IMG:net" >"$WORK/seal-net.log" 2>&1 || { cat "$WORK/seal-net.log"; die "oci/seal.sh net"; }
NRUN=("$PODMAN" run --rm --pull never --network "$NET" --label "$LABEL" --tmpfs "$HOME_TMPFS")
NCAPS=(--cap-add SYS_ADMIN --cap-add NET_ADMIN)
NCONN=$(scaled 200 20)
record net all connections "$NCONN"
record net all bytes "$NBIG"
net_run() {
	case $1 in
	direct) measure net-connect "$1" connect_ns -- "${NRUN[@]}" "$IMG:full" -- \
			/bench/bench connect "$NCONN" "$SRV_IP" 8080
		measure net-fetch "$1" total_ns mib_s -- "${NRUN[@]}" "$IMG:full" -- \
			/bench/bench fetch "$SRV_IP" 8080 /big ;;
	proxy) measure net-connect "$1" connect_ns -- "${NRUN[@]}" "${NCAPS[@]}" "$IMG:net" -- \
			/bench/bench connect -p "$NCONN" "$SRV_IP" 8080
		measure net-fetch "$1" total_ns mib_s -- "${NRUN[@]}" "${NCAPS[@]}" "$IMG:net" -- \
			/bench/bench fetch -p "$SRV_IP" 8080 /big ;;
	esac
}
N8=$(scaled 7 1)
loadmark
say "8. network: $N8 rounds of $NCONN connections and a $((NBIG / 1048576)) MiB download, direct and through the proxy"
interleave "$N8" net_run direct proxy

# With 64 tunnels held open and stalled (their server sending 256 MiB each,
# the command reading nothing), and without: turninit's RSS and the latency of
# serve's events. bench serve runs turninit serve as its child (not PID 1: the
# stamp file needs one container); the probe reads turninit's VmRSS and the
# sum of the proxy's processes'.
NLAT=$(scaled 300 20)
NTUN=64
record tunnels all commands "$NLAT"
record tunnels all tunnels "$NTUN"
RSSPROBE='/bench/rss.sh >> /tmp/rss'
tunnels_run() {
	local hold=() out
	[[ $1 == tunnels ]] && hold=(--hold "/bench/bench hold -p $NTUN $SRV_IP 8080 /big")
	out=$(timeout 300 "${NRUN[@]}" "${NCAPS[@]}" --entrypoint /bin/sh "$IMG:net" -c \
		'/bench/bench "$@" && cat /tmp/rss' sh serve "$NLAT" "/bench/bench stamp /tmp/stamp" \
		--latency /tmp/stamp --probe "$RSSPROBE" "${hold[@]}" -- /sbin/turninit serve \
		2>>"$WORK/stderr.log") || die "tunnels/$1: $(tail -3 "$WORK/stderr.log")"
	local k v
	for k in started_ns exit_ns; do
		v=$(awk -v k="$k" '$1 == k { print $2 }' <<<"$out")
		[[ -n $v ]] || die "tunnels/$1: no $k in: $out"
		record tunnels "$1" "$k" "$v"
	done
	# the probe's two lines: after the warm-up (and the tunnels), after the commands
	read -r t x < <(awk 'NF == 2 && $1 ~ /^[0-9]+$/' <<<"$out" | tail -1)
	[[ -n ${t:-} ]] || die "tunnels/$1: no RSS in: $out"
	record tunnels "$1" rss_kib "$t"
	record tunnels "$1" proxy_rss_kib "$x"
}
N9=$(scaled 5 1)
say "8. network: $N9 rounds of $NLAT commands, with $NTUN stalled tunnels and with none"
interleave "$N9" tunnels_run none tunnels
net_down

# --- 9. the audit log's digests: 16 MiB of output a command --------------------------
# serve with --audit-log (every byte of stdout hashed as it is read, each line
# chained) against serve without, the same command writing 16 MiB; the log on
# a tmpfs of root's outside the commands' writable set.
NAUD=$(scaled 20 5)
AOUT=16777216
audit_run() {
	local e=("${RUN[@]}" --tmpfs /var/log/turninit:rw,mode=0700 --entrypoint /bench/bench)
	case $1 in
	plain) measure audit "$1" total_ns -- "${e[@]}" "$IMG:full" serve "$NAUD" \
		"head -c $AOUT /dev/zero" -- /sbin/turninit serve ;;
	logged) measure audit "$1" total_ns -- "${e[@]}" "$IMG:full" serve "$NAUD" \
		"head -c $AOUT /dev/zero" -- /sbin/turninit serve --audit-log /var/log/turninit/a.jsonl ;;
	esac
}
N10=$(scaled 6 2)
say "9. audit digests: $N10 rounds of $NAUD commands of $((AOUT / 1048576)) MiB output, with and without --audit-log"
record audit all commands "$NAUD"
record audit all bytes "$AOUT"
interleave "$N10" audit_run plain logged

# --- 10. the credential gateway against TLS from the command (tests/bench/gateway.sh) --
gateway_bench

# --- 11. a connection's set-up under seccomp-notify against a namespace (tests/bench/notify.sh)
notify_bench

finish
