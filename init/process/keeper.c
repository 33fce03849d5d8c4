/* keeper.c - see keeper.h. */
#define _GNU_SOURCE
#include "process/keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "process/reap.h"
#include "util/clock.h"
#include "util/io.h"

/* clone(2)'s flags in spawn_command; prctl(2)'s options in the child. */
static const uint64_t clone_flags[] = { CLONE_VM | CLONE_VFORK | SIGCHLD, CLONE_VFORK | SIGCHLD };
static const uint64_t prctl_options[] = { PR_SET_DUMPABLE, PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS,
					  PR_CAP_AMBIENT };
/* clang-format 14 reads a macro body that starts with '{' as a block: kept as written */
/* clang-format off */
#define ANY(name) { name, -1, NULL, 0 }
/* clang-format on */
/* The calls musl makes for open(2), poll(2) and dup2(2): aarch64 has only
 * their newer forms (policy/seccomp_arch.c). */
#if defined(__aarch64__)
#define KEEPER_ARCH_CALLS ANY("openat"), ANY("ppoll"), ANY("dup3")
#else
#define KEEPER_ARCH_CALLS ANY("open"), ANY("openat"), ANY("poll"), ANY("dup2")
#endif

/* clang-format 14 would put each entry of this table on a line of its own: kept as written */
/* clang-format off */
const struct scg_use keeper_calls[] = {
	/* the keeper: its socket and pipe, malloc, the command's start and end,
	 * the sweep of /proc (reap.c) */
	ANY("recvmsg"), ANY("sendmsg"), ANY("read"), ANY("write"), ANY("close"), ANY("brk"),
	ANY("mmap"), ANY("munmap"), ANY("mremap"), ANY("madvise"), ANY("getpid"),
	{ "clone", 0, clone_flags, 2 }, ANY("wait4"), ANY("kill"), KEEPER_ARCH_CALLS,
	ANY("getdents64"), ANY("clock_gettime"), ANY("exit_group"), ANY("exit"),
	/* the child, in spawn.c's order */
	ANY("setsid"), ANY("rt_sigaction"), ANY("rt_sigprocmask"), ANY("close_range"),
	ANY("setfsuid"), { "prctl", 0, prctl_options, 4 }, ANY("prlimit64"), ANY("setgroups"),
	ANY("setresgid"), ANY("setresuid"), ANY("capset"), ANY("capget"), ANY("getppid"),
	ANY("chdir"), ANY("landlock_restrict_self"), ANY("execve"),
	/* seccomp-notify: the connections' filter, over the keeper's (notify.h) */
	ANY("seccomp"),
};
/* clang-format on */
const size_t keeper_n_calls = N_ELEMENTS(keeper_calls);

/* What turninit sends a keeper: a header, then (KEEPER_JOB) len bytes: the
 * workdir, each argv word and each envp entry, every one NUL-ended (an empty
 * workdir: the manifest's). A job's header carries four fds: its stdin,
 * stdout and stderr, and the write end of its exec report (spawn.h). */
enum keeper_ctl_type { KEEPER_JOB = 1, KEEPER_CANCEL, KEEPER_FORWARD };

struct keeper_ctl {
	uint32_t type;
	uint32_t len;
	int32_t n_argv, n_env;
	int32_t sig; /* KEEPER_FORWARD */
};

static void keeper_send(int fd, const struct keeper_msg *m)
{
	/* One write of less than PIPE_BUF bytes: atomic. */
	(void)!write(fd, m, sizeof(*m));
}

