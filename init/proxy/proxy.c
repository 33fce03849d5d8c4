/* proxy.c - see proxy.h. */
#define _GNU_SOURCE
#include "proxy/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <seccomp.h>
#include <sodium.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "policy/netallow.h"
#include "policy/netpeer.h"
#include "policy/netrec.h"
#include "policy/proxyreq.h"
#include "proxy/gateway.h"
#include "sandbox/caps.h"
#include "sandbox/creds.h"
#include "util/clock.h"
#include "util/io.h"
#include "util/log.h"

/* What one connection asked and what became of it: its log line. */
struct proxy_conn {
	int client, upstream;
	struct pr_request rq;
	long rule;                   /* index in network.allow, or -1 */
	char addr[INET6_ADDRSTRLEN]; /* the address connected to */
	uint64_t out, in;            /* bytes to the host, from it */
	uint64_t start_ms;
	const struct gateway *gw;   /* a gateway request, or NULL */
	const struct na_cred *cred; /* its credential */
	char id[RQ_ID_MAX + 1];     /* the command whose port it came to, or "" */
	uint32_t stream;            /* with id: that command's stream */
};

#define PROXY_RECORDS 4 /* the fd of the records' pipe in the proxy */
#define PROXY_CTL 5     /* the fd of PID 1's control socket pair in the proxy */

/* The commands' own listening sockets (struct net_ctl), at most
 * NET_CMD_PORTS_MAX; fd -1 for a free place. */
struct proxy_listener {
	int fd;
	uint16_t port;
	uint32_t stream;
	char id[RQ_ID_MAX + 1];
};
static struct proxy_listener listeners[NET_CMD_PORTS_MAX];
/* Counts every change of listeners[] (one kept, one closed): the loop stops
 * going through what it polled once a drain of the control socket in
 * proxy_accept has changed them, as a polled fd may then be closed, or
 * another listener's by now. */
static unsigned listeners_gen;

/* Peer checks on (proxy_start's peers, seccomp-notify mode): a connection
 * is served only when PID 1 said it makes it (struct net_ctl_peer), its
 * pair pending in peer_table (the proxy's own, never its children's). */
static bool proxy_peers;
static struct np_table peer_table;

/* The credentials' values: the proxy's copy after the fork (the gateway's),
 * completed by the values PID 1 hands it later (proxy_cred_take). */
static struct creds *proxy_creds;

static const char *proxy_kind(const struct proxy_conn *c)
{
	return !c->rq.host[0] ? "" : c->rq.kind == PR_CONNECT ? "CONNECT" : c->cred ? "GATEWAY" : "HTTP";
}

/* The end of a decision's log line: " (command ID)", or "" for a
 * connection to the shared port. An id is [A-Za-z0-9._:-] (request.c). */
static const char *proxy_who(const struct proxy_conn *c)
{
	static char who[RQ_ID_MAX + 16];

	if (!c->id[0])
		return "";
	snprintf(who, sizeof(who), " (command %s)", c->id);
	return who;
}

/* A decision to PID 1 (besides its log line): one record, written whole
 * (smaller than PIPE_BUF) within PROXY_RECORD_MS, else dropped. */
static void proxy_record(const struct proxy_conn *c, const char *verdict, const char *reason)
{
	struct net_record r = { .port = c->rq.port,
				.rule = (int32_t)c->rule,
				.bytes_out = c->out,
				.bytes_in = c->in,
				.duration_ms = clock_ms() - c->start_ms };
	struct pollfd p = { .fd = PROXY_RECORDS, .events = POLLOUT };

	snprintf(r.id, sizeof(r.id), "%s", c->id);
	r.stream = c->stream;
	snprintf(r.verdict, sizeof(r.verdict), "%s", verdict);
	snprintf(r.request, sizeof(r.request), "%s", proxy_kind(c));
	snprintf(r.host, sizeof(r.host), "%s", c->rq.host);
	snprintf(r.addr, sizeof(r.addr), "%s", c->addr);
	snprintf(r.reason, sizeof(r.reason), "%s", reason ? reason : "");
	if (c->cred) {
		snprintf(r.credential, sizeof(r.credential), "%s", c->cred->name);
		r.credential_added = c->gw && c->gw->out > 0;
	}
	if (c->gw) {
		snprintf(r.method, sizeof(r.method), "%s", c->gw->method);
		snprintf(r.path, sizeof(r.path), "%s", c->gw->path);
		r.status = c->gw->status;
		r.redactions = c->gw->redactions;
	}
	if (poll(&p, 1, PROXY_RECORD_MS) == 1)
		(void)!write(PROXY_RECORDS, &r, sizeof(r));
}

/* Refusals are logged and recorded at most PROXY_REFUSED_LOG_MAX in each
 * PROXY_REFUSED_LOG_MS window, past that only counted: a command's loop of
 * refused connections must not bury the log and the events. The count is
 * said, a line and a record, by the proxy's loop once the window has passed
 * (one still open when the turn ends is not), with the first
 * PROXY_REFUSED_PAIRS_MAX distinct host:port pairs of those refusals, each a
 * line and a record of its own: a command that spends the bound on junk
 * pairs (10 refusals, then 16 distinct pairs) probes the next ones counted,
 * not named. One shared mapping for the proxy and its
 * children; a count the window's reset races with may be lost, or said in
 * the next window. */
struct proxy_pair {
	char host[PR_HOST_MAX + 1];
	uint16_t port;
	char kind[8];   /* "CONNECT", "HTTP" (the first refusal's) */
	unsigned count; /* refusals of this pair in the window */
};
struct proxy_quota {
	uint64_t window_ms;
	unsigned logged, quiet;
	bool lock;                 /* of the pairs; held a few µs, never waited on for long */
	unsigned n_pairs, unnamed; /* unnamed: quiet refusals of a pair not kept */
	struct proxy_pair pairs[PROXY_REFUSED_PAIRS_MAX];
};
static struct proxy_quota *quota;

