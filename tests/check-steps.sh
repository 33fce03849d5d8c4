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
# Each step's output is appended to build/test-results/logs/STEP.log (check-cross's
# begins with its dependencies' build, which the Makefile starts before the
# host's build) and is printed
# whole when the step ends, after the line "check: STEP ended in N s"; its
# wall-clock seconds are appended to build/test-results/steps. Exits 0: the
# closing lines (tests/summary.sh) count what each suite wrote; 130 when
# interrupted (INT or TERM: the running steps are ended first).
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

# step NAME: run_step, its output in its log. Each step is a process group
# of its own (set -m below): a ^C at the terminal reaches this script, not
# the steps, and stop_steps ends them.
step() {
	run_step "$1" >>"$LOGS/$1.log" 2>&1 </dev/null
}

# stop_steps: on INT or TERM, each running step's process group sent SIGTERM (a
# suite's trap then removes its containers), and waited for up to 120 s; a
# second ^C leaves them. Exits 130.
# shellcheck disable=SC2317 # run by the trap below
stop_steps() {
	local p n
	trap - INT TERM
	set +m   # no job notices for the steps ended below
	echo "check: interrupted: ending ${pid_of[*]}"
	for p in "${!pid_of[@]}"; do
		kill -TERM -- "-$p" 2>/dev/null
	done
	for ((n = 0; n < 1200; n++)); do
		for p in "${!pid_of[@]}"; do
			kill -0 -- "-$p" 2>/dev/null && break
			unset "pid_of[$p]"
		done
		((${#pid_of[@]} > 0)) || break
		sleep 0.1
	done
	((${#pid_of[@]} == 0)) || echo "check: still running after 120 s: ${pid_of[*]}"
	exit 130
}

declare -A pid_of after_of done_of began_of
queue=()
for s in "$@"; do
	name=${s%%:*}
	queue+=("$name")
	[[ $s == *:* ]] && after_of[$name]=${s#*:}
done

set -m
trap stop_steps INT TERM
running=0
while ((${#queue[@]} > 0 || running > 0)); do
	# start what may start, in order, while there is a place
	rest=()
	for name in "${queue[@]}"; do
		a=${after_of[$name]:-}
		if ((running < jobs)) && { [[ -z $a ]] || [[ -n ${done_of[$a]:-} ]]; }; then
			began_of[$name]=$SECONDS
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
	ended=
	wait -n -p ended
	[[ -n $ended && -n ${pid_of[$ended]:-} ]] || continue
	name=${pid_of[$ended]}
	unset "pid_of[$ended]"
	done_of[$name]=1
	running=$((running - 1))
	secs=$((SECONDS - began_of[$name]))
	echo "$name $secs" >>"$RESULTS/steps"
	echo "check: $name ended in $secs s"
	cat "$LOGS/$name.log"
done
# a step whose AFTER never ended (a name not in the list) never started
for name in "${queue[@]}"; do
	echo "check: $name never started: it waits for ${after_of[$name]}, which is not a step"
done
exit 0
