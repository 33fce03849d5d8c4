#!/bin/sh
# demo.sh - `make demo` (after `make setup` and `make`): build an image with a demo
# key trusted, seal oci/manifest.example.json into it (expiring a year from now),
# and run one real turn in podman, printing the command's output and its exact
# environment.
#
# Files (all under build/demo/, made when absent):
#   demo.key demo.pub   a minisign key pair without a password (`minisign -G -W`);
#                       demo only: trust it nowhere else
# The example manifest is sealed with a fresh "expires" (oci/seal.sh --expires).
# Images: localhost/turninit-demo:base (unsealed) and localhost/turninit-demo:latest.
set -eu

ROOT_DIR=$(cd "$(dirname "$0")/.." && pwd)
D=$ROOT_DIR/build/demo
BIN=$ROOT_DIR/build/turninit
BASE=localhost/turninit-demo:base
IMAGE=localhost/turninit-demo:latest

die() { echo "demo: $*" >&2; exit 1; }
[ -x "$BIN" ] || die "$BIN missing: run make first"
mkdir -p "$D"

if [ -r "$D/demo.key" ] && [ -r "$D/demo.pub" ]; then
	echo "demo: key $D/demo.pub exists"
else
	rm -f "$D/demo.key" "$D/demo.pub"
	minisign -G -W -s "$D/demo.key" -p "$D/demo.pub" </dev/null >/dev/null \
		|| die "minisign -G failed"
	echo "demo: made key pair $D/demo.key, $D/demo.pub"
fi

sh "$ROOT_DIR/rootfs/build-image.sh" --trusted-key "$D/demo.pub" --tag "$BASE" \
	--root "$D/rootfs" "$BIN"

expires=$(date -u -d '+1 year' +%Y-%m-%dT%H:%M:%SZ)
sh "$ROOT_DIR/oci/seal.sh" --image "$BASE" --manifest "$ROOT_DIR/oci/manifest.example.json" \
	--expires "$expires" --key "$D/demo.key" --tag "$IMAGE" \
	--trusted-comment "turninit demo manifest, expires $expires"

echo
timeout 60 podman run --rm --pull never --network none --tmpfs /home/agent:rw,mode=0700,size=64m,U \
	"$IMAGE" verify > "$D/policy.json" || die "turninit verify refused the demo manifest or the turn's flags"
echo "demo: the effective policy (\`podman run --rm --network none --tmpfs /home/agent:rw,mode=0700,size=64m,U $IMAGE verify\`, in full in $D/policy.json):"
python3 - "$D/policy.json" <<'EOP' 2>/dev/null || cat "$D/policy.json"
import json, sys
p = json.load(open(sys.argv[1]))
m = p["manifest"]
print(f"  manifest from {p['source']}, signed by key {p['signature']['key_id']}, trusted by {p['trust']}")
print(f"  runs as uid {m['user']['uid']} gid {m['user']['gid']}, HOME {m['home']} (a private tmpfs), workdir {m['workdir']}")
print(f"  environment: {' '.join(m['env']['set'])} set, {' '.join(m['env']['allow'])} allowed from the caller, HOME")
print(f"  seccomp: {len(p['seccomp']['denied'])} system calls denied; landlock ABI {p['landlock']['abi']} ({p['landlock']['status']}), writable: {' '.join(m['landlock']['writable'])}")
EOP
echo
echo "demo: one turn:"
echo "\$ podman run --rm --pull never --network none --tmpfs /home/agent:rw,mode=0700,size=64m,U $IMAGE -- 'echo hello from turninit; id; env | sort'"
set +e
timeout 60 podman run --rm --pull never --network none \
	--tmpfs /home/agent:rw,mode=0700,size=64m,U \
	"$IMAGE" -- 'echo hello from turninit; id; env | sort'
rc=$?
set -e
echo "demo: exit status $rc"
[ "$rc" -eq 0 ] || die "the turn failed (exit status $rc; docs/exit-codes.md)"
