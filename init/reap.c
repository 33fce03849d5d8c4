/* reap.c - see reap.h. */
#define _GNU_SOURCE
#include "reap.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/* Forwarded to the command's process group (docs/design.md, "Signals"). */
static const int reap_forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
				      SIGWINCH };

static void reap_set(sigset_t *s)
{
	sigemptyset(s);
	sigaddset(s, SIGCHLD);
	for (size_t i = 0; i < sizeof(reap_forwarded) / sizeof(reap_forwarded[0]); i++)
		sigaddset(s, reap_forwarded[i]);
}

void reap_block_signals(void)
{
	sigset_t s;

	reap_set(&s);
	sigprocmask(SIG_BLOCK, &s, NULL);
	signal(SIGCHLD, SIG_DFL);
}

int reap_open(int *ret_fd, struct tn_error *err)
{
	sigset_t s;
	int fd;

	reap_set(&s);
	fd = signalfd(-1, &s, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return err_set(err, errno, "signalfd: %s", strerror(errno));
	if (getpid() != 1 && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		int e = errno;

		close(fd);
		return err_set(err, e, "PR_SET_CHILD_SUBREAPER: %s", strerror(e));
	}
	*ret_fd = fd;
	return 0;
}

int reap_exit_code(int st)
{
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Reap every exited child; note main's status. */
static void reap_children(pid_t main_pid, bool *main_done, int *main_status)
{
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p < 0 && errno == EINTR)
			continue;
		if (p <= 0)
			return;
		if (p == main_pid) {
			*main_done = true;
			*main_status = st;
		}
	}
}

/* SIGKILL every descendant: as PID 1, kill(-1) reaches every process of the
 * PID namespace; as a subreaper, kill our children layer by layer (orphans of
 * a killed child are reparented to us and found in the next round). */
static void reap_kill_all(void)
{
	if (getpid() == 1) {
		kill(-1, SIGKILL);
		while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
			;
		return;
	}
	for (;;) {
		char path[300], buf[4096];
		int killed = 0;
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;

		while (d && (e = readdir(d))) {
			FILE *f;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/self/task/%s/children", e->d_name);
			f = fopen(path, "re");
			if (!f)
				continue;
			while (fscanf(f, "%4095s", buf) == 1) {
				pid_t p = (pid_t)strtol(buf, NULL, 10);

				if (p > 0 && kill(p, SIGKILL) == 0)
					killed++;
			}
			fclose(f);
		}
		if (d)
			closedir(d);
		/* Wait for at least one; none left means we are done. */
		if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
			return;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		(void)killed;
	}
}

int reap_run_one(int sfd, pid_t main_pid, uint64_t timeout_ms)
{
	uint64_t start = now_ms();
	uint64_t deadline = timeout_ms ? start + timeout_ms : 0;   /* 0: none */
	uint64_t kill_at = 0;                                        /* 0: not armed */
	bool main_done = false, timed_out = false;
	int main_status = 0;

	reap_children(main_pid, &main_done, &main_status);
	while (!main_done) {
		struct pollfd pfd = { .fd = sfd, .events = POLLIN };
		uint64_t t = now_ms(), next = 0;
		struct signalfd_siginfo si;
		int wait_ms = -1;

		if (deadline && t >= deadline && !timed_out) {
			timed_out = true;
			kill(-main_pid, SIGTERM);
			kill_at = t + REAP_GRACE_MS;
		}
		if (kill_at && t >= kill_at) {
			kill(-main_pid, SIGKILL);
			kill_at = 0;
		}
		if (deadline && !timed_out)
			next = deadline;
		if (kill_at && (!next || kill_at < next))
			next = kill_at;
		if (next)
			wait_ms = next > t ? (int)(next - t) : 0;
		if (poll(&pfd, 1, wait_ms) < 0 && errno != EINTR) {
			log_line("poll: %s", strerror(errno));
			continue;
		}
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			int sig = (int)si.ssi_signo;

			if (sig == SIGCHLD)
				continue;   /* reaped below, however many coalesced */
			if (kill(-main_pid, sig) != 0 && errno != ESRCH)
				log_line("forwarding signal %d: %s", sig, strerror(errno));
			if (sig == SIGTERM && !kill_at)
				kill_at = now_ms() + REAP_GRACE_MS;
		}
		reap_children(main_pid, &main_done, &main_status);
	}
	reap_kill_all();
	return timed_out ? 124 : reap_exit_code(main_status);
}
