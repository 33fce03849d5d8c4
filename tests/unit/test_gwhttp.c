/* test_gwhttp.c - the credential gateway's HTTP/1.1 (policy/gwhttp.c): the
 * request rewritten for the host, the body's framing, the response head,
 * and the redactor of the credential's value. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/gwhttp.h"

static const struct gw_cred bearer = { "Authorization", "Bearer s3cr3t" };
static const struct gw_cred token = { "PRIVATE-TOKEN", "glpat-s3cr3t" };

struct req {
	char *head;
	size_t head_len, consumed;
	struct gw_body body;
	char method[16];
	char path[64];
	struct tn_error err;
};

static int request(const char *s, const struct gw_cred *cred, struct req *r)
{
	memset(r, 0, sizeof(*r));
	return gw_request(s, strlen(s), "git.example.test", cred, &r->head, &r->head_len, &r->consumed,
			  &r->body, r->method, r->path, sizeof(r->path), &r->err);
}

/* The request line in origin form, Host from the caller, the command's own
 * credentials and hop-by-hop fields gone (any case, every occurrence), the
 * Accept-Encoding, Range and If-Range gone (a compressed or ranged echo
 * would pass the redactor), the credential written once, then
 * "Accept-Encoding: identity" and "Connection: close". */
static void test_request_rewrite(void **state)
{
	const char *h = "POST http://git.example.test:443/api/v4/x?private=1 HTTP/1.1\r\n"
			"Host: admin.internal\r\nAuthorization: Bearer forged\r\n"
			"private-token: forged\r\nAccept: */*\r\nPROXY-AUTHORIZATION: Basic eDp5\r\n"
			"Proxy-Connection: keep-alive\r\nConnection: keep-alive, Upgrade\r\n"
			"Upgrade: h2c\r\nTE: trailers\r\nKeep-Alive: 5\r\nTrailer: X\r\n"
			"Expect: 100-continue\r\nauthorization: Basic Zm9yZ2Vk\r\n"
			"Accept-Encoding: gzip, br\r\nRange: bytes=5-\r\nIf-Range: \"x\"\r\n"
			"Content-Length: 4\r\nX-Private-Token-Note: kept\r\n\r\nbodyGET";
	struct req r;

	(void)state;
	assert_int_equal(request(h, &token, &r), 0);
	assert_string_equal(r.head,
			    "POST /api/v4/x?private=1 HTTP/1.1\r\nHost: git.example.test\r\n"
			    "Accept: */*\r\nContent-Length: 4\r\nX-Private-Token-Note: kept\r\n"
			    "PRIVATE-TOKEN: glpat-s3cr3t\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n");
	assert_int_equal(r.head_len, strlen(r.head));
	assert_int_equal(r.consumed, strlen(h) - 7);
	assert_string_equal(r.method, "POST");
	assert_string_equal(r.path, "/api/v4/x");
	assert_int_equal(r.body.kind, GW_BODY_LENGTH);
	assert_int_equal(r.body.left, 4);
	assert_false(r.body.done);
	free(r.head);

	assert_int_equal(request("GET http://a.test:80/x HTTP/1.0\r\nAuthorization: Bearer forged\r\n\r\n",
				 &bearer, &r),
			 0);
	assert_string_equal(r.head, "GET /x HTTP/1.0\r\nHost: git.example.test\r\n"
				    "Authorization: Bearer s3cr3t\r\nAccept-Encoding: identity\r\n"
				    "Connection: close\r\n\r\n");
	assert_int_equal(r.body.kind, GW_BODY_NONE);
	assert_true(r.body.done);
	free(r.head);
}

