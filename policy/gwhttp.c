/* gwhttp.c - see gwhttp.h. */
#include "policy/gwhttp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/cleanup.h"
#include "policy/http.h"

#define GW_SIZE_LINE_MAX 4096 /* bytes of a chunk size line, its extensions included */
#define GW_SIZE_DIGITS_MAX 16 /* hex digits of a chunk size: 64 bits */

/* A control character of a field value or a reason phrase (RFC 9110
 * section 5.5: HTAB, SP, VCHAR and obs-text only). */
static bool gw_ctl(char c)
{
	return ((unsigned char)c < 0x20 && c != '\t') || c == 0x7f;
}

static bool gw_is(const char *s, size_t n, const char *name)
{
	return strlen(name) == n && strncasecmp(s, name, n) == 0;
}

/* The fields never sent on, either way: the hop-by-hop ones (RFC 9110
 * section 7.6.1), "Connection: close" written in their place. */
static bool gw_hop_by_hop(const char *name, size_t n)
{
	static const char *const hop[] = {
		"connection", "keep-alive", "proxy-connection", "te", "upgrade", "trailer",
	};

	for (size_t i = 0; i < N_ELEMENTS(hop); i++)
		if (gw_is(name, n, hop[i]))
			return true;
	return false;
}

/* The fields of a command's request the host never gets, beyond the
 * hop-by-hop ones: Host (written from the rule's host, so that the host the
 * credential was given for is the one named), Expect (no interim response
 * reaches the command: the body follows at once), every credential of the
 * command's own, so that the one the gateway writes is the only one the
 * host sees (RFC 9110 sections 11.6.2 and 11.7.2), and what would let an
 * echo of the credential past the redactor: Accept-Encoding (a compressed
 * body hides the value; "Accept-Encoding: identity" is written instead,
 * RFC 9110 section 12.5.3), Range and If-Range (an echo asked for in two
 * ranges that cut the value gives it back in two pieces, neither of which
 * is the value). */
static bool gw_request_dropped(const char *name, size_t n, const struct gw_cred *cred)
{
	static const char *const drop[] = {
		"host",  "expect",   "authorization", "proxy-authorization", "accept-encoding",
		"range", "if-range",
	};

	if (gw_hop_by_hop(name, n) || gw_is(name, n, cred->field))
		return true;
	for (size_t i = 0; i < N_ELEMENTS(drop); i++)
		if (gw_is(name, n, drop[i]))
			return true;
	return false;
}

/* The head at the start of buf[0..len): 0 with *ret_len (its bytes, the
 * empty line included), 1 when not complete and len < GW_HEAD_MAX, or
 * -EINVAL, -E2BIG. A bare LF, a bare CR or a NUL is refused as soon as it
 * comes, complete or not: a head of LF line ends would otherwise wait for a
 * CRLF CRLF that never comes. */
static int gw_head_find(const char *buf, size_t len, const char *what, size_t *ret_len, struct tn_error *err)
{
	size_t scan = len < GW_HEAD_MAX - 1 ? len : GW_HEAD_MAX - 1, end = 0;

	for (size_t i = 0; i + 3 < scan; i++)
		if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
			end = i + 4;
			break;
		}
	for (size_t i = 0; i < (end ? end : scan); i++) {
		if (buf[i] == '\0')
			return err_set(err, EINVAL, "a NUL byte in the %s head", what);
		if (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r'))
			return err_set(err, EINVAL, "a bare LF in the %s head (lines end in CRLF)", what);
		if (buf[i] == '\r' && i + 1 < scan && buf[i + 1] != '\n')
			return err_set(err, EINVAL, "a bare CR in the %s head", what);
	}
	if (end == 0) {
		if (len >= GW_HEAD_MAX - 1)
			return err_set(err, E2BIG, "a %s head of %d bytes or more", what, GW_HEAD_MAX);
		return 1;
	}
	*ret_len = end;
	return 0;
}

/* The line at *at, n bytes without its CRLF (gw_head_find has checked that
 * every line of the head ends so); *at moves past it. */
static const char *gw_next_line(const char **at, size_t *n)
{
	const char *line = *at, *eol = line;

	while (!(eol[0] == '\r' && eol[1] == '\n'))
		eol++;
	*n = (size_t)(eol - line);
	*at = eol + 2;
	return line;
}

