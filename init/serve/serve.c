/* serve.c - see serve.h and docs/protocol.md.
 *
 * One poll(2) loop owns everything: turninit's signalfd, the listening socket,
 * each connection's input and output, and per command its stdout and stderr
 * pipes, its stdin pipe and its keeper's message pipe. It knows no wire
 * format: a connection's codec (init/serve/codec.h) parses its requests and writes
 * its events. The rest lives in serve_conn.c, serve_cmd.c and serve_listen.c
 * (serve_int.h).
 */
#define _GNU_SOURCE
#include "serve/serve_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "policy/events.h"
#include "policy/request.h"
#include "process/keeper.h"
#include "serve/audit.h"
#include "util/clock.h"
#include "util/exit_codes.h"
#include "util/log.h"

/* A credential request (docs/protocol.md, "credential"): taken only before
 * the turn's first exec, logged (the name), handed to the proxy
 * (net_cred_give), answered by a credential event; any refusal an error
 * event and a rejected line. Either way the request's copy of the value is
 * wiped here, at once; the line's is wiped by conn_lines. */
static void serve_credential(struct serve *s, struct conn *c, struct rq_request *rq)
{
	struct tn_error err = { 0 };
	char *line;
	int r;

	if (s->exec_seen)
		r = err_set(&err, EPERM,
			    "credential: refused after the turn's first exec (a credential is given before any exec)");
	else if ((r = net_cred_check(s->ctx->net, &s->ctx->manifest->network, rq->cred_name, &err)) < 0)
		;
	else if (audit_credential(c->stream, rq->id, rq->cred_name) < 0)
		r = err_set(&err, EIO, "credential: the audit log cannot be written");
	else
		r = net_cred_give(s->ctx->net, &s->ctx->manifest->network, rq->cred_name, rq->cred_value,
				  rq->cred_len, &err);
	rq_wipe_value(rq);
	if (r < 0) {
		audit_rejected(c->stream, rq->id, NULL, err.msg);
		conn_error(c, rq->id, "%s", err.msg);
		return;
	}
	log_line("serve: credential %s given by request (stream %u)", rq->cred_name, c->stream);
	if ((line = ev_credential(rq->id, rq->cred_name)))
		conn_emit(c, line);
	else
		conn_error(c, rq->id, "credential: out of memory");
}

/* Handle one parsed request line of c: rq, or the codec's own reply (rq
 * NULL), or a line that did not parse (failed: err, and the id it had).
 * Takes rq and reply. */
static void serve_handle(struct serve *s, struct conn *c, struct rq_request *rq, char *reply, bool failed,
			 const char *id, const struct tn_error *err, size_t len)
{
	struct waiting **w;
	struct cmd *m;

	if (failed) {
		audit_rejected(c->stream, id, NULL, err->msg);
		conn_error(c, queue_answer_id(s, c, id), "%s", err->msg);
		return;
	}
	if (!rq) { /* the codec answered it itself (MCP's lifecycle, a bad message) */
		conn_emit(c, reply);
		return;
	}
	if (rq->op == RQ_EXEC) {
		s->exec_seen = true;
		cmd_take_exec(s, c, &rq, len);
	} else if (rq->op == RQ_CREDENTIAL) {
		serve_credential(s, c, rq);
	} else if (rq->op == RQ_INFO) {
		char *line = NULL;

		/* the manifest's text is made at the first info of the turn and
		 * kept: a burst of info requests costs little more than as many
		 * bad lines */
		if (!s->info_manifest)
			s->info_manifest = mf_to_json(s->ctx->manifest);
		if (s->info_manifest)
			line = ev_info(rq->id, s->info_manifest);
		if (line)
			conn_emit(c, line);
		else
			conn_error(c, rq->id, "info: out of memory");
	} else if ((w = queue_find(s, c, rq->id))) {
		/* Not started: a cancel takes it out and answers the exec with an
		 * error event; a signal has nothing to reach. */
		if (rq->op == RQ_CANCEL) {
			struct waiting *e = queue_take(s, w);

			conn_error(c, rq->id, "exec: cancelled before it started");
			queue_free(e);
		} else {
			conn_error(c, NULL, "signal: %s has not started: it waits for a slot", rq->id);
		}
	} else {
		const char *op = rq->op == RQ_CANCEL ? "cancel" : "signal";

		m = find_cmd(s, c, rq->id);
		if (!m || m->exited) {
			if (!rq->quiet) /* an MCP cancel of what has ended is not answered */
				conn_error(c, rq->id, "%s: no running command %s", op, rq->id);
		} else if (rq->op == RQ_SIGNAL)
			keeper_forward(m->k, rq->signo);
		else
			cmd_cancel(m);
		if (m && !m->exited) /* exited is set only by the keeper's message */
			audit_control(c->stream, rq->id, rq->op == RQ_SIGNAL ? rq->signo : 0);
	}
	rq_free(rq);
}

