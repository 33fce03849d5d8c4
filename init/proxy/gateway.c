/* gateway.c - see gateway.h. */
#define _GNU_SOURCE
#include "proxy/gateway.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <sodium.h>

#include "policy/cleanup.h"
#include "util/io.h"

#define GATEWAY_BUF 16384

/* The credential's one field and its value as written: "Bearer V",
 * "Basic base64(user:V)" (RFC 7617), or V under the manifest's field. */
static int gateway_field(const struct na_cred *cred, const char *value, char **ret_value,
			 struct tn_error *err)
{
	size_t vlen = strlen(value), ulen = strlen(cred->user);
	_cleanup_free_ char *pair = NULL;
	char *out;
	size_t b64;

	switch (cred->present) {
	case NA_BEARER:
		if (asprintf(&out, "Bearer %s", value) < 0)
			return err_set(err, ENOMEM, "out of memory");
		break;
	case NA_BASIC:
		b64 = sodium_base64_ENCODED_LEN(ulen + 1 + vlen, sodium_base64_VARIANT_ORIGINAL);
		if (!(pair = malloc(ulen + 1 + vlen)) || !(out = malloc(6 + b64)))
			return err_set(err, ENOMEM, "out of memory");
		memcpy(pair, cred->user, ulen);
		pair[ulen] = ':';
		memcpy(pair + ulen + 1, value, vlen);
		memcpy(out, "Basic ", 6);
		sodium_bin2base64(out + 6, b64, (const unsigned char *)pair, ulen + 1 + vlen,
				  sodium_base64_VARIANT_ORIGINAL);
		sodium_memzero(pair, ulen + 1 + vlen);
		break;
	default:
		if (!(out = strdup(value)))
			return err_set(err, ENOMEM, "out of memory");
		break;
	}
	*ret_value = out;
	return 0;
}

int gateway_prepare(struct gateway *g, const char *buf, size_t len, const char *host, uint16_t port,
		    const struct na_cred *cred, const char *value, struct tn_error *err)
{
	char host_field[300];
	_cleanup_free_ char *field_value = NULL;
	struct gw_cred gc;
	int r;

	*g = (struct gateway){ 0 };
	/* https's default port goes without its number (RFC 9110 4.2.2) */
	if (port == 443)
		snprintf(host_field, sizeof(host_field), "%s", host);
	else
		snprintf(host_field, sizeof(host_field), "%s:%u", host, port);
	r = gateway_field(cred, value, &field_value, err);
	if (r < 0)
		return r;
	gc = (struct gw_cred){ .field = cred->present == NA_HEADER ? cred->field : "Authorization",
			       .value = field_value };
	r = gw_request(buf, len, host_field, &gc, &g->head, &g->head_len, &g->consumed, &g->body, g->method,
		       g->path, sizeof(g->path), err);
	sodium_memzero(field_value, strlen(field_value));
	if (r < 0)
		return r;
	if (r > 0)
		return err_set(err, EINVAL, "the request head is not complete");
	if (!(g->redact = malloc(sizeof(*g->redact))))
		return err_set(err, ENOMEM, "out of memory");
	return gw_redact_init(g->redact, value, strlen(value), cred->present == NA_BASIC ? cred->user : NULL,
			      err);
}

void gateway_free(struct gateway *g)
{
	if (g->head) {
		sodium_memzero(g->head, g->head_len);
		free(g->head);
	}
	if (g->redact) {
		sodium_memzero(g->redact, sizeof(*g->redact));
		free(g->redact);
	}
	*g = (struct gateway){ 0 };
}

/* The CA bundles of the rules' credentials, each parsed once by the proxy
 * before its first connection (gateway_preload): a bundle a command could
 * write later (one under its writable folders) is read before any command
 * runs, and no connection pays for a parse. */
#define GATEWAY_CAS_MAX 16
static struct gateway_ca {
	const char *path;
	mbedtls_x509_crt chain;
	bool ok;
} gateway_cas[GATEWAY_CAS_MAX];
static size_t gateway_n_cas;