/* Read exactly n bytes (blocking). Returns 0, or -1 at end of file or error. */
static int read_full(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n > 0) {
		ssize_t r = TEMP_FAILURE_RETRY(read(fd, p, n));

		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

#define JOB_FDS 4

/* The next header from turninit, and a job's fds into fds (else -1s).
 * Returns 0, or -1 at end of file (turninit is gone) or on a malformed one. */
static int ctl_read(int fd, struct keeper_ctl *c, int fds[JOB_FDS])
{
	char cbuf[CMSG_SPACE(JOB_FDS * sizeof(int))];
	struct iovec iov = { .iov_base = c, .iov_len = sizeof(*c) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t r;

	for (int i = 0; i < JOB_FDS; i++)
		fds[i] = -1;
	r = TEMP_FAILURE_RETRY(recvmsg(fd, &mh, MSG_CMSG_CLOEXEC));
	if (r <= 0)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(JOB_FDS * sizeof(int)))
		memcpy(fds, CMSG_DATA(cm), JOB_FDS * sizeof(int));
	if ((size_t)r < sizeof(*c) && read_full(fd, (char *)c + r, sizeof(*c) - (size_t)r) < 0)
		return -1;
	if ((c->type == KEEPER_JOB) != (fds[0] >= 0) || (mh.msg_flags & MSG_CTRUNC)) {
		for (int i = 0; i < JOB_FDS; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		return -1;
	}
	return 0;
}

/* Put the exec report's write end fd into the keeper's hand-over socket
 * (hand[0]) and close it here: the command's child takes it from hand[1]
 * (spawn.c), so that the keeper never holds it while the child runs, and
 * turninit sees the exec as that end's end of file without this process
 * having to run. Returns 0 or -errno. */
static int report_hand_over(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = "r", .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	int r = 0;

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	if (TEMP_FAILURE_RETRY(sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL)) != 1)
		r = -errno;
	close(fd);
	return r;
}

/* Close whatever the hand-over socket still holds: a report end that its
 * child did not take (it died first), so that turninit sees its end of file,
 * and no later command takes it. */
static void report_drain(int sock)
{
	for (;;) {
		char cbuf[CMSG_SPACE(sizeof(int))], b;
		struct iovec iov = { .iov_base = &b, .iov_len = 1 };
		struct msghdr mh = { .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;

		if (recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0)
			return;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
					int fd;

					memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
					close(fd);
				}
	}
}

/* Split a job's payload: the workdir, then n_argv and n_env strings, into
 * argv and envp (NULL-ended, pointing into buf). Returns 0, or -1 when the
 * payload does not hold exactly that. */
static int job_split(char *buf, size_t len, const struct keeper_ctl *c, char **workdir, char **argv,
		     char **envp)
{
	size_t off = 0;
	int n = 1 + c->n_argv + c->n_env;

	for (int i = 0; i < n; i++) {
		char *s = buf + off, *z = memchr(s, '\0', len - off);

		if (off >= len || !z)
			return -1;
		if (i == 0)
			*workdir = s;
		else if (i <= c->n_argv)
			argv[i - 1] = s;
		else
			envp[i - 1 - c->n_argv] = s;
		off = (size_t)(z - buf) + 1;
	}
	argv[c->n_argv] = envp[c->n_env] = NULL;
	return off == len ? 0 : -1;
}

/* Run one command of plan to its end, and report it; turninit's cancels and
 * signals arrive on job_fd meanwhile. */
static void keeper_one(const struct spawn_plan *plan, int job_fd, int msg_fd, int sfd)
{
	struct keeper_msg m = { .type = KEEPER_FAILED };
	struct tn_error err = { 0 };
	struct reap_term term = { .root = getpid() };
	bool exec_failed = false, none_left = false, gone = false;
	pid_t main_pid;
	int status = 0;

	int r = spawn_command(plan, &main_pid, &status, &exec_failed, &err);

	/* The child exec'd or ended: turninit knows which from its report
	 * (spawn.h). A report end it never took is closed here. */
	report_drain(plan->report_sock);
	if (r < 0) {
		m.wait_status = status;
		m.exec_failed = exec_failed;
		snprintf(m.msg, sizeof(m.msg), "%s", err.msg);
		keeper_send(msg_fd, &m);
		return;
	}
	m.pid = main_pid;
	term.pgid = main_pid;
	for (;;) {
		struct pollfd p[2] = { { .fd = sfd, .events = POLLIN },
				       { .fd = gone ? -1 : job_fd, .events = POLLIN } };
		struct signalfd_siginfo si;
		bool main_done = false;

		poll(p, 2, reap_term_tick(&term, clock_ms()));
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
		if (p[1].revents) {
			struct keeper_ctl c;
			int fds[JOB_FDS];

			if (ctl_read(job_fd, &c, fds) < 0 || c.type == KEEPER_JOB) {
				/* turninit gone, or a job while busy: it is not
				 * turninit speaking, so end the command */
				gone = true;
				for (int i = 0; i < JOB_FDS; i++)
					if (fds[i] >= 0)
						close(fds[i]);
				reap_term_start(&term, clock_ms());
			} else if (c.type == KEEPER_CANCEL) {
				reap_term_start(&term, clock_ms());
			} else if (c.type == KEEPER_FORWARD) {
				kill(-main_pid, c.sig);
			}
		}
		for (;;) {
			int st;
			pid_t w = waitpid(-1, &st, WNOHANG);

			/* ECHILD: no child, so no descendant either (an orphan is
			 * reparented to this subreaper before its parent can be
			 * reaped): nothing to look for in /proc. */
			none_left = w < 0 && errno == ECHILD;
			if (w <= 0)
				break;
			if (w == main_pid) {
				status = st;
				main_done = true;
				m.end_ms = clock_ms();
			}
		}
		if (main_done)
			break;
	}
	/* Whatever the command left running ends with it: an idle keeper has
	 * no child. */
	if (!none_left)
		reap_kill_all();
	m.type = KEEPER_EXITED;
	m.wait_status = status;
	keeper_send(msg_fd, &m);
	if (gone)
		_exit(0);
}

/* The keeper process: never returns. */
static void __attribute__((noreturn)) keeper_main(const struct spawn_base *base, int job_fd, int msg_fd)
{
	/* seccomp-notify: each command's process hands its listener to
	 * turninit on notify_wr (notify.h) */
	int keep[4] = { job_fd, msg_fd, base->landlock->fd, base->notify_sock };
	sigset_t set;
	int sfd, hand[2];
	/* Its dispositions are turninit's at the fork (SIGPIPE ignored) and
	 * never change: a command resets only those that are not SIG_DFL. */
	uint64_t sig_reset = spawn_signals_to_reset();
	bool filtered = false;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	spawn_close_fds(keep, 4);
	/* The blocked set is turninit's (reap_block_signals); only SIGCHLD is
	 * read here. Without a signalfd the keeper cannot wait for both its
	 * command and turninit: it ends, and turninit reports the command
	 * it was given as lost. */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	/* The hand-over socket of the exec reports (report_hand_over). */
	if (sfd < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, hand) != 0)
		_exit(0);
	/* The turn's filter once, here, when it refuses nothing this keeper and
	 * the set-up of its commands call (turn.c): each command inherits it.
	 * If it cannot be loaded here, each command loads it, and fails closed
	 * there as in one-shot mode. */
	if (base->filter_in_keeper)
		filtered = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && sc_load(base->filter) == 0;
	for (;;) {
		struct keeper_ctl c;
		int fds[JOB_FDS];
		char *buf, **argv, **envp, *workdir = NULL;
		int r;

		if (ctl_read(job_fd, &c, fds) < 0)
			_exit(0); /* turninit closed the socket: the turn is over */
		if (c.type != KEEPER_JOB)
			continue; /* a cancel or signal for a command that has ended */
		buf = malloc(c.len ? c.len : 1);
		argv = calloc((size_t)c.n_argv + 1, sizeof(*argv));
		envp = calloc((size_t)c.n_env + 1, sizeof(*envp));
		if (!buf || !argv || !envp || c.n_argv < 1 || c.n_env < 0 ||
		    read_full(job_fd, buf, c.len) < 0 ||
		    job_split(buf, c.len, &c, &workdir, argv, envp) < 0) {
			struct keeper_msg m = { .type = KEEPER_FAILED, .wait_status = 125 << 8 };

			snprintf(m.msg, sizeof(m.msg), "the keeper could not read the command");
			keeper_send(msg_fd, &m);
		} else if ((r = report_hand_over(hand[0], fds[3])) < 0) {
			struct keeper_msg m = { .type = KEEPER_FAILED, .wait_status = 125 << 8 };

			fds[3] = -1;
			snprintf(m.msg, sizeof(m.msg), "the keeper could not hand over the exec report: %s",
				 strerror(-r));
			keeper_send(msg_fd, &m);
		} else {
			struct spawn_plan plan = spawn_plan_from(base, argv, envp,
								 workdir[0] ? workdir : NULL, fds[0], fds[1],
								 fds[2]);

			fds[3] = -1; /* closed: the hand-over socket holds it */
			plan.sig_reset = sig_reset;
			plan.filter_loaded = filtered;
			plan.report_sock = hand[1];

			keeper_one(&plan, job_fd, msg_fd, sfd);
		}
		for (int i = 0; i < JOB_FDS; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		free(buf);
		free(argv);
		free(envp);
	}
}

int keeper_start(const struct spawn_base *base, struct keeper *ret, struct tn_error *err)
{
	int sv[2], pp[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return err_errno(err, errno, "socketpair");
	if (pipe2(pp, O_CLOEXEC) != 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		return err_errno(err, e, "pipe");
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		close(pp[0]);
		close(pp[1]);
		return err_errno(err, e, "fork");
	}
	if (pid == 0) {
		close(sv[0]);
		close(pp[0]);
		keeper_main(base, sv[1], pp[1]);
	}
	close(sv[1]);
	close(pp[1]);
	*ret = (struct keeper){ .pid = pid, .msg_fd = pp[0], .job_fd = sv[0] };
	return 0;
}

static int ctl_send(const struct keeper *k, const struct keeper_ctl *c, const int *fds)
{
	char cbuf[CMSG_SPACE(JOB_FDS * sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)c, .iov_len = sizeof(*c) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	if (fds) {
		struct cmsghdr *cm;

		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(JOB_FDS * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, JOB_FDS * sizeof(int));
	}
	r = TEMP_FAILURE_RETRY(sendmsg(k->job_fd, &mh, MSG_NOSIGNAL));
	if (r < 0)
		return -errno;
	/* A stream socket may take a header in parts; the fds went with the first. */
	for (size_t off = (size_t)r; off < sizeof(*c); off += (size_t)r) {
		r = TEMP_FAILURE_RETRY(
			send(k->job_fd, (const char *)c + off, sizeof(*c) - off, MSG_NOSIGNAL));
		if (r < 0)
			return -errno;
	}
	return 0;
}

int keeper_run(struct keeper *k, char *const *argv, char *const *envp, const char *workdir, const int fds[4],
	       struct tn_error *err)
{
	struct keeper_ctl c = { .type = KEEPER_JOB };
	size_t len = strlen(workdir ? workdir : "") + 1;
	char *buf, *p;
	int r;

	for (; argv[c.n_argv]; c.n_argv++)
		len += strlen(argv[c.n_argv]) + 1;
	for (; envp[c.n_env]; c.n_env++)
		len += strlen(envp[c.n_env]) + 1;
	if (len > KEEPER_JOB_MAX)
		return err_set(err, E2BIG,
			       "the command, its environment and workdir take %zu bytes, more than %u", len,
			       KEEPER_JOB_MAX);
	if (!(buf = p = malloc(len)))
		return err_set(err, ENOMEM, "out of memory");
	p = stpcpy(p, workdir ? workdir : "") + 1;
	for (int i = 0; i < c.n_argv; i++)
		p = stpcpy(p, argv[i]) + 1;
	for (int i = 0; i < c.n_env; i++)
		p = stpcpy(p, envp[i]) + 1;
	c.len = (uint32_t)len;
	/* an idle keeper stopped from outside (SIGSTOP by root) would never
	 * answer, and turninit waits for its answer */
	kill(k->pid, SIGCONT);
	r = ctl_send(k, &c, fds);
	if (r == 0)
		r = io_send_all(k->job_fd, buf, len);
	free(buf);
	if (r < 0)
		return err_errno(err, -r, "giving the command to its keeper");
	return 0;
}

int keeper_read(const struct keeper *k, struct keeper_msg *msg)
{
	ssize_t n;

	n = TEMP_FAILURE_RETRY(read(k->msg_fd, msg, sizeof(*msg)));
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
	const struct keeper_ctl c = { .type = KEEPER_CANCEL };

	/* a keeper stopped from outside (SIGSTOP by root) must still end its command */
	kill(k->pid, SIGCONT);
	(void)ctl_send(k, &c, NULL);
}

void keeper_forward(const struct keeper *k, int sig)
{
	const struct keeper_ctl c = { .type = KEEPER_FORWARD, .sig = sig };

	(void)ctl_send(k, &c, NULL);
}

void keeper_stop(struct keeper *k, uint64_t deadline_ms)
{
	if (k->job_fd >= 0)
		close(k->job_fd);
	if (k->pid > 0 && k->msg_fd >= 0) {
		/* Its message pipe reaches end of file when it has exited (no
		 * command holds it: spawn closes every other fd); only one that
		 * has not is killed, so a pid already reaped is never signalled. */
		for (;;) {
			struct pollfd p = { .fd = k->msg_fd, .events = POLLIN };
			uint64_t now = clock_ms();
			char sink[sizeof(struct keeper_msg)];

			if (poll(&p, 1, now >= deadline_ms ? 0 : (int)(deadline_ms - now)) > 0 &&
			    read(k->msg_fd, sink, sizeof(sink)) == 0)
				break;
			if (clock_ms() >= deadline_ms) {
				kill(k->pid, SIGKILL);
				break;
			}
		}
		/* Reaped here when it is gone by the deadline, else by
		 * turninit's loop (waitpid(-1) at each SIGCHLD): never a
		 * wait without a bound, since a keeper killed while a tracer
		 * holds it is reapable only once the tracer lets go. */
		for (;;) {
			pid_t w = waitpid(k->pid, NULL, WNOHANG);

			if (w != 0 || clock_ms() >= deadline_ms)
				break;
			poll(NULL, 0, 1);
		}
	}
	if (k->msg_fd >= 0)
		close(k->msg_fd);
	*k = (struct keeper){ .pid = 0, .msg_fd = -1, .job_fd = -1 };
}