/* Whether exec id of c is starting: its answer is not written yet. */
static bool starting(struct serve *s, const struct conn *c, const char *id)
{
	const struct cmd *m = find_cmd(s, c, id);

	return m && m->starting;
}

/* A request line of c. An exec is handled at once, also while earlier execs
 * of c wait for their answers (its own comes after theirs: answers_flush);
 * anything else waits until they are written (struct held), since its
 * answer, or what it does, must follow theirs; so does an exec with the id
 * of one that is starting, which may yet fail and free its id. */
static void serve_request(struct serve *s, struct conn *c, const char *line, size_t len)
{
	struct rq_request *rq = NULL;
	struct tn_error err = { 0 };
	char id[RQ_ID_MAX + 1] = "";
	char *reply = NULL;
	bool failed = c->codec->parse(c->codec_st, line, len, &rq, id, &reply, &err) < 0;

	if (c->n_answers && (failed || !rq || rq->op != RQ_EXEC || starting(s, c, rq->id))) {
		c->held = (struct held){ .used = true,
					 .rq = rq,
					 .reply = reply,
					 .failed = failed,
					 .err = err,
					 .len = len };
		snprintf(c->held.id, sizeof(c->held.id), "%s", id);
		return;
	}
	serve_handle(s, c, rq, reply, failed, id, &err, len);
}

/* The request of c that waited for the answers before it, once they are
 * written. */
static void serve_held(struct serve *s, struct conn *c)
{
	struct held h = c->held;

	if (!h.used || c->n_answers)
		return;
	c->held = (struct held){ 0 };
	serve_handle(s, c, h.rq, h.reply, h.failed, h.id, &h.err, h.len);
}

void conn_close(struct serve *s, struct conn *c)
{
	bool has = false;

	if (conn_waits(c))
		return; /* closed once its answers are written */
	queue_drop(s, c, "the connection ended before it started");
	for (size_t i = 0; i < s->n_cmds; i++)
		if (s->cmds[i].used && s->cmds[i].conn == c) {
			cmd_cancel(&s->cmds[i]);
			has = true;
		}
	if (has)
		return; /* closed once its commands have ended */
	if (c->out_len && !c->dead)
		return; /* closed once the peer has read its last events (the loop
			 * writes them as it takes them): one peer never holds the loop */
	conn_drain(c, 0);
	if (c->in_fd > 2)
		close(c->in_fd);
	free(c->buf);
	if (c->codec->close)
		c->codec->close(c->codec_st);
	memset(c, 0, sizeof(*c));
}

/* The turn ends: nothing more starts, every command is cancelled; the loop
 * exits with code once they are all gone. A second call keeps the first code. */
static void serve_end_turn(struct serve *s, int code)
{
	if (!s->ending) {
		s->ending = true;
		s->exit_code = code;
	}
	queue_drop(s, NULL, "the turn ended before it started");
	for (size_t i = 0; i < s->n_cmds; i++)
		if (s->cmds[i].used) {
			if (!s->cmds[i].exited && !s->cmds[i].cancelled)
				s->cmds[i].turn_ended = true;
			cmd_cancel(&s->cmds[i]);
		}
}

static void handle_signals(struct serve *s)
{
	struct signalfd_siginfo si;

	while (read(s->ctx->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGCHLD)
			continue;
		if (sig == SIGTERM || (sig == SIGINT && s->ctx->mcp)) {
			/* an MCP client ends its server with SIGINT or SIGTERM */
			serve_end_turn(s, 128 + sig);
			continue;
		}
		for (size_t i = 0; i < s->n_cmds; i++)
			if (s->cmds[i].used && !s->cmds[i].exited)
				keeper_forward(s->cmds[i].k, sig);
	}
	/* Keepers, the proxy, and anything reparented to turninit as PID 1. */
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p <= 0)
			break;
		/* its socket went with it: connections are refused from now on */
		if (p == s->ctx->proxy_pid)
			log_line("network: the proxy ended (%s %d): connections to the allowed hosts are refused from now on; the turn goes on",
				 WIFSIGNALED(st) ? "signal" : "status",
				 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	}
}