struct gw_field {
	const char *name, *value;
	size_t name_len, value_len; /* the value without its leading and trailing OWS */
};

/* One field line (n > 0 bytes at line, no CRLF): NAME ":" OWS VALUE OWS
 * (RFC 9112 section 5), the nfields-th of its head. */
static int gw_field_line(const char *line, size_t n, size_t nfields, struct gw_field *ret,
			 struct tn_error *err)
{
	const char *colon, *v, *e = line + n;

	if (line[0] == ' ' || line[0] == '\t')
		return err_set(err, EINVAL, "a folded field line");
	if (nfields > GW_FIELDS_MAX)
		return err_set(err, EINVAL, "more than %d fields", GW_FIELDS_MAX);
	colon = memchr(line, ':', n);
	if (!colon || !http_token(line, (size_t)(colon - line)))
		return err_set(err, EINVAL, "a field that is not NAME: VALUE");
	for (v = colon + 1; v < e; v++)
		if (gw_ctl(*v))
			return err_set(err, EINVAL, "a control character in a field's value");
	for (v = colon + 1; v < e && (*v == ' ' || *v == '\t'); v++)
		;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	ret->name = line;
	ret->name_len = (size_t)(colon - line);
	ret->value = v;
	ret->value_len = (size_t)(e - v);
	return 0;
}

/* What the framing fields of a head say (RFC 9112 section 6). */
struct gw_framing {
	unsigned n_length, n_te, n_host;
	uint64_t length;
	bool chunked; /* every Transfer-Encoding said "chunked" alone */
	bool repeat;  /* this field is a second Content-Length of the same value */
};

/* f updated with the field fl; a response (response true) may repeat a
 * Content-Length with the same value, a request may not. */
static int gw_framing_field(struct gw_framing *f, const struct gw_field *fl, bool response,
			    struct tn_error *err)
{
	f->repeat = false;
	if (gw_is(fl->name, fl->name_len, "host"))
		f->n_host++;
	if (gw_is(fl->name, fl->name_len, "transfer-encoding")) {
		f->chunked = ++f->n_te == 1 && gw_is(fl->value, fl->value_len, "chunked");
		if (!f->chunked)
			return err_set(err, EPERM, "a Transfer-Encoding other than \"chunked\" alone");
	}
	if (gw_is(fl->name, fl->name_len, "content-length")) {
		uint64_t v = 0;

		if (fl->value_len == 0)
			return err_set(err, EPERM, "a Content-Length that is not a number of bytes");
		for (size_t i = 0; i < fl->value_len; i++) {
			unsigned d = (unsigned)(fl->value[i] - '0');

			if (d > 9 || v > (UINT64_MAX - d) / 10)
				return err_set(err, EPERM, "a Content-Length that is not a number of bytes");
			v = v * 10 + d;
		}
		if (f->n_length++ && (!response || v != f->length))
			return err_set(err, EPERM, "two Content-Length fields%s",
				       response ? " that differ" : "");
		f->repeat = f->n_length > 1;
		f->length = v;
	}
	if (f->n_length && f->n_te)
		return err_set(err, EPERM, "Content-Length with Transfer-Encoding");
	return 0;
}

/* The framing of the body after a head that f describes. */
static struct gw_body gw_framing_body(const struct gw_framing *f)
{
	struct gw_body b = { .kind = GW_BODY_NONE, .done = true };

	if (f->chunked)
		b = (struct gw_body){ .kind = GW_BODY_CHUNKED };
	else if (f->n_length)
		b = (struct gw_body){ .kind = GW_BODY_LENGTH, .left = f->length, .done = f->length == 0 };
	return b;
}

/* A head being written: size bytes at p, at used; computed to fit, checked
 * anyway. */
struct gw_out {
	char *p;
	size_t size, at;
};

static void gw_put(struct gw_out *o, const char *s, size_t n)
{
	if (o->at + n < o->size) {
		memcpy(o->p + o->at, s, n);
		o->at += n;
	}
}

static void gw_puts(struct gw_out *o, const char *s)
{
	gw_put(o, s, strlen(s));
}

/* Where the parts of a request line are. */
struct gw_line {
	const char *method, *target, *version, *path;
	size_t method_len, target_len, path_len; /* path: to the URI's end, query included */
};

/* The request line (n bytes at line, no CRLF): METHOD SP http://AUTHORITY
 * [PATH][?QUERY] SP HTTP/1.x. */
