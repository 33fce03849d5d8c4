/* serve_cmd.c - the command lifecycle of serve and listen mode (a keeper per
 * command, init/process/keeper.c): start, output, stdin, the keeper's messages, the
 * exit event; and the first-in, first-out queue of execs past
 * limits.concurrency (docs/protocol.md, "Concurrency"). */
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

#include "policy/envfilter.h"
#include "policy/events.h"
#include "policy/request.h"
#include "process/keeper.h"
#include "process/memcg.h"
#include "process/reap.h"
#include "process/spawn.h"
#include "sandbox/net.h"
#include "serve/audit.h"
#include "util/clock.h"
#include "util/exit_codes.h"
#include "util/log.h"

size_t cmd_running(const struct serve *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_cmds; i++)
		n += s->cmds[i].used;
	return n;
}

struct cmd *find_cmd(struct serve *s, const struct conn *c, const char *id)
{
	for (size_t i = 0; i < s->n_cmds; i++)
		if (s->cmds[i].used && s->cmds[i].conn == c && strcmp(s->cmds[i].id, id) == 0)
			return &s->cmds[i];
	return NULL;
}

/* Whether m's timeout may still fire: its exec was reported (a start held
 * before it has its own bound, cmd_start_overdue), and it has not ended,
 * timed out or been cancelled (a cancel's end, its SIGKILL after the grace
 * included, is the cancel's: the exit says timed_out only for a timeout
 * that came first). */
bool cmd_times_out(const struct cmd *m)
{
	return !m->exited && !m->timed_out && !m->cancelled && !(m->starting && m->start_pid <= 0);
}

void cmd_cancel(struct cmd *m)
{
	if (m->exited || m->cancelled)
		return;
	m->cancelled = true;
	keeper_cancel(m->k);
}

void cmd_free(struct cmd *m)
{
	int r = m->net_port ? net_cmd_close(m->net, m->net_port) : 0;

	/* its port closed at its end: a connection made later to it is
	 * refused; those it accepted go on */
	if (r < 0)
		log_line("serve: %s: the proxy was not told to close the command's port %u (%s): it stays open until the turn ends",
			 m->id, m->net_port, strerror(-r));
	serve_close_fd(&m->out_fd);
	serve_close_fd(&m->err_fd);
	serve_close_fd(&m->in_fd);
	serve_close_fd(&m->report_fd);
	free(m->in_buf);
	json_decref(m->read_back);
	memset(m, 0, sizeof(*m));
	m->out_fd = m->err_fd = m->in_fd = m->report_fd = -1;
}

/* A place for the answer to an exec of c, after every answer of c before
 * it; NULL when out of memory. The callers see to it that there is room
 * (conn_may_handle). */
static struct answer *answer_open(struct conn *c)
{
	struct answer *a = calloc(1, sizeof(*a)), **p = &c->answers;

	if (!a)
		return NULL;
	while (*p)
		p = &(*p)->next;
	*p = a;
	c->n_answers++;
	return a;
}