static void test_request_target(void **state)
{
	struct req r;
	char path[5];
	char method[16];
	char *head;
	size_t hl, used;
	struct gw_body b;
	struct tn_error err;
	const char *h = "GET http://a.test/abcdefgh?q HTTP/1.1\r\n\r\n";

	(void)state;
	assert_int_equal(request("GET HTTP://a.test?x=1 HTTP/1.1\r\n\r\n", &bearer, &r), 0);
	assert_string_equal(r.head, "GET /?x=1 HTTP/1.1\r\nHost: git.example.test\r\n"
				    "Authorization: Bearer s3cr3t\r\nAccept-Encoding: identity\r\n"
				    "Connection: close\r\n\r\n");
	assert_string_equal(r.path, "/");
	free(r.head);
	/* the path for the log is cut to its buffer; the method to 15 bytes */
	assert_int_equal(gw_request(h, strlen(h), "a.test", &bearer, &head, &hl, &used, &b, method, path,
				    sizeof(path), &err),
			 0);
	assert_string_equal(path, "/abc");
	assert_string_equal(method, "GET");
	free(head);
	assert_int_equal(request("ABCDEFGHIJKLMNOPQ http://a.test/ HTTP/1.1\r\n\r\n", &bearer, &r), 0);
	assert_string_equal(r.method, "ABCDEFGHIJKLMNO");
	free(r.head);
}

static void test_request_framing(void **state)
{
	struct req r;

	(void)state;
	assert_int_equal(request("PUT http://a.test/ HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", &bearer,
				 &r),
			 0);
	assert_int_equal(r.body.kind, GW_BODY_CHUNKED);
	assert_false(r.body.done);
	assert_non_null(strstr(r.head, "\r\nTransfer-Encoding: Chunked\r\n"));
	free(r.head);
	assert_int_equal(request("PUT http://a.test/ HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &bearer, &r), 0);
	assert_true(r.body.kind == GW_BODY_NONE || (r.body.kind == GW_BODY_LENGTH && r.body.left == 0));
	assert_true(r.body.done);
	free(r.head);
	assert_int_equal(request("PUT http://a.test/ HTTP/1.1\r\nContent-Length: 18446744073709551615\r\n\r\n",
				 &bearer, &r),
			 0);
	assert_int_equal(r.body.left, UINT64_MAX);
	free(r.head);
}

struct bad {
	const char *head;
	int rc;
	const char *why;
};

static const struct bad bad_requests[] = {
	{ "TRACE http://a.test/ HTTP/1.1\r\n\r\n", -EPERM, "TRACE" },
	{ "trace http://a.test/ HTTP/1.1\r\n\r\n", -EPERM, "TRACE" },
	{ "CONNECT a.test:443 HTTP/1.1\r\n\r\n", -EPERM, "CONNECT" },
	{ "GET http://a.test/ HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", -EPERM, "a second Host" },
	{ "POST http://a.test/ HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", -EPERM,
	  "Content-Length with Transfer-Encoding" },
	{ "POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", -EPERM,
	  "Content-Length with Transfer-Encoding" },
	{ "POST http://a.test/ HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", -EPERM,
	  "two Content-Length" },
	{ "POST http://a.test/ HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n", -EPERM, "not a number" },
	{ "POST http://a.test/ HTTP/1.1\r\nContent-Length: +3\r\n\r\n", -EPERM, "not a number" },
	{ "POST http://a.test/ HTTP/1.1\r\nContent-Length: 0x3\r\n\r\n", -EPERM, "not a number" },
	{ "POST http://a.test/ HTTP/1.1\r\nContent-Length: \r\n\r\n", -EPERM, "not a number" },
	{ "POST http://a.test/ HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n", -EPERM,
	  "not a number" },
	{ "POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", -EPERM,
	  "Transfer-Encoding other than" },
	{ "POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", -EPERM,
	  "Transfer-Encoding other than" },
	{ "POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
	  -EPERM, "Transfer-Encoding other than" },
	{ "POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n", -EPERM,
	  "Transfer-Encoding other than" },
	{ "POST http://a.test/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", -EPERM, "HTTP/1.0" },
	{ "GET https://a.test/ HTTP/1.1\r\n\r\n", -EPERM, "http://" },
	{ "GET ftp://a.test/ HTTP/1.1\r\n\r\n", -EPERM, "http://" },
	{ "GET /x HTTP/1.1\r\nHost: a.test\r\n\r\n", -EPERM, "http://" },
	{ "GET http://u:p@a.test/ HTTP/1.1\r\n\r\n", -EPERM, "user info" },
	{ "GET http://a.test/x#frag HTTP/1.1\r\n\r\n", -EPERM, "fragment" },
	{ "GET http://a.test/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", -EINVAL, "folded" },
	{ "GET http://a.test/ HTTP/1.1\r\nX: a\rb\r\n\r\n", -EINVAL, "bare CR" },
	{ "GET http://a.test/ HTTP/1.1\r\nX: a\nY: b\r\n\r\n", -EINVAL, "bare LF" },
	{ "GET http://a.test/ HTTP/1.1\nX: a", -EINVAL, "bare LF" },
	{ "GET http://a.test/ HTTP/1.1\r\nNo colon\r\n\r\n", -EINVAL, "NAME: VALUE" },
	{ "GET http://a.test/ HTTP/1.1\r\nHost : a\r\n\r\n", -EINVAL, "NAME: VALUE" },
	{ "GET http://a.test/ HTTP/1.1\r\n: a\r\n\r\n", -EINVAL, "NAME: VALUE" },
	{ "GET http://a.test/ HTTP/1.1\r\nX: a\x01\r\n\r\n", -EINVAL, "control character" },
	{ "G(T http://a.test/ HTTP/1.1\r\n\r\n", -EINVAL, "not a token" },
	{ "GET http://a.test/ HTTP/2.0\r\n\r\n", -EINVAL, "HTTP/1.1 or HTTP/1.0" },
	{ "GET http://a.test/ x HTTP/1.1\r\n\r\n", -EINVAL, "HTTP/1.1 or HTTP/1.0" },
	{ "GET\r\n\r\n", -EINVAL, "METHOD TARGET" },
	{ "GET http://a.test/\x7f HTTP/1.1\r\n\r\n", -EINVAL, "control character" },
};

static void test_request_refused(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_requests) / sizeof(bad_requests[0]); i++) {
		struct req r;
		int rc = request(bad_requests[i].head, &token, &r);

		if (rc != bad_requests[i].rc || !strstr(r.err.msg, bad_requests[i].why))
			fail_msg("%s: %d \"%s\", want %d \"%s\"", bad_requests[i].head, rc, r.err.msg,
				 bad_requests[i].rc, bad_requests[i].why);
		assert_null(r.head);
		assert_null(strchr(r.err.msg, '\n'));
		assert_true(strncmp(r.err.msg, "turninit", 8) != 0);
	}
}

