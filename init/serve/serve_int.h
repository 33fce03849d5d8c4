/* serve_int.h - what the files of serve and listen mode share (not an API):
 * the connection, command, queue and turn structs, and the functions each
 * file gives the others.
 *   init/serve/serve.c         the poll loop, requests, the end of the turn
 *   init/serve/serve_conn.c    connections: the output queue, framing, drain, backpressure
 *   init/serve/serve_cmd.c     the command lifecycle and the queue of waiting execs
 *   init/serve/serve_listen.c  the listen socket and its peer checks
 *   init/serve/codec.h         the wire format of a connection (codec_jsonl.c: JSON Lines,
 *                        codec_mcp.c: MCP)
 */
#ifndef TURNINIT_SERVE_INT_H
#define TURNINIT_SERVE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include <sodium.h>
#include <sys/types.h>

#include "policy/codec.h"
#include "policy/lineframe.h"
#include "policy/request.h"
#include "process/keeper.h"
#include "serve/serve.h"

#define SERVE_QUEUE_MAX 1024          /* exec requests waiting for a slot, all connections */
#define SERVE_QUEUE_BYTES (64u << 20) /* bytes of their request lines together */

#define SERVE_OUT_HIGH (1u << 20)  /* bytes queued before a connection's commands wait */
#define SERVE_OUT_MAX (16u << 20)  /* bytes queued before a connection is dropped */
#define SERVE_DRAIN_MS 5000        /* milliseconds the last events may take at the end */
#define SERVE_LOST_MS 2000         /* milliseconds a lost keeper's processes may take to end */
#define SERVE_REFUSED_LOG_MAX 10   /* refused-peer lines a window ... */
#define SERVE_REFUSED_LOG_MS 10000 /* ... of this many milliseconds */
/* clang-format 14 breaks a #define whose comment runs on over lines: kept as written */
/* clang-format off */
#define SERVE_START_MS 5000          /* milliseconds a start may take to be reported, twice:
					the command's stopped process is continued after the
					first, it and the keeper are killed after the second */
#define SERVE_ANSWERS 64             /* execs of a connection whose started or error answer
					may wait for an earlier exec's (struct answer) */
/* clang-format on */

/* The started or error answer to an exec of a connection, in the order its
 * execs were handled: an exec is given to its keeper without waiting for the
 * answer to the one before, and the answers are written in order
 * (answers_flush). */
struct answer {
	struct answer *next;
	struct cmd *cmd; /* its command while that starts, else NULL */
	bool ready;      /* decided: written once every earlier one is */
	bool error;      /* an error event (else its command's started) */
	bool has_id;     /* an error about an exec (else id null) */
	char id[RQ_ID_MAX + 1];
	char msg[TN_ERROR_MSG_MAX]; /* an error's message */
};

/* A request line handled while answers wait that is not an exec (or not a
 * request at all): parsed, and handled once every answer before it is
 * written (docs/protocol.md: the answer to an exec comes before any later
 * request is handled). */
struct held {
	bool used;
	struct rq_request *rq; /* the request, or NULL */
	char *reply;           /* the codec's own answer, when rq is NULL */
	bool failed;           /* it did not parse: err says why */
	char id[RQ_ID_MAX + 1];
	struct tn_error err;
	size_t len;
};

struct conn {
	bool used;
	const struct codec *codec; /* the wire format of this connection */
	void *codec_st;            /* its state (codec->open), or NULL */
	int in_fd, out_fd;         /* the same socket in listen mode */
	char *out;                 /* events not yet written */
	size_t out_len, out_cap;
	char *buf; /* unparsed input, at most EV_LINE_MAX + 1 bytes */
	size_t len;
	size_t off;             /* buf[off..len) is not handled yet (conn_lines) */
	struct lf_frame frame;  /* its lines, bounded by EV_LINE_MAX */
	bool eof;               /* no more requests */
	bool dead;              /* writing failed: events are dropped */
	unsigned stream;        /* the audit log's name for it: 0 serve, 1.. listen */
	struct answer *answers; /* its execs' answers not written yet, oldest first */
	size_t n_answers;
	struct held held; /* a request that waits for the answers before it */
};

struct cmd {
	bool used;
	struct conn *conn;
	char id[RQ_ID_MAX + 1];
	struct keeper *k;          /* its slot's keeper (struct serve, keepers) */
	int out_fd, err_fd, in_fd; /* -1 once closed */
	uint8_t *in_buf;
	size_t in_len, in_off;
	uint64_t start_ms, deadline_ms, end_ms; /* start_ms: the hand-off to its keeper */
	uint64_t timeout_ms;  /* its timeout; deadline_ms is set from it at the exec report */
	uint64_t progress_ms; /* the next codec->progress, when the codec has one */
	uint64_t delivered, limit;
	bool truncated, timed_out, cancelled, exited;
	bool starting;     /* given to its keeper; its started or error
			      answer not written yet (struct answer) */
	int report_fd;     /* while starting: its exec report's read end
			      (spawn.h), -1 once read to its end */
	uint8_t report[8]; /* what the report said: the pid, a byte more */
	size_t report_len;
	int start_pid;              /* the report said the exec: its pid (its
				       started answer may wait for an earlier one) */
	struct answer *answer;      /* while starting: its answer (conn.answers) */
	bool start_nudged;          /* its start deadline passed once: continued */
	uint64_t start_deadline_ms; /* when starting: the next step of its bound */
	bool lost;                  /* the keeper ended without reporting the end */
	bool turn_ended;            /* cancelled by the end of the turn, nothing before */
	bool oom_killed;            /* see cmd_message */
	long oom_kills;             /* memcg_oom_kills() at the start; -1: unknown */
	int wait_status;
	int pid;                               /* the command's, for the audit log */
	uint64_t wall_start_ms;                /* CLOCK_REALTIME at start, for the audit log */
	uint64_t out_bytes, err_bytes;         /* read from its stdout and stderr */
	crypto_generichash_state out_h, err_h; /* their BLAKE2b-256, with an audit log */
	json_t *read_back;                     /* its sandbox as /proc showed it at its start, or NULL */
	struct net_plan *net;                  /* with net_port: the plan its port is of */
	uint16_t net_port;                     /* its own port of the proxy (net_cmd_listen), closed
						  by cmd_free; 0: none (the shared port's variables) */
};

