/* signature.c - minisign public keys and signatures (see signature.h).
 *
 * Line endings: a line ends at "\n"; one "\r" right before it is dropped too, so
 * "\r\n" files are accepted. minisign itself writes "\n" but its verifier strips
 * trailing CR/LF, so a file the stock CLI accepts after a CRLF conversion (git
 * autocrlf, a Windows editor) is accepted here as well. The "\r" is never part
 * of the signed bytes, so accepting it widens nothing: a "\r" anywhere else is
 * refused (in a base64 line, and in the trusted comment, which must be
 * printable text). Beyond that we are stricter than the CLI: nothing but an
 * optional final line ending may follow line 4 of a signature.
 *
 * Both of minisign's signature algorithms are accepted on purpose: "ED"
 * (Ed25519 over BLAKE2b-512 of the file, minisign's default since 0.8) and the
 * legacy "Ed" (Ed25519 over the file itself, `minisign -S -l`). The prehash
 * exists for files too large to hold in memory; a manifest is at most 64 KiB
 * and held whole, so "Ed" is as strong here, and the stock CLI verifies both
 * by default. Public keys are "Ed" only, as minisign writes them.
 */
#include "policy/signature.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "policy/utf8.h"

#define SIG_ALG_BYTES 2
#define SIG_ED25519_BYTES 64
#define SIG_PUBKEY_BLOB (SIG_ALG_BYTES + SIG_KEY_ID_BYTES + SIG_PK_BYTES)   /* 42 */
#define SIG_SIG_BLOB (SIG_ALG_BYTES + SIG_KEY_ID_BYTES + SIG_ED25519_BYTES) /* 74 */
#define SIG_PREHASH_BYTES 64                                                /* BLAKE2b-512 */

/* A base64 line of a file under SIG_MAX_FILE_BYTES decodes to at most this. */
#define SIG_B64_MAX_DECODED (SIG_MAX_FILE_BYTES / 4 * 3)

static const char sig_untrusted_prefix[] = "untrusted comment: ";
static const char sig_trusted_prefix[] = "trusted comment: ";

struct sig_line {
	const char *p; /* not NUL-terminated */
	size_t len;    /* without the line ending */
};

/* A .minisig file cut into its fields; comment points into the caller's text. */
struct sig_parsed {
	char alg[SIG_ALG_BYTES];
	uint8_t key_id[SIG_KEY_ID_BYTES];
	uint8_t sig[SIG_ED25519_BYTES];
	const char *comment;
	size_t comment_len;
	uint8_t global_sig[SIG_ED25519_BYTES];
};

/* Cut the next line out of text at *pos (see the line-ending note at the top).
 * Returns false when *pos is at the end of text. */
static bool sig_next_line(const char *text, size_t len, size_t *pos, struct sig_line *ret)
{
	const char *start, *nl;
	size_t n;

	if (*pos >= len)
		return false;
	start = text + *pos;
	nl = memchr(start, '\n', len - *pos);
	if (nl) {
		n = (size_t)(nl - start);
		*pos += n + 1;
		if (n > 0 && start[n - 1] == '\r')
			n--;
	} else {
		n = len - *pos;
		*pos = len;
	}
	ret->p = start;
	ret->len = n;
	return true;
}

static bool sig_has_prefix(const struct sig_line *line, const char *prefix)
{
	size_t n = strlen(prefix);

	return line->len >= n && memcmp(line->p, prefix, n) == 0;
}

/* Strict base64 (original alphabet, padded, no whitespace, canonical trailing
 * bits: libsodium refuses the rest). Returns 0 and the decoded length, or -1. */