int gateway_preload(const struct mf_network *n, struct tn_error *err)
{
	int r = 0;

	for (size_t i = 0; i < n->n_allow; i++) {
		const char *path = !n->allow[i].cred    ? NULL :
				   n->allow[i].cred->ca ? n->allow[i].cred->ca :
							  GATEWAY_CA_DEFAULT;
		struct gateway_ca *c;
		size_t k = 0;

		while (path && k < gateway_n_cas && strcmp(gateway_cas[k].path, path) != 0)
			k++;
		if (!path || k < gateway_n_cas)
			continue;
		if (gateway_n_cas == GATEWAY_CAS_MAX) {
			r = err_set(err, E2BIG, "more than %d CA bundles: %s is read at each request",
				    GATEWAY_CAS_MAX, path);
			continue;
		}
		c = &gateway_cas[gateway_n_cas++];
		c->path = path;
		mbedtls_x509_crt_init(&c->chain);
		c->ok = mbedtls_x509_crt_parse_file(&c->chain, path) >= 0 && c->chain.version != 0;
		if (!c->ok)
			r = err_set(err, ENOENT, "no certificate could be read from the CA bundle %s", path);
	}
	return r;
}

/* The TLS session of one request, over a blocking socket whose reads and
 * writes have a time limit (SO_RCVTIMEO, SO_SNDTIMEO). */
struct gateway_tls {
	int fd;
	mbedtls_ssl_context ssl;
	mbedtls_ssl_config conf;
	mbedtls_x509_crt ca; /* a bundle not preloaded, read now */
	mbedtls_ctr_drbg_context drbg;
	mbedtls_entropy_context entropy;
};

static int gateway_bio_send(void *ctx, const unsigned char *buf, size_t len)
{
	ssize_t n = send(*(int *)ctx, buf, len, MSG_NOSIGNAL);

	if (n >= 0)
		return (int)n;
	if (errno == EINTR)
		return MBEDTLS_ERR_SSL_WANT_WRITE;
	return errno == EAGAIN ? MBEDTLS_ERR_SSL_TIMEOUT : MBEDTLS_ERR_NET_SEND_FAILED;
}

static int gateway_bio_recv(void *ctx, unsigned char *buf, size_t len)
{
	ssize_t n = recv(*(int *)ctx, buf, len, 0);

	if (n >= 0)
		return (int)n;
	if (errno == EINTR)
		return MBEDTLS_ERR_SSL_WANT_READ;
	return errno == EAGAIN ? MBEDTLS_ERR_SSL_TIMEOUT : MBEDTLS_ERR_NET_RECV_FAILED;
}

/* A socket's reads and writes blocking, each within ms, and sent at once
 * (TCP_NODELAY): mbedTLS writes each record of a handshake flight with a
 * send of its own, and Nagle's algorithm would hold the second back until
 * the first is acknowledged, which a host's delayed ACK makes some 40 ms a
 * request (docs/benchmarks.md, section 10). */
static int gateway_timeouts(int fd, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	int fl = fcntl(fd, F_GETFL), one = 1;

	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		return -errno;
	return 0;
}

static int gateway_tls_error(int r, const char *what, struct tn_error *err)
{
	char msg[200];

	mbedtls_strerror(r, msg, sizeof(msg));
	return err_set(err, r == MBEDTLS_ERR_SSL_TIMEOUT ? ETIMEDOUT : ECONNABORTED, "%s: %s", what, msg);
}

static void gateway_tls_free(struct gateway_tls *t)
{
	mbedtls_ssl_free(&t->ssl);
	mbedtls_ssl_config_free(&t->conf);
	mbedtls_x509_crt_free(&t->ca);
	mbedtls_ctr_drbg_free(&t->drbg);
	mbedtls_entropy_free(&t->entropy);
}

/* The handshake: TLS 1.2, the host's chain checked against the bundle at
 * ca, the host's name against its certificate (and sent as SNI). */
static int gateway_tls_open(struct gateway_tls *t, int fd, const char *host, const char *ca,
			    struct tn_error *err)
{
	static const unsigned char pers[] = "turninit gateway";
	mbedtls_x509_crt *chain = NULL;
	int r;