static void test_request_nul_many_big(void **state)
{
	static const char nul[] = "GET http://a.test/ HTTP/1.1\r\nX: a\0b\r\n\r\n";
	char *many = malloc(GW_HEAD_MAX + 1), *head = NULL, method[16], path[8];
	size_t at = 0, hl, used;
	struct gw_body b;
	struct tn_error err = { 0 };
	struct req r;

	(void)state;
	assert_non_null(many);
	assert_int_equal(gw_request(nul, sizeof(nul) - 1, "a.test", &bearer, &head, &hl, &used, &b, method,
				    path, sizeof(path), &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "NUL"));
	at += (size_t)snprintf(many, GW_HEAD_MAX, "GET http://a.test/ HTTP/1.1\r\n");
	for (int i = 0; i <= GW_FIELDS_MAX; i++)
		at += (size_t)snprintf(many + at, GW_HEAD_MAX - at, "X-%d: y\r\n", i);
	snprintf(many + at, GW_HEAD_MAX - at, "\r\n");
	assert_int_equal(request(many, &bearer, &r), -EINVAL);
	assert_non_null(strstr(r.err.msg, "fields"));
	/* not complete: read more, until GW_HEAD_MAX */
	assert_int_equal(request("GET http://a.test/ HTTP/1.1\r\nX: y\r\n", &bearer, &r), 1);
	assert_int_equal(request("GET http://a.test/ HTTP/1.1\r\nX: y\r\n\r", &bearer, &r), 1);
	assert_int_equal(request("", &bearer, &r), 1);
	memset(many, 'a', GW_HEAD_MAX);
	many[GW_HEAD_MAX] = '\0';
	assert_int_equal(request(many, &bearer, &r), -E2BIG);
	/* a head of exactly GW_HEAD_MAX bytes is refused, one byte less taken */
	at = (size_t)snprintf(many, GW_HEAD_MAX, "GET http://a.test/ HTTP/1.1\r\nX: ");
	memset(many + at, 'v', GW_HEAD_MAX - at - 4);
	memcpy(many + GW_HEAD_MAX - 4, "\r\n\r\n", 5);
	assert_int_equal(request(many, &bearer, &r), -E2BIG);
	memcpy(many + GW_HEAD_MAX - 5, "\r\n\r\n", 5);
	assert_int_equal(request(many, &bearer, &r), 0);
	free(r.head);
	free(many);
}

