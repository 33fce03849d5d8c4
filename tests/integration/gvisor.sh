#!/bin/bash
# gvisor.sh - turninit under gVisor (`make gvisor`; issue 16, Deliver 3): podman
# with Debian's runsc as the OCI runtime, `--runtime-flag network=none` (this
# runsc misjudges the network namespace here and fails to start otherwise).
# Root, `make setup` (which installs runsc), `make helpers` (the escape probe).
#
# What it holds (docs/security.md, "gVisor"): a one-shot turn has the exact
# environment and exit codes, every capability set empty, no_new_privs,
# seccomp mode 2, a denied syscall gets EPERM, an x32 syscall kills; the three
# weakened layers (the bad-arch action kills the thread, no securebits, no
# Landlock) are said on stderr at start and by verify, which names exactly
# those and listen; serve answers two requests over `podman run -i`; and each
# refusal (listen, call and mcp --socket, which trust SO_PEERCRED; Landlock
# required by the manifest; a start whose commands would share turninit's
# uid, non-root mode among them) is exit 125, one line, no command run; the
# missing subreaper of serve's keepers is said at start and by verify. Under
# podman's default runtime verify names no weakened layer. The network key:
# "allow": [] keeps runsc's loopback (verify says so); listed hosts are
# refused, as the container has no network; seccomp-notify isolation has no
# user notification here (verify names it).
#
# Every podman call has a hard timeout (60 s); containers are labelled and
# removed at exit. ITEST_ONLY=REGEX, ITEST_BINARY=PATH as in every suite.
# shellcheck disable=SC2016 # '$X' is literal: it runs in the container
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
suite_open gvisor gvtest "rootful podman with runsc" podman buildah minisign python3 timeout runsc
RUNSC=$(command -v runsc)
IMG=localhost/turninit-gvtest
trap cleanup_containers EXIT
T0=$(now_ms)

# --- keys, manifests, image ----------------------------------------------------------
trusted_keys
# main: what runs under gVisor (landlock.optional: there is no Landlock there);
# strict: the same with Landlock required, the default.
manifest main "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\"]},\"landlock\":{\"optional\":true}}"
manifest strict "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\"]}}"
mapfile -t ENV_STRICT < <(manifest_env "$M/strict.json")
overlay_image "$IMG" gvisor probe
prune_images
echo "# images built in $(( $(now_ms) - T0 )) ms"

# gvrun ARGS...: podman run under runsc with the suite's flags, and ARGS.
GV=(timeout 60 podman --runtime "$RUNSC" run --rm --pull never --runtime-flag network=none
	--network none --label "$LABEL")
gvrun() {
	run_cmd "${GV[@]}" "$@"
}

# Is runsc working here at all? One clear line instead of twenty failures.
run_cmd "${GV[@]}" --entrypoint /bin/busybox "$SEALED" uname -r
[[ $RC -eq 0 && $OUT == $'4.4.0\n' ]] || abort "runsc does not run a container here (status $RC): ${ERR:-$OUT}"

# What a one-shot command writes to stderr before its own output under runsc
# with main.json: one line per weakened layer (init/main.c).
WEAK_LOG="turninit: landlock: not available; running without it, as the manifest allows (landlock.optional)
turninit: seccomp: a syscall of another architecture kills the calling thread, not the whole process (SECCOMP_RET_KILL_THREAD): the platform refuses SECCOMP_RET_KILL_PROCESS (SECCOMP_GET_ACTION_AVAIL: EINVAL)
turninit: securebits: not available on this platform (gVisor: PR_SET_SECUREBITS is EINVAL); commands run without them, with every capability set empty and no_new_privs
"
# The exact environment of `env` under main.json with TZ given (as in run.sh).
ENV_MAIN=$'HOME=/home/agent\nLANG=C.UTF-8\nPATH=/usr/local/bin:/usr/bin:/bin\nPWD=/work\nSHLVL=0\nTERM=dumb\nTZ=UTC\n_=/bin/env\n'
ATTACK=(-e GH_TOKEN=x -e BASH_ENV=/etc/profile -e 'BASH_FUNC_ls%%=() { echo pwned; }'
	-e SHELLOPTS=xtrace -e LD_PRELOAD=/x.so)

# --- one-shot ----------------------------------------------------------------------
if begin gv-oneshot-exact-env; then
	gvrun --tmpfs "$HOME_TMPFS" -e TZ=UTC "${ATTACK[@]}" "$SEALED" env
	expect_rc 0
	eq "environment (sorted)" "$(printf '%s' "$OUT" | LC_ALL=C sort)"$'\n' "$ENV_MAIN"
	expect_err "$WEAK_LOG"
	end
