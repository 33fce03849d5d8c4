/* proxyreq.h - the head of one request a command sends to turninit's proxy
 * (docs/design.md, "The network of a turn"): an HTTP/1.x CONNECT to
 * host:port (authority form), which HTTPS, git, npm, pip, cargo and go use, or
 * a request with an absolute http:// URI (plain HTTP through a proxy). Pure.
 * Sources: RFC 9112 sections 2, 3 and 5 (message format, request line,
 * field lines), RFC 9110 section 9.3.6 (CONNECT), RFC 3986 section 3.2
 * (authority), RFC 7230's limits as servers apply them. */
#ifndef TURNINIT_PROXYREQ_H
#define TURNINIT_PROXYREQ_H

#include <stddef.h>
#include <stdint.h>

#include "policy/error.h"

#define PR_HEAD_MAX 16384 /* bytes of a request head, its empty line included */
#define PR_FIELDS_MAX 100 /* header field lines of one head */
#define PR_HOST_MAX 253   /* bytes of a host, brackets of an IPv6 literal removed */

enum pr_kind {
	PR_CONNECT, /* a tunnel: the proxy answers 200 and relays bytes */
	PR_HTTP,    /* the proxy sends *ret_forward to the host, then relays */
};

struct pr_request {
	enum pr_kind kind;
	char host[PR_HOST_MAX + 1]; /* a name (as sent) or an address literal */
	uint16_t port;              /* 1..65535; an http:// URI without one: 80 */
	size_t head_len;            /* bytes of buf the head took */
};

/* pr_parse - the head at the start of buf[0..len), when it is complete.
 * Returns 0 with *ret, and for PR_HTTP *ret_forward (malloc'd, NUL-ended:
 * the head as the host is to get it: its request line in origin form, then
 * "Host: " and the URI's authority as sent in place of any Host field (RFC
 * 9112 section 3.2.2), the hop-by-hop fields (RFC 9110 section 7.6.1:
 * Connection, Keep-Alive, Proxy-Connection, Proxy-Authorization, TE,
 * Upgrade) left out, "Connection: close" last); 1 when no empty line has come
 * yet and len < PR_HEAD_MAX (read more); or -EINVAL (a 400), -E2BIG (a head
 * of PR_HEAD_MAX bytes or more: a 431), -EPROTONOSUPPORT (another scheme
 * than http, a method other than CONNECT with an origin-form target: a 400
 * that says to use CONNECT) or -ENOMEM, err saying why in one line.
 * Accepted strictly: CRLF line ends, no NUL or bare CR, no folded field, a
 * token method, HTTP/1.0 or HTTP/1.1, no userinfo in the authority, a port
 * of decimal digits. */
int pr_parse(const char *buf, size_t len, struct pr_request *ret, char **ret_forward, struct tn_error *err);

#endif
