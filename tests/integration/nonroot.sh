#!/bin/bash
# nonroot.sh - turninit's non-root mode (`make nonroot`; issue 16, Deliver 1):
# started as the unprivileged uid its commands run as, with no capability in
# any set, as Kubernetes' "restricted" Pod Security Standard and OpenShift's
# arbitrary uids start a container. Root, rootful podman set up by `make
# setup`. Asserted:
#   - the start that enters non-root mode (--user U:G --cap-drop ALL, with or
#     without no-new-privileges) runs the command with the exact environment,
#     every capability set empty, NoNewPrivs 1, the seccomp filter and
#     Landlock, as its own ids; the log line says which mode, verify's "start"
#     says what is not applied;
#   - every half-privileged start is refused, naming the two ways to start;
#   - the manifest's user: fixed ids that must be turninit's own, or
#     user.uid_range and gid_range (OpenShift: --user 1000680000:0), each
#     refusal with its one line;
#   - a command cannot signal turninit (kill 1, kill -1, a process group of
#     turninit's) nor another command's keeper, and the turn goes on;
#   - HOME: a tmpfs of the uid, or a memory emptyDir at HOME's parent in which
#     turninit makes HOME; a root-owned HOME tmpfs is refused;
#   - serve, and the audit log and listen socket placement under Landlock;
#   - oci/k8s/job-restricted.yaml and sidecar-restricted.yaml under podman
#     kube play, and the Job's OpenShift variant with an arbitrary uid.
# Every podman call has a hard timeout and runs with --pull never --network
# none; containers are labelled and removed at exit. Prints TAP and ends with
# "N passed, N failed"; exits 1 on any failure.
# shellcheck disable=SC2016 # '$X' is literal: it runs in the container
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
suite_open nonroot nrtest "rootful podman" podman buildah minisign timeout python3

IMG=localhost/turninit-nrtest
trap cleanup_containers EXIT
T0=$(now_ms)

# --- manifests and images ------------------------------------------------------------------
trusted_keys
# OpenShift: the uid range of a project (openshift.io/sa.scc.uid-range), gid 0.
RANGE='"user":{"uid_range":[1000680000,1000689999],"gid_range":[0,0]}'
RHEAD=${HEAD/'"user":{"uid":1000,"gid":1000}'/$RANGE}
[[ $RHEAD == *uid_range* ]] || abort "lib.sh HEAD has no user 1000:1000 to replace"
manifest main "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\"]},\"limits\":{\"concurrency\":2}}"
manifest range "{$RHEAD,\"env\":{$SET,\"allow\":[]}}"
manifest range-callers "{$RHEAD,\"env\":{$SET,\"allow\":[]},\"callers\":{\"uids\":[1001]}}"
manifest sidecar "{$HEAD,\"env\":{$SET,\"allow\":[]},\"callers\":{\"uids\":[1001]}}"
manifest main-optional "{$HEAD,\"env\":{$SET,\"allow\":[]},\"landlock\":{\"optional\":true}}"
mkdir -p "$WORK/overlay/bin"
need_helpers probe sig
install -m 0755 "$HELPERS/probe" "$HELPERS/sig" "$WORK/overlay/bin/"
ln -sf busybox "$WORK/overlay/bin/setsid"
sh "$ROOT/rootfs/build-image.sh" --trusted-key "$KEY_PUB" --tag "$IMG:base" \
	--root "$WORK/root-base" --overlay "$WORK/overlay" "$BIN" >"$WORK/build-base.log" 2>&1 \
	|| { cat "$WORK/build-base.log"; abort "rootfs/build-image.sh"; }
# nohome: the base image without /home/agent and with /home 1777. podman
# copies an image's files at a volume's mount point into a new volume, and
# gives the volume that directory's mode, which a kubelet does not: for the
# kube play tests HOME's parent must be in the image as a kubelet's memory
# emptyDir is, empty and mode 1777.
ctr=$(timeout 60 buildah from --pull-never --quiet "$IMG:base") || abort "buildah from"
if ! timeout 60 buildah run "$ctr" -- /bin/rmdir /home/agent ||
	! timeout 60 buildah run "$ctr" -- /bin/busybox chmod 1777 /home ||
	! timeout 60 buildah commit --quiet --rm "$ctr" "$IMG:nohome" >/dev/null; then
	timeout 60 buildah rm "$ctr" >/dev/null 2>&1
	abort "buildah run/commit nohome"