	t->fd = fd;
	mbedtls_ssl_init(&t->ssl);
	mbedtls_ssl_config_init(&t->conf);
	mbedtls_x509_crt_init(&t->ca);
	mbedtls_ctr_drbg_init(&t->drbg);
	mbedtls_entropy_init(&t->entropy);
	if (gateway_timeouts(fd, GATEWAY_HANDSHAKE_MS) < 0)
		return err_errno(err, errno, "the socket to %s", host);
	for (size_t k = 0; k < gateway_n_cas && !chain; k++)
		if (strcmp(gateway_cas[k].path, ca) == 0)
			chain = gateway_cas[k].ok ? &gateway_cas[k].chain : &t->ca;
	if (!chain) {
		r = mbedtls_x509_crt_parse_file(&t->ca, ca);
		chain = &t->ca;
	}
	if (chain->version == 0)
		return err_set(err, ECONNABORTED, "no certificate could be read from the CA bundle %s", ca);
	if ((r = mbedtls_ctr_drbg_seed(&t->drbg, mbedtls_entropy_func, &t->entropy, pers,
				       sizeof(pers) - 1)) ||
	    (r = mbedtls_ssl_config_defaults(&t->conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
					     MBEDTLS_SSL_PRESET_DEFAULT)))
		return gateway_tls_error(r, "TLS set-up", err);
	mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
	mbedtls_ssl_conf_ca_chain(&t->conf, chain, NULL);
	mbedtls_ssl_conf_rng(&t->conf, mbedtls_ctr_drbg_random, &t->drbg);
	mbedtls_ssl_conf_min_version(&t->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
	if ((r = mbedtls_ssl_setup(&t->ssl, &t->conf)) || (r = mbedtls_ssl_set_hostname(&t->ssl, host)))
		return gateway_tls_error(r, "TLS set-up", err);
	mbedtls_ssl_set_bio(&t->ssl, &t->fd, gateway_bio_send, gateway_bio_recv, NULL);
	while ((r = mbedtls_ssl_handshake(&t->ssl)) != 0) {
		uint32_t flags;
		char why[300];

		if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE)
			continue;
		flags = mbedtls_ssl_get_verify_result(&t->ssl);
		if (r == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && flags) {
			mbedtls_x509_crt_verify_info(why, sizeof(why), "", flags);
			why[strcspn(why, "\n")] = '\0';
			return err_set(err, ECONNABORTED,
				       "the certificate of %s is refused: %s (CA bundle %s)", host, why, ca);
		}
		return gateway_tls_error(r, "TLS handshake", err);
	}
	if (gateway_timeouts(fd, GATEWAY_IO_MS) < 0)
		return err_errno(err, errno, "the socket to %s", host);
	return 0;
}

static int gateway_tls_write(struct gateway_tls *t, const char *buf, size_t len, struct tn_error *err)
{
	while (len > 0) {
		int r = mbedtls_ssl_write(&t->ssl, (const unsigned char *)buf, len);

		if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE)
			continue;
		if (r < 0)
			return gateway_tls_error(r, "sending to the host", err);
		buf += r;
		len -= (size_t)r;
	}
	return 0;
}

/* Up to size bytes of the response: > 0, 0 at its end (close_notify or
 * the connection's end), or -errno. */
static int gateway_tls_read(struct gateway_tls *t, char *buf, size_t size, struct tn_error *err)
{
	for (;;) {
		int r = mbedtls_ssl_read(&t->ssl, (unsigned char *)buf, size);

		if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE)
			continue;
		if (r == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || r == MBEDTLS_ERR_NET_CONN_RESET)
			return 0;
		if (r < 0)
			return gateway_tls_error(r, "reading from the host", err);
		return r;
	}
}

/* The request's body: rest, then what the client sends, through its
 * framing to its end; a byte after it is never sent. */
static int gateway_send_body(struct gateway *g, struct gateway_tls *t, int client, const char *rest,
			     size_t rest_len, struct tn_error *err)
{
	char in[GATEWAY_BUF], out[GATEWAY_BUF];
	const char *p = rest;
	size_t n = rest_len;

	for (;;) {
		size_t used = 0, produced = 0;
		ssize_t r;
		int rc;

		while (n > 0 && !g->body.done) {
			size_t piece = n < sizeof(out) ? n : sizeof(out);

			rc = gw_body_feed(&g->body, false, p, piece, out, &used, &produced, err);
			if (rc < 0)
				return rc;
			if (produced && (rc = gateway_tls_write(t, out, produced, err)) < 0)
				return rc;
			g->out += produced;
			p += used;
			n -= used;
			if (used < piece)
				break;
		}
		if (g->body.done || g->body.kind == GW_BODY_NONE)
			return 0;
		r = read(client, in, sizeof(in));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_errno(err, errno, "reading the command's request body");
		if (r == 0)
			return err_set(err, EPIPE, "the command's request ended before its body did");
		p = in;
		n = (size_t)r;
	}
}

/* The response's head: read until complete, redacted, sent; 1xx heads are
 * sent on and the next one read. buf[0..*n_held): the bytes read after it. */
