#!/bin/sh
# run-unit.sh TEST... - run cmocka unit test binaries, each under a hard
# timeout, with cmocka's own TAP output (CMOCKA_MESSAGE_OUTPUT=TAP), as one
# TAP stream: "ok N - FILE: TEST", "not ok N - FILE: TEST" and cmocka's "# "
# diagnostics, the plan "1..N", then "unit: N passed, N failed" (tests, not
# binaries). The counts and the run's seconds also go to
# build/test-results/unit for the summary of `make check`. A binary that
# exits non-zero with no failed test (a crash, a timeout) counts as one
# failure; a test cmocka skipped (skip(), after printing why) is "ok N -
# FILE: TEST # SKIP" and counted apart. UNIT_ONLY=REGEX
# runs only the tests whose name matches (cmocka's test filter is a glob: the
# regex is applied here).
# Another architecture's tests (make ARCH=aarch64 unit): UNIT_RUN names the
# emulator that runs each binary (qemu-aarch64-static), UNIT_RESULT the
# result's name (unit-aarch64); the timeout is then 600 s, for emulation.
set -u
run=${UNIT_RUN:-}
result=${UNIT_RESULT:-unit}
limit=120
[ -z "$run" ] || limit=600
passed=0 failed=0 skipped=0 n=0 t0=$(date +%s)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for t in "$@"; do
	name=$(basename "$t")
	# shellcheck disable=SC2086 # $run is empty or one word
	TURNINIT_VECTORS=tests/vectors CMOCKA_MESSAGE_OUTPUT=TAP timeout "$limit" $run "$t" >"$out" 2>&1
	rc=$?
	f_here=0
	while IFS= read -r line; do
		case $line in
		"ok "*" - "*|"not ok "*" - "*)
			test=${line#* - }
			if [ -n "${UNIT_ONLY:-}" ] && ! printf '%s\n' "$test" | grep -Eq -- "$UNIT_ONLY"; then
				continue
			fi
			n=$((n + 1))
			case $line in
			"ok "*) passed=$((passed + 1)); echo "ok $n - $name: $test" ;;
			*) failed=$((failed + 1)); f_here=$((f_here + 1)); echo "not ok $n - $name: $test" ;;
			esac
			;;
		"not ok "*" # SKIP "*)
			test=${line#* # SKIP }
			if [ -n "${UNIT_ONLY:-}" ] && ! printf '%s\n' "$test" | grep -Eq -- "$UNIT_ONLY"; then
				continue
			fi
			n=$((n + 1))
			skipped=$((skipped + 1))
			echo "ok $n - $name: $test # SKIP"
			;;
		"1.."*|"# ok - "*|"# not ok - "*) ;;
		*) [ -n "$line" ] && printf '#   %s\n' "$line" ;;
		esac
	done <"$out"
	if [ "$rc" -ne 0 ] && [ "$f_here" -eq 0 ]; then
		n=$((n + 1))
		failed=$((failed + 1))
		echo "not ok $n - $name exited $rc"
		tail -20 "$out" | sed 's/^/#   /'
	fi
done
mkdir -p build/test-results
echo "$passed $failed $skipped $(($(date +%s) - t0))" > "build/test-results/$result"
echo "1..$n"
echo "$result: $passed passed, $failed failed$( [ "$skipped" -eq 0 ] || echo ", $skipped skipped")"
[ "$failed" -eq 0 ]
