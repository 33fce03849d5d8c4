#!/bin/sh
# run.sh - build and run the libFuzzer targets of policy/ (docs/fuzzing.md).
#
#   tests/fuzz/run.sh fuzz SECONDS [TARGET...]
#       clang -fsanitize=fuzzer,address,undefined; each target runs SECONDS on
#       tests/fuzz/corpus/TARGET (read only) plus a scratch corpus
#       build/fuzz/scratch/TARGET (new inputs go there); crash reproducers are
#       written to tests/fuzz/corpus/TARGET as crash-*/leak-*/timeout-*, to be
#       committed. Prints executions per target.
#   tests/fuzz/run.sh merge MAXLEN [TARGET...]
#       libFuzzer -merge=1: adds to tests/fuzz/corpus/TARGET the inputs of the
#       scratch corpus (at most MAXLEN bytes) that reach new edges (-use_counters=0
#       keeps the set small: hit counts are not kept as features), named
#       min-HASH. Review the count (keep it under ~200 files) before committing.
#   tests/fuzz/run.sh replay [TARGET...]
#       gcc -fsanitize=address,undefined with replay.c (no clang needed); every
#       corpus file is replayed in a child of its own. Prints TAP, a line per
#       target ("ok N - replay TARGET: K inputs"), then "fuzz-replay: N passed,
#       N failed" (inputs) and writes "PASS FAIL 0 SECONDS" to build/test-results/fuzz.
#       Another architecture (make ARCH=aarch64 fuzz-replay): REPLAY_CC is its
#       compiler (a static musl-gcc: no sanitizer), REPLAY_RUN the emulator
#       that runs what it builds (qemu-aarch64-static), REPLAY_RESULT the
#       result's name (fuzz-aarch64), FUZZ_OUT the folder of the binaries.
# Run from anywhere; paths are relative to the project root. Exit status is
# non-zero on any crash, failed replay or build error.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${FUZZ_OUT:-build/fuzz}
TARGETS_ALL="manifest signature envfilter request events mcp proxyreq auditlog auditsum gwhttp"
POLICY_SRC=$(echo policy/*.c)
LIBS="-lsodium -ljansson -lseccomp"
# build/gen/trusted_keys.h is not used by policy/, but -Ibuild/gen matches the
# product build; an empty one is made when `make` has not run.
mkdir -p "$OUT" build/gen build/test-results
t0=$(date +%s)
[ -f build/gen/trusted_keys.h ] || printf '#define TURNINIT_COMPILED_KEYS ""\n' > build/gen/trusted_keys.h
INC="-I. -Ibuild/gen"   # "policy/NAME.h" (docs/HACKING.md)
WARN="-Wall -Wextra -Wshadow -Wmissing-prototypes -Wformat=2 -Werror"

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

usage() {
	echo "usage: $0 fuzz SECONDS [TARGET...] | merge MAXLEN [TARGET...] | replay [TARGET...]" >&2
	exit 2
}

mode=${1:-}
[ -n "$mode" ] || usage
shift

case $mode in
fuzz)
	secs=${1:-}
	case $secs in ''|*[!0-9]*) usage ;; esac
	shift
	targets=${*:-$TARGETS_ALL}
	command -v clang >/dev/null || { echo "run.sh: clang not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }
	echo "fuzz: $(clang --version | head -n 1)"
	rc=0
	for t in $targets; do
		bin=$OUT/fuzz_$t
		clang -std=gnu11 -g -O1 -fno-omit-frame-pointer \
			-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
			$WARN $INC tests/fuzz/fuzz_$t.c $POLICY_SRC $LIBS -o "$bin"
		corpus=tests/fuzz/corpus/$t
		work=$OUT/scratch/$t
		mkdir -p "$corpus" "$work"
		log=$OUT/fuzz_$t.log
		before=$(find "$corpus" "$work" -type f | wc -l)
		start=$(date +%s)
		set +e
		# -max_len 8192: the parsers refuse inputs over 64 KiB (manifest) and
		# 4 KiB (signature files) early; 8 KiB covers both limits' edges
		# for signature and keeps the search on structure.
		"$bin" -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix="$corpus/" -print_final_stats=1 "$work" "$corpus" >"$log" 2>&1
		st=$?
		set -e
		end=$(date +%s)
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
		rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
		after=$(find "$corpus" "$work" -type f | wc -l)
		crashes=$(ls "$corpus" | grep -c -E '^(crash|leak|timeout|oom|slow-unit)-' || true)
		echo "fuzz: $t: ${execs:-?} executions, ${rate:-?} exec/s, $((end - start)) s, corpus $before -> $after files (committed + scratch), $crashes reproducers, exit $st (log $log)"
		if [ "$st" -ne 0 ]; then
			tail -n 40 "$log" >&2
			rc=1
		fi
	done
	exit $rc
	;;
merge)
	maxlen=${1:-}
	case $maxlen in ''|*[!0-9]*) usage ;; esac
	shift
	targets=${*:-$TARGETS_ALL}
	for t in $targets; do
		bin=$OUT/fuzz_$t
		[ -x "$bin" ] || { echo "run.sh: $bin missing: run '$0 fuzz' first" >&2; exit 1; }
		tmp=$OUT/merge/$t
		rm -rf "$tmp"
		mkdir -p "$tmp"
		cp tests/fuzz/corpus/"$t"/* "$tmp"/
		n0=$(ls "$tmp" | wc -l)
		"$bin" -merge=1 -use_counters=0 -max_len="$maxlen" "$tmp" "$OUT/scratch/$t" >"$OUT/merge_$t.log" 2>&1
		for f in "$tmp"/*; do
			b=$(basename "$f")
			[ -e tests/fuzz/corpus/"$t"/"$b" ] || cp "$f" tests/fuzz/corpus/"$t"/min-"$b"
		done
		echo "merge: $t: $n0 -> $(ls tests/fuzz/corpus/"$t" | wc -l) files"
	done
	;;
replay)
	targets=${*:-$TARGETS_ALL}
	cc=${REPLAY_CC:-gcc -fsanitize=address,undefined -fno-sanitize-recover=undefined}
	run=${REPLAY_RUN:-}
	result=${REPLAY_RESULT:-fuzz}
	pass=0
	fail=0
	n=0
	# policy/ and replay.c compiled once (OUT/replay-obj, made afresh) and
	# linked with each target: compiling them again for each of the ten
	# targets was most of the replay's time.
	obj=$OUT/replay-obj
	rm -rf "$obj"
	mkdir -p "$obj"
	objs=
	for s in $POLICY_SRC tests/fuzz/replay.c; do
		o=$obj/$(basename "$s" .c).o
		$cc -std=gnu11 -g -O1 -fno-omit-frame-pointer $WARN $INC -c "$s" -o "$o"
		objs="$objs $o"
	done
	for t in $targets; do
		bin=$OUT/replay_$t
		$cc -std=gnu11 -g -O1 -fno-omit-frame-pointer \
			$WARN $INC tests/fuzz/fuzz_$t.c $objs $LIBS -o "$bin"
		log=$OUT/replay_$t.log
		set +e
		$run "$bin" "tests/fuzz/corpus/$t" >"$log" 2>&1
		set -e
		line=$(grep '^replay: [0-9]* passed, [0-9]* failed$' "$log" | tail -n 1)
		n=$((n + 1))
		if [ -z "$line" ]; then
			echo "not ok $n - replay $t: did not finish (log $log)"
			tail -n 20 "$log" | sed 's/^/#   /'
			fail=$((fail + 1))
			continue
		fi
		p=$(echo "$line" | sed 's/^replay: \([0-9]*\) passed.*/\1/')
		f=$(echo "$line" | sed 's/.* \([0-9]*\) failed$/\1/')
		if [ "$f" -eq 0 ]; then
			echo "ok $n - replay $t: $p inputs"
		else
			echo "not ok $n - replay $t: $f of $((p + f)) inputs failed"
			grep '^replay: FAIL' "$log" | sed 's/^/#   /' || true
		fi
		pass=$((pass + p))
		fail=$((fail + f))
	done
	echo "1..$n"
	echo "fuzz-replay${REPLAY_RESULT:+ ($result)}: $pass passed, $fail failed"
	echo "$pass $fail 0 $(($(date +%s) - t0))" > "build/test-results/$result"
	[ "$fail" -eq 0 ]
	;;
*)
	usage
	;;
esac
