/* netrec.h - one decision of turninit's proxy as it tells PID 1 (a record of
 * fixed size, written whole to a pipe: under PIPE_BUF, so never interleaved),
 * and what PID 1 makes of it: the audit log's "net" line, the protocol's
 * `net` event, the line an MCP tool result gains for a refusal
 * (docs/protocol.md, docs/audit.md, docs/mcp.md); and what PID 1 tells the
 * proxy: a command's own listening socket, opened and closed (net_ctl), a
 * credential's value given by request (net_ctl_cred), and a connection to
 * the proxy that PID 1 makes for a command (net_ctl_peer). */
#ifndef TURNINIT_NETREC_H
#define TURNINIT_NETREC_H

#include <stdint.h>

#include "policy/request.h"

#define NETREC_HOST_MAX 253

struct net_record {
	char id[RQ_ID_MAX + 1];         /* the command whose port the connection
					   came to; "" for the shared port (one-shot
					   mode, or a command past NET_CMD_PORTS_MAX) */
	uint32_t stream;                /* with an id: its command's stream (0 serve,
					   1.. listen: an id is one stream's) */
	char verdict[12];               /* "allowed", "refused", "closed" */
	char request[8];                /* "CONNECT", "HTTP", "GATEWAY", "" (no request head) */
	char host[NETREC_HOST_MAX + 1]; /* as asked ("" without a request head) */
	uint16_t port;                  /* 0 without a request head */
	char addr[46];                  /* the address connected to, or "" */
	int32_t rule;                   /* index in network.allow, -1 for none */
	char reason[300];               /* refused: why, one line; else "" */
	uint64_t bytes_out, bytes_in;   /* closed: to the host, from it */
	uint64_t duration_ms;           /* closed: since the connection came */
	/* a request of the credential gateway (request "GATEWAY"), else empty */
	char method[16];          /* as sent: "GET", "POST", ... */
	char path[256];           /* without its query, cut */
	int32_t status;           /* closed: the host's status, 0 for none */
	char credential[65];      /* the credential's name, never its value */
	uint8_t credential_added; /* 1: written into the request */
	uint64_t redactions;      /* closed: forms of the value replaced */
};

/* A message of PID 1 to the proxy on their control socket pair (a
 * SOCK_SEQPACKET, so one message a read). open 1: the listening socket that
 * comes with it (SCM_RIGHTS) is command id's, its port port; open 0: the
 * proxy closes its listener of port port (the command has ended; the
 * connections it accepted go on). A port is one listener's while it is
 * open; an id is not (listen mode's connections each have their own). */
#define NET_CMD_PORTS_MAX 256 /* commands' listeners open at once */

struct net_ctl {
	uint8_t open;
	uint16_t port;
	uint32_t stream; /* the command's stream, as in struct net_record */
	char id[RQ_ID_MAX + 1];
};

/* The other kind of message on that socket pair: a credential's value the
 * launcher gave in a `credential` request (docs/protocol.md), for every rule
 * of network.allow whose credential is named so. Told apart by its first
 * byte (open's place) and its size; no fd comes with it. Both ends wipe
 * their copy once it is sent or taken. */
#define NET_CTL_CREDENTIAL 2

struct net_ctl_cred {
	uint8_t kind; /* NET_CTL_CREDENTIAL */
	char name[NA_CRED_NAME_MAX + 1];
	uint16_t len;                      /* bytes of value, 1..NA_CRED_VALUE_MAX */
	char value[NA_CRED_VALUE_MAX + 1]; /* NUL-ended */
};

/* The third kind: in seccomp-notify mode the commands share the pod's
 * loopback with its other processes, so the proxy serves only the
 * connections PID 1 makes for a command. Before it calls connect(2) on a
 * command's socket (bound by then to 127.0.0.1, its port the kernel's
 * choice), PID 1 sends this, and the proxy keeps (port, to) pending until a
 * connection from 127.0.0.1:port to its listener of port `to` takes it, or
 * 30 s have passed (policy/netpeer.h). Told apart by its first byte and its
 * size; no fd comes with it. */
#define NET_CTL_PEER 3

struct net_ctl_peer {
	uint8_t kind;  /* NET_CTL_PEER */
	uint16_t port; /* the source port on 127.0.0.1 of a connection turninit made */
	uint16_t to;   /* the proxy port it goes to (shared or a command's) */
};

#endif
