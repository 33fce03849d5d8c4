#!/bin/bash
# selftest.sh - the test runner of lib.sh (begin, limit, end, results) tested
# on itself: small suites written here run as child shells, and their TAP is
# checked. No root, no container, no network: make selftest (and make check).
#
# A test that overruns its limit fails with the one "ran out of time" line,
# what it started (in the foreground and in the background) is killed, and
# what the suite started before it, and the suite's shell, live on; a test
# that passes carries its time and leaves no directory; one that fails keeps
# it; a test ITEST_ONLY leaves out prints nothing; results writes the suite's
# seconds; a test whose end never comes fails, as a second end does; an
# ITEST_ONLY bash cannot read fails the suite, as an empty test name does
# (which would remove every kept directory); tests/summary.sh counts a
# malformed result as a failure; tests/check-steps.sh starts a step after the
# one it waits for, and a SIGTERM to it ends the running steps. Prints TAP;
# writes build/test-results/selftest.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$HERE/lib.sh"
SUITE=selftest
WORK=$ROOT/build/selftest
rm -rf "$WORK"
mkdir -p "$WORK"
command -v ps >/dev/null || abort "ps not found: run make setup (procps)"

# inner NAME BODY: a suite of its own, BODY between lib.sh and results, run
# with ITEST_ONLY and ITEST_LIMIT unset; its TAP in OUT, status in RC.
inner() {
	mkdir -p "$WORK/$1"
	cat > "$WORK/$1/suite.sh" <<INNER
. "$HERE/lib.sh"
ROOT=$WORK/$1 SUITE=inner WORK=$WORK/$1/scratch
mkdir -p "\$WORK"
$2
results
INNER
	run_cmd env -u ITEST_ONLY -u ITEST_LIMIT timeout 120 bash "$WORK/$1/suite.sh"
}

# gone PIDFILE...: every process whose pid a PIDFILE holds has ended.
gone() {
	local f
	for f in "$@"; do
		[[ -s $f ]] || return 1
		! kill -0 "$(cat "$f")" 2>/dev/null || return 1
	done
}

TIME='# time=(0|[1-9][0-9]*)\.[0-9][0-9]s'

if begin runner-overrun-fails-and-kills-what-it-started; then
	D=$WORK/overrun
	# before: a process of the suite's own, started before the test; the test
	# starts one in the background before its limit and one after, and waits
	# on one in the foreground, each for ever; its limit is 2 s.
	inner overrun "
bash -c 'echo \$\$ > $D/before.pid; exec sleep 1000' &
BEFORE=\$!
if begin overrun; then
	bash -c 'echo \$\$ > $D/early.pid; exec sleep 1000' &
	limit 2
	bash -c 'echo \$\$ > $D/bg.pid; exec sleep 1000' &
	bash -c 'echo \$\$ > $D/fg.pid; exec sleep 1000'
	echo '# the test went on to its end'
	end
fi
kill -0 \$BEFORE && echo '# before lives on'
kill \$BEFORE"
	eq "status" "$RC" 1
	lines=$(printf '%s' "$OUT" | grep -E '^(not )?ok ' || true)
	[[ $lines =~ ^"not ok 1 - overrun "$TIME$ ]] || why "TAP line: $lines"
	expect_contains stdout "$OUT" $'\n#   overrun ran out of time: its limit is 2 s; the processes it started were killed\n'
	expect_contains stdout $'\n'"$OUT" $'\n# the test went on to its end\n'
	expect_contains stdout "$OUT" $'\n# before lives on\n'
	expect_contains stdout "$OUT" $'\n0 passed, 1 failed\n'
	wait_for 30 gone "$D/early.pid" "$D/bg.pid" "$D/fg.pid" || why "a process the test started is still there"
	took=$(printf '%s' "$lines" | sed -E 's/.*time=([0-9]+)\..*/\1/')
	((took >= 2 && took < 30)) || why "the test took $took s, its limit 2 s"
	end
fi

if begin runner-pass-carries-its-time; then
	inner pass '
if begin quick; then
	: > "$T_DIR/made"
	echo "$T_DIR" > "$WORK/../t_dir"
	end
fi
if begin left-out-by-itest-only; then why no; end; fi'
	expect_rc 1
	inner pass2 '
ITEST_ONLY=^quick$
if begin quick; then
	: > "$T_DIR/made"
	echo "$T_DIR" > "$WORK/../t_dir"
	end
fi
if begin left-out-by-itest-only; then why no; end; fi'
	expect_rc 0
	lines=$(printf '%s' "$OUT" | grep -E '^(not )?ok ' || true)
	[[ $lines =~ ^"ok 1 - quick "$TIME$ ]] || why "TAP lines: $lines"
	dir=$(cat "$WORK/pass2/t_dir")
	eq "the test's directory" "$dir" "$WORK/pass2/scratch/t/quick"
	[[ ! -e $dir ]] || why "the passed test's directory $dir is left"
	[[ ! -e $WORK/pass2/scratch/t/left-out-by-itest-only ]] || why "a test ITEST_ONLY left out has a directory"
	read -r p f k s < "$WORK/pass2/build/test-results/inner"
	eq "build/test-results/inner" "$p $f $k" "1 0 0"
	[[ $s =~ ^[0-9]+$ ]] || why "the suite's seconds: $(printf '%q' "$s")"
	end
fi

if begin runner-failure-keeps-its-directory; then
	inner fail '
if begin broken; then
	: > "$T_DIR/evidence"
	why "it broke"
	end
