#!/bin/sh
# demo.sh - `make audit-demo` (after `make setup` and `make`): an audit session
# against a copy-on-write view of a host tree. Builds an image with a demo key
# trusted and oci/audit/manifest.json sealed in (expiring a year from now),
# makes a sample tree, hashes it, runs the session of oci/audit/commands.txt
# through `turninit serve` in
#
#   podman run --rm -i --read-only --read-only-tmpfs=false --network none --ipc none \
#     --tmpfs /home/agent:rw,mode=0700,size=64m,U --tmpfs /tmp:rw,mode=1777,size=64m \
#     -v TREE:/work:O -v TREE:/audit/base:ro -v LOGDIR:/var/log/turninit \
#     IMAGE serve --audit-log /var/log/turninit/audit.jsonl --audit-changes /audit/base
#
# (its last command, `diff -ruN /audit/base /work`, shows what the session
# changed), hashes the tree again and prints the audit log. Fails when the host
# tree changed or the log is missing.
#
# Files (under build/audit-demo/): demo.key demo.pub (a minisign key pair
# without a password, made when absent; demo only), tree/ (the
# sample, remade each run), log/audit.jsonl (remade each run).
# Images: localhost/turninit-audit-demo:base and :latest.
set -eu

ROOT_DIR=$(cd "$(dirname "$0")/../.." && pwd)
D=$ROOT_DIR/build/audit-demo
BIN=$ROOT_DIR/build/turninit
BASE=localhost/turninit-audit-demo:base
IMAGE=localhost/turninit-audit-demo:latest
LABEL=turninit-audit-demo=$$

die() { echo "audit-demo: $*" >&2; exit 1; }
[ -x "$BIN" ] || die "$BIN missing: run make first"
[ "$(id -u)" -eq 0 ] || die "run as root (rootful podman)"
for c in podman buildah minisign python3 tar sha256sum; do
	command -v "$c" >/dev/null || die "$c not found (make setup)"
done
mkdir -p "$D"

if [ ! -r "$D/demo.key" ] || [ ! -r "$D/demo.pub" ]; then
	rm -f "$D/demo.key" "$D/demo.pub"
	minisign -G -W -s "$D/demo.key" -p "$D/demo.pub" </dev/null >/dev/null \
		|| die "minisign -G failed"
fi
sh "$ROOT_DIR/rootfs/build-image.sh" --trusted-key "$D/demo.pub" --tag "$BASE" \
	--root "$D/rootfs" "$BIN"
expires=$(date -u -d '+1 year' +%Y-%m-%dT%H:%M:%SZ)
sh "$ROOT_DIR/oci/seal.sh" --image "$BASE" --manifest "$ROOT_DIR/oci/audit/manifest.json" \
	--expires "$expires" --key "$D/demo.key" --tag "$IMAGE" \
	--trusted-comment "turninit audit demo manifest, expires $expires"

# The sample tree, owned by the manifest's uid (the commands run as 1000 and
# edit it in the overlay); the log directory, root's alone.
rm -rf "$D/tree" "$D/log"
mkdir -p "$D/tree/src" "$D/tree/docs" "$D/log"
printf '# hello\n\nA small project under audit.\n' > "$D/tree/README.md"
printf '#include <stdio.h>\n\nint main(void)\n{\n\tputs("Hello, world");\n\treturn 0;\n}\n' \
	> "$D/tree/src/hello.c"
printf 'Old notes, to be removed.\n' > "$D/tree/docs/old-notes.txt"
printf 'Design notes.\n' > "$D/tree/docs/design.txt"
chown -R 1000:1000 "$D/tree"
chmod 0700 "$D/log"

tree_hash() { tar --sort=name --numeric-owner -C "$1" -cf - . | sha256sum | cut -d' ' -f1; }
before=$(tree_hash "$D/tree")
echo
echo "audit-demo: host tree $D/tree, sha256 of its tar (contents, modes, owners, mtimes): $before"
echo "audit-demo: the session (oci/audit/commands.txt):"
echo
set +e
python3 "$ROOT_DIR/oci/audit/session.py" "$ROOT_DIR/oci/audit/commands.txt" -- \
	timeout 300 podman run --rm -i --pull never --label "$LABEL" \
	--read-only --read-only-tmpfs=false --network none --ipc none \
	--tmpfs /home/agent:rw,mode=0700,size=64m,U --tmpfs /tmp:rw,mode=1777,size=64m \
	-v "$D/tree:/work:O" -v "$D/tree:/audit/base:ro" -v "$D/log:/var/log/turninit" \
	"$IMAGE" serve --audit-log /var/log/turninit/audit.jsonl --audit-changes /audit/base \
	2>"$D/stderr"
rc=$?
cat "$D/stderr" >&2
set -e
[ "$rc" -eq 0 ] || die "the session failed"
after=$(tree_hash "$D/tree")
echo
echo "audit-demo: host tree sha256 after the session: $after"
[ "$before" = "$after" ] || die "the host tree changed"
echo "audit-demo: the host tree is byte-identical"
echo
echo "audit-demo: the audit log $D/log/audit.jsonl:"
[ -s "$D/log/audit.jsonl" ] || die "no audit log"
cat "$D/log/audit.jsonl"
echo
echo "audit-demo: the change record turninit wrote at the end of the turn (op, path, digest now):"
python3 -c 'import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["event"] == "change":
        print("  %-8s %-22s %s" % (e["op"], e.get("path"), (e["now"] or {}).get("blake2b_256")))
    elif e["event"] == "changes":
        print("  %d added, %d removed, %d changed; complete: %s" % (e["added"], e["removed"], e["changed"], e["complete"]))' \
	"$D/log/audit.jsonl"
echo
head=$(sed -n 's/^turninit: audit: turn .* head \([0-9a-f]\{64\}\)$/\1/p' "$D/stderr")
[ -n "$head" ] || die "turninit printed no final head"
echo "audit-demo: turninit audit-verify $D/log/audit.jsonl --head $head --summary (the head turninit printed at the end of the turn, held outside the log):"
"$BIN" audit-verify "$D/log/audit.jsonl" --head "$head" --summary || die "audit-verify found the log broken"
