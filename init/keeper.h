/* keeper.h - one keeper process per command in serve and listen mode.
 *
 * A keeper is a fork of turninit that becomes a child subreaper and starts the
 * command (init/spawn.c). Every process the command starts stays below it,
 * even one that left the command's process group or session with setsid, so
 * the keeper can signal all of them and knows when none is left. turninit talks
 * to it by signals (SIGTERM: cancel; REAP_SIG_FORWARD with a value: forward a
 * signal) and hears from it on a pipe. Sources: PR_SET_CHILD_SUBREAPER and
 * PR_SET_PDEATHSIG in prctl(2), sigqueue(3), signalfd(2). */
#ifndef TURNINIT_KEEPER_H
#define TURNINIT_KEEPER_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "reap.h"
#include "spawn.h"

enum keeper_msg_type {
	KEEPER_STARTED = 1,   /* the shell was exec'd: pid */
	KEEPER_FAILED,        /* it was not: wait_status, exec_failed, msg */
	KEEPER_EXITED,        /* the command's main process ended: wait_status; every
				 other process of the command is gone too */
};

struct keeper_msg {
	int type;
	int pid;
	int wait_status;
	int exec_failed;
	char msg[TN_ERROR_MSG_MAX];
};

struct keeper {
	pid_t pid;        /* the keeper process */
	int msg_fd;       /* read end of its messages, close-on-exec */
};

/* keeper_start - fork a keeper for plan. The keeper keeps only the fds the
 * command needs (plan->stdio, the Landlock ruleset) and its message pipe.
 * Errors: -errno of pipe2(2) or fork(2). ret is written only on success. */
int keeper_start(const struct spawn_plan *plan, struct keeper *ret, struct tn_error *err);

/* keeper_read - read one message. Returns 1 and fills msg, 0 at end of file
 * (the keeper is gone), -EAGAIN when none is waiting on a non-blocking fd,
 * -errno otherwise. */
int keeper_read(const struct keeper *k, struct keeper_msg *msg);

/* keeper_cancel - ask the keeper to end the command: SIGTERM to every process
 * of it, SIGKILL to all after KEEPER_GRACE_MS. */
void keeper_cancel(const struct keeper *k);

/* keeper_forward - ask the keeper to send sig to the command's process group. */
void keeper_forward(const struct keeper *k, int sig);

#define KEEPER_GRACE_MS REAP_GRACE_MS   /* milliseconds between SIGTERM and SIGKILL */

#endif
