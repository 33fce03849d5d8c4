/* serve.c - see serve.h and docs/protocol.md.
 *
 * One poll(2) loop owns everything: turninit's signalfd, the listening socket,
 * each connection's input, and per command its stdout and stderr pipes, its
 * stdin pipe and its keeper's message pipe. Events are written whole, one
 * line each, into a per-connection buffer flushed without blocking: a
 * connection that stops reading stops only its own commands' output (their
 * pipes are not read while its buffer is over SERVE_OUT_HIGH), never another
 * connection, a timeout or SIGTERM.
 */
#define _GNU_SOURCE
#include "serve.h"

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
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "envfilter.h"
#include "events.h"
#include "exit_codes.h"
#include "keeper.h"
#include "log.h"
#include "reap.h"
#include "request.h"
#include "spawn.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77          /* Linux 6.5; older kernels: ENOPROTOOPT */
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

#define SERVE_OUT_HIGH (1u << 20)    /* bytes queued before a connection's commands wait */
#define SERVE_OUT_MAX (16u << 20)    /* bytes queued before a connection is dropped */
#define SERVE_DRAIN_MS 5000          /* milliseconds the last events may take at the end */

struct conn {
	bool used;
	int in_fd, out_fd;        /* the same socket in listen mode */
	char *out;                /* events not yet written */
	size_t out_len, out_cap;
	char *buf;                /* unparsed input, at most EV_LINE_MAX + 1 bytes */
	size_t len;
	bool discarding;          /* inside a line that was too long */
	bool eof;                 /* no more requests */
	bool dead;                /* writing failed: events are dropped */
	unsigned stream;          /* the audit log's name for it: 0 serve, 1.. listen */
};

struct cmd {
	bool used;
	struct conn *conn;
	char id[RQ_ID_MAX + 1];
	struct keeper k;
	int out_fd, err_fd, in_fd;   /* -1 once closed */
	uint8_t *in_buf;
	size_t in_len, in_off;
	uint64_t start_ms, deadline_ms, end_ms;
	uint64_t delivered, limit;
	bool truncated, timed_out, cancelled, exited;
	int wait_status;
	int pid;                     /* the command's, for the audit log */
	uint64_t wall_start_ms;      /* CLOCK_REALTIME at start, for the audit log */
	uint64_t out_bytes, err_bytes;   /* read from its stdout and stderr */
};

/* An exec request waiting for a slot (limits.concurrency), first in, first
 * out across every connection; it owns rq. */
struct waiting {
	struct waiting *next;
	struct conn *conn;
	struct rq_request *rq;
	size_t bytes;               /* its request line, counted against SERVE_QUEUE_BYTES */
};

struct serve {
	const struct serve_ctx *ctx;
	struct waiting *queue, **queue_tail;
	size_t n_waiting, waiting_bytes;
	struct conn conns[SERVE_MAX_CONNS];
	struct cmd *cmds;           /* limits.concurrency slots */
	size_t n_cmds;
	bool ending;
	int exit_code;
	unsigned streams;           /* listen: connections accepted so far */
};

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/* Write all of p, waiting for fd until deadline_ms at the latest (the clock
 * of reap_now_ms; a deadline in the past: what the fd takes now). 0, or -1 on
 * an error or when the deadline passed. */
