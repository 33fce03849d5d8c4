#!/bin/sh
# setup.sh - the Debian packages `make bench` needs beyond `make setup`:
# tini (its tini-static), dumb-init (size figure only: Debian's is dynamic),
# gnuplot-nox (the plots) and linux-perf (perf sched, section 2's profile).
# catatonit comes with podman. Idempotent: installs only what is missing, and
# runs apt-get update only then.
set -eu
missing=
for p in tini dumb-init gnuplot-nox linux-perf; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "bench setup: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086 # one package a word
apt-get install -y -qq --no-install-recommends $missing >/dev/null