/* What a pollfd of the loop stands for: its kind and its object. */
enum slot_kind {
	SLOT_SIGNALS,     /* turninit's signalfd */
	SLOT_ACCEPT,      /* the listening socket */
	SLOT_CONN_IN,     /* a connection's requests (obj: struct conn) */
	SLOT_CONN_OUT,    /* a connection's queued events (obj: struct conn) */
	SLOT_CMD_STDOUT,  /* a command's stdout pipe (obj: struct cmd) */
	SLOT_CMD_STDERR,  /* its stderr pipe */
	SLOT_CMD_STDIN,   /* its stdin pipe, while there is stdin to give */
	SLOT_CMD_REPORT,  /* its exec report, while it starts (spawn.h) */
	SLOT_CMD_KEEPER,  /* its keeper's messages */
	SLOT_KEEPER_IDLE, /* an idle keeper's pipe: it says nothing unless it ended
			     (obj: struct keeper) */
	SLOT_NET,         /* the proxy's records (policy/netrec.h) */
};

struct slot {
	enum slot_kind kind;
	void *obj;
};

/* Add a pollfd and what it stands for. */
static void slot_add(struct pollfd *pf, struct slot *slots, size_t *n, int fd, short events,
		     enum slot_kind kind, void *obj)
{
	pf[*n] = (struct pollfd){ .fd = fd, .events = events };
	slots[(*n)++] = (struct slot){ .kind = kind, .obj = obj };
}

/* An idle keeper that ended (killed from outside, or by the OOM killer):
 * its slot starts another with its next command. Anything else it said is
 * not a keeper's word: it is stopped too. */
static void keeper_idle_message(struct keeper *k)
{
	struct keeper_msg msg;
	int r = keeper_read(k, &msg);

	log_line("serve: an idle keeper (pid %d) %s: replaced at its slot's next command", (int)k->pid,
		 r == 0 ? "ended" : "spoke out of turn");
	keeper_stop(k, r == 0 ? 0 : clock_ms() + SERVE_LOST_MS);
}

/* The proxy's decisions: each to the audit log and, as its codec says it, to
 * every connection. A record cut short or a read error ends the pipe (the
 * proxy's records are then lost, said once; its connections go on). */
static void net_records(struct serve *s)
{
	int *fd = &s->net_fd;

	for (;;) {
		struct net_record r;
		ssize_t n = read(*fd, &r, sizeof(r));

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n != (ssize_t)sizeof(r)) {
			if (n != 0)
				log_line("network: the proxy's records: %s; no more are kept",
					 n < 0 ? strerror(errno) : "a record cut short");
			serve_close_fd(fd);
			return;
		}
		/* strings of a fixed size, ended here whatever the proxy wrote */
		r.verdict[sizeof(r.verdict) - 1] = r.request[sizeof(r.request) - 1] = '\0';
		r.host[sizeof(r.host) - 1] = r.addr[sizeof(r.addr) - 1] = '\0';
		r.reason[sizeof(r.reason) - 1] = r.id[sizeof(r.id) - 1] = '\0';
		audit_net(&r);
		for (size_t i = 0; i < SERVE_MAX_CONNS; i++) {
			struct conn *c = &s->conns[i];
			struct net_record other;

			if (!c->used || c->dead || !c->codec->net)
				continue;
			/* an id names a command of its own stream: to the others
			 * (listen mode) the record names no command */
			if (r.id[0] && r.stream != c->stream) {
				other = r;
				other.id[0] = '\0';
				conn_emit(c, c->codec->net(c->codec_st, &other));
			} else {
				conn_emit(c, c->codec->net(c->codec_st, &r));
			}
		}
	}
}