fi'
	expect_rc 1
	lines=$(printf '%s' "$OUT" | grep -E '^(not )?ok ' || true)
	[[ $lines =~ ^"not ok 1 - broken "$TIME$ ]] || why "TAP line: $lines"
	expect_contains stdout "$OUT" $'\n#   - it broke\n'
	expect_contains stdout "$OUT" "#   directory: scratch/t/broken (kept)"
	[[ -e $WORK/fail/scratch/t/broken/evidence ]] || why "the failed test's directory is gone"
	end
fi

if begin runner-itest-only-not-a-regex-aborts; then
	# a REGEX bash cannot read selects nothing: the suite must not pass so
	inner badre '
ITEST_ONLY="(unclosed"
if begin quick; then
	end
fi'
	expect_rc 1
	expect_contains stdout "$OUT" "not ok 1 - setup # ITEST_ONLY="
	expect_contains stdout "$OUT" $'\n0 passed, 1 failed\n'
	end
fi

if begin runner-begin-without-a-name-aborts; then
	# an empty name would make T_DIR t/ itself: the failed test's kept
	# directory must survive it
	inner noname '
if begin kept; then
	why "it broke"
	end
fi
if begin ""; then
	end
fi'
	expect_rc 1
	expect_contains stdout "$OUT" "not ok 2 - setup # begin: the test name '' names no directory of its own"
	[[ -d $WORK/noname/scratch/t/kept ]] || why "the failed test's kept directory is gone"
	end
fi

if begin runner-summary-fails-a-malformed-result; then
	# tests/summary.sh: a result that is empty, holds a negative count (which
	# would cancel another suite's failure) or a field more counts as one
	# failure, as a missing one does; a good one is added up
	D=$WORK/summary
	mkdir -p "$D/build/test-results"
	printf '3 0 1 12\n' > "$D/build/test-results/good"
	: > "$D/build/test-results/empty"
	printf '1 -1 0 2\n' > "$D/build/test-results/negative"
	printf '1 0 0 5 9\n' > "$D/build/test-results/extra"
	# shellcheck disable=SC2016 # the inner shell expands them
	run_cmd sh -c 'cd "$1" && sh "$2" good empty negative extra missing' sh "$D" "$ROOT/tests/summary.sh"
	expect_rc 1
	expect_contains stdout "$OUT" $'check: good: 3 passed, 0 failed, 1 skipped in 12 s\n'
	for n in empty negative extra; do
		expect_contains stdout "$OUT" "check: $n: 1 failed: its result is not "
	done
	expect_contains stdout "$OUT" $'check: missing: no result (the suite did not finish)\n'
	expect_contains stdout "$OUT" $'\n3 passed, 4 failed, 1 skipped, the suites\' own times adding up to 12 s\n'
	end
fi

if begin runner-check-steps-after-and-interrupt; then
	# tests/check-steps.sh, as make check runs it, on suites of its own: a
	# step NAME:AFTER starts once AFTER has ended, and each step's log is
	# printed after its "ended" line; SIGTERM (what a ^C does to it) ends the
	# running steps, each through its suite's trap, and exits 130. (Before:
	# it died alone, and the suites ran on in the background.)
	D=$WORK/steps
	mkdir -p "$D/tests/integration" "$D/bin"
	cp "$ROOT/tests/check-steps.sh" "$D/tests/"
	printf '#!/bin/sh\nexit 0\n' > "$D/bin/podman"   # its prune touches no store
	chmod +x "$D/bin/podman"
	printf 'echo first; : > %q\n' "$D/first.done" > "$D/tests/integration/first.sh"
	printf '[ -e %q ] && echo "after first"\n' "$D/first.done" > "$D/tests/integration/second.sh"
	run_cmd env PATH="$D/bin:$PATH" timeout 60 bash "$D/tests/check-steps.sh" 1 second:first first
	expect_rc 0
	expect_out $'check: first started (1 running)\ncheck: first ended in 0 s\nfirst\ncheck: second started (1 running)\ncheck: second ended in 0 s\nafter first\n'
	for n in a b; do
		printf 'trap "echo \\$\\$ > %q; exit 130" TERM\necho $$ > %q\nsleep 1000 &\nwait\n' \
			"$D/$n.term" "$D/$n.pid" > "$D/tests/integration/$n.sh"
	done
	# the signal to its own shell (no timeout around it: timeout would pass
	# it on to the whole group); its own wait for the steps is bounded
	PATH="$D/bin:$PATH" bash "$D/tests/check-steps.sh" 2 a b >"$D/out" 2>&1 &
	CS=$!
	CMD="check-steps.sh 2 a b, then SIGTERM to it"
	wait_for 30 test -s "$D/a.pid" -a -s "$D/b.pid" || why "the steps did not start"
	kill -TERM "$CS"
	wait "$CS"
	RC=$?
	slurp "$D/out" OUT
	ERR=
	expect_rc 130
	expect_contains stdout "$OUT" "check: interrupted: ending "
	wait_for 30 gone "$D/a.pid" "$D/b.pid" || why "a step's suite outlived check-steps.sh"
	[[ -s $D/a.term && -s $D/b.term ]] || why "a step's suite did not get SIGTERM"
	for n in a b; do   # what a failure left: each suite and its sleep
		p=$(cat "$D/$n.pid" 2>/dev/null) && kill -0 "$p" 2>/dev/null || continue
		pkill -KILL -P "$p"
		kill -KILL "$p"
	done
	end
fi

results
