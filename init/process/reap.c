/* reap.c - see reap.h. */
#define _GNU_SOURCE
#include "process/reap.h"

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

#include "policy/cleanup.h"
#include "util/clock.h"
#include "util/exit_codes.h"
#include "util/io.h"
#include "util/log.h"

/* Forwarded to the command's process group (docs/design.md, "Signals"). */
static const int reap_forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

static void reap_set(sigset_t *s)
{
	sigemptyset(s);
	sigaddset(s, SIGCHLD);
	for (size_t i = 0; i < N_ELEMENTS(reap_forwarded); i++)
		sigaddset(s, reap_forwarded[i]);
}

void reap_block_signals(void)
{
	sigset_t s;

	/* Every signal: those not handled stay pending and harmless, so a stray
	 * SIGALRM or SIGPIPE cannot kill turninit when it is not PID 1 (as PID 1
	 * the kernel drops them anyway). Faults still kill: the kernel forces them. */
	sigfillset(&s);
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
		return err_errno(err, errno, "signalfd");
	if (getpid() != 1 && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		int e = errno;

		close(fd);
		return err_errno(err, e, "PR_SET_CHILD_SUBREAPER");
	}
	*ret_fd = fd;
	return 0;
}

int reap_exit_code(int st)
{
	if (WIFSIGNALED(st))
		return EXIT_SIGNAL_BASE + WTERMSIG(st);
	return WEXITSTATUS(st);
}

/* Reap every exited child; note main's status. */
static void reap_children(pid_t main_pid, bool *main_done, int *main_status)
{
	for (;;) {
		int st;
		pid_t p = TEMP_FAILURE_RETRY(waitpid(-1, &st, WNOHANG));

		if (p <= 0)
			return;
		if (p == main_pid) {
			*main_done = true;
			*main_status = st;
		}
	}
}

/* The next pid of an open /proc/PID/task/TID/children file ("PID PID ...
 * ": decimal pids, one space after each), or 0 at its end. */
static pid_t reap_next_pid(FILE *f)
{
	char buf[32];
	size_t len = 0;

	for (;;) {
		int ch = getc(f);

		if (ch >= '0' && ch <= '9' && len < sizeof(buf) - 1) {
			buf[len++] = (char)ch;
			continue;
		}
		if (len) {
			buf[len] = '\0';
			return (pid_t)strtol(buf, NULL, 10);
		}
		if (ch == EOF)
			return 0;
	}
}

/* reap_signal_descendants, but a process of process group skip (> 0) is not
 * signalled again: kill(-skip) reached it already, and a second SIGTERM that
 * arrives once its trap has run would run the trap twice. */
static int reap_signal_tree(pid_t root, int sig, pid_t skip)
{
	char path[300];
	int n = 0;
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)root);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		_cleanup_fclose_ FILE *f = NULL;
		pid_t p;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", (int)root, e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while ((p = reap_next_pid(f)) > 0) {
			if ((skip <= 0 || getpgid(p) != skip) && kill(p, sig) == 0)
				n++;
			n += reap_signal_tree(p, sig, skip);
		}
	}
	return n;
}

int reap_signal_descendants(pid_t root, int sig)
{
	return reap_signal_tree(root, sig, 0);
}

int reap_is_descendant(pid_t pid, pid_t root)
{
	for (int depth = 0; depth < 4096; depth++) {
		char path[64], line[256];
		FILE *f;
		long ppid = -1;

		if (pid == root)
			return 1;
		if (pid <= 0)
			return 0;
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
		f = fopen(path, "re");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "PPid:", 5) == 0) {
				char *end;

				ppid = strtol(line + 5, &end, 10);
				if (end == line + 5 || (*end != '\n' && *end != '\0'))
					ppid = -1;
				break;
			}
		fclose(f);
		if (ppid < 0)
			return -1;
		pid = (pid_t)ppid;
	}
	return -1;
}

/* sig to the command's process group and to every descendant of root. */
static void reap_term_send(const struct reap_term *t, int sig)
{
	kill(-t->pgid, sig);
	reap_signal_tree(t->root, sig, t->pgid);
}

void reap_term_start(struct reap_term *t, uint64_t now)
{
	if (t->started)
		return;
	t->started = true;
	reap_term_send(t, SIGTERM);
	reap_term_send(t, SIGCONT);
	t->kill_at = now + REAP_GRACE_MS;
}

int reap_term_tick(struct reap_term *t, uint64_t now)
{
	if (!t->kill_at)
		return -1;
	if (now < t->kill_at)
		return (int)(t->kill_at - now);
	reap_term_send(t, SIGKILL);
	t->kill_at = 0;
	return -1;
}

/* SIGKILL every descendant: as PID 1, kill(-1) reaches every process of the
 * PID namespace; as a subreaper, kill the whole tree below us, reap, and go
 * again until no child is left (orphans of a killed process are reparented to
 * us and found in the next round). */
