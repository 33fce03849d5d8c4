/* proxy.h - turninit's proxy: the one way out of the commands' network
 * namespace to the hosts of the manifest's network.allow (docs/manifest.md,
 * "network"; docs/design.md, "The network of a turn").
 *
 * A process of its own, forked by PID 1 after the commands' namespace is made:
 * it listens on that namespace's loopback (a socket made there, which keeps its
 * namespace) and connects out from the container's own namespace, which it
 * re-enters with setns(2); in seccomp-notify mode, where the commands share
 * the pod's namespace, it stays there and serves only the connections PID 1
 * makes for a command (peer checks). It runs as PID 1's uid with no capability, not
 * dumpable, with no fd of turninit's but stderr: a command (another uid) cannot
 * signal, trace or read it. Each connection is a child of its own: one request
 * head read with a time limit, checked against the rules (policy/proxyreq.c,
 * policy/netallow.c), the name resolved with a time limit, addresses of
 * loopback, private, link-local, metadata and multicast ranges refused unless
 * listed, a connect with a time limit, then bytes relayed until either side
 * ends or the idle time passes. Each decision is one log line on stderr.
 * Besides the shared listening socket, one of each command's in serve,
 * listen and mcp mode, handed over by PID 1: a connection's records name
 * the command whose socket it came to.
 * Sources: setns(2), RFC 9110 section 9.3.6 (CONNECT), getaddrinfo(3). */
#ifndef TURNINIT_PROXY_H
#define TURNINIT_PROXY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/error.h"
#include "policy/manifest.h"
#include "sandbox/creds.h"

#define PROXY_CONNS_MAX 64         /* connections at once; more get a 503 */
#define PROXY_REFUSED_LOG_MAX 10   /* refusals logged and recorded in a window, */
#define PROXY_REFUSED_LOG_MS 10000 /* ... of this long; past that only counted, */
#define PROXY_REFUSED_PAIRS_MAX 16 /* ... and the first this many host:port pairs named */
#define PROXY_HEAD_MS 30000        /* to send a request head */
#define PROXY_RESOLVE_S 10         /* seconds to resolve a name (alarm) */
#define PROXY_CONNECT_MS 10000     /* to connect to one address */
#define PROXY_IDLE_MS 300000       /* a tunnel with no byte either way for this long ends */
#define PROXY_BUF 262144           /* bytes buffered each way of a tunnel */
#define PROXY_RECORD_MS 1000       /* to hand PID 1 a record (its pipe full) */
#define PROXY_LINGER_MS 5000       /* a refused client's bytes read after the answer, */
#define PROXY_LINGER_MAX 1048576   /* ... at most this long and this many */

/* proxy_start - fork the proxy. listen_fd: a listening TCP socket on the
 * commands' loopback (kept by the proxy, to be closed by the caller);
 * outside_ns: an fd of the container's network namespace (/proc/self/ns/net
 * before the unshare), which the proxy enters; the caller still holds
 * CAP_SYS_ADMIN; or -1: the proxy stays in the namespace it is forked in
 * (seccomp-notify mode: the pod's, the commands' too). peers: peer checks
 * (seccomp-notify mode, where any process of the pod reaches its ports): a
 * connection is served only when PID 1 has said on ctl_fd, before it
 * connected, that it makes it for a command (struct net_ctl_peer,
 * notify_peer_allow in notify.c): from 127.0.0.1, its source port and the port it
 * comes to pending (policy/netpeer.h: each taken once, dropped after
 * NP_TTL_MS, at most NP_MAX); any other is closed at once, with a line and
 * a record "refused" (bounded with the other refusals). false: every
 * connection to its ports is served (a namespace of the commands' own
 * holds the others out). n: the rules (borrowed: the proxy has its own copy of the
 * memory). creds: the credentials' values, value[i] for n->allow[i] (NULL:
 * none; the proxy's copy, after the fork, is its own, and takes the values
 * PID 1 hands it later (struct net_ctl_cred) in the places still NULL; the
 * caller wipes its own copy after). records_fd: the write end of the pipe of its records
 * (policy/netrec.h), one per decision, besides its log line; a record that
 * cannot be written within PROXY_RECORD_MS is dropped (the line stays).
 * ctl_fd: the proxy's end of a SOCK_SEQPACKET socket pair with PID 1, on
 * which PID 1 hands it each command's own listening socket and has it
 * closed (policy/netrec.h, struct net_ctl): a connection to one is that
 * command's, its records and lines name its id (net_cmd_listen in net.h);
 * and a credential's value given by request (net_cred_give).
 * log_fd: the proxy's stderr, where its lines go (-1: turninit's own).
 * *ret_pid on success. Errors: -errno of fork(2). The proxy's own
 * set-up failing (setns) ends it with a log line; connections are then
 * refused by the kernel (the listening socket is closed with it). */
int proxy_start(const struct mf_network *n, struct creds *creds, int listen_fd, int outside_ns, bool peers,
		int records_fd, int ctl_fd, int log_fd, pid_t *ret_pid, struct tn_error *err);

#endif
