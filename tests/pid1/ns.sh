#!/bin/sh
# ns.sh MODE KEYDIR LEFTFILE PROGRAM [ARG]... - the first process of the test's new
# PID and mount namespaces (started by pid1.sh through unshare).
#   Binds KEYDIR at /etc/turninit, the only place turninit takes trust roots from.
#   MODE pid1: exec PROGRAM, which becomes PID 1 of the namespace.
#   MODE subreaper: run PROGRAM as a child (it is then a subreaper, not PID 1);
#     when it has exited, write to LEFTFILE the pids still in the namespace other
#     than this shell's (what the turn left behind, zombies included), and to
#     LEFTFILE.mounts the mount points it left (not there before it ran), and
#     exit with its status.
mode=$1 keys=$2 left=$3
shift 3
mkdir -p /etc/turninit && mount --bind "$keys" /etc/turninit || exit 120
if [ "$mode" = pid1 ]; then
	exec "$@"
fi
before=$(awk '{ print $5 }' /proc/self/mountinfo)
"$@"
s=$?
awk '{ print $5 }' /proc/self/mountinfo | while read -r m; do
	printf '%s\n' "$before" | grep -qxF "$m" || echo "$m"
done > "$left.mounts"
: > "$left"
for p in /proc/[0-9]*; do
	[ "${p#/proc/}" = 1 ] || echo "${p#/proc/}" >> "$left"
done
exit $s