/* A started command: its output and stdin are served from now on. */
static void cmd_started(struct cmd *m)
{
	m->starting = false;
	fcntl(m->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(m->err_fd, F_SETFL, O_NONBLOCK);
	if (m->in_fd >= 0)
		fcntl(m->in_fd, F_SETFL, O_NONBLOCK);
	m->pid = m->start_pid;
	/* what the kernel shows of its sandbox, for the audit log */
	m->read_back = audit_read_back(m->pid, m->k ? m->k->pid : -1);
	conn_emit(m->conn, m->conn->codec->started(m->conn->codec_st, m->id, m->pid));
}

/* Write c's answers that are decided, oldest first, up to the first that is
 * not: an answer is never written before the one of an exec of c handled
 * earlier. Other connections' answers do not wait for c's. */
static void answers_flush(struct conn *c)
{
	while (c->answers && c->answers->ready) {
		struct answer *a = c->answers;

		c->answers = a->next;
		c->n_answers--;
		if (a->error)
			conn_error(c, a->has_id ? a->id : NULL, "%s", a->msg);
		else
			cmd_started(a->cmd);
		free(a);
	}
}

/* Answer a (of c) is an error: msg, about the exec id (NULL: about none). */
static void answer_error(struct conn *c, struct answer *a, const char *id, const char *msg)
{
	a->cmd = NULL;
	a->error = true;
	a->has_id = id != NULL;
	snprintf(a->id, sizeof(a->id), "%s", id ? id : "");
	snprintf(a->msg, sizeof(a->msg), "%s", msg);
	a->ready = true;
	answers_flush(c);
}

/* Read what a stdout or stderr pipe holds; deliver up to the output limit.
 * Returns the bytes read, 0 at end of file (the fd is then closed), or -1 when
 * nothing is waiting. */
ssize_t cmd_output(struct cmd *m, int *fd, const char *stream)
{
	static uint8_t buf[EV_CHUNK];
	ssize_t n = read(*fd, buf, sizeof(buf));
	size_t give;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -1;
	if (n <= 0) {
		serve_close_fd(fd);
		return 0;
	}
	*(stream[3] == 'o' ? &m->out_bytes : &m->err_bytes) += (uint64_t)n;
	/* every byte read, kept or cut, in the same pass (docs/audit.md) */
	if (audit_on())
		crypto_generichash_update(stream[3] == 'o' ? &m->out_h : &m->err_h, buf, (size_t)n);
	give = (size_t)n;
	if (m->delivered + give > m->limit) {
		give = m->limit > m->delivered ? (size_t)(m->limit - m->delivered) : 0;
		m->truncated = true;
	}
	if (give == 0)
		return n;
	m->delivered += give;
	conn_emit(m->conn, m->conn->codec->output(m->conn->codec_st, m->id, stream[3] == 'e', buf, give));
	return n;
}

/* Read at most one pipe's capacity (all that the command's own, now ended,
 * processes can have left in it; a foreign writer cannot keep this going),
 * then close. */
static void cmd_drain(struct cmd *m, int *fd, const char *stream)
{
	ssize_t budget = -1, n = 1;

	/* the pipe's size asked only when there is something to read: a
	 * command's end most often leaves nothing */
	while (*fd >= 0 && budget != 0 && n > 0) {
		n = cmd_output(m, fd, stream);
		if (n > 0 && budget < 0) {
			int cap = *fd >= 0 ? fcntl(*fd, F_GETPIPE_SZ) : 0;

			budget = cap > 0 ? cap : 1 << 20;
		}
		if (n > 0)
			budget = budget > n ? budget - n : 0;
	}
	serve_close_fd(fd);
}

void cmd_stdin(struct cmd *m)
{
	ssize_t w = write(m->in_fd, m->in_buf + m->in_off, m->in_len - m->in_off);

	if (w < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (w > 0)
		m->in_off += (size_t)w;
	if (w < 0 || m->in_off == m->in_len)
		serve_close_fd(&m->in_fd); /* all given, or the command closed its stdin */
}

/* A keeper that ended without reporting its command's end (killed from
 * outside, or by the OOM killer) leaves the command's processes orphaned to
 * turninit: they are killed here, all of them (they are the only children of
 * turninit that are not keepers), before the exit event says "lost". When
 * they cannot all be ended, the turn ends, which kills every process. */
static void cmd_lost(struct serve *s, struct cmd *m)
{
	pid_t keep[MF_CONCURRENCY_MAX + 1];
	size_t n = 0;
	pid_t lost = m->k->pid;
	int r;

	/* every other keeper, busy or idle, is a child of turninit to keep */
	for (size_t i = 0; i < s->n_cmds && n < MF_CONCURRENCY_MAX; i++)
		if (s->keepers[i].pid > 0 && &s->keepers[i] != m->k)
			keep[n++] = s->keepers[i].pid;
	if (s->ctx->proxy_pid > 0)
		keep[n++] = s->ctx->proxy_pid; /* and the proxy */
	r = reap_kill_strays(keep, n, lost, clock_ms() + SERVE_LOST_MS);
	keeper_stop(m->k, 0);
	if (r < 0) {
		log_line("serve: %s: its keeper ended without reporting the command's end, and its "
			 "processes did not all end within %d ms: ending the turn",
			 m->id, SERVE_LOST_MS);
		s->end_asked = true; /* the loop ends the turn */
		s->end_code = EXIT_REFUSED;
	} else {
		log_line("serve: %s: its keeper ended without reporting the command's end: killed "
			 "%d process(es) of the command",
			 m->id, r);
	}
}

/* A start that failed after do_exec: its error event and audit line, the
 * slot freed; the keeper stopped unless it said so itself (then it is idle). */
static void cmd_start_failed(struct cmd *m, bool keeper_idle, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cmd_start_failed(struct cmd *m, bool keeper_idle, const char *fmt, ...)
{
	char msg[TN_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!keeper_idle)
		keeper_stop(m->k, 0);
	audit_refused(m->conn->stream, m->id, msg);
	answer_error(m->conn, m->answer, m->id, msg);
	cmd_free(m);
}

/* Read the exec report of starting command m (spawn.h) as far as it goes.
 * Its pid and then end of file: the exec; its started answer is written
 * once every earlier answer is. End of file without the pid, or with a byte
 * after it, is no start: the keeper's message says why (cmd_message). */
void cmd_report(struct cmd *m)
{
	for (;;) {
		ssize_t n = read(m->report_fd, m->report + m->report_len, sizeof(m->report) - m->report_len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n > 0 && m->report_len + (size_t)n < sizeof(m->report)) {
			m->report_len += (size_t)n;
			continue;
		}
		serve_close_fd(&m->report_fd);
		if (n == 0 && m->report_len == sizeof(int32_t)) {
			int32_t pid;

			memcpy(&pid, m->report, sizeof(pid));
			m->start_pid = pid > 0 ? pid : -1;
		}
		if (m->start_pid > 0) {
			/* its timeout counts from the exec, not from the hand-off:
			 * a start held before the exec has a bound of its own
			 * (cmd_start_overdue) and is not the command's time */
			m->deadline_ms = clock_ms() + m->timeout_ms;
			m->answer->ready = true;
			answers_flush(m->conn);
		}
		return;
	}
}

/* A keeper's only child while it starts a command is that command's process
 * before its exec, where another command may have stopped it. */
void cmd_start_overdue(struct cmd *m)
{
	uint64_t t = clock_ms();

	if (!m->start_nudged) {
		/* Stopped before its exec (a SIGSTOP from another command, where
		 * Landlock cannot scope signals): continued, once. */
		log_line("serve: %s: its start has not been reported in %d ms: continuing its process", m->id,
			 SERVE_START_MS);
		reap_signal_descendants(m->k->pid, SIGCONT);
		m->start_nudged = true;
		m->start_deadline_ms = t + SERVE_START_MS;
		return;
	}
	log_line("serve: %s: its start has not been reported in %d ms: killing its keeper and the process",
		 m->id, 2 * SERVE_START_MS);
	reap_signal_descendants(m->k->pid, SIGKILL);
	cmd_start_failed(m, false,
			 "exec: the command did not start within %d ms (its process was held before its exec): killed",
			 2 * SERVE_START_MS);
}

void cmd_message(struct serve *s, struct cmd *m)
{
	struct keeper_msg msg = { .type = 0 };
	int r;

	if (m->starting && m->report_fd >= 0)
		cmd_report(m); /* the report first: the exec comes before any end */
	if (m->starting && m->start_pid > 0)
		return; /* its end waits for its started answer */
	r = keeper_read(m->k, &msg);
	if (r == -EAGAIN)
		return;
	if (m->starting) {
		/* The report said no start: the keeper says why. */
		if (r == 1 && msg.type == KEEPER_FAILED)
			cmd_start_failed(m, true, "exec: %s", msg.msg);
		else if (r == 1 && msg.type == KEEPER_EXITED)
			cmd_start_failed(m, true,
					 "exec: the command's process ended before its exec (wait status %d)",
					 msg.wait_status);
		else
			cmd_start_failed(m, false, "exec: the command did not start");
		return;
	}
	if (r == 1 && msg.type == KEEPER_EXITED) {
		m->wait_status = msg.wait_status; /* the keeper is idle now */
	} else {
		/* The keeper is gone without a word: SIGKILL is what turninit
		 * does to what is left of the command, and the event says lost. */
		m->wait_status = SIGKILL;
		m->lost = true;
		cmd_lost(s, m);
	}
	/* An OOM kill is told by the memory cgroup's counter: it grew while the
	 * command ran, and its main process died of a SIGKILL turninit did not
	 * send (a timeout or a cancel may end in one). */
	m->oom_killed = WIFSIGNALED(m->wait_status) && WTERMSIG(m->wait_status) == SIGKILL && !m->lost &&
			!m->timed_out && !m->cancelled && m->oom_kills >= 0 &&
			memcg_oom_kills() > m->oom_kills;
	m->exited = true;
	/* the keeper's time of the end: read later when the command's started
	 * answer waited for an earlier one */
	m->end_ms = r == 1 && msg.type == KEEPER_EXITED && msg.end_ms ? msg.end_ms : clock_ms();
	/* Every process of the command is gone now (the keeper ended them all), so
	 * what they wrote is in the pipes already. Take it, then close: a writer
	 * left is a process of another command that was handed the fd, and must
	 * not hold this command's exit event, its timeout or its slot. */
	cmd_drain(m, &m->out_fd, "stdout");
	cmd_drain(m, &m->err_fd, "stderr");
}

/* The exit event, once the main process has ended and both pipes are drained. */
void cmd_finish(struct cmd *m)
{
	uint8_t od[AUDIT_HASH_BYTES] = { 0 }, ed[AUDIT_HASH_BYTES] = { 0 };
	char head[AUDIT_HEAD_HEX];
	struct ev_end end = {
		.wait_status = m->wait_status,
		.timed_out = m->timed_out,
		.truncated = m->truncated,
		.lost = m->lost,
		.oom_killed = m->oom_killed,
		.ended = m->turn_ended,
		.duration_ms = m->end_ms > m->start_ms ? m->end_ms - m->start_ms : 0,
	};

	/* the log's line first: the client's exit event carries the head after
	 * it (docs/audit.md, "Anchors") */
	if (audit_on()) {
		crypto_generichash_final(&m->out_h, od, sizeof(od));
		crypto_generichash_final(&m->err_h, ed, sizeof(ed));
	}
	audit_exit(m->conn->stream, m->id, m->pid, m->wall_start_ms, &end, m->cancelled, m->out_bytes,
		   m->err_bytes, od, ed, m->read_back);
	if (audit_head(head))
		end.audit_head = head;
	conn_emit(m->conn, m->conn->codec->exit(m->conn->codec_st, m->id, &end));
	cmd_free(m);
}

struct waiting **queue_find(struct serve *s, const struct conn *c, const char *id)
{
	for (struct waiting **w = &s->queue; *w; w = &(*w)->next)
		if ((*w)->conn == c && strcmp((*w)->rq->id, id) == 0)
			return w;
	return NULL;
}

/* Take *w out of the queue; the caller owns what it returns. */
struct waiting *queue_take(struct serve *s, struct waiting **w)
{
	struct waiting *e = *w;

	*w = e->next;
	if (!*w)
		s->queue_tail = w;
	s->n_waiting--;
	s->waiting_bytes -= e->bytes;
	return e;
}

void queue_free(struct waiting *e)
{
	rq_free(e->rq);
	free(e);
}

/* Every waiting exec of c (of every connection when c is NULL) answered with
 * an error event that says why it never ran, and dropped. */
void queue_drop(struct serve *s, const struct conn *c, const char *why)
{
	for (struct waiting **w = &s->queue; *w;) {
		if (c && (*w)->conn != c) {
			w = &(*w)->next;
			continue;
		}
		{
			struct waiting *e = queue_take(s, w);

			conn_error(e->conn, e->rq->id, "exec: %s", why);
			queue_free(e);
		}
	}
}

/* The id an error event about a request may carry: id itself, or NULL when it
 * names a waiting exec of c. A client reads an error event with an exec's id,
 * before its started event, as that exec's end (it will not run); a request
 * that only fails about a waiting exec (a duplicate, a signal, a bad line)
 * must not end it there. */
const char *queue_answer_id(struct serve *s, const struct conn *c, const char *id)
{
	return id && id[0] && !queue_find(s, c, id) ? id : NULL;
}

/* An exec that found no fd for its pipes or its slot's new keeper (code:
 * EMFILE or ENFILE): the one line that names the limit; -code. */
static int exec_no_fd(struct tn_error *ret_err, int code)
{
	return err_errno(ret_err, code, "exec: turninit has no file descriptor to spare (RLIMIT_NOFILE)");
}

/* The command of slot m given to the slot's keeper, started when it has none
 * (the first command of the slot, or its keeper ended); one that is found
 * gone when given the command is replaced once. fds: the command's stdin,
 * stdout and stderr, and its exec report's write end. 0, or -errno with ret_err set ("exec: ..."). */
static int keeper_give(struct serve *s, struct cmd *m, const char *id, char **shell_argv, char **envp,
		       const char *cwd, const int fds[4], struct tn_error *ret_err)
{
	struct keeper *k = &s->keepers[m - s->cmds];
	struct tn_error err = { 0 };
	int r = 0;

	for (int attempt = 0; attempt < 2; attempt++) {
		if (k->pid <= 0 && keeper_start(s->ctx->base, k, &err) < 0)
			break;
		r = keeper_run(k, shell_argv, envp, cwd, fds, &err);
		if (r != -EPIPE)
			break;
		log_line("serve: %s: the keeper of its slot had ended: starting another", id);
		keeper_stop(k, 0);
	}
	if (k->pid <= 0 || r < 0) {
		if (k->pid <= 0 && (err.code == EMFILE || err.code == ENFILE))
			r = exec_no_fd(ret_err, err.code); /* a new keeper's socket pair and pipe */
		else
			r = err_set(ret_err, err.code, "exec: %s", err.msg);
		if (k->pid > 0 && r != -E2BIG)
			keeper_stop(k, clock_ms() + SERVE_LOST_MS);
		return r;
	}
	m->k = k;
	return 0;
}

/* Slot m takes the command its keeper was given at t0 (clock_ms, read
 * before the giving), whose answer is a: its deadlines from t0, and the
 * parent's ends of its pipes (fds: stdin to write, stdout and stderr to
 * read, the exec report to read; owned by the slot from here). The report says whether the shell was exec'd,
 * the keeper why not; the loop hears them (cmd_report, cmd_message), with a bound (cmd_start_overdue): PID 1
 * never waits on a keeper, whose command may be stopped before its exec, nor on the answer to one exec before
 * it gives the next to its keeper. */
static void cmd_begin(struct serve *s, struct cmd *m, struct conn *c, const char *id,
		      const struct rq_command *cmd, const int fds[4], struct answer *a, uint64_t t0)
{
	m->used = true;
	m->conn = c;
	snprintf(m->id, sizeof(m->id), "%s", id);
	m->start_ms = t0; /* before the keeper had it: its end comes after */
	m->wall_start_ms = audit_wall_ms();
	if (audit_on()) {
		crypto_generichash_init(&m->out_h, NULL, 0, AUDIT_HASH_BYTES);
		crypto_generichash_init(&m->err_h, NULL, 0, AUDIT_HASH_BYTES);
	}
	m->timeout_ms = (uint64_t)cmd->timeout_s * 1000; /* deadline_ms: at the exec report */
	m->progress_ms = m->start_ms + c->codec->progress_ms;
	m->limit = s->ctx->manifest->limits.output_bytes;
	m->oom_kills = memcg_oom_kills();
	m->in_fd = fds[0];
	m->out_fd = fds[1];
	m->err_fd = fds[2];
	m->report_fd = fds[3];
	m->starting = true;
	m->start_deadline_ms = m->start_ms + SERVE_START_MS;
	m->answer = a;
	a->cmd = m;
}

/* A port of the proxy's for command id alone in slot m (net_cmd_listen), and
 * its proxy variables over the shared port's in *envp: the proxy's records
 * and lines of its connections name it. Without one (no proxy; a failure,
 * logged; NET_CMD_PORTS_MAX open, logged once a turn) the command keeps the
 * shared port, and its records name no command. 0, or -ENOMEM. */
static int cmd_net_port(struct serve *s, struct cmd *m, unsigned stream, const char *id, char ***envp)
{
	static bool said_busy;
	struct net_plan *net = s->ctx->net;
	char buf[NET_PROXY_VARS][64], *vars[NET_PROXY_VARS + 1];
	struct tn_error err = { 0 };
	int port;

	if (!net)
		return 0;
	port = net_cmd_listen(net, stream, id, &err);
	if (port < 0) {
		if (port != -EBUSY || !said_busy)
			log_line("serve: %s: %s: its connections go to the proxy's shared port, their records name no command",
				 id, err.msg);
		said_busy = said_busy || port == -EBUSY;
		return 0;
	}
	m->net = net;
	m->net_port = (uint16_t)port;
	net_proxy_vars(buf, vars, m->net_port);
	return envf_override(envp, vars, &err);
}

/* Start exec request rq of c in a free slot, with cmd (its cwd and timeout,
 * rq_command_of, decided once by start_exec), its answer to be a:
 * 0 when its keeper was given it (its started or error answer follows from
 * its report and its keeper, cmd_report and cmd_message), or -errno with
 * ret_err filled ("exec: WHY"), nothing started and no event written. */
static int do_exec(struct serve *s, struct conn *c, struct rq_request *rq, const struct rq_command *cmd,
		   struct answer *a, struct tn_error *ret_err)
{
	const struct mf_manifest *mf = s->ctx->manifest;
	const char *cwd = cmd->cwd, *id = rq->id;
	char **shell_argv = NULL, **envp = NULL;
	int in_p[2] = { -1, -1 }, out_p[2] = { -1, -1 }, err_p[2] = { -1, -1 }, rep_p[2] = { -1, -1 };
	struct cmd *m = NULL;
	struct tn_error err = { 0 };
	struct stat st;
	uint64_t t0;
	int r = 0;

	if (stat(cwd, &st) != 0 || !S_ISDIR(st.st_mode)) {
		return err_set(ret_err, ENOTDIR, "exec: cwd %s is not a directory", cwd);
	}
	if (queue_find(s, c, id))
		return err_set(ret_err, EEXIST, "exec: id %s is already running or waiting", id);
	for (size_t i = 0; i < s->n_cmds && !m; i++)
		if (!s->cmds[i].used)
			m = &s->cmds[i];
	if (envf_build(&mf->env, mf->home, rq->env, &envp, &err) < 0 ||
	    (s->ctx->proxy_env[0] && envf_override(&envp, s->ctx->proxy_env, &err) < 0) ||
	    !(shell_argv = spawn_argv(rq->words, rq->n_words, rq->argv_form)))
		goto oom;
	cmd_free(m);
	if (cmd_net_port(s, m, c->stream, id, &envp) < 0) {
		cmd_free(m);
		goto oom;
	}
	if (rq->has_stdin) {
		/* the request owns the bytes; the command slot takes them */
		m->in_buf = rq->stdin_data;
		m->in_len = rq->stdin_len;
		rq->stdin_data = NULL;
		if (pipe2(in_p, O_CLOEXEC) != 0)
			goto sys;
	} else if (s->null_fd < 0) {
		/* without the turn's /dev/null (serve.null_fd, whose reads give
		 * end of file whatever a command does to it), one of its own */
		in_p[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (in_p[0] < 0)
			goto sys;
	}
	/* the report's: non-blocking at both ends (the child writes a few
	 * bytes into an empty pipe) */
	if (pipe2(out_p, O_CLOEXEC) != 0 || pipe2(err_p, O_CLOEXEC) != 0 ||
	    pipe2(rep_p, O_CLOEXEC | O_NONBLOCK) != 0)
		goto sys;
	t0 = clock_ms();
	if ((r = keeper_give(s, m, id, shell_argv, envp, cwd,
			     (int[4]){ in_p[0] >= 0 ? in_p[0] : s->null_fd, out_p[1], err_p[1], rep_p[1] },
			     ret_err)) < 0) {
		cmd_free(m);
		goto out;
	}
	cmd_begin(s, m, c, id, cmd, (int[4]){ in_p[1], out_p[0], err_p[0], rep_p[0] }, a, t0);
	out_p[0] = err_p[0] = in_p[1] = rep_p[0] = -1;
	goto out;
sys:
	if (errno == EMFILE || errno == ENFILE)
		r = exec_no_fd(ret_err, errno);
	else
		r = err_errno(ret_err, errno, "exec");
	cmd_free(m);
	goto out;
oom:
	r = err_set(ret_err, ENOMEM, "exec: out of memory");
out:
	for (int i = 0; i < 2; i++) {
		serve_close_fd(&in_p[i]);
		serve_close_fd(&out_p[i]);
		serve_close_fd(&err_p[i]);
		serve_close_fd(&rep_p[i]);
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
	struct answer *a = answer_open(c);

	if (!a) { /* said now, out of its order, rather than not at all */
		conn_error(c, rq->id, "exec: out of memory");
		return;
	}
	if (find_cmd(s, c, rq->id)) {
		/* A rejected line, not exec and refused: those, with a running
		 * id, would be taken for that command's (docs/audit.md). */
		err_set(&err, EEXIST, "exec: id %s is already running or waiting", rq->id);
		audit_rejected(c->stream, rq->id, rq, err.msg);
		answer_error(c, a, rq->id, err.msg);
		return;
	}
	if (audit_exec(c->stream, rq, cmd.cwd, cmd.timeout_s, !s->ctx->base->filter_in_keeper) < 0) {
		answer_error(c, a, rq->id, "exec: the audit log cannot be written");
		return;
	}
	if (refusal)
		err_set(&err, EAGAIN, "exec: %s", refusal);
	if (refusal || do_exec(s, c, rq, &cmd, a, &err) < 0) {
		audit_refused(c->stream, rq->id, err.msg);
		/* id null for a duplicate of a waiting exec: answer_id */
		answer_error(c, a, queue_answer_id(s, c, rq->id), err.msg);
	}
}

/* Start waiting execs, oldest first, while there are free slots. */
void queue_start(struct serve *s)
{
	while (s->queue && cmd_running(s) < s->n_cmds && !s->ending &&
	       s->queue->conn->n_answers < SERVE_ANSWERS) {
		struct waiting *e = queue_take(s, &s->queue);

		start_exec(s, e->conn, e->rq, NULL);
		queue_free(e);
	}
}

/* An exec: started when a slot is free and nothing waits before it (and a
 * duplicate id, which do_exec refuses at once), else queued; past the queue's
 * bounds, refused. Takes *rq when it queues it. */
void cmd_take_exec(struct serve *s, struct conn *c, struct rq_request **rq, size_t len)
{
	const char *id = (*rq)->id;
	char why[160];
	struct waiting *e;

	if ((!s->queue && cmd_running(s) < s->n_cmds) || find_cmd(s, c, id) || queue_find(s, c, id)) {
		start_exec(s, c, *rq, NULL);
		return;
	}
	if (s->n_waiting >= SERVE_QUEUE_MAX || s->waiting_bytes + len > SERVE_QUEUE_BYTES) {
		snprintf(why, sizeof(why),
			 "%zu commands running and %zu waiting, the most that may wait (%d, %u bytes of requests)",
			 cmd_running(s), s->n_waiting, SERVE_QUEUE_MAX, SERVE_QUEUE_BYTES);
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
