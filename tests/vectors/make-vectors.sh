#!/bin/sh
# make-vectors.sh - regenerate the minisign test vectors from scratch.
#
#   sh tests/vectors/make-vectors.sh [DIR]    (DIR: where to write; default: beside this script)
#
# Needs the stock minisign CLI (0.11, Debian package "minisign"); nothing else
# writes these files. Every file below is replaced and the keys are new on each
# run, so commit the set as a whole. Ed25519 is deterministic: given the same keys,
# the same signatures come out.
#
#   test-trusted.key  test-trusted.pub   the key the unit tests trust
#   test-other.key    test-other.pub     a second key the unit tests do not trust
#   good.json                            a valid version-1 manifest: one line and "\n"
#   good.json.minisig                    prehashed "ED" (minisign -S), trusted key
#   good.json.legacy.minisig             legacy "Ed" (minisign -S -l), trusted key
#   good.json.other.minisig              prehashed "ED", other key
#
# The secret keys have no password (-W) and are TEST ONLY: never trust them
# anywhere else. Each signature gets a fixed trusted comment (-t) instead of
# minisign's default, which holds a timestamp; tests/unit/test_signature.c
# expects exactly these texts. Forgeries are made in the test from these files.
set -eu

dir=${1:-$(dirname "$0")}
command -v minisign >/dev/null || { echo "make-vectors.sh: minisign not found" >&2; exit 1; }
cd "$dir"

rm -f test-trusted.key test-trusted.pub test-other.key test-other.pub \
      good.json good.json.minisig good.json.legacy.minisig good.json.other.minisig

minisign -G -W -f -s test-trusted.key -p test-trusted.pub </dev/null >/dev/null
minisign -G -W -f -s test-other.key -p test-other.pub </dev/null >/dev/null

printf '%s\n' '{"turninit":1,"expires":"2099-01-01T00:00:00Z","user":{"uid":1000,"gid":1000},"home":"/home/agent","env":{"set":{"PATH":"/usr/bin:/bin"},"allow":["TZ"]}}' > good.json

minisign -S -s test-trusted.key -m good.json -x good.json.minisig \
	-t 'turninit test vector: good.json prehashed by test-trusted' </dev/null >/dev/null
minisign -S -l -s test-trusted.key -m good.json -x good.json.legacy.minisig \
	-t 'turninit test vector: good.json legacy by test-trusted' </dev/null >/dev/null
minisign -S -s test-other.key -m good.json -x good.json.other.minisig \
	-t 'turninit test vector: good.json prehashed by test-other' </dev/null >/dev/null

# The CLI must accept what it wrote; a failure here means a broken minisign.
minisign -V -q -p test-trusted.pub -m good.json -x good.json.minisig
minisign -V -q -p test-trusted.pub -m good.json -x good.json.legacy.minisig
minisign -V -q -p test-other.pub -m good.json -x good.json.other.minisig
