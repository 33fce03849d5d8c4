#!/bin/bash
# hostile.sh - every class of bad input turninit is given, against the real
# static binary (issue 5, item 4). docs/hostile-input.md is the table of these
# tests: one row a test, and the last test here checks that every row names a
# test that exists and that every test here has its row.
#
# Where it runs: on the host, each turn in PID and mount namespaces of its own
# (unshare, then tests/pid1/ns.sh binds a key directory at /etc/turninit, the
# only place turninit takes trust roots from), with a raw environment given by
# tests/hostile/rawenv.c. turninit is PID 1 of its namespace, mounts its own
# tmpfs HOME (it has CAP_SYS_ADMIN there) and drops to uid 1000 as in a
# container. What is under test is the parsing and refusing that happens before
# any command starts, and the serve loop: both are the same code in podman, and
# a turn costs about 0.1 s here instead of about a second of podman start, so
# the suite stays well under a minute on a loaded machine. The trust-root rows
# need a different /etc/turninit each, which a bind mount per turn gives
# without an image per row. The podman paths (image config Env, --tmpfs HOME)
# are covered by run.sh and serve.sh.
#
# A refusal is: exit 125, nothing on stdout (each command would print RAN),
# and exactly the one stderr line given. A serve row sends the bad request,
# then a good exec in the same session (tests/hostile/serve_row.py), which must
# still run: the turn goes on.
#
# Root (unshare, mount). Every turn has a hard timeout. Prints TAP ("ok N - NAME", "not ok N - NAME") with the evidence, then "N passed, N failed"; the counts go to
# build/test-results/hostile; exits 1 on any failure.
# Environment: ITEST_ONLY=REGEX runs only the tests whose name matches;
# ITEST_BINARY=PATH tests another binary.
# shellcheck disable=SC2016 # '$X' is literal: it runs in the command's bash
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NS=$ROOT/tests/pid1/ns.sh
VEC=$ROOT/tests/vectors
DOC=$ROOT/docs/hostile-input.md
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"

PY=python3
[[ -x /usr/bin/python3 ]] && PY=/usr/bin/python3
suite_open hostile hostile "unshare, mount" unshare minisign timeout strace "$PY"
export PYTHONDONTWRITEBYTECODE=1

mkdir -p "$WORK/keys" "$WORK/env"
cp "$VEC/test-trusted.pub" "$WORK/keys/trusted.pub"
need_helpers rawenv
RAWENV=$HELPERS/rawenv


