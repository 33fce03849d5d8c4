/* fuzz_signature.c - libFuzzer target for sig_parse_pubkeys and sig_verify
 * (policy/signature.c).
 *
 * Input: KEYS '\0' SIG. With no NUL byte the whole input is used as both.
 *  1. KEYS is parsed with sig_parse_pubkeys into an empty ring; when it yields
 *     keys, SIG is verified with that ring over tests/vectors/good.json.
 *  2. SIG is verified with a fixed ring (test-trusted.pub and test-other.pub)
 *     over good.json, and over KEYS as the message, so the base64, key id and
 *     Ed25519 paths are reached with real keys.
 * Each part is an exact-size copy without a NUL, so a read past len is caught.
 * A verdict of success that the message does not deserve is impossible to
 * check here; the error contract (ret written only on success) is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/signature.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* tests/vectors/good.json, byte for byte (checked once against good.json.minisig). */
static const char fuzz_good_json[] =
	"{\"turninit\":1,\"expires\":\"2099-01-01T00:00:00Z\",\"user\":{\"uid\":1000,\"gid\":1000},"
	"\"home\":\"/home/agent\",\"env\":{\"set\":{\"PATH\":\"/usr/bin:/bin\"},\"allow\":[\"TZ\"]}}\n";

/* tests/vectors/test-trusted.pub and test-other.pub. */
static const char fuzz_ring_text[] = "untrusted comment: minisign public key 67E58D09A36C051C\n"
				     "RWQcBWyjCY3lZxqIX2uPzXOM4ON0Jc3nQ/V6V7M81qVoABwwlXurtTwp\n"
				     "untrusted comment: minisign public key 3B6D018F2E7A9702\n"
				     "RWQCl3oujwFtO9vmNs7sV6IVljLO6FTbtJNkq3ZdV1KwuoYoxxzmVAC1\n";

/* tests/vectors/good.json.minisig */
static const char fuzz_good_sig[] =
	"untrusted comment: signature from minisign secret key\n"
	"RUQcBWyjCY3lZ3zZ9Ws5Sp6+rgd6FHPt1gQ0A43V5DcPRN2QS6FP9DZ8cDfjsolxjER0VC7+BAvKYUzJSABcGRyQgfCg84Js1Q8=\n"
	"trusted comment: turninit test vector: good.json prehashed by test-trusted\n"
	"jfYRp5x7+XoJartiL24lR0SbfdW3Fp1Hh7cQjn5vkTa7J8c5Kx32rq/Olt3U4wUHTPt283D/WoblINWeAh7yAg==\n";

static struct sig_keyring fuzz_ring;
static int fuzz_ready;

static void fuzz_setup(void)
{
	struct tn_error err = { 0 };
	struct sig_result res;

	if (fuzz_ready)
		return;
	if (sig_parse_pubkeys(fuzz_ring_text, strlen(fuzz_ring_text), &fuzz_ring, &err) != 0 ||
	    fuzz_ring.n != 2) {
		fprintf(stderr, "fuzz_signature: fixed ring does not parse: %s\n", err.msg);
		abort();
	}
	/* The embedded vector must verify, or the verify path is never reached. */
	if (sig_verify(&fuzz_ring, (const uint8_t *)fuzz_good_json, strlen(fuzz_good_json), fuzz_good_sig,
		       strlen(fuzz_good_sig), &res, &err) != 0) {
		fprintf(stderr, "fuzz_signature: embedded good.json does not verify: %s\n", err.msg);
		abort();
	}
	fuzz_ready = 1;
}

static char *fuzz_dup(const uint8_t *p, size_t n)
{
	char *c = malloc(n ? n : 1);

	if (c)
		memcpy(c, p, n);
	return c;
}

/* ret is written only on success: a poisoned result must stay poisoned. */
static void fuzz_verify(const struct sig_keyring *ring, const uint8_t *msg, size_t msg_len, const char *sig,
			size_t sig_len)
{
	struct tn_error err = { 0 };
	struct sig_result res;
	int r;

	memset(&res, 0xA5, sizeof(res));
	r = sig_verify(ring, msg, msg_len, sig, sig_len, &res, &err);
	if (r == 0) {
		if (memchr(res.trusted_comment, '\0', sizeof(res.trusted_comment)) == NULL ||
		    res.alg[2] != '\0')
			abort();
	} else {
		const unsigned char *b = (const unsigned char *)&res;
		for (size_t i = 0; i < sizeof(res); i++)
			if (b[i] != 0xA5)
				abort();
		if (err.msg[0] == '\0')
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memchr(data, '\0', size);
	size_t klen = sep ? (size_t)(sep - data) : size;
	const uint8_t *s = sep ? sep + 1 : data;
	size_t slen = sep ? size - klen - 1 : size;
	struct sig_keyring ring;
	struct tn_error err = { 0 };
	char *keys, *sig;
	int r;

	fuzz_setup();
	keys = fuzz_dup(data, klen);
	sig = fuzz_dup(s, slen);
	if (!keys || !sig)
		goto out;

	memset(&ring, 0, sizeof(ring));
	r = sig_parse_pubkeys(keys, klen, &ring, &err);
	if (r == 0) {
		if (ring.n == 0 || ring.n > SIG_MAX_KEYS)
			abort();
		fuzz_verify(&ring, (const uint8_t *)fuzz_good_json, strlen(fuzz_good_json), sig, slen);
	} else if (ring.n != 0) {
		abort(); /* ring is left unchanged on error */
	}
	fuzz_verify(&fuzz_ring, (const uint8_t *)fuzz_good_json, strlen(fuzz_good_json), sig, slen);
	fuzz_verify(&fuzz_ring, (const uint8_t *)keys, klen, sig, slen);
out:
	free(keys);
	free(sig);
	return 0;
}