/* The pairs' lock, spun for at most a few ms: false when a child died
 * holding it (the pairs are then left as they are, and counted unnamed). */
static bool proxy_pairs_lock(void)
{
	for (int i = 0; i < 1000; i++) {
		if (!__atomic_test_and_set(&quota->lock, __ATOMIC_ACQUIRE))
			return true;
		sched_yield();
	}
	return false;
}

/* A refusal past the bound: its host:port pair kept, if it has one. */
static void proxy_quota_name(const struct proxy_conn *c)
{
	unsigned i;

	if (!c || !c->rq.host[0])
		return;
	if (!proxy_pairs_lock()) {
		__atomic_add_fetch(&quota->unnamed, 1, __ATOMIC_RELAXED);
		return;
	}
	for (i = 0; i < quota->n_pairs; i++)
		if (quota->pairs[i].port == c->rq.port && strcmp(quota->pairs[i].host, c->rq.host) == 0)
			break;
	if (i < quota->n_pairs) {
		quota->pairs[i].count++;
	} else if (i < PROXY_REFUSED_PAIRS_MAX) {
		struct proxy_pair *p = &quota->pairs[quota->n_pairs++];

		snprintf(p->host, sizeof(p->host), "%s", c->rq.host);
		snprintf(p->kind, sizeof(p->kind), "%s", proxy_kind(c));
		p->port = c->rq.port;
		p->count = 1;
	} else {
		quota->unnamed++;
	}
	__atomic_clear(&quota->lock, __ATOMIC_RELEASE);
}

/* true: this refusal (c, or NULL for a connection of no request) is logged
 * and recorded; false: only counted, and its pair kept */
static bool proxy_quota_take(const struct proxy_conn *c)
{
	if (!quota || __atomic_add_fetch(&quota->logged, 1, __ATOMIC_RELAXED) <= PROXY_REFUSED_LOG_MAX)
		return true;
	__atomic_add_fetch(&quota->quiet, 1, __ATOMIC_RELAXED);
	proxy_quota_name(c);
	return false;
}

/* In the proxy's loop, once a window has passed: the pairs kept into
 * pairs (PROXY_REFUSED_PAIRS_MAX), their number returned and the count of
 * those not kept in *ret_unnamed; the shared ones emptied. */
static unsigned proxy_quota_pairs(struct proxy_pair *pairs, unsigned *ret_unnamed)
{
	unsigned np;

	*ret_unnamed = 0;
	if (!proxy_pairs_lock())
		return 0;
	np = quota->n_pairs;
	memcpy(pairs, quota->pairs, np * sizeof(pairs[0]));
	*ret_unnamed = quota->unnamed;
	quota->n_pairs = 0;
	quota->unnamed = 0;
	__atomic_clear(&quota->lock, __ATOMIC_RELEASE);
	return np;
}

/* In the proxy's loop: a passed window's count said, then a line and a
 * record for each pair kept; a new window begun. */
static void proxy_quota_tick(void)
{
	struct proxy_pair pairs[PROXY_REFUSED_PAIRS_MAX];
	uint64_t now = clock_ms();
	unsigned quiet, np, unnamed;
	struct proxy_conn c = { .client = -1, .upstream = -1, .rule = -1, .start_ms = now };
	char why[300];
	int at;

	if (!quota || now < __atomic_load_n(&quota->window_ms, __ATOMIC_RELAXED) + PROXY_REFUSED_LOG_MS)
		return;
	quiet = __atomic_exchange_n(&quota->quiet, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&quota->logged, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&quota->window_ms, now, __ATOMIC_RELAXED);
	np = proxy_quota_pairs(pairs, &unnamed);
	if (!quiet)
		return;
	at = snprintf(why, sizeof(why), "%u more connection(s) refused in %d s, not each logged", quiet,
		      PROXY_REFUSED_LOG_MS / 1000);
	if ((np || unnamed) && at > 0 && (size_t)at < sizeof(why))
		snprintf(why + at, sizeof(why) - (size_t)at,
			 "; %u host:port pair(s) named in the lines after this one, %u refusal(s) of other pairs not named (%d named at most)",
			 np, unnamed, PROXY_REFUSED_PAIRS_MAX);
	log_line("net: %s", why);
	proxy_record(&c, "refused", why);
	for (unsigned i = 0; i < np; i++) {
		c.rq.kind = strcmp(pairs[i].kind, "CONNECT") == 0 ? PR_CONNECT : PR_HTTP;
		memcpy(c.rq.host, pairs[i].host, sizeof(c.rq.host)); /* both PR_HOST_MAX + 1, NUL-ended */
		c.rq.port = pairs[i].port;
		snprintf(why, sizeof(why), "refused %u time(s) in %d s, not each logged", pairs[i].count,
			 PROXY_REFUSED_LOG_MS / 1000);
		log_line("net: not each logged: %s %s:%u %s", pairs[i].kind, pairs[i].host, pairs[i].port,
			 why);
		proxy_record(&c, "refused", why);
	}
}

/* An answer of the proxy's own, then the connection's end: status and a
 * one-line plain-text body, which curl, git, pip and npm show. */