/* The body fed whole, then in every split in two, then byte by byte: the
 * same bytes out, the same count used. */
static void feed_all_ways(const struct gw_body *start, bool decode, const char *in, size_t len, int want_rc,
			  const char *want_out, size_t want_used)
{
	char *out = malloc(len + 1);
	struct tn_error err;

	assert_non_null(out);
	/* every cut of a short body; of a long one, whole and byte by byte */
	for (size_t cut = len > 512 ? len : 0; cut <= len + 1; cut++) {
		struct gw_body b = *start;
		size_t used = 0, n = 0, step = cut <= len ? cut : 1;
		int rc = 0;

		/* cut == len + 1: byte by byte; else two pieces at cut */
		for (size_t at = 0; at < len && !b.done;) {
			size_t piece = cut <= len ? (at < cut ? cut - at : len - at) : step, u, o;

			rc = gw_body_feed(&b, decode, in + at, piece, out + n, &u, &o, &err);
			if (rc < 0)
				break;
			assert_true(u <= piece);
			used += u;
			n += o;
			if (u < piece)
				break;
			at += u;
		}
		if (rc != want_rc)
			fail_msg("cut %zu: %d \"%s\", want %d", cut, rc, err.msg, want_rc);
		if (rc < 0)
			continue;
		assert_int_equal(used, want_used);
		assert_int_equal(n, strlen(want_out));
		assert_memory_equal(out, want_out, n);
		assert_true(b.done);
	}
	free(out);
}

static void test_body_length(void **state)
{
	struct gw_body b = { .kind = GW_BODY_LENGTH, .left = 5 };
	const char *in = "helloGET / HTTP/1.1\r\n\r\n";

	(void)state;
	feed_all_ways(&b, false, in, strlen(in), 0, "hello", 5);
	feed_all_ways(&b, true, in, strlen(in), 0, "hello", 5);
}

static const char chunked[] = "5;name=\"v\"\r\nhello\r\n"
			      "1A\r\n"
			      "abcdefghijklmnopqrstuvwxyz\r\n"
			      "0\r\nX-Trailer: t\r\nX-Other: u\r\n\r\n";

static void test_body_chunked(void **state)
{
	struct gw_body b = { .kind = GW_BODY_CHUNKED };
	char in[256];
	const char *plain = "5\r\nhello\r\n000\r\n\r\n";

	(void)state;
	snprintf(in, sizeof(in), "%sGET http://a.test/ HTTP/1.1\r\n\r\n", chunked);
	feed_all_ways(&b, true, in, strlen(in), 0, "helloabcdefghijklmnopqrstuvwxyz", strlen(chunked));
	/* sent on as framed, up to the body's end and not a byte further */
	snprintf(in, sizeof(in), "%sGET http://a.test/ HTTP/1.1\r\n\r\n", plain);
	feed_all_ways(&b, false, in, strlen(in), 0, plain, strlen(plain));
	feed_all_ways(&b, true, "0\r\n\r\nX", 6, 0, "", 5);
}

