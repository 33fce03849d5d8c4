/* keeper.c - see keeper.h. */
#define _GNU_SOURCE
#include "keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reap.h"

static void keeper_send(int fd, const struct keeper_msg *m)
{
	/* One write of less than PIPE_BUF bytes: atomic. */
	(void)!write(fd, m, sizeof(*m));
}

/* The keeper process: never returns. */
static void __attribute__((noreturn)) keeper_main(const struct spawn_plan *plan, int msg_fd)
{
	struct keeper_msg m = { .type = KEEPER_FAILED };
	struct tn_error err = { 0 };
	int keep[5] = { msg_fd, plan->stdio[0], plan->stdio[1], plan->stdio[2], plan->landlock->fd };
	sigset_t set;
	struct reap_term term = { .root = getpid() };
	bool exec_failed = false;
	pid_t main_pid, parent = getppid();
	int sfd, status = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	spawn_close_fds(keep, 5);
	/* The blocked set is turninit's (reap_block_signals): SIGTERM and
	 * REAP_SIG_FORWARD sent before this point wait, they are not lost. */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, REAP_SIG_FORWARD);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);

	if (spawn_command(plan, &main_pid, &status, &exec_failed, &err) < 0) {
		m.wait_status = status;
		m.exec_failed = exec_failed;
		snprintf(m.msg, sizeof(m.msg), "%s", err.msg);
		keeper_send(msg_fd, &m);
		_exit(0);
	}
	m.type = KEEPER_STARTED;
	m.pid = main_pid;
	term.pgid = main_pid;
	keeper_send(msg_fd, &m);
	if (sfd < 0) {
		/* Without a signalfd the keeper can still reap: block in waitpid. */
		while (waitpid(main_pid, &status, 0) < 0 && errno == EINTR)
			;
		goto done;
	}
	for (;;) {
		struct pollfd p = { .fd = sfd, .events = POLLIN };
		struct signalfd_siginfo si;
		bool main_done = false;

		poll(&p, 1, reap_term_tick(&term, reap_now_ms()));
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			/* Only turninit cancels or forwards: in non-root mode a
			 * command shares the keeper's uid and could signal it. */
			if ((pid_t)si.ssi_pid != parent)
				continue;
			if (si.ssi_signo == SIGTERM) {
				reap_term_start(&term, reap_now_ms());
			} else if ((int)si.ssi_signo == REAP_SIG_FORWARD) {
				kill(-main_pid, si.ssi_int);
			}
		}
		for (;;) {
			int st;
			pid_t w = waitpid(-1, &st, WNOHANG);

			if (w <= 0)
				break;
			if (w == main_pid) {
				status = st;
				main_done = true;
			}
		}
		if (main_done)
			break;
	}
done:
	/* Whatever the command left running ends with it. */
	reap_kill_all();
	m.type = KEEPER_EXITED;
	m.wait_status = status;
	keeper_send(msg_fd, &m);
	_exit(0);
}

int keeper_start(const struct spawn_plan *plan, struct keeper *ret, struct tn_error *err)
{
	pid_t pid;
	int fd;

	if (spawn_fork_pipe(&pid, &fd, err) < 0)
		return -err->code;
	if (pid == 0)
		keeper_main(plan, fd);
	ret->pid = pid;
	ret->msg_fd = fd;
	return 0;
}

int keeper_read(const struct keeper *k, struct keeper_msg *msg)
{
	ssize_t n;

	do
		n = read(k->msg_fd, msg, sizeof(*msg));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(*msg))
		return -EIO;
	msg->msg[sizeof(msg->msg) - 1] = '\0';
	return 1;
}

void keeper_cancel(const struct keeper *k)
{
	kill(k->pid, SIGTERM);
	/* a keeper stopped from outside (SIGSTOP by root) must still end its command */
	kill(k->pid, SIGCONT);
}

void keeper_forward(const struct keeper *k, int sig)
{
	union sigval v = { .sival_int = sig };

	sigqueue(k->pid, REAP_SIG_FORWARD, v);
}
