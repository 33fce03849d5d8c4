#!/bin/sh
# summary.sh SUITE... - add up build/test-results/SUITE ("passed failed") and
# print the closing line of `make check`; a suite that wrote nothing counts as
# one failure. Exits non-zero when anything failed.
set -u
passed=0 failed=0
for s in "$@"; do
	if [ -r "build/test-results/$s" ]; then
		read -r p f < "build/test-results/$s"
		echo "check: $s: $p passed, $f failed"
	else
		p=0 f=1
		echo "check: $s: no result (the suite did not finish)"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
