/* fuzz_gwhttp.c - libFuzzer target for the credential gateway's HTTP/1.1
 * (policy/gwhttp.c): gw_request, gw_body_feed in both modes, gw_response and
 * the redactor.
 *
 * The input: a byte STEP (pieces of 1 + STEP % 31 bytes), a byte FLAGS (bit 0:
 * the response answers a HEAD; bits 1-4: the value is the first 1 + (FLAGS >> 1
 * & 15) bytes of the response part; bit 5: a Basic user), two bytes N (little
 * endian), then N bytes a command sends (the request part) and the rest a
 * host sends back (the response part). Invariants that abort: a refusal gives
 * one line and no head; "read more" only below GW_HEAD_MAX; an accepted
 * request head holds one Host, one credential field and no other
 * Authorization, ends in "Connection: close" and an empty line, and is no
 * gateway request itself (origin form); a body read whole and in pieces
 * gives the same bytes, the same count used, the same verdict; a response
 * head ends in "Connection: close", holds no Transfer-Encoding and has a
 * status of 100..599; the redactor's output has the input's length, is the
 * same whole and in pieces, and holds no form of the value that has no '*'.
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/gwhttp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* lines of head that begin with name and a colon, any case */
static size_t count_field(const char *head, const char *name)
{
	size_t n = 0, k = strlen(name);

	for (const char *p = strstr(head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n"))
		if (strncasecmp(p + 2, name, k) == 0 && p[2 + k] == ':')
			n++;
	return n;
}

static void check_tail(const char *head, size_t len)
{
	static const char tail[] = "Connection: close\r\n\r\n";

	if (strlen(head) != len || len < sizeof(tail) - 1 ||
	    strcmp(head + len - (sizeof(tail) - 1), tail) != 0)
		abort();
}

/* A verdict of gw_request or gw_response that is no head: a refusal with one
 * line and nothing allocated, or "read more" below the bound. True then. */
static bool not_parsed(int rc, const char *head, size_t len, const struct tn_error *err)
{
	if (rc < 0 && (head || !err->msg[0] || strchr(err->msg, '\n')))
		abort();
	if (rc == 1 && (head || len >= GW_HEAD_MAX))
		abort();
	return rc != 0;
}

/* The body at in[0..len) read whole and in pieces of step bytes: the same
 * verdict, bytes used and bytes out. */
static void body_both_ways(const struct gw_body *start, bool decode, const char *in, size_t len, size_t step)
{
	char *whole = malloc(len + 1), *cut = malloc(len + 1);
	struct gw_body a = *start, b = *start;
	struct tn_error err = { 0 };
	size_t used_a = 0, out_a = 0, used_b = 0, out_b = 0;
	int rc_a = gw_body_feed(&a, decode, in, len, whole, &used_a, &out_a, &err), rc_b = 0;

	if (rc_a < 0 && (!err.msg[0] || strchr(err.msg, '\n')))
		abort();
	for (size_t at = 0; at < len && !b.done;) {
		size_t piece = len - at < step ? len - at : step, u, o;

		rc_b = gw_body_feed(&b, decode, in + at, piece, cut + out_b, &u, &o, &err);
		if (rc_b < 0)
			break;
		if (u > piece || o > u)
			abort();
		used_b += u;
		out_b += o;
		if (u < piece)
			break;
		at += u;
	}
	if ((rc_a < 0) != (rc_b < 0) || (rc_a < 0 && rc_a != rc_b))
		abort();
	if (rc_a == 0 && (used_a != used_b || out_a != out_b || memcmp(whole, cut, out_a) != 0 ||
			  a.done != b.done || used_a > len || out_a > used_a))
		abort();
	free(whole);
	free(cut);
}

static void request(const char *in, size_t len, size_t step)
{
	static const struct gw_cred cred = { "PRIVATE-TOKEN", "tok" };
	struct gw_body body;
	struct tn_error err = { 0 };
	char *head = NULL, method[16], path[32];
	size_t head_len, used;
	int rc = gw_request(in, len, "git.example.test", &cred, &head, &head_len, &used, &body, method, path,
			    sizeof(path), &err);

	if (not_parsed(rc, head, len, &err))
		return;
	check_tail(head, head_len);
	if (used > len || used < 4 || memcmp(in + used - 4, "\r\n\r\n", 4) != 0 || strlen(method) > 15 ||
	    strlen(path) >= sizeof(path) || count_field(head, "host") != 1 ||
	    count_field(head, "private-token") != 1 || count_field(head, "authorization") != 0 ||
	    count_field(head, "proxy-authorization") != 0)
		abort();
	{
		char *again = NULL;
		size_t l2, u2;
		struct gw_body b2;

		if (gw_request(head, head_len, "git.example.test", &cred, &again, &l2, &u2, &b2, method, path,
			       sizeof(path), &err) >= 0 ||
		    again)
			abort();
	}
	free(head);
	body_both_ways(&body, false, in + used, len - used, step);
	body_both_ways(&body, true, in + used, len - used, step);
}

static void response(const char *in, size_t len, bool head_request, size_t step)
{
	struct gw_body body;
	struct tn_error err = { 0 };
	char *head = NULL;
	size_t head_len, used;
	int status, rc = gw_response(in, len, head_request, &head, &head_len, &status, &used, &body, &err);

	if (not_parsed(rc, head, len, &err))
		return;
	check_tail(head, head_len);
	if (used > len || status < 100 || status > 599 || count_field(head, "transfer-encoding") != 0 ||
	    count_field(head, "connection") != 1)
		abort();
	free(head);
	body_both_ways(&body, true, in + used, len - used, step);
}

/* in through the redactor in pieces of step bytes (len: whole); the output
 * in out (room for len + GW_PATTERN_MAX). */
static size_t redact(struct gw_redact *r, const char *in, size_t len, size_t step, char *out)
{
	size_t n = 0, o;

	for (size_t at = 0; at < len; at += step) {
		size_t piece = len - at < step ? len - at : step;

		gw_redact_feed(r, in + at, piece, false, out + n, &o);
		n += o;
		if (n > at + piece || r->n_held >= r->longest)
			abort();
	}
	gw_redact_feed(r, "", 0, true, out + n, &o);
	return n + o;
}

static void redactor(const char *in, size_t len, size_t vlen, bool basic, size_t step)
{
	struct gw_redact *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	char *whole = malloc(len + GW_PATTERN_MAX), *cut = malloc(len + GW_PATTERN_MAX);
	struct tn_error err = { 0 };

	if (vlen > len)
		goto out;
	if (gw_redact_init(a, in, vlen, basic ? "user" : NULL, &err) != 0 ||
	    gw_redact_init(b, in, vlen, basic ? "user" : NULL, &err) != 0)
		abort();
	if (redact(a, in, len, len ? len : 1, whole) != len || redact(b, in, len, step, cut) != len ||
	    memcmp(whole, cut, len) != 0 || a->count != b->count || a->count == 0)
		abort();
	for (size_t k = 0; k < a->n_pat; k++)
		if (!memchr(a->pat[k], '*', a->pat_len[k]) && memmem(whole, len, a->pat[k], a->pat_len[k]))
			abort();
out:
	free(a);
	free(b);
	free(whole);
	free(cut);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data + 4;
	size_t step, n, rest;

	if (size < 4)
		return 0;
	step = 1 + data[0] % 31;
	n = (size_t)data[2] | (size_t)data[3] << 8;
	if (n > size - 4)
		n = size - 4;
	rest = size - 4 - n;
	request(in, n, step);
	response(in + n, rest, data[1] & 1, step);
	redactor(in + n, rest, 1 + (data[1] >> 1 & 15), data[1] & 32, step);
	return 0;
}