static void proxy_answer(int fd, int status, const char *reason, const char *body)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf),
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
			 status, reason, strlen(body) + 1, body);

	if (n > 0)
		(void)io_write_all(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* The end of a connection the proxy answered itself: a lingering close
 * (RFC 9112, section 9.6, "Tear-down"). Writing is shut down, so that the
 * client reads the answer to its end; what the client still sends is read
 * and dropped until it closes, or PROXY_LINGER_MAX bytes or PROXY_LINGER_MS
 * have passed. Closed at once with bytes unread, the socket would answer
 * them with a reset, which can reach the client before it has read the
 * answer, and kills one still writing with SIGPIPE. */
static void __attribute__((noreturn)) proxy_linger_exit(int fd)
{
	uint64_t end = clock_ms() + PROXY_LINGER_MS, now;
	size_t total = 0;
	char buf[4096];

	if (shutdown(fd, SHUT_WR) < 0)
		_exit(0);
	while ((now = clock_ms()) < end && total < PROXY_LINGER_MAX) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, (int)(end - now));
		ssize_t n;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n = TEMP_FAILURE_RETRY(read(fd, buf, sizeof(buf)));
		if (n <= 0)
			break;
		total += (size_t)n;
	}
	_exit(0);
}

/* Refused: the answer, the log line, the child's end. */
static void __attribute__((noreturn))
proxy_refuse(struct proxy_conn *c, int status, const char *reason, const char *why)
{
	char body[600];

	/* on record before the command can see the answer: PID 1 then has
	 * the record before the command's end (its net event comes first) */
	if (proxy_quota_take(c)) {
		log_line("net: refused %s %s:%u: %s%s", proxy_kind(c), c->rq.host, c->rq.port, why,
			 proxy_who(c));
		proxy_record(c, "refused", why);
	}
	snprintf(body, sizeof(body), "turninit: %s:%u refused: %s", c->rq.host, c->rq.port, why);
	proxy_answer(c->client, status, reason, body);
	proxy_linger_exit(c->client);
}

/* The request head into buf (at most PR_HEAD_MAX bytes, within
 * PROXY_HEAD_MS); *ret_len bytes read, the head's and any after it. */
static int proxy_read_head(struct proxy_conn *c, char *buf, size_t *ret_len, char **ret_fwd,
			   struct tn_error *err)
{
	uint64_t deadline = clock_ms() + PROXY_HEAD_MS;
	size_t len = 0;

	for (;;) {
		struct pollfd p = { .fd = c->client, .events = POLLIN };
		uint64_t now = clock_ms();
		ssize_t r;
		int rc;

		if (now >= deadline)
			return err_set(err, ETIMEDOUT, "no complete request head within %d ms",
				       PROXY_HEAD_MS);
		if (poll(&p, 1, (int)(deadline - now)) <= 0)
			continue;
		r = TEMP_FAILURE_RETRY(read(c->client, buf + len, PR_HEAD_MAX - len));
		if (r <= 0)
			return err_set(err, EPIPE, "the connection ended before its request head");
		len += (size_t)r;
		rc = pr_parse(buf, len, &c->rq, ret_fwd, err);
		if (rc <= 0) {
			*ret_len = len;
			return rc;
		}
	}
}

/* A connect to one address within PROXY_CONNECT_MS: the socket, or -errno
 * (-ETIMEDOUT when the time ran out). */
static int proxy_connect_one(const struct sockaddr *sa, socklen_t len)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct pollfd p;
	int e = 0, r;
	socklen_t el = sizeof(e);

	if (fd < 0)
		return -errno;
	if (connect(fd, sa, len) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		e = errno;
		close(fd);
		return -e;
	}
	p = (struct pollfd){ .fd = fd, .events = POLLOUT };
	r = poll(&p, 1, PROXY_CONNECT_MS);
	if (r != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0 || e != 0) {
		e = r == 0 ? ETIMEDOUT : r < 0 ? errno : e ? e : EIO;
		close(fd);
		return -e;
	}
	return fd;
}

/* The host's addresses that the rules allow, connected in order: the first
 * that answers. Refuses (and ends the child) when none is allowed or none
 * answers. */
static void proxy_connect(struct proxy_conn *c, const struct mf_network *n)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	char port[8], why[400] = "", text[INET6_ADDRSTRLEN];
	int rc;

	snprintf(port, sizeof(port), "%u", c->rq.port);
	/* getaddrinfo has no time limit of its own but the resolver's: the
	 * alarm ends the child (its client sees the connection close) */
	alarm(PROXY_RESOLVE_S);
	rc = getaddrinfo(c->rq.host, port, &hints, &res);
	alarm(0);
	if (rc != 0) {
		snprintf(why, sizeof(why), "the name does not resolve (%s)", gai_strerror(rc));
		proxy_refuse(c, 502, "Bad Gateway", why);
	}
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		const uint8_t *bytes =
			a->ai_family == AF_INET ?
				(const uint8_t *)&((struct sockaddr_in *)a->ai_addr)->sin_addr :
				(const uint8_t *)&((struct sockaddr_in6 *)a->ai_addr)->sin6_addr;
		const char *kind;

		if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
			continue;
		inet_ntop(a->ai_family, bytes, text, sizeof(text));
		kind = na_addr_class(a->ai_family == AF_INET, bytes);
		/* DNS rebinding: a listed name that leads to a private address is
		 * refused, unless that address is listed itself */
		if (kind && na_match(n->allow, n->n_allow, text, c->rq.port) < 0) {
			snprintf(why, sizeof(why),
				 "it resolves to %s, %s %s address that network.allow does not list", text,
				 strchr("aeiou", kind[0]) ? "an" : "a", kind);
			continue;
		}
		c->upstream = proxy_connect_one(a->ai_addr, a->ai_addrlen);
		if (c->upstream >= 0) {
			snprintf(c->addr, sizeof(c->addr), "%s", text);
			freeaddrinfo(res);
			return;
		}
		if (c->upstream == -ETIMEDOUT)
			snprintf(why, sizeof(why), "no connection to %s within %d ms", text,
				 PROXY_CONNECT_MS);
		else
			snprintf(why, sizeof(why), "no connection to %s (%s)", text, strerror(-c->upstream));
		c->upstream = -1;
	}
	freeaddrinfo(res);
	if (!why[0])
		snprintf(why, sizeof(why), "the name has no IPv4 or IPv6 address");
	proxy_refuse(c, strstr(why, "network.allow") ? 403 : 502,
		     strstr(why, "network.allow") ? "Forbidden" : "Bad Gateway", why);
}