static const struct bad bad_chunks[] = {
	{ "g\r\n", -EINVAL, "hex" },
	{ "\r\n", -EINVAL, "hex" },
	{ " 5\r\nhello\r\n0\r\n\r\n", -EINVAL, "hex" },
	{ "5 \r\nhello\r\n0\r\n\r\n", -EINVAL, "hex" },
	{ "-5\r\n", -EINVAL, "hex" },
	{ "00000000000000005\r\nhello\r\n0\r\n\r\n", -EINVAL, "16 hex digits" },
	{ "5\nhello\r\n0\r\n\r\n", -EINVAL, "CRLF" },
	{ "5\rhello\r\n0\r\n\r\n", -EINVAL, "CRLF" },
	{ "5\r\nhelloX\r\n0\r\n\r\n", -EINVAL, "CRLF" },
	{ "5\r\nhello\n0\r\n\r\n", -EINVAL, "CRLF" },
	{ "5;a\x01\r\nhello\r\n0\r\n\r\n", -EINVAL, "control character" },
	{ "0\r\nX: a\nY: b\r\n\r\n", -EINVAL, "bare LF" },
	{ "0\r\nX: a\0\r\n\r\n", -EINVAL, "NUL" },
	{ "0\r\n\rX", -EINVAL, "CRLF" },
};

static void test_body_chunked_bad(void **state)
{
	struct gw_body b = { .kind = GW_BODY_CHUNKED };
	char *big = malloc(GW_HEAD_MAX + 32);
	size_t n;

	(void)state;
	assert_non_null(big);
	for (size_t i = 0; i < sizeof(bad_chunks) / sizeof(bad_chunks[0]); i++) {
		const char *in = bad_chunks[i].head;
		size_t len = strlen(in);
		struct gw_body c = b;
		char out[64];
		size_t u, o;
		struct tn_error err = { 0 };
		int rc;

		if (strcmp(in, "0\r\nX: a") == 0)
			len = sizeof("0\r\nX: a\0\r\n\r\n") - 1;
		rc = gw_body_feed(&c, true, in, len, out, &u, &o, &err);
		if (rc != bad_chunks[i].rc || !strstr(err.msg, bad_chunks[i].why))
			fail_msg("%s: %d \"%s\", want %d \"%s\"", in, rc, err.msg, bad_chunks[i].rc,
				 bad_chunks[i].why);
		/* the same refusal byte by byte */
		feed_all_ways(&b, true, in, len, bad_chunks[i].rc, "", 0);
	}
	/* a size line of 4096 bytes with its extensions is taken, one more refused */
	n = (size_t)snprintf(big, GW_HEAD_MAX, "1;");
	memset(big + n, 'x', 4096 - n);
	memcpy(big + 4096, "\r\nA\r\n0\r\n\r\n", 11);
	feed_all_ways(&b, true, big, 4096 + 10, 0, "A", 4096 + 10);
	n = (size_t)snprintf(big, GW_HEAD_MAX, "1;");
	memset(big + n, 'x', 4097 - n);
	memcpy(big + 4097, "\r\nA\r\n0\r\n\r\n", 11);
	feed_all_ways(&b, true, big, 4097 + 10, -EINVAL, "", 0);
	/* a trailer section of GW_HEAD_MAX bytes or more */
	memcpy(big, "0\r\n", 3);
	for (n = 3; n < GW_HEAD_MAX + 8; n += 10)
		memcpy(big + n, "X: abcde\r\n", 10);
	memcpy(big + n, "\r\n", 2);
	feed_all_ways(&b, true, big, n + 2, -EINVAL, "", 0);
	/* a request's trailer fields are not sent on: the command's own
	 * Authorization would reach the host there */
	feed_all_ways(&b, false, chunked, strlen(chunked), -EPERM, "", 0);
	free(big);
}

static void test_body_close_and_none(void **state)
{
	struct gw_body c = { .kind = GW_BODY_CLOSE }, none = { .kind = GW_BODY_NONE, .done = true };
	char out[16];
	size_t u = 99, o = 99;
	struct tn_error err;

	(void)state;
	assert_int_equal(gw_body_feed(&c, true, "0\r\n\r\nabc", 8, out, &u, &o, &err), 0);
	assert_int_equal(u, 8);
	assert_int_equal(o, 8);
	assert_memory_equal(out, "0\r\n\r\nabc", 8);
	assert_false(c.done);
	assert_int_equal(gw_body_feed(&none, false, "GET", 3, out, &u, &o, &err), 0);
	assert_int_equal(u, 0);
	assert_int_equal(o, 0);
}

struct resp {
	char *head;
	size_t head_len, consumed;
	int status;
	struct gw_body body;
	struct tn_error err;
};