static int gw_request_line(const char *line, size_t n, struct gw_line *ret, struct tn_error *err)
{
	const char *sp1 = memchr(line, ' ', n), *sp2, *end = line + n, *t, *auth;

	if (!sp1 || !(sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1))))
		return err_set(err, EINVAL, "a request line that is not METHOD TARGET HTTP/1.x");
	ret->method = line;
	ret->method_len = (size_t)(sp1 - line);
	ret->target = t = sp1 + 1;
	ret->target_len = (size_t)(sp2 - t);
	ret->version = sp2 + 1;
	if (!http_token(line, ret->method_len))
		return err_set(err, EINVAL, "a method that is not a token");
	if ((size_t)(end - ret->version) != 8 ||
	    (strncmp(ret->version, "HTTP/1.1", 8) != 0 && strncmp(ret->version, "HTTP/1.0", 8) != 0))
		return err_set(err, EINVAL, "a version that is not HTTP/1.1 or HTTP/1.0");
	for (size_t i = 0; i < ret->target_len; i++)
		if ((unsigned char)t[i] <= ' ' || (unsigned char)t[i] == 0x7f)
			return err_set(err, EINVAL, "a target with a space or a control character");
	/* RFC 9110 section 9.3.8: TRACE sends the request back, credential
	 * and all; TRACK is IIS's; CONNECT would make the gateway a tunnel.
	 * Any case: some servers read methods so. */
	if (gw_is(line, ret->method_len, "TRACE") || gw_is(line, ret->method_len, "TRACK") ||
	    gw_is(line, ret->method_len, "CONNECT"))
		return err_set(err, EPERM, "a TRACE, TRACK or CONNECT request is refused by the gateway");
	if (ret->target_len < 7 || strncasecmp(t, "http://", 7) != 0)
		return err_set(err, EPERM, "a target that is not an http:// URI");
	if (memchr(t, '#', ret->target_len))
		return err_set(err, EPERM, "a fragment in the URI");
	for (auth = ret->path = t + 7; ret->path < sp2 && *ret->path != '/' && *ret->path != '?'; ret->path++)
		;
	if (memchr(auth, '@', (size_t)(ret->path - auth)))
		return err_set(err, EPERM, "user info in the URI");
	ret->path_len = (size_t)(sp2 - ret->path);
	return 0;
}

/* The request line in origin form (RFC 9112 section 3.2.1), then Host. */
static void gw_request_start(struct gw_out *o, const struct gw_line *l, const char *host_field)
{
	gw_put(o, l->method, l->method_len);
	gw_put(o, " ", 1);
	if (l->path_len == 0 || l->path[0] == '?')
		gw_put(o, "/", 1);
	gw_put(o, l->path, l->path_len);
	gw_put(o, " ", 1);
	gw_put(o, l->version, 8);
	gw_puts(o, "\r\nHost: ");
	gw_puts(o, host_field);
	gw_puts(o, "\r\n");
}

/* The method and the path without its query for the log: method cut to 15
 * bytes, path to path_size - 1. */
static void gw_request_names(const struct gw_line *l, char method[16], char *path, size_t path_size)
{
	size_t m = l->method_len < 15 ? l->method_len : 15, p = 0;
	const char *q = memchr(l->path, '?', l->path_len);
	size_t plen = q ? (size_t)(q - l->path) : l->path_len;

	memcpy(method, l->method, m);
	method[m] = '\0';
	if (path_size == 0)
		return;
	if (plen == 0) {
		if (path_size > 1)
			path[p++] = '/';
	} else {
		p = plen < path_size - 1 ? plen : path_size - 1;
		memcpy(path, l->path, p);
	}
	path[p] = '\0';
}

/* What the caller gives is written into the head as it is: checked, so
 * that no value of its can end a line. */
