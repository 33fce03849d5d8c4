/* fuzz_proxyreq.c - libFuzzer target for pr_parse (policy/proxyreq.c), the
 * request heads of turninit's proxy, and na_match (policy/netallow.c) on what
 * it gives.
 *
 * The input is the bytes a command sent to the proxy. Invariants that abort: a
 * refused head gives a one-line message and no forwarded head; "read more" only
 * below PR_HEAD_MAX bytes; an accepted head has a host of 1 to PR_HOST_MAX bytes
 * and a port, a length within the input ending in an empty line; a PR_HTTP
 * head's forwarded form ends in "Connection: close" and an empty line, holds no
 * Proxy-* field, and is itself no proxy request (origin form).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/netallow.h"
#include "policy/proxyreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct na_rule rules[2] = {
		{ .host = "srv.test.internal", .kind = NA_NAME, .ports = { 8080 }, .n_ports = 1 },
		{ .host = "*.test.internal", .kind = NA_SUFFIX, .ports = { 443, 80 }, .n_ports = 2 },
	};
	struct pr_request r;
	struct tn_error err = { 0 };
	char *fwd = NULL;
	int rc = pr_parse((const char *)data, size, &r, &fwd, &err);

	if (rc < 0) {
		if (fwd || !err.msg[0] || strchr(err.msg, '\n'))
			abort();
		return 0;
	}
	if (rc == 1) {
		if (fwd || size >= PR_HEAD_MAX)
			abort();
		return 0;
	}
	if (r.host[0] == '\0' || strlen(r.host) > PR_HOST_MAX || r.port == 0 || r.head_len > size ||
	    r.head_len < 4 || memcmp(data + r.head_len - 4, "\r\n\r\n", 4) != 0)
		abort();
	(void)na_match(rules, 2, r.host, r.port);
	if (r.kind == PR_CONNECT) {
		if (fwd)
			abort();
		return 0;
	}
	if (!fwd)
		abort();
	{
		size_t n = strlen(fwd);
		const char *tail = "Connection: close\r\n\r\n";
		struct pr_request again;
		char *fwd2 = NULL;

		if (n < strlen(tail) || strcmp(fwd + n - strlen(tail), tail) != 0)
			abort();
		for (const char *p = strstr(fwd, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n"))
			if (strncasecmp(p + 2, "proxy-", 6) == 0)
				abort();
		if (pr_parse(fwd, n, &again, &fwd2, &err) != -EPROTONOSUPPORT || fwd2)
			abort();
	}
	free(fwd);
	return 0;
}
