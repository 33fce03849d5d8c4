/* test_signature.c - unit tests of policy/signature.c.
 *
 * Vectors come from tests/vectors/ (made by the stock minisign CLI with
 * make-vectors.sh), found through $TURNINIT_VECTORS (default "tests/vectors",
 * relative to the project root). Forgeries are made here from the good vectors;
 * the committed test secret key lets us sign edge cases (empty message, longest
 * trusted comment) the way minisign does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "policy/signature.h"
#include "vectors.h"

#define MAX_LINE 2048

struct vec {
	char *data; /* NUL-terminated copy of the file */
	size_t len;
};

/* Everything loaded once by the group setup. */
static struct {
	struct vec msg;         /* good.json */
	struct vec pub_trusted; /* test-trusted.pub */
	struct vec pub_other;   /* test-other.pub */
	struct vec key_trusted; /* test-trusted.key */
	struct vec sig_ed;      /* good.json.minisig: prehashed, trusted key */
	struct vec sig_legacy;  /* good.json.legacy.minisig: legacy, trusted key */
	struct vec sig_other;   /* good.json.other.minisig: prehashed, other key */
	char trusted_hex[17];   /* the key ids as the CLI printed them in the .pub */
	char other_hex[17];
	struct sig_keyring ring_trusted;
	struct sig_keyring ring_other;
	uint8_t sk[64]; /* test-trusted's Ed25519 secret key (seed || pk) */
} V;

/* The trusted comments make-vectors.sh gives each signature. */
static const char tc_ed[] = "turninit test vector: good.json prehashed by test-trusted";
static const char tc_legacy[] = "turninit test vector: good.json legacy by test-trusted";
static const char tc_other[] = "turninit test vector: good.json prehashed by test-other";

/* ---- helpers ------------------------------------------------------------ */

static int load_vec(const char *name, struct vec *v)
{
	v->data = vectors_read(name, &v->len);
	return v->data ? 0 : -1;
}

