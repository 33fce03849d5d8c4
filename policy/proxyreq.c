/* proxyreq.c - see proxyreq.h. */
#include "policy/proxyreq.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/cleanup.h"
#include "policy/http.h"

/* The fields of a request to a proxy not sent on: the hop-by-hop ones (RFC
 * 9110 section 7.6.1), "Connection: close" added in their place, and Host,
 * written from the URI's authority (RFC 9112 section 3.2.2: a proxy ignores
 * the Host it was sent). Sent on, a Host of the command's choosing would
 * reach a virtual-hosting server at an allowed address (an ingress, a CDN
 * edge) and name a site the rules never checked. */
static bool pr_dropped_field(const char *name, size_t n)
{
	static const char *const hop[] = {
		"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te",
		"upgrade",    "host",
	};

	for (size_t i = 0; i < N_ELEMENTS(hop); i++)
		if (strlen(hop[i]) == n && strncasecmp(name, hop[i], n) == 0)
			return true;
	return false;
}

/* host[:port] of an authority (n bytes at a) into ret; port default_port
 * when absent (0: required). */
static int pr_authority(const char *a, size_t n, uint16_t default_port, struct pr_request *ret,
			struct tn_error *err)
{
	const char *host = a, *colon = NULL;
	size_t host_len;
	unsigned long port = 0;

	if (memchr(a, '@', n))
		return err_set(err, EINVAL, "a user name in the address is refused");
	if (n > 0 && a[0] == '[') {
		const char *close = memchr(a, ']', n);

		if (!close)
			return err_set(err, EINVAL, "an IPv6 address without its ']'");
		host = a + 1;
		host_len = (size_t)(close - host);
		if (close + 1 < a + n) {
			if (close[1] != ':')
				return err_set(err, EINVAL, "bytes after an IPv6 address's ']'");
			colon = close + 1;
		}
		for (size_t i = 0; i < host_len; i++)
			if (!strchr("0123456789abcdefABCDEF:.", host[i]))
				return err_set(err, EINVAL,
					       "an IPv6 address with a character it cannot hold");
	} else {
		for (size_t i = n; i > 0; i--)
			if (a[i - 1] == ':') {
				colon = a + i - 1;
				break;
			}
		host_len = colon ? (size_t)(colon - a) : n;
		for (size_t i = 0; i < host_len; i++) {
			char c = a[i];

			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			      c == '.' || c == '-'))
				return err_set(err, EINVAL,
					       "a host with a character that is not a letter, a digit, '-' or '.'");
		}
	}
	if (host_len == 0)
		return err_set(err, EINVAL, "no host");
	if (host_len > PR_HOST_MAX)
		return err_set(err, EINVAL, "a host longer than %d bytes", PR_HOST_MAX);
	if (colon) {
		const char *p = colon + 1, *end = a + n;

		if (p == end || end - p > 5)
			return err_set(err, EINVAL, "a port that is not 1 to 5 digits");
		for (; p < end; p++) {
			if (*p < '0' || *p > '9')
				return err_set(err, EINVAL, "a port that is not 1 to 5 digits");
			port = port * 10 + (unsigned long)(*p - '0');
		}
		if (port == 0 || port > 65535)
			return err_set(err, EINVAL, "port %lu is out of range 1..65535", port);
	} else if (default_port) {
		port = default_port;
	} else {
		return err_set(err, EINVAL, "CONNECT needs host:port");
	}
	memcpy(ret->host, host, host_len);
	ret->host[host_len] = '\0';
	ret->port = (uint16_t)port;
	return 0;
}

/* Where a PR_HTTP request line's URI has its parts: the origin-form target
 * (path and query) and the authority (host[:port], as sent). */
struct pr_target {
	const char *path, *auth;
	size_t path_len, auth_len;
};

/* The request line (n bytes at line, no CRLF) into ret; for PR_HTTP its
 * URI's parts in *ret_target. */
static int pr_request_line(const char *line, size_t n, struct pr_request *ret, struct pr_target *ret_target,
			   struct tn_error *err)
{
	const char *sp1 = memchr(line, ' ', n), *sp2, *target, *end = line + n;
	size_t tn;

	if (!sp1 || !(sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1))))
		return err_set(err, EINVAL, "a request line that is not METHOD TARGET HTTP/1.x");
	if (!http_token(line, (size_t)(sp1 - line)))
		return err_set(err, EINVAL, "a method that is not a token");
	target = sp1 + 1;
	tn = (size_t)(sp2 - target);
	if (tn == 0)
		return err_set(err, EINVAL, "an empty target");
	if ((size_t)(end - sp2 - 1) != 8 ||
	    (strncmp(sp2 + 1, "HTTP/1.1", 8) != 0 && strncmp(sp2 + 1, "HTTP/1.0", 8) != 0))
		return err_set(err, EINVAL, "a version that is not HTTP/1.1 or HTTP/1.0");
	for (size_t i = 0; i < tn; i++)
		if ((unsigned char)target[i] <= ' ' || (unsigned char)target[i] == 0x7f)
			return err_set(err, EINVAL, "a target with a space or a control character");
	if ((size_t)(sp1 - line) == 7 && strncmp(line, "CONNECT", 7) == 0) {
		ret->kind = PR_CONNECT;
		return pr_authority(target, tn, 0, ret, err);
	}
	if (tn >= 8 && strncasecmp(target, "https://", 8) == 0)
		return err_set(err, EPROTONOSUPPORT,
			       "an https:// URI: ask for a tunnel with CONNECT host:443");
	if (tn < 7 || strncasecmp(target, "http://", 7) != 0)
		return err_set(err, EPROTONOSUPPORT,
			       "a target that is not an http:// URI: send an absolute URI, or CONNECT host:port");
	if (memchr(target, '#', tn))
		return err_set(err, EINVAL, "a fragment in the URI");
	{
		const char *auth = target + 7, *stop = auth;

		while (stop < target + tn && *stop != '/' && *stop != '?')
			stop++;
		ret->kind = PR_HTTP;
		ret_target->path = stop;
		ret_target->path_len = (size_t)(target + tn - stop);
		ret_target->auth = auth;
		ret_target->auth_len = (size_t)(stop - auth);
		return pr_authority(auth, (size_t)(stop - auth), 80, ret, err);
	}
}

