/* test_proxyreq.c - the request heads of turninit's proxy (policy/proxyreq.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/proxyreq.h"

static int parse(const char *head, struct pr_request *r, char **fwd, struct tn_error *err)
{
	*fwd = NULL;
	memset(err, 0, sizeof(*err));
	return pr_parse(head, strlen(head), r, fwd, err);
}

static void test_connect(void **state)
{
	struct pr_request r;
	struct tn_error err;
	char *fwd;
	const char *h =
		"CONNECT registry.example.org:443 HTTP/1.1\r\nHost: registry.example.org:443\r\n\r\nTLS";

	(void)state;
	assert_int_equal(parse(h, &r, &fwd, &err), 0);
	assert_int_equal(r.kind, PR_CONNECT);
	assert_string_equal(r.host, "registry.example.org");
	assert_int_equal(r.port, 443);
	assert_int_equal(r.head_len, strlen(h) - 3); /* the tunnel's first bytes are not the head's */
	assert_null(fwd);
	/* bytes after the head are the tunnel's, LF or not */
	assert_int_equal(parse("CONNECT a.example:22 HTTP/1.1\r\n\r\nSSH-2.0-x\n", &r, &fwd, &err), 0);
	assert_int_equal(parse("CONNECT [fd00::5]:22 HTTP/1.0\r\n\r\n", &r, &fwd, &err), 0);
	assert_string_equal(r.host, "fd00::5");
	assert_int_equal(r.port, 22);
}

static void test_http(void **state)
{
	struct pr_request r;
	struct tn_error err;
	char *fwd;

	(void)state;
	assert_int_equal(parse("GET http://srv.test:8080/a/b?c=d HTTP/1.1\r\nHost: srv.test:8080\r\n"
			       "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n"
			       "Connection: keep-alive\r\nAccept: */*\r\n\r\n",
			       &r, &fwd, &err),
			 0);
	assert_int_equal(r.kind, PR_HTTP);
	assert_string_equal(r.host, "srv.test");
	assert_int_equal(r.port, 8080);
	assert_string_equal(fwd, "GET /a/b?c=d HTTP/1.1\r\nHost: srv.test:8080\r\nAccept: */*\r\n"
				 "Connection: close\r\n\r\n");
	free(fwd);
	assert_int_equal(parse("HEAD HTTP://Srv.Test HTTP/1.0\r\n\r\n", &r, &fwd, &err), 0);
	assert_string_equal(r.host, "Srv.Test");
	assert_int_equal(r.port, 80);
	assert_string_equal(fwd, "HEAD / HTTP/1.0\r\nHost: Srv.Test\r\nConnection: close\r\n\r\n");
	free(fwd);
	assert_int_equal(parse("GET http://10.89.0.5?x HTTP/1.1\r\n\r\n", &r, &fwd, &err), 0);
	assert_string_equal(fwd, "GET /?x HTTP/1.1\r\nHost: 10.89.0.5\r\nConnection: close\r\n\r\n");
	free(fwd);
}

/* RFC 9112 section 3.2.2: a proxy given an absolute URI ignores the Host
 * field it was sent and writes one from the URI's authority; else a
 * virtual-hosting upstream at an allowed address serves the host the
 * command names, not the one the rules checked. */
static void test_host_from_uri(void **state)
{
	struct pr_request r;
	struct tn_error err;
	char *fwd;

	(void)state;
	assert_int_equal(parse("GET http://srv.test:8080/ HTTP/1.1\r\nHost: admin.internal\r\n"
			       "Accept: */*\r\nhost: other.internal:8080\r\n\r\n",
			       &r, &fwd, &err),
			 0);
	assert_string_equal(r.host, "srv.test");
	assert_string_equal(fwd, "GET / HTTP/1.1\r\nHost: srv.test:8080\r\nAccept: */*\r\n"
				 "Connection: close\r\n\r\n");
	free(fwd);
	assert_int_equal(parse("GET http://[fd00::5]:8080/x HTTP/1.1\r\nHOST: a\r\n\r\n", &r, &fwd, &err), 0);
	assert_string_equal(r.host, "fd00::5");
	assert_string_equal(fwd, "GET /x HTTP/1.1\r\nHost: [fd00::5]:8080\r\nConnection: close\r\n\r\n");
	free(fwd);
	/* a field whose name only begins with "host" is the client's own */
	assert_int_equal(parse("GET http://a.test/ HTTP/1.0\r\nHost-X: 1\r\n\r\n", &r, &fwd, &err), 0);
	assert_string_equal(fwd, "GET / HTTP/1.0\r\nHost: a.test\r\nHost-X: 1\r\nConnection: close\r\n\r\n");
	free(fwd);
	/* the longest authority still fits the forwarded head */
	{
		char head[400], want[400], host[PR_HOST_MAX + 1];

		memset(host, 'a', PR_HOST_MAX);
		for (size_t i = 63; i < PR_HOST_MAX; i += 64)
			host[i] = '.';
		host[PR_HOST_MAX] = '\0';
		snprintf(head, sizeof(head), "GET http://%s:65535 HTTP/1.1\r\n\r\n", host);
		snprintf(want, sizeof(want), "GET / HTTP/1.1\r\nHost: %s:65535\r\nConnection: close\r\n\r\n",
			 host);
		assert_int_equal(parse(head, &r, &fwd, &err), 0);
		assert_string_equal(fwd, want);
		free(fwd);
	}
}