/* The key id the CLI wrote into "untrusted comment: minisign public key HEX". */
static int pub_comment_hex(const struct vec *pub, char out[17])
{
	static const char prefix[] = "untrusted comment: minisign public key ";

	const char *s = pub->data + strlen(prefix);
	size_t n = strcspn(s, "\n");

	if (strncmp(pub->data, prefix, strlen(prefix)) != 0 || n == 0 || n > 16)
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

/* Line 2 of a minisign file, decoded. */
static int decode_line2(const struct vec *v, uint8_t *buf, size_t size, size_t *ret_len)
{
	const char *s = strchr(v->data, '\n'), *e;

	if (!s)
		return -1;
	s++;
	e = strchr(s, '\n');
	if (!e)
		return -1;
	return sodium_base642bin(buf, size, s, (size_t)(e - s), NULL, ret_len, NULL,
				 sodium_base64_VARIANT_ORIGINAL);
}

/* The secret key file minisign -G -W wrote: sig_alg "Ed", kdf_alg 0 (no
 * password), chk_alg "B2", salt[32], opslimit[8], memlimit[8], key_id[8],
 * sk[64], checksum[32]. */
static int load_secret_key(void)
{
	uint8_t buf[256];
	size_t n = 0;

	if (decode_line2(&V.key_trusted, buf, sizeof(buf), &n) != 0 || n != 158)
		return -1;
	if (memcmp(buf, "Ed\0\0B2", 6) != 0)
		return -1;
	if (memcmp(buf + 54, V.ring_trusted.keys[0].key_id, 8) != 0)
		return -1;
	memcpy(V.sk, buf + 62, 64);
	/* libsodium's secret key ends with the public key. */
	return memcmp(V.sk + 32, V.ring_trusted.keys[0].pk, 32) == 0 ? 0 : -1;
}

static int group_setup(void **state)
{
	struct tn_error err = { 0 };

	(void)state;
	if (sodium_init() < 0)
		return -1;
	if (load_vec("good.json", &V.msg) || load_vec("test-trusted.pub", &V.pub_trusted) ||
	    load_vec("test-other.pub", &V.pub_other) || load_vec("test-trusted.key", &V.key_trusted) ||
	    load_vec("good.json.minisig", &V.sig_ed) || load_vec("good.json.legacy.minisig", &V.sig_legacy) ||
	    load_vec("good.json.other.minisig", &V.sig_other))
		return -1;
	if (pub_comment_hex(&V.pub_trusted, V.trusted_hex) || pub_comment_hex(&V.pub_other, V.other_hex))
		return -1;
	if (sig_parse_pubkeys(V.pub_trusted.data, V.pub_trusted.len, &V.ring_trusted, &err) ||
	    sig_parse_pubkeys(V.pub_other.data, V.pub_other.len, &V.ring_other, &err)) {
		print_error("setup: %s\n", err.msg);
		return -1;
	}
	if (load_secret_key()) {
		print_error("setup: test-trusted.key is not an unencrypted minisign key\n");
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	free(V.msg.data);
	free(V.pub_trusted.data);
	free(V.pub_other.data);
	free(V.key_trusted.data);
	free(V.sig_ed.data);
	free(V.sig_legacy.data);
	free(V.sig_other.data);
	return 0;
}

/* A .minisig file cut into its four lines (without line endings). */
struct sigfile {
	char line[4][MAX_LINE];
};

static void sf_split(const struct vec *v, struct sigfile *sf)
{
	const char *p = v->data;
	int i;

	for (i = 0; i < 4; i++) {
		const char *e = strchr(p, '\n');

		assert_non_null(e);
		assert_true((size_t)(e - p) < MAX_LINE);
		memcpy(sf->line[i], p, (size_t)(e - p));
		sf->line[i][e - p] = '\0';
		p = e + 1;
	}
	assert_int_equal(*p, '\0');
}

/* Join with eol after every line; returns the length written to out. */
static size_t sf_join(const struct sigfile *sf, const char *eol, char *out, size_t size)
{
	int n = snprintf(out, size, "%s%s%s%s%s%s%s%s", sf->line[0], eol, sf->line[1], eol, sf->line[2], eol,
			 sf->line[3], eol);

	assert_true(n > 0 && (size_t)n < size);
	return (size_t)n;
}

static void sf_decode(const struct sigfile *sf, int idx, uint8_t *buf, size_t expect)
{
	size_t n = 0;

	assert_int_equal(sodium_base642bin(buf, expect, sf->line[idx], strlen(sf->line[idx]), NULL, &n, NULL,
					   sodium_base64_VARIANT_ORIGINAL),
			 0);
	assert_int_equal(n, expect);
}

static void sf_encode(struct sigfile *sf, int idx, const uint8_t *buf, size_t len)
{
	assert_true(sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL) <= MAX_LINE);
	sodium_bin2base64(sf->line[idx], MAX_LINE, buf, len, sodium_base64_VARIANT_ORIGINAL);
}

/* Sign like `minisign -S` (alg "ED") or `minisign -S -l` (alg "Ed") with the
 * trusted test key; returns the length of the .minisig text in out. */
static size_t make_sig(const char *alg, const uint8_t *msg, size_t msg_len, const char *untrusted,
		       const char *comment, size_t comment_len, char *out, size_t size)
{
	uint8_t blob[74], hash[64], global_sig[64];
	uint8_t *global_msg = malloc(64 + comment_len);
	char b64_blob[128], b64_global[128];
	size_t pos;
	int n;

	assert_non_null(global_msg);
	memcpy(blob, alg, 2);
	memcpy(blob + 2, V.ring_trusted.keys[0].key_id, 8);
	if (strcmp(alg, "ED") == 0) {
		crypto_generichash(hash, sizeof(hash), msg, msg_len, NULL, 0);
		crypto_sign_detached(blob + 10, NULL, hash, sizeof(hash), V.sk);
	} else {
		crypto_sign_detached(blob + 10, NULL, msg, msg_len, V.sk);
	}
	memcpy(global_msg, blob + 10, 64);
	memcpy(global_msg + 64, comment, comment_len);
	crypto_sign_detached(global_sig, NULL, global_msg, 64 + comment_len, V.sk);
	free(global_msg);
	sodium_bin2base64(b64_blob, sizeof(b64_blob), blob, sizeof(blob), sodium_base64_VARIANT_ORIGINAL);
	sodium_bin2base64(b64_global, sizeof(b64_global), global_sig, sizeof(global_sig),
			  sodium_base64_VARIANT_ORIGINAL);

	n = snprintf(out, size, "untrusted comment: %s\n%s\ntrusted comment: ", untrusted, b64_blob);
	assert_true(n > 0 && (size_t)n + comment_len + strlen(b64_global) + 2 < size);
	pos = (size_t)n;
	memcpy(out + pos, comment, comment_len);
	pos += comment_len;
	pos += (size_t)snprintf(out + pos, size - pos, "\n%s\n", b64_global);
	return pos;
}

static int verify(const struct sig_keyring *ring, const void *msg, size_t msg_len, const char *sig,
		  size_t sig_len, struct sig_result *res, struct tn_error *err)
{
	memset(err, 0, sizeof(*err));
	return sig_verify(ring, msg, msg_len, sig, sig_len, res, err);
}

/* Check a refusal: the code, the message, and that ret was not written. */
static void check_refused(const struct sig_keyring *ring, const void *msg, size_t msg_len, const char *sig,
			  size_t sig_len, int code, const char *needle, const char *file, int line)
{
	struct sig_result res, untouched;
	struct tn_error err;
	int r;

	memset(&res, 0xA5, sizeof(res));
	memcpy(&untouched, &res, sizeof(res));
	r = verify(ring, msg, msg_len, sig, sig_len, &res, &err);
	if (r != -code || err.code != code || !strstr(err.msg, needle) ||
	    strncmp(err.msg, "signature: ", 11) != 0 || strchr(err.msg, '\n') ||
	    memcmp(&res, &untouched, sizeof(res)) != 0) {
		print_error("%s:%d: expected -%d with \"%s\", got %d (code %d) \"%s\"%s\n", file, line, code,
			    needle, r, err.code, err.msg,
			    memcmp(&res, &untouched, sizeof(res)) ? ", ret written" : "");
		_fail(file, line);
	}
}

#define REFUSED(ring, msg, msg_len, sig, sig_len, code, needle) \
	check_refused(ring, msg, msg_len, sig, sig_len, code, needle, __FILE__, __LINE__)
#define REFUSED_GOOD_MSG(ring, sig, sig_len, code, needle) \
	REFUSED(ring, V.msg.data, V.msg.len, sig, sig_len, code, needle)

static void check_ok(const struct sig_keyring *ring, const void *msg, size_t msg_len, const char *sig,
		     size_t sig_len, const char *alg, const char *comment, const char *file, int line)
{
	struct sig_result res;
	struct tn_error err;
	int r;

	memset(&res, 0xA5, sizeof(res));
	r = verify(ring, msg, msg_len, sig, sig_len, &res, &err);
	if (r != 0) {
		print_error("%s:%d: expected success, got %d \"%s\"\n", file, line, r, err.msg);
		_fail(file, line);
	}
	_assert_string_equal(res.alg, alg, file, line);
	_assert_string_equal(res.trusted_comment, comment, file, line);
}

#define VERIFIES(ring, msg, msg_len, sig, sig_len, alg, comment) \
	check_ok(ring, msg, msg_len, sig, sig_len, alg, comment, __FILE__, __LINE__)

static int parse(const char *text, size_t len, struct sig_keyring *ring, struct tn_error *err)
{
	memset(err, 0, sizeof(*err));
	return sig_parse_pubkeys(text, len, ring, err);
}

/* Check a refused key text: the code, the message, and ring unchanged. */
static void check_keys_refused(const char *text, size_t len, int code, const char *needle, const char *file,
			       int line)
{
	struct sig_keyring ring, before;
	struct tn_error err;
	int r;

	memset(&ring, 0, sizeof(ring));
	ring.keys[0] = V.ring_other.keys[0];
	ring.n = 1;
	before = ring;
	r = parse(text, len, &ring, &err);
	if (r != -code || err.code != code || !strstr(err.msg, needle) ||
	    strncmp(err.msg, "public key: ", 12) != 0 || memcmp(&ring, &before, sizeof(ring)) != 0) {
		print_error("%s:%d: expected -%d with \"%s\", got %d (code %d) \"%s\"%s\n", file, line, code,
			    needle, r, err.code, err.msg,
			    memcmp(&ring, &before, sizeof(ring)) ? ", ring changed" : "");
		_fail(file, line);
	}
}

#define KEYS_REFUSED(text, code, needle) \
	check_keys_refused(text, strlen(text), code, needle, __FILE__, __LINE__)

/* Line 2 of a .pub file: the lone base64 key, as `minisign -P` takes it. */
static void pub_line2(const struct vec *pub, char *out, size_t size)
{
	const char *s = strchr(pub->data, '\n') + 1, *e = strchr(s, '\n');

	assert_true((size_t)(e - s) < size);
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = '\0';
}

/* base64 of arbitrary key bytes, with a comment line. */
static void pub_text(const uint8_t *blob, size_t len, char *out, size_t size)
{
	char b64[256];

	sodium_bin2base64(b64, sizeof(b64), blob, len, sodium_base64_VARIANT_ORIGINAL);
	snprintf(out, size, "untrusted comment: test\n%s\n", b64);
}

/* ---- public keys -------------------------------------------------------- */

static void test_key_id_hex(void **state)
{
	/* Id bytes of keys whose .pub the minisign 0.11 CLI labelled
	 * "A791827058493F0A" and "CD0779E4520553C": no zero padding. */
	static const uint8_t id[8] = { 0x0a, 0x3f, 0x49, 0x58, 0x70, 0x82, 0x91, 0xa7 };
	static const uint8_t short_id[8] = { 0x3c, 0x55, 0x20, 0x45, 0x9e, 0x77, 0xd0, 0x0c };
	static const uint8_t seq[8] = { 1, 2, 3, 4, 5, 6, 7, 0xfe };
	static const uint8_t one[8] = { 1 };
	static const uint8_t zero[8];
	char hex[17];

	(void)state;
	sig_key_id_hex(id, hex);
	assert_string_equal(hex, "A791827058493F0A");
	sig_key_id_hex(short_id, hex);
	assert_string_equal(hex, "CD0779E4520553C");
	sig_key_id_hex(seq, hex);
	assert_string_equal(hex, "FE07060504030201");
	sig_key_id_hex(one, hex);
	assert_string_equal(hex, "1");
	sig_key_id_hex(zero, hex);
	assert_string_equal(hex, "0");
}

static void test_pubkey_file(void **state)
{
	struct sig_keyring ring = { 0 };
	struct tn_error err;
	uint8_t blob[42];
	size_t n = 0;
	char hex[17];

	(void)state;
	assert_int_equal(parse(V.pub_trusted.data, V.pub_trusted.len, &ring, &err), 0);
	assert_int_equal(ring.n, 1);
	/* Same id and key as the base64 holds, and displayed as the CLI does. */
	assert_int_equal(decode_line2(&V.pub_trusted, blob, sizeof(blob), &n), 0);
	assert_memory_equal(ring.keys[0].key_id, blob + 2, 8);
	assert_memory_equal(ring.keys[0].pk, blob + 10, 32);
	sig_key_id_hex(ring.keys[0].key_id, hex);
	assert_string_equal(hex, V.trusted_hex);
	sig_key_id_hex(V.ring_other.keys[0].key_id, hex);
	assert_string_equal(hex, V.other_hex);
}

static void test_pubkey_lone_line(void **state)
{
	struct sig_keyring ring = { 0 };
	struct tn_error err;
	char line[128], text[160];

	(void)state;
	pub_line2(&V.pub_trusted, line, sizeof(line));
	assert_int_equal(parse(line, strlen(line), &ring, &err), 0);
	snprintf(text, sizeof(text), "%s\n", line);
	assert_int_equal(parse(text, strlen(text), &ring, &err), 0);
	assert_int_equal(ring.n, 2);
	assert_memory_equal(&ring.keys[0], &V.ring_trusted.keys[0], sizeof(ring.keys[0]));
	assert_memory_equal(&ring.keys[1], &V.ring_trusted.keys[0], sizeof(ring.keys[0]));
	/* A .pub file without its final newline. */
	assert_int_equal(parse(V.pub_other.data, V.pub_other.len - 1, &ring, &err), 0);
	assert_int_equal(ring.n, 3);
	assert_memory_equal(&ring.keys[2], &V.ring_other.keys[0], sizeof(ring.keys[0]));
}

static void test_pubkey_two_keys(void **state)
{
	struct sig_keyring ring = { 0 };
	struct tn_error err;
	char text[512];

	(void)state;
	snprintf(text, sizeof(text), "%s\n%s", V.pub_trusted.data, V.pub_other.data);
	assert_int_equal(parse(text, strlen(text), &ring, &err), 0);
	assert_int_equal(ring.n, 2);
	assert_memory_equal(&ring.keys[0], &V.ring_trusted.keys[0], sizeof(ring.keys[0]));
	assert_memory_equal(&ring.keys[1], &V.ring_other.keys[0], sizeof(ring.keys[0]));
	/* Appending: a second call adds after what is there. */
	assert_int_equal(parse(V.pub_other.data, V.pub_other.len, &ring, &err), 0);
	assert_int_equal(ring.n, 3);
	assert_memory_equal(&ring.keys[2], &V.ring_other.keys[0], sizeof(ring.keys[0]));
}

static void test_pubkey_blank_lines_and_crlf(void **state)
{
	struct sig_keyring ring = { 0 };
	struct tn_error err;
	char line[128], text[512];

	(void)state;
	pub_line2(&V.pub_trusted, line, sizeof(line));
	snprintf(text, sizeof(text), "\n\r\nuntrusted comment: crlf\r\n%s\r\n\n\n", line);
	assert_int_equal(parse(text, strlen(text), &ring, &err), 0);
	assert_int_equal(ring.n, 1);
	assert_memory_equal(&ring.keys[0], &V.ring_trusted.keys[0], sizeof(ring.keys[0]));
	/* A lone "\r" is no line ending. */
	snprintf(text, sizeof(text), "untrusted comment: cr\r%s\r", line);
	KEYS_REFUSED(text, EINVAL, "comment line with no key");
}

static void test_pubkey_bad_base64(void **state)
{
	char line[128], text[512];

	(void)state;
	pub_line2(&V.pub_trusted, line, sizeof(line));
	snprintf(text, sizeof(text), "untrusted comment: x\n%s \n", line);
	KEYS_REFUSED(text, EINVAL, "public key: line 2: bad base64");
	snprintf(text, sizeof(text), "untrusted comment: x\n %s\n", line);
	KEYS_REFUSED(text, EINVAL, "line 2: bad base64");
	line[5] = '*';
	snprintf(text, sizeof(text), "\n\n%s\n", line);
	KEYS_REFUSED(text, EINVAL, "line 3: bad base64");
	/* URL-safe alphabet is not minisign's. */
	KEYS_REFUSED("untrusted comment: x\nRWQ-_____________________________________________________\n",
		     EINVAL, "line 2: bad base64");
	/* 42 bytes are 56 characters with no padding; padding there is wrong. */
	pub_line2(&V.pub_trusted, line, sizeof(line));
	assert_int_equal(strlen(line), 56);
	strcat(line, "=");
	KEYS_REFUSED(line, EINVAL, "line 1: bad base64");
	KEYS_REFUSED("untrusted comment: minisign public key\nnot a key\n", EINVAL, "line 2: bad base64");
}

static void test_pubkey_wrong_length(void **state)
{
	uint8_t blob[43];
	char text[512];

	(void)state;
	memcpy(blob, "Ed", 2);
	memset(blob + 2, 0x42, sizeof(blob) - 2);
	pub_text(blob, 41, text, sizeof(text));
	KEYS_REFUSED(text, EINVAL, "line 2: key is 41 bytes, expected 42");
	pub_text(blob, 43, text, sizeof(text));
	KEYS_REFUSED(text, EINVAL, "line 2: key is 43 bytes, expected 42");
	pub_text(blob, 42, text, sizeof(text));
	{
		struct sig_keyring ring = { 0 };
		struct tn_error err;

		assert_int_equal(parse(text, strlen(text), &ring, &err), 0);
	}
	/* A signature or secret key file given where a public key belongs. */
	KEYS_REFUSED(V.sig_ed.data, EINVAL, "line 2: key is 74 bytes, expected 42");
	KEYS_REFUSED(V.key_trusted.data, EINVAL, "line 2: key is 158 bytes, expected 42");
}

static void test_pubkey_wrong_algorithm(void **state)
{
	static const char *const algs[] = { "ED", "ed", "Ee", "\0\0", "dE" };
	uint8_t blob[42];
	char text[512];
	size_t i;

	(void)state;
	assert_int_equal(decode_line2(&V.pub_trusted, blob, sizeof(blob), &i), 0);
	for (i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		memcpy(blob, algs[i], 2);
		pub_text(blob, sizeof(blob), text, sizeof(text));
		KEYS_REFUSED(text, EINVAL, "line 2: algorithm is not \"Ed\"");
	}
}

static void test_pubkey_too_many(void **state)
{
	struct sig_keyring ring = { 0 }, before;
	struct tn_error err;
	char line[128], text[SIG_MAX_FILE_BYTES];
	size_t i;

	(void)state;
	pub_line2(&V.pub_trusted, line, sizeof(line));
	text[0] = '\0';
	for (i = 0; i < SIG_MAX_KEYS; i++) {
		strcat(text, line);
		strcat(text, "\n");
	}
	assert_int_equal(parse(text, strlen(text), &ring, &err), 0);
	assert_int_equal(ring.n, SIG_MAX_KEYS);
	/* One more, in the same text or appended to a full ring. */
	before = ring;
	assert_int_equal(parse(line, strlen(line), &ring, &err), -E2BIG);
	assert_int_equal(err.code, E2BIG);
	assert_non_null(strstr(err.msg, "more than 16 keys"));
	assert_memory_equal(&ring, &before, sizeof(ring));
	strcat(text, line);
	memset(&ring, 0, sizeof(ring));
	assert_int_equal(parse(text, strlen(text), &ring, &err), -E2BIG);
	assert_string_equal(err.msg, "public key: line 17: more than 16 keys");
	assert_int_equal(ring.n, 0);
	/* check_keys_refused starts from a ring holding one key: full at line 16. */
	KEYS_REFUSED(text, E2BIG, "public key: line 16: more than 16 keys");
}

static void test_pubkey_empty(void **state)
{
	struct sig_keyring ring = { 0 };
	struct tn_error err;
	char line[128], text[512];

	(void)state;
	assert_int_equal(parse("", 0, &ring, &err), -ENOKEY);
	assert_int_equal(parse(NULL, 0, &ring, &err), -ENOKEY);
	KEYS_REFUSED("", ENOKEY, "public key: no key found");
	KEYS_REFUSED("\n\r\n\n", ENOKEY, "no key found");
	KEYS_REFUSED("untrusted comment: minisign public key 67E58D09A36C051C\n", EINVAL,
		     "line 1: comment line with no key");
	KEYS_REFUSED("untrusted comment: minisign public key 67E58D09A36C051C", EINVAL,
		     "line 1: comment line with no key");
	/* The key must follow its comment directly. */
	pub_line2(&V.pub_trusted, line, sizeof(line));
	snprintf(text, sizeof(text), "untrusted comment: a\n\n%s\n", line);
	KEYS_REFUSED(text, EINVAL, "line 1: comment line with no key");
	snprintf(text, sizeof(text), "%s\nuntrusted comment: a\nuntrusted comment: b\n%s\n", line, line);
	KEYS_REFUSED(text, EINVAL, "line 2: comment line with no key");
	assert_int_equal(ring.n, 0);
}

static void test_pubkey_limits(void **state)
{
	char text[SIG_MAX_FILE_BYTES + 2], line[128];
	struct sig_keyring ring = { 0 };
	struct tn_error err;
	size_t n;

	(void)state;
	/* Exactly SIG_MAX_FILE_BYTES is fine, one more is refused. */
	pub_line2(&V.pub_trusted, line, sizeof(line));
	memset(text, '\n', sizeof(text));
	memcpy(text, line, strlen(line));
	assert_int_equal(parse(text, SIG_MAX_FILE_BYTES, &ring, &err), 0);
	assert_int_equal(ring.n, 1);
	check_keys_refused(text, SIG_MAX_FILE_BYTES + 1, E2BIG, "more than 4096", __FILE__, __LINE__);
	/* A NUL byte anywhere. */
	n = strlen(line);
	line[n] = '\n';
	line[n + 1] = '\0';
	check_keys_refused(line, n + 2, EINVAL, "NUL byte", __FILE__, __LINE__);
	/* An error after a good key keeps the good key out too. */
	snprintf(text, sizeof(text), "%sbad\n", V.pub_trusted.data);
	KEYS_REFUSED(text, EINVAL, "line 3: bad base64");
}

/* ---- signatures: good ----------------------------------------------------- */

static void test_verify_prehashed(void **state)
{
	struct sig_result res;
	struct tn_error err;

	(void)state;
	assert_int_equal(verify(&V.ring_trusted, V.msg.data, V.msg.len, V.sig_ed.data, V.sig_ed.len, &res,
				&err),
			 0);
	assert_string_equal(res.alg, "ED");
	assert_memory_equal(res.key_id, V.ring_trusted.keys[0].key_id, 8);
	assert_string_equal(res.trusted_comment, tc_ed);
	/* err is left alone on success. */
	assert_int_equal(err.code, 0);
}

static void test_verify_legacy(void **state)
{
	struct sig_result res;
	struct tn_error err;

	(void)state;
	assert_int_equal(verify(&V.ring_trusted, V.msg.data, V.msg.len, V.sig_legacy.data, V.sig_legacy.len,
				&res, &err),
			 0);
	assert_string_equal(res.alg, "Ed");
	assert_memory_equal(res.key_id, V.ring_trusted.keys[0].key_id, 8);
	assert_string_equal(res.trusted_comment, tc_legacy);
}

static void test_verify_other_key_when_trusted(void **state)
{
	struct sig_keyring ring = V.ring_trusted;
	struct sig_result res;
	struct tn_error err;
	char hex[17];

	(void)state;
	ring.keys[ring.n++] = V.ring_other.keys[0];
	assert_int_equal(verify(&ring, V.msg.data, V.msg.len, V.sig_other.data, V.sig_other.len, &res, &err),
			 0);
	assert_string_equal(res.alg, "ED");
	assert_string_equal(res.trusted_comment, tc_other);
	sig_key_id_hex(res.key_id, hex);
	assert_string_equal(hex, V.other_hex);
	VERIFIES(&ring, V.msg.data, V.msg.len, V.sig_legacy.data, V.sig_legacy.len, "Ed", tc_legacy);
}

static void test_verify_edge_cases(void **state)
{
	char out[SIG_MAX_FILE_BYTES + 64], comment[SIG_TRUSTED_COMMENT_MAX + 2];
	char untrusted[SIG_MAX_FILE_BYTES];
	size_t n, fill;

	(void)state;
	/* make_sig, used below, must sign exactly as the CLI does. */
	n = make_sig("ED", (const uint8_t *)V.msg.data, V.msg.len, "signature from minisign secret key",
		     tc_ed, strlen(tc_ed), out, sizeof(out));
	assert_int_equal(n, V.sig_ed.len);
	assert_memory_equal(out, V.sig_ed.data, n);
	n = make_sig("Ed", (const uint8_t *)V.msg.data, V.msg.len, "signature from minisign secret key",
		     tc_legacy, strlen(tc_legacy), out, sizeof(out));
	assert_int_equal(n, V.sig_legacy.len);
	assert_memory_equal(out, V.sig_legacy.data, n);

	/* The empty message, as NULL or not, both algorithms. */
	n = make_sig("ED", (const uint8_t *)"", 0, "e", "empty", 5, out, sizeof(out));
	VERIFIES(&V.ring_trusted, NULL, 0, out, n, "ED", "empty");
	VERIFIES(&V.ring_trusted, "", 0, out, n, "ED", "empty");
	REFUSED(&V.ring_trusted, "\n", 1, out, n, EKEYREJECTED, "manifest's signature");
	n = make_sig("Ed", (const uint8_t *)"", 0, "e", "empty", 5, out, sizeof(out));
	VERIFIES(&V.ring_trusted, NULL, 0, out, n, "Ed", "empty");
	/* An empty trusted comment. */
	n = make_sig("ED", (const uint8_t *)V.msg.data, V.msg.len, "e", "", 0, out, sizeof(out));
	VERIFIES(&V.ring_trusted, V.msg.data, V.msg.len, out, n, "ED", "");
	/* The longest trusted comment, and one byte more (though validly signed). */
	memset(comment, 'c', sizeof(comment));
	comment[SIG_TRUSTED_COMMENT_MAX] = '\0';
	n = make_sig("ED", (const uint8_t *)V.msg.data, V.msg.len, "e", comment, SIG_TRUSTED_COMMENT_MAX, out,
		     sizeof(out));
	VERIFIES(&V.ring_trusted, V.msg.data, V.msg.len, out, n, "ED", comment);
	comment[SIG_TRUSTED_COMMENT_MAX] = 'c';
	n = make_sig("ED", (const uint8_t *)V.msg.data, V.msg.len, "e", comment, SIG_TRUSTED_COMMENT_MAX + 1,
		     out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG,
			 "line 3: trusted comment is 1025 bytes, more than 1024");
	/* A file of exactly SIG_MAX_FILE_BYTES (long untrusted comment), then one more. */
	n = make_sig("ED", (const uint8_t *)V.msg.data, V.msg.len, "", "x", 1, out, sizeof(out));
	fill = SIG_MAX_FILE_BYTES - n;
	memset(untrusted, 'u', fill);
	untrusted[fill] = '\0';
	n = make_sig("ED", (const uint8_t *)V.msg.data, V.msg.len, untrusted, "x", 1, out, sizeof(out));
	assert_int_equal(n, SIG_MAX_FILE_BYTES);
	VERIFIES(&V.ring_trusted, V.msg.data, V.msg.len, out, n, "ED", "x");
	untrusted[fill] = 'u';
	untrusted[fill + 1] = '\0';
	n = make_sig("ED", (const uint8_t *)V.msg.data, V.msg.len, untrusted, "x", 1, out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, "file is 4097 bytes, more than 4096");
}

/* Two trusted keys may share a key id; the right one must still be found. */
static void test_verify_shared_key_id(void **state)
{
	struct sig_keyring ring = { 0 };

	(void)state;
	ring.keys[0] = V.ring_trusted.keys[0];
	memcpy(ring.keys[0].pk, V.ring_other.keys[0].pk, SIG_PK_BYTES);
	ring.n = 1;
	REFUSED_GOOD_MSG(&ring, V.sig_ed.data, V.sig_ed.len, EKEYREJECTED,
			 "signature: the manifest's signature does not verify (it was changed after signing, or another key signed it)");
	ring.keys[ring.n++] = V.ring_trusted.keys[0];
	VERIFIES(&ring, V.msg.data, V.msg.len, V.sig_ed.data, V.sig_ed.len, "ED", tc_ed);
	VERIFIES(&ring, V.msg.data, V.msg.len, V.sig_legacy.data, V.sig_legacy.len, "Ed", tc_legacy);
}

/* ---- signatures: forgeries ---------------------------------------------- */

static void test_verify_untrusted_key(void **state)
{
	struct sig_keyring empty = { 0 };
	char want[128];

	(void)state;
	snprintf(want, sizeof(want), "signature: key id %s is not trusted", V.other_hex);
	REFUSED_GOOD_MSG(&V.ring_trusted, V.sig_other.data, V.sig_other.len, ENOKEY, want);
	snprintf(want, sizeof(want), "signature: key id %s is not trusted", V.trusted_hex);
	REFUSED_GOOD_MSG(&V.ring_other, V.sig_ed.data, V.sig_ed.len, ENOKEY, want);
	REFUSED_GOOD_MSG(&V.ring_other, V.sig_legacy.data, V.sig_legacy.len, ENOKEY, want);
	REFUSED_GOOD_MSG(&empty, V.sig_ed.data, V.sig_ed.len, ENOKEY, want);
	REFUSED_GOOD_MSG(NULL, V.sig_ed.data, V.sig_ed.len, ENOKEY, want);
	/* the refusal names the keys that are trusted, or that none is */
	snprintf(want, sizeof(want), "is not trusted: the trusted keys are %s", V.trusted_hex);
	REFUSED_GOOD_MSG(&V.ring_trusted, V.sig_other.data, V.sig_other.len, ENOKEY, want);
	REFUSED_GOOD_MSG(&empty, V.sig_ed.data, V.sig_ed.len, ENOKEY, "is not trusted: no key is trusted");
}

/* The key id is checked before any signature: a forgery under an unknown key
 * id reads "not trusted", not "does not verify". */
static void test_verify_key_id_first(void **state)
{
	struct sigfile sf;
	uint8_t blob[74], gsig[64];
	char out[SIG_MAX_FILE_BYTES];
	size_t n;

	(void)state;
	sf_split(&V.sig_other, &sf);
	sf_decode(&sf, 1, blob, sizeof(blob));
	blob[20] ^= 0x01;
	sf_encode(&sf, 1, blob, sizeof(blob));
	sf_decode(&sf, 3, gsig, sizeof(gsig));
	gsig[0] ^= 0x01;
	sf_encode(&sf, 3, gsig, sizeof(gsig));
	n = sf_join(&sf, "\n", out, sizeof(out));
	REFUSED(&V.ring_trusted, "tampered", 8, out, n, ENOKEY, "is not trusted");
}

static void test_verify_key_id_flip(void **state)
{
	const struct vec *sigs[] = { &V.sig_ed, &V.sig_legacy };
	char out[SIG_MAX_FILE_BYTES];
	struct sigfile sf;
	uint8_t blob[74];
	size_t s, i, n;

	(void)state;
	for (s = 0; s < 2; s++) {
		for (i = 2; i < 10; i++) {
			sf_split(sigs[s], &sf);
			sf_decode(&sf, 1, blob, sizeof(blob));
			blob[i] ^= 0x80;
			sf_encode(&sf, 1, blob, sizeof(blob));
			n = sf_join(&sf, "\n", out, sizeof(out));
			REFUSED_GOOD_MSG(&V.ring_trusted, out, n, ENOKEY, "is not trusted");
		}
	}
}

static void test_verify_message_flip(void **state)
{
	const struct vec *sigs[] = { &V.sig_ed, &V.sig_legacy };
	char msg[SIG_MAX_FILE_BYTES];
	size_t s, i;

	(void)state;
	assert_true(V.msg.len < sizeof(msg));
	for (s = 0; s < 2; s++) {
		for (i = 0; i < V.msg.len; i++) {
			memcpy(msg, V.msg.data, V.msg.len);
			msg[i] ^= 0x01;
			REFUSED(&V.ring_trusted, msg, V.msg.len, sigs[s]->data, sigs[s]->len, EKEYREJECTED,
				"signature: the manifest's signature does not verify (it was changed after signing, or another key signed it)");
		}
		/* One byte fewer or more. */
		memcpy(msg, V.msg.data, V.msg.len);
		msg[V.msg.len] = '\n';
		REFUSED(&V.ring_trusted, msg, V.msg.len - 1, sigs[s]->data, sigs[s]->len, EKEYREJECTED,
			"manifest's signature does not verify");
		REFUSED(&V.ring_trusted, msg, V.msg.len + 1, sigs[s]->data, sigs[s]->len, EKEYREJECTED,
			"manifest's signature does not verify");
		/* Another key's message. */
		REFUSED(&V.ring_trusted, V.pub_trusted.data, V.pub_trusted.len, sigs[s]->data, sigs[s]->len,
			EKEYREJECTED, "manifest's signature does not verify");
	}
}

static void test_verify_file_sig_flip(void **state)
{
	const struct vec *sigs[] = { &V.sig_ed, &V.sig_legacy };
	char out[SIG_MAX_FILE_BYTES];
	struct sigfile sf;
	uint8_t blob[74];
	size_t s, i, n;

	(void)state;
	for (s = 0; s < 2; s++) {
		for (i = 10; i < 74; i++) {
			sf_split(sigs[s], &sf);
			sf_decode(&sf, 1, blob, sizeof(blob));
			blob[i] ^= 0x01;
			sf_encode(&sf, 1, blob, sizeof(blob));
			n = sf_join(&sf, "\n", out, sizeof(out));
			REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EKEYREJECTED,
					 "signature: the manifest's signature does not verify (it was changed after signing, or another key signed it)");
		}
	}
}

