/* mcp_bridge.c - see mcp_bridge.h and docs/mcp.md, "The sidecar". */
#define _GNU_SOURCE
#include "client/mcp_bridge.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client/call.h"
#include "policy/events.h"
#include "policy/lineframe.h"
#include "policy/manifest.h"
#include "policy/mcp.h"
#include "util/clock.h"
#include "util/exit_codes.h"
#include "util/io.h"
#include "util/log.h"

#define BRIDGE_INFO_ID "mcp-info"
/* milliseconds the calls running at the end may take to be answered: the
 * server's grace before SIGKILL (docs/protocol.md, cancel) and some */
#define BRIDGE_END_MS 7000

/* A call sent to the server and not yet answered there. */
struct running {
	struct running *next;
	char key[RQ_ID_MAX + 1];
	uint64_t start_ms, progress_ms;
	bool started; /* its started event came */
	bool ended;   /* the bridge cancelled it at its end */
};

/* Bytes read from fd, cut into lines by frame (policy/lineframe.h). */
struct lines {
	int fd;
	char *buf;
	size_t len;
	struct lf_frame frame;
	bool eof;
};

/* Write all of line and a newline to stdout; a client that stopped reading
 * blocks the bridge, which holds nothing else. A failed write: -1. */
static int out_line(char *line)
{
	size_t n;
	int r = 0;

	if (!line) {
		log_line("mcp: out of memory");
		return 0;
	}
	n = strlen(line);
	if (n == 0) {
		free(line);
		return 0;
	}
	line[n] = '\n'; /* the NUL's byte: the line is not used as a string again */
	if (io_write_all(1, line, n + 1) < 0)
		r = -1;
	free(line);
	return r;
}

/* Call fn for each whole line l holds, and fn(ctx, NULL, 0) once for each
 * line longer than EV_LINE_MAX (dropped); keep the rest. */
static void lines_take(struct lines *l, void (*fn)(void *ctx, const char *line, size_t len), void *ctx)
{
	size_t pos = 0, len;
	const char *line;
	enum lf_kind k;

	while ((k = lf_next(&l->frame, l->buf, l->len, &pos, &line, &len)) != LF_MORE)
		if (k == LF_LONG)
			fn(ctx, NULL, 0);
		else if (len)
			fn(ctx, line, len);
	memmove(l->buf, l->buf + pos, l->len - pos);
	l->len -= pos;
}

/* Read what fd has; call fn for each whole line, and fn(ctx, NULL, 0) once
 * for each line longer than EV_LINE_MAX (dropped). At end of file, l->eof. */
static void lines_read(struct lines *l, void (*fn)(void *ctx, const char *line, size_t len), void *ctx)
{
	ssize_t n = read(l->fd, l->buf + l->len, EV_CHUNK);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		l->eof = true;
		return;
	}
	l->len += (size_t)n;
	lines_take(l, fn, ctx);
}

struct bridge {
	int fd; /* the listen socket's connection */
	struct mcp_session *session;
	struct running *running;
	bool failed;                  /* stdout is gone */
	struct mf_manifest *manifest; /* the server's, from its info event */
};

static struct running **running_find(struct bridge *b, const char *key)
{
	for (struct running **r = &b->running; *r; r = &(*r)->next)
		if (strcmp((*r)->key, key) == 0)
			return r;
	return NULL;
}

static void running_end(struct bridge *b, const char *key)
{
	struct running **p = running_find(b, key), *r;

	if (!p)
		return;
	r = *p;
	*p = r->next;
	free(r);
}

