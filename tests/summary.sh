#!/bin/sh
# summary.sh SUITE... - add up build/test-results/SUITE ("passed failed
# [skipped]") and
# print the closing line of `make check`; a suite that wrote nothing counts as
# one failure. Exits non-zero when anything failed.
set -u
passed=0 failed=0 skipped=0
for s in "$@"; do
	if [ -r "build/test-results/$s" ]; then
		k=0
		read -r p f k < "build/test-results/$s"
		k=${k:-0}
		echo "check: $s: $p passed, $f failed$( [ "$k" -eq 0 ] || echo ", $k skipped")"
	else
		p=0 f=1 k=0
		echo "check: $s: no result (the suite did not finish)"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + k))
done
echo "$passed passed, $failed failed$( [ "$skipped" -eq 0 ] || echo ", $skipped skipped")"
[ "$failed" -eq 0 ]