static void slot_run(struct serve *s, const struct slot *sl)
{
	struct cmd *m = sl->obj;

	switch (sl->kind) {
	case SLOT_SIGNALS: handle_signals(s); break;
	case SLOT_ACCEPT: conn_accept(s); break;
	case SLOT_CONN_IN: conn_read(s, sl->obj); break;
	case SLOT_CONN_OUT: conn_flush(sl->obj); break;
	case SLOT_CMD_STDOUT:
		if (m->out_fd >= 0)
			cmd_output(m, &m->out_fd, "stdout");
		break;
	case SLOT_CMD_STDERR:
		if (m->err_fd >= 0)
			cmd_output(m, &m->err_fd, "stderr");
		break;
	case SLOT_CMD_STDIN:
		if (m->in_fd >= 0)
			cmd_stdin(m);
		break;
	case SLOT_CMD_REPORT:
		if (m->report_fd >= 0)
			cmd_report(m);
		break;
	case SLOT_CMD_KEEPER:
		if (!m->exited)
			cmd_message(s, m);
		break;
	case SLOT_KEEPER_IDLE: keeper_idle_message(sl->obj); break;
	case SLOT_NET: net_records(s); break;
	}
	/* A handler that found the turn must end (a lost command whose
	 * processes would not all end) asked for it: ended here, before any
	 * other slot is served, so nothing starts in between. */
	if (s->end_asked) {
		s->end_asked = false;
		serve_end_turn(s, s->end_code);
	}
}

/* The loop's state at its start: the slots of commands and keepers, and in
 * serve and mcp mode the one connection on stdin/stdout. 0, or EXIT_REFUSED
 * out of memory (logged). */
static int serve_open(struct serve *s)
{
	const struct serve_ctx *ctx = s->ctx;

	s->cmds = calloc(s->n_cmds, sizeof(*s->cmds));
	s->keepers = calloc(s->n_cmds, sizeof(*s->keepers));
	if (!s->cmds || !s->keepers) {
		log_line("serve: out of memory");
		return EXIT_REFUSED;
	}
	s->queue_tail = &s->queue;
	for (size_t i = 0; i < s->n_cmds; i++) { /* calloc'd: no fd is open yet */
		s->cmds[i].out_fd = s->cmds[i].err_fd = s->cmds[i].in_fd = s->cmds[i].report_fd = -1;
		s->keepers[i] = (struct keeper){ .pid = 0, .msg_fd = -1, .job_fd = -1 };
	}
	signal(SIGPIPE, SIG_IGN); /* a client that went away is an EPIPE, not a death */
	s->null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* -1: one per command */
	if (ctx->listen_fd >= 0)
		s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (ctx->listen_fd < 0) {
		const struct codec *codec = ctx->mcp ? &codec_mcp : &codec_jsonl;

		s->conns[0] = (struct conn){ .used = true,
					     .codec = codec,
					     .in_fd = 0,
					     .out_fd = 1,
					     .frame = { .max = EV_LINE_MAX } };
		if (codec->open &&
		    !(s->conns[0].codec_st = codec->open(ctx->manifest, TURNINIT_VERSION, ctx->caller_env))) {
			log_line("serve: out of memory");
			return EXIT_REFUSED;
		}
		/* a client that is slow to read must not hold timeouts or SIGTERM */
		fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);
	}
	return 0;
}

/* Phase 1 of a round, at time t: commands time out, get their progress, and
 * finish once their output is read. */
static void phase_commands(struct serve *s, uint64_t t)
{
	const struct serve_ctx *ctx = s->ctx;

	for (size_t i = 0; i < s->n_cmds; i++) {
		struct cmd *m = &s->cmds[i];

		if (!m->used)
			continue;
		if (m->starting && m->start_pid <= 0 && t >= m->start_deadline_ms) {
			cmd_start_overdue(m);
			continue;
		}
		if (cmd_times_out(m) && t >= m->deadline_ms) {
			m->timed_out = true;
			cmd_cancel(m);
		}
		if (!m->exited && !m->starting && m->conn->codec->progress && t >= m->progress_ms) {
			m->progress_ms = t + m->conn->codec->progress_ms;
			conn_emit(m->conn,
				  m->conn->codec->progress(m->conn->codec_st, m->id, t - m->start_ms));
		}
		if (m->exited && m->out_fd < 0 && m->err_fd < 0) {
			struct conn *c = m->conn;

			cmd_finish(m);
			/* listen: a connection whose input ended goes once its
			 * commands have. serve: its one connection is the turn,
			 * which the loop below ends; closed here (the end of stdin
			 * read in the same round as this exit), nothing would. */
			if ((c->eof || c->dead) && ctx->listen_fd >= 0)
				conn_close(s, c);
		}
	}
}

/* Phase 2: connections whose input ended (the turn's, in serve mode, ends the
 * turn), request lines that waited while an exec started, in order, and the
 * queue started in the slots phase 1 freed. */