static int response(const char *s, bool head_request, struct resp *r)
{
	memset(r, 0, sizeof(*r));
	return gw_response(s, strlen(s), head_request, &r->head, &r->head_len, &r->status, &r->consumed,
			   &r->body, &r->err);
}

static void test_response(void **state)
{
	const char *h = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
			"Connection: keep-alive\r\nKeep-Alive: timeout=5\r\nSet-Cookie: a=b\r\n\r\n5\r\n";
	struct resp r;

	(void)state;
	assert_int_equal(response(h, false, &r), 0);
	assert_string_equal(r.head, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nSet-Cookie: a=b\r\n"
				    "Connection: close\r\n\r\n");
	assert_int_equal(r.head_len, strlen(r.head));
	assert_int_equal(r.consumed, strlen(h) - 3);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.kind, GW_BODY_CHUNKED);
	free(r.head);
	assert_int_equal(response("HTTP/1.0 404 Not Found\r\nContent-Length: 3\r\n\r\n", false, &r), 0);
	assert_string_equal(r.head,
			    "HTTP/1.0 404 Not Found\r\nContent-Length: 3\r\nConnection: close\r\n\r\n");
	assert_int_equal(r.body.kind, GW_BODY_LENGTH);
	assert_int_equal(r.body.left, 3);
	free(r.head);
	assert_int_equal(response("HTTP/1.1 200 \r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", false,
				  &r),
			 0);
	assert_string_equal(r.head, "HTTP/1.1 200 \r\nContent-Length: 3\r\nConnection: close\r\n\r\n");
	free(r.head);
	assert_int_equal(response("HTTP/1.1 200 OK\r\n\r\nbody", false, &r), 0);
	assert_int_equal(r.body.kind, GW_BODY_CLOSE);
	assert_false(r.body.done);
	free(r.head);
	static const char *const none[] = {
		"HTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n",
		"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		assert_int_equal(response(none[i], false, &r), 0);
		assert_int_equal(r.body.kind, GW_BODY_NONE);
		assert_true(r.body.done);
		free(r.head);
	}
	assert_int_equal(response("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", true, &r), 0);
	assert_int_equal(r.body.kind, GW_BODY_NONE);
	free(r.head);
	assert_int_equal(response("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n", false, &r), 1);
}

static const struct bad bad_responses[] = {
	{ "HTTP/1.1 200\r\n\r\n", -EINVAL, "HTTP/1.x NNN" },
	{ "HTTP/2 200 OK\r\n\r\n", -EINVAL, "HTTP/1.x NNN" },
	{ "HTTP/1.1 20 OK\r\n\r\n", -EINVAL, "HTTP/1.x NNN" },
	{ "HTTP/1.1 2000 OK\r\n\r\n", -EINVAL, "HTTP/1.x NNN" },
	{ "HTTP/1.1 099 OK\r\n\r\n", -EINVAL, "HTTP/1.x NNN" },
	{ "HTTP/1.1 600 OK\r\n\r\n", -EINVAL, "HTTP/1.x NNN" },
	{ "HTTP/1.1 200 O\x01K\r\n\r\n", -EINVAL, "control character" },
	{ "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n", -EPERM, "101" },
	{ "HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n", -EINVAL, "folded" },
	{ "HTTP/1.1 200 OK\r\nX: a\nY: b\r\n\r\n", -EINVAL, "bare LF" },
	{ "HTTP/1.1 200 OK\r\nX\r\n\r\n", -EINVAL, "NAME: VALUE" },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", -EPERM,
	  "Content-Length with Transfer-Encoding" },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", -EPERM, "two Content-Length" },
	{ "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", -EPERM, "not a number" },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", -EPERM,
	  "Transfer-Encoding other than" },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", -EPERM, "Transfer-Encoding other than" },
};