fi

for c in "7:exit 7" "143:kill -TERM \$\$" "127:no-such-command-here" "0:true"; do
	name=gv-oneshot-exit-${c%%:*}
	begin "$name" || continue
	gvrun --tmpfs "$HOME_TMPFS" "$SEALED" "${c#*:}"
	expect_rc "${c%%:*}"
	expect_out ""
	expect_contains stderr "$ERR" "$WEAK_LOG"
	end
done

# /proc/self/status under gVisor has no CapAmb and no NoNewPrivs line:
# prctl(PR_GET_NO_NEW_PRIVS) says the latter (gVisor answers 1 always), and
# PR_GET_SECUREBITS fails (-1: none).
if begin gv-status-caps-nnp-seccomp; then
	gvrun --tmpfs "$HOME_TMPFS" "$SEALED" 'exec /bin/probe status'
	expect_rc 0
	expect_err "$WEAK_LOG"
	got=$(printf '%s\n' "$OUT" | grep -E '^(uid|gid|groups|CapInh|CapPrm|CapEff|CapBnd|Seccomp|no_new_privs|securebits) ')
	eq "status" "$got" "uid 1000 1000 1000
gid 1000 1000 1000
groups none
CapInh 0000000000000000
CapPrm 0000000000000000
CapEff 0000000000000000
CapBnd 0000000000000000
Seccomp 2
securebits 0xffffffff
no_new_privs 1"
	end
fi

# The filter's answer to syscalls it denies, and the controls allowed.
if begin gv-filter-denies-eperm; then
	gvrun --tmpfs "$HOME_TMPFS" "$SEALED" 'exec /bin/probe ptrace mount unshare_newuser setns keyctl ctl_getppid ctl_fork'
	expect_rc 0
	expect_out "ptrace blocked EPERM
mount blocked EPERM
unshare_newuser blocked EPERM
setns blocked EPERM
keyctl blocked EPERM
ctl_getppid allowed success
ctl_fork allowed success
"
	end
fi

# The same probes without turninit, as uid 1000 under runsc: gVisor itself
# answers them otherwise, so the EPERMs above are the filter's.
if begin gv-filter-control-without-turninit; then
	gvrun --user 1000:1000 --entrypoint /bin/probe "$SEALED" ptrace mount keyctl
	expect_rc 0
	[[ $OUT == *"ptrace allowed "* ]] || why "ptrace is not allowed without turninit"
	[[ $OUT == *"mount allowed "* || $OUT == *"mount blocked EPERM"* ]] || why "mount: unexpected"
	[[ $OUT != *"keyctl blocked EPERM"* ]] || why "keyctl is EPERM without turninit too"
	end
fi

# An x32 syscall: the bad-arch action kills (the thread, which is the probe's
# only one): 128 + SIGSYS.
if kernel_test gv-x32-killed x86_64; then
	gvrun --tmpfs "$HOME_TMPFS" "$SEALED" 'exec /bin/probe x32_getpid'
	expect_rc 159
	expect_out ""
	end
fi

# --- verify: exactly the weakened layers ----------------------------------------------
verify_facts() { # the fields of verify's JSON on stdin the tests compare, one line each
	python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["platform"]
print("gvisor", p["gvisor"])
print("weakened", " ".join(p["weakened"]) or "-")
print("bad_arch_action", d["seccomp"]["bad_arch_action"])
print("other_architectures", d["seccomp"]["other_architectures"])
print("securebits", d["securebits"])
print("landlock", d["landlock"]["abi"], d["landlock"]["status"])
print("listen", p["listen"].split(" (")[0])' 2>&1
}
if begin gv-verify-states-weakened-layers; then
	gvrun --tmpfs "$HOME_TMPFS" "$SEALED" verify
	expect_rc 0
	expect_err ""
	eq "verify" "$(printf '%s' "$OUT" | verify_facts)" "gvisor True
weakened seccomp securebits landlock subreaper listen
bad_arch_action SECCOMP_RET_KILL_THREAD
other_architectures the calling thread killed, not the process (the platform refuses SECCOMP_RET_KILL_PROCESS)
securebits not available on this platform (gVisor): commands run without them
landlock 0 unavailable: not enforced (landlock.optional)
listen listen: SO_PEERCRED here does not name the peer"
	end