static int sig_b64_decode(const struct sig_line *line, uint8_t *buf, size_t buf_size, size_t *ret_len)
{
	size_t n = 0;

	if (line->len == 0)
		return -1;
	/* b64_end NULL: the whole line must be base64, not just a prefix of it. */
	if (sodium_base642bin(buf, buf_size, line->p, line->len, NULL, &n, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0)
		return -1;
	*ret_len = n;
	return 0;
}

void sig_key_id_hex(const uint8_t key_id[SIG_KEY_ID_BYTES], char out[17])
{
	uint64_t v = 0;
	size_t i;

	/* minisign prints le64_load(keynum) with "%" PRIX64: no zero padding, so an
	 * id can show as fewer than 16 digits ("minisign public key CD0779E4520553C"). */
	for (i = SIG_KEY_ID_BYTES; i > 0; i--)
		v = (v << 8) | key_id[i - 1];
	snprintf(out, 17, "%" PRIX64, v);
}

/* Decoded key and signature bytes, wiped at every return of the function
 * that holds them (cleanup attributes, cleanup.h). */
static void sig_decoded_wipep(uint8_t (*b)[SIG_B64_MAX_DECODED])
{
	sodium_memzero(*b, sizeof(*b));
}
static void sig_keyring_wipep(struct sig_keyring *k)
{
	sodium_memzero(k, sizeof(*k));
}

/* Decode one public key line: base64 of "Ed" || key_id[8] || pk[32]. */
static int sig_parse_key_line(const struct sig_line *line, size_t lineno, struct sig_pubkey *ret,
			      struct tn_error *err)
{
	uint8_t buf[SIG_B64_MAX_DECODED];
	size_t n = 0;
	int r = 0;

	if (sig_b64_decode(line, buf, sizeof(buf), &n) < 0)
		r = err_set(err, EINVAL, "public key: line %zu: bad base64", lineno);
	else if (n != SIG_PUBKEY_BLOB)
		r = err_set(err, EINVAL, "public key: line %zu: key is %zu bytes, expected %d", lineno, n,
			    SIG_PUBKEY_BLOB);
	else if (buf[0] != 'E' || buf[1] != 'd')
		r = err_set(err, EINVAL, "public key: line %zu: algorithm is not \"Ed\" (Ed25519)", lineno);
	else {
		memcpy(ret->key_id, buf + SIG_ALG_BYTES, SIG_KEY_ID_BYTES);
		memcpy(ret->pk, buf + SIG_ALG_BYTES + SIG_KEY_ID_BYTES, SIG_PK_BYTES);
	}
	sodium_memzero(buf, sizeof(buf));
	return r;
}

int sig_parse_pubkeys(const char *text, size_t len, struct sig_keyring *ring, struct tn_error *err)
{
	__attribute__((cleanup(sig_keyring_wipep))) struct sig_keyring tmp;
	struct sig_line line;
	size_t pos = 0, lineno = 0, comment_lineno = 0, added = 0;
	int r = 0;

	if (len > SIG_MAX_FILE_BYTES)
		return err_set(err, E2BIG, "public key: text is %zu bytes, more than %d", len,
			       SIG_MAX_FILE_BYTES);
	if (len > 0 && memchr(text, '\0', len))
		return err_set(err, EINVAL, "public key: text contains a NUL byte");

	/* Work on a copy so that ring is untouched unless every key parses. */
	tmp = *ring;
	while (sig_next_line(text, len, &pos, &line)) {
		struct sig_pubkey key;

		lineno++;
		if (comment_lineno && (line.len == 0 || sig_has_prefix(&line, sig_untrusted_prefix)))
			return err_set(err, EINVAL, "public key: line %zu: comment line with no key",
				       comment_lineno);
		if (line.len == 0)
			continue;
		if (sig_has_prefix(&line, sig_untrusted_prefix)) {
			comment_lineno = lineno;
			continue;
		}
		r = sig_parse_key_line(&line, lineno, &key, err);
		if (r < 0)
			return r;
		if (tmp.n >= SIG_MAX_KEYS)
			return err_set(err, E2BIG, "public key: line %zu: more than %d keys", lineno,
				       SIG_MAX_KEYS);
		tmp.keys[tmp.n++] = key;
		added++;
		comment_lineno = 0;
	}
	if (comment_lineno)
		return err_set(err, EINVAL, "public key: line %zu: comment line with no key", comment_lineno);
	if (added == 0)
		return err_set(err, ENOKEY, "public key: no key found");
	*ring = tmp;
	return 0;
}

/* The length of the UTF-8 sequence at s (at most n bytes) that encodes one
 * code point from U+00A0 up (RFC 3629: shortest form, no surrogate, at most
 * U+10FFFF; the C1 controls U+0080..U+009F are refused too), or 0. */
static size_t sig_utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len = utf8_decode(s, n, &cp);

	return len && cp >= 0xa0 ? len : 0;
}

/* A trusted comment is text that verify prints and the audit log records:
 * tab, printable ASCII and UTF-8 from U+00A0 up. A control byte ("\r", ESC,
 * DEL, C1) or invalid UTF-8 is refused, as signify refuses a comment that is
 * not printable, even where the signature covers it. minisign's own default
 * comment ("timestamp:N\tfile:NAME\thashed") has tabs. */
