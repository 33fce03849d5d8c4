#!/bin/sh
# seal.sh - seal a signed manifest into an image's OCI config Env.
#
# usage: seal.sh --image IN --manifest M.json --key SECRET.key --tag OUT
#                [--expires Nd|Nh|YYYY-MM-DDTHH:MM:SSZ] [--trusted-comment TEXT] [--legacy]
#
# --expires sets the manifest's "expires" in the copy that is signed: N days or
# hours from now, or that time (UTC), at most 3650 days ahead. The value M.json has is replaced; without
# one, "expires" is put first in its object. The examples of oci/ carry none, so
# nothing committed expires: seal them with --expires.
#
# Signs M.json with the stock minisign CLI (prehashed "ED"; --legacy: the legacy
# "Ed" form) using a key without a password (`minisign -G -W`), checks the
# signature with the public key recreated from the secret key, and commits IN as
# OUT with two entries added to the image config Env:
#   TURNINIT_MANIFEST      base64 of the exact manifest bytes (no line wrapping)
#   TURNINIT_MANIFEST_SIG  base64 of the .minisig file
# The Env reaches PID 1's environ (labels and annotations do not); turninit
# verifies the signature over those bytes before parsing them. Registry-free:
# buildah from/config/commit on the local storage podman uses. Before it
# commits, IN's own turninit checks the signed manifest with its own parser and
# trust roots (`podman run IN verify` given the same Env pair): a manifest it
# would refuse at the first turn (expired, an unknown key, signed by a key IN
# does not trust) is refused here with turninit's line, and OUT is not made.
# After the commit, OUT's config Env is read back: each entry once, decoded
# byte for byte the files signed, or OUT is removed and not made.
# IN may be of another architecture than the host (an arm64 image on amd64):
# that check runs its turninit under qemu-user's binfmt entry, and OUT keeps
# IN's architecture.
set -eu

die() { echo "seal: $*" >&2; exit 1; }
usage() { sed -n '4,5s/^# \{0,1\}//p' "$0" >&2; exit 2; }

in='' manifest='' key='' out='' comment='' legacy='' expires=''
while [ $# -gt 0 ]; do
	case $1 in
	--image) [ $# -ge 2 ] || usage; in=$2; shift 2 ;;
	--manifest) [ $# -ge 2 ] || usage; manifest=$2; shift 2 ;;
	--key) [ $# -ge 2 ] || usage; key=$2; shift 2 ;;
	--tag) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
	--trusted-comment) [ $# -ge 2 ] || usage; comment=$2; shift 2 ;;
	--expires) [ $# -ge 2 ] || usage; expires=$2; shift 2 ;;
	--legacy) legacy=-l; shift ;;
	-h|--help) usage ;;
	*) die "unknown argument $1" ;;
	esac
done
[ -n "$in" ] && [ -n "$manifest" ] && [ -n "$key" ] && [ -n "$out" ] || usage
[ -r "$manifest" ] || die "manifest $manifest: not readable"
[ -r "$key" ] || die "key $key: not readable"
size=$(wc -c < "$manifest")
[ "$size" -le 65536 ] || die "manifest $manifest: $size bytes, turninit accepts at most 65536"
for c in minisign buildah podman base64; do
	command -v "$c" >/dev/null || die "$c not found (make setup)"
done
timeout 60 podman image exists "$in" || die "image $in: not in local storage"
# IN's architecture, given to podman run and buildah from: both would
# otherwise look for the host's and warn that IN is not it.
arch=$(timeout 60 podman image inspect --format '{{.Architecture}}' "$in") && [ -n "$arch" ] ||
	die "image $in: no architecture in its config"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/turninit-seal.XXXXXX")