/* An exec request waiting for a slot (limits.concurrency), first in, first
 * out across every connection; it owns rq. */
struct waiting {
	struct waiting *next;
	struct conn *conn;
	struct rq_request *rq;
	size_t bytes; /* its request line, counted against SERVE_QUEUE_BYTES */
};

struct serve {
	const struct serve_ctx *ctx;
	struct waiting *queue, **queue_tail;
	size_t n_waiting, waiting_bytes;
	struct conn conns[SERVE_MAX_CONNS];
	struct cmd *cmds;       /* limits.concurrency slots */
	struct keeper *keepers; /* one per slot, reused from command to command */
	int net_fd;             /* the proxy's records (ctx->records_fd), or -1 */
	size_t n_cmds;
	bool ending;
	bool exec_seen; /* an exec request was taken: no credential
			   request may come any more (serve_credential) */
	int exit_code;
	unsigned streams;    /* listen: connections accepted so far */
	int spare_fd;        /* listen: /dev/null, closed to refuse a peer at RLIMIT_NOFILE */
	int null_fd;         /* /dev/null, the stdin of every command without one, or -1 */
	bool nofile_said;    /* that refusal has been logged */
	char *info_manifest; /* info's manifest text (mf_to_json), made at the first info, or NULL */
	/* listen: refused peers are logged at most SERVE_REFUSED_LOG_MAX a
	 * SERVE_REFUSED_LOG_MS window; the rest are counted and said at its end
	 * (one command's connect loop made 208,000 lines in 20 s) */
	uint64_t refused_window_ms; /* when the window began */
	unsigned refused_logged, refused_quiet;
	/* the loop's request handler (serve.c): a connection hands it each
	 * whole line it reads */
	void (*on_request)(struct serve *s, struct conn *c, const char *line, size_t len);
	/* a handler that found the turn must end (a command lost whose
	 * processes would not all end) asks it here with the exit status;
	 * the loop ends the turn as soon as that handler returns */
	bool end_asked;
	int end_code;
};

/* Each function's contract is at its definition. */
void serve_close_fd(int *fd);
void conn_flush(struct conn *c);
void conn_emit(struct conn *c, char *line);
void conn_error(struct conn *c, const char *id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void conn_read(struct serve *s, struct conn *c);
void conn_lines(struct serve *s, struct conn *c);
bool conn_pending(const struct conn *c);
void cmd_start_overdue(struct cmd *m);
void cmd_report(struct cmd *m);
bool conn_may_handle(const struct conn *c);
bool conn_waits(const struct conn *c);
void conn_answers_free(struct conn *c);
/* conn_drop_requests - c's peer reads nothing more (c->dead: a write failed,
 * or SERVE_OUT_MAX bytes waited): its request lines not handled yet, and the
 * one held behind its answers, are dropped, unhandled, with one log line
 * saying how many, so that nothing keeps c from its end (in serve mode, the
 * turn's). Its execs already given to keepers go on to their end. */
void conn_drop_requests(struct conn *c);
void conn_drain(struct conn *c, uint64_t deadline_ms);
size_t cmd_running(const struct serve *s);
struct cmd *find_cmd(struct serve *s, const struct conn *c, const char *id);
bool cmd_times_out(const struct cmd *m);
void cmd_cancel(struct cmd *m);
void cmd_free(struct cmd *m);
ssize_t cmd_output(struct cmd *m, int *fd, const char *stream);
void cmd_stdin(struct cmd *m);
void cmd_message(struct serve *s, struct cmd *m);
void cmd_finish(struct cmd *m);
struct waiting **queue_find(struct serve *s, const struct conn *c, const char *id);
struct waiting *queue_take(struct serve *s, struct waiting **w);
void queue_free(struct waiting *e);
void queue_drop(struct serve *s, const struct conn *c, const char *why);
const char *queue_answer_id(struct serve *s, const struct conn *c, const char *id);
void queue_start(struct serve *s);
void cmd_take_exec(struct serve *s, struct conn *c, struct rq_request **rq, size_t len);
void conn_accept(struct serve *s);
uint64_t listen_log_tick(struct serve *s, uint64_t now);
void conn_close(struct serve *s, struct conn *c);

#endif