static int gw_request_args(const char *host_field, const struct gw_cred *cred, struct tn_error *err)
{
	if (!host_field || !host_field[0] || !cred || !cred->field || !cred->value)
		return err_set(err, EINVAL, "the gateway was given no host or no credential");
	for (const char *c = host_field; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return err_set(err, EINVAL, "a host with a space or a control character");
	if (!http_token(cred->field, strlen(cred->field)))
		return err_set(err, EINVAL, "a credential field that is not a token");
	for (const char *c = cred->value; *c; c++)
		if (gw_ctl(*c))
			return err_set(err, EINVAL, "a credential with a control character");
	return 0;
}

/* The field lines of a head (from at to head_end, the empty line's CRLF at
 * head_end) into o, and their framing into f. A request's (cred non-NULL):
 * a second Host refused, gw_request_dropped's fields left out. A
 * response's (cred NULL): the hop-by-hop fields, a repeated Content-Length
 * and Transfer-Encoding left out (the caller decodes a chunked body, which
 * the close ends). */
static int gw_fields(const char *at, const char *head_end, const struct gw_cred *cred, struct gw_out *o,
		     struct gw_framing *f, struct tn_error *err)
{
	size_t nfields = 0;

	while (at < head_end) {
		struct gw_field fl = { 0 };
		size_t n;
		const char *line = gw_next_line(&at, &n);
		int rc = gw_field_line(line, n, ++nfields, &fl, err);

		if (rc < 0 || (rc = gw_framing_field(f, &fl, !cred, err)) < 0)
			return rc;
		if (cred && f->n_host > 1)
			return err_set(err, EPERM, "a second Host field");
		if (cred ? gw_request_dropped(fl.name, fl.name_len, cred) :
			   gw_hop_by_hop(fl.name, fl.name_len) || f->repeat ||
				    gw_is(fl.name, fl.name_len, "transfer-encoding"))
			continue;
		gw_put(o, line, n);
		gw_put(o, "\r\n", 2);
	}
	return 0;
}

int gw_request(const char *buf, size_t len, const char *host_field, const struct gw_cred *cred,
	       char **ret_head, size_t *ret_head_len, size_t *ret_consumed, struct gw_body *ret_body,
	       char ret_method[16], char *ret_path, size_t ret_path_size, struct tn_error *err)
{
	struct gw_framing f = { 0 };
	struct gw_line l = { 0 };
	struct gw_out o = { 0 };
	_cleanup_free_ char *head = NULL;
	size_t head_len, n;
	const char *at = buf, *line;
	int rc = gw_head_find(buf, len, "request", &head_len, err);

	if (rc != 0)
		return rc;
	if ((rc = gw_request_args(host_field, cred, err)) < 0)
		return rc;
	line = gw_next_line(&at, &n);
	if ((rc = gw_request_line(line, n, &l, err)) < 0)
		return rc;
	/* the head, "/", Host, the credential's field, Accept-Encoding and
	 * "Connection: close" */
	o.size = head_len + strlen(host_field) + strlen(cred->field) + strlen(cred->value) + 96;
	if (!(o.p = head = malloc(o.size)))
		return err_set(err, ENOMEM, "out of memory");
	gw_request_start(&o, &l, host_field);
	if ((rc = gw_fields(at, buf + head_len - 2, cred, &o, &f, err)) < 0)
		return rc;
	/* RFC 9112 section 6.1: a server may not read a chunked body of HTTP/1.0 */
	if (f.n_te && l.version[7] == '0')
		return err_set(err, EPERM, "a Transfer-Encoding in an HTTP/1.0 request");
	gw_puts(&o, cred->field);
	gw_puts(&o, ": ");
	gw_puts(&o, cred->value);
	gw_puts(&o, "\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n");
	head[o.at] = '\0';
	gw_request_names(&l, ret_method, ret_path, ret_path_size);
	*ret_head_len = o.at;
	*ret_head = steal_ptr(&head);
	*ret_consumed = head_len;
	*ret_body = gw_framing_body(&f);
	return 0;
}

/* The status line (n bytes at line, no CRLF): HTTP/1.x SP 3DIGIT SP
 * reason (RFC 9112 section 4), its code into *ret_status. */
static int gw_status_line(const char *line, size_t n, int *ret_status, struct tn_error *err)
{
	if (n < 13 || (strncmp(line, "HTTP/1.1 ", 9) != 0 && strncmp(line, "HTTP/1.0 ", 9) != 0) ||
	    line[9] < '1' || line[9] > '5' || line[10] < '0' || line[10] > '9' || line[11] < '0' ||
	    line[11] > '9' || line[12] != ' ')
		return err_set(err, EINVAL, "a status line that is not HTTP/1.x NNN REASON");
	for (size_t i = 13; i < n; i++)
		if (gw_ctl(line[i]))
			return err_set(err, EINVAL, "a control character in the status line");
	*ret_status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
	/* the gateway sends no Upgrade: a switch to another protocol is not
	 * HTTP the redactor could read */
	if (*ret_status == 101)
		return err_set(err, EPERM, "a 101 (Switching Protocols) to a request that asked for none");
	return 0;
}

int gw_response(const char *buf, size_t len, bool head_request, char **ret_head, size_t *ret_head_len,
		int *ret_status, size_t *ret_consumed, struct gw_body *ret_body, struct tn_error *err)
{
	struct gw_framing f = { 0 };
	struct gw_out o = { 0 };
	struct gw_body body;
	_cleanup_free_ char *head = NULL;
	size_t head_len, n;
	const char *at = buf, *line;
	int status, rc = gw_head_find(buf, len, "response", &head_len, err);

	if (rc != 0)
		return rc;
	line = gw_next_line(&at, &n);
	if ((rc = gw_status_line(line, n, &status, err)) < 0)
		return rc;
	o.size = head_len + 32;
	if (!(o.p = head = malloc(o.size)))
		return err_set(err, ENOMEM, "out of memory");
	gw_put(&o, line, n + 2);
	if ((rc = gw_fields(at, buf + head_len - 2, NULL, &o, &f, err)) < 0)
		return rc;
	if (f.n_te && line[7] == '0')
		return err_set(err, EPERM, "a Transfer-Encoding in an HTTP/1.0 response");
	gw_puts(&o, "Connection: close\r\n\r\n");
	head[o.at] = '\0';
	/* RFC 9112 section 6.3: these have no body, whatever their fields say */
	body = gw_framing_body(&f);
	if (head_request || status < 200 || status == 204 || status == 304)
		body = (struct gw_body){ .kind = GW_BODY_NONE, .done = true };
	else if (body.kind == GW_BODY_NONE)
		body = (struct gw_body){ .kind = GW_BODY_CLOSE };
	*ret_head_len = o.at;
	*ret_head = steal_ptr(&head);
	*ret_status = status;
	*ret_consumed = head_len;
	*ret_body = body;
	return 0;
}

/* Where a chunked body's reader is (struct gw_body's state). */
enum {
	CH_SIZE,    /* the size's hex digits */
	CH_EXT,     /* the size line's extensions, after ';' */
	CH_SIZE_LF, /* the LF of the size line */
	CH_DATA,    /* left bytes of data */
	CH_DATA_CR, /* the CRLF after the data */
	CH_DATA_LF,
	CH_TRAILER,      /* the start of a trailer line, or of the empty line */
	CH_TRAILER_LINE, /* within a trailer field line */
	CH_TRAILER_LF,   /* its LF */
	CH_END_LF,       /* the LF of the empty line that ends the body */
};

static int gw_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One byte c of a chunk size line (RFC 9112 section 7.1: chunk-size
 * [chunk-ext] CRLF); b->line counts its bytes. */
static int gw_chunk_size_byte(struct gw_body *b, char c, struct tn_error *err)
{
	if (c == '\n')
		return err_set(err, EINVAL, "a chunk line that does not end in CRLF");
	if (c != '\r' && ++b->line > GW_SIZE_LINE_MAX)
		return err_set(err, EINVAL, "a chunk size line over %d bytes", GW_SIZE_LINE_MAX);
	if (b->state == CH_SIZE) {
		if (gw_hex(c) >= 0) {
			if (b->line > GW_SIZE_DIGITS_MAX)
				return err_set(err, EINVAL, "a chunk size over %d hex digits",
					       GW_SIZE_DIGITS_MAX);
			b->left = b->left << 4 | (uint64_t)gw_hex(c);
		} else if ((c == '\r' && b->line > 0) || (c == ';' && b->line > 1)) {
			b->state = c == ';' ? CH_EXT : CH_SIZE_LF;
		} else {
			return err_set(err, EINVAL, "a chunk size that is not hex digits");
		}
	} else if (c == '\r') {
		b->state = CH_SIZE_LF;
	} else if (gw_ctl(c)) {
		return err_set(err, EINVAL, "a control character in a chunk extension");
	}
	return 0;
}

/* One byte c of a chunked body's framing (not of its data): the next state.
 * pass: the bytes are sent on as framed, and then a trailer field is
 * refused (the host would get it after the head the gateway checked). */
static int gw_chunk_byte(struct gw_body *b, char c, bool pass, struct tn_error *err)
{
	/* the trailer section is a head: as long as one may be */
	if (b->state >= CH_TRAILER && ++b->line >= GW_HEAD_MAX)
		return err_set(err, EINVAL, "a trailer section of %d bytes or more", GW_HEAD_MAX);
	switch (b->state) {
	case CH_SIZE:
	case CH_EXT: return gw_chunk_size_byte(b, c, err);
	case CH_SIZE_LF:
	case CH_DATA_LF:
	case CH_TRAILER_LF:
	case CH_END_LF:
		if (c != '\n')
			return err_set(err, EINVAL, "a chunk line that does not end in CRLF");
		if (b->state == CH_END_LF) {
			b->done = true;
		} else if (b->state == CH_TRAILER_LF) {
			b->state = CH_TRAILER;
		} else {
			/* after a size line, data or the trailer section (a last
			 * chunk); after data, the next size line */
			b->state = b->state == CH_DATA_LF ? CH_SIZE : b->left ? CH_DATA : CH_TRAILER;
			b->line = 0;
		}
		return 0;
	case CH_DATA_CR:
		if (c != '\r')
			return err_set(err, EINVAL, "a chunk's data not followed by CRLF");
		b->state = CH_DATA_LF;
		return 0;
	default: break;
	}
	if (c == '\0' || c == '\n')
		return err_set(err, EINVAL, "a %s in a chunked body's trailer section",
			       c ? "bare LF" : "NUL");
	if (b->state == CH_TRAILER && c == '\r') {
		b->state = CH_END_LF;
	} else if (b->state == CH_TRAILER) {
		if (pass)
			return err_set(err, EPERM, "a trailer field in a request's chunked body");
		b->state = CH_TRAILER_LINE;
	} else if (c == '\r') {
		b->state = CH_TRAILER_LF;
	}
	return 0;
}

/* in[0..len) through a chunked body: see gw_body_feed. */
static int gw_chunked_feed(struct gw_body *b, bool decode, const char *in, size_t len, char *out,
			   size_t *ret_used, size_t *ret_out, struct tn_error *err)
{
	size_t i = 0, o = 0;

	while (i < len && !b->done) {
		if (b->state == CH_DATA) {
			size_t n = len - i < b->left ? len - i : (size_t)b->left;

			memcpy(out + o, in + i, n);
			o += n;
			i += n;
			if (!(b->left -= n))
				b->state = CH_DATA_CR;
			continue;
		}
		int rc = gw_chunk_byte(b, in[i], !decode, err);

		if (rc < 0)
			return rc;
		if (!decode)
			out[o++] = in[i];
		i++;
	}
	*ret_used = i;
	*ret_out = o;
	return 0;
}

int gw_body_feed(struct gw_body *b, bool decode, const char *in, size_t len, char *out, size_t *ret_used,
		 size_t *ret_out, struct tn_error *err)
{
	size_t n = 0;

	switch (b->kind) {
	case GW_BODY_CHUNKED: return gw_chunked_feed(b, decode, in, len, out, ret_used, ret_out, err);
	case GW_BODY_LENGTH:
		n = len < b->left ? len : (size_t)b->left;
		b->left -= n;
		b->done = b->left == 0;
		break;
	case GW_BODY_CLOSE: n = len; break;
	case GW_BODY_NONE: b->done = true; break;
	}
	if (n)
		memcpy(out, in, n);
	*ret_used = n;
	*ret_out = n;
	return 0;
}

/* RFC 4648 section 4: s (n bytes) in base64, without the padding: the
 * unpadded form is a prefix of the padded one, so a form echoed either way
 * is found. Returns its length, or 0 when it does not fit size bytes. */
static size_t gw_base64(const unsigned char *s, size_t n, char *out, size_t size)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0, want = n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);

	if (want > size)
		return 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
			     (i + 2 < n ? s[i + 2] : 0);

		out[o++] = abc[v >> 18 & 63];
		out[o++] = abc[v >> 12 & 63];
		if (i + 1 < n)
			out[o++] = abc[v >> 6 & 63];
		if (i + 2 < n)
			out[o++] = abc[v & 63];
	}
	return o;
}