static void test_verify_global_sig_flip(void **state)
{
	const struct vec *sigs[] = { &V.sig_ed, &V.sig_legacy };
	char out[SIG_MAX_FILE_BYTES];
	struct sigfile sf;
	uint8_t gsig[64];
	size_t s, i, n;

	(void)state;
	for (s = 0; s < 2; s++) {
		for (i = 0; i < 64; i++) {
			sf_split(sigs[s], &sf);
			sf_decode(&sf, 3, gsig, sizeof(gsig));
			gsig[i] ^= 0x01;
			sf_encode(&sf, 3, gsig, sizeof(gsig));
			n = sf_join(&sf, "\n", out, sizeof(out));
			REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EKEYREJECTED,
					 "signature: trusted comment does not verify");
		}
	}
}

static void test_verify_trusted_comment_tampered(void **state)
{
	static const char *const comments[] = {
		"trusted comment: turninit test vector: good.json prehashed by test-trustee",
		"trusted comment: turninit test vector: good.json prehashed by test-trusted ",
		"trusted comment: turninit test vector: good.json prehashed by test-truste",
		"trusted comment: Turninit test vector: good.json prehashed by test-trusted",
		"trusted comment: ",
		"trusted comment: turninit test vector: good.json legacy by test-trusted",
	};
	char out[SIG_MAX_FILE_BYTES];
	struct sigfile sf;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(comments) / sizeof(comments[0]); i++) {
		sf_split(&V.sig_ed, &sf);
		strcpy(sf.line[2], comments[i]);
		n = sf_join(&sf, "\n", out, sizeof(out));
		REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EKEYREJECTED,
				 "signature: trusted comment does not verify");
	}
	/* A comment and global signature moved over from another signature. */
	sf_split(&V.sig_ed, &sf);
	{
		struct sigfile legacy;

		sf_split(&V.sig_legacy, &legacy);
		strcpy(sf.line[2], legacy.line[2]);
		strcpy(sf.line[3], legacy.line[3]);
	}
	n = sf_join(&sf, "\n", out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EKEYREJECTED, "trusted comment does not verify");
}

