/* netrec.h - one decision of turninit's proxy as it tells PID 1 (a record of
 * fixed size, written whole to a pipe: under PIPE_BUF, so never interleaved),
 * and what PID 1 makes of it: the audit log's "net" line, the protocol's
 * `net` event, the line an MCP tool result gains for a refusal
 * (docs/protocol.md, docs/audit.md, docs/mcp.md). */
#ifndef TURNINIT_NETREC_H
#define TURNINIT_NETREC_H

#include <stdint.h>

#define NETREC_HOST_MAX 253

struct net_record {
	char verdict[12];                  /* "allowed", "refused", "closed" */
	char request[8];                   /* "CONNECT", "HTTP", "GATEWAY", "" (no request head) */
	char host[NETREC_HOST_MAX + 1];    /* as asked ("" without a request head) */
	uint16_t port;                     /* 0 without a request head */
	char addr[46];                     /* the address connected to, or "" */
	int32_t rule;                      /* index in network.allow, -1 for none */
	char reason[300];                  /* refused: why, one line; else "" */
	uint64_t bytes_out, bytes_in;      /* closed: to the host, from it */
	uint64_t duration_ms;              /* closed: since the connection came */
	/* a request of the credential gateway (request "GATEWAY"), else empty */
	char method[16];                   /* as sent: "GET", "POST", ... */
	char path[256];                    /* without its query, cut */
	int32_t status;                    /* closed: the host's status, 0 for none */
	char credential[65];               /* the credential's name, never its value */
	uint8_t credential_added;          /* 1: written into the request */
	uint64_t redactions;               /* closed: forms of the value replaced */
};

#endif