T0=$(now_ms)
MANIFEST_KEY=$VEC/test-trusted.key
# The suite's head: HEAD with a workdir that exists on any host.
HD=${HEAD/\"\/work\"/\"\/tmp\"}
ST='"set":{"PATH":"/usr/bin:/bin"}'
# A manifest with no expiry, workdir or the like, for the rows about those.
HX='"turninit":1,"user":{"uid":1000,"gid":1000},"home":"/home/agent"'
manifest good "{$HD,\"env\":{$ST,\"allow\":[\"TZ\",\"LC_*\"]}}"
manifest serve "{$HD,\"env\":{$ST,\"allow\":[\"TZ\",\"LC_*\"]},\"limits\":{\"timeout_s\":2}}"

# keydir NAME: a fresh directory $WORK/k/NAME, to be /etc/turninit of a turn.
keydir() {
	KD=$WORK/k/$1
	rm -rf "$KD"
	mkdir -p "$KD"
}

# envfile NAME: start $WORK/env/NAME (NUL-ended entries, for rawenv); EF is its path.
envfile() {
	EF=$WORK/env/$1
	: >"$EF"
}
# add ENTRY...: entries appended to EF, byte for byte.
add() {
	printf '%s\0' "$@" >>"$EF"
}
# add_pair MANIFEST_FILE [SIG_FILE]: the image config Env pair, base64.
add_pair() {
	add "TURNINIT_MANIFEST=$(b64 "$1")" "TURNINIT_MANIFEST_SIG=$(b64 "${2:-$1.minisig}")"
}

# turn KEYDIR ARG...: turninit ARG... as PID 1 of new namespaces, KEYDIR at
# /etc/turninit, environment exactly EF; RC, OUT, ERR.
turn() {
	local kd=$1
	shift
	run_cmd timeout -k 5 30 unshare --pid --fork --kill-child --mount-proc \
		sh "$NS" pid1 "$kd" "$WORK/left" "$RAWENV" "$EF" "$BIN" "$@"
}

# refused MESSAGE: exit 125, no stdout, stderr exactly "turninit: MESSAGE\n".
refused() {
	expect_rc 125
	expect_out ""
	expect_err "turninit: $1"$'\n'
}

# mrow NAME JSON MESSAGE: the manifest JSON, signed by the trusted key and given
# as the image config Env pair, is refused with MESSAGE.
mrow() {
	begin "$1" || return 0
	manifest "$1" "$2"
	envfile "$1"
	add_pair "$WORK/m/$1.json"
	turn "$WORK/keys" -- 'echo RAN'
	refused "$3"
	end
}

# sigrow NAME SIGFILE MESSAGE: good.json with the signature SIGFILE is refused.
sigrow() {
	begin "$1" || return 0
	envfile "$1"
	add_pair "$WORK/m/good.json" "$2"
	turn "$WORK/keys" -- 'echo RAN'
	refused "$3"
	end
}

# keyrow NAME MESSAGE: good.json, properly signed, with /etc/turninit = $KD.
keyrow() {
	begin "$1" || return 0
	envfile "$1"
	add_pair "$WORK/m/good.json"
	turn "$KD" -- 'echo RAN'
	refused "$2"
	end
}

# The environment a command sees, sorted, when nothing is offered but the pair.
ENV_BASE=$'HOME=/home/agent\nPATH=/usr/bin:/bin\nPWD=/tmp\nSHLVL=1\n_=/usr/bin/env'

# ---- the manifest ---------------------------------------------------------------
if begin h-manifest-missing; then
	envfile none
	turn "$WORK/keys" -- 'echo RAN'
	refused "manifest: none: no TURNINIT_MANIFEST in the environment (an image sealed with turninit-seal, oci/seal.sh, carries it) and no /etc/turninit/manifest.json (or --manifest PATH); turninit runs nothing without a signed manifest"
	end
fi

if begin h-manifest-empty; then
	: >"$WORK/m/empty.json"
	sign "$WORK/m/empty.json" "$MANIFEST_KEY" || why "minisign -S empty.json"
	envfile empty-bytes
	add_pair "$WORK/m/empty.json"
	turn "$WORK/keys" -- 'echo RAN'
	refused "manifest: empty"
	end
fi
mrow h-manifest-newline-only "" "manifest: not valid JSON: unexpected token near end of file (line 2, column 0)"

# 65537 bytes: the good manifest and spaces after it.
pad_to() { # pad_to SIZE SRC DST: SRC then spaces up to SIZE bytes, signed
	{ cat "$2"; head -c $(($1 - $(stat -c %s "$2"))) /dev/zero | tr '\0' ' '; } >"$3"
	sign "$3" "$MANIFEST_KEY" || why "minisign -S $3"
}
if begin h-manifest-64k-plus-1-file; then
	keydir big-file
	cp "$VEC/test-trusted.pub" "$KD/trusted.pub"
	pad_to 65537 "$WORK/m/good.json" "$KD/manifest.json"
	envfile none
	turn "$KD" -- 'echo RAN'
	refused "manifest: /etc/turninit/manifest.json: larger than 65536 bytes"
	end
fi
if begin h-manifest-64k-plus-1-env; then
	pad_to 65537 "$WORK/m/good.json" "$WORK/m/big.json"
	envfile big-env
	add_pair "$WORK/m/big.json"
	turn "$WORK/keys" -- 'echo RAN'
	refused "manifest: TURNINIT_MANIFEST: larger than 65536 bytes"
	end
fi
if begin h-manifest-64k-exact-runs; then
	pad_to 65536 "$WORK/m/good.json" "$WORK/m/exact.json"
	envfile exact
	add_pair "$WORK/m/exact.json"
	turn "$WORK/keys" -- 'echo RAN'
	expect_rc 0
	expect_out $'RAN\n'
	expect_err ""
	end
fi

mrow h-manifest-not-utf8 "{$HD,\"env\":{\"set\":{\"PATH\":\"/bin\",\"X\":\"a$(printf '\xff')b\"}}}" \
	"manifest: not valid UTF-8 (line 1, column 150)"
mrow h-manifest-duplicate-key "{$HD,\"home\":\"/x\",\"env\":{$ST}}" \
	'manifest: duplicate key "home" (line 1, column 122)'
mrow h-manifest-unknown-key "{$HD,\"env\":{$ST},\"limits\":{\"nofiles\":1}}" \
	"manifest: limits.nofiles: unknown key"
mrow h-manifest-version-2 "{${HD/\"turninit\":1/\"turninit\":2},\"env\":{$ST}}" \
	"manifest: turninit: unsupported version 2 (this turninit reads 1)"
mrow h-manifest-type-string-for-integer \
	"{\"turninit\":1,\"expires\":\"2099-01-01T00:00:00Z\",\"user\":{\"uid\":\"1000\",\"gid\":1000},\"home\":\"/home/agent\",\"env\":{$ST}}" \
	"manifest: user.uid: expected an integer in 1..4294967294, got a string"
mrow h-manifest-type-real-for-integer "{$HD,\"env\":{$ST},\"limits\":{\"timeout_s\":1.5}}" \
	"manifest: limits.timeout_s: expected an integer in 1..86400, got a real number"
mrow h-manifest-type-array-for-object "{$HD,\"env\":[]}" \
	"manifest: env: expected an object, got an array"
mrow h-manifest-type-integer-in-env-set "{$HD,\"env\":{\"set\":{\"PATH\":\"/bin\",\"X\":1}}}" \
	"manifest: env.set.X: expected a string, got an integer"
mrow h-manifest-type-string-for-boolean "{$HD,\"env\":{$ST},\"landlock\":{\"optional\":\"yes\"}}" \
	"manifest: landlock.optional: expected a boolean, got a string"
mrow h-manifest-negative-uid \
	"{\"turninit\":1,\"expires\":\"2099-01-01T00:00:00Z\",\"user\":{\"uid\":-1,\"gid\":1000},\"home\":\"/home/agent\",\"env\":{$ST}}" \
	"manifest: user.uid: -1 is out of range 1..4294967294"
mrow h-manifest-negative-timeout "{$HD,\"env\":{$ST},\"limits\":{\"timeout_s\":-5}}" \
	"manifest: limits.timeout_s: -5 is out of range 1..86400"
mrow h-manifest-huge-uid \
	"{\"turninit\":1,\"expires\":\"2099-01-01T00:00:00Z\",\"user\":{\"uid\":4294967295,\"gid\":1000},\"home\":\"/home/agent\",\"env\":{$ST}}" \
	"manifest: user.uid: 4294967295 is out of range 1..4294967294"
mrow h-manifest-huge-fsize "{$HD,\"env\":{$ST},\"limits\":{\"fsize_bytes\":4611686018427387905}}" \
	"manifest: limits.fsize_bytes: 4611686018427387905 is out of range 1..4611686018427387904"
mrow h-manifest-huge-beyond-int64 "{$HD,\"env\":{$ST},\"limits\":{\"timeout_s\":99999999999999999999999}}" \
	"manifest: number out of range: too big integer (line 1, column 200)"
mrow h-manifest-path-relative-entry "{$HD,\"env\":{\"set\":{\"PATH\":\"/usr/bin:bin\"}}}" \
	'manifest: env.set.PATH: entry 2 "bin" is not absolute (bash would search from the working directory)'
mrow h-manifest-path-dot-entry "{$HD,\"env\":{\"set\":{\"PATH\":\".:/usr/bin\"}}}" \
	'manifest: env.set.PATH: entry 1 "." is not absolute (bash would search from the working directory)'
mrow h-manifest-path-empty-entry "{$HD,\"env\":{\"set\":{\"PATH\":\"/usr/bin::/bin\"}}}" \
	"manifest: env.set.PATH: entry 2 is empty (bash would search the working directory)"
mrow h-manifest-never-admitted-in-set "{$HD,\"env\":{\"set\":{\"PATH\":\"/bin\",\"LD_PRELOAD\":\"/x.so\"}}}" \
	'manifest: env.set: "LD_PRELOAD" is never admitted'
mrow h-manifest-never-admitted-in-allow "{$HD,\"env\":{$ST,\"allow\":[\"TZ\",\"BASH_ENV\"]}}" \
	'manifest: env.allow[1]: "BASH_ENV" is never admitted'
mrow h-manifest-never-admitted-pattern "{$HD,\"env\":{$ST,\"allow\":[\"LD_*\"]}}" \
	'manifest: env.allow[0]: "LD_*" matches only never-admitted names'
mrow h-manifest-never-admitted-pattern-bash-func "{$HD,\"env\":{$ST,\"allow\":[\"BASH_FUNC_*\"]}}" \
	'manifest: env.allow[0]: "BASH_FUNC_*" matches only never-admitted names'
mrow h-manifest-allow-star "{$HD,\"env\":{$ST,\"allow\":[\"*\"]}}" \
	'manifest: env.allow[0]: "*" would admit every name; list the names'
mrow h-manifest-expired "{${HD/2099-01-01/2020-01-01},\"env\":{$ST}}" \
	"manifest: expired at 2020-01-01T00:00:00Z"
mrow h-manifest-expires-missing "{$HX,\"env\":{$ST}}" \
	'manifest: expires: required ("YYYY-MM-DDTHH:MM:SSZ"; sealing with --expires 30d sets it)'
mrow h-manifest-timestamp-space "{$HX,\"expires\":\"2099-01-01 00:00:00\",\"env\":{$ST}}" \
	'manifest: expires: expected a UTC time "YYYY-MM-DDTHH:MM:SSZ" (RFC 3339), got "2099-01-01 00:00:00"'
mrow h-manifest-timestamp-feb-30 "{$HX,\"expires\":\"2099-02-30T00:00:00Z\",\"env\":{$ST}}" \
	'manifest: expires: expected a UTC time "YYYY-MM-DDTHH:MM:SSZ" (RFC 3339), got "2099-02-30T00:00:00Z"'
mrow h-manifest-timestamp-offset "{$HX,\"expires\":\"2099-01-01T00:00:00+00:00\",\"env\":{$ST}}" \
	'manifest: expires: expected a UTC time "YYYY-MM-DDTHH:MM:SSZ" (RFC 3339), got "2099-01-01T00:00:00+00:00"'
mrow h-manifest-timestamp-integer "{$HX,\"expires\":20990101,\"env\":{$ST}}" \
	"manifest: expires: expected a string, got an integer"
# Control bytes in what a message quotes must not make it two lines or colour
# a terminal: they are shown escaped or as '?'.
mrow h-manifest-control-bytes-in-value "{$HX,\"expires\":\"2099\\n\\u001b[31mred\",\"env\":{$ST}}" \
	'manifest: expires: expected a UTC time "YYYY-MM-DDTHH:MM:SSZ" (RFC 3339), got "2099\x0a\x1b[31mred"'
mrow h-manifest-control-bytes-in-key "{$HD,\"env\":{$ST},\"limits\":{\"a\\nb\\u001b\":1}}" \
	'manifest: limits.a\x0ab\x1b: unknown key'
mrow h-manifest-network-bare-star "{$HD,\"env\":{$ST},\"network\":{\"allow\":[{\"host\":\"*\",\"ports\":[443]}]}}" \
	"manifest: network.allow[0].host: \"*\" is a bare '*', which admits every host"
mrow h-manifest-network-empty-label "{$HD,\"env\":{$ST},\"network\":{\"allow\":[{\"host\":\"a..example\",\"ports\":[443]}]}}" \
	"manifest: network.allow[0].host: \"a..example\" has an empty label"
mrow h-manifest-network-host-with-port "{$HD,\"env\":{$ST},\"network\":{\"allow\":[{\"host\":\"a.example:443\",\"ports\":[443]}]}}" \
	"manifest: network.allow[0].host: \"a.example:443\" has a port: write the host alone (its ports go in \"ports\")"
mrow h-manifest-network-port-0 "{$HD,\"env\":{$ST},\"network\":{\"allow\":[{\"host\":\"a.example\",\"ports\":[0]}]}}" \
	"manifest: network.allow[0].ports[0]: 0 is out of range 1..65535"
mrow h-manifest-network-isolation "{$HD,\"env\":{$ST},\"network\":{\"isolation\":\"none\"}}" \
	"manifest: network.isolation: \"none\" is neither \"namespace\" nor \"seccomp-notify\""
if begin h-manifest-env-bad-base64; then
	envfile mf-b64
	add 'TURNINIT_MANIFEST=eyJ0dXJuaW5pdCI6MX0!' "TURNINIT_MANIFEST_SIG=$(b64 "$WORK/m/good.json.minisig")"
	turn "$WORK/keys" -- 'echo RAN'
	refused "manifest: TURNINIT_MANIFEST: not valid base64"
	end
fi

# ---- the signature ----------------------------------------------------------------
# Forgeries of good.json.minisig: line N of it is L[N].
mapfile -t L <"$WORK/m/good.json.minisig"
sigfile() { # sigfile NAME LINE...: $WORK/sig/NAME, the lines each ended by "\n"
	mkdir -p "$WORK/sig"
	printf '%s\n' "${@:2}" >"$WORK/sig/$1"
}
# hexflip B64 BYTE: B64 decoded, byte BYTE xor 1, encoded again.
byteflip() {
	"$PY" -c 'import base64, sys
b = bytearray(base64.b64decode(sys.argv[1])); b[int(sys.argv[2])] ^= 1
print(base64.b64encode(b).decode())' "$1" "$2"
}
# The signature of good.json by the other key, its key id replaced by the trusted one.
cp "$WORK/m/good.json" "$WORK/m/other.json"
sign "$WORK/m/other.json" "$VEC/test-other.key" || abort "minisign -S other.json"
mapfile -t O <"$WORK/m/other.json.minisig"
RELABEL=$("$PY" -c 'import base64, sys
o = bytearray(base64.b64decode(sys.argv[1])); g = base64.b64decode(sys.argv[2])
o[2:10] = g[2:10]; print(base64.b64encode(o).decode())' "${O[1]}" "${L[1]}")
TRUSTED_ID=$(sed -n 's/^untrusted comment: minisign public key //p' "$VEC/test-trusted.pub")
OTHER_ID=$(sed -n 's/^untrusted comment: minisign public key //p' "$VEC/test-other.pub")

if begin h-sig-env-missing; then
	envfile sig-missing
	add "TURNINIT_MANIFEST=$(b64 "$WORK/m/good.json")"
	turn "$WORK/keys" -- 'echo RAN'
	refused "manifest: TURNINIT_MANIFEST is set but TURNINIT_MANIFEST_SIG is not"
	end
fi
if begin h-sig-env-manifest-missing; then
	envfile mf-missing
	add "TURNINIT_MANIFEST_SIG=$(b64 "$WORK/m/good.json.minisig")"
	turn "$WORK/keys" -- 'echo RAN'
	refused "manifest: TURNINIT_MANIFEST_SIG is set but TURNINIT_MANIFEST is not"
	end
fi
if begin h-sig-file-missing; then
	keydir sig-file-missing
	cp "$VEC/test-trusted.pub" "$KD/trusted.pub"
	cp "$WORK/m/good.json" "$KD/manifest.json"
	envfile none
	turn "$KD" -- 'echo RAN'
	refused "manifest signature: /etc/turninit/manifest.json.minisig: No such file or directory"
	end
fi
if begin h-sig-empty; then
	envfile sig-empty
	add "TURNINIT_MANIFEST=$(b64 "$WORK/m/good.json")" "TURNINIT_MANIFEST_SIG="
	turn "$WORK/keys" -- 'echo RAN'
	refused "manifest: signature: line 1 is missing"
	end
fi
sigfile wrong-key-id "${L[0]}" "$(byteflip "${L[1]}" 9)" "${L[2]}" "${L[3]}"
# The id as minisign prints it is the 8 bytes little-endian: byte 9 is its first.
FLIPPED_ID=$(printf '%02X%s' $((0x${TRUSTED_ID:0:2} ^ 1)) "${TRUSTED_ID:2}")
# the refusal names the keys trusted, where they come from, and what to do
NOT_TRUSTED_TAIL="is not trusted: the trusted keys are $TRUSTED_ID (file /etc/turninit/trusted.pub, in the image): sign the manifest with one of them (oci/seal.sh --key)"
sigrow h-sig-wrong-key-id "$WORK/sig/wrong-key-id" "manifest: signature: key id $FLIPPED_ID $NOT_TRUSTED_TAIL"
sigrow h-sig-another-key "$WORK/m/other.json.minisig" "manifest: signature: key id $OTHER_ID $NOT_TRUSTED_TAIL"
sigfile relabelled "${O[0]}" "$RELABEL" "${O[2]}" "${O[3]}"
sigrow h-sig-another-key-relabelled "$WORK/sig/relabelled" "manifest: signature: the manifest's signature does not verify (it was changed after signing, or another key signed it)"
sigfile tc "${L[0]}" "${L[1]}" "${L[2]}!" "${L[3]}"
sigrow h-sig-tampered-trusted-comment "$WORK/sig/tc" "manifest: signature: trusted comment does not verify"
if begin h-sig-tampered-manifest; then
	sed 's/"uid":1000/"uid":1001/' "$WORK/m/good.json" >"$WORK/m/tampered.json"
	envfile tampered
	add_pair "$WORK/m/tampered.json" "$WORK/m/good.json.minisig"
	turn "$WORK/keys" -- 'echo RAN'
	refused "manifest: signature: the manifest's signature does not verify (it was changed after signing, or another key signed it)"
	end
fi
sigfile truncated-2 "${L[0]}" "${L[1]}"
sigrow h-sig-truncated-after-line-2 "$WORK/sig/truncated-2" "manifest: signature: line 3 is missing"
sigfile truncated-4 "${L[0]}" "${L[1]}" "${L[2]}" "${L[3]:0:40}"
sigrow h-sig-truncated-in-line-4 "$WORK/sig/truncated-4" "manifest: signature: line 4: global signature is 30 bytes, expected 64"
sigfile extra "${L[@]}" "extra line"
sigrow h-sig-extra-lines "$WORK/sig/extra" "manifest: signature: unexpected data after line 4"
sigfile bad-b64 "${L[0]}" "${L[1]:0:20}!${L[1]:21}" "${L[2]}" "${L[3]}"
sigrow h-sig-bad-base64 "$WORK/sig/bad-b64" "manifest: signature: line 2: bad base64"
if begin h-sig-env-bad-base64; then
	envfile sig-b64
	add "TURNINIT_MANIFEST=$(b64 "$WORK/m/good.json")" "TURNINIT_MANIFEST_SIG=dW50cnVzdGVk*"
	turn "$WORK/keys" -- 'echo RAN'
	refused "manifest: TURNINIT_MANIFEST_SIG: not valid base64"
	end
fi

if begin h-sig-env-too-large; then
	{ cat "$WORK/m/good.json.minisig"; head -c 4096 /dev/zero | tr '\0' '\n'; } >"$WORK/sig/too-large"
	envfile sig-large
	add_pair "$WORK/m/good.json" "$WORK/sig/too-large"
	turn "$WORK/keys" -- 'echo RAN'
	refused "manifest: TURNINIT_MANIFEST_SIG: larger than 4096 bytes"
	end
fi

# ---- the trust root: /etc/turninit/trusted.pub ---------------------------------------
keydir missing
keyrow h-keys-missing "trusted keys (no keys compiled in): /etc/turninit/trusted.pub: No such file or directory"
keydir empty
: >"$KD/trusted.pub"
keyrow h-keys-empty "trusted keys /etc/turninit/trusted.pub: public key: no key found"
keydir garbage-text
printf 'untrusted comment: x\nthis is not a key\n' >"$KD/trusted.pub"
keyrow h-keys-garbage-text "trusted keys /etc/turninit/trusted.pub: public key: line 2: bad base64"
keydir garbage-binary
printf '\x7fELF\x02\x01\x01\x00\x00garbage' >"$KD/trusted.pub"
keyrow h-keys-garbage-binary "trusted keys /etc/turninit/trusted.pub: public key: text contains a NUL byte"
keydir secret-key
cp "$VEC/test-trusted.key" "$KD/trusted.pub"
keyrow h-keys-secret-key-file "trusted keys /etc/turninit/trusted.pub: public key: line 2: key is 158 bytes, expected 42"
keydir directory
mkdir "$KD/trusted.pub"
keyrow h-keys-directory "trusted keys (no keys compiled in): /etc/turninit/trusted.pub: not a regular file"
keydir fifo
mkfifo "$KD/trusted.pub"
keyrow h-keys-fifo "trusted keys (no keys compiled in): /etc/turninit/trusted.pub: not a regular file"
keydir too-large
{ cat "$VEC/test-trusted.pub"; head -c 4096 /dev/zero | tr '\0' '\n'; } >"$KD/trusted.pub"
keyrow h-keys-too-large "trusted keys (no keys compiled in): /etc/turninit/trusted.pub: larger than 4096 bytes"
keydir several-none
cat "$VEC/test-other.pub" "$VEC/test-other.pub" >"$KD/trusted.pub"
keyrow h-keys-several-none-signed "manifest: signature: key id $TRUSTED_ID is not trusted: the trusted keys are $OTHER_ID, $OTHER_ID (file /etc/turninit/trusted.pub, in the image): sign the manifest with one of them (oci/seal.sh --key)"
keydir seventeen
for _ in $(seq 17); do cat "$VEC/test-other.pub"; done >"$KD/trusted.pub"
keyrow h-keys-seventeen "trusted keys /etc/turninit/trusted.pub: public key: line 34: more than 16 keys"
if begin h-keys-several-rotation-runs; then
	keydir several
	cat "$VEC/test-other.pub" "$VEC/test-trusted.pub" >"$KD/trusted.pub"
	envfile several
	add_pair "$WORK/m/good.json"
	turn "$KD" -- 'echo RAN'
	expect_rc 0
	expect_out $'RAN\n'
	expect_err ""
	end
fi

# ---- the caller's environment (one-shot: turninit's own) --------------------------------
# good.json: env.set PATH only, env.allow TZ and LC_*.
if begin h-env-empty-name; then
	envfile empty-name
	add_pair "$WORK/m/good.json"
	add "=x" "=" "TZ=UTC"
	turn "$WORK/keys" -- 'env | sort'
	expect_rc 0
	expect_out "${ENV_BASE/SHLVL=1/SHLVL=1$'\n'TZ=UTC}"$'\n'
	expect_err ""
	end
fi
if begin h-env-odd-bytes-in-names; then
	envfile odd
	add_pair "$WORK/m/good.json"
	printf 'LC_\001=b\0LC_\377=c\0LC_ ALL=d\0LC_ALL\n=e\0LC_\0NOEQUALS\0LC_ALL=C\0' >>"$EF"
	turn "$WORK/keys" -- 'env | sort'
	expect_rc 0
	expect_out "${ENV_BASE/HOME=\/home\/agent/HOME=/home/agent$'\n'LC_ALL=C}"$'\n'
	expect_err ""
	end
fi
if begin h-env-128k-value; then
	# MAX_ARG_STRLEN: 131072 bytes with the NUL, the longest entry execve takes.
	envfile big-value
	add_pair "$WORK/m/good.json"
	add "TZ=$(head -c 131068 /dev/zero | tr '\0' a)"
	turn "$WORK/keys" -- 'echo ${#TZ} ${TZ:0:3}'
	expect_rc 0
	expect_out $'131068 aaa\n'
	expect_err ""
	end
fi
if begin h-env-1mib-value-oneshot; then
	# No launcher can hand turninit a 1 MiB entry: the kernel refuses the exec.
	envfile mib-value
	add_pair "$WORK/m/good.json"
	add "TZ=$(head -c 1048576 /dev/zero | tr '\0' a)"
	turn "$WORK/keys" -- 'echo RAN'
	expect_rc 121
	expect_out ""
	expect_contains stderr "$ERR" "execve $BIN: Argument list too long"
	end
fi
if begin h-env-100000-variables; then
	envfile many
	add_pair "$WORK/m/good.json"
	seq -f 'V%06g=x' 1 50000 | tr '\n' '\0' >>"$EF"
	add "TZ=UTC" "LC_ALL=C"
	seq -f 'W%06g=x' 1 49998 | tr '\n' '\0' >>"$EF"
	t=$(now_ms)
	turn "$WORK/keys" -- 'env | sort'
	ms=$(($(now_ms) - t))
	expect_rc 0
	expect_out "$(printf '%s\n' "HOME=/home/agent" "LC_ALL=C" "PATH=/usr/bin:/bin" "PWD=/tmp" "SHLVL=1" "TZ=UTC" "_=/usr/bin/env")"$'\n'
	expect_err ""
	# a bound a loaded machine does not reach (the turn's hard timeout is 30 s);
	# the time seen is reported
	((ms < 25000)) || why "took $ms ms"
	echo "# h-env-100000-variables: the turn took $ms ms"
	end
fi

# ---- the command line ---------------------------------------------------------------------
arow() { # arow NAME ARG...: turninit ARG... with good.json
	begin "$1"
	envfile argv
	add_pair "$WORK/m/good.json"
	turn "$WORK/keys" "${@:2}"
}
if begin h-argv-empty; then
	arow h-argv-empty
	refused "no command given (try --help)"
	end
fi
if begin h-argv-dashdash-alone; then
	arow h-argv-dashdash-alone --
	refused "no command given (try --help)"
	end
fi
if begin h-argv-empty-string; then
	arow h-argv-empty-string -- ''
	expect_rc 0
	expect_out ""
	expect_err ""
	end
fi
if begin h-argv-empty-program; then
	arow h-argv-empty-program -- '' RAN
	expect_rc 127
	expect_out ""
	expect_err $'bash: line 1: exec: : not found\n'
	end
fi
if begin h-argv-unknown-option; then
	arow h-argv-unknown-option --no-such-option 'echo RAN'
	refused "unknown option --no-such-option (try --help)"
	end
fi
if begin h-argv-manifest-and-env-both; then
	arow h-argv-manifest-and-env-both --manifest /etc/turninit/manifest.json 'echo RAN'
	refused "manifest: both --manifest and TURNINIT_MANIFEST are given; give one"
	end
fi
if begin h-argv-manifest-path-control-bytes; then
	envfile none
	turn "$WORK/keys" --manifest $'/x\ny\e[31m' 'echo RAN'
	refused "manifest: /x?y?[31m: No such file or directory"
	end
fi
# C1 controls, U+0085 (NEL) and U+2028 (line separator) end a line for some
# readers (terminals, Python's splitlines): every byte outside printable ASCII
# shows as '?'.
if begin h-argv-manifest-path-unicode-line-ends; then
	envfile none
	turn "$WORK/keys" --manifest $'/x\xc2\x85INJECTED\xe2\x80\xa8turninit: fake\x9b2J' 'echo RAN'
	refused "manifest: /x??INJECTED???turninit: fake?2J: No such file or directory"
	end
fi
# Without CAP_KILL turninit could not end a command of another uid (timeout,
# cancel, end of turn): refused at start (--cap-drop KILL in podman).
if begin h-caps-without-kill; then
	envfile kill
	add_pair "$WORK/m/good.json"
	run_cmd timeout -k 5 30 unshare --pid --fork --kill-child --mount-proc \
		sh "$NS" pid1 "$WORK/keys" "$WORK/left" setpriv --bounding-set=-kill --inh-caps=-all \
		"$RAWENV" "$EF" "$BIN" -- 'echo RAN'
	refused "capabilities: running without CAP_KILL, turninit cannot lock a command down or end it (securebits, bounding set, uid change, signals): keep them in the container's capabilities (Kubernetes: add SETPCAP, SETUID, SETGID, KILL)"
	end
fi
if begin h-argv-option-without-value; then
	arow h-argv-option-without-value --manifest
	refused "--manifest needs a value"
	end
fi

# ---- serve: bad requests, and the turn goes on ------------------------------------------
# srow NAME CASE [MANIFEST]: tests/hostile/serve_row.py CASE against `turninit
# serve` with the manifest MANIFEST.json: good (the default limits: no command
# here meets its timeout, however slow the machine), or serve (limits.timeout_s
# 2). OUT: the events, the good exec, the exit status of serve; ERR: serve's
# own log.
srow() {
	begin "$1"
	envfile serve
	add_pair "$WORK/m/${3:-good}.json"
	run_cmd timeout -k 5 180 "$PY" "$ROOT/tests/hostile/serve_row.py" "$2" -- \
		timeout -k 5 170 unshare --pid --fork --kill-child --mount-proc \
		sh "$NS" pid1 "$WORK/keys" "$WORK/left" "$RAWENV" "$EF" "$BIN" serve
	[[ $ERR =~ ^turninit:\ serve:\ ready,\ reading\ requests\ on\ stdin\;\ landlock:\ ABI\ [0-9]+\ enforced$'\n'$ ]] \
		|| why "serve's stderr is not its one ready line"
}
# sexpect EVENT_LINES: OUT is those lines, then the good exec and serve's status 0.
sexpect() {
	expect_out "$1"$'\n'"alive: 'alive\\n' code=0"$'\n'"serve status 0"$'\n'
	end
}
EXIT0='"code":0,"signal":null,"timed_out":false,"truncated":false,"duration_ms":0}'

begin h-proto-invalid-json && { srow h-proto-invalid-json invalid-json
	sexpect '{"event":"error","id":null,"message":"request: not a JSON object: '\''}'\'' expected near end of file"}'; }
begin h-proto-line-2mib && { srow h-proto-line-2mib line-2mib
	sexpect '{"event":"error","id":null,"message":"request: line longer than 1048576 bytes"}'; }
begin h-proto-unknown-op && { srow h-proto-unknown-op unknown-op
	sexpect '{"event":"error","id":"u1","message":"request: unknown op run (exec, cancel, signal, info, credential)"}'; }
begin h-proto-missing-id && { srow h-proto-missing-id missing-id
	sexpect '{"event":"error","id":null,"message":"request: id must be a string of 1 to 128 characters from [A-Za-z0-9._:-]"}'; }
begin h-proto-duplicate-running-id && { srow h-proto-duplicate-running-id duplicate-running-id
	sexpect '{"event":"started","id":"d1","pid":0}
{"event":"error","id":"d1","message":"exec: id d1 is already running or waiting"}
{"event":"exit","id":"d1","code":null,"signal":15,"timed_out":false,"truncated":false,"duration_ms":0}'; }
# An error message cut at its 512-byte bound inside a UTF-8 character (a cwd
# of 300 two- and three-byte characters): the exec is still answered.
begin h-proto-error-cut-in-utf8 && { srow h-proto-error-cut-in-utf8 cwd-utf8-long
	exp=$("$PY" -c 'import json
m = "exec: cwd /a" + "\u00e9" * 300
b = m.encode()[:511]
print(json.dumps({"event": "error", "id": "w1", "message": b.decode("utf-8", "ignore")},
                 separators=(",", ":")))')
	sexpect "$exp"; }
# listen: a peer that stops reading (small receive buffer, 3 MB of output
# queued, its write side shut) holds neither another connection nor a new one,
# and SIGTERM still ends the server within its 5 s drain bound.
if begin h-listen-peer-never-reads; then
	CALLDUP=("the listen server did not start")
	# Writable: HOME only, so that the socket's directory (in the clone's
	# build/, which may lie below /tmp) is outside the writable set.
	manifest listen "{$HD,\"env\":{$ST,\"allow\":[\"TZ\"]},\"landlock\":{\"writable\":[\"/home/agent\"]},\"callers\":{\"uids\":[0]}}"
	envfile listen
	add_pair "$WORK/m/listen.json"
	rm -f "$WORK/listen.sock"
	timeout -k 5 300 unshare --pid --fork --kill-child --mount-proc sh "$NS" pid1 "$WORK/keys" \
		"$WORK/left" "$RAWENV" "$EF" "$BIN" listen --socket "$WORK/listen.sock" \
		</dev/null >/dev/null 2>"$WORK/listen.err" &
	LBG=$!
	if wait_for 60 test -S "$WORK/listen.sock"; then
		# `turninit call` with TZ given twice: the first wins, as in one-shot mode.
		envfile calldup
		add TZ=first TZ=second
		run_cmd timeout -k 5 60 "$RAWENV" "$EF" "$BIN" call --socket "$WORK/listen.sock" --env TZ -- 'echo "$TZ"'
		expect_rc 0
		expect_out $'first\n'
		CALLDUP=("${T_WHY[@]}")
		T_WHY=()
		run_cmd timeout -k 5 200 "$PY" "$ROOT/tests/hostile/stall.py" "$WORK/listen.sock"
		printf '%s' "$ERR" | grep '^# ' || true
		[[ $OUT =~ ^B:\ alive\ code=0\ in\ [0-9]+\ ms$'\n'C:\ alive\ code=0\ in\ [0-9]+\ ms$'\n'$ ]] \
			|| why "B and C did not both get their exit event"
	else
		why "no listen socket within 60 s"
	fi
	us=$(pgrep -P "$LBG" -x unshare)
	p1=$(pgrep -P "${us:-0}")
	t=$(now_ms)
	[[ -n $p1 ]] && kill -TERM "$p1"
	wait "$LBG"
	RC=$?
	t=$(($(now_ms) - t))
	[[ $RC == 143 || $RC == 0 ]] || why "listen ended with status $RC after SIGTERM"
	# its drain is bounded (5 s); the bound here only catches a hang
	((t < 60000)) || why "listen took $t ms to end after SIGTERM"
	echo "# h-listen-peer-never-reads: listen ended $t ms after SIGTERM"
	end
	begin h-call-env-duplicate-first-wins
	T_WHY=("${CALLDUP[@]}")
	CMD="rawenv TZ=first TZ=second turninit call --socket listen.sock --env TZ -- 'echo \"\$TZ\"'"
	end
fi
begin h-proto-cancel-unknown-id && { srow h-proto-cancel-unknown-id cancel-unknown-id
	sexpect '{"event":"error","id":"nope","message":"cancel: no running command nope"}'; }
begin h-proto-bad-base64 && { srow h-proto-bad-base64 bad-base64
	sexpect '{"event":"error","id":"b1","message":"exec: stdin is not valid base64"}'; }
begin h-proto-timeout-negative && { srow h-proto-timeout-negative timeout-negative
	sexpect '{"event":"error","id":"t1","message":"exec: timeout_s must be an integer of at least 1"}'; }
begin h-proto-timeout-zero && { srow h-proto-timeout-zero timeout-zero
	sexpect '{"event":"error","id":"t0","message":"exec: timeout_s must be an integer of at least 1"}'; }
begin h-proto-timeout-beyond-int64 && { srow h-proto-timeout-beyond-int64 timeout-beyond-int64
	sexpect '{"event":"error","id":null,"message":"request: not a JSON object: too big integer near '\''99999999999999999999'\''"}'; }
begin h-proto-timeout-huge-capped && { srow h-proto-timeout-huge-capped timeout-huge serve
	sexpect '{"event":"started","id":"t3","pid":0}
{"event":"exit","id":"t3","code":null,"signal":15,"timed_out":true,"truncated":false,"duration_ms":0}'; }
begin h-proto-argv-empty && { srow h-proto-argv-empty argv-empty
	sexpect '{"event":"error","id":"a1","message":"exec: argv must be a non-empty array of strings"}'; }
begin h-proto-argv-empty-string && { srow h-proto-argv-empty-string argv-empty-string
	sexpect '{"event":"started","id":"a2","pid":0}
{"event":"output","id":"a2","stream":"stderr","text":"bash: line 1: exec: : not found\n"}
{"event":"exit","id":"a2","code":127,"signal":null,"timed_out":false,"truncated":false,"duration_ms":0}'; }
begin h-proto-argv-one-word-not-parsed && { srow h-proto-argv-one-word-not-parsed argv-one-word
	sexpect '{"event":"started","id":"a4","pid":0}
{"event":"output","id":"a4","stream":"stderr","text":"bash: line 1: exec: echo RAN; echo $HOME: not found\n"}
{"event":"exit","id":"a4","code":127,"signal":null,"timed_out":false,"truncated":false,"duration_ms":0}'; }
begin h-proto-command-empty-string && { srow h-proto-command-empty-string command-empty-string
	sexpect '{"event":"started","id":"a3","pid":0}
{"event":"exit","id":"a3",'"$EXIT0"; }
begin h-proto-env-empty-name && { srow h-proto-env-empty-name env-empty-name
	sexpect '{"event":"started","id":"e1","pid":0}
{"event":"output","id":"e1","stream":"stdout","text":"HOME=/home/agent\nPATH=/usr/bin:/bin\nPWD=/tmp\nSHLVL=1\nTZ=UTC\n_=/usr/bin/env\n"}
{"event":"exit","id":"e1",'"$EXIT0"; }
begin h-proto-env-odd-names && { srow h-proto-env-odd-names env-odd-names
	sexpect '{"event":"started","id":"e1","pid":0}
{"event":"output","id":"e1","stream":"stdout","text":"HOME=/home/agent\nLC_ALL=C\nPATH=/usr/bin:/bin\nPWD=/tmp\nSHLVL=1\n_=/usr/bin/env\n"}
{"event":"exit","id":"e1",'"$EXIT0"; }
begin h-proto-env-nul-in-name && { srow h-proto-env-nul-in-name env-nul-in-name
	sexpect '{"event":"error","id":null,"message":"request: not a JSON object: NUL byte in object key not supported near '\''\\x22TZ\\x5cu0000X\\x22'\''"}'; }
begin h-proto-env-1mib-value && { srow h-proto-env-1mib-value env-1mib-value
	sexpect '{"event":"error","id":"v1","message":"exec: exec /bin/bash: Argument list too long"}'; }
begin h-proto-env-100000-variables && { srow h-proto-env-100000-variables env-100000-variables
	sexpect '{"event":"started","id":"e1","pid":0}
{"event":"output","id":"e1","stream":"stdout","text":"HOME=/home/agent\nPATH=/usr/bin:/bin\nPWD=/tmp\nSHLVL=1\nTZ=UTC\n_=/usr/bin/env\n"}
{"event":"exit","id":"e1",'"$EXIT0"; }

# The end of stdin in the same poll round as the last command's end
# (tests/hostile/eof_race.py holds turninit with SIGSTOP until both wait): the
# turn ends. It used to hang: the connection was closed with the command, and
# nothing ended the turn. The manifest good: no timeout meets the command
# while eof_race.py holds it.
if begin h-serve-eof-with-the-last-exit; then
	envfile serve
	add_pair "$WORK/m/good.json"
	run_cmd timeout -k 5 200 "$PY" "$ROOT/tests/hostile/eof_race.py" -- \
		timeout -k 5 190 unshare --pid --fork --kill-child --mount-proc \
		sh "$NS" pid1 "$WORK/keys" "$WORK/left" "$RAWENV" "$EF" "$BIN" serve
	expect_out '{"event":"started","id":"x","pid":0}
{"event":"exit","id":"x",'"$EXIT0"'
serve status 0
'
	end
fi

if begin h-serve-bad-manifest-refused; then
	manifest serve-expired "{${HD/2099-01-01/2020-01-01},\"env\":{$ST}}"
	envfile serve-expired
	add_pair "$WORK/m/serve-expired.json"
	run_input '{"op":"exec","id":"x","command":"echo RAN"}'$'\n' \
		timeout -k 5 30 unshare --pid --fork --kill-child --mount-proc \
		sh "$NS" pid1 "$WORK/keys" "$WORK/left" "$RAWENV" "$EF" "$BIN" serve
	refused "manifest: expired at 2020-01-01T00:00:00Z"
	end
fi

# ---- places a command could write: the audit log fd and the listen socket ---------------
# The manifest "place": HOME and $P/w writable, nothing else (not /tmp: the clone,
# and so $P, may lie below /tmp), TZ admitted, callers.uids [0]. $P/logd is
# root's, mode 0755: a good place; $P/owned is the command uid's; $P/open is mode 0777.
P=$WORK/p
mkdir -p "$P/w" "$P/logd" "$P/owned" "$P/open"
chmod 0755 "$P" "$P/w" "$P/logd" "$P/owned"
chown 1000:1000 "$P/owned"
chmod 0777 "$P/open"
manifest place "{$HD,\"env\":{$ST,\"allow\":[\"TZ\"]},\"landlock\":{\"writable\":[\"/home/agent\",\"$P/w\"]},\"callers\":{\"uids\":[0]}}"
PREQ='{"op":"exec","id":"r","command":"echo RAN"}'$'\n'
WITHFD=("$PY" "$ROOT/tests/hostile/withfd.py")
# The events serve answers PREQ with, when it runs: the request ran.
RAN_EVENTS='"event":"started","id":"r"'
# place_argv ARG...: PA, turninit ARG... with the manifest "place" in its namespaces.
place_argv() {
	envfile place
	add_pair "$WORK/m/place.json"
	PA=(timeout -k 5 90 unshare --pid --fork --kill-child --mount-proc
		sh "$NS" pid1 "$WORK/keys" "$WORK/left" "$RAWENV" "$EF" "$BIN" "$@")
}
# log_events FILE: the event names of an audit log, one line.
log_events() {
	"$PY" -c 'import json, sys
print(" ".join(json.loads(l)["event"] for l in open(sys.argv[1])))' "$1" 2>&1
}
# frow NAME MESSAGE KIND ARG...: serve --audit-log fd:3, fd 3 set up by
# withfd.py KIND ARG..., is refused with MESSAGE; the exec on stdin never runs.
# FD_WRAP (an array, empty unless set): a command withfd.py runs under.
FD_WRAP=()
frow() {
	begin "$1" || return 0
	local msg=$2
	shift 2
	place_argv serve --audit-log fd:3
	run_input "$PREQ" "${FD_WRAP[@]}" "${WITHFD[@]}" "$@" -- "${PA[@]}"
	refused "$msg"
	end
}
frow h-audit-fd-file-in-writable "audit log fd:3: is $P/w/a.jsonl, inside $P/w, which commands may write" \
	file "$P/w/a.jsonl"
frow h-audit-fd-file-dir-owned-by-uid \
	"audit log fd:3: its directory $P/owned is owned by uid 1000 or writable by group or others" \
	file "$P/owned/a.jsonl"
frow h-audit-fd-file-dir-world-writable \
	"audit log fd:3: its directory $P/open is owned by uid 1000 or writable by group or others" \
	file "$P/open/a.jsonl"
frow h-audit-fd-file-deleted \
	"audit log fd:3: a deleted file ($P/logd/deleted.jsonl (deleted)), which no one could read back" \
	deleted "$P/logd/deleted.jsonl"
mkdir -p "$P/logd/det"
FD_WRAP=(unshare --mount --propagation private)
frow h-audit-fd-file-unresolvable \
	"audit log fd:3: cannot check where it is: /a.jsonl names another file or none (give a path in the container, a pipe or a socket)" \
	detached "$P/logd/det"
FD_WRAP=()
rm -f "$P/w/fifo" "$P/logd/fifo-644"
mkfifo -m 0600 "$P/w/fifo"
mkfifo -m 0644 "$P/logd/fifo-644"
frow h-audit-fd-fifo-in-writable "audit log fd:3: is $P/w/fifo, inside $P/w, which commands may write" \
	fifo "$P/w/fifo" "$WORK/fifo-w.out"
frow h-audit-fd-fifo-readable \
	"audit log fd:3: a FIFO readable by group or others: a command could open it and take lines from its reader" \
	fifo "$P/logd/fifo-644" "$WORK/fifo-644.out"
frow h-audit-fd-eventfd "audit log fd:3: not a file, a pipe or a socket" eventfd

# run_session REQUEST ID CMD...: run CMD (a serve) with REQUEST on stdin, kept
# open until CMD has written the exit event of ID (60 s bound), so that the end
# of stdin comes after the command's end, not with it; RC, OUT, ERR as run_cmd.
run_session() {
	local req=$1 id=$2
	shift 2
	CMD="printf %s $(printf '%q' "$req") (until the exit event of $id) | $(printf '%q ' "$@")"
	: >"$WORK/stdout"
	{
		printf '%s' "$req"
		wait_for 60 grep -q "\"event\":\"exit\",\"id\":\"$id\"" "$WORK/stdout"
	} | "$@" >>"$WORK/stdout" 2>"$WORK/stderr"
	RC=$?
	slurp "$WORK/stdout" OUT
	slurp "$WORK/stderr" ERR
}
# faccept NAME OUT KIND ARG...: the same, accepted: the exec runs, and OUT (the
# log, or what a reader child copied from fd 3) gets every line of the turn.
faccept() {
	begin "$1" || return 0
	local out=$2
	shift 2
	rm -f "$out"
	place_argv serve --audit-log fd:3
	run_session "$PREQ" r "${WITHFD[@]}" "$@" -- "${PA[@]}"
	expect_rc 0
	expect_contains stdout "$OUT" "$RAN_EVENTS"
	wait_for 60 grep -q '"turn_end"' "$out" || why "no turn_end line in $out within 60 s"
	eq "the log's events" "$(log_events "$out")" "turn_start exec exit turn_end"
	end
}
faccept h-audit-fd-file-accepted "$P/logd/ok.jsonl" file "$P/logd/ok.jsonl"
faccept h-audit-fd-pipe-accepted "$WORK/pipe.out" pipe "$WORK/pipe.out"
faccept h-audit-fd-socket-accepted "$WORK/socket.out" socket "$WORK/socket.out"
rm -f "$P/logd/fifo"
mkfifo -m 0600 "$P/logd/fifo"
faccept h-audit-fd-fifo-accepted "$WORK/fifo.out" fifo "$P/logd/fifo" "$WORK/fifo.out"

# The exec line names what the filter admitted (TZ), not what the request offered.
if begin h-audit-env-names-filtered; then
	rm -f "$P/logd/names.jsonl"
	place_argv serve --audit-log "$P/logd/names.jsonl"
	run_session '{"op":"exec","id":"n","command":"true","env":{"GH_TOKEN":"x","TZ":"UTC","LD_PRELOAD":"/x.so","PATH":"/evil","HOME":"/root","LC_ALL":"C"}}'$'\n' \
		n "${PA[@]}"
	expect_rc 0
	got=$("$PY" -c 'import json, sys
print(json.dumps([e["env_names"] for e in map(json.loads, open(sys.argv[1])) if e["event"] == "exec"]))' \
		"$P/logd/names.jsonl" 2>&1)
	eq "env_names of the exec lines" "$got" '[["TZ"]]'
	end
fi

# lrow NAME SOCKET MESSAGE: listen --socket SOCKET is refused with MESSAGE, and
# makes no socket; verify --socket SOCKET says the same line, exit 125, the
# policy printed, and makes nothing either.
lrow() {
	begin "$1" || return 0
	rm -f "$2"
	place_argv listen --socket "$2"
	run_cmd "${PA[@]}"
	refused "$3"
	[[ -e $2 ]] && why "$2 was made"
	place_argv verify --socket "$2"
	run_cmd "${PA[@]}"
	expect_rc 125
	expect_err "turninit: $3"$'\n'
	expect_contains "verify's stdout" "$OUT" '"mode": "refused"'
	[[ -e $2 ]] && why "verify made $2"
	end
}
lrow h-listen-socket-dir-in-writable "$P/w/s.sock" \
	"listen: socket $P/w/s.sock: its directory $P/w is inside $P/w, which commands may write"
lrow h-listen-socket-dir-owned-by-uid "$P/owned/s.sock" \
	"listen: socket $P/owned/s.sock: its directory $P/owned is owned by uid 1000 or writable by group or others"
lrow h-listen-socket-dir-world-writable "$P/open/s.sock" \
	"listen: socket $P/open/s.sock: its directory $P/open is owned by uid 1000 or writable by group or others"
rm -f "$P/logd/wlink"
ln -s "$P/w" "$P/logd/wlink"
lrow h-listen-socket-dir-link-into-writable "$P/logd/wlink/s.sock" \
	"listen: socket $P/logd/wlink/s.sock: its directory $P/logd/wlink is $P/w, inside $P/w, which commands may write"
# A link in the writable set that leads out of it: a command could point it elsewhere.
rm -f "$P/w/outlink"
ln -s "$P/logd" "$P/w/outlink"
lrow h-listen-socket-dir-link-from-writable "$P/w/outlink/s.sock" \
	"listen: socket $P/w/outlink/s.sock: its directory $P/w/outlink is inside $P/w, which commands may write"
lrow h-listen-socket-dir-missing "$P/none/s.sock" \
	"listen: socket $P/none/s.sock: its directory $P/none: No such file or directory"
# A relative path: turninit works from /, where it would have made the socket.
lrow h-listen-socket-relative turninit-hostile-relative.sock \
	"listen: socket turninit-hostile-relative.sock: expected an absolute path"
[[ -S /turninit-hostile-relative.sock ]] && rm -f /turninit-hostile-relative.sock

# listen_start SOCKET [WRAP...]: listen --socket SOCKET (the manifest "place")
# in the background under WRAP, stderr to $WORK/listen-bg.err; LBG its pid.
listen_start() {
	local sock=$1
	shift
	rm -f "$sock"
	place_argv listen --socket "$sock"
	"$@" "${PA[@]}" </dev/null >/dev/null 2>"$WORK/listen-bg.err" &
	LBG=$!
}
# pid_named ROOT COMM: the first descendant of ROOT whose comm is COMM.
pid_named() {
	local p c
	for p in $(pgrep -P "$1"); do
		if [[ $(cat "/proc/$p/comm" 2>/dev/null) == "$2" ]]; then
			echo "$p"
			return 0
		fi
		c=$(pid_named "$p" "$2") && { echo "$c"; return 0; }
	done
	return 1
}
# listen_stop: SIGTERM to listen_start's turninit (PID 1 of its namespace), and wait.
listen_stop() {
	local p1
	p1=$(pid_named "$LBG" turninit) && kill -TERM "$p1"
	wait "$LBG"
}
# The socket is made mode 0666 by bind(2) under a umask (and in a good place, taken).
if begin h-listen-socket-mode-0666; then
	listen_start "$P/logd/mode.sock"
	CMD="turninit listen --socket $P/logd/mode.sock; stat"
	if wait_for 60 test -S "$P/logd/mode.sock"; then
		eq "the socket" "$(stat -c '%F %a %u' "$P/logd/mode.sock")" "socket 666 0"
	else
		why "no socket within 60 s: $(cat "$WORK/listen-bg.err")"
	fi
	listen_stop
	end
fi
# Nothing is done by path after bind(2): a symlink put at the path meanwhile
# (strace holds the syscall after bind for 5 s: time enough to swap on a loaded
# machine) is not followed. It used to be chmod(path, 0666), which as root
# made the link's target mode 0666.
if begin h-listen-socket-no-chmod-through-symlink; then
	printf 'keep\n' >"$P/logd/target"
	chmod 0600 "$P/logd/target"
	listen_start "$P/logd/race.sock" strace -f -qq -o /dev/null \
		-e trace=chmod,fchmodat,listen -e inject=chmod,fchmodat,listen:delay_enter=5000000
	CMD="strace (a delay after bind) turninit listen --socket $P/logd/race.sock; the socket swapped for a symlink to $P/logd/target"
	run_cmd "$PY" -c 'import os, stat, sys, time
sock, target = sys.argv[1], sys.argv[2]
end = time.monotonic() + 60
while time.monotonic() < end:
    try:
        if stat.S_ISSOCK(os.lstat(sock).st_mode):
            os.unlink(sock)
            os.symlink(target, sock)
            print("swapped")
            sys.exit(0)
    except FileNotFoundError:
        pass
    time.sleep(0.001)
print("no socket within 60 s")' "$P/logd/race.sock" "$P/logd/target"
	expect_out $'swapped\n'
	# Set up: the landlock line comes after the socket (and, before, the chmod).
	wait_for 60 grep -q 'landlock:' "$WORK/listen-bg.err" || why "listen did not come up: $(cat "$WORK/listen-bg.err")"
	eq "the target's mode" "$(stat -c %a "$P/logd/target")" 600
	listen_stop
	end
fi

# The SO_PEERCRED self-test's abstract socket is visible to the whole network
# namespace (/proc/net/unix; a pod's containers share it): a process that
# connects first, three times and holds them, must neither pass the check nor
# hang it (it waited in waitpid while its child blocked on the full backlog).
# strace delays every clone 3 s so that the jammer's connections come first.
if begin h-listen-peercred-check-jammed; then
	"$PY" -c 'import socket, sys, time
end = time.monotonic() + 60
held = []
while time.monotonic() < end and not held:
    for line in open("/proc/net/unix"):
        f = line.split()
        if len(f) > 7 and f[7].startswith("@turninit-peercred-"):
            for _ in range(3):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(1)
                try:
                    s.connect("\0" + f[7][1:])
                    held.append(s)
                except OSError:
                    pass
            break
    time.sleep(0.0005)
print("jammed %d" % len(held), flush=True)
time.sleep(30)' >"$WORK/jammer.out" 2>&1 &
	JAM=$!
	listen_start "$P/logd/jam.sock" strace -f -qq -o /dev/null \
		-e trace=clone,clone3,fork,vfork -e inject=clone,clone3,fork,vfork:delay_enter=3000000
	CMD="a jammer holding 3 connections to the SO_PEERCRED test socket; turninit listen --socket $P/logd/jam.sock under strace (clone delayed 3 s)"
	wait_for 90 grep -q 'landlock:' "$WORK/listen-bg.err" || why "listen did not come up: $(cat "$WORK/listen-bg.err")"
	wait_for 30 test -s "$WORK/jammer.out"
	eq "the jammer" "$(cat "$WORK/jammer.out")" "jammed 3"
	listen_stop
	kill "$JAM" 2>/dev/null
	wait "$JAM" 2>/dev/null
	end
fi

# turninit call against a server that is not turninit (tests/hostile/fake_server.py).
# fake_start NAME [UID]: the server on $P/logd/NAME.sock (FS), in the background
# (FAKE: its pid); what it reads goes to $WORK/NAME.req (FO).
fake_start() {
	FS=$P/logd/$1.sock FO=$WORK/$1.req
	rm -f "$FS" "$FO" "$FO.ready"
	timeout -k 5 40 "$PY" "$ROOT/tests/hostile/fake_server.py" "$FS" "$FO" ${2:+"$2"} &
	FAKE=$!
	wait_for 60 test -e "$FO.ready" || why "the fake server did not start"
}
# fake_stop: the server ends once its one connection is over (or it is killed).
fake_stop() {
	kill "$FAKE" 2>/dev/null
	wait "$FAKE" 2>/dev/null
}
# req_env: the request the server read, its env as JSON ("absent" without one).
req_env() {
	"$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(json.dumps(r["env"]) if "env" in r else "absent")' "$FO" 2>&1
}
# crow NAME UID MESSAGE ARG...: `turninit call ARG... --socket FS -- 'echo RAN'`
# (environment TZ=UTC), the server's uid UID, is refused with MESSAGE, and sends
# nothing (checked when the server got a connection at all).
crow() {
	begin "$1" || return 0
	local name=$1 uid=$2 msg=$3
	shift 3
	fake_start "$name" "$uid"
	envfile call
	add TZ=UTC
	run_cmd timeout -k 5 20 "$RAWENV" "$EF" "$BIN" call --socket "$FS" "$@" -- 'echo RAN'
	refused "${msg//@FS@/$FS}"
	fake_stop
	[[ -s $FO ]] && why "call sent: $(head -c 200 "$FO")"
	end
}
crow h-call-server-uid-refused 1000 \
	"call: the server at @FS@ runs as uid 1000, not uid 0: it is not turninit listen, which runs as root, and may be a command's own server (--server-uid names another uid)"
crow h-call-env-bad-name "" '--env: "A B" is not a variable name ([A-Za-z_][A-Za-z0-9_]*)' --env 'A B=x'
# 300 bytes: longer than any name (255 at most), not a name cut to 255
A300=$(printf 'A%.0s' $(seq 300))
crow h-call-env-name-too-long "" "--env: \"${A300:0:64}\" is not a variable name ([A-Za-z_][A-Za-z0-9_]*)" \
	--env "$A300=x"
crow h-call-env-given-twice "" "--env TZ: given twice" --env TZ --env TZ=x
crow h-call-env-not-utf8 "" "call: --env TZ: the value is not valid UTF-8" --env $'TZ=\xff'
crow h-call-server-uid-bad-value "" "--server-uid takes a uid from 0 to 4294967294" --server-uid -1
if begin h-call-server-uid-named-accepted; then
	fake_start call-named 1000
	envfile call
	run_cmd timeout -k 5 20 "$RAWENV" "$EF" "$BIN" call --socket "$FS" --server-uid 1000 -- 'echo RAN'
	expect_rc 0
	expect_out ""
	expect_err ""
	fake_stop
	eq "the request" "$(head -c 200 "$FO")" '{"op":"exec","id":"call","command":"echo RAN"}'
	end
fi
# Only the names asked for are sent: the value of --env NAME from call's
# environment, --env NAME=VALUE as given; a name not set is left out.
if begin h-call-sends-only-named-env; then
	fake_start call-env
	envfile call-env
	add TZ=UTC GH_TOKEN=secret-value LC_ALL=C
	run_cmd timeout -k 5 20 "$RAWENV" "$EF" "$BIN" call --socket "$FS" --env TZ \
		-e LC_ALL=POSIX --env NOT_SET -e LANG=C.UTF-8 -- 'echo RAN'
	expect_rc 0
	fake_stop
	eq "the request's env" "$(req_env)" '{"TZ": "UTC", "LC_ALL": "POSIX", "LANG": "C.UTF-8"}'
	grep -q secret-value "$FO" && why "the request holds GH_TOKEN's value"
	end
fi
if begin h-call-sends-no-env-unless-named; then
	fake_start call-noenv
	envfile call-noenv
	add TZ=UTC GH_TOKEN=secret-value
	run_cmd timeout -k 5 20 "$RAWENV" "$EF" "$BIN" call --socket "$FS" -- 'echo RAN'
	expect_rc 0
	fake_stop
	eq "the request's env" "$(req_env)" absent
	end
fi
if begin h-call-options-without-call; then
	arow h-call-options-without-call --env TZ -- 'echo RAN'
	refused "--env and --server-uid go with call"
	end
fi
# mcp's options: the bridge (--socket) holds no policy; serve takes no socket.
if begin h-mcp-bridge-with-policy; then
	arow h-mcp-bridge-with-policy mcp --socket /run/x.sock --audit-log /tmp/a.log
	refused "mcp --socket holds no policy: --manifest, --audit-log and --credentials go with the listen server"
	end
fi
if begin h-mcp-call-options; then
	arow h-mcp-call-options mcp --timeout 5
	refused "--timeout and --stdin go with call"
	end
fi
if begin h-mcp-server-uid-without-socket; then
	arow h-mcp-server-uid-without-socket mcp --server-uid 0
	refused "--server-uid goes with call or mcp --socket"
	end
fi
if begin h-serve-socket; then
	arow h-serve-socket serve --socket /run/x.sock
	refused "--socket goes with listen, call or mcp"
	end
fi

# ---- the table ----------------------------------------------------------------------------
# doc_check DOC: print each test a row of DOC names that no test in tests/ has
# (a `begin NAME` or `tls_begin NAME` of a suite, or a cmocka_unit_test(NAME)), and each test of
# this suite with no row. Prints nothing when the table and the tests agree.
doc_check() {
	local doc=$1 names n
	names=$(grep -E '^\| `' "$doc" | cut -d'|' -f2 | grep -oE '`[A-Za-z0-9_.-]+`' | tr -d '`' | sort -u)
	for n in $names; do
		grep -qE "(^|[[:space:]{])(begin|kernel_test|podman_test|tls_begin|arow|srow|mrow|sigrow|keyrow|frow|faccept|lrow|crow|listen_test) $n( |;|\$)|cmocka_unit_test\\($n\\)" \
			"$ROOT"/tests/integration/*.sh "$ROOT"/tests/unit/*.c \
			|| echo "row names $n: no such test"
	done
	# shellcheck disable=SC2013 # test names are words
	for n in $(grep -oE '(^|[[:space:]{])(begin|kernel_test|podman_test|arow|srow|mrow|sigrow|keyrow|frow|faccept|lrow|crow) h-[a-z0-9-]+' "$HERE/hostile.sh" \
		| awk '{print $2}' | sort -u); do
		grep -qx "$n" <<<"$names" || echo "test $n: no row"
	done
}
if begin h-doc-table-matches-tests; then
	# shellcheck disable=SC2034 # shown by end
	CMD="doc_check docs/hostile-input.md"
	if [[ ! -r $DOC ]]; then
		why "$DOC missing"
	else
		OUT=$(doc_check "$DOC")
		[[ -z $OUT ]] || OUT+=$'\n'
		[[ -z $OUT ]] || why "table and tests disagree"
		# The check itself can fail: a row naming a test that does not exist.
		{ cat "$DOC"; echo '| `h-no-such-test` | x | y |'; } >"$WORK/doc-bad.md"
		bad=$(doc_check "$WORK/doc-bad.md")
		[[ $bad == *"row names h-no-such-test: no such test"* ]] \
			|| why "doc_check misses a row without a test"
	fi
	end
fi

echo "# suite ran in $(($(now_ms) - T0)) ms"
results