static void test_verify_algorithm(void **state)
{
	static const char *const unknown[] = { "EE", "ed", "eD", "Ex", "\0D", "dE" };
	char out[SIG_MAX_FILE_BYTES];
	struct sigfile sf;
	uint8_t blob[74];
	size_t i, n;

	(void)state;
	/* Downgrade ED -> Ed and upgrade Ed -> ED: both signatures then disagree. */
	sf_split(&V.sig_ed, &sf);
	sf_decode(&sf, 1, blob, sizeof(blob));
	blob[1] = 'd';
	sf_encode(&sf, 1, blob, sizeof(blob));
	n = sf_join(&sf, "\n", out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EKEYREJECTED, "manifest's signature does not verify");
	sf_split(&V.sig_legacy, &sf);
	sf_decode(&sf, 1, blob, sizeof(blob));
	blob[1] = 'D';
	sf_encode(&sf, 1, blob, sizeof(blob));
	n = sf_join(&sf, "\n", out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EKEYREJECTED, "manifest's signature does not verify");
	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		sf_split(&V.sig_ed, &sf);
		sf_decode(&sf, 1, blob, sizeof(blob));
		memcpy(blob, unknown[i], 2);
		sf_encode(&sf, 1, blob, sizeof(blob));
		n = sf_join(&sf, "\n", out, sizeof(out));
		REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, "signature: line 2: unknown algorithm");
	}
}

