#!/bin/sh
# run-unit.sh TEST... - run cmocka unit test binaries, each under a hard
# timeout, and print "unit: N passed, N failed" (tests, not binaries).
# The counts also go to build/test-results/unit for the summary of `make check`.
set -u
passed=0 failed=0
for t in "$@"; do
	out=$(TURNINIT_VECTORS=tests/vectors timeout 120 "$t" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E '^\[ *(PASSED|FAILED|  ERROR) *\]|^\[  FAILED  \] [a-z_]' || true
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' | tail -1)
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' | tail -1)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		echo "unit: $t exited $rc"
		printf '%s\n' "$out" | tail -20
		failed=$((failed + 1))
	fi
done
mkdir -p build/test-results
echo "$passed $failed" > build/test-results/unit
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
