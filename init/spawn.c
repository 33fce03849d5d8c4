/* spawn.c - see spawn.h. */
#define _GNU_SOURCE
#include "spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* What a child that failed before execve reports on the error pipe. */
struct spawn_report {
	int exec_failed;    /* 1: execve failed, 0: a setup step failed */
	int errnum;
	char msg[TN_ERROR_MSG_MAX];
};

char **spawn_argv(char *const *words, int n)
{
	char **v = calloc((size_t)n + 7, sizeof(*v));
	int k = 0;

	if (!v || n < 1) {
		free(v);
		return NULL;
	}
	v[k++] = "bash";
	v[k++] = "--noprofile";
	v[k++] = "--norc";
	v[k++] = "-c";
	if (n == 1) {
		v[k++] = words[0];
	} else {
		v[k++] = "exec \"$@\"";
		v[k++] = "bash";
		for (int i = 0; i < n; i++)
			v[k++] = words[i];
	}
	v[k] = NULL;
	return v;
}

/* Close every fd above 2 except keep_a and keep_b (-1: none). close_range(2)
 * first; a runtime's seccomp profile may refuse it (older podman profiles do),
 * so fall back to closing what /proc/self/fd lists. */
static int close_fds_except(int keep_a, int keep_b)
{
	int lo = keep_a < keep_b ? keep_a : keep_b, hi = keep_a < keep_b ? keep_b : keep_a;
	unsigned from = 3;
	int keep[2] = { lo, hi };
	DIR *d;
	struct dirent *e;
	bool ok = true;

	for (int i = 0; i < 2 && ok; i++) {
		if (keep[i] < 3)
			continue;
		if ((unsigned)keep[i] > from)
			ok = syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0u) == 0;
		from = (unsigned)keep[i] + 1;
	}
	if (ok && syscall(SYS_close_range, from, ~0u, 0u) == 0)
		return 0;
	d = opendir("/proc/self/fd");
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (fd > 2 && fd != keep_a && fd != keep_b && fd != dirfd(d))
			close(fd);
	}
	closedir(d);
	return 0;
}

static int set_limit(int resource, rlim_t want)
{
	struct rlimit cur, lim;

	if (getrlimit(resource, &cur) != 0)
		return -errno;
	/* Lower only: raising a hard limit needs CAP_SYS_RESOURCE. */
	lim.rlim_max = (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < want) ? cur.rlim_max : want;
	lim.rlim_cur = lim.rlim_max;
	if (setrlimit(resource, &lim) != 0)
		return -errno;
	return 0;
}

static int child_setup(const struct spawn_plan *p, int report_fd, struct tn_error *err)
{
	sigset_t none;
	int r;

	/* A new session: no controlling tty, so TIOCSTI cannot reach a terminal,
	 * and the command is a process group turninit can signal as a whole. */
	if (setsid() < 0)
		return err_set(err, errno, "setsid: %s", strerror(errno));
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) != 0)
		return err_set(err, errno, "signal mask: %s", strerror(errno));
	r = close_fds_except(report_fd, p->landlock->fd);
	if (r < 0)
		return err_set(err, r, "closing fds: %s", strerror(-r));

	if ((r = set_limit(RLIMIT_CORE, 0)) < 0 ||
	    (r = set_limit(RLIMIT_NOFILE, p->limits->nofile)) < 0 ||
	    (r = set_limit(RLIMIT_NPROC, p->limits->nproc)) < 0 ||
	    (r = set_limit(RLIMIT_FSIZE, p->limits->fsize_bytes)) < 0)
		return err_set(err, r, "rlimits: %s", strerror(-r));

	/* securebits and the bounding set need CAP_SETPCAP: before the uid change. */
	r = caps_lock_down_before_setuid(err);
	if (r < 0)
		return r;
	/* Numeric ids only: no /etc/passwd, /etc/group or NSS, ever. */
	if (setgroups(0, NULL) != 0)
		return err_set(err, errno, "setgroups: %s", strerror(errno));
	if (setresgid(p->gid, p->gid, p->gid) != 0)
		return err_set(err, errno, "setresgid %u: %s", (unsigned)p->gid, strerror(errno));
	if (setresuid(p->uid, p->uid, p->uid) != 0)
		return err_set(err, errno, "setresuid %u: %s", (unsigned)p->uid, strerror(errno));
	r = caps_clear_all(err);
	if (r < 0)
		return r;
	/* chdir as the command's user: it must be able to enter its workdir. */
	if (chdir(p->workdir) != 0)
		return err_set(err, errno, "workdir %s: %s", p->workdir, strerror(errno));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return err_set(err, errno, "no_new_privs: %s", strerror(errno));
	r = ll_restrict(p->landlock);
	if (r < 0)
		return err_set(err, r, "landlock: %s", strerror(-r));
	/* seccomp last: the filter need not allow any setup syscall. */
	r = sc_load(p->filter);
	if (r < 0)
		return err_set(err, r, "seccomp filter: %s", strerror(-r));
	return 0;
}

static void child_report(int fd, int exec_failed, int errnum, const char *msg)
{
	struct spawn_report rep = { .exec_failed = exec_failed, .errnum = errnum };

	snprintf(rep.msg, sizeof(rep.msg), "%s", msg);
	(void)!write(fd, &rep, sizeof(rep));
}

int spawn_command(const struct spawn_plan *plan, pid_t *ret_pid, int *ret_status,
		  bool *ret_exec_failed, struct tn_error *err)
{
	struct spawn_report rep;
	int fds[2], status = 0;

	*ret_status = 125 << 8;
	*ret_exec_failed = false;
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) != 0)
		return err_set(err, errno, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(fds[0]);
		close(fds[1]);
		return err_set(err, e, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		struct tn_error cerr = { 0 };

		close(fds[0]);
		if (child_setup(plan, fds[1], &cerr) < 0) {
			child_report(fds[1], 0, cerr.code, cerr.msg);
			_exit(125);
		}
		execve(plan->shell, plan->argv, plan->envp);
		{
			int e = errno;
			char msg[TN_ERROR_MSG_MAX];

			snprintf(msg, sizeof(msg), "%s: %s", plan->shell, strerror(e));
			child_report(fds[1], 1, e, msg);
			_exit(e == ENOENT ? 127 : 126);
		}
	}
	close(fds[1]);
	/* EOF without a report: execve succeeded (the pipe was close-on-exec). */
	do
		n = read(fds[0], &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n == 0) {
		*ret_pid = pid;
		return 0;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	*ret_status = status;
	if (n != (ssize_t)sizeof(rep))
		return err_set(err, EIO, "command setup failed without a report");
	rep.msg[sizeof(rep.msg) - 1] = '\0';
	*ret_exec_failed = rep.exec_failed != 0;
	if (rep.exec_failed)
		return err_set(err, rep.errnum ? rep.errnum : EIO, "exec %s", rep.msg);
	return err_set(err, rep.errnum ? rep.errnum : EIO, "command setup: %s", rep.msg);
}