static void test_verify_truncated(void **state)
{
	const struct vec *sigs[] = { &V.sig_ed, &V.sig_legacy };
	size_t s, n;

	(void)state;
	for (s = 0; s < 2; s++) {
		/* Every cut short of the final newline is malformed. */
		for (n = 0; n + 1 < sigs[s]->len; n++)
			REFUSED_GOOD_MSG(&V.ring_trusted, sigs[s]->data, n, EBADMSG, "signature: ");
		/* Without its final newline the file is still whole. */
		VERIFIES(&V.ring_trusted, V.msg.data, V.msg.len, sigs[s]->data, sigs[s]->len - 1,
			 s ? "Ed" : "ED", s ? tc_legacy : tc_ed);
	}
	REFUSED_GOOD_MSG(&V.ring_trusted, "", 0, EBADMSG, "signature: line 1 is missing");
	REFUSED_GOOD_MSG(&V.ring_trusted, NULL, 0, EBADMSG, "signature: line 1 is missing");
	{
		/* Cut after whole lines: the right line is named. */
		const char *p = V.sig_ed.data;
		char want[48];
		int line;

		for (line = 1; line <= 3; line++) {
			p = strchr(p, '\n') + 1;
			snprintf(want, sizeof(want), "signature: line %d is missing", line + 1);
			REFUSED_GOOD_MSG(&V.ring_trusted, V.sig_ed.data, (size_t)(p - V.sig_ed.data), EBADMSG,
					 want);
		}
	}
}