static void test_response_refused(void **state)
{
	char *big = malloc(GW_HEAD_MAX + 1);
	struct resp r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_responses) / sizeof(bad_responses[0]); i++) {
		int rc = response(bad_responses[i].head, false, &r);

		if (rc != bad_responses[i].rc || !strstr(r.err.msg, bad_responses[i].why))
			fail_msg("%s: %d \"%s\", want %d \"%s\"", bad_responses[i].head, rc, r.err.msg,
				 bad_responses[i].rc, bad_responses[i].why);
		assert_null(r.head);
		assert_null(strchr(r.err.msg, '\n'));
	}
	assert_non_null(big);
	memset(big, 'a', GW_HEAD_MAX);
	big[GW_HEAD_MAX] = '\0';
	assert_int_equal(response(big, false, &r), -E2BIG);
	free(big);
}

/* in through the redactor in pieces of step bytes (0: whole); returns the
 * output, NUL-ended, its length the input's. */
static char *redact(const char *value, const char *user, const char *in, size_t len, size_t step,
		    uint64_t *ret_count)
{
	struct gw_redact *r = malloc(sizeof(*r));
	char *out = malloc(len + GW_PATTERN_MAX + 1);
	size_t n = 0, o;
	struct tn_error err;

	assert_non_null(r);
	assert_non_null(out);
	assert_int_equal(gw_redact_init(r, value, strlen(value), user, &err), 0);
	if (step == 0)
		step = len ? len : 1;
	for (size_t at = 0; at < len; at += step) {
		size_t piece = len - at < step ? len - at : step;

		gw_redact_feed(r, in + at, piece, false, out + n, &o);
		n += o;
		assert_true(n <= at + piece);
	}
	gw_redact_feed(r, "", 0, true, out + n, &o);
	n += o;
	assert_int_equal(n, len);
	out[n] = '\0';
	if (ret_count)
		*ret_count = r->count;
	free(r);
	return out;
}

/* in redacted the same whole, in two pieces at every cut and byte by byte */
static void redact_all_ways(const char *value, const char *user, const char *in, const char *want,
			    uint64_t want_count)
{
	size_t len = strlen(in);
	uint64_t count;
	char *out = redact(value, user, in, len, 0, &count);

	assert_string_equal(out, want);
	assert_int_equal(count, want_count);
	free(out);
	out = redact(value, user, in, len, 1, &count);
	assert_string_equal(out, want);
	assert_int_equal(count, want_count);
	free(out);
	for (size_t cut = 1; cut < len; cut++) {
		struct gw_redact *r = malloc(sizeof(*r));
		char *o2 = malloc(len + 2 * GW_PATTERN_MAX);
		size_t n, m;
		struct tn_error err;

		assert_int_equal(gw_redact_init(r, value, strlen(value), user, &err), 0);
		gw_redact_feed(r, in, cut, false, o2, &n);
		gw_redact_feed(r, in + cut, len - cut, true, o2 + n, &m);
		assert_int_equal(n + m, len);
		o2[len] = '\0';
		if (strcmp(o2, want) != 0)
			fail_msg("cut %zu: \"%s\", want \"%s\"", cut, o2, want);
		assert_int_equal(r->count, want_count);
		free(o2);
		free(r);
	}
}

static void test_redact(void **state)
{
	(void)state;
	redact_all_ways("s3cr3t", NULL, "token: s3cr3t; again s3cr3ts3cr3t.",
			"token: ******; again ************.", 3);
	redact_all_ways("s3cr3t", NULL, "s3cr3t", "******", 1);
	/* near-misses: a prefix of the value, then other bytes, passed on intact */
	redact_all_ways("s3cr3t", NULL, "s3cr3 s3cr3s s3s3cr3t s", "s3cr3 s3cr3s s3****** s", 1);
	redact_all_ways("s3cr3t", NULL, "s3cr", "s3cr", 0);
	redact_all_ways("s3cr3t", NULL, "", "", 0);
	/* an occurrence that begins inside another is hidden too */
	redact_all_ways("abab", NULL, "xababab", "x******", 2);
	redact_all_ways("aaa", NULL, "aaaaab", "*****b", 3);
}

/* RFC 7617: "user:value" and the value alone in base64, each also with the
 * padding a server writes after it */