fi
if begin gv-verify-strict-says-landlock-refuses; then
	gvrun --tmpfs "$HOME_TMPFS" "${ENV_STRICT[@]}" "$SEALED" verify
	# the policy is printed, and the start's refusal is verify's too
	expect_rc 125
	expect_contains stderr "$ERR" "turninit: landlock: not available (landlock_create_ruleset: "
	eq "verify" "$(printf '%s' "$OUT" | verify_facts | sed -n 2p\;6p)" "weakened seccomp securebits subreaper listen
landlock 0 unavailable: a run refuses (landlock.optional is false)"
	end
fi
# The control: podman's default runtime (crun, Linux) weakens nothing.
if begin gv-verify-linux-weakens-nothing; then
	prun --tmpfs "$HOME_TMPFS" "$SEALED" verify
	expect_rc 0
	eq "verify" "$(printf '%s' "$OUT" | verify_facts | sed '6s/^landlock [0-9]* /landlock N /')" "gvisor False
weakened -
bad_arch_action SECCOMP_RET_KILL_PROCESS
other_architectures killed
securebits locked (NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off, each LOCKED)
landlock N enforced
listen available"
	end
fi

# --- serve over podman run -i ----------------------------------------------------------
if begin gv-serve-two-requests; then
	# the second request once the first has answered; stdin open until both exit
	serve_session '{"op":"exec","id":"a","command":"echo A; id -u"}' A \
		'{"op":"exec","id":"b","command":"echo B >&2; exit 3"}' -- "${GV[@]}" -i --tmpfs "$HOME_TMPFS" "$SEALED" serve
	expect_rc 0
	# serve only: its keepers cannot be subreapers here (PR_SET_CHILD_SUBREAPER
	# is EINVAL under this runsc), which verify names too; the ready line has
	# no Landlock ABI to name here
	expect_err "${WEAK_LOG}turninit: serve: ready, reading requests on stdin
turninit: subreaper: not available on this platform (PR_SET_CHILD_SUBREAPER fails): what a command leaves running is not ended with it, and lives until the turn ends
"
	expect_out "a exit 0 None
a stdout 1000
a stdout A
b exit 3 None
b stderr B
"
	end
fi

# --- refusals: exit 125, one line, nothing ran --------------------------------------
# Commands that would share turninit's uid: gVisor leaves /proc/1/fd open to
# that uid, so a command could write events into turninit's stdout (issue 27).
# Non-root mode, and a start as the manifest's uid with the four capabilities.
GV_SAME_UID="gVisor: the commands would share turninit's uid 1000, and gVisor leaves turninit's /proc/1/fd open to that uid (PR_SET_DUMPABLE does not close it there), so a command could write into turninit's stdout: start turninit as root in the container under gVisor"
if begin gv-nonroot-refused; then
	gvrun -i --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges --tmpfs "$HOME_TMPFS" "$SEALED" serve
	expect_refusal "$GV_SAME_UID"
	gvrun --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges --tmpfs "$HOME_TMPFS" "$SEALED" 'echo RAN'
	expect_refusal "$GV_SAME_UID"
	end
fi
if begin gv-same-uid-refused; then
	gvrun --user 1000:1000 --cap-drop ALL --cap-add SETPCAP,SETUID,SETGID,KILL --tmpfs "$HOME_TMPFS" "$SEALED" 'echo RAN'
	expect_refusal "$GV_SAME_UID"
	end
fi
if begin gv-verify-says-nonroot-refused; then
	gvrun --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges "$SEALED" verify
	expect_rc 125
	expect_err "turninit: $GV_SAME_UID"$'\n'
	eq "verify start" "$(printf '%s' "$OUT" | python3 -c 'import json,sys; s=json.load(sys.stdin)["start"]; print(s["mode"], s["refusal"])' 2>&1)" "refused $GV_SAME_UID"
	end
fi
if begin gv-listen-refused; then
	gvrun --tmpfs "$HOME_TMPFS" "$SEALED" listen --socket /run/turninit.sock
	expect_refusal "listen: SO_PEERCRED here does not name the peer"
	expect_contains stderr "$ERR" "gVisor: this runsc answers SO_PEERCRED with the caller's own credentials"
	end
fi
if begin gv-call-refused; then
	gvrun --entrypoint /sbin/turninit "$SEALED" call --socket /run/turninit.sock -- 'echo COMMAND-RAN'
	expect_refusal "call: SO_PEERCRED here does not name the peer"
	expect_contains stderr "$ERR" "gVisor"
	end