static void phase_connections(struct serve *s)
{
	for (size_t i = 0; i < SERVE_MAX_CONNS; i++) {
		struct conn *c = &s->conns[i];

		if (c->used && c->dead)
			conn_drop_requests(c); /* no answer of them could reach it */
		if (!c->used || !(c->eof || c->dead) || conn_pending(c) || conn_waits(c))
			continue;
		if (s->ctx->listen_fd < 0)
			serve_end_turn(s, 0); /* end of stdin: the turn ends */
		else
			conn_close(s, c);
	}
	for (size_t i = 0; i < SERVE_MAX_CONNS; i++) {
		struct conn *c = &s->conns[i];

		if (c->used)
			serve_held(s, c);
		if (c->used && !c->dead && conn_may_handle(c) && conn_pending(c))
			conn_lines(s, c);
	}
	queue_start(s);
}

/* Phase 3: the poll timeout in milliseconds (-1: none) until the next
 * deadline after t, once the queue has started what it could: an exec
 * started just now has a deadline too, and a bound on its keeper's answer;
 * next is the listen log's own (0: none). */
static int phase_wait_ms(const struct serve *s, uint64_t t, uint64_t next)
{
	for (size_t i = 0; i < s->n_cmds; i++) {
		const struct cmd *m = &s->cmds[i];

		if (m->used && m->starting && m->start_pid <= 0 && (!next || m->start_deadline_ms < next))
			next = m->start_deadline_ms;

		if (m->used && cmd_times_out(m) && (!next || m->deadline_ms < next))
			next = m->deadline_ms;
		if (m->used && !m->exited && m->conn->codec->progress && (!next || m->progress_ms < next))
			next = m->progress_ms;
	}
	if (!next)
		return -1;
	return next > t ? (int)(next - t) : 0;
}

/* Phase 4: the fds to poll, each with its slot; their number. */
static size_t phase_poll_set(struct serve *s, struct pollfd *pf, struct slot *slots)
{
	const struct serve_ctx *ctx = s->ctx;
	size_t n = 0;

	slot_add(pf, slots, &n, ctx->sfd, POLLIN, SLOT_SIGNALS, NULL);
	if (s->net_fd >= 0)
		slot_add(pf, slots, &n, s->net_fd, POLLIN, SLOT_NET, NULL);
	if (ctx->listen_fd >= 0 && !s->ending)
		slot_add(pf, slots, &n, ctx->listen_fd, POLLIN, SLOT_ACCEPT, NULL);
	for (size_t i = 0; i < SERVE_MAX_CONNS; i++) {
		struct conn *c = &s->conns[i];

		/* no request is read while one waits for the answers before
		 * it, nor while lines wait in the buffer (conn_lines) */
		if (c->used && !c->eof && !c->dead && !s->ending && conn_may_handle(c) && !conn_pending(c))
			slot_add(pf, slots, &n, c->in_fd, POLLIN, SLOT_CONN_IN, c);
		if (c->used && c->out_len && !c->dead)
			slot_add(pf, slots, &n, c->out_fd, POLLOUT, SLOT_CONN_OUT, c);
	}
	for (size_t i = 0; i < s->n_cmds; i++) {
		struct cmd *m = &s->cmds[i];
		/* backpressure: output waits while its client is behind */
		bool behind = m->used && m->conn->out_len > SERVE_OUT_HIGH && !m->conn->dead;

		if (!m->used)
			continue;
		/* its output, its stdin and any other word of its keeper follow
		 * its started event: while it starts, its report, and its
		 * keeper, which says why when it did not start; nothing while
		 * its started answer waits for an earlier one */
		if (m->starting) {
			/* end of file only (POLLHUP, always polled): the
			 * child's write of its pid wakes no one */
			if (m->report_fd >= 0)
				slot_add(pf, slots, &n, m->report_fd, 0, SLOT_CMD_REPORT, m);
			if (m->start_pid <= 0)
				slot_add(pf, slots, &n, m->k->msg_fd, POLLIN, SLOT_CMD_KEEPER, m);
			continue;
		}
		if (m->out_fd >= 0 && !behind)
			slot_add(pf, slots, &n, m->out_fd, POLLIN, SLOT_CMD_STDOUT, m);
		if (m->err_fd >= 0 && !behind)
			slot_add(pf, slots, &n, m->err_fd, POLLIN, SLOT_CMD_STDERR, m);
		if (m->in_fd >= 0)
			slot_add(pf, slots, &n, m->in_fd, POLLOUT, SLOT_CMD_STDIN, m);
		if (!m->exited)
			slot_add(pf, slots, &n, m->k->msg_fd, POLLIN, SLOT_CMD_KEEPER, m);
	}
	/* a slot's keeper is idle when the slot's command has ended or there is
	 * none */
	for (size_t i = 0; i < s->n_cmds; i++)
		if (s->keepers[i].pid > 0 && (!s->cmds[i].used || s->cmds[i].exited))
			slot_add(pf, slots, &n, s->keepers[i].msg_fd, POLLIN, SLOT_KEEPER_IDLE,
				 &s->keepers[i]);
	return n;
}