static void test_redact_basic(void **state)
{
	(void)state;
	/* base64("user:pa55") = "dXNlcjpwYTU1", base64("pa55") = "cGE1NQ==" */
	redact_all_ways("pa55", "user", "Authorization: Basic dXNlcjpwYTU1\r\nX: cGE1NQ==; pa55",
			"Authorization: Basic ************\r\nX: ******==; ****", 3);
	/* base64("u:pa5") = "dTpwYTU=", base64("pa5") = "cGE1" */
	redact_all_ways("pa5", "u", "dTpwYTU= dTpwYTU cGE1 cGE", "*******= ******* **** cGE", 3);
	/* no user: the value and its base64 */
	redact_all_ways("pa55", NULL, "cGE1NQ== pa55 dXNlcjpwYTU1", "******== **** dXNlcjpwYTU1", 2);
}

/* How much of a stream goes on depends on how much came, never on whether
 * its last bytes begin a form: a host that sends back the command's own
 * guesses (known bytes, then a guess of the value's next one) and stalls
 * would otherwise tell the command which guess was right by how many bytes
 * arrive before the stall. */
static void test_redact_holdback_constant(void **state)
{
	static const char *const guesses[] = { "you asked for s3cr", "you asked for s3cq",
					       "you asked for s3c", "you asked for xxxx" };
	struct gw_redact *r = malloc(sizeof(*r));
	char out[64 + GW_PATTERN_MAX];
	struct tn_error err = { 0 };
	size_t n, first = 0;

	(void)state;
	assert_non_null(r);
	for (size_t g = 0; g < 4; g++) {
		assert_int_equal(gw_redact_init(r, "s3cr3tvalue", 11, NULL, &err), 0);
		gw_redact_feed(r, guesses[g], strlen(guesses[g]), false, out, &n);
		/* the longest form is the value's base64, 15 bytes: 14 wait */
		assert_int_equal(n, strlen(guesses[g]) > 14 ? strlen(guesses[g]) - 14 : 0);
		if (g == 0)
			first = n;
		if (strlen(guesses[g]) == strlen(guesses[0]))
			assert_int_equal(n, first);
		assert_memory_equal(out, guesses[g], n);
	}
	free(r);
}

static void test_redact_init(void **state)
{
	struct gw_redact *r = malloc(sizeof(*r));
	char *big = malloc(GW_PATTERN_MAX + 1);
	struct tn_error err = { 0 };

	(void)state;
	assert_non_null(r);
	assert_non_null(big);
	memset(big, 'v', GW_PATTERN_MAX);
	assert_int_equal(gw_redact_init(r, "", 0, NULL, &err), -EINVAL);
	assert_int_equal(gw_redact_init(r, big, GW_PATTERN_MAX, NULL, &err), -EINVAL);
	/* the longest value a credential may have (4095 bytes), with the
	 * longest Basic user: every form fits */
	memset(big + 4095 - 128, 'u', 128);
	big[4095] = '\0';
	assert_int_equal(gw_redact_init(r, big, 4095, big + 4095 - 128, &err), 0);
	assert_int_equal(r->n_pat, 3);
	/* a longer one's base64 does not fit a form */
	memset(big, 'v', GW_PATTERN_MAX);
	assert_int_equal(gw_redact_init(r, big, GW_PATTERN_MAX - 1, NULL, &err), -EINVAL);
	assert_int_equal(gw_redact_init(r, "v", 1, "u", &err), 0);
	assert_int_equal(r->n_pat, 3);
	assert_int_equal(gw_redact_init(r, "v", 1, NULL, &err), 0);
	assert_int_equal(r->n_pat, 2);
	free(big);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_rewrite),      cmocka_unit_test(test_request_target),
		cmocka_unit_test(test_request_framing),      cmocka_unit_test(test_request_refused),
		cmocka_unit_test(test_request_nul_many_big), cmocka_unit_test(test_body_length),
		cmocka_unit_test(test_body_chunked),         cmocka_unit_test(test_body_chunked_bad),
		cmocka_unit_test(test_body_close_and_none),  cmocka_unit_test(test_response),
		cmocka_unit_test(test_response_refused),     cmocka_unit_test(test_redact),
		cmocka_unit_test(test_redact_basic),         cmocka_unit_test(test_redact_holdback_constant),
		cmocka_unit_test(test_redact_init),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