static void test_verify_bad_base64(void **state)
{
	char out[SIG_MAX_FILE_BYTES], line[MAX_LINE];
	struct sigfile sf;
	size_t n, len;
	int idx;

	(void)state;
	for (idx = 1; idx <= 3; idx += 2) {
		char want[64];

		snprintf(want, sizeof(want), "signature: line %d: bad base64", idx + 1);
		/* A character outside the alphabet. */
		sf_split(&V.sig_ed, &sf);
		sf.line[idx][7] = '*';
		n = sf_join(&sf, "\n", out, sizeof(out));
		REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, want);
		/* Whitespace before or after. */
		sf_split(&V.sig_ed, &sf);
		snprintf(line, sizeof(line), "%s ", sf.line[idx]);
		strcpy(sf.line[idx], line);
		n = sf_join(&sf, "\n", out, sizeof(out));
		REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, want);
		sf_split(&V.sig_ed, &sf);
		snprintf(line, sizeof(line), "\t%s", sf.line[idx]);
		strcpy(sf.line[idx], line);
		n = sf_join(&sf, "\n", out, sizeof(out));
		REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, want);
		/* Padding removed. */
		sf_split(&V.sig_ed, &sf);
		len = strlen(sf.line[idx]);
		assert_int_equal(sf.line[idx][len - 1], '=');
		while (len > 0 && sf.line[idx][len - 1] == '=')
			sf.line[idx][--len] = '\0';
		n = sf_join(&sf, "\n", out, sizeof(out));
		REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, want);
		/* Empty line. */
		sf_split(&V.sig_ed, &sf);
		sf.line[idx][0] = '\0';
		n = sf_join(&sf, "\n", out, sizeof(out));
		REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, want);
		/* Non-zero bits past the end of the data (non-canonical encoding). */
		sf_split(&V.sig_ed, &sf);
		len = strlen(sf.line[idx]);
		while (sf.line[idx][len - 1] == '=')
			len--;
		sf.line[idx][len - 1] = (char)(sf.line[idx][len - 1] == 'B' ? 'C' : 'B');
		n = sf_join(&sf, "\n", out, sizeof(out));
		REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, want);
	}
}