ctr=
cleanup() {
	[ -z "$ctr" ] || timeout 60 buildah rm "$ctr" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cp "$manifest" "$tmp/manifest.json"
if [ -n "$expires" ]; then
	# an expiry bounds replay: at most 3650 days (10 years) from now
	now=$(date -u +%s)
	case $expires in
	*[!0-9]*d|d|*[!0-9]*h|h) die "--expires $expires: give Nd, Nh or YYYY-MM-DDTHH:MM:SSZ" ;;
	???????*[dh]) until=-1 ;;   # 6 digits or more: more than 3650 days either way
	*d) until=$((now + ${expires%d} * 86400)) ;;
	*h) until=$((now + ${expires%h} * 3600)) ;;
	[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z)
		until=$(date -u -d "$(echo "$expires" | tr TZ ' ')UTC" +%s 2>/dev/null) \
			|| die "--expires $expires: not a time (YYYY-MM-DDTHH:MM:SSZ, UTC)" ;;
	*) die "--expires $expires: give Nd, Nh or YYYY-MM-DDTHH:MM:SSZ" ;;
	esac
	[ "$until" -ge 0 ] && [ "$until" -le $((now + 3650 * 86400)) ] \
		|| die "--expires $expires: more than 3650 days (10 years) from now; an expiry bounds how long a copied image can be replayed"
	[ "$until" -gt "$now" ] || die "--expires $expires: already past"
	expires=$(date -u -d "@$until" +%Y-%m-%dT%H:%M:%SZ)
	if grep -q '"expires"' "$tmp/manifest.json"; then
		sed -i "s/\"expires\" *: *\"[^\"]*\"/\"expires\": \"$expires\"/" "$tmp/manifest.json"
	else
		sed -i "0,/{/s/{/{\"expires\": \"$expires\", /" "$tmp/manifest.json"
	fi
	[ "$(grep -o "\"expires\": \"$expires\"" "$tmp/manifest.json" | wc -l)" -eq 1 ] \
		|| die "--expires: could not set \"expires\" once in a copy of $manifest"
	size=$(wc -c < "$tmp/manifest.json")
	[ "$size" -le 65536 ] || die "manifest $manifest: $size bytes with --expires, turninit accepts at most 65536"
fi
# A one-line trusted comment: minisign signs it (the global signature) and turninit
# checks it, so it says what was signed. minisign reads a password from the
# terminal for an encrypted key; </dev/null makes that fail instead of hang.
sha=$(sha256sum "$tmp/manifest.json" | cut -d' ' -f1)
[ -n "$comment" ] || comment="turninit manifest sha256:$sha for $out, signed $(date -u +%Y-%m-%dT%H:%M:%SZ)"
case $comment in *"
"*) die "--trusted-comment must be one line" ;; esac
# turninit refuses a trusted comment that is not printable text (tab, printable
# ASCII, UTF-8 from U+00A0; policy/signature.c): refuse it here, not at run time.
if printf '%s' "$comment" | tr -d '\t' | LC_ALL=C grep -q '[[:cntrl:]]' ||
   ! printf '%s' "$comment" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1 ||
   printf '%s' "$comment" | LC_ALL=C grep -q "$(printf '\302[\200-\237]')"; then
	die "--trusted-comment must be printable text (tab, printable ASCII, UTF-8 from U+00A0): turninit refuses a control byte"
fi
# shellcheck disable=SC2086 # $legacy is empty or -l
minisign -S $legacy -s "$key" -m "$tmp/manifest.json" -x "$tmp/manifest.json.minisig" \
	-t "$comment" </dev/null >"$tmp/minisign.log" 2>&1 \
	|| die "minisign -S failed (a key made with -G -W has no password): $(tail -n 1 "$tmp/minisign.log")"
minisign -R -s "$key" -p "$tmp/key.pub" </dev/null >"$tmp/minisign.log" 2>&1 \
	|| die "minisign -R failed: $(tail -n 1 "$tmp/minisign.log")"
minisign -V -q -p "$tmp/key.pub" -m "$tmp/manifest.json" -x "$tmp/manifest.json.minisig" \
	>"$tmp/minisign.log" 2>&1 || die "the new signature does not verify: $(tail -n 1 "$tmp/minisign.log")"
keyid=$(sed -n 's/^untrusted comment: minisign public key //p' "$tmp/key.pub")

