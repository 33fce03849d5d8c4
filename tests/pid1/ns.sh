#!/bin/sh
# ns.sh MODE KEYDIR LEFTFILE PROGRAM [ARG]... - the first process of the test's new
# PID and mount namespaces (started by pid1.sh through unshare).
#   Binds KEYDIR at /etc/turninit, the only place turninit takes trust roots from.
#   MODE pid1: exec PROGRAM, which becomes PID 1 of the namespace.
#   MODE subreaper: run PROGRAM as a child (it is then a subreaper, not PID 1);
#     when it has exited, write to LEFTFILE the pids still in the namespace other
#     than this shell's (what the turn left behind, zombies included), and to
#     LEFTFILE.mounts the mount points it left (not there before it ran), and
#     exit with its status. With NS_LEFT_WAIT=SECONDS it first waits, polling,
#     up to that long for every other process to end (a zombie counts as
#     ended) and writes the ones still running to LEFTFILE.alive: when this
#     shell, PID 1, exits, the kernel kills them, so only it can tell whether
#     they would have outlived turninit.
mode=$1 keys=$2 left=$3
shift 3
mkdir -p /etc/turninit && mount --bind "$keys" /etc/turninit || exit 120
if [ "$mode" = pid1 ]; then
	exec "$@"
fi
before=$(awk '{ print $5 }' /proc/self/mountinfo)
"$@"
s=$?
# running_others: the pids other than this shell's not in state Z.
running_others() {
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = 1 ] && continue
		read -r l < "$p/stat" 2>/dev/null || continue
		l=${l##*) }
		[ "${l%% *}" = Z ] || echo "${p#/proc/}"
	done
}
if [ -n "${NS_LEFT_WAIT:-}" ]; then
	i=0
	# in this shell, not a subshell, which would list itself
	running_others > "$left.alive"
	while [ "$i" -lt $((NS_LEFT_WAIT * 10)) ] && [ -s "$left.alive" ]; do
		sleep 0.1
		i=$((i + 1))
		running_others > "$left.alive"
	done
fi
# one awk for the whole list: a grep a mount point made each subreaper run
# some 0.3 s slower than a pid1 one
printf '%s\n' "$before" | awk 'NR == FNR { b[$0]; next } !($5 in b) { print $5 }' - /proc/self/mountinfo \
	> "$left.mounts"
: > "$left"
for p in /proc/[0-9]*; do
	[ "${p#/proc/}" = 1 ] || echo "${p#/proc/}" >> "$left"
done
exit $s