static int gateway_response_head(struct gateway *g, struct gateway_tls *t, int client, bool head_req,
				 char *buf, size_t *n_held, struct gw_body *ret_body, struct tn_error *err)
{
	size_t len = *n_held;

	for (;;) {
		_cleanup_free_ char *head = NULL;
		size_t head_len = 0, consumed = 0, red_len = 0;
		struct gw_redact rd = *g->redact;
		int rc = gw_response(buf, len, head_req, &head, &head_len, &g->status, &consumed, ret_body,
				     err);
		_cleanup_free_ char *red = NULL;

		if (rc == 1) {
			int r = gateway_tls_read(t, buf + len, GW_HEAD_MAX - len, err);

			if (r <= 0)
				return r < 0 ? r :
					       err_set(err, EPROTO,
						       "the host closed before its response head");
			len += (size_t)r;
			g->in += (uint64_t)r;
			continue;
		}
		if (rc < 0)
			return err_set(err, EPROTO, "the host's response: %s", err->msg);
		if (!(red = malloc(head_len + GW_PATTERN_MAX)))
			return err_set(err, ENOMEM, "out of memory");
		rd.n_held = 0;
		rd.n_masked = 0;
		rd.count = 0;
		gw_redact_feed(&rd, head, head_len, true, red, &red_len);
		g->redactions += rd.count;
		sodium_memzero(&rd, sizeof(rd));
		if (io_write_all(client, red, red_len) < 0)
			return err_errno(err, errno, "sending the response to the command");
		g->answered = true;
		memmove(buf, buf + consumed, len - consumed);
		len -= consumed;
		if (g->status >= 200) {
			*n_held = len;
			return 0;
		}
	}
}

/* The response's body to its end, through the redactor; a chunked one
 * decoded (the command reads it to the connection's end). */
static int gateway_response_body(struct gateway *g, struct gateway_tls *t, int client, struct gw_body *b,
				 char *buf, size_t len, struct tn_error *err)
{
	bool decode = b->kind == GW_BODY_CHUNKED;
	_cleanup_free_ char *dec = malloc(GATEWAY_BUF), *red = malloc(GATEWAY_BUF + GW_PATTERN_MAX);
	bool end = b->kind == GW_BODY_NONE || b->done;

	if (!dec || !red)
		return err_set(err, ENOMEM, "out of memory");
	for (;;) {
		const char *p = buf;

		while (len > 0 && !end) {
			size_t piece = len < GATEWAY_BUF ? len : GATEWAY_BUF, used = 0, produced = 0,
			       red_len = 0;
			int rc = gw_body_feed(b, decode, p, piece, dec, &used, &produced, err);

			if (rc < 0)
				return err_set(err, EPROTO, "the host's response body: %s", err->msg);
			end = b->done;
			gw_redact_feed(g->redact, dec, produced, end, red, &red_len);
			if (red_len && io_write_all(client, red, red_len) < 0)
				return err_errno(err, errno, "sending the response to the command");
			p += used;
			len -= used;
			if (used < piece && !end)
				return err_set(err, EPROTO, "the host's response body: its framing stopped");
		}
		if (end)
			break;
		int r = gateway_tls_read(t, buf, GATEWAY_BUF, err);

		if (r < 0)
			return r;
		g->in += (uint64_t)(r > 0 ? r : 0);
		if (r == 0) {
			if (b->kind != GW_BODY_CLOSE)
				return err_set(err, EPIPE, "the host closed before its response body ended");
			end = true;
		}
		len = (size_t)r;
	}
	{
		size_t red_len = 0;

		gw_redact_feed(g->redact, NULL, 0, true, red, &red_len);
		if (red_len && io_write_all(client, red, red_len) < 0)
			return err_errno(err, errno, "sending the response to the command");
	}
	g->redactions += g->redact->count;
	return 0;
}

int gateway_run(struct gateway *g, int client, int upstream, const char *host, const char *ca,
		const char *rest, size_t rest_len, struct tn_error *err)
{
	struct gateway_tls t;
	struct gw_body body = { 0 };
	size_t held = 0;
	_cleanup_free_ char *buf = malloc(GW_HEAD_MAX > GATEWAY_BUF ? GW_HEAD_MAX : GATEWAY_BUF);
	int r;

	if (!buf)
		return err_set(err, ENOMEM, "out of memory");
	r = gateway_tls_open(&t, upstream, host, ca, err);
	if (r == 0 && (r = gateway_tls_write(&t, g->head, g->head_len, err)) == 0) {
		g->out += g->head_len;
		r = gateway_send_body(g, &t, client, rest, rest_len, err);
	}
	if (r == 0)
		r = gateway_response_head(g, &t, client, strcmp(g->method, "HEAD") == 0, buf, &held, &body,
					  err);
	if (r == 0)
		r = gateway_response_body(g, &t, client, &body, buf, held, err);
	if (r == 0)
		(void)mbedtls_ssl_close_notify(&t.ssl);
	gateway_tls_free(&t);
	return r;
}
