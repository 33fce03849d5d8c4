/* reap.h - PID 1 duties (docs/design.md, "The steps of PID 1"): signals, reaping, ending a turn.
 * Signals are blocked from the first instruction of main and read through a
 * signalfd, so none is lost between start-up and the first command, and none
 * is dropped by the kernel's PID 1 protection (blocked signals are queued).
 * Sources: signalfd(2), waitpid(2), PR_SET_CHILD_SUBREAPER in prctl(2),
 * /proc/PID/task/TID/children in proc(5). */
#ifndef TURNINIT_REAP_H
#define TURNINIT_REAP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/error.h"

#define REAP_GRACE_MS 5000 /* milliseconds between SIGTERM and SIGKILL */

/* reap_block_signals - block every signal (the handled ones are read through
 * the signalfd of reap_open, the rest stay pending) and set SIGCHLD to its
 * default disposition, so children are not auto-reaped even when the caller
 * ignored SIGCHLD. Call first in main. Each command resets its mask. */
void reap_block_signals(void);

/* reap_open - the signalfd for the blocked set; when not PID 1, also become a
 * child subreaper so orphans of the command are reparented to turninit.
 * Errors: -errno of signalfd(2) or prctl(2). */
int reap_open(int *ret_fd, struct tn_error *err);

#define REAP_HELD_MAX (256u * 1024u) /* bytes of held lines (reap_run_one) */

/* reap_run_one - supervise one command whose process group is main_pid until
 * it exits: reap every child (waitpid(-1, WNOHANG) loop), forward SIGINT,
 * SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGWINCH to its process group; on
 * SIGTERM, or when timeout_ms (0: none) passes, end it with the terminate
 * engine (reap_term_start: the group and every descendant). When the main
 * process has exited, every process left is killed with SIGKILL and reaped.
 * held_fd (-1: none), non-blocking: a pipe of whole lines for stderr (the
 * proxy's), read as they come and held, REAP_HELD_MAX bytes at most, then
 * written after the command's end, so that none lands inside a line of the
 * command's own stderr; past the bound, one line says how many bytes were
 * not shown. Returns the one-shot exit status (docs/exit-codes.md): N,
 * 128+N for signal N, 124 when the timeout passed. Never fails: errors are
 * logged. */
int reap_run_one(int sfd, pid_t main_pid, uint64_t timeout_ms, int held_fd);

/* The terminate engine: how a command is ended, one state machine for the
 * one-shot timeout and SIGTERM, the keeper's cancel and timeout, and (through
 * reap_kill_all) the end of a turn. reap_term_start sends SIGTERM, then
 * SIGCONT (a stopped process gets SIGTERM only once it runs), to the command's
 * process group and to every descendant of root outside it (what left the
 * group with setsid; each process gets each signal once), and arms SIGKILL for REAP_GRACE_MS later;
 * reap_term_tick sends it, to the same group and descendants, once due. */
struct reap_term {
	pid_t pgid;       /* the command's process group: its main pid */
	pid_t root;       /* whose descendants are the command's: turninit or the keeper */
	uint64_t kill_at; /* CLOCK_MONOTONIC ms of the SIGKILL; 0: not armed */
	bool started;     /* SIGTERM sent */
};

/* reap_term_start - begin ending t's command at now (ms); again is a no-op. */
void reap_term_start(struct reap_term *t, uint64_t now);

/* reap_term_tick - the SIGKILL when it is due at now (ms). Returns the ms
 * until it is due, or -1 when nothing is armed (for poll's timeout). */
int reap_term_tick(struct reap_term *t, uint64_t now);

/* reap_kill_all - SIGKILL every descendant of turninit and reap them all
 * (kill(-1) as PID 1; the /proc tree as a subreaper). Returns when turninit
 * has no child left. */
void reap_kill_all(void);

/* reap_kill_strays - the processes of commands whose keeper ended without a
 * word (killed from outside, or by the OOM killer): orphaned, they are now
 * children of turninit (PID 1 or subreaper) or, in the moment before the
 * kernel reparents them, still of the dead keeper. Every child of turninit
 * that is not one of the n pids of keep (the live keepers), and every child of
 * lost (the dead keeper's pid, not yet reaped), is sent SIGKILL with all its
 * descendants and reaped (waitpid on its pid: keep's statuses stay for the
 * caller); passes repeat until one finds nothing, since the children of a
 * killed process are reparented to turninit. Returns how many processes were
 * sent SIGKILL, or -ETIMEDOUT when some were still there at deadline_ms
 * (CLOCK_MONOTONIC): the caller then cannot tell them apart and ends the turn. */
int reap_kill_strays(const pid_t *keep, size_t n, pid_t lost, uint64_t deadline_ms);

/* reap_exit_code - the exit status for a wait status: WEXITSTATUS, or 128 +
 * WTERMSIG. */
int reap_exit_code(int wait_status);

/* reap_signal_descendants - send sig to every descendant of root (children
 * found through /proc/PID/task/TID/children, recursively; depth-first, parents
 * before children). Returns how many were signalled. A process that forks
 * meanwhile may escape one pass: callers repeat it until nothing is left. */
int reap_signal_descendants(pid_t root, int sig);

/* reap_is_descendant - 1 when pid is root or one of its descendants, 0 when
 * it is not (its line of PPid in /proc/PID/status ends at 0 without passing
 * root), -1 when that cannot be told (a /proc entry on the way is gone:
 * callers that guard something refuse then). */
int reap_is_descendant(pid_t pid, pid_t root);

#endif