/* A message from the MCP client. */
static void from_client(void *ctx, const char *line, size_t len)
{
	struct bridge *b = ctx;
	struct rq_request *rq = NULL;
	struct tn_error err = { 0 };
	char id[RQ_ID_MAX + 1], *reply = NULL;
	json_t *req = NULL;

	if (!line) { /* as `turninit mcp` answers it (serve_conn.c) */
		if (out_line(mcp_error(b->session, NULL, "request: line longer than 1048576 bytes")) < 0)
			b->failed = true;
		return;
	}
	if (mcp_parse(b->session, line, len, &rq, id, &reply, &err) < 0) {
		log_line("%s", err.msg);
		return;
	}
	if (!rq) {
		if (out_line(reply) < 0)
			b->failed = true;
		return;
	}
	if (rq->op == RQ_EXEC) {
		struct running *r = calloc(1, sizeof(*r));
		struct rq_exec_args a = { .words = rq->words, .n_words = 1, .timeout_s = rq->timeout_s };

		if (!r || rq_pack_exec(rq->id, &a, &req) < 0) {
			free(r);
			json_decref(req);
			out_line(mcp_error(b->session, rq->id, "out of memory"));
			rq_free(rq);
			return;
		}
		snprintf(r->key, sizeof(r->key), "%s", rq->id);
		r->start_ms = clock_ms();
		r->progress_ms = r->start_ms + MCP_PROGRESS_MS;
		r->next = b->running;
		b->running = r;
	} else {
		req = rq_pack_op(RQ_CANCEL, rq->id, NULL);
	}
	if (call_send(b->fd, req) == -E2BIG && rq->op == RQ_EXEC) {
		running_end(b, rq->id);
		out_line(mcp_error(b->session, rq->id, "the command is longer than a request line may be"));
	}
	rq_free(rq);
}

/* An event from the listen server. */
static void from_server(void *ctx, const char *line, size_t len)
{
	struct bridge *b = ctx;
	struct ev_event ev;
	struct tn_error err = { 0 };
	char *out = NULL;

	if (!line) {
		log_line("mcp: the server sent a line longer than %d bytes: dropped", EV_LINE_MAX);
		return;
	}
	if (ev_parse(line, len, &ev, &err) < 0) {
		log_line("mcp: the server sent a line that is not an event (%s)", err.msg);
		return;
	}
	/* The proxy's decisions: a refusal goes into the result of the call
	 * whose command it names (an id of this stream's), else of every call
	 * running, as `turninit mcp` puts it (mcp_net). */
	if (ev.kind == EV_NET) {
		struct net_record r = { .port = (uint16_t)ev.port, .rule = -1 };

		snprintf(r.id, sizeof(r.id), "%s", ev.id ? ev.id : "");
		snprintf(r.verdict, sizeof(r.verdict), "%s", ev.verdict);
		snprintf(r.host, sizeof(r.host), "%s", ev.host ? ev.host : "");
		snprintf(r.reason, sizeof(r.reason), "%s", ev.reason ? ev.reason : "");
		free(mcp_net(b->session, &r));
		ev_clear(&ev);
		return;
	}
	/* Only events of a call still running here: an error that answers a
	 * cancel of what has ended since has no call left to end. */
	if (!ev.id || !running_find(b, ev.id)) {
		if (ev.kind == EV_ERROR)
			log_line("mcp: the server: %s", ev.message);
		ev_clear(&ev);
		return;
	}
	switch (ev.kind) {
	case EV_STARTED: {
		struct running *r = *running_find(b, ev.id);

		r->started = true; /* progress counts from here, as in `turninit mcp` */
		r->start_ms = clock_ms();
		r->progress_ms = r->start_ms + MCP_PROGRESS_MS;
		break;
	}
	case EV_OUTPUT: out = mcp_output(b->session, ev.id, ev.err_stream, ev.data, ev.len); break;
	case EV_EXIT: {
		struct ev_end end = {
			.wait_status = ev.has_code ? (ev.code & 0xff) << 8 :
						     ev.signal, /* waitpid(2)'s form */
			.timed_out = ev.timed_out,
			.truncated = ev.truncated,
			.lost = ev.lost,
			.oom_killed = ev.oom_killed,
			.ended = (*running_find(b, ev.id))->ended,
		};

		out = mcp_exit(b->session, ev.id, &end);
		running_end(b, ev.id);
		break;
	}
	case EV_ERROR:
		/* a call that waited, cancelled at the bridge's end: said as
		 * `turninit mcp` says it */
		out = mcp_error(b->session, ev.id,
				(*running_find(b, ev.id))->ended ? "exec: the turn ended before it started" :
								   ev.message);
		running_end(b, ev.id);
		break;
	case EV_INFO:
	case EV_NET:
	case EV_TURN_END: /* id null: never here */ out = NULL; break;
	}
	ev_clear(&ev);
	if (out && out_line(out) < 0)
		b->failed = true;
}

