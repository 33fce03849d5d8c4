/* netpeer.h - the connections to turninit's proxy that PID 1 said it makes
 * for a command, pending until they come (seccomp-notify mode: the commands
 * share the pod's loopback, and the proxy serves those connections alone;
 * docs/design.md, "The network of a turn"). Pure: a bounded table of
 * (source port, proxy port) pairs, each taken once and dropped when old.
 * Sources: policy/netrec.h (struct net_ctl_peer, which fills it). */
#ifndef TURNINIT_NETPEER_H
#define TURNINIT_NETPEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NP_MAX 1024     /* pairs pending at once */
#define NP_TTL_MS 30000 /* a pair older than this (ms) is dropped, its connection never came */

struct np_entry {
	uint16_t port;  /* the source port on 127.0.0.1 */
	uint16_t to;    /* the proxy's listening port it goes to */
	uint64_t at_ms; /* when it was added (the caller's clock, monotonic) */
};

/* Zeroed, it is empty. */
struct np_table {
	size_t n;
	struct np_entry e[NP_MAX];
};

/* np_add - the pair (port, to) pending from now_ms (ms of a monotonic
 * clock, as every now_ms of this module). Pairs older than NP_TTL_MS are
 * dropped first; a pair pending already is renewed, not doubled. Errors:
 * -EINVAL for port or to 0; -ENOSPC with NP_MAX pairs pending (nothing
 * added: that connection will be refused). */
int np_add(struct np_table *t, uint16_t port, uint16_t to, uint64_t now_ms);

/* np_take - whether (port, to) is pending at now_ms and not older than
 * NP_TTL_MS; true removes it (a pair admits one connection). Old pairs are
 * dropped first. */
bool np_take(struct np_table *t, uint16_t port, uint16_t to, uint64_t now_ms);

#endif