void reap_kill_all(void)
{
	if (getpid() == 1)
		kill(-1, SIGKILL);
	for (;;) {
		reap_signal_descendants(getpid(), SIGKILL);
		if (waitpid(-1, NULL, 0) < 0 && errno != EINTR)
			return; /* ECHILD: none left */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}

/* The children of pid, from /proc/PID/task/TID/children (turninit and a keeper
 * run one thread); at most max of them. Returns how many. */
static size_t reap_children_of(pid_t pid, pid_t *out, size_t max)
{
	char path[64];
	size_t n = 0;
	pid_t p;
	_cleanup_fclose_ FILE *f = NULL;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (n < max && (p = reap_next_pid(f)) > 0)
		out[n++] = p;
	return n;
}

int reap_kill_strays(const pid_t *keep, size_t n, pid_t lost, uint64_t deadline_ms)
{
	int killed = 0;

	for (;;) {
		pid_t kids[256];
		size_t nk = reap_children_of(getpid(), kids, N_ELEMENTS(kids));
		bool found = false;
		int before = killed;

		if (lost > 0)
			killed += reap_signal_descendants(lost, SIGKILL);
		for (size_t i = 0; i < nk; i++) {
			bool keeper = false;

			for (size_t j = 0; j < n && !keeper; j++)
				keeper = kids[i] == keep[j];
			if (keeper || kids[i] == lost)
				continue;
			found = true;
			if (kill(kids[i], SIGKILL) == 0)
				killed++;
			killed += reap_signal_descendants(kids[i], SIGKILL);
			/* its orphans are reparented to turninit as it is reaped */
			(void)waitpid(kids[i], NULL, WNOHANG);
		}
		/* Done only after a pass that found and killed nothing: a
		 * process killed in this pass may die before its children were
		 * walked (on another CPU), which reparents them to turninit,
		 * where only the next pass sees them (a loaded machine left the
		 * two setsid children of f-keeper-lost running). */
		if (!found && killed == before && (lost <= 0 || reap_children_of(lost, kids, 1) == 0))
			return killed;
		if (clock_ms() >= deadline_ms)
			return -ETIMEDOUT;
		poll(NULL, 0, 1); /* SIGKILL is delivered at the next return to user space */
	}
}

/* reap_run_one's held lines: what fd has now, appended while it fits. */
static char held[REAP_HELD_MAX];
static size_t held_len;
static uint64_t held_dropped;

static void held_read(int *fd)
{
	char tmp[4096];
	ssize_t n = -1;

	while (*fd >= 0 && (n = read(*fd, tmp, sizeof(tmp))) > 0) {
		size_t k = sizeof(held) - held_len < (size_t)n ? sizeof(held) - held_len : (size_t)n;

		memcpy(held + held_len, tmp, k);
		held_len += k;
		held_dropped += (size_t)n - k;
	}
	if (*fd >= 0 && n == 0) { /* every writer gone: no more to wait for */
		close(*fd);
		*fd = -1;
	}
}

/* After the command: the whole lines held, then what was not shown. */
static void held_write(void)
{
	size_t whole = held_len;

	while (whole && held[whole - 1] != '\n')
		whole--;
	held_dropped += held_len - whole;
	(void)io_write_all(STDERR_FILENO, held, whole);
	if (held_dropped)
		log_line("net: %llu more bytes of the proxy's lines not shown (%u KiB held at most until the command's end)",
			 (unsigned long long)held_dropped, REAP_HELD_MAX / 1024);
	held_len = 0;
	held_dropped = 0;
}

int reap_run_one(int sfd, pid_t main_pid, uint64_t timeout_ms, int held_fd)
{
	uint64_t start = clock_ms();
	uint64_t deadline = timeout_ms ? start + timeout_ms : 0; /* 0: none */
	bool holds = held_fd >= 0;
	struct reap_term term = { .pgid = main_pid, .root = getpid() };
	bool main_done = false, timed_out = false;
	int main_status = 0;

	reap_children(main_pid, &main_done, &main_status);
	while (!main_done) {
		struct pollfd pfd[2] = { { .fd = sfd, .events = POLLIN },
					 { .fd = held_fd, .events = POLLIN } };
		uint64_t t = clock_ms();
		struct signalfd_siginfo si;
		int wait_ms;

		if (deadline && t >= deadline && !timed_out) {
			timed_out = true;
			reap_term_start(&term, t);
		}
		wait_ms = reap_term_tick(&term, t);
		if (deadline && !timed_out && (wait_ms < 0 || deadline - t < (uint64_t)wait_ms))
			wait_ms = (int)(deadline - t);
		if (poll(pfd, 2, wait_ms) < 0 && errno != EINTR) {
			log_errno(errno, "poll");
			continue;
		}
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			int sig = (int)si.ssi_signo;

			if (sig == SIGCHLD)
				continue; /* reaped below, however many coalesced */
			if (sig == SIGTERM) {
				reap_term_start(&term, clock_ms());
				continue;
			}
			if (kill(-main_pid, sig) != 0 && errno != ESRCH)
				log_errno(errno, "forwarding signal %d", sig);
		}
		held_read(&held_fd);
		reap_children(main_pid, &main_done, &main_status);
	}
	reap_kill_all();
	if (holds) {
		held_read(&held_fd); /* its writers are gone: what they left */
		held_write();
	}
	return timed_out ? EXIT_TIMED_OUT : reap_exit_code(main_status);
}