/* The turn's end, once every command is gone: the change record and the
 * log's turn_end written (ctx->at_end), then its final head sent to every
 * connection still open, after all their other events, so that a client
 * holds the head that anchors the whole log without reading stderr (issue
 * 46). In serve mode, stdout is still open here: the event goes before it
 * closes. */
static void serve_turn_end(struct serve *s)
{
	char head[65];

	if (!s->ctx->at_end || !s->ctx->at_end(s->exit_code, head))
		return;
	for (size_t i = 0; i < SERVE_MAX_CONNS; i++) {
		struct conn *c = &s->conns[i];

		if (c->used && !c->dead && c->codec->turn_end)
			conn_emit(c, c->codec->turn_end(c->codec_st, s->exit_code, head));
	}
}

/* After the loop: the keepers stopped (idle now: their sockets closed, they
 * exit), the connections drained, everything freed. */
static void serve_close(struct serve *s)
{
	uint64_t deadline = clock_ms() + SERVE_LOST_MS;

	listen_log_tick(s, UINT64_MAX); /* the last window's count, said now */
	if (s->net_fd >= 0)
		net_records(s); /* the proxy's decisions so far, kept */
	for (size_t i = 0; i < s->n_cmds; i++)
		if (s->keepers[i].job_fd >= 0)
			shutdown(s->keepers[i].job_fd, SHUT_RDWR);
	for (size_t i = 0; i < s->n_cmds; i++)
		keeper_stop(&s->keepers[i], deadline);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	serve_turn_end(s);
	deadline = clock_ms() + SERVE_DRAIN_MS;
	/* serve's one connection is never closed in the loop: the turn ends on
	 * it. Its input buffer goes here, with any other's. */
	for (size_t i = 0; i < SERVE_MAX_CONNS; i++)
		if (s->conns[i].used) {
			conn_drain(&s->conns[i], deadline);
			free(s->conns[i].buf);
			if (s->conns[i].codec->close)
				s->conns[i].codec->close(s->conns[i].codec_st);
		}
	serve_close_fd(&s->spare_fd);
	serve_close_fd(&s->null_fd);
	for (size_t i = 0; i < SERVE_MAX_CONNS; i++) /* what the end left unwritten */
		conn_answers_free(&s->conns[i]);
}

int serve_run(const struct serve_ctx *ctx)
{
	struct serve s = { .ctx = ctx,
			   .n_cmds = ctx->manifest->limits.concurrency,
			   .spare_fd = -1,
			   .null_fd = -1,
			   .on_request = serve_request,
			   .net_fd = ctx->records_fd };
	size_t max_fds = 3 + 2 * SERVE_MAX_CONNS + 5 * s.n_cmds;
	_cleanup_free_ struct pollfd *pf = calloc(max_fds, sizeof(*pf));
	_cleanup_free_ struct slot *slots = calloc(max_fds, sizeof(*slots));

	if (!pf || !slots) {
		log_line("serve: out of memory");
		return EXIT_REFUSED;
	}
	if (serve_open(&s) != 0)
		return EXIT_REFUSED;
	for (;;) {
		uint64_t t = clock_ms();
		uint64_t next = listen_log_tick(&s, t);
		int wait_ms;
		size_t n;

		phase_commands(&s, t);
		phase_connections(&s);
		if (s.ending && cmd_running(&s) == 0)
			break;
		wait_ms = phase_wait_ms(&s, t, next);
		n = phase_poll_set(&s, pf, slots);
		if (poll(pf, n, wait_ms) < 0 && errno != EINTR) {
			log_errno(errno, "serve: poll");
			continue;
		}
		for (size_t i = 0; i < n; i++)
			if (pf[i].revents)
				slot_run(&s, &slots[i]);
	}
	serve_close(&s);
	free(s.cmds);
	free(s.keepers);
	free(s.info_manifest);
	return s.exit_code;
}
