/* gateway.h - turninit's credential gateway (docs/design.md, "The credential
 * gateway"): one request a command sent as plain HTTP through the proxy to a
 * host whose network.allow entry names a credential, sent on over TLS with
 * the credential written into it, and the host's response relayed back with
 * the credential's value redacted. It runs in a connection's child of the
 * proxy only (no capability, not dumpable, its own seccomp filter): never
 * in PID 1. The HTTP is policy/gwhttp.c's, the TLS mbedTLS's.
 * Sources: RFC 9112, RFC 9110 sections 7.6.1 and 11, RFC 7617 (Basic),
 * RFC 6125 (the host's name in its certificate), mbedTLS 2.28's ssl.h. */
#ifndef TURNINIT_GATEWAY_H
#define TURNINIT_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/error.h"
#include "policy/gwhttp.h"
#include "policy/manifest.h"
#include "policy/netallow.h"

#define GATEWAY_CA_DEFAULT "/etc/ssl/certs/ca-certificates.crt" /* Debian's bundle */
#define GATEWAY_HANDSHAKE_MS 10000 /* the TLS handshake, each read and write of it */
#define GATEWAY_IO_MS 300000       /* each read or write after it */

/* One gateway request: its rewritten head, its body's framing, what the log
 * line and the record say of it. */
struct gateway {
	char *head;                /* the head for the host (gw_request), malloc'd */
	size_t head_len, consumed; /* its bytes; the command's head's bytes */
	struct gw_body body;       /* the request body's framing */
	char method[16];
	char path[256];           /* without its query */
	struct gw_redact *redact; /* the value's forms, malloc'd */
	int status;               /* the host's status, 0 before it came */
	bool answered;            /* a byte of the host's response reached the command */
	uint64_t out, in;         /* bytes of the request sent, of the response read */
	uint64_t redactions;      /* forms of the value replaced in the response */
};

/* gateway_prepare - the command's head buf[0..len) for host:port, rewritten
 * with cred presented with value (1..4095 printable ASCII bytes): *g filled.
 * Returns 0, or the negative errno of gw_request (-EINVAL, -EPERM, -E2BIG:
 * a 400, 403, 431 the caller answers; 1 is never returned: the proxy has
 * read a whole head) or -ENOMEM, err saying why (never the value). */
int gateway_prepare(struct gateway *g, const char *buf, size_t len, const char *host, uint16_t port,
		    const struct na_cred *cred, const char *value, struct tn_error *err);

/* gateway_preload - parse the CA bundle of each rule of n with a credential
 * (its "ca", else GATEWAY_CA_DEFAULT), once each, into the proxy's memory:
 * called by the proxy before its first connection, so that a bundle a
 * command could write later is read before any command runs. Returns 0,
 * or the last failure (a bundle with no certificate read: its requests
 * get 502 naming it; more than 16 bundles: the others are read at each
 * request) with err saying why. */
int gateway_preload(const struct mf_network *n, struct tn_error *err);

/* gateway_run - TLS over upstream (a connected TCP socket; its flags are
 * changed) to host, its certificate checked against the PEM bundle at ca
 * (cred->ca, else GATEWAY_CA_DEFAULT) and host's name; then g's head, the
 * request's body from rest[0..rest_len) (the bytes read after the head) and
 * from client, to the body's end (anything after it is dropped: one request
 * a connection); then the host's response to client, its head and body
 * redacted, a chunked body decoded and ended by the close. Returns 0, or
 * -errno with err saying why in one line: -ECONNABORTED (TLS: the handshake
 * or the certificate), -EPROTO (the host's response malformed), -EPIPE (a
 * side ended early), -ETIMEDOUT, -EINVAL (the command's body malformed). The
 * caller answers 502 when g->answered is false. */
int gateway_run(struct gateway *g, int client, int upstream, const char *host, const char *ca,
		const char *rest, size_t rest_len, struct tn_error *err);

/* gateway_free - what gateway_prepare allocated; the redactor wiped. */
void gateway_free(struct gateway *g);

#endif