/* A form of the value, n bytes at s, added once. */
static void gw_redact_add(struct gw_redact *r, const char *s, size_t n)
{
	for (size_t i = 0; i < r->n_pat; i++)
		if (r->pat_len[i] == n && memcmp(r->pat[i], s, n) == 0)
			return;
	memcpy(r->pat[r->n_pat], s, n);
	r->pat_len[r->n_pat++] = n;
	r->first[(unsigned char)s[0]] = true;
	if (n > r->longest)
		r->longest = n;
}

int gw_redact_init(struct gw_redact *r, const char *value, size_t len, const char *user, struct tn_error *err)
{
	_cleanup_free_ char *pair = NULL;
	char b64[GW_PATTERN_MAX];
	size_t ulen = user ? strlen(user) : 0, n;

	memset(r, 0, sizeof(*r));
	if (len == 0 || len >= GW_PATTERN_MAX)
		return err_set(err, EINVAL, "a credential of %zu bytes (1 to %d)", len, GW_PATTERN_MAX - 1);
	gw_redact_add(r, value, len);
	n = gw_base64((const unsigned char *)value, len, b64, sizeof(b64));
	if (n == 0)
		return err_set(err, EINVAL, "a credential whose base64 is over %d bytes", GW_PATTERN_MAX);
	gw_redact_add(r, b64, n);
	if (!user)
		return 0;
	if (!(pair = malloc(ulen + 1 + len)))
		return err_set(err, ENOMEM, "out of memory");
	memcpy(pair, user, ulen);
	pair[ulen] = ':';
	memcpy(pair + ulen + 1, value, len);
	if (!(n = gw_base64((const unsigned char *)pair, ulen + 1 + len, b64, sizeof(b64))))
		return err_set(err, EINVAL, "a Basic credential whose base64 is over %d bytes",
			       GW_PATTERN_MAX);
	gw_redact_add(r, b64, n);
	return 0;
}

