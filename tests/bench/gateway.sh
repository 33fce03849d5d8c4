# gateway.sh - section 10 of `make bench`, sourced by tests/bench/run.sh (its
# helpers: say, die, record, scaled, interleave, loadmark; its IMG, KEY, PUB,
# BIN, LABEL, HEAD, ENV, LIM, HOME_TMPFS): the credential gateway (docs/
# credentials.md) against the same command connecting with TLS itself to the
# same server. Run after section 9, or alone with BENCH_ONLY=gateway.
#
# On an internal network of the bench's own, the network suite's HTTPS server
# (tests/network/testsrv.py, started by tests/network/start-testsrv.sh, with a
# test CA made now by fixtures.py) in the Debian base image of
# tests/workload/build-image.sh, whose turn image (curl) is the one the network
# suite's credential tests run. It serves two files under /auth/, which it
# answers only with the bearer token the bench made: 1 KiB and 64 MiB of random
# bytes. Nothing else is ever sent a packet. The variants, one container each a
# round, each running curl as the command:
#   direct          no network key: the runtime's network, curl speaking TLS
#                   to the server itself (--cacert the test CA), the token in
#                   its own Authorization;
#   gateway         the manifest's credential entry for gw.test.internal (its
#                   "ca" the test CA), the token given by podman --secret, curl
#                   sending plain HTTP to http://gw.test.internal:8443/
#                   through turninit's proxy;
#   gateway-bundle  the same for bundle.test.internal, whose entry has no
#                   "ca": the image's bundle (Debian's, with the test CA added,
#                   bound read-only), as most manifests will have it.
# Latency: NGW requests of the small file one after another, each its own
# connection on both sides (the server closes each; curl --no-sessionid, so
# that a direct request resumes no TLS session, as the gateway, which opens a
# new TLS connection a request, never does), curl's time_total of each, their
# median a round. Throughput: one download of the large file, MiB/s.
# shellcheck shell=bash

GW_NET=turninit-bench-gw
GW_SRV=turninit-bench-gwsrv
GW_SECRET=turninit-bench-gwtoken
GW_CAPS=(--cap-add SYS_ADMIN --cap-add NET_ADMIN)

gw_down() {
	timeout 60 podman rm -f -t 0 "$GW_SRV" >/dev/null 2>&1
	timeout 60 podman secret rm "$GW_SECRET" >/dev/null 2>&1
	timeout 60 podman network rm -f "$GW_NET" >/dev/null 2>&1
}

# gw_setup: the fixtures, the images, the network, the server and the secret;
# sets GW_FX, GW_IP, GW_TOKEN, GW_RUN and GW_BIG.
gw_setup() {
	local c dbase=localhost/turninit-workload-base:latest
	for c in openssl git buildah; do
		command -v "$c" >/dev/null || die "$c not found (make setup)"
	done
	gw_down
	GW_FX=$WORK/gw-fx
	python3 "$ROOT/tests/network/fixtures.py" "$GW_FX" gw.test.internal bundle.test.internal \
		>"$WORK/gw-fx.log" 2>&1 || { cat "$WORK/gw-fx.log"; die "tests/network/fixtures.py"; }
	GW_BIG=$((64 * 1048576 / SCALE))
	mkdir -p "$GW_FX/www/auth/bench"
	head -c 1024 /dev/urandom >"$GW_FX/www/auth/bench/small" || die "the 1 KiB file"
	head -c "$GW_BIG" /dev/urandom >"$GW_FX/www/auth/bench/big" || die "the large file"
	chmod -R a+rX "$GW_FX/www"
	sh "$ROOT/tests/workload/build-image.sh" --tag "$IMG:debian" --trusted-key "$PUB" "$BIN" \
		>"$WORK/gw-image.log" 2>&1 || { cat "$WORK/gw-image.log"; die "tests/workload/build-image.sh"; }
	# the image's own bundle, the test CA added: what an entry without "ca" is checked against
	timeout 60 "$PODMAN" run --rm --pull never --network none --entrypoint cat "$dbase" \
		/etc/ssl/certs/ca-certificates.crt >"$GW_FX/bundle.pem" 2>>"$WORK/stderr.log" \
		|| die "the image's CA bundle"
	cat "$GW_FX/ca.pem" >>"$GW_FX/bundle.pem"
	record gw all bundle_certs "$(grep -c -- '-----BEGIN CERTIFICATE-----' "$GW_FX/bundle.pem")"
	chmod 0644 "$GW_FX/bundle.pem" "$GW_FX/ca.pem"
	GW_TOKEN=$(openssl rand -hex 20)
	printf '%s' "$GW_TOKEN" >"$WORK/gw-token"
	timeout 60 podman secret create "$GW_SECRET" "$WORK/gw-token" >/dev/null 2>>"$WORK/stderr.log" \
		|| die "podman secret create $GW_SECRET"
	timeout 120 podman network create --internal "$GW_NET" >/dev/null 2>>"$WORK/stderr.log" \
		|| die "network create $GW_NET"
	GW_IP=$(sh "$ROOT/tests/network/start-testsrv.sh" "$PODMAN" "$GW_SRV" "$GW_NET" "$GW_FX" 8443 \
		"$dbase" --label "$LABEL" -e "TESTSRV_TOKEN=$GW_TOKEN" 2>"$WORK/gw-srv.log") \
		|| { cat "$WORK/gw-srv.log"; die "the HTTPS server (tests/network/start-testsrv.sh)"; }
	local bearer='"name":"benchtoken","as":"bearer"'
	printf '{%s,%s,%s}\n' "$HEAD" "$ENV" "$LIM" >"$WORK/m/gw-direct.json"
	printf '{%s,%s,%s,"network":{"allow":[%s,%s,%s]}}\n' "$HEAD" "$ENV" "$LIM" \
		"{\"host\":\"gw.test.internal\",\"ports\":[8443],\"credential\":{$bearer,\"ca\":\"/ca/ca.pem\"}}" \
		"{\"host\":\"bundle.test.internal\",\"ports\":[8443],\"credential\":{$bearer}}" \
		"{\"host\":\"$GW_IP\",\"ports\":[8443]}" >"$WORK/m/gw.json"
	for m in gw-direct gw; do
		sh "$ROOT/oci/seal.sh" --image "$IMG:debian" --manifest "$WORK/m/$m.json" --key "$KEY" \
			--tag "$IMG:$m" >"$WORK/seal-$m.log" 2>&1 || { cat "$WORK/seal-$m.log"; die "oci/seal.sh $m"; }
	done
	GW_RUN=("$PODMAN" run --rm --pull never --network "$GW_NET" --label "$LABEL" --tmpfs "$HOME_TMPFS"
		--add-host "gw.test.internal:$GW_IP" --add-host "bundle.test.internal:$GW_IP"
		-v "$GW_FX/ca.pem:/ca/ca.pem:ro")
}