fi
if begin gv-mcp-bridge-refused; then
	gvrun --entrypoint /sbin/turninit "$SEALED" mcp --socket /run/turninit.sock
	expect_refusal "mcp: SO_PEERCRED here does not name the peer"
	end
fi
if begin gv-landlock-required-refused; then
	gvrun --tmpfs "$HOME_TMPFS" "${ENV_STRICT[@]}" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "landlock: not available (landlock_create_ruleset: ENOSYS: gVisor implements no Landlock"
	expect_contains stderr "$ERR" "landlock.optional is false"
	end
fi
if begin gv-home-refusal-one-line; then
	gvrun "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "--tmpfs"
	end
fi

# The network key under gVisor: runsc's network=none leaves the sandbox loopback
# alone, which turninit keeps (no namespace of its own needed); a manifest that
# lists hosts is refused there, as everywhere the container has no network.
# (The runtime's own network cannot be had with this runsc: see the top.)
manifest netlo "{$HEAD,\"env\":{$SET},\"landlock\":{\"optional\":true},\"network\":{\"allow\":[]}}"
manifest netallow "{$HEAD,\"env\":{$SET},\"landlock\":{\"optional\":true},\"network\":{\"allow\":[{\"host\":\"srv.test.internal\",\"ports\":[8080]}]}}"
mapfile -t ENV_NETLO < <(manifest_env "$M/netlo.json")
mapfile -t ENV_NETALLOW < <(manifest_env "$M/netallow.json")
if begin gv-network-loopback-only; then
	gvrun --tmpfs "$HOME_TMPFS" "${ENV_NETLO[@]}" "$SEALED" \
		'awk -F: "NR > 2 { gsub(/ /, \"\", \$1); print \$1 }" /proc/net/dev | tr "\n" " "; echo
busybox httpd -p 127.0.0.1:9000 -h /etc/turninit && (exec 3<>/dev/tcp/127.0.0.1/9000) && echo lo-reached || echo lo-refused'
	expect_rc 0
	expect_out $'lo \nlo-reached\n'
	end
fi
if begin gv-network-verify; then
	gvrun --tmpfs "$HOME_TMPFS" "${ENV_NETLO[@]}" "$SEALED" verify
	expect_rc 0
	expect_contains stdout "$OUT" '"network": "loopback only: the container'"'"'s network namespace has no interface but lo'
	end
fi
if begin gv-network-allow-refused; then
	gvrun --tmpfs "$HOME_TMPFS" "${ENV_NETALLOW[@]}" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "network.allow: 1 host listed, and the container has no network but loopback (--network none)"
	end
fi

# seccomp-notify isolation (issue 48) under gVisor: non-root mode with a
# network.allow entry is refused at start, one line, nothing run (the
# commands would share turninit's uid, refused first); verify, which still
# plans the network, names what notify_probe finds missing here: this runsc
# has no seccomp user notification (SECCOMP_FILTER_FLAG_NEW_LISTENER is
# EINVAL). A loopback-only manifest that asks for seccomp-notify, so that
# runsc's network=none does not refuse it first.
manifest netnotify "{$HEAD,\"env\":{$SET},\"landlock\":{\"optional\":true},\"network\":{\"allow\":[],\"isolation\":\"seccomp-notify\"}}"
mapfile -t ENV_NETNOTIFY < <(manifest_env "$M/netnotify.json")
if begin gv-notify-network; then
	NONROOT=(--user 1000:1000 --cap-drop ALL --security-opt no-new-privileges --tmpfs "$HOME_TMPFS")
	gvrun "${NONROOT[@]}" "${ENV_NETALLOW[@]}" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "$GV_SAME_UID"
	gvrun "${NONROOT[@]}" "${ENV_NETNOTIFY[@]}" "$SEALED" 'echo COMMAND-RAN'
	expect_refusal "$GV_SAME_UID"
	gvrun "${NONROOT[@]}" "${ENV_NETNOTIFY[@]}" "$SEALED" verify
	expect_rc 125
	eq "verify's network" "$(printf '%s' "$OUT" | python3 -c 'import json, sys; print(json.load(sys.stdin)["network"])' 2>&1)" \
		"refused at start: network: seccomp-notify isolation needs seccomp user notification (SECCOMP_FILTER_FLAG_NEW_LISTENER, Linux 5.0), which fails here: Invalid argument"
	end
fi

no_container_left
echo "# suite ran in $(( $(now_ms) - T0 )) ms"
results
