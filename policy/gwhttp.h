/* gwhttp.h - the HTTP/1.1 of turninit's credential gateway (docs/design.md,
 * "The credential gateway"): a command's plain-HTTP request for a host whose
 * network.allow entry names a credential, rewritten for that host over TLS
 * with the credential in it; the host's response read back, its framing
 * checked, and the credential's value redacted from it before the command
 * sees it. Pure: bytes in, bytes out, no syscall but malloc.
 * Sources: RFC 9112 sections 2-7 (message format, request line, field lines,
 * message body length, chunked transfer coding), RFC 9110 sections 7.6.1
 * (hop-by-hop fields), 9.3.8 (TRACE), 11.6.2 and 11.7.2 (Authorization,
 * Proxy-Authorization), 15.2 (1xx), RFC 7617 (Basic). */
#ifndef TURNINIT_GWHTTP_H
#define TURNINIT_GWHTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/error.h"

#define GW_HEAD_MAX 16384 /* bytes of a request or response head */
#define GW_FIELDS_MAX 100 /* field lines of one head */
#define GW_PATTERNS_MAX 4 /* forms of a value the redactor looks for */
#define GW_PATTERN_MAX \
	8192 /* bytes of one form: the base64 of a Basic user (128 bytes), ":" and a value of 4095 fit */

/* What the gateway writes into the request: the credential's one field. */
struct gw_cred {
	const char *field; /* "Authorization", or the manifest's named field */
	const char *value; /* "Bearer V", "Basic B64", or V: NUL-free, no CR/LF */
};

enum gw_body_kind {
	GW_BODY_NONE,    /* no body: ends with the head */
	GW_BODY_LENGTH,  /* Content-Length bytes */
	GW_BODY_CHUNKED, /* Transfer-Encoding: chunked, to its last chunk */
	GW_BODY_CLOSE,   /* a response's body, to the end of the connection */
};

/* A body's framing, and how far a reader has come through it. */
struct gw_body {
	enum gw_body_kind kind;
	uint64_t left; /* GW_BODY_LENGTH: bytes still to come;
			  GW_BODY_CHUNKED: of the current chunk's data */
	int state;     /* GW_BODY_CHUNKED: where in the framing (private) */
	size_t line;   /* GW_BODY_CHUNKED: bytes of the size line so far (private) */
	bool done;     /* the body has ended */
};

/* gw_request - the request head at the start of buf[0..len) (absolute form,
 * as a command sends it to a proxy: "GET http://HOST:PORT/PATH HTTP/1.1"),
 * rewritten for the host. Returns 0 with *ret_head (malloc'd, NUL-ended, its
 * length *ret_head_len): the request line in origin form (the URI's path and
 * query), "Host: " host_field, every field of the command's but the
 * hop-by-hop ones (Connection, Keep-Alive, Proxy-Connection, TE, Upgrade,
 * Trailer), Host, Expect, Authorization, Proxy-Authorization and the field
 * named by cred->field (any case), then
 * cred->field ": " cred->value, then "Connection: close"; *ret_consumed: the
 * head's bytes in buf; *ret_body the framing of the body that follows
 * (GW_BODY_CHUNKED, GW_BODY_LENGTH, done at once for a Content-Length of 0,
 * or GW_BODY_NONE, done); *ret_method (up to 15 bytes and a NUL, cut) and
 * *ret_path (the path without its query, "/" for none, up to
 * ret_path_size - 1 bytes, cut) for the log.
 * Returns 1 when the head is not complete yet and len < GW_HEAD_MAX, else a
 * negative errno with err saying why in one line: -EINVAL (malformed: a bare
 * CR or LF, a NUL, a folded field, more than GW_FIELDS_MAX fields, not
 * NAME: VALUE, a control character but HTAB in a value; a host_field or
 * cred that could end a line), -EPERM (refused though well formed: TRACE,
 * TRACK or CONNECT in any case, a second Host, Content-Length with
 * Transfer-Encoding, two Content-Lengths (even equal), a Content-Length that
 * is not 1*DIGIT within 64 bits, a Transfer-Encoding other than "chunked"
 * alone or in HTTP/1.0, a target that is not an http:// URI, a URI with user
 * info or a fragment), -E2BIG (a head of GW_HEAD_MAX or more), -ENOMEM. */
int gw_request(const char *buf, size_t len, const char *host_field, const struct gw_cred *cred,
	       char **ret_head, size_t *ret_head_len, size_t *ret_consumed, struct gw_body *ret_body,
	       char ret_method[16], char *ret_path, size_t ret_path_size, struct tn_error *err);