/* out[*n..] = the n bytes at s, within size (the forwarded head is at most
 * the head plus a fixed few bytes, so size is never reached: checked anyway). */
static void pr_put(char *out, size_t size, size_t *at, const char *s, size_t n)
{
	if (*at + n < size) {
		memcpy(out + *at, s, n);
		*at += n;
	}
}

/* The forwarded head's request line (the method of line, the origin-form
 * target, line's version) and its Host field, from the URI's authority. */
static void pr_forward_start(char *out, size_t size, size_t *at, const char *line, size_t n,
			     const struct pr_target *t)
{
	pr_put(out, size, at, line, (size_t)(strchr(line, ' ') - line) + 1);
	if (t->path_len == 0 || t->path[0] == '?')
		pr_put(out, size, at, "/", 1);
	pr_put(out, size, at, t->path, t->path_len);
	pr_put(out, size, at, line + n - 9, 9); /* " HTTP/1.x" */
	pr_put(out, size, at, "\r\nHost: ", 8);
	pr_put(out, size, at, t->auth, t->auth_len);
	pr_put(out, size, at, "\r\n", 2);
}

int pr_parse(const char *buf, size_t len, struct pr_request *ret, char **ret_forward, struct tn_error *err)
{
	size_t scan = len < PR_HEAD_MAX ? len : PR_HEAD_MAX, head_len = 0, nfields = 0;
	const char *line, *head_end = NULL;
	struct pr_target target = { 0 };
	size_t fsize = 0, at = 0;
	struct pr_request r = { 0 };
	_cleanup_free_ char *fwd = NULL;
	int rc;

	for (size_t i = 0; i + 3 < scan; i++)
		if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
			head_end = buf + i;
			head_len = i + 4;
			break;
		}
	/* a bare LF in the head is refused as soon as it comes: a head of LF
	 * line ends would otherwise wait for a CRLF CRLF that never comes */
	for (size_t i = 0; i < (head_end ? head_len : scan); i++)
		if (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r'))
			return err_set(err, EINVAL, "a bare LF in the request head (lines end in CRLF)");
	if (!head_end) {
		if (len >= PR_HEAD_MAX)
			return err_set(err, E2BIG, "a request head of %d bytes or more", PR_HEAD_MAX);
		return 1;
	}
	if (memchr(buf, '\0', head_len))
		return err_set(err, EINVAL, "a NUL byte in the request head");
	r.head_len = head_len;
	line = buf;
	for (bool first = true; line < head_end + 2; first = false) {
		const char *eol = line, *colon;
		size_t n;

		while (!(eol[0] == '\r' && eol[1] == '\n'))
			eol++;
		n = (size_t)(eol - line);
		if (memchr(line, '\r', n) || memchr(line, '\n', n))
			return err_set(err, EINVAL, "a bare CR or LF in the request head");
		if (first) {
			rc = pr_request_line(line, n, &r, &target, err);
			if (rc < 0)
				return rc;
			if (r.kind == PR_HTTP) {
				/* the head, "/", "Host: " and the authority again,
				 * "Connection: close" and CRLFs */
				fsize = head_len + target.auth_len + 64;
				if (!(fwd = malloc(fsize)))
					return err_set(err, ENOMEM, "out of memory");
				pr_forward_start(fwd, fsize, &at, line, n, &target);
			}
		} else if (n > 0) {
			if (line[0] == ' ' || line[0] == '\t')
				return err_set(err, EINVAL, "a folded header field line");
			if (++nfields > PR_FIELDS_MAX)
				return err_set(err, EINVAL, "more than %d header fields", PR_FIELDS_MAX);
			colon = memchr(line, ':', n);
			if (!colon || !http_token(line, (size_t)(colon - line)))
				return err_set(err, EINVAL, "a header field that is not NAME: VALUE");
			if (fwd && !pr_dropped_field(line, (size_t)(colon - line))) {
				pr_put(fwd, fsize, &at, line, n);
				pr_put(fwd, fsize, &at, "\r\n", 2);
			}
		}
		line = eol + 2;
	}
	if (fwd) {
		pr_put(fwd, fsize, &at, "Connection: close\r\n\r\n", 21);
		fwd[at] = '\0';
	}
	*ret = r;
	if (ret_forward)
		*ret_forward = steal_ptr(&fwd);
	return 0;
}
