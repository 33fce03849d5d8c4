# notify.sh - section 11 of `make bench`, sourced by tests/bench/run.sh (its
# helpers: say, die, record, measure, scaled, interleave, loadmark; its IMG,
# KEY, BB, LABEL, HEAD, ENV, LIM, HOME_TMPFS): a command's connections under
# the two isolations of the network (docs/manifest.md, "How it holds"), the
# same image and manifest, the same command. Run after section 10, or alone
# with BENCH_ONLY=notify.
#
# On an internal network of the bench's own, a busybox httpd of the bench's
# image (as in section 8), which the manifest lists; nothing else is ever
# sent a packet. The manifest leaves network.isolation out, so the start
# chooses:
#   namespace  root with --cap-add SYS_ADMIN --cap-add NET_ADMIN: the
#              commands in a network namespace of turninit's, loopback alone;
#   notify     non-root mode (--user 1000:1000 --cap-drop ALL --security-opt
#              no-new-privileges): seccomp user notification, each connect(2)
#              of the command made by turninit's supervisor thread.
# Each is checked with `turninit verify` before the rounds. Two workloads, a
# container each a round:
#   proxy      bench connect -p: N connections to the proxy, each until the
#              proxy's 200 answer to a CONNECT of the server (it connects
#              out); the connect(2) to the proxy's port alone is timed too;
#   listener   bench accept: N connect(2) to a port the command itself
#              listens on (127.0.0.1), each with its accept(2): under
#              seccomp-notify the supervisor looks the port up in
#              /proc/net/tcp and the holder of its socket in /proc/PID/fd.
# shellcheck shell=bash

NF_NET=turninit-bench-notify
NF_SRV=turninit-bench-nfsrv-$$
NF_NS=(--cap-add SYS_ADMIN --cap-add NET_ADMIN)
NF_NR=(--user 1000:1000 --cap-drop ALL --security-opt no-new-privileges)

nf_down() {
	timeout 60 podman rm -f -t 0 "$NF_SRV" >/dev/null 2>&1
	timeout 60 podman network rm -f "$NF_NET" >/dev/null 2>&1
}

# nf_setup: the network, the server and the sealed manifest; sets NF_IP and
# NF_RUN, and checks which isolation each mode's start takes.
nf_setup() {
	local v want flags out
	nf_down
	mkdir -p "$WORK/nf-www"
	echo ok >"$WORK/nf-www/index.html"
	timeout 120 podman network create --internal "$NF_NET" >/dev/null 2>>"$WORK/stderr.log" \
		|| die "network create $NF_NET"
	timeout 120 podman run -d --name "$NF_SRV" --label "$LABEL" --network "$NF_NET" --pull never \
		-v "$WORK/nf-www:/www:ro" --entrypoint /bin/busybox "$IMG:base" httpd -f -p 8080 -h /www \
		>/dev/null 2>>"$WORK/stderr.log" || die "the server container"
	NF_IP=$(timeout 60 podman inspect --format "{{(index .NetworkSettings.Networks \"$NF_NET\").IPAddress}}" "$NF_SRV")
	[[ $NF_IP =~ ^[0-9.]+$ ]] || die "the server's address: '$NF_IP'"
	printf '{%s,%s,%s,"network":{"allow":[{"host":"%s","ports":[8080]}]}}\n' "$HEAD" "$ENV" "$LIM" \
		"$NF_IP" >"$WORK/m/notify.json"
	sh "$ROOT/oci/seal.sh" --image "$IMG:base" --manifest "$WORK/m/notify.json" --key "$KEY" \
		--tag "$IMG:notify" >"$WORK/seal-notify.log" 2>&1 || { cat "$WORK/seal-notify.log"; die "oci/seal.sh notify"; }
	NF_RUN=("$PODMAN" run --rm --pull never --network "$NF_NET" --label "$LABEL" --tmpfs "$HOME_TMPFS")
	for v in namespace notify; do
		if [[ $v == namespace ]]; then want=namespace flags=("${NF_NS[@]}")
		else want=seccomp-notify flags=("${NF_NR[@]}"); fi
		out=$(timeout 120 "${NF_RUN[@]}" "${flags[@]}" "$IMG:notify" verify 2>>"$WORK/stderr.log") \
			|| die "notify/$v: turninit verify failed"
		grep -q "\"network_isolation\": *\"$want\"" <<<"$out" \
			|| die "notify/$v: the start does not take $want: $(grep -o '"network_isolation[^,]*' <<<"$out")"
	done
}

nf_run() {
	local flags
	case ${1%-*} in
	namespace) flags=("${NF_NS[@]}") ;;
	notify) flags=("${NF_NR[@]}") ;;
	esac
	case ${1#*-} in
	proxy) measure nf-proxy "${1%-*}" connect_ns syscall_ns -- "${NF_RUN[@]}" "${flags[@]}" \
		"$IMG:notify" -- /bench/bench connect -p "$NNF" "$NF_IP" 8080 ;;
	listener) measure nf-listener "${1%-*}" connect_ns accept_ns -- "${NF_RUN[@]}" "${flags[@]}" \
		"$IMG:notify" -- /bench/bench accept "$NNF" ;;
	esac
}

# notify_bench: section 11, set up, measured and taken down.
notify_bench() {
	say "11. seccomp-notify: setting up $NF_NET"
	nf_setup
	NNF=$(scaled 200 20)
	local rounds
	rounds=$(scaled 7 1)
	record nf all connections "$NNF"
	loadmark
	say "11. seccomp-notify: $rounds rounds of $NNF connections to the proxy and to the command's own listener, in a namespace and under seccomp-notify"
	interleave "$rounds" nf_run namespace-proxy notify-proxy namespace-listener notify-listener
	nf_down
}