# gw_cmd URL CURL-FLAGS: the command of a round: NGW requests of the small
# file, then the large one; one line each, "req STATUS SECONDS" and "big
# STATUS BYTES SECONDS".
gw_cmd() {
	local c="curl -sS --fail-early -o /dev/null $2"
	printf "%s -w 'req %%{http_code} %%{time_total}\\\\n' '%s/auth/bench/small?[1-%d]' && " "$c" "$1" "$NGW"
	printf "%s -w 'big %%{http_code} %%{size_download} %%{time_total}\\\\n' '%s/auth/bench/big'" "$c" "$1"
}

gw_run() {
	local v=$1 out argv
	case $v in
	direct) argv=("${GW_RUN[@]}" "$IMG:gw-direct" -- "$(gw_cmd https://gw.test.internal:8443 \
		"--no-sessionid --cacert /ca/ca.pem -H 'Authorization: Bearer $GW_TOKEN'")") ;;
	gateway) argv=("${GW_RUN[@]}" "${GW_CAPS[@]}" --secret "$GW_SECRET,target=benchtoken" \
		"$IMG:gw" -- "$(gw_cmd http://gw.test.internal:8443 "")") ;;
	gateway-bundle) argv=("${GW_RUN[@]}" "${GW_CAPS[@]}" --secret "$GW_SECRET,target=benchtoken" \
		-v "$GW_FX/bundle.pem:/etc/ssl/certs/ca-certificates.crt:ro" \
		"$IMG:gw" -- "$(gw_cmd http://bundle.test.internal:8443 "")") ;;
	esac
	out=$(timeout 300 "${argv[@]}" 2>>"$WORK/stderr.log") || { tail -5 "$WORK/stderr.log"; die "gateway/$v failed"; }
	# every request answered 200 (the server's 401 would mean no credential)
	[[ $(awk '$1 == "req" && $2 == 200' <<<"$out" | wc -l) -eq $NGW ]] \
		|| die "gateway/$v: not $NGW answers 200 to the small file: $(grep -v ' 200 ' <<<"$out" | head -3)"
	record gw-latency "$v" request_ns "$(awk '$1 == "req" { print $3 }' <<<"$out" | sort -g |
		awk '{ t[NR] = $1 } END { m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2; printf "%.0f", m * 1e9 }')"
	read -r _ code bytes secs < <(awk '$1 == "big"' <<<"$out")
	[[ ${code:-} == 200 && ${bytes:-} == "$GW_BIG" ]] \
		|| die "gateway/$v: the large file: status ${code:-none}, ${bytes:-no} bytes of $GW_BIG"
	record gw-fetch "$v" total_ns "$(awk -v s="$secs" 'BEGIN { printf "%.0f", s * 1e9 }')"
	record gw-fetch "$v" mib_s "$(awk -v b="$bytes" -v s="$secs" 'BEGIN { printf "%.1f", b / 1048576 / s }')"
}

# gateway_bench: section 10, set up, measured and taken down.
gateway_bench() {
	say "10. credential gateway: setting up $GW_NET"
	gw_setup
	NGW=$(scaled 200 20)
	local rounds
	rounds=$(scaled 7 1)
	record gw all requests "$NGW"
	record gw all bytes "$GW_BIG"
	loadmark
	say "10. credential gateway: $rounds rounds of $NGW requests and a $((GW_BIG / 1048576)) MiB download, direct and through the gateway"
	interleave "$rounds" gw_run direct gateway gateway-bundle
	gw_down
}