static int sig_comment_text(const char *comment, size_t n, struct tn_error *err)
{
	const unsigned char *s = (const unsigned char *)comment;

	for (size_t i = 0; i < n;) {
		size_t len = 1;

		if (s[i] >= 0x80)
			len = sig_utf8_len(s + i, n - i);
		else if ((s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
			len = 0;
		if (len == 0)
			return err_set(err, EBADMSG,
				       "signature: line 3: trusted comment is not printable text (byte 0x%02x at offset %zu)",
				       s[i], i);
		i += len;
	}
	return 0;
}

/* Cut a .minisig file into its four lines and decode them; no crypto yet. */
static int sig_parse_file(const char *text, size_t len, struct sig_parsed *ret, struct tn_error *err)
{
	struct sig_line lines[4];
	__attribute__((cleanup(sig_decoded_wipep))) uint8_t buf[SIG_B64_MAX_DECODED];
	size_t pos = 0, n = 0, i;
	int r = 0;

	if (len > SIG_MAX_FILE_BYTES)
		return err_set(err, EBADMSG, "signature: file is %zu bytes, more than %d", len,
			       SIG_MAX_FILE_BYTES);
	/* A NUL would end the trusted comment early for any C consumer. */
	if (len > 0 && memchr(text, '\0', len))
		return err_set(err, EBADMSG, "signature: file contains a NUL byte");
	for (i = 0; i < 4; i++)
		if (!sig_next_line(text, len, &pos, &lines[i]))
			return err_set(err, EBADMSG, "signature: line %zu is missing", i + 1);
	if (pos < len)
		return err_set(err, EBADMSG, "signature: unexpected data after line 4");

	if (!sig_has_prefix(&lines[0], sig_untrusted_prefix))
		return err_set(err, EBADMSG, "signature: line 1: does not start with \"%s\"",
			       sig_untrusted_prefix);

	if (sig_b64_decode(&lines[1], buf, sizeof(buf), &n) < 0)
		r = err_set(err, EBADMSG, "signature: line 2: bad base64");
	else if (n != SIG_SIG_BLOB)
		r = err_set(err, EBADMSG, "signature: line 2: signature is %zu bytes, expected %d", n,
			    SIG_SIG_BLOB);
	else if (buf[0] != 'E' || (buf[1] != 'D' && buf[1] != 'd'))
		r = err_set(err, EBADMSG, "signature: line 2: unknown algorithm (expected \"ED\" or \"Ed\")");
	if (r < 0)
		return r;
	memcpy(ret->alg, buf, SIG_ALG_BYTES);
	memcpy(ret->key_id, buf + SIG_ALG_BYTES, SIG_KEY_ID_BYTES);
	memcpy(ret->sig, buf + SIG_ALG_BYTES + SIG_KEY_ID_BYTES, SIG_ED25519_BYTES);

	if (!sig_has_prefix(&lines[2], sig_trusted_prefix))
		return err_set(err, EBADMSG, "signature: line 3: does not start with \"%s\"",
			       sig_trusted_prefix);
	ret->comment = lines[2].p + strlen(sig_trusted_prefix);
	ret->comment_len = lines[2].len - strlen(sig_trusted_prefix);
	if (ret->comment_len > SIG_TRUSTED_COMMENT_MAX)
		return err_set(err, EBADMSG, "signature: line 3: trusted comment is %zu bytes, more than %d",
			       ret->comment_len, SIG_TRUSTED_COMMENT_MAX);

	if ((r = sig_comment_text(ret->comment, ret->comment_len, err)) < 0)
		return r;

	if (sig_b64_decode(&lines[3], buf, sizeof(buf), &n) < 0)
		r = err_set(err, EBADMSG, "signature: line 4: bad base64");
	else if (n != SIG_ED25519_BYTES)
		r = err_set(err, EBADMSG, "signature: line 4: global signature is %zu bytes, expected %d", n,
			    SIG_ED25519_BYTES);
	else
		memcpy(ret->global_sig, buf, SIG_ED25519_BYTES);
	return r;
}

/* Both signatures of p under one key: the file's, then the trusted comment's
 * (global) signature over sig[64] || TEXT, the order minisign checks them in. */
static int sig_check_key(const struct sig_pubkey *key, const struct sig_parsed *p, const uint8_t *signed_msg,
			 size_t signed_len, struct tn_error *err)
{
	uint8_t global_msg[SIG_ED25519_BYTES + SIG_TRUSTED_COMMENT_MAX];
	int r = 0;

	if (crypto_sign_verify_detached(p->sig, signed_msg, signed_len, key->pk) != 0)
		return err_set(err, EKEYREJECTED,
			       "signature: the manifest's signature does not verify (it was changed after signing, or another key signed it)");

	memcpy(global_msg, p->sig, SIG_ED25519_BYTES);
	memcpy(global_msg + SIG_ED25519_BYTES, p->comment, p->comment_len);
	if (crypto_sign_verify_detached(p->global_sig, global_msg, SIG_ED25519_BYTES + p->comment_len,
					key->pk) != 0)
		r = err_set(err, EKEYREJECTED, "signature: trusted comment does not verify");
	sodium_memzero(global_msg, sizeof(global_msg));
	return r;
}

/* sig_verify after parsing: key id first, then the signatures. */
static int sig_verify_parsed(const struct sig_keyring *ring, const uint8_t *msg, size_t msg_len,
			     const struct sig_parsed *p, struct sig_result *ret, struct tn_error *err)
{
	uint8_t prehash[SIG_PREHASH_BYTES];
	const uint8_t *signed_msg = msg;
	size_t signed_len = msg_len, i;
	bool known = false;
	int r = 0;

	/* The key id gates everything: a signature from a key we do not trust is
	 * refused as such, whatever else is wrong with it. */
	for (i = 0; ring && i < ring->n && i < SIG_MAX_KEYS; i++)
		if (memcmp(ring->keys[i].key_id, p->key_id, SIG_KEY_ID_BYTES) == 0)
			known = true;
	if (!known) {
		char hex[17], ids[SIG_MAX_KEYS * 18 + 1] = "";
		size_t off = 0;

		sig_key_id_hex(p->key_id, hex);
		for (i = 0; ring && i < ring->n && i < SIG_MAX_KEYS; i++) {
			char h[17];

			sig_key_id_hex(ring->keys[i].key_id, h);
			off += (size_t)snprintf(ids + off, sizeof(ids) - off, "%s%s", i ? ", " : "", h);
		}
		return err_set(err, ENOKEY, "signature: key id %s is not trusted: %s%s", hex,
			       off ? "the trusted keys are " : "no key is trusted", ids);
	}

	/* No sodium_init(): it only picks CPU-specific implementations and seeds
	 * randombytes, and referencing it links every primitive's variants
	 * (Argon2, ChaCha20, Salsa20, Poly1305, X25519: about 119 KB of the
	 * static binary). What is used here needs none of it: Ed25519
	 * verification and SHA-512 have one implementation, and BLAKE2b's
	 * compression function pointer starts at the portable one
	 * (docs/benchmarks.md, "Size"). */
	if (p->alg[1] == 'D') {
		crypto_generichash(prehash, sizeof(prehash), msg, msg_len, NULL, 0);
		signed_msg = prehash;
		signed_len = sizeof(prehash);
	}

	/* Key ids are random, not unique: two trusted keys may share one, so try
	 * every key that carries it. */
	for (i = 0; i < ring->n && i < SIG_MAX_KEYS; i++) {
		if (memcmp(ring->keys[i].key_id, p->key_id, SIG_KEY_ID_BYTES) != 0)
			continue;
		r = sig_check_key(&ring->keys[i], p, signed_msg, signed_len, err);
		if (r == 0)
			break;
	}
	if (r == 0) {
		memcpy(ret->key_id, p->key_id, SIG_KEY_ID_BYTES);
		ret->alg[0] = p->alg[0];
		ret->alg[1] = p->alg[1];
		ret->alg[2] = '\0';
		memcpy(ret->trusted_comment, p->comment, p->comment_len);
		ret->trusted_comment[p->comment_len] = '\0';
	}
	sodium_memzero(prehash, sizeof(prehash));
	return r;
}

int sig_verify(const struct sig_keyring *ring, const uint8_t *msg, size_t msg_len, const char *sig_text,
	       size_t sig_len, struct sig_result *ret, struct tn_error *err)
{
	static const uint8_t empty[1];
	struct sig_parsed p;
	int r;

	/* libsodium wants a valid pointer even for zero bytes. */
	if (!msg) {
		if (msg_len > 0)
			return err_set(err, EINVAL, "signature: no message");
		msg = empty;
	}
	if (!sig_text && sig_len > 0)
		return err_set(err, EINVAL, "signature: no signature text");

	memset(&p, 0, sizeof(p));
	r = sig_parse_file(sig_text ? sig_text : "", sig_len, &p, err);
	if (r == 0)
		r = sig_verify_parsed(ring, msg, msg_len, &p, ret, err);
	sodium_memzero(&p, sizeof(p));
	return r;
}
