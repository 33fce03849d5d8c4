/* keeper.h - the keepers of serve and listen mode: one per concurrency slot,
 * reused from one command to the next.
 *
 * A keeper is a fork of turninit that becomes a child subreaper and starts
 * each command given to it (init/process/spawn.c). Every process the command starts
 * stays below it, even one that left the command's process group or session
 * with setsid, so the keeper can signal all of them and knows when none is
 * left; it reports the command's end only then, so an idle keeper has no child.
 * What does not depend on the request was done once, when it was forked: it
 * holds the turn's spawn base (spawn.h: the seccomp program, the Landlock
 * ruleset, the limits) as turninit prepared it. turninit gives it a command,
 * a cancel or a signal to forward over a socket only the two of them hold
 * (stdio as SCM_RIGHTS), in order, so a cancel meant for a command that has
 * ended reaches an idle keeper, which ignores it, never the next command; and
 * hears from it on a pipe. Sources: PR_SET_CHILD_SUBREAPER and
 * PR_SET_PDEATHSIG in prctl(2), unix(7) SCM_RIGHTS, signalfd(2). */
#ifndef TURNINIT_KEEPER_H
#define TURNINIT_KEEPER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/error.h"
#include "policy/seccomp_groups.h"
#include "process/reap.h"
#include "process/spawn.h"

/* A keeper does not say that a command started: turninit learns it from the
 * command's exec report (spawn.h), without the keeper having to run. */
enum keeper_msg_type {
	KEEPER_FAILED = 2, /* it did not start: wait_status, exec_failed, msg */
	KEEPER_EXITED,     /* the command's main process (pid) ended: wait_status;
			      every other process of the command is gone too */
};

struct keeper_msg {
	int type;
	int pid;
	int wait_status;
	int exec_failed;
	uint64_t end_ms; /* KEEPER_EXITED: when the main process was reaped
			    (clock_ms), whenever turninit reads this */
	char msg[TN_ERROR_MSG_MAX];
};

struct keeper {
	pid_t pid;  /* the keeper process; 0: none (not started, or ended) */
	int msg_fd; /* read end of its messages (a pipe), close-on-exec */
	int job_fd; /* turninit's end of its socket: commands, cancels, signals */
};

/* keeper_start - fork an idle keeper holding base. It keeps only its two fds,
 * the Landlock ruleset's and seccomp-notify's socket (base->notify_sock). Errors: -errno of socketpair(2),
 * pipe2(2) or fork(2), nothing left open. ret is written only on success. */
int keeper_start(const struct spawn_base *base, struct keeper *ret, struct tn_error *err);

/* keeper_run - give an idle keeper one command: argv and envp (NULL-ended),
 * its workdir (NULL: the manifest's) and four fds: its stdin, stdout and
 * stderr, and the write end of its exec report (spawn.h; the caller closes
 * its own copy once this returns, and reads the other end); all four are
 * passed, the caller keeps its own. A keeper stopped from outside is sent
 * SIGCONT first. The report says whether the command started; when it did
 * not, the keeper's message (keeper_read, KEEPER_FAILED) says why. Errors:
 * -EPIPE when the keeper is gone (the caller stops it and starts another),
 * -E2BIG past KEEPER_JOB_MAX bytes, other -errno of sendmsg(2). */
int keeper_run(struct keeper *k, char *const *argv, char *const *envp, const char *workdir, const int fds[4],
	       struct tn_error *err);

/* keeper_read - read one message. Returns 1 and fills msg, 0 at end of file
 * (the keeper is gone), -EAGAIN when none is waiting on a non-blocking fd,
 * -errno otherwise. */
int keeper_read(const struct keeper *k, struct keeper_msg *msg);

/* keeper_cancel - ask the keeper to end its command: SIGTERM to every process
 * of it, SIGKILL to all after KEEPER_GRACE_MS. An idle keeper ignores it. */
void keeper_cancel(const struct keeper *k);

/* keeper_forward - ask the keeper to send sig to its command's process group.
 * An idle keeper ignores it. */
void keeper_forward(const struct keeper *k, int sig);

/* keeper_stop - end a keeper: its socket closed (an idle keeper exits then),
 * SIGKILL if it has not ended by deadline_ms (clock_ms), reaped when it is
 * gone by then (else turninit's loop reaps it: never a wait without a
 * bound). Without a keeper (pid 0) only the fds are closed. *k is reset
 * (pid 0, fds -1). */
void keeper_stop(struct keeper *k, uint64_t deadline_ms);

/* keeper_calls - every system call a keeper makes once it has loaded the
 * turn's seccomp filter, and the calls of the child it clones before that
 * child execs (they share the filter then): a filter that refuses none of
 * them (scg_spares) is loaded once per keeper; another is loaded in each
 * command, after the set-up, as in one-shot mode (spawn.h,
 * filter_in_keeper). keeper_n_calls of them. */
extern const struct scg_use keeper_calls[];
extern const size_t keeper_n_calls;

#define KEEPER_GRACE_MS REAP_GRACE_MS /* milliseconds between SIGTERM and SIGKILL */
#define KEEPER_JOB_MAX (8u << 20)     /* bytes of one command's argv, env and workdir */

#endif