/* The server's manifest: an info request, answered before anything else is
 * sent. 0, or -1 after one line on stderr. */
static int bridge_info(struct bridge *b, struct lines *sock)
{
	struct ev_event ev = { 0 };
	struct tn_error err = { 0 };
	size_t pos = 0, len;
	const char *line;
	enum lf_kind k;
	int r = -1;

	/* A refused peer may find the connection closed before its request is
	 * sent: read on, the server's error event says why. */
	call_send(b->fd, rq_pack_op(RQ_INFO, BRIDGE_INFO_ID, NULL));
	while ((k = lf_next(&sock->frame, sock->buf, sock->len, &pos, &line, &len)) != LF_LINE) {
		ssize_t n;

		if (k == LF_LONG) {
			log_line("mcp: the server's answer to info is too long");
			return -1;
		}
		n = read(b->fd, sock->buf + sock->len, EV_LINE_MAX + EV_CHUNK - sock->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_line("mcp: the server closed the connection before it answered info "
				 "(a turninit listen older than this one, or a refused caller: see its log)");
			return -1;
		}
		sock->len += (size_t)n;
	}
	if (ev_parse(line, len, &ev, &err) < 0) {
		log_line("mcp: the server's answer to info: %s", err.msg);
	} else if (ev.kind == EV_ERROR) {
		log_line("mcp: the server refused info: %s", ev.message);
	} else if (ev.kind != EV_INFO) {
		log_line("mcp: the server answered info with another event");
	} else if (mf_parse((const uint8_t *)ev.manifest, strlen(ev.manifest), time(NULL), NULL, &b->manifest,
			    &err) < 0) {
		log_line("mcp: the server's manifest: %s", err.msg);
	} else {
		r = 0;
	}
	ev_clear(&ev);
	sock->len -= pos;
	memmove(sock->buf, sock->buf + pos, sock->len);
	return r;
}

/* SIGINT, SIGTERM and SIGHUP blocked and read from the signalfd returned;
 * SIGPIPE ignored (a client gone is an EPIPE). */
static int bridge_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* The session with the server: SO_PEERCRED known to name the peer here,
 * connected to o->socket_path, the server's uid checked, its manifest asked
 * for (info), the MCP session made from it, and what came past the answer
 * read. 0, or -1 with the reason logged (b->fd may be open: the caller
 * closes it). */
static int bridge_open(const struct cli_options *o, struct bridge *b, struct lines *sock)
{
	if (call_check_peercred("mcp") < 0)
		return -1;
	b->fd = sock->fd = call_connect(o->socket_path);
	if (b->fd < 0) {
		log_errno(errno, "mcp: %s", o->socket_path);
		return -1;
	}
	if (call_check_server(b->fd, o, "mcp") < 0 || bridge_info(b, sock) < 0)
		return -1;
	if (!(b->session = mcp_session_new(b->manifest, TURNINIT_VERSION, NULL))) {
		log_line("mcp: out of memory");
		return -1;
	}
	/* What bridge_info read past its answer. */
	lines_take(sock, from_server, b);
	return 0;
}

/* The progress of each call that runs on the server, due at time t; the next
 * time one falls due, or next when that is sooner (0: none). A write to a
 * client that is gone sets b->failed. */