/* One way of a tunnel: bytes spliced from `from` into a pipe wait there (at
 * most cap: PROXY_BUF, or the pipe's size when smaller) until `to` takes
 * them; they never pass through the proxy's memory (splice(2)). */
struct proxy_way {
	int from, to;
	int pipe[2];
	size_t len, cap; /* bytes in the pipe, and its bound */
	bool eof, full;  /* full: the pipe took no more */
	uint64_t *count;
};

/* Moves what it can both ways: false when the tunnel is to end (a side
 * failed). Updates *last when a byte moved. */
static bool proxy_move(struct proxy_way *w, uint64_t *last)
{
	ssize_t r;

	if (!w->eof && !w->full && w->len < w->cap) {
		r = splice(w->from, NULL, w->pipe[1], NULL, w->cap - w->len,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (r > 0) {
			w->len += (size_t)r;
			*last = clock_ms();
		} else if (r < 0 && errno == EAGAIN) {
			/* with bytes in it, the pipe may be out of slots (a slot
			 * a page, and TCP's pages partly filled): polled again
			 * once some left it */
			w->full = w->len > 0;
		} else if (r == 0 || errno != EINTR) {
			w->eof = true;
			if (r < 0)
				return false;
		}
	}
	if (w->len > 0) {
		r = splice(w->pipe[0], NULL, w->to, NULL, w->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (r > 0) {
			w->len -= (size_t)r;
			w->full = false;
			*w->count += (uint64_t)r;
			*last = clock_ms();
		} else if (r < 0 && errno != EAGAIN && errno != EINTR) {
			return false;
		}
	}
	if (w->eof && w->len == 0 && w->to >= 0) {
		shutdown(w->to, SHUT_WR);
		w->to = -1; /* said once */
	}
	return true;
}

/* Relay until both sides have ended, one fails, or nothing moves for
 * PROXY_IDLE_MS. */
static void proxy_relay(struct proxy_conn *c)
{
	struct proxy_way up = { .from = c->client, .to = c->upstream, .count = &c->out };
	struct proxy_way down = { .from = c->upstream, .to = c->client, .count = &c->in };
	struct proxy_way *w[2] = { &up, &down };
	uint64_t last = clock_ms();

	for (int i = 0; i < 2; i++) {
		int size, fl = fcntl(w[i]->from, F_GETFL);

		/* splice(2)'s SPLICE_F_NONBLOCK is the pipe's: a socket's
		 * side follows its own O_NONBLOCK */
		if (fl < 0 || fcntl(w[i]->from, F_SETFL, fl | O_NONBLOCK) != 0 ||
		    pipe2(w[i]->pipe, O_CLOEXEC | O_NONBLOCK) != 0 ||
		    ((void)fcntl(w[i]->pipe[1], F_SETPIPE_SZ, PROXY_BUF),
		     (size = fcntl(w[i]->pipe[1], F_GETPIPE_SZ)) <= 0)) {
			log_errno(errno, "net: a tunnel's pipe");
			return;
		}
		w[i]->cap = (size_t)size < PROXY_BUF ? (size_t)size : PROXY_BUF;
	}
	while (!(up.eof && up.len == 0 && down.eof && down.len == 0)) {
		struct pollfd p[4];
		int np = 0;
		uint64_t now = clock_ms();

		if (now - last >= PROXY_IDLE_MS)
			return;
		for (int i = 0; i < 2; i++) {
			if (!w[i]->eof && !w[i]->full && w[i]->len < w[i]->cap)
				p[np++] = (struct pollfd){ .fd = w[i]->from, .events = POLLIN };
			if (w[i]->len > 0)
				p[np++] = (struct pollfd){ .fd = w[i]->to, .events = POLLOUT };
		}
		if (poll(p, (nfds_t)np, (int)(PROXY_IDLE_MS - (now - last))) < 0 && errno != EINTR)
			return;
		for (int i = 0; i < 2; i++)
			if (!proxy_move(w[i], &last))
				return;
	}
}

/* The rule whose credential goes with a request that rule admitted: that
 * rule when it names one, else -1 (the request is the proxy's alone). A
 * credential goes with no request but its own rule's host and port. */
static long proxy_cred_rule(const struct mf_network *n, long rule)
{
	return rule >= 0 && n->allow[rule].cred ? rule : -1;
}

/* A plain-HTTP request for a rule with a credential: the gateway sends it
 * on over TLS with the credential in it (gateway.h), or refuses it; then
 * the child ends. A credential that was not given is named in a 503, and
 * nothing is sent to the host. */
static void __attribute__((noreturn))
proxy_gateway(struct proxy_conn *c, const struct mf_network *n, long cred_rule, const char *head, size_t len)
{
	const char *value = proxy_creds && (size_t)cred_rule < proxy_creds->n ?
				    proxy_creds->value[cred_rule] :
				    NULL;
	struct tn_error err = { 0 };
	struct gateway g;
	char why[900];
	int r;

	c->cred = n->allow[cred_rule].cred;
	if (!value) {
		snprintf(why, sizeof(why),
			 "the credential %s of network.allow[%ld] was not given to this turn", c->cred->name,
			 cred_rule);
		proxy_refuse(c, 503, "Service Unavailable", why);
	}
	r = gateway_prepare(&g, head, len, c->rq.host, c->rq.port, c->cred, value, &err);
	if (r < 0) {
		gateway_free(&g);
		proxy_refuse(c,
			     r == -EPERM ? 403 :
			     r == -E2BIG ? 431 :
					   400,
			     r == -EPERM ? "Forbidden" :
			     r == -E2BIG ? "Request Header Fields Too Large" :
					   "Bad Request",
			     err.msg);
	}
	c->gw = &g;
	proxy_connect(c, n);
	log_line("net: allowed GATEWAY %s:%u (%s) by network.allow[%ld]: %s %s with the credential %s%s",
		 c->rq.host, c->rq.port, c->addr, c->rule, g.method, g.path, c->cred->name, proxy_who(c));
	proxy_record(c, "allowed", NULL);
	r = gateway_run(&g, c->client, c->upstream, c->rq.host,
			c->cred->ca ? c->cred->ca : GATEWAY_CA_DEFAULT, head + g.consumed, len - g.consumed,
			&err);
	c->out = g.out;
	c->in = g.in;
	if (r < 0) {
		log_line("net: GATEWAY %s:%u (%s): %s", c->rq.host, c->rq.port, c->addr, err.msg);
		if (!g.answered) {
			snprintf(why, sizeof(why), "turninit: %s:%u: %s", c->rq.host, c->rq.port, err.msg);
			proxy_answer(c->client, 502, "Bad Gateway", why);
		}
	}
	log_line("net: closed GATEWAY %s %s:%u (%s) %s: status %d, %llu bytes out, %llu in, credential %s %s, %llu ms%s",
		 g.method, c->rq.host, c->rq.port, c->addr, g.path, g.status, (unsigned long long)c->out,
		 (unsigned long long)c->in, c->cred->name, g.out > 0 ? "added" : "not sent",
		 (unsigned long long)(clock_ms() - c->start_ms), proxy_who(c));
	if (g.redactions)
		log_line("net: GATEWAY %s:%u: the credential %s's value was redacted %llu time(s) from the response",
			 c->rq.host, c->rq.port, c->cred->name, (unsigned long long)g.redactions);
	proxy_record(c, "closed", r < 0 ? err.msg : NULL);
	gateway_free(&g);
	_exit(0);
}

/* One connection, in a child of the proxy: never returns. id: the command
 * whose listener it came to ("" for the shared one), of stream. */
static void __attribute__((noreturn))
proxy_conn_main(int client, const struct mf_network *n, const char *id, uint32_t stream)
{
	char head[PR_HEAD_MAX];
	struct proxy_conn c = { .client = client, .upstream = -1, .rule = -1, .start_ms = clock_ms() };
	struct tn_error err = { 0 };
	_cleanup_free_ char *fwd = NULL;
	size_t len = 0;
	int rc;

	snprintf(c.id, sizeof(c.id), "%s", id);
	c.stream = stream;

	rc = proxy_read_head(&c, head, &len, &fwd, &err);
	if (rc < 0) {
		int status = rc == -E2BIG ? 431 : 400;

		if (rc == -ETIMEDOUT || rc == -EPIPE) {
			if (proxy_quota_take(NULL))
				log_line("net: a connection ended without a request: %s", err.msg);
			_exit(0);
		}
		memset(&c.rq, 0, sizeof(c.rq));
		if (proxy_quota_take(NULL)) {
			log_line("net: refused a request: %s%s", err.msg, proxy_who(&c));
			proxy_record(&c, "refused", err.msg);
		}
		proxy_answer(client, status,
			     status == 431 ? "Request Header Fields Too Large" : "Bad Request", err.msg);
		proxy_linger_exit(client);
	}
	/* a name is resolved as the rules match it: in lower case */
	for (char *h = c.rq.host; *h; h++)
		if (*h >= 'A' && *h <= 'Z')
			*h = (char)(*h - 'A' + 'a');
	c.rule = na_match(n->allow, n->n_allow, c.rq.host, c.rq.port);
	if (c.rule < 0)
		proxy_refuse(&c, 403, "Forbidden",
			     "no entry of the manifest's network.allow names this host and port");
	if (c.rq.kind == PR_HTTP && proxy_cred_rule(n, c.rule) >= 0)
		proxy_gateway(&c, n, proxy_cred_rule(n, c.rule), head, len);
	proxy_connect(&c, n);
	/* said now: the turn may end (and the child with it) before the tunnel */
	log_line("net: allowed %s %s:%u (%s) by network.allow[%ld]%s", proxy_kind(&c), c.rq.host, c.rq.port,
		 c.addr, c.rule, proxy_who(&c));
	proxy_record(&c, "allowed", NULL);
	if (c.rq.kind == PR_CONNECT) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

		if (io_write_all(client, ok, sizeof(ok) - 1) < 0)
			_exit(0);
	} else if (io_send_all(c.upstream, fwd, strlen(fwd)) < 0) {
		_exit(0);
	} else {
		c.out += strlen(fwd);
	}
	/* what the client sent after its head goes on first */
	if (len > c.rq.head_len && io_send_all(c.upstream, head + c.rq.head_len, len - c.rq.head_len) == 0)
		c.out += len - c.rq.head_len;
	proxy_relay(&c);
	log_line("net: closed %s %s:%u (%s): %llu bytes out, %llu in, %llu ms%s", proxy_kind(&c), c.rq.host,
		 c.rq.port, c.addr, (unsigned long long)c.out, (unsigned long long)c.in,
		 (unsigned long long)(clock_ms() - c.start_ms), proxy_who(&c));
	proxy_record(&c, "closed", NULL);
	_exit(0);
}

/* A credential's value from PID 1 (struct net_ctl_cred): kept for every
 * rule whose credential is named so and has none yet (PID 1 refuses a
 * second value; one here would be ignored), for the connections forked
 * from now on. m is wiped by the caller. */
static void proxy_cred_take(const struct mf_network *n, struct net_ctl_cred *m)
{
	size_t len = m->len;

	m->name[sizeof(m->name) - 1] = '\0';
	if (len == 0 || len > NA_CRED_VALUE_MAX || na_cred_value_check(m->value, len) < 0 || !proxy_creds ||
	    !proxy_creds->value) {
		log_line("net: a credential's value from turninit not taken: malformed, or no place for it");
		return;
	}
	for (size_t i = 0; i < n->n_allow && i < proxy_creds->n; i++) {
		if (!n->allow[i].cred || strcmp(n->allow[i].cred->name, m->name) != 0 ||
		    proxy_creds->value[i])
			continue;
		if (!(proxy_creds->value[i] = malloc(len + 1))) {
			log_line("net: out of memory for the credential %s", m->name);
			continue;
		}
		memcpy(proxy_creds->value[i], m->value, len);
		proxy_creds->value[i][len] = '\0';
	}
}

/* A peer PID 1 is about to connect from (struct net_ctl_peer), pending in
 * peer_table; ignored with peer checks off. A full table is said (bounded
 * with the refusals): that connection will be refused. */
static void proxy_peer_add(const struct net_ctl_peer *m)
{
	int r;

	if (!proxy_peers)
		return;
	r = np_add(&peer_table, m->port, m->to, clock_ms());
	if (r == -ENOSPC && proxy_quota_take(NULL))
		log_line("net: %d connections turninit makes for commands are pending, the most at once: the one from 127.0.0.1:%u to port %u will be refused",
			 NP_MAX, m->port, m->to);
	else if (r < 0 && r != -ENOSPC)
		log_line("net: a peer from turninit not taken: port %u to port %u", m->port, m->to);
}

/* A command's listener from PID 1 (struct net_ctl): kept, with open and fd,
 * or the one of its port closed, without. A listener past NET_CMD_PORTS_MAX
 * (PID 1 bounds them too) is closed: its command's connections are then
 * refused. fd is the listener's or -1, taken (closed when not kept). */
static void proxy_listener_ctl(const struct net_ctl *m, int fd)
{
	size_t i;

	if (m->open && fd >= 0) {
		for (i = 0; i < NET_CMD_PORTS_MAX && listeners[i].fd >= 0; i++)
			;
		if (i < NET_CMD_PORTS_MAX) {
			listeners[i].fd = fd;
			listeners[i].port = m->port;
			listeners[i].stream = m->stream;
			snprintf(listeners[i].id, sizeof(listeners[i].id), "%s", m->id);
			listeners_gen++;
			return;
		}
		log_line("net: %d commands' ports are open, the most at once: command %s's is closed",
			 NET_CMD_PORTS_MAX, m->id);
	} else if (!m->open) {
		for (i = 0; i < NET_CMD_PORTS_MAX; i++)
			if (listeners[i].fd >= 0 && listeners[i].port == m->port) {
				close(listeners[i].fd);
				listeners[i].fd = -1;
				listeners_gen++;
				break;
			}
	}
	if (fd >= 0)
		close(fd);
}

/* A message of PID 1's on the control socket (netrec.h), told apart by its
 * size and first byte: a command's listener kept, or one closed (struct
 * net_ctl), a credential's value (struct net_ctl_cred, wiped once taken),
 * or a peer it is about to connect from (struct net_ctl_peer). Returns 1
 * when a message was read, 0 when none waits, -1 when PID 1's end is gone
 * (*ctl then closed and set to -1). */
static int proxy_control(const struct mf_network *n, int *ctl)
{
	union {
		struct net_ctl c;
		struct net_ctl_cred k;
		struct net_ctl_peer p;
	} u_m;
	struct net_ctl m;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec iov = { .iov_base = &u_m, .iov_len = sizeof(u_m) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	ssize_t r = recvmsg(*ctl, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	int fd = -1;

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (r <= 0) {
		close(*ctl);
		*ctl = -1;
		return -1;
	}
	cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	if (r == (ssize_t)sizeof(u_m.k) && u_m.k.kind == NET_CTL_CREDENTIAL) {
		proxy_cred_take(n, &u_m.k);
		sodium_memzero(&u_m, sizeof(u_m));
	} else if (r == (ssize_t)sizeof(u_m.p) && u_m.p.kind == NET_CTL_PEER) {
		proxy_peer_add(&u_m.p);
	} else if (r == (ssize_t)sizeof(m)) {
		memcpy(&m, &u_m.c, sizeof(m));
		m.id[sizeof(m.id) - 1] = '\0';
		proxy_listener_ctl(&m, fd);
		return 1;
	}
	if (fd >= 0)
		close(fd);
	return 1;
}

/* Every message PID 1 has sent so far taken, until none waits or its end
 * is gone. Not bounded: PID 1 sends a peer a connect, and the connects
 * wait for the proxy's accepts. */
static void proxy_drain(const struct mf_network *n, int *ctl)
{
	while (*ctl >= 0 && proxy_control(n, ctl) > 0)
		;
}

/* The port of s (AF_INET or AF_INET6) into *ret_port and its address as
 * text into addr ("[ADDR]" for IPv6 but a mapped IPv4 address); true when
 * that address is 127.0.0.1 or ::ffff:127.0.0.1. */
static bool proxy_lo_addr(const struct sockaddr_storage *s, char addr[INET6_ADDRSTRLEN + 2],
			  uint16_t *ret_port)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	const struct sockaddr_in *v4 = (const struct sockaddr_in *)s;
	const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)s;
	char text[INET6_ADDRSTRLEN];

	if (s->ss_family == AF_INET) {
		*ret_port = ntohs(v4->sin_port);
		inet_ntop(AF_INET, &v4->sin_addr, addr, INET6_ADDRSTRLEN);
		return v4->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
	}
	if (s->ss_family != AF_INET6)
		return false;
	*ret_port = ntohs(v6->sin6_port);
	if (memcmp(v6->sin6_addr.s6_addr, mapped, sizeof(mapped)) == 0) {
		inet_ntop(AF_INET, v6->sin6_addr.s6_addr + 12, addr, INET6_ADDRSTRLEN);
		return memcmp(v6->sin6_addr.s6_addr + 12, "\x7f\0\0\x01", 4) == 0;
	}
	inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
	snprintf(addr, INET6_ADDRSTRLEN + 2, "[%s]", text);
	return false;
}

/* Peer checks: whether cfd, just accepted, is a connection PID 1 said it
 * makes for a command: from 127.0.0.1, its source port and the port it
 * came to pending in peer_table, which it then leaves (one connection a
 * message). The control socket is drained first: PID 1 sends the message
 * before it calls connect(2), so it waits there by the time the connection
 * is accepted. Else false, said in a line and a record (bounded with the
 * other refusals); the record names no command, as the connection is
 * none's (any process of the pod may connect to any of the ports). */
static bool proxy_peer_ok(const struct mf_network *n, int *ctl, int cfd)
{
	struct sockaddr_storage peer, self;
	socklen_t pl = sizeof(peer), sl = sizeof(self);
	char addr[INET6_ADDRSTRLEN + 2] = "?", own[INET6_ADDRSTRLEN + 2];
	uint16_t port = 0, to = 0;
	bool lo = false;

	proxy_drain(n, ctl);
	if (getpeername(cfd, (struct sockaddr *)&peer, &pl) == 0 &&
	    getsockname(cfd, (struct sockaddr *)&self, &sl) == 0) {
		lo = proxy_lo_addr(&peer, addr, &port);
		(void)proxy_lo_addr(&self, own, &to);
	}
	if (lo && np_take(&peer_table, port, to, clock_ms()))
		return true;
	if (proxy_quota_take(NULL)) {
		struct proxy_conn c = { .client = cfd, .upstream = -1, .rule = -1, .start_ms = clock_ms() };
		char why[200];

		snprintf(why, sizeof(why),
			 "refused a connection to the proxy from %s:%u, which turninit did not make for a command",
			 addr, port);
		log_line("net: %s", why);
		proxy_record(&c, "refused", why);
	}
	return false;
}

/* A connection accepted on fd, its child forked (l: the command's listener
 * it is, or NULL for the shared one); *live counted. With peer checks, one
 * PID 1 did not make is closed at once (proxy_peer_ok). At most
 * PROXY_CONNS_MAX: past that a 503. */
static void proxy_accept(const struct mf_network *n, int lfd, int *ctl, int fd,
			 const struct proxy_listener *l, unsigned *live)
{
	char id[RQ_ID_MAX + 1];
	uint32_t stream = l ? l->stream : 0;
	int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	pid_t pid;

	/* copied: a drain of the control socket may close l and reuse its place */
	snprintf(id, sizeof(id), "%s", l ? l->id : "");
	if (cfd < 0)
		return;
	if (proxy_peers && !proxy_peer_ok(n, ctl, cfd)) {
		close(cfd);
		return;
	}
	if (*live >= PROXY_CONNS_MAX) {
		if (proxy_quota_take(NULL)) {
			struct proxy_conn c = { .client = cfd,
						.upstream = -1,
						.rule = -1,
						.start_ms = clock_ms() };
			char why[64];

			snprintf(c.id, sizeof(c.id), "%s", id);
			c.stream = stream;
			snprintf(why, sizeof(why), "%d connections are open, the most at once",
				 PROXY_CONNS_MAX);
			log_line("net: refused a connection: %s%s", why, proxy_who(&c));
			proxy_record(&c, "refused", why);
		}
		proxy_answer(cfd, 503, "Service Unavailable", "turninit: too many connections at once");
		close(cfd);
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(lfd);
		if (*ctl >= 0)
			close(*ctl);
		for (size_t i = 0; i < NET_CMD_PORTS_MAX; i++)
			if (listeners[i].fd >= 0)
				close(listeners[i].fd);
		proxy_conn_main(cfd, n, id, stream);
	}
	if (pid > 0)
		(*live)++;
	else
		log_errno(errno, "net: fork for a connection");
	close(cfd);
}

/* The proxy's loop: the shared listener, PID 1's control socket and the
 * commands' listeners polled; a child per connection. */
static void __attribute__((noreturn)) proxy_main(const struct mf_network *n, int lfd)
{
	struct pollfd p[2 + NET_CMD_PORTS_MAX];
	size_t at[2 + NET_CMD_PORTS_MAX]; /* p[k]'s place in listeners[] */
	unsigned live = 0, gen;
	int ctl = PROXY_CTL;

	for (size_t i = 0; i < NET_CMD_PORTS_MAX; i++)
		listeners[i].fd = -1;
	for (;;) {
		nfds_t np = 0;
		pid_t pid;

		while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
			live--;
		proxy_quota_tick();
		p[np++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		p[np++] = (struct pollfd){ .fd = ctl, .events = POLLIN }; /* -1: ignored */
		for (size_t i = 0; i < NET_CMD_PORTS_MAX; i++)
			if (listeners[i].fd >= 0) {
				at[np] = i;
				p[np++] = (struct pollfd){ .fd = listeners[i].fd, .events = POLLIN };
			}
		if (poll(p, np, 1000) <= 0)
			continue;
		gen = listeners_gen;
		if (p[0].revents)
			proxy_accept(n, lfd, &ctl, lfd, NULL, &live);
		/* a listener a drain (peer checks) kept or closed ends the
		 * round: the fds polled may be others' by now (listeners_gen) */
		for (nfds_t k = 2; k < np && listeners_gen == gen; k++)
			if (p[k].revents && listeners[at[k]].fd == p[k].fd)
				proxy_accept(n, lfd, &ctl, p[k].fd, &listeners[at[k]], &live);
		/* last: a listener it closes was polled above with its fd */
		if (p[1].revents && ctl >= 0)
			(void)proxy_control(n, &ctl);
	}
}

/* The proxy's own seccomp filter, loaded before its first connection (the
 * TLS and HTTP of its gateway run under it): what a process that only
 * relays bytes never needs fails with EPERM, those of another architecture
 * kill it (libseccomp's default). Returns 0 or -errno. */
static int proxy_filter(void)
{
	/* clang-format 14 would put each entry of this table on a line of its own: kept as written */
	/* clang-format off */
	static const char *const deny[] = {
		"execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev", "mount",
		"umount2", "setns", "unshare", "bpf", "io_uring_setup", "io_uring_enter",
		"io_uring_register", "open_by_handle_at", "kexec_load", "init_module", "finit_module",
		"delete_module", "keyctl", "add_key", "request_key", "perf_event_open", "userfaultfd",
		"personality", "chroot", "pivot_root", "memfd_create", "pidfd_getfd", "name_to_handle_at",
		"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
	};
	/* clang-format on */
	_cleanup_seccomp_release_ scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r = ctx ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < N_ELEMENTS(deny); i++) {
		int nr = seccomp_syscall_resolve_name(deny[i]);

		if (nr != __NR_SCMP_ERROR)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
	}
	if (r == 0)
		r = seccomp_load(ctx);
	return r;
}

/* listen_fd, records_fd and ctl_fd to 3, PROXY_RECORDS and PROXY_CTL (any
 * may be at one of those now: each is first copied above them), every
 * other fd past stderr closed. 0, or -errno. */
static int proxy_fds(int listen_fd, int records_fd, int ctl_fd)
{
	int src[3] = { listen_fd, records_fd, ctl_fd };

	for (int i = 0; i < 3; i++)
		if ((src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 6)) < 0)
			return -errno;
	for (int i = 0; i < 3; i++)
		if (dup2(src[i], 3 + i) != 3 + i)
			return -errno;
	return syscall(SYS_close_range, 6u, ~0u, 0u) != 0 ? -errno : 0;
}