/* gw_body_feed - pass in[0..len) through a body's framing. Writes to out
 * (room for len bytes) what the reader is to get: with decode false, the
 * bytes as they came (a request body sent on as framed); with decode true,
 * a chunked body's data only (a response sent on to its end of connection).
 * *ret_used: bytes of in that belong to the body (the rest follow it: a
 * pipelined request, never sent on); *ret_out: bytes written to out.
 * Any cut of the input into pieces gives the same bytes out. GW_BODY_CLOSE:
 * every byte is the body's, and it is never done (the close ends it).
 * Returns 0, or -EINVAL for a malformed chunk size line (not hex, over 16
 * hex digits, a size line over 4096 bytes with its extensions, its CRLF not
 * counted, a control character in them), a chunk or line not followed by
 * CRLF, a NUL or bare LF in the trailer section or one of GW_HEAD_MAX
 * bytes or more; -EPERM for a trailer field with decode false (a request's
 * body: the host would read fields the gateway never checked, the command's
 * own Authorization among them); err saying why. */
int gw_body_feed(struct gw_body *b, bool decode, const char *in, size_t len, char *out, size_t *ret_used,
		 size_t *ret_out, struct tn_error *err);

/* gw_response - the response head at the start of buf[0..len). Returns 0
 * with *ret_head (malloc'd, NUL-ended, *ret_head_len bytes): the status line
 * and the fields as sent, but the hop-by-hop ones; with a chunked body,
 * Transfer-Encoding is left out, so that the body goes to the command
 * decoded and ended by the close; then "Connection: close". *ret_status: the
 * status code (100..599); *ret_consumed: the head's bytes in buf;
 * *ret_body: the body's framing as the host sent it (GW_BODY_NONE for 1xx,
 * 204, 304 and a response to HEAD: head_request true). The caller redacts
 * the head (gw_redact) before it sends it on. Returns 1 when not complete
 * and len < GW_HEAD_MAX, else -EINVAL (malformed, as gw_request's, or a
 * status line that is not HTTP/1.x NNN REASON), -EPERM (a 101: the gateway
 * asked for no upgrade; Content-Length with Transfer-Encoding, two
 * Content-Lengths that differ (equal ones are sent on as one), a
 * Content-Length that is not 1*DIGIT, a Transfer-Encoding other than
 * "chunked" alone, or in HTTP/1.0: with another coding left out the command
 * would get coded bytes it was not told of), -E2BIG, -ENOMEM; err says why. */
int gw_response(const char *buf, size_t len, bool head_request, char **ret_head, size_t *ret_head_len,
		int *ret_status, size_t *ret_consumed, struct gw_body *ret_body, struct tn_error *err);

/* A redactor: the forms of a credential's value it replaces, each by as
 * many '*' bytes, in a stream read in pieces of any size. Every occurrence
 * is hidden whole, one that begins inside another too; the output has the
 * input's length and does not depend on where the stream was cut. */
struct gw_redact {
	char pat[GW_PATTERNS_MAX][GW_PATTERN_MAX];
	size_t pat_len[GW_PATTERNS_MAX];
	size_t n_pat;
	size_t longest;
	bool first[256];           /* a form begins with this byte (private) */
	char held[GW_PATTERN_MAX]; /* the stream's last bytes, not sent on yet */
	size_t n_held;
	size_t n_masked; /* of held, the first bytes a form already
			    covers: written as '*' (private) */
	uint64_t count;  /* forms replaced so far */
};

/* gw_redact_init - a redactor for value (1..GW_PATTERN_MAX - 1 bytes): it
 * replaces the value and the base64 of the value alone, and with a user
 * (NA_BASIC; NULL otherwise) the base64 of "user:value" (RFC 7617) (base64:
 * RFC 4648 section 4,
 * without the '=' padding: the unpadded form is a prefix of the padded one,
 * so both are found, the '=' left). Returns 0, or -EINVAL (a value empty or
 * too long, a base64 form over GW_PATTERN_MAX bytes), -ENOMEM, with err. */
int gw_redact_init(struct gw_redact *r, const char *value, size_t len, const char *user,
		   struct tn_error *err);

/* gw_redact_feed - in[0..len) through the redactor: writes to out (room for
 * len + GW_PATTERN_MAX bytes) what may be sent on now, *ret_out bytes; holds
 * back the stream's last longest - 1 bytes (the longest form's length less
 * one), whatever they are: how many bytes go on depends on the count fed
 * alone, never on whether the held ones begin a form (a host that sends
 * back the command's own bytes would otherwise tell it the value a byte at
 * a time). last: the stream ends with in: everything held is written
 * (redacted). r->count: the forms found so far, overlapping ones each. */
void gw_redact_feed(struct gw_redact *r, const char *in, size_t len, bool last, char *out, size_t *ret_out);

#endif