fi
seal() { # seal IMAGE MANIFEST TAG
	sh "$ROOT/oci/seal.sh" --image "$IMG:$1" --tag "$IMG:$3" --manifest "$M/$2.json" \
		--key "$KEY_SEC" --trusted-comment "turninit non-root test: $3" >"$WORK/seal-$3.log" 2>&1 \
		|| { cat "$WORK/seal-$3.log"; abort "oci/seal.sh $3"; }
}
for t in main range range-callers main-optional; do
	seal base "$t" "$t"
done
seal nohome main job
seal nohome range job-openshift
seal nohome sidecar sidecar
prune_images
echo "# images built in $(( $(now_ms) - T0 )) ms"

SEALED=$IMG:main
# The restricted start, as a kubelet makes it: a uid, every capability dropped
# (the bounding set too), no_new_privs.
NR=(--user 1000:1000 --cap-drop ALL --security-opt no-new-privileges)
NR_LOG=$'turninit: non-root mode: running as 1000:1000 with no capability; commands share these ids (no securebits, bounding set, group or uid change: docs/security.md)\n'
ENV_MAIN=$'HOME=/home/agent\nLANG=C.UTF-8\nPATH=/usr/local/bin:/usr/bin:/bin\nPWD=/work\nSHLVL=0\nTERM=dumb\n_=/bin/env\n'
# The Landlock ABI of this kernel, asked bare on the host (signal scoping
# needs 6; docs/testing.md, "Kernel features"); verify must report the same.
kernel_ask landlock
LL_ABI=$KERNEL_ANSWER
stat_of() { # stat_of KEY: the value of "KEY VALUE..." in $OUT (probe status)
	printf '%s\n' "$OUT" | sed -n "s/^$1 //p" | head -n 1
}

# --- the start that enters non-root mode ---------------------------------------------------
if begin n-exact-environment; then
prun "${NR[@]}" --tmpfs "$HOME_TMPFS" -e TZ=UTC -e GH_TOKEN=secret -e BASH_ENV=/etc/x "$SEALED" env
expect_rc 0
eq "env (sorted)" "$(printf '%s' "$OUT" | LC_ALL=C sort)" "$(printf '%sTZ=UTC\n' "$ENV_MAIN" | LC_ALL=C sort)"
expect_err "$NR_LOG"
end; fi

if begin n-process-locked-down; then
prun "${NR[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" 'exec /bin/probe status'
expect_rc 0
for k in CapInh CapPrm CapEff CapBnd CapAmb; do
	eq "$k" "$(stat_of "$k")" 0000000000000000
done
eq uid "$(stat_of uid)" "1000 1000 1000"
eq gid "$(stat_of gid)" "1000 1000 1000"
eq NoNewPrivs "$(stat_of NoNewPrivs)" 1
eq Seccomp "$(stat_of Seccomp)" 2
eq securebits "$(stat_of securebits)" 0x0
eq proc1_environ "$(stat_of proc1_environ)" EACCES
eq proc1_mem "$(stat_of proc1_mem)" EACCES
end; fi

# Landlock holds as in the privileged mode: writes only in HOME, the workdir
# and /tmp (the default writable set).
if begin n-landlock-enforced; then
prun "${NR[@]}" --tmpfs "$HOME_TMPFS" --tmpfs /work:rw,mode=0777 --tmpfs /srv:rw,mode=0777 "$SEALED" \
	'for d in /srv /work /home/agent; do (: > $d/x) 2>/dev/null && echo "$d ok" || echo "$d denied"; done'
expect_rc 0
expect_out $'/srv denied\n/work ok\n/home/agent ok\n'
expect_err "$NR_LOG"
end; fi

# --cap-drop ALL without no-new-privileges: the bounding set is empty, which
# is enough; turninit sets no_new_privs in every command all the same.
if begin n-bounding-empty-without-nnp; then
prun --user 1000:1000 --cap-drop ALL --tmpfs "$HOME_TMPFS" "$SEALED" 'exec /bin/probe status'
expect_rc 0
eq CapBnd "$(stat_of CapBnd)" 0000000000000000
eq NoNewPrivs "$(stat_of NoNewPrivs)" 1
eq Seccomp "$(stat_of Seccomp)" 2
end; fi