static uint64_t bridge_progress(struct bridge *b, uint64_t t, uint64_t next)
{
	for (struct running *r = b->running; r; r = r->next) {
		if (!r->started || r->ended)
			continue; /* waiting on the server, or ending: no progress, as in `turninit mcp` */
		if (t >= r->progress_ms) {
			r->progress_ms = t + MCP_PROGRESS_MS;
			if (out_line(mcp_progress(b->session, r->key, t - r->start_ms)) < 0)
				b->failed = true;
		}
		if (!next || r->progress_ms < next)
			next = r->progress_ms;
	}
	return next;
}

/* The server closed the connection: every call still open is answered. */
static void server_gone(struct bridge *b)
{
	log_line("mcp: the server closed the connection");
	while (b->running) {
		out_line(b->running->started ?
				 mcp_abort(b->session, b->running->key,
					   "the listen server closed "
					   "the connection while the command ran: how it ended is "
					   "not known") :
				 mcp_error(b->session, b->running->key,
					   "the listen server closed "
					   "the connection before it started"));
		running_end(b, b->running->key);
	}
}

/* The end of the session, as `turninit mcp` ends: each call still running is
 * cancelled (SIGTERM, the grace, SIGKILL) and will be answered; the time by
 * which the answers must have come. */
static uint64_t bridge_end(struct bridge *b)
{
	for (struct running *r = b->running; r; r = r->next) {
		r->ended = true;
		call_send(b->fd, rq_pack_op(RQ_CANCEL, r->key, NULL));
	}
	return clock_ms() + BRIDGE_END_MS;
}

int mcp_bridge_main(const struct cli_options *o)
{
	static char in_buf[EV_LINE_MAX + 1 + EV_CHUNK], sock_buf[EV_LINE_MAX + 1 + EV_CHUNK];
	struct lines in = { .fd = 0, .buf = in_buf, .frame = { .max = EV_LINE_MAX } },
		     sock = { .buf = sock_buf, .frame = { .max = EV_LINE_MAX } };
	struct bridge b = { .fd = -1 };
	int sfd, ret = EXIT_REFUSED;
	bool ending = false;    /* stdin ended or a signal came: answer what runs, then go */
	bool signalled = false; /* a signal came: a second one ends the bridge at once */
	uint64_t end_ms = 0;

	sfd = bridge_signals();
	if (bridge_open(o, &b, &sock) < 0)
		goto out;
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = b.fd, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
			{ .fd = 0, .events = POLLIN },
		};
		struct signalfd_siginfo si;
		uint64_t t = clock_ms(), next = ending ? end_ms : 0;

		next = bridge_progress(&b, t, next);
		if (b.failed) {
			log_line("mcp: stdout is closed: the client is gone");
			ret = 0;
			break;
		}
		if (ending && (!b.running || t >= end_ms)) {
			if (b.running)
				log_line("mcp: calls still unanswered %d ms after the end", BRIDGE_END_MS);
			while (b.running) {
				out_line(mcp_abort(b.session, b.running->key,
						   "the listen server did not "
						   "answer within 7 s of the end of the session: how the "
						   "command ended is not known"));
				running_end(&b, b.running->key);
			}
			break;
		}
		if (poll(p, ending ? 2 : 3, next ? (int)(next > t ? next - t : 0) : -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (signalled)
				break; /* a second signal: go now */
			signalled = true;
			if (!ending) /* after the end of stdin, the status stays 0 */
				ret = 128 + (int)si.ssi_signo;
			ending = true;
		}
		if (p[0].revents) {
			lines_read(&sock, from_server, &b);
			if (sock.eof) {
				server_gone(&b);
				if (!ending)
					ret = EXIT_REFUSED;
				break;
			}
		}
		if (!ending && p[2].revents) {
			lines_read(&in, from_client, &b);
			if (in.eof) {
				ret = 0;
				ending = true;
			}
		}
		if (ending && !end_ms)
			end_ms = bridge_end(&b);
	}
out:
	while (b.running)
		running_end(&b, b.running->key);
	mcp_session_free(b.session);
	mf_free(b.manifest);
	close(b.fd);
	return ret;
}
