/* signature.h - minisign public keys and signatures (Ed25519, BLAKE2b-512).
 *
 * Owns parsing of minisign public key files and .minisig files and their
 * verification over exact bytes. Pure: bytes in, verdict out (libsodium).
 * Source: minisign's documentation, "Signature format" and "Public key format"
 * (https://jedisct1.github.io/minisign/).
 */
#ifndef TURNINIT_SIGNATURE_H
#define TURNINIT_SIGNATURE_H

#include <stddef.h>
#include <stdint.h>

#include "policy/error.h"

#define SIG_KEY_ID_BYTES 8
#define SIG_PK_BYTES 32
#define SIG_MAX_KEYS 16
#define SIG_TRUSTED_COMMENT_MAX 1024 /* bytes, without the "trusted comment: " prefix */
#define SIG_MAX_FILE_BYTES 4096      /* a .minisig or .pub file larger than this is refused */

struct sig_pubkey {
	uint8_t key_id[SIG_KEY_ID_BYTES]; /* as stored in the key, little-endian on display */
	uint8_t pk[SIG_PK_BYTES];
};

struct sig_keyring {
	struct sig_pubkey keys[SIG_MAX_KEYS];
	size_t n;
};

struct sig_result {
	uint8_t key_id[SIG_KEY_ID_BYTES]; /* the key that verified */
	char alg[3];                      /* "ED" (prehashed BLAKE2b-512) or "Ed" (legacy) */
	char trusted_comment[SIG_TRUSTED_COMMENT_MAX + 1];
};

/* sig_parse_pubkeys - parse minisign public keys into ring (appending).
 * text: one or more keys; each is either an "untrusted comment:" line followed by
 * the base64 line, or a lone base64 line (as `minisign -P` takes). Blank lines are
 * skipped. The base64 decodes to exactly 42 bytes: "Ed" || key_id[8] || pk[32].
 * Errors: -EINVAL malformed (bad base64, wrong length or algorithm, comment line
 * with no key), -E2BIG more than SIG_MAX_KEYS keys or text over SIG_MAX_FILE_BYTES,
 * -ENOKEY no key at all. ring is left unchanged on error. */
int sig_parse_pubkeys(const char *text, size_t len, struct sig_keyring *ring, struct tn_error *err);

/* sig_verify - verify a minisign signature file over the exact bytes msg[0..msg_len).
 * sig_text: the four-line .minisig file: "untrusted comment: ...",
 * base64(alg[2] || key_id[8] || sig[64]), "trusted comment: TEXT",
 * base64(global_sig[64]) over sig[64] || TEXT. alg "ED" signs BLAKE2b-512(msg),
 * "Ed" signs msg itself. The key id must be in ring before anything is verified;
 * both signatures must verify. A trailing newline after line 4 is allowed.
 * Errors: -EBADMSG malformed file (missing line, bad prefix, bad base64, wrong
 * length, unknown algorithm, over SIG_MAX_FILE_BYTES), -ENOKEY key id not trusted,
 * -EKEYREJECTED a signature does not verify (file or trusted comment),
 * -EBADMSG also for a trusted comment that is not printable text (tab,
 * printable ASCII, UTF-8 from U+00A0), -EINVAL msg is NULL with msg_len > 0.
 * ret is written only on success. */
int sig_verify(const struct sig_keyring *ring, const uint8_t *msg, size_t msg_len, const char *sig_text,
	       size_t sig_len, struct sig_result *ret, struct tn_error *err);

/* sig_key_id_hex - format a key id as minisign prints it: the id read as a
 * little-endian 64-bit number, in upper-case hex without leading zeros
 * (minisign's "%" PRIX64, so 1 to 16 digits). out: 17 bytes. */
void sig_key_id_hex(const uint8_t key_id[SIG_KEY_ID_BYTES], char out[17]);

#endif