/* How the form p (n bytes) stands at a stream position whose bytes are a
 * (na bytes) then b (nb): 2 it is there whole, 1 the stream ends within a
 * prefix of it, 0 not there. */
static int gw_redact_at(const char *a, size_t na, const char *b, size_t nb, const char *p, size_t n)
{
	size_t k = na < n ? na : n, m;

	if (memcmp(a, p, k) != 0)
		return 0;
	if (k == n)
		return 2;
	m = nb < n - k ? nb : n - k;
	if (memcmp(b, p + k, m) != 0)
		return 0;
	return k + m == n ? 2 : 1;
}

/* The stream is r->held then in: every position is looked at, and a byte
 * is '*' when a form found at it or before it covers it, so that a form
 * that begins inside another is hidden whole too. A position waits (with
 * what follows it, less than the longest form) while a form could still
 * begin there, so that where the stream is cut does not change the output. */
void gw_redact_feed(struct gw_redact *r, const char *in, size_t len, bool last, char *out, size_t *ret_out)
{
	size_t total = r->n_held + len, i = 0, o = 0, mask_end = r->n_masked;
	/* the last longest - 1 bytes wait, whatever they are: how much goes
	 * on must not depend on whether they begin a form, or a host that
	 * sends back the command's own guesses would tell it the value a byte
	 * at a time by how many arrive */
	size_t upto = last ? total : total > r->longest - 1 ? total - (r->longest - 1) : 0;

	for (; i < upto; i++) {
		const char *a = i < r->n_held ? r->held + i : in + (i - r->n_held), *b = in;
		size_t na = i < r->n_held ? r->n_held - i : total - i, nb = i < r->n_held ? len : 0;
		size_t cover = 0;
		unsigned found = 0;

		/* most bytes begin no form: the table says so at once; a form
		 * that begins here is there whole or not (longest - 1 follow,
		 * or the stream ends) */
		for (size_t k = 0; r->first[(unsigned char)*a] && k < r->n_pat; k++)
			if (gw_redact_at(a, na, b, nb, r->pat[k], r->pat_len[k]) == 2) {
				found++;
				if (r->pat_len[k] > cover)
					cover = r->pat_len[k];
			}
		r->count += found;
		if (found && i + cover > mask_end)
			mask_end = i + cover;
		out[o++] = i < mask_end ? '*' : *a;
	}
	/* held: what is left of the stream, longest - 1 bytes at most */
	if (i < r->n_held) {
		memmove(r->held, r->held + i, r->n_held - i);
		memcpy(r->held + (r->n_held - i), in, len);
	} else {
		memcpy(r->held, in + (i - r->n_held), total - i);
	}
	r->n_held = total - i;
	r->n_masked = mask_end > i ? mask_end - i : 0;
	*ret_out = o;
}