/* See proxy.h. Long: the proxy's set-up after fork(2), in the order its
 * lock-down needs (namespace, fds, capabilities, not dumpable, filter),
 * reads best as one sequence. */
int proxy_start(const struct mf_network *n, struct creds *creds, int listen_fd, int outside_ns, bool peers,
		int records_fd, int ctl_fd, int log_fd, pid_t *ret_pid, struct tn_error *err)
{
	struct tn_error cerr = { 0 };
	pid_t pid;
	sigset_t alrm;

	proxy_creds = creds;
	proxy_peers = peers;
	pid = fork();

	if (pid < 0)
		return err_errno(err, errno, "network: fork of the proxy");
	if (pid > 0) {
		*ret_pid = pid;
		return 0;
	}
	/* the proxy: out of the commands' namespace, then nothing of PID 1's
	 * but stderr, no capability, ended with PID 1 */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	prctl(PR_SET_NAME, "turninit-proxy", 0, 0, 0);
	/* one-shot mode: its lines to PID 1, which writes them after the
	 * command's (reap_run_one), never inside a line of the command's stderr */
	if (log_fd >= 0 && log_fd != 2 && dup2(log_fd, 2) != 2)
		_exit(1);
	if (outside_ns < 0) {
		/* seccomp-notify mode: the commands are in the pod's namespace,
		 * and so is the proxy already */
	} else if (setns(outside_ns, CLONE_NEWNET) != 0) {
		log_line("network: the proxy cannot enter the container's network namespace (setns: %s): connections to allowed hosts are refused",
			 strerror(errno));
		_exit(1);
	}
	{
		int fr = proxy_fds(listen_fd, records_fd, ctl_fd);

		if (fr < 0) {
			log_errno(fr, "network: the proxy's fds");
			_exit(1);
		}
	}
	{
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null < 0 || dup2(null, 0) != 0 || dup2(null, 1) != 1) {
			log_errno(errno, "network: the proxy's stdin and stdout");
			_exit(1);
		}
		close(null);
	}
	if (caps_clear_all(&cerr) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		log_line("network: the proxy's capabilities: %s", cerr.msg[0] ? cerr.msg : strerror(errno));
		_exit(1);
	}
	/* not dumpable: no core, and /proc/PID/mem, environ and fd of the
	 * proxy (which holds the credentials' values) are root's alone */
	{
		int fr = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 ? -errno : proxy_filter();

		if (fr < 0) {
			log_line("network: the proxy's lock-down (not dumpable, its seccomp filter): %s: connections to allowed hosts are refused",
				 strerror(-fr));
			_exit(1);
		}
	}
	quota = mmap(NULL, sizeof(*quota), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (quota == MAP_FAILED) {
		log_line("network: the proxy's shared page: %s: refusals are logged without a bound",
			 strerror(errno));
		quota = NULL;
	} else {
		quota->window_ms = clock_ms();
	}
	/* SIGALRM bounds a name's resolution in a connection's child */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &alrm, NULL);
	/* the credentials' CA bundles, before any command can write one */
	if (gateway_preload(n, &cerr) < 0)
		log_line("network: the credential gateway: %s", cerr.msg);
	proxy_main(n, 3);
}
