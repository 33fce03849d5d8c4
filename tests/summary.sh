#!/bin/sh
# summary.sh SUITE... - add up build/test-results/SUITE ("passed failed
# [skipped [seconds]]") and print the closing lines of `make check`: a line per
# suite with its time (the suites of tests/integration/lib.sh write their
# seconds; a result without them shows none), the kernel it ran on
# (build/test-results/kernel, from kfeatures --line), the skips counted by
# reason (build/test-results/SUITE.skips, a reason a line), then the total,
# with the suites' seconds added up; then, from make check, each step's wall
# clock time (build/test-results/steps) and the whole run's since its build
# began (build/test-results/began). A suite that wrote nothing, or a result
# not of that form (empty, a field that is no whole number, a field more),
# counts as one failure. Exits non-zero when anything failed.
set -u
passed=0 failed=0 skipped=0 seconds=0
# whole N: N is digits alone
whole() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
}
for s in "$@"; do
	if [ -r "build/test-results/$s" ]; then
		p='' f='' k='' t='' x=''
		read -r p f k t x < "build/test-results/$s"
		if ! whole "$p" || ! whole "$f" || ! whole "${k:-0}" || ! whole "${t:-0}" || [ -n "$x" ]; then
			echo "check: $s: 1 failed: its result is not \"passed failed [skipped [seconds]]\": $(head -n 1 "build/test-results/$s" | cut -c 1-80)"
			p=0 f=1 k=0 t=0
		else
			k=${k:-0}
			echo "check: $s: $p passed, $f failed$( [ "$k" -eq 0 ] || echo ", $k skipped")$( [ -z "$t" ] || echo " in $t s")"
		fi
		seconds=$((seconds + ${t:-0}))
	else
		p=0 f=1 k=0
		echo "check: $s: no result (the suite did not finish)"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + k))
done
[ ! -r build/test-results/kernel ] || sed 's/^# /check: /' build/test-results/kernel
for s in "$@"; do
	[ ! -r "build/test-results/$s.skips" ] || sed "s|^|$s\t|" "build/test-results/$s.skips"
done | awk -F '\t' '{ n[$2]++; if (!(($2, $1) in seen)) { seen[$2, $1] = 1; w[$2] = w[$2] (w[$2] == "" ? "" : ", ") $1 } }
	END { for (r in n) printf "check: skipped %d: %s (%s)\n", n[r], r, w[r] }' | sort
# each step's wall-clock time, with its builds and images (build/test-results/
# steps, "NAME SECONDS" a line, written by make check), and the whole run's
# since build/test-results/began
if [ -r build/test-results/steps ]; then
	awk '{ printf "%s%s %d s", (NR == 1 ? "check: each step, wall clock: " : ", "), $1, $2 } END { if (NR) print "" }' \
		build/test-results/steps
fi
if [ -r build/test-results/began ] && whole "$(cat build/test-results/began)"; then
	all=$(($(date +%s) - $(cat build/test-results/began)))
	echo "check: make check took $((all / 60)) min $((all % 60)) s"
fi
echo "$passed passed, $failed failed$( [ "$skipped" -eq 0 ] || echo ", $skipped skipped"), the suites' own times adding up to $seconds s"
[ "$failed" -eq 0 ]