b64_manifest=$(base64 -w0 "$tmp/manifest.json")
b64_sig=$(base64 -w0 "$tmp/manifest.json.minisig")

# turninit's own check: the Env pair is what the sealed config gives PID 1.
# verify prints the effective policy once the signature and the manifest
# hold, and exits 125 also when only the start would be refused (this run
# has no HOME tmpfs nor the network's capabilities: the turn's flags are the
# runner's to give), so a policy on stdout is the manifest accepted.
if ! timeout 120 podman run --rm --pull never --network none --arch "$arch" \
	-e "TURNINIT_MANIFEST=$b64_manifest" -e "TURNINIT_MANIFEST_SIG=$b64_sig" \
	"$in" verify >"$tmp/verify.out" 2>"$tmp/verify.err" &&
	! grep -q '^  "manifest": {' "$tmp/verify.out"; then
	why=$(grep '^turninit: ' "$tmp/verify.err" | tail -n 1)
	[ -n "$why" ] || die "could not run the turninit of $in ($arch) to check the manifest, so $out is not made: $(tail -n 1 "$tmp/verify.err")$(
		if [ "$arch" = "$(podman info --format '{{.Host.Arch}}' 2>/dev/null)" ]; then
			echo " (an image of your own needs /sbin/turninit as its ENTRYPOINT: docs/packaging.md, \"Your own image\")"
		else
			echo " (an $arch image on this host runs under qemu-user: apt-get install qemu-user-static binfmt-support)"
		fi)"
	die "turninit in $in refuses this manifest, so $out is not made: $why"
fi

old_id=$(timeout 60 podman image inspect --format '{{.Id}}' "$out" 2>/dev/null || true)
ctr=$(timeout 60 buildah from --pull-never --quiet --arch "$arch" "$in") || die "buildah from $in failed"
timeout 60 buildah config --env "TURNINIT_MANIFEST=$b64_manifest" \
	--env "TURNINIT_MANIFEST_SIG=$b64_sig" "$ctr" || die "buildah config failed"
new_id=$(timeout 60 buildah commit --quiet --rm "$ctr" "$out") || die "buildah commit $out failed"
ctr=
new_id=${new_id#sha256:}
# What podman will hand to the container must be exactly what was signed:
# each entry once, decoded byte for byte the signed file (docs/packaging.md's
# check of a sealed image; issue 46: a build cache once kept an earlier
# manifest, signed and accepted, with no error). Else the image just made
# goes, and OUT names nothing.
sealed_wrong() {
	timeout 60 podman rmi -f "$new_id" >/dev/null 2>&1 || true
	die "$out: $1, so $out is not made"
}
timeout 60 podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$new_id" \
	>"$tmp/sealed.env" || sealed_wrong "podman image inspect failed"
for pair in "TURNINIT_MANIFEST manifest.json" "TURNINIT_MANIFEST_SIG manifest.json.minisig"; do
	name=${pair% *} file=${pair#* }
	[ "$(grep -c "^$name=" "$tmp/sealed.env")" -eq 1 ] || sealed_wrong "not one $name in the image config Env"
	sed -n "s/^$name=//p" "$tmp/sealed.env" | base64 -d >"$tmp/sealed.$file" 2>/dev/null &&
		cmp -s "$tmp/sealed.$file" "$tmp/$file" ||
		sealed_wrong "$name in the image config Env is not the $file signed"
done
# The image OUT named before goes when OUT was its only name and no container
# uses it; nothing else (another name of the user's keeps it, and another
# user's images stay).
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ] &&
   [ -z "$(timeout 60 podman image inspect --format '{{range .RepoTags}}{{.}} {{end}}' "$old_id" 2>/dev/null | tr -d ' ')" ]; then
	timeout 60 podman rmi "$old_id" >/dev/null 2>&1 || true
fi
form=prehashed
[ -z "$legacy" ] || form=legacy
echo "seal: $out ($(printf '%.12s' "$new_id")): manifest sha256:$(printf '%.12s' "$sha") ($size bytes), signed by key $keyid ($form)"