static void test_incomplete(void **state)
{
	struct pr_request r;
	struct tn_error err;
	char *fwd, *big;

	(void)state;
	assert_int_equal(parse("CONNECT a.example:443 HTTP/1.1\r\nHost: a\r\n", &r, &fwd, &err), 1);
	assert_int_equal(parse("", &r, &fwd, &err), 1);
	big = malloc(PR_HEAD_MAX + 1);
	assert_non_null(big);
	memset(big, 'a', PR_HEAD_MAX);
	big[PR_HEAD_MAX] = '\0';
	assert_int_equal(parse(big, &r, &fwd, &err), -E2BIG);
	free(big);
}

struct bad {
	const char *head;
	int rc;
	const char *why;
};

static const struct bad bads[] = {
	{ "CONNECT a.example HTTP/1.1\r\n\r\n", -EINVAL, "CONNECT needs host:port" },
	{ "CONNECT a.example:0 HTTP/1.1\r\n\r\n", -EINVAL, "port 0 is out of range" },
	{ "CONNECT a.example:65536 HTTP/1.1\r\n\r\n", -EINVAL, "port 65536 is out of range" },
	{ "CONNECT a.example:+443 HTTP/1.1\r\n\r\n", -EINVAL, "1 to 5 digits" },
	{ "CONNECT a.example:443443 HTTP/1.1\r\n\r\n", -EINVAL, "1 to 5 digits" },
	{ "CONNECT user@a.example:443 HTTP/1.1\r\n\r\n", -EINVAL, "a user name" },
	{ "CONNECT a_b.example:443 HTTP/1.1\r\n\r\n", -EINVAL, "not a letter, a digit" },
	{ "CONNECT [fd00::5:22 HTTP/1.1\r\n\r\n", -EINVAL, "without its ']'" },
	{ "CONNECT [fd00::5]x:22 HTTP/1.1\r\n\r\n", -EINVAL, "bytes after" },
	{ "CONNECT [fd00::g]:22 HTTP/1.1\r\n\r\n", -EINVAL, "cannot hold" },
	{ "CONNECT :443 HTTP/1.1\r\n\r\n", -EINVAL, "no host" },
	{ "CONNECT a.example:443 HTTP/2.0\r\n\r\n", -EINVAL, "HTTP/1.1 or HTTP/1.0" },
	{ "CONNECT  a.example:443 HTTP/1.1\r\n\r\n", -EINVAL, "an empty target" },
	{ "CONNECT a.example:443\r\n\r\n", -EINVAL, "METHOD TARGET" },
	{ "GET https://a.example/ HTTP/1.1\r\n\r\n", -EPROTONOSUPPORT, "CONNECT host:443" },
	{ "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n", -EPROTONOSUPPORT, "absolute URI" },
	{ "GET ftp://a.example/ HTTP/1.1\r\n\r\n", -EPROTONOSUPPORT, "absolute URI" },
	{ "GET http://a.example/#f HTTP/1.1\r\n\r\n", -EINVAL, "a fragment" },
	{ "GET http:///x HTTP/1.1\r\n\r\n", -EINVAL, "no host" },
	{ "G(T http://a.example/ HTTP/1.1\r\n\r\n", -EINVAL, "not a token" },
	{ "GET http://a.example/\x01 HTTP/1.1\r\n\r\n", -EINVAL, "control character" },
	{ "GET http://a.example/ HTTP/1.1\r\nHost: a\rb\r\n\r\n", -EINVAL, "bare CR" },
	{ "GET http://a.example/ HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", -EINVAL, "a bare LF" },
	{ "GET http://a.example/ HTTP/1.1\n\n", -EINVAL, "a bare LF" },
	{ "GET http://a.example/ HTTP/1.1\nHost: a", -EINVAL, "a bare LF" },
	{ "GET http://a.example/ HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", -EINVAL, "folded" },
	{ "GET http://a.example/ HTTP/1.1\r\nNo colon\r\n\r\n", -EINVAL, "NAME: VALUE" },
	{ "GET http://a.example/ HTTP/1.1\r\n: empty\r\n\r\n", -EINVAL, "NAME: VALUE" },
};

static void test_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct pr_request r;
		struct tn_error err;
		char *fwd;
		int rc = parse(bads[i].head, &r, &fwd, &err);

		if (rc != bads[i].rc || !strstr(err.msg, bads[i].why))
			fail_msg("%s: %d \"%s\", want %d \"%s\"", bads[i].head, rc, err.msg, bads[i].rc,
				 bads[i].why);
		assert_null(fwd);
		assert_null(strchr(err.msg, '\n'));
	}
}

static void test_nul_and_fields(void **state)
{
	static const char nul[] = "GET http://a.example/ HTTP/1.1\r\nX: a\0b\r\n\r\n";
	struct pr_request r;
	struct tn_error err = { 0 };
	char *fwd = NULL, many[PR_HEAD_MAX];
	size_t at = 0;

	(void)state;
	assert_int_equal(pr_parse(nul, sizeof(nul) - 1, &r, &fwd, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "NUL"));
	at += (size_t)snprintf(many, sizeof(many), "CONNECT a.example:443 HTTP/1.1\r\n");
	for (int i = 0; i <= PR_FIELDS_MAX; i++)
		at += (size_t)snprintf(many + at, sizeof(many) - at, "X-%d: y\r\n", i);
	at += (size_t)snprintf(many + at, sizeof(many) - at, "\r\n");
	assert_int_equal(parse(many, &r, &fwd, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "header fields"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect),       cmocka_unit_test(test_http),
		cmocka_unit_test(test_host_from_uri), cmocka_unit_test(test_incomplete),
		cmocka_unit_test(test_bad),           cmocka_unit_test(test_nul_and_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
