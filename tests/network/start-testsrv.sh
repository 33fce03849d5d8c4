#!/bin/sh
# start-testsrv.sh - tests/network/testsrv.py started in a container of a test
# network, for the network suite (tests/integration/network.sh) and `make
# bench` (tests/bench/run.sh): one way to start it, so both measure and test
# the same server.
#
# usage: start-testsrv.sh ENGINE NAME NETWORK FX PORT IMAGE [RUN-FLAG...]
#   ENGINE    podman or docker (a path to it)
#   NAME      the container's name (detached; the caller removes it)
#   NETWORK   the network it joins: one the caller made (--internal)
#   FX        a directory made by tests/network/fixtures.py, bound read-only
#             at /fx: it serves FX/www with FX/srv.pem and FX/srv.key
#   PORT      the TCP port it listens on
#   IMAGE     an image with python3 and git (the Debian base image of
#             tests/workload/build-image.sh)
#   RUN-FLAG  more flags of `ENGINE run`, before IMAGE (--label, -e, -v)
# Waits, up to 60 s, for the server's "listening on PORT", then prints the
# container's IPv4 address on NETWORK. Exits 1 with a line on stderr (and the
# engine's or the server's last words) on any failure.
set -u

die() { echo "start-testsrv: $*" >&2; exit 1; }
[ $# -ge 6 ] || die "usage: start-testsrv.sh ENGINE NAME NETWORK FX PORT IMAGE [RUN-FLAG...]"
engine=$1 name=$2 net=$3 fx=$4 port=$5 image=$6
shift 6
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -r "$fx/srv.pem" ] || [ ! -r "$fx/srv.key" ] || [ ! -d "$fx/www" ]; then
	die "$fx: not a directory of fixtures.py"
fi

out=$(timeout 120 "$engine" run -d --name "$name" --network "$net" --pull never \
	-v "$fx:/fx:ro" -v "$here/testsrv.py:/testsrv.py:ro" --entrypoint python3 "$@" \
	"$image" /testsrv.py /fx/www /fx/srv.pem /fx/srv.key "$port" 2>&1) || die "$engine run: $out"
# polled: the server prints its line once the socket is bound (a few hundred ms)
end=$(($(date +%s) + 60))
until timeout 10 "$engine" logs "$name" 2>/dev/null | grep -q "listening on $port"; do
	[ "$(date +%s)" -lt "$end" ] || die "the server did not listen within 60 s: $(timeout 10 "$engine" logs "$name" 2>&1 | tail -n 3)"
	sleep 0.2
done
ip=$(timeout 60 "$engine" inspect --format "{{(index .NetworkSettings.Networks \"$net\").IPAddress}}" "$name")
echo "$ip" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$' || die "the server's address on $net: '$ip'"
echo "$ip"