static void test_verify_wrong_lengths(void **state)
{
	char out[SIG_MAX_FILE_BYTES];
	struct sigfile sf;
	uint8_t blob[75], gsig[65];
	size_t n;

	(void)state;
	sf_split(&V.sig_ed, &sf);
	sf_decode(&sf, 1, blob, 74);
	blob[74] = 0;
	sf_encode(&sf, 1, blob, 75);
	n = sf_join(&sf, "\n", out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG,
			 "signature: line 2: signature is 75 bytes, expected 74");
	sf_encode(&sf, 1, blob, 73);
	n = sf_join(&sf, "\n", out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, "line 2: signature is 73 bytes");

	sf_split(&V.sig_ed, &sf);
	sf_decode(&sf, 3, gsig, 64);
	gsig[64] = 0;
	sf_encode(&sf, 3, gsig, 65);
	n = sf_join(&sf, "\n", out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG,
			 "signature: line 4: global signature is 65 bytes, expected 64");
	sf_encode(&sf, 3, gsig, 63);
	n = sf_join(&sf, "\n", out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, "line 4: global signature is 63 bytes");
	/* A public key where the signature line belongs. */
	sf_split(&V.sig_ed, &sf);
	pub_line2(&V.pub_trusted, sf.line[1], MAX_LINE);
	n = sf_join(&sf, "\n", out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, "line 2: signature is 42 bytes");
}

static void test_verify_bad_prefixes(void **state)
{
	static const struct {
		int idx;
		const char *text;
		const char *want;
	} cases[] = {
		{ 0, "untrusted comment:signature from minisign secret key", "line 1: does not start" },
		{ 0, "Untrusted comment: signature from minisign secret key", "line 1: does not start" },
		{ 0, " untrusted comment: x", "line 1: does not start" },
		{ 0, "", "line 1: does not start" },
		{ 2, "trusted comment:turninit test vector: good.json prehashed by test-trusted",
		  "line 3: does not start with \"trusted comment: \"" },
		{ 2, "untrusted comment: turninit test vector: good.json prehashed by test-trusted",
		  "line 3: does not start" },
		{ 2, "turninit test vector: good.json prehashed by test-trusted", "line 3: does not start" },
		{ 2, "", "line 3: does not start" },
	};
	char out[SIG_MAX_FILE_BYTES];
	struct sigfile sf;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sf_split(&V.sig_ed, &sf);
		strcpy(sf.line[cases[i].idx], cases[i].text);
		n = sf_join(&sf, "\n", out, sizeof(out));
		REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, cases[i].want);
	}
	/* Lines 3 and 4 swapped with 1 and 2. */
	sf_split(&V.sig_ed, &sf);
	n = (size_t)snprintf(out, sizeof(out), "%s\n%s\n%s\n%s\n", sf.line[2], sf.line[3], sf.line[0],
			     sf.line[1]);
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, "line 1: does not start");
}

static void test_verify_trailing_data(void **state)
{
	static const char *const tails[] = { "\n",   "x",  "x\n",  " ",
					     "\n\n", "\r", "\r\n", "untrusted comment: more\n",
					     "\t" };
	char out[SIG_MAX_FILE_BYTES];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		n = (size_t)snprintf(out, sizeof(out), "%s%s", V.sig_ed.data, tails[i]);
		REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, "signature: unexpected data after line 4");
	}
	/* Two signature files back to back. */
	n = (size_t)snprintf(out, sizeof(out), "%s%s", V.sig_ed.data, V.sig_legacy.data);
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, "unexpected data after line 4");
}

static void test_verify_nul_byte(void **state)
{
	char out[SIG_MAX_FILE_BYTES];
	size_t n, cut;

	(void)state;
	/* In the trusted comment, validly signed. */
	n = make_sig("ED", (const uint8_t *)V.msg.data, V.msg.len, "e", "a\0b", 3, out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, "signature: file contains a NUL byte");
	/* In the untrusted comment. */
	memcpy(out, V.sig_ed.data, V.sig_ed.len);
	cut = strlen("untrusted comment: ");
	out[cut] = '\0';
	REFUSED_GOOD_MSG(&V.ring_trusted, out, V.sig_ed.len, EBADMSG, "NUL byte");
	/* As the final byte. */
	memcpy(out, V.sig_ed.data, V.sig_ed.len);
	out[V.sig_ed.len] = '\0';
	REFUSED_GOOD_MSG(&V.ring_trusted, out, V.sig_ed.len + 1, EBADMSG, "NUL byte");
}

/* CRLF decision (see signature.c): "\r\n" ends a line like "\n" and the "\r"
 * is not part of the trusted comment; a lone "\r" ends nothing. */