static int write_until(int fd, const char *p, size_t n, uint64_t deadline_ms)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pf = { .fd = fd, .events = POLLOUT };
			uint64_t now = reap_now_ms();

			if (now >= deadline_ms)
				return -1;
			poll(&pf, 1, (int)(deadline_ms - now));
			continue;
		}
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Write what is queued, as far as the fd takes it now. */
static void conn_flush(struct conn *c)
{
	size_t off = 0;

	while (off < c->out_len && !c->dead) {
		ssize_t w = write(c->out_fd, c->out + off, c->out_len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			break;
		if (w <= 0)
			c->dead = true;
		else
			off += (size_t)w;
	}
	if (c->dead)
		off = c->out_len;
	memmove(c->out, c->out + off, c->out_len - off);
	c->out_len -= off;
}

/* Queue one event line (steals line, malloc'd, without its newline; NULL:
 * out of memory) and write what the fd takes now. */
static void emit(struct conn *c, char *line)
{
	size_t n;

	if (!line) {
		log_line("serve: out of memory writing an event");
		return;
	}
	if (c->dead) {
		free(line);
		return;
	}
	n = strlen(line);
	if (c->out_len + n + 1 > SERVE_OUT_MAX) {
		log_line("serve: a client does not read its events: dropping the connection");
		c->dead = true;
	} else if (c->out_len + n + 1 > c->out_cap) {
		size_t cap = (c->out_len + n + 1) * 2;
		char *o = realloc(c->out, cap);

		if (!o) {
			c->dead = true;
		} else {
			c->out = o;
			c->out_cap = cap;
		}
	}
	if (!c->dead) {
		memcpy(c->out + c->out_len, line, n);
		c->out[c->out_len + n] = '\n';
		c->out_len += n + 1;
		conn_flush(c);
	}
	free(line);
}

static void emit_error(struct conn *c, const char *id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void emit_error(struct conn *c, const char *id, const char *fmt, ...)
{
	char msg[TN_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit(c, ev_error(id, msg));
}

/* ---- commands ------------------------------------------------------------ */

static size_t running(const struct serve *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_cmds; i++)
		n += s->cmds[i].used;
	return n;
}

static struct cmd *find_cmd(struct serve *s, const struct conn *c, const char *id)
{
	for (size_t i = 0; i < s->n_cmds; i++)
		if (s->cmds[i].used && s->cmds[i].conn == c && strcmp(s->cmds[i].id, id) == 0)
			return &s->cmds[i];
	return NULL;
}

static void cmd_cancel(struct cmd *m)
{
	if (m->exited || m->cancelled)
		return;
	m->cancelled = true;
	keeper_cancel(&m->k);
}

static void cmd_free(struct cmd *m)
{
	close_fd(&m->out_fd);
	close_fd(&m->err_fd);
	close_fd(&m->in_fd);
	close_fd(&m->k.msg_fd);
	free(m->in_buf);
	memset(m, 0, sizeof(*m));
	m->out_fd = m->err_fd = m->in_fd = m->k.msg_fd = -1;
}

/* Read what a stdout or stderr pipe holds; deliver up to the output limit.
 * Returns the bytes read, 0 at end of file (the fd is then closed), or -1 when
 * nothing is waiting. */
static ssize_t cmd_output(struct cmd *m, int *fd, const char *stream)
{
	static uint8_t buf[EV_CHUNK];
	ssize_t n = read(*fd, buf, sizeof(buf));
	size_t give;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -1;
	if (n <= 0) {
		close_fd(fd);
		return 0;
	}
	*(stream[3] == 'o' ? &m->out_bytes : &m->err_bytes) += (uint64_t)n;
	give = (size_t)n;
	if (m->delivered + give > m->limit) {
		give = m->limit > m->delivered ? (size_t)(m->limit - m->delivered) : 0;
		m->truncated = true;
	}
	if (give == 0)
		return n;
	m->delivered += give;
	emit(m->conn, ev_output(m->id, stream[3] == 'e', buf, give));
	return n;
}

/* Read at most one pipe's capacity (all that the command's own, now ended,
 * processes can have left in it; a foreign writer cannot keep this going),
 * then close. */
static void cmd_drain(struct cmd *m, int *fd, const char *stream)
{
	int cap = *fd >= 0 ? fcntl(*fd, F_GETPIPE_SZ) : 0;
	ssize_t budget = cap > 0 ? cap : 1 << 20, n = 1;

	while (*fd >= 0 && budget > 0 && n > 0) {
		n = cmd_output(m, fd, stream);
		budget -= n;
	}
	close_fd(fd);
}

static void cmd_stdin(struct cmd *m)
{
	ssize_t w = write(m->in_fd, m->in_buf + m->in_off, m->in_len - m->in_off);

	if (w < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (w > 0)
		m->in_off += (size_t)w;
	if (w < 0 || m->in_off == m->in_len)
		close_fd(&m->in_fd);   /* all given, or the command closed its stdin */
}

static void cmd_message(struct cmd *m)
{
	struct keeper_msg msg;
	int r = keeper_read(&m->k, &msg);

	if (r == -EAGAIN)
		return;
	if (r == 1 && msg.type == KEEPER_EXITED) {
		m->wait_status = msg.wait_status;
	} else {
		/* The keeper is gone without a word: report what is known. */
		m->wait_status = (EXIT_SIGNAL_BASE + SIGKILL) << 8;
		log_line("serve: %s: keeper ended unexpectedly", m->id);
	}
	m->exited = true;
	m->end_ms = reap_now_ms();
	close_fd(&m->k.msg_fd);
	/* Every process of the command is gone now (the keeper ended them all), so
	 * what they wrote is in the pipes already. Take it, then close: a writer
	 * left is a process of another command that was handed the fd, and must
	 * not hold this command's exit event, its timeout or its slot. */
	cmd_drain(m, &m->out_fd, "stdout");
	cmd_drain(m, &m->err_fd, "stderr");
}

/* The exit event, once the main process has ended and both pipes are drained. */
static void cmd_finish(struct cmd *m)
{
	int st = m->wait_status;

	emit(m->conn, ev_exit(m->id, st, m->timed_out, m->truncated, m->end_ms - m->start_ms));
	audit_exit(m->conn->stream, m->id, m->pid, m->wall_start_ms, m->wall_start_ms + (m->end_ms - m->start_ms),
		   st, m->timed_out, m->cancelled, m->truncated, m->out_bytes, m->err_bytes);
	cmd_free(m);
}

/* ---- requests ------------------------------------------------------------ */

/* ---- the queue of execs past limits.concurrency ------------------------------ */

static struct waiting **find_waiting(struct serve *s, const struct conn *c, const char *id)
{
	for (struct waiting **w = &s->queue; *w; w = &(*w)->next)
		if ((*w)->conn == c && strcmp((*w)->rq->id, id) == 0)
			return w;
	return NULL;
}

/* Take *w out of the queue; the caller owns what it returns. */
static struct waiting *unqueue(struct serve *s, struct waiting **w)
{
	struct waiting *e = *w;

	*w = e->next;
	if (!*w)
		s->queue_tail = w;
	s->n_waiting--;
	s->waiting_bytes -= e->bytes;
	return e;
}

static void waiting_free(struct waiting *e)
{
	rq_free(e->rq);
	free(e);
}

/* Every waiting exec of c (of every connection when c is NULL) answered with
 * an error event that says why it never ran, and dropped. */
static void drop_waiting(struct serve *s, const struct conn *c, const char *why)
{
	for (struct waiting **w = &s->queue; *w;) {
		if (c && (*w)->conn != c) {
			w = &(*w)->next;
			continue;
		}
		{
			struct waiting *e = unqueue(s, w);

			emit_error(e->conn, e->rq->id, "exec: %s", why);
			waiting_free(e);
		}
	}
}

/* The id an error event about a request may carry: id itself, or NULL when it
 * names a waiting exec of c. A client reads an error event with an exec's id,
 * before its started event, as that exec's end (it will not run); a request
 * that only fails about a waiting exec (a duplicate, a signal, a bad line)
 * must not end it there. */
static const char *answer_id(struct serve *s, const struct conn *c, const char *id)
{
	return id && id[0] && !find_waiting(s, c, id) ? id : NULL;
}

/* Start exec request rq of c in a free slot: its started event, or -errno
 * with ret_err filled ("exec: WHY"), nothing started and no event written. */
static int do_exec(struct serve *s, struct conn *c, struct rq_request *rq, struct tn_error *ret_err)
{
	const struct mf_manifest *mf = s->ctx->manifest;
	const struct rq_command cmd = rq_command_of(mf, rq);
	const char *cwd = cmd.cwd, *id = rq->id;
	char **shell_argv = NULL, **envp = NULL;
	int in_p[2] = { -1, -1 }, out_p[2] = { -1, -1 }, err_p[2] = { -1, -1 };
	struct cmd *m = NULL;
	struct tn_error err = { 0 };
	struct keeper_msg msg = { .type = 0 };
	struct stat st;
	int r = 0;

	if (stat(cwd, &st) != 0 || !S_ISDIR(st.st_mode)) {
		return err_set(ret_err, ENOTDIR, "exec: cwd %s is not a directory", cwd);
	}
	if (find_cmd(s, c, id) || find_waiting(s, c, id)) {
		return err_set(ret_err, EEXIST, "exec: id %s is already running or waiting", id);
	}
	for (size_t i = 0; i < s->n_cmds && !m; i++)
		if (!s->cmds[i].used)
			m = &s->cmds[i];
	if (envf_build(mf, rq->env, &envp, &err) < 0 ||
	    !(shell_argv = spawn_argv(rq->words, rq->n_words, rq->argv_form)))
		goto oom;
	cmd_free(m);
	if (rq->has_stdin) {
		/* the request owns the bytes; the command slot takes them */
		m->in_buf = rq->stdin_data;
		m->in_len = rq->stdin_len;
		rq->stdin_data = NULL;
		if (pipe2(in_p, O_CLOEXEC) != 0)
			goto sys;
	} else {
		in_p[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (in_p[0] < 0)
			goto sys;
	}
	if (pipe2(out_p, O_CLOEXEC) != 0 || pipe2(err_p, O_CLOEXEC) != 0)
		goto sys;
	{
		struct spawn_plan plan = spawn_plan_of(mf, shell_argv, envp, cwd, s->ctx->landlock,
						       s->ctx->filter, in_p[0], out_p[1], err_p[1]);

		if (keeper_start(&plan, &m->k, &err) < 0) {
			r = err_set(ret_err, err.code, "exec: %s", err.msg);
			cmd_free(m);
			goto out;
		}
	}
	m->used = true;
	m->conn = c;
	snprintf(m->id, sizeof(m->id), "%s", id);
	m->start_ms = reap_now_ms();
	m->wall_start_ms = audit_wall_ms();
	m->deadline_ms = m->start_ms + (uint64_t)cmd.timeout_s * 1000;
	m->limit = mf->limits.output_bytes;
	m->out_fd = out_p[0];
	m->err_fd = err_p[0];
	m->in_fd = in_p[1];
	out_p[0] = err_p[0] = in_p[1] = -1;
	/* The keeper says at once whether the shell was exec'd. */
	if (keeper_read(&m->k, &msg) != 1 || msg.type != KEEPER_STARTED) {
		bool have = msg.type == KEEPER_FAILED;

		r = err_set(ret_err, have ? EPERM : ECHILD, "exec: %s",
			    have ? msg.msg : "the command did not start");
		while (waitpid(m->k.pid, NULL, 0) < 0 && errno == EINTR)
			;
		cmd_free(m);
		goto out;
	}
	fcntl(m->k.msg_fd, F_SETFL, O_NONBLOCK);
	fcntl(m->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(m->err_fd, F_SETFL, O_NONBLOCK);
	if (m->in_fd >= 0)
		fcntl(m->in_fd, F_SETFL, O_NONBLOCK);
	m->pid = msg.pid;
	emit(c, ev_started(id, msg.pid));
	goto out;
sys:
	r = err_errno(ret_err, errno, "exec");
	cmd_free(m);
	goto out;
oom:
	r = err_set(ret_err, ENOMEM, "exec: out of memory");
out:
	for (int i = 0; i < 2; i++) {
		close_fd(&in_p[i]);
		close_fd(&out_p[i]);
		close_fd(&err_p[i]);
	}
	free(shell_argv);
	envf_free(envp);
	return r;
}

/* An exec that leaves the queue, or never enters it: logged (a log that
 * cannot be written runs nothing), then started, or refused with the message
 * refusal when it is not NULL; a refusal is logged too. */
static void start_exec(struct serve *s, struct conn *c, struct rq_request *rq, const char *refusal)
{
	const struct rq_command cmd = rq_command_of(s->ctx->manifest, rq);
	struct tn_error err = { 0 };

	if (audit_exec(c->stream, rq, cmd.cwd, cmd.timeout_s) < 0) {
		emit_error(c, rq->id, "exec: the audit log cannot be written");
		return;
	}
	if (refusal)
		err_set(&err, EAGAIN, "exec: %s", refusal);
	if (refusal || do_exec(s, c, rq, &err) < 0) {
		/* id null for a duplicate of a waiting exec: answer_id */
		emit_error(c, answer_id(s, c, rq->id), "%s", err.msg);
		audit_refused(c->stream, rq->id, err.msg);
	}
}

/* Start waiting execs, oldest first, while there are free slots. */
static void start_waiting(struct serve *s)
{
	while (s->queue && running(s) < s->n_cmds && !s->ending) {
		struct waiting *e = unqueue(s, &s->queue);

		start_exec(s, e->conn, e->rq, NULL);
		waiting_free(e);
	}
}

/* An exec: started when a slot is free and nothing waits before it (and a
 * duplicate id, which do_exec refuses at once), else queued; past the queue's
 * bounds, refused. Takes *rq when it queues it. */
static void take_exec(struct serve *s, struct conn *c, struct rq_request **rq, size_t len)
{
	const char *id = (*rq)->id;
	char why[160];
	struct waiting *e;

	if ((!s->queue && running(s) < s->n_cmds) || find_cmd(s, c, id) || find_waiting(s, c, id)) {
		start_exec(s, c, *rq, NULL);
		return;
	}
	if (s->n_waiting >= SERVE_QUEUE_MAX || s->waiting_bytes + len > SERVE_QUEUE_BYTES) {
		snprintf(why, sizeof(why), "%zu commands running and %zu waiting, the most that may wait (%d, %u bytes of requests)",
			 running(s), s->n_waiting, SERVE_QUEUE_MAX, SERVE_QUEUE_BYTES);
		start_exec(s, c, *rq, why);
		return;
	}
	if (!(e = calloc(1, sizeof(*e)))) {
		start_exec(s, c, *rq, "out of memory");
		return;
	}
	*e = (struct waiting){ .conn = c, .rq = *rq, .bytes = len };
	*rq = NULL;
	*s->queue_tail = e;
	s->queue_tail = &e->next;
	s->n_waiting++;
	s->waiting_bytes += len;
}

static void do_request(struct serve *s, struct conn *c, const char *line, size_t len)
{
	struct rq_request *rq = NULL;
	struct tn_error err = { 0 };
	char id[RQ_ID_MAX + 1];
	struct waiting **w;
	struct cmd *m;

	if (rq_parse(line, len, &rq, id, &err) < 0) {
		emit_error(c, answer_id(s, c, id), "%s", err.msg);
		return;
	}
	if (rq->op == RQ_EXEC) {
		take_exec(s, c, &rq, len);
	} else if ((w = find_waiting(s, c, rq->id))) {
		/* Not started: a cancel takes it out and answers the exec with an
		 * error event; a signal has nothing to reach. */
		if (rq->op == RQ_CANCEL) {
			struct waiting *e = unqueue(s, w);

			emit_error(c, rq->id, "exec: cancelled before it started");
			waiting_free(e);
		} else {
			emit_error(c, NULL, "signal: %s has not started: it waits for a slot", rq->id);
		}
	} else {
		const char *op = rq->op == RQ_CANCEL ? "cancel" : "signal";

		m = find_cmd(s, c, rq->id);
		if (!m || m->exited)
			emit_error(c, rq->id, "%s: no running command %s", op, rq->id);
		else if (rq->op == RQ_SIGNAL)
			keeper_forward(&m->k, rq->signo);
		else
			cmd_cancel(m);
		if (m && !m->exited)   /* exited is set only by the keeper's message */
			audit_control(c->stream, rq->id, rq->op == RQ_SIGNAL ? rq->signo : 0);
	}
	rq_free(rq);
}

/* ---- connections ----------------------------------------------------------- */

static void conn_read(struct serve *s, struct conn *c)
{
	ssize_t n;
	size_t start = 0;

	if (!c->buf && !(c->buf = malloc(EV_LINE_MAX + 1 + EV_CHUNK))) {
		log_line("serve: out of memory");
		return;
	}
	n = read(c->in_fd, c->buf + c->len, EV_CHUNK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		c->eof = true;
		return;
	}
	c->len += (size_t)n;
	for (size_t i = c->len - (size_t)n; i < c->len; i++) {
		if (c->buf[i] != '\n')
			continue;
		if (c->discarding)
			c->discarding = false;
		else if (i - start > EV_LINE_MAX)
			emit_error(c, NULL, "request: line longer than %d bytes", EV_LINE_MAX);
		else if (i > start)
			do_request(s, c, c->buf + start, i - start);
		start = i + 1;
	}
	memmove(c->buf, c->buf + start, c->len - start);
	c->len -= start;
	if (c->len > EV_LINE_MAX) {
		if (!c->discarding)
			emit_error(c, NULL, "request: line longer than %d bytes", EV_LINE_MAX);
		c->discarding = true;
		c->len = 0;
	} else if (c->discarding) {
		c->len = 0;
	}
}

/* Write everything queued, waiting until deadline_ms at the latest (a refusal:
 * no wait; the end of the turn: a bound shared by every connection), then free
 * the queue. Whatever the peer has not taken by then is lost. */
static void conn_drain(struct conn *c, uint64_t deadline_ms)
{
	if (c->out_len && !c->dead && write_until(c->out_fd, c->out, c->out_len, deadline_ms) < 0)
		c->dead = true;
	c->out_len = 0;
	free(c->out);
	c->out = NULL;
	c->out_cap = 0;
}

static bool peer_allowed(const struct serve *s, int fd, char *why, size_t why_size)
{
	const struct mf_manifest *mf = s->ctx->manifest;
	struct ucred cr;
	socklen_t l = sizeof(cr);
	bool uid_ok = false;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0) {
		snprintf(why, why_size, "SO_PEERCRED: %s", strerror(errno));
		return false;
	}
	for (size_t i = 0; i < mf->n_caller_uids; i++)
		uid_ok |= mf->caller_uids[i] == cr.uid;
	if (!uid_ok) {
		snprintf(why, why_size, "peer uid %u is not in callers.uids", (unsigned)cr.uid);
		return false;
	}
	/* A command of this turn runs below turninit: it may not drive the turn.
	 * Fail closed: the peer is pinned by a pidfd (SO_PEERPIDFD), and a peer that
	 * has exited, or whose line of parents cannot be read, is refused, so a
	 * command cannot connect, hand the socket on and exit before this check. */
	if (cr.pid > 0) {
		int pidfd = -1, d;
		socklen_t pl = sizeof(pidfd);
		bool pinned = getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &pl) == 0;
		bool alive = !pinned || syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;

		d = alive ? reap_is_descendant(cr.pid, getpid()) : -1;
		if (pinned && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) != 0)
			d = -1;   /* gone meanwhile: what was read may be another process */
		if (pidfd >= 0)
			close(pidfd);
		if (d != 0) {
			snprintf(why, why_size, d > 0 ? "peer pid %d is a command of this turn" :
				 "peer pid %d has exited or cannot be checked", (int)cr.pid);
			return false;
		}
	}
	return true;
}

static void conn_accept(struct serve *s)
{
	int fd = accept4(s->ctx->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	char why[256];

	if (fd < 0)
		return;
	if (!peer_allowed(s, fd, why, sizeof(why))) {
		struct conn tmp = { .out_fd = fd };

		emit_error(&tmp, NULL, "refused: %s", why);
		conn_drain(&tmp, 0);
		log_line("listen: refused a peer: %s", why);
		close(fd);
		return;
	}
	for (size_t i = 0; i < SERVE_MAX_CONNS; i++)
		if (!s->conns[i].used) {
			s->conns[i] = (struct conn){ .used = true, .in_fd = fd, .out_fd = fd,
						     .stream = ++s->streams };
			return;
		}
	{
		struct conn tmp = { .out_fd = fd };

		emit_error(&tmp, NULL, "refused: more than %d connections", SERVE_MAX_CONNS);
		conn_drain(&tmp, 0);
		close(fd);
	}
}

static void conn_close(struct serve *s, struct conn *c)
{
	bool has = false;

	drop_waiting(s, c, "the connection ended before it started");
	for (size_t i = 0; i < s->n_cmds; i++)
		if (s->cmds[i].used && s->cmds[i].conn == c) {
			cmd_cancel(&s->cmds[i]);
			has = true;
		}
	if (has)
		return;   /* closed once its commands have ended */
	if (c->out_len && !c->dead)
		return;   /* closed once the peer has read its last events (the loop
			   * writes them as it takes them): one peer never holds the loop */
	conn_drain(c, 0);
	if (c->in_fd > 2)
		close(c->in_fd);
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

/* ---- the loop ---------------------------------------------------------------- */

int serve_listen_socket(const char *path, int *ret_fd, struct tn_error *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(a.sun_path))
		return err_set(err, ENAMETOOLONG, "listen: socket path %s is too long", path);
	strcpy(a.sun_path, path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return err_set(err, EEXIST, "listen: %s exists and is not a socket", path);
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_errno(err, errno, "listen: socket");
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || chmod(path, 0666) != 0 ||
	    listen(fd, 64) != 0) {
		int e = errno;

		close(fd);
		return err_errno(err, e, "listen: %s", path);
	}
	*ret_fd = fd;
	return 0;
}

static void end_turn(struct serve *s, int code)
{
	if (!s->ending) {
		s->ending = true;
		s->exit_code = code;
	}
	drop_waiting(s, NULL, "the turn ended before it started");
	for (size_t i = 0; i < s->n_cmds; i++)
		if (s->cmds[i].used)
			cmd_cancel(&s->cmds[i]);
}

static void handle_signals(struct serve *s)
{
	struct signalfd_siginfo si;

	while (read(s->ctx->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGCHLD)
			continue;
		if (sig == SIGTERM) {
			end_turn(s, 143);
			continue;
		}
		for (size_t i = 0; i < s->n_cmds; i++)
			if (s->cmds[i].used && !s->cmds[i].exited)
				keeper_forward(&s->cmds[i].k, sig);
	}
	/* Keepers, and anything reparented to turninit as PID 1. */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* What a pollfd of the loop stands for: its kind and its object. */
enum slot_kind {
	SLOT_SIGNALS,       /* turninit's signalfd */
	SLOT_ACCEPT,        /* the listening socket */
	SLOT_CONN_IN,       /* a connection's requests (obj: struct conn) */
	SLOT_CONN_OUT,      /* a connection's queued events (obj: struct conn) */
	SLOT_CMD_STDOUT,    /* a command's stdout pipe (obj: struct cmd) */
	SLOT_CMD_STDERR,    /* its stderr pipe */
	SLOT_CMD_STDIN,     /* its stdin pipe, while there is stdin to give */
	SLOT_CMD_KEEPER,    /* its keeper's messages */
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

static void slot_run(struct serve *s, const struct slot *sl)
{
	struct cmd *m = sl->obj;

	switch (sl->kind) {
	case SLOT_SIGNALS: handle_signals(s); break;
	case SLOT_ACCEPT: conn_accept(s); break;
	case SLOT_CONN_IN: conn_read(s, sl->obj); break;
	case SLOT_CONN_OUT: conn_flush(sl->obj); break;
	case SLOT_CMD_STDOUT: if (m->out_fd >= 0) cmd_output(m, &m->out_fd, "stdout"); break;
	case SLOT_CMD_STDERR: if (m->err_fd >= 0) cmd_output(m, &m->err_fd, "stderr"); break;
	case SLOT_CMD_STDIN: if (m->in_fd >= 0) cmd_stdin(m); break;
	case SLOT_CMD_KEEPER: if (m->k.msg_fd >= 0) cmd_message(m); break;
	}
}

int serve_run(const struct serve_ctx *ctx)
{
	struct serve s = { .ctx = ctx, .n_cmds = ctx->manifest->limits.concurrency };
	size_t max_fds = 2 + 2 * SERVE_MAX_CONNS + 4 * s.n_cmds;
	struct pollfd *pf = calloc(max_fds, sizeof(*pf));
	struct slot *slots = calloc(max_fds, sizeof(*slots));

	s.cmds = calloc(s.n_cmds, sizeof(*s.cmds));
	if (!pf || !slots || !s.cmds) {
		log_line("serve: out of memory");
		return EXIT_REFUSED;
	}
	s.queue_tail = &s.queue;
	for (size_t i = 0; i < s.n_cmds; i++)   /* calloc'd: no fd is open yet */
		s.cmds[i].out_fd = s.cmds[i].err_fd = s.cmds[i].in_fd = s.cmds[i].k.msg_fd = -1;
	signal(SIGPIPE, SIG_IGN);   /* a client that went away is an EPIPE, not a death */
	if (ctx->listen_fd < 0) {
		s.conns[0] = (struct conn){ .used = true, .in_fd = 0, .out_fd = 1 };
		/* a client that is slow to read must not hold timeouts or SIGTERM */
		fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);
	}

	for (;;) {
		size_t n = 0;
		uint64_t t = reap_now_ms(), next = 0;
		int wait_ms = -1;

		/* Commands: time out, finish. */
		for (size_t i = 0; i < s.n_cmds; i++) {
			struct cmd *m = &s.cmds[i];

			if (!m->used)
				continue;
			if (!m->exited && !m->timed_out && t >= m->deadline_ms) {
				m->timed_out = true;
				cmd_cancel(m);
			}
			if (m->exited && m->out_fd < 0 && m->err_fd < 0) {
				struct conn *c = m->conn;

				cmd_finish(m);
				if (c->eof || c->dead)
					conn_close(&s, c);
				continue;
			}
			if (!m->exited && !m->timed_out && (!next || m->deadline_ms < next))
				next = m->deadline_ms;
		}
		for (size_t i = 0; i < SERVE_MAX_CONNS; i++) {
			struct conn *c = &s.conns[i];

			if (!c->used || !(c->eof || c->dead))
				continue;
			if (ctx->listen_fd < 0)
				end_turn(&s, 0);   /* end of stdin: the turn ends */
			else
				conn_close(&s, c);
		}
		start_waiting(&s);   /* slots the loop above freed */
		if (s.ending && running(&s) == 0)
			break;
		if (next)
			wait_ms = next > t ? (int)(next - t) : 0;

		slot_add(pf, slots, &n, ctx->sfd, POLLIN, SLOT_SIGNALS, NULL);
		if (ctx->listen_fd >= 0 && !s.ending)
			slot_add(pf, slots, &n, ctx->listen_fd, POLLIN, SLOT_ACCEPT, NULL);
		for (size_t i = 0; i < SERVE_MAX_CONNS; i++) {
			struct conn *c = &s.conns[i];

			if (c->used && !c->eof && !c->dead && !s.ending)
				slot_add(pf, slots, &n, c->in_fd, POLLIN, SLOT_CONN_IN, c);
			if (c->used && c->out_len && !c->dead)
				slot_add(pf, slots, &n, c->out_fd, POLLOUT, SLOT_CONN_OUT, c);
		}
		for (size_t i = 0; i < s.n_cmds; i++) {
			struct cmd *m = &s.cmds[i];
			/* backpressure: output waits while its client is behind */
			bool behind = m->used && m->conn->out_len > SERVE_OUT_HIGH && !m->conn->dead;

			if (!m->used)
				continue;
			if (m->out_fd >= 0 && !behind)
				slot_add(pf, slots, &n, m->out_fd, POLLIN, SLOT_CMD_STDOUT, m);
			if (m->err_fd >= 0 && !behind)
				slot_add(pf, slots, &n, m->err_fd, POLLIN, SLOT_CMD_STDERR, m);
			if (m->in_fd >= 0)
				slot_add(pf, slots, &n, m->in_fd, POLLOUT, SLOT_CMD_STDIN, m);
			if (m->k.msg_fd >= 0)
				slot_add(pf, slots, &n, m->k.msg_fd, POLLIN, SLOT_CMD_KEEPER, m);
		}
		if (poll(pf, n, wait_ms) < 0 && errno != EINTR) {
			log_line("serve: poll: %s", strerror(errno));
			continue;
		}
		for (size_t i = 0; i < n; i++)
			if (pf[i].revents)
				slot_run(&s, &slots[i]);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	{
		uint64_t deadline = reap_now_ms() + SERVE_DRAIN_MS;

		for (size_t i = 0; i < SERVE_MAX_CONNS; i++)
			if (s.conns[i].used)
				conn_drain(&s.conns[i], deadline);
	}
	free(pf);
	free(slots);
	free(s.cmds);
	return s.exit_code;
}
