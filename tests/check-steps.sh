#!/bin/bash
# check-steps.sh JOBS STEP... - the suites of `make check`, JOBS of them at a
# time, each started as soon as a place is free, in the order given (the
# Makefile lists the longest first).
#
# A STEP is a suite of the Makefile's SUITES (tests/integration/NAME.sh;
# integration: run.sh), check-cross or fuzz-replay. NAME:AFTER starts NAME
# only once the step AFTER has ended: packaging, arm64 and doclines use the
# aarch64 build that check-cross makes (packaging's and doclines' make
# ARCH=aarch64 then finds it made). The suites are run by their scripts, not by
# make: the Makefile's check builds what they need first, and makes of one
# tree side by side would each regenerate the same files.
#
# Most of a suite's time is spent waiting on podman, conmon and the
# containers it starts, not on a processor: one suite alone keeps about one
# of two cores busy. Suites that run together share nothing that one of them
# changes: each has its own images, containers (named with its pid), networks
# and scratch folder; the Docker runs name their podman images -docker
# (tests/integration/lib.sh, ENGINE_TAG); the rootless runs have their own
# user, container store and copy of the tree; the two runs of doclines take
# turns (build/doclines.lock), and so do two builds of the workload image;
# no suite prunes the store while another may be making an image in it.
#
# Each step's output goes to build/test-results/logs/STEP.log and is printed
# whole when the step ends, after the line "check: STEP ended in N s"; its
# wall-clock seconds are appended to build/test-results/steps. Exits 0: the
# closing lines (tests/summary.sh) count what each suite wrote.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
RESULTS=$ROOT/build/test-results
LOGS=$RESULTS/logs

jobs=$1
shift
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "check-steps: JOBS must be a number from 1: $jobs" >&2; exit 2; }
mkdir -p "$LOGS"
# Side by side, no suite prunes root's images (tests/integration/lib.sh,
# prune_images): that is done once, here, before any starts.
if ((jobs > 1)); then
	export ITEST_PARALLEL=1
	timeout 60 podman image prune -f --filter label=org.turninit.root >/dev/null 2>&1
fi

# run_step NAME: the step's command, its output in its log
run_step() {
	case $1 in
	check-cross | fuzz-replay) make --no-print-directory -C "$ROOT" WERROR=1 "$1" ;;
	integration) bash "$ROOT/tests/integration/run.sh" ;;
	*) bash "$ROOT/tests/integration/$1.sh" ;;
	esac
}

# step NAME: run_step, then its time and its whole log, one step's at a time
step() {
	local b=$SECONDS
	run_step "$1" >"$LOGS/$1.log" 2>&1 </dev/null
	local secs=$((SECONDS - b))
	echo "$1 $secs" >>"$RESULTS/steps"
	{
		flock 8
		echo "check: $1 ended in $secs s"
		cat "$LOGS/$1.log"
	} 8>>"$LOGS/.print"
}

declare -A pid_of after_of done_of
queue=()
for s in "$@"; do
	name=${s%%:*}
	queue+=("$name")
	[[ $s == *:* ]] && after_of[$name]=${s#*:}
done

running=0
while ((${#queue[@]} > 0 || running > 0)); do
	# start what may start, in order, while there is a place
	rest=()
	for name in "${queue[@]}"; do
		a=${after_of[$name]:-}
		if ((running < jobs)) && { [[ -z $a ]] || [[ -n ${done_of[$a]:-} ]]; }; then
			step "$name" &
			pid_of[$!]=$name
			running=$((running + 1))
			echo "check: $name started ($running running)"
		else
			rest+=("$name")
		fi
	done
	queue=("${rest[@]}")
	((running > 0)) || break
	wait -n -p ended
	[[ -n ${ended:-} && -n ${pid_of[$ended]:-} ]] || continue
	done_of[${pid_of[$ended]}]=1
	unset "pid_of[$ended]"
	running=$((running - 1))
done
# a step whose AFTER never ended (a name not in the list) never started
for name in "${queue[@]}"; do
	echo "check: $name never started: it waits for ${after_of[$name]}, which is not a step"
done
exit 0