if begin n-exit-status-kept; then
prun "${NR[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" 'exit 7'
expect_rc 7
expect_out ""
expect_err "$NR_LOG"
end; fi

# verify states the mode and what it cannot apply.
if begin n-verify-states-mode; then
prun "${NR[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" verify
expect_rc 0
got=$(printf '%s' "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["start"]
print(d["securebits"])
g = d["signal_guard"]
print("guard", g["applied"], len(g["seccomp"]), g["landlock_signal_scope"])
print(s["mode"], s["uid"], s["gid"], s["no_new_privs_at_start"])
for x in s["not_applied"]:
    print(x if isinstance(x, str) else json.dumps(x, sort_keys=True))' 2>&1)
scope=$([[ ${LL_ABI:-0} -ge 6 ]] && echo True || echo False)
eq "verify start" "$got" "not locked: non-root mode (needs CAP_SETPCAP; see start.not_applied)
guard True 6 $scope
non-root 1000 1000 True
securebits: not locked (needs CAP_SETPCAP); with no capability in any set and no_new_privs there is nothing for them to guard
uid change: commands run as turninit's own uid and gid
{\"groups\": [1000], \"supplementary groups\": \"kept, as the runtime gave them\"}"
eq "verify's Landlock ABI, against the kernel's" \
	"$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["landlock"]["abi"])' 2>&1)" "$LL_ABI"
end; fi
if begin n-verify-privileged-and-refused; then
prun --tmpfs "$HOME_TMPFS" "$SEALED" verify
expect_rc 0
got=$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); s=d["start"]; print(s["mode"], s["uid"], d["signal_guard"]["applied"])' 2>&1)
eq "verify start, root" "$got" "privileged 0 False"
prun --user 1000:1000 --tmpfs "$HOME_TMPFS" "$SEALED" verify
# the policy is printed, and the start's refusal is verify's too: 125, its line
expect_rc 125
expect_contains stderr "$ERR" "turninit: capabilities: running as uid 1000 without"
got=$(printf '%s' "$OUT" | python3 -c 'import json,sys; s=json.load(sys.stdin)["start"]; print(s["mode"]); print(s["refusal"])' 2>&1)
expect_contains "verify start, half-privileged" "$got" $'refused\ncapabilities: running as uid 1000 without'
end; fi

# --- half-privileged starts are refused ----------------------------------------------------
BOTH_WAYS="start turninit as root in the container (podman --userns=keep-id: add --user 0:0), or as the commands' uid with no capability in any set (--cap-drop ALL --security-opt no-new-privileges; Kubernetes: capabilities drop ALL, allowPrivilegeEscalation: false)"
if begin n-half-privileged-bounding-refused; then
prun --user 1000:1000 --tmpfs "$HOME_TMPFS" "$SEALED" 'echo COMMAND-RAN'
expect_refusal "capabilities: running as uid 1000 without CAP_SETPCAP, CAP_SETUID, CAP_SETGID, CAP_KILL, and not in non-root mode (its bounding set is not empty and no_new_privs is not set): $BOTH_WAYS"
end; fi
# podman gives a capability added for a non-root --user as ambient, so effective
if begin n-half-privileged-one-capability-refused; then
prun --user 1000:1000 --cap-drop ALL --cap-add KILL --security-opt no-new-privileges --tmpfs "$HOME_TMPFS" "$SEALED" 'echo COMMAND-RAN'
expect_refusal "capabilities: running as uid 1000 without CAP_SETPCAP, CAP_SETUID, CAP_SETGID, and not in non-root mode (its effective set is not empty, its permitted set is not empty, its inheritable set is not empty, its ambient set is not empty): $BOTH_WAYS"
end; fi
if begin n-half-privileged-serve-refused; then
prun --user 1000:1000 --tmpfs "$HOME_TMPFS" "$SEALED" serve
expect_refusal "and not in non-root mode"
end; fi

# --- whose ids: the manifest's user -------------------------------------------------------
if begin n-fixed-user-other-uid-refused; then
prun --user 1001:1001 --cap-drop ALL --security-opt no-new-privileges --tmpfs "$HOME_TMPFS" "$SEALED" 'echo COMMAND-RAN'
expect_refusal "user: turninit runs unprivileged as 1001:1001, so commands run as 1001:1001, but the manifest names user.uid 1000, user.gid 1000: start it as 1000:1000 (Kubernetes: runAsUser, runAsGroup), or seal user.uid_range and user.gid_range"
end; fi
if begin n-fixed-user-other-gid-refused; then
prun --user 1000:0 --cap-drop ALL --security-opt no-new-privileges --tmpfs "$HOME_TMPFS" "$SEALED" 'echo COMMAND-RAN'
expect_refusal "user: turninit runs unprivileged as 1000:0, so commands run as 1000:0"
end; fi
# OpenShift: an arbitrary uid of the project's range, group 0.
OS=(--user 1000680123:0 --cap-drop ALL --security-opt no-new-privileges)
if begin n-openshift-arbitrary-uid; then
prun "${OS[@]}" --tmpfs "$HOME_TMPFS" "$IMG:range" 'id -u; id -g; stat -c "%a %u %g" "$HOME"; exec /bin/probe status'
expect_rc 0
[[ $OUT == $'1000680123\n0\n700 1000680123 0\n'* ]] || why "ids and HOME: got $(printf '%q' "${OUT:0:40}")"
eq CapEff "$(stat_of CapEff)" 0000000000000000
eq NoNewPrivs "$(stat_of NoNewPrivs)" 1
eq Seccomp "$(stat_of Seccomp)" 2
expect_err $'turninit: non-root mode: running as 1000680123:0 with no capability; commands share these ids (no securebits, bounding set, group or uid change: docs/security.md)\n'
end; fi
if begin n-range-uid-outside-refused; then
prun --user 1000690000:0 --cap-drop ALL --security-opt no-new-privileges --tmpfs "$HOME_TMPFS" "$IMG:range" 'echo COMMAND-RAN'
expect_refusal "user.uid_range: turninit runs as uid 1000690000, outside [1000680000, 1000689999]"
end; fi
if begin n-range-gid-outside-refused; then
prun --user 1000680000:1000 --cap-drop ALL --security-opt no-new-privileges --tmpfs "$HOME_TMPFS" "$IMG:range" 'echo COMMAND-RAN'
expect_refusal "user.gid_range: turninit runs as gid 1000, outside [0, 0]"
end; fi
if begin n-range-privileged-refused; then
prun --tmpfs "$HOME_TMPFS" "$IMG:range" 'echo COMMAND-RAN'
expect_refusal "user.uid_range: commands run as the uid turninit is started as, but it started privileged (uid 0): start it as an unprivileged uid in [1000680000, 1000689999] with no capability in any set"
end; fi

# --- signals: a command cannot reach turninit --------------------------------------------
# In non-root mode the kernel would let a command signal turninit (same uid);
# the seccomp filter answers EPERM, and the turn goes on.
if begin n-kill-turninit-denied; then
prun "${NR[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" \
	'kill -TERM 1 2>&1; kill -KILL -1 2>&1; kill -TERM -1 2>&1; echo still here'
expect_rc 0
expect_out $'bash: line 1: kill: (1) - Operation not permitted\nbash: line 1: kill: (-1) - Operation not permitted\nbash: line 1: kill: (-1) - Operation not permitted\nstill here\n'
expect_err "$NR_LOG"
end; fi
# A file's owner signal: with F_SETSIG it could be SIGTERM or SIGKILL to any
# owner; the filter refuses F_SETSIG (the owner signal stays SIGIO, which
# turninit keeps blocked). A forged sender (rt_sigqueueinfo's si_pid) too.
if begin n-owner-signal-and-sigqueue-denied; then
prun "${NR[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" 'sig setown 1 15; sig setown 1 9; sig queue 1 15 1; echo still here'
expect_rc 0
expect_out $'F_SETOWN: ok\nF_SETSIG: EPERM\nO_ASYNC: ok\nwrite: ok\nF_SETOWN: ok\nF_SETSIG: EPERM\nO_ASYNC: ok\nwrite: ok\nrt_sigqueueinfo: EPERM\nstill here\n'
expect_err "$NR_LOG"
end; fi
# As a subreaper below the runtime's init (podman --init: catatonit is PID 1),
# turninit is not PID 1: the kernel would deliver even SIGKILL and SIGSTOP.
if begin n-subreaper-cannot-be-signalled; then
prun --init "${NR[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" \
	'sig kill $PPID 9; sig kill $PPID 19; sig setown $PPID 9; kill -STOP $PPID 2>&1; echo "turninit is pid $PPID"'
expect_rc 0
expect_out $'kill: EPERM\nkill: EPERM\nF_SETOWN: ok\nF_SETSIG: EPERM\nO_ASYNC: ok\nwrite: ok\nbash: line 1: kill: (2) - Operation not permitted\nturninit is pid 2\n'
end; fi
# turninit started as the manifest's uid with the four capabilities: its
# commands share its uid as in non-root mode, and get the same guard.
if begin n-privileged-same-uid-guarded; then
prun --user 1000:1000 --cap-drop ALL --cap-add SETPCAP,SETUID,SETGID,KILL --tmpfs "$HOME_TMPFS" "$SEALED" \
	'kill -TERM 1 2>&1; sig setown 1 15; echo still here'
expect_rc 0
expect_out $'bash: line 1: kill: (1) - Operation not permitted\nF_SETOWN: ok\nF_SETSIG: EPERM\nO_ASYNC: ok\nwrite: ok\nstill here\n'
end; fi

# The calls that change another process of the same uid without a signal
# (issue 27): resource limits (RLIMIT_CPU would kill turninit, NOFILE and
# NPROC stop every later exec), scheduling, nice and I/O priority (they
# starve its loop). Refused towards turninit and a keeper, each set to what
# the target has already; allowed on the command itself (pid 0), and
# reading stays open. policy/target_calls.c lists every such call.
if begin n-process-target-calls-refused; then
prun "${NR[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" \
	'for p in 1 0; do sig prlimit $p; sig sched $p; sig nice $p; sig ioprio $p; done; sig user; echo still here'
expect_rc 0
expect_out $'prlimit read: ok\nprlimit: EPERM\nsched_setaffinity: EPERM\nsetpriority: EPERM\nioprio_set: EPERM\nprlimit read: ok\nprlimit: ok\nsched_setaffinity: ok\nsetpriority: ok\nioprio_set: ok\nsetpriority user: EPERM\nstill here\n'
expect_err "$NR_LOG"
end; fi
if begin n-serve-keeper-target-calls-refused; then
serve_session '{"op":"exec","id":"k","command":"sig prlimit $PPID; sig sched $PPID; sig nice $PPID; sig ioprio $PPID"}' \
	-- podman run -i --rm --pull never --network none --label "$LABEL" "${NR[@]}" --tmpfs "$HOME_TMPFS" "$IMG:main" serve
expect_rc 0
expect_out "k exit 0 None
k stdout ioprio_set: EPERM
k stdout prlimit read: ok
k stdout prlimit: EPERM
k stdout sched_setaffinity: EPERM
k stdout setpriority: EPERM
"
end; fi

# A command's own process group, and its children, it still signals.
if begin n-kill-own-children-allowed; then
prun "${NR[@]}" --tmpfs "$HOME_TMPFS" "$SEALED" 'sleep 100 & kill -TERM $!; wait $!; echo "status $?"'
expect_rc 0
expect_out $'status 143\n'
end; fi

# long_request MARK: the exec request of "long": it starts a sleep (which holds
# the pipe it waits on), says "long started" once that is a sleep, and runs
# until the other command has made /tmp/MARK (polled with bash's read, no
# process of its own meanwhile): it runs while the other does what it tries,
# however slow the machine.
long_request() {
	python3 -c 'import json,sys; print(json.dumps({"op":"exec","id":"long","command":sys.argv[1]}))' \
		'exec 9< <(exec sleep 1000); until read -r c < /proc/$!/comm && [ "$c" = sleep ]; do read -t 0.05 -u 9 _; done; echo long started; until [ -e /tmp/'"$1"' ]; do read -t 0.1 -u 9 _; done; echo long done'
}

# serve: one command tries to end the turn, and to cancel the other through
# its keeper (a fork of turninit, named so, of the same uid); the other runs
# on to its end. The driver keeps stdin open until both have exited.
if begin n-serve-command-cannot-end-turn; then
EVIL='kill -TERM 1; for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" != 1 ] && [ "$(cat $d/comm 2>/dev/null)" = turninit ] && { kill -TERM $p 2>/dev/null && kill -USR1 $p 2>/dev/null && echo "signalled a keeper" || echo "a keeper refused"; }; done; echo evil done; : > /tmp/evil-done'
serve_session "$(long_request evil-done)" \
	'long started' "$(python3 -c 'import json,sys; print(json.dumps({"op":"exec","id":"evil","command":sys.argv[1]}))' "$EVIL")" \
	-- podman run -i --rm --pull never --network none --label "$LABEL" "${NR[@]}" --tmpfs "$HOME_TMPFS" "$IMG:main" serve
expect_rc 0
# Where Landlock scopes signals (ABI 6) the keepers refuse them; below it
# they are signalled and ignore what does not come from turninit.
if [[ ${LL_ABI:-0} -ge 6 ]]; then keeper="a keeper refused"; else keeper="signalled a keeper"; fi
expect_out "evil exit 0 None
evil stderr bash: line 1: kill: (1) - Operation not permitted
evil stdout $keeper
evil stdout $keeper
evil stdout evil done
long exit 0 None
long stdout long done
long stdout long started
"
end; fi

# Landlock's signal scope (ABI 6): a command cannot signal another command's
# processes either, though they share its uid.
if kernel_test n-serve-sibling-signal-scoped landlock 6; then
	SIBLING='for d in /proc/[0-9]*; do [ "$(cat $d/comm 2>/dev/null)" = sleep ] && sig kill ${d#/proc/} 15; done; echo sibling done; : > /tmp/sib-done'
	serve_session "$(long_request sib-done)" \
		'long started' "$(python3 -c 'import json,sys; print(json.dumps({"op":"exec","id":"sib","command":sys.argv[1]}))' "$SIBLING")" \
		-- podman run -i --rm --pull never --network none --label "$LABEL" "${NR[@]}" --tmpfs "$HOME_TMPFS" "$IMG:main" serve
	expect_rc 0
	expect_out "long exit 0 None
long stdout long done
long stdout long started
sib exit 0 None
sib stdout kill: EPERM
sib stdout sibling done
"
	end
fi

# --- HOME ---------------------------------------------------------------------------------
# A kubelet's memory emptyDir is root's, mode 1777: mounted at HOME's parent,
# turninit makes HOME in it, its own, 0700.
if begin n-home-made-in-emptydir-parent; then
prun "${NR[@]}" --tmpfs /home:rw,mode=1777,notmpcopyup "$SEALED" 'stat -c "%a %u %g" "$HOME"; ls -a /home'
expect_rc 0
expect_out $'700 1000 1000\n.\n..\nagent\n'
end; fi
if begin n-home-root-tmpfs-refused; then
prun "${NR[@]}" --tmpfs /home/agent:rw,mode=1777 "$SEALED" 'echo COMMAND-RAN'
expect_refusal "HOME /home/agent is a tmpfs of 0:0 and turninit runs unprivileged as 1000:1000 (non-root mode), so it cannot take it"
end; fi
if begin n-home-missing-parent-not-tmpfs-refused; then
prun "${NR[@]}" "$SEALED" 'echo COMMAND-RAN'
expect_refusal "HOME /home/agent is not a private tmpfs mount"
end; fi

# --- what turninit keeps for itself -------------------------------------------------------
# The audit log in a directory of turninit's own uid: in non-root mode Landlock
# is what keeps commands off it. A command cannot write it.
if begin n-audit-log-kept-from-commands; then
serve_session '{"op":"exec","id":"a","command":"echo x >> /var/log/turninit/audit.jsonl && echo WROTE; rm -f /var/log/turninit/audit.jsonl && echo REMOVED; mv /var/log/turninit/audit.jsonl /tmp/ && echo MOVED; true"}' \
	-- podman run -i --rm --pull never --network none --label "$LABEL" "${NR[@]}" --tmpfs "$HOME_TMPFS" \
	--tmpfs /var/log/turninit:rw,mode=0700,U "$SEALED" serve --audit-log /var/log/turninit/audit.jsonl
expect_rc 0
expect_out "a exit 0 None
a stderr bash: line 1: /var/log/turninit/audit.jsonl: Permission denied
a stderr mv: can't remove '/var/log/turninit/audit.jsonl': Permission denied
a stderr rm: can't remove '/var/log/turninit/audit.jsonl': Permission denied
"
end; fi
# Without Landlock (landlock.optional where the kernel has none) nothing would
# keep a command of the same uid off the log: refused. This kernel has
# Landlock, so the refusal is seen where the runtime's seccomp profile hides
# it: podman's profile with the landlock syscalls answering ENOSYS.
if begin n-audit-log-without-landlock-refused; then
no_landlock_profile "$WORK/no-landlock.json" || why "writing the seccomp profile"
run_cmd timeout 60 podman run --rm --pull never --network none --label "$LABEL" "${NR[@]}" \
	--security-opt seccomp="$WORK/no-landlock.json" --tmpfs "$HOME_TMPFS" \
	--tmpfs /var/log/turninit:rw,mode=0700,U "$IMG:main-optional" serve --audit-log /var/log/turninit/audit.jsonl
expect_refusal "audit log /var/log/turninit/audit.jsonl: turninit runs as the commands' uid 1000 (non-root mode), and without Landlock nothing keeps a command from changing it"
end; fi
# The listen socket's directory is turninit's own: the same rule.
if begin n-listen-without-landlock-refused; then
run_cmd timeout 60 podman run --rm --pull never --network none --label "$LABEL" "${NR[@]}" \
	--security-opt seccomp="$WORK/no-landlock.json" --tmpfs "$HOME_TMPFS" \
	--tmpfs /run/turninit:rw,mode=0755,U "$IMG:main-optional" listen --socket /run/turninit/turninit.sock
expect_refusal "listen: socket /run/turninit/turninit.sock: turninit runs as the commands' uid 1000 (non-root mode), and without Landlock nothing keeps a command from changing it"
end; fi
# A FIFO handed in as fd:N (a path names only a regular file) that has a path
# here is the commands' uid's too, and Landlock bounds writes only: a command
# could open it for reading and take the log's lines.
if begin n-audit-fifo-refused; then
run_cmd timeout 60 podman run --rm --pull never --network none --label "$LABEL" "${NR[@]}" \
	--tmpfs "$HOME_TMPFS" --tmpfs /var/log/turninit:rw,mode=0700,U --entrypoint /bin/sh "$SEALED" -c \
	'/bin/busybox mkfifo -m 0600 /var/log/turninit/audit && { /bin/busybox cat /var/log/turninit/audit > /dev/null & } && exec 3> /var/log/turninit/audit && exec /sbin/turninit serve --audit-log fd:3'
expect_refusal "audit log fd:3: a FIFO, and turninit runs as the commands' uid 1000 (non-root mode): a command could open it and take lines from its reader"
end; fi

# The change record in non-root mode: turninit holds no capability to read
# what the commands made unreadable. A directory left readable but not
# searchable (mode 0444; "." for the workdir itself) lists its names, but no
# entry can be stat'd: the record is not complete and names it, and
# turn_start's protections say a command can do this.
if begin n-audit-changes-unsearchable; then
for c in 'echo evil >> docs/keep.txt && echo new > docs/new.txt && chmod 0444 docs:docs' \
	'echo evil >> keep.txt && echo new > new.txt && chmod 0444 .:.'; do
	rm -rf "$WORK/ch" && mkdir -p "$WORK/ch/tree/docs" "$WORK/ch/log" || why "mkdir"
	printf 'keep\n' | tee "$WORK/ch/tree/keep.txt" > "$WORK/ch/tree/docs/keep.txt"
	chown -R 1000:1000 "$WORK/ch/tree" "$WORK/ch/log" && chmod 0700 "$WORK/ch/log"
	req=$(python3 -c 'import json, sys; print(json.dumps({"op": "exec", "id": "a", "command": sys.argv[1]}))' "${c%:*}")
	serve_session "$req" -- podman run -i --rm --pull never --network none --label "$LABEL" "${NR[@]}" \
		--tmpfs "$HOME_TMPFS" -v "$WORK/ch/tree:/work:O" -v "$WORK/ch/tree:/audit/base:ro" \
		-v "$WORK/ch/log:/var/log/turninit" "$SEALED" \
		serve --audit-log /var/log/turninit/audit.jsonl --audit-changes /audit/base
	expect_rc 0
	expect_out $'a exit 0 None\n'
	got=$(python3 "$ROOT/tests/audit/changes_end.py" "$WORK/ch/log/audit.jsonl" 2>&1)
	eq "the record of ${c%:*}" "$got" "end False True [{'path': '${c##*:}'}] more 0
protections: True"
	run_cmd "$BIN" audit-verify "$WORK/ch/log/audit.jsonl"
	expect_rc 0
	expect_contains "audit-verify's path" "$OUT" "could not be read: \"${c##*:}\""
done
end; fi

# --- the restricted Kubernetes examples under podman kube play ------------------------------
if begin k-restricted-job; then
job_pod "$ROOT/oci/k8s/job-restricted.yaml" "$IMG:job" "turninit-nrtest-$$-job"
kube_job "turninit-nrtest-$$-job" $'hello from uid 1000 gid 1000 in /work, HOME /home/agent\n' "$NR_LOG"
end; fi
# OpenShift: the uid assigned from the project's range, group 0; the manifest
# has user.uid_range and gid_range. runAsUser as OpenShift's admission sets it.
if begin k-restricted-job-openshift-uid; then
job_pod "$ROOT/oci/k8s/job-restricted.yaml" "$IMG:job-openshift" "turninit-nrtest-$$-ocp" -e 's|runAsUser: 1000$|runAsUser: 1000680123|; s|runAsGroup: 1000$|runAsGroup: 0|'
grep -q 'runAsUser: 1000680123' "$WORK/turninit-nrtest-$$-ocp.yaml" || why "the YAML has no runAsUser to change"
kube_job "turninit-nrtest-$$-ocp" $'hello from uid 1000680123 gid 0 in /work, HOME /home/agent\n' \
	$'turninit: non-root mode: running as 1000680123:0 with no capability; commands share these ids (no securebits, bounding set, group or uid change: docs/security.md)\n'
end; fi

if begin k-restricted-sidecar; then
pod=turninit-nrtest-$$-side
sed -e "s|localhost/agent-turn:1|$IMG:sidecar|; s|localhost/agent-base:1|$IMG:base|" \
	-e "s|name: agent-turn\$|name: $pod|; s|turninit-home|$pod-home|; s|turninit-socket|$pod-sock|" \
	"$ROOT/oci/k8s/sidecar-restricted.yaml" > "$WORK/sidecar.yaml"
# as the YAML's comment says
kube_volume "$pod-home" --opt type=tmpfs --opt device=tmpfs --opt o=mode=1777
kube_volume "$pod-sock" --opt o=uid=1000,gid=1000
run_cmd timeout 120 podman kube play --network none "$WORK/sidecar.yaml"
if [[ $RC -ne 0 ]]; then
	why "podman kube play failed"
else
	run_cmd timeout 60 podman wait "$pod-agent"
	eq "agent status" "${OUT%$'\n'}" 0
	run_cmd timeout 60 podman logs "$pod-agent"
	expect_out $'hello from uid 1000 in /work, HOME /home/agent\nturninit cannot be signalled\nstatus 0\n[a b]\n[$HOME]\nstatus 0\nto stderr\nstatus 3\n'
	expect_err ""
	side_logs=$(timeout 60 podman logs "$pod-turninit" 2>&1)
	expect_contains "the sidecar's log" "$side_logs" "turninit: non-root mode: running as 1000:1000"
	run_cmd timeout 60 podman pod stop -t 10 "$pod"
	eq "sidecar exit code" "$(timeout 60 podman inspect --format '{{.State.ExitCode}}' "$pod-turninit" 2>&1)" 143
fi
kube_down "$WORK/sidecar.yaml"
end; fi

results
