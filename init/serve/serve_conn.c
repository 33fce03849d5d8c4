/* serve_conn.c - the connections of serve and listen mode: events written
 * whole, one line each, into a per-connection buffer flushed without
 * blocking; framing of request lines, and whether one may be handled now
 * (the answers a connection waits for, its held request); the last events
 * at the end. A connection that stops reading stops only its own commands'
 * output (their pipes are not polled while its buffer is over
 * SERVE_OUT_HIGH), never another connection, a timeout or SIGTERM. */
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

#include "policy/events.h"
#include "serve/audit.h"
#include "util/clock.h"
#include "util/log.h"

void serve_close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/* Write all of p, waiting for fd until deadline_ms at the latest (the clock
 * of clock_ms; a deadline in the past: what the fd takes now). 0, or -1 on
 * an error or when the deadline passed. */
static int write_until(int fd, const char *p, size_t n, uint64_t deadline_ms)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pf = { .fd = fd, .events = POLLOUT };
			uint64_t now = clock_ms();

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
void conn_flush(struct conn *c)
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
void conn_emit(struct conn *c, char *line)
{
	size_t n;

	if (!line) {
		log_line("serve: out of memory writing an event");
		return;
	}
	n = strlen(line);
	if (c->dead || n == 0) { /* "": the codec has nothing to send */
		free(line);
		return;
	}
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

void conn_error(struct conn *c, const char *id, const char *fmt, ...)
{
	char msg[TN_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	conn_emit(c, c->codec->error(c->codec_st, id, msg));
}

/* Whether c's buffer holds what is not handled yet: a whole request line,
 * or more than a line may hold (its error waits for the answers before it,
 * conn_lines). */
bool conn_pending(const struct conn *c)
{
	return c->buf &&
	       (c->len > EV_LINE_MAX || (c->off < c->len && memchr(c->buf + c->off, '\n', c->len - c->off)));
}

/* A request line past EV_LINE_MAX: not read, answered and logged as
 * rejected (no id: the line is not parsed). */
static void conn_too_long(struct conn *c)
{
	char why[64];

	snprintf(why, sizeof(why), "request: line longer than %d bytes", EV_LINE_MAX);
	audit_rejected(c->stream, NULL, NULL, why);
	conn_error(c, NULL, "%s", why);
}

/* Handle the whole request lines of c's buffer in order, while a line may be
 * handled (conn_may_handle: none waits for the answers to the execs before
 * it); the others wait in the buffer, and the loop comes back to them. An
 * error about a line that is too long is an answer too: it waits for the
 * answers before it. Lines are cut by c->frame (policy/lineframe.h): a line
 * past EV_LINE_MAX is answered once and dropped up to its newline. */
void conn_lines(struct serve *s, struct conn *c)
{
	for (;;) {
		struct lf_frame next = c->frame;
		size_t pos = c->off, n;
		const char *line;
		enum lf_kind k = lf_next(&next, c->buf, c->len, &pos, &line, &n);

		if (k != LF_MORE && !conn_may_handle(c))
			return;
		if (k == LF_LONG && c->n_answers)
			return;
		c->frame = next;
		if (k == LF_LONG)
			conn_too_long(c);
		else if (k == LF_LINE && n)
			s->on_request(s, c, line, n);
		/* a line handled (or dropped) is wiped: a credential request's
		 * value stays nowhere in turninit (docs/protocol.md, "credential") */
		sodium_memzero(c->buf + c->off, pos - c->off);
		c->off = pos;
		if (k == LF_MORE)
			break;
	}
	memmove(c->buf, c->buf + c->off, c->len - c->off);
	c->len -= c->off;
	sodium_memzero(c->buf + c->len, c->off); /* what the move left behind */
	c->off = 0;
}

/* Read what c has sent and handle its whole lines (conn_lines). Called only
 * when nothing of c's buffer waits (the loop polls c's input only then). */
void conn_read(struct serve *s, struct conn *c)
{
	ssize_t n;

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
	conn_lines(s, c);
}

/* Write everything queued, waiting until deadline_ms at the latest (a refusal:
 * no wait; the end of the turn: a bound shared by every connection), then free
 * the queue. Whatever the peer has not taken by then is lost. */
void conn_drain(struct conn *c, uint64_t deadline_ms)
{
	if (c->out_len && !c->dead && write_until(c->out_fd, c->out, c->out_len, deadline_ms) < 0)
		c->dead = true;
	c->out_len = 0;
	free(c->out);
	c->out = NULL;
	c->out_cap = 0;
}

/* Whether a request line of c may be handled now: none of c's waits for the
 * answers before it, and there is room for one more answer. */
bool conn_may_handle(const struct conn *c)
{
	return !c->held.used && c->n_answers < SERVE_ANSWERS;
}

/* Whether c has an answer or a request still waiting: it is not closed yet. */
bool conn_waits(const struct conn *c)
{
	return c->held.used || c->n_answers;
}

static void held_free(struct conn *c);

/* Free what c still holds of answers and a waiting request (the end of the
 * turn: nothing is written any more). */
void conn_answers_free(struct conn *c)
{
	while (c->answers) {
		struct answer *a = c->answers;

		c->answers = a->next;
		free(a);
	}
	c->n_answers = 0;
	held_free(c);
}

/* Drop c's request that waits for the answers before it, if any. */
static void held_free(struct conn *c)
{
	if (c->held.used) {
		rq_free(c->held.rq);
		free(c->held.reply);
		c->held = (struct held){ 0 };
	}
}

void conn_drop_requests(struct conn *c)
{
	size_t n = c->held.used;

	for (size_t i = c->off; c->buf && i < c->len; i++)
		n += c->buf[i] == '\n';
	held_free(c);
	c->off = c->len = 0;
	c->frame.discarding = false;
	if (n)
		log_line("serve: a client that reads no more events: %zu request line(s) of it not handled",
			 n);
}