static void test_verify_crlf(void **state)
{
	char out[SIG_MAX_FILE_BYTES];
	struct sigfile sf;
	size_t n;

	(void)state;
	sf_split(&V.sig_ed, &sf);
	n = sf_join(&sf, "\r\n", out, sizeof(out));
	VERIFIES(&V.ring_trusted, V.msg.data, V.msg.len, out, n, "ED", tc_ed);
	/* Without the final line ending, or with "\n" on some lines only. */
	VERIFIES(&V.ring_trusted, V.msg.data, V.msg.len, out, n - 2, "ED", tc_ed);
	n = (size_t)snprintf(out, sizeof(out), "%s\r\n%s\n%s\r\n%s", sf.line[0], sf.line[1], sf.line[2],
			     sf.line[3]);
	VERIFIES(&V.ring_trusted, V.msg.data, V.msg.len, out, n, "ED", tc_ed);
	sf_split(&V.sig_legacy, &sf);
	n = sf_join(&sf, "\r\n", out, sizeof(out));
	VERIFIES(&V.ring_trusted, V.msg.data, V.msg.len, out, n, "Ed", tc_legacy);

	/* A lone "\r" at the end, "\r\r\n", or "\r" as the only separator. */
	sf_split(&V.sig_ed, &sf);
	n = (size_t)snprintf(out, sizeof(out), "%s\n%s\n%s\n%s\r", sf.line[0], sf.line[1], sf.line[2],
			     sf.line[3]);
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, "line 4: bad base64");
	n = sf_join(&sf, "\r\r\n", out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, "line 2: bad base64");
	n = sf_join(&sf, "\r", out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, "line 2 is missing");

	/* A "\r" inside the trusted comment is signed, but no printable text... */
	n = make_sig("ED", (const uint8_t *)V.msg.data, V.msg.len, "e", "a\rb", 3, out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG,
			 "line 3: trusted comment is not printable text (byte 0x0d at offset 1)");
	/* ...but one right before "\n" is a line ending, so a comment signed with
	 * it does not verify (as with the minisign CLI). */
	n = make_sig("ED", (const uint8_t *)V.msg.data, V.msg.len, "e", "ab\r", 3, out, sizeof(out));
	REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EKEYREJECTED, "trusted comment does not verify");
}

/* The trusted comment is text: tab, printable ASCII, UTF-8 from U+00A0. A
 * validly signed comment with a control byte or bad UTF-8 is refused. */
static void test_verify_comment_printable(void **state)
{
	static const struct {
		const char *c;
		const char *why;
	} bad[] = {
		{ "a\x01", "byte 0x01 at offset 1" },      { "\x1b[2J", "byte 0x1b at offset 0" },
		{ "x\x7f", "byte 0x7f at offset 1" },      { "\xc2\x85", "byte 0xc2 at offset 0" },
		{ "\xc0\xaf", "byte 0xc0 at offset 0" },   { "\xe0\x80\xaf", "byte 0xe0" },
		{ "\xed\xa0\x80", "byte 0xed" },           { "\xf4\x90\x80\x80", "byte 0xf4" },
		{ "ok\xe2\x9c", "byte 0xe2 at offset 2" }, { "\xff", "byte 0xff" },
	};
	static const char *const good[] = {
		"timestamp:1700000000\tfile:m.json\thashed",
		"h\xc3\xa9llo \xe2\x9c\x93",
		"\xc2\xa0nbsp",
		"\xf0\x9f\x94\x91 key",
		" ~",
	};
	char out[SIG_MAX_FILE_BYTES];
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = make_sig("ED", (const uint8_t *)V.msg.data, V.msg.len, "e", bad[i].c, strlen(bad[i].c),
			     out, sizeof(out));
		REFUSED_GOOD_MSG(&V.ring_trusted, out, n, EBADMSG, bad[i].why);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		n = make_sig("ED", (const uint8_t *)V.msg.data, V.msg.len, "e", good[i], strlen(good[i]), out,
			     sizeof(out));
		VERIFIES(&V.ring_trusted, V.msg.data, V.msg.len, out, n, "ED", good[i]);
	}
}

static void test_verify_ret_untouched(void **state)
{
	struct sig_result res, before;
	struct tn_error err;

	(void)state;
	memset(&res, 0x5A, sizeof(res));
	before = res;
	assert_int_equal(verify(&V.ring_trusted, "x", 1, V.sig_ed.data, V.sig_ed.len, &res, &err),
			 -EKEYREJECTED);
	assert_memory_equal(&res, &before, sizeof(res));
	assert_int_equal(verify(&V.ring_trusted, V.msg.data, V.msg.len, V.sig_other.data, V.sig_other.len,
				&res, &err),
			 -ENOKEY);
	assert_memory_equal(&res, &before, sizeof(res));
	/* A NULL err is allowed: the message is dropped. */
	assert_int_equal(sig_verify(&V.ring_trusted, (const uint8_t *)V.msg.data, V.msg.len, "", 0, &res,
				    NULL),
			 -EBADMSG);
	assert_int_equal(sig_parse_pubkeys("", 0, &V.ring_other, NULL), -ENOKEY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_id_hex),
		cmocka_unit_test(test_pubkey_file),
		cmocka_unit_test(test_pubkey_lone_line),
		cmocka_unit_test(test_pubkey_two_keys),
		cmocka_unit_test(test_pubkey_blank_lines_and_crlf),
		cmocka_unit_test(test_pubkey_bad_base64),
		cmocka_unit_test(test_pubkey_wrong_length),
		cmocka_unit_test(test_pubkey_wrong_algorithm),
		cmocka_unit_test(test_pubkey_too_many),
		cmocka_unit_test(test_pubkey_empty),
		cmocka_unit_test(test_pubkey_limits),
		cmocka_unit_test(test_verify_prehashed),
		cmocka_unit_test(test_verify_legacy),
		cmocka_unit_test(test_verify_other_key_when_trusted),
		cmocka_unit_test(test_verify_edge_cases),
		cmocka_unit_test(test_verify_shared_key_id),
		cmocka_unit_test(test_verify_untrusted_key),
		cmocka_unit_test(test_verify_key_id_first),
		cmocka_unit_test(test_verify_key_id_flip),
		cmocka_unit_test(test_verify_message_flip),
		cmocka_unit_test(test_verify_file_sig_flip),
		cmocka_unit_test(test_verify_global_sig_flip),
		cmocka_unit_test(test_verify_trusted_comment_tampered),
		cmocka_unit_test(test_verify_algorithm),
		cmocka_unit_test(test_verify_truncated),
		cmocka_unit_test(test_verify_bad_base64),
		cmocka_unit_test(test_verify_wrong_lengths),
		cmocka_unit_test(test_verify_bad_prefixes),
		cmocka_unit_test(test_verify_trailing_data),
		cmocka_unit_test(test_verify_nul_byte),
		cmocka_unit_test(test_verify_crlf),
		cmocka_unit_test(test_verify_comment_printable),
		cmocka_unit_test(test_verify_ret_untouched),
	};

	return cmocka_run_group_tests_name("signature", tests, group_setup, group_teardown);
}
