/* spawn.c - see spawn.h. */
#define _GNU_SOURCE
#include "process/spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "sandbox/caps.h"
#include "sandbox/notify.h"
#include "util/exit_codes.h"

#define SPAWN_NSIG 64 /* the kernel's _NSIG on x86_64 */

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* The kernel's struct sigaction (rt_sigaction(2)). */
struct spawn_ksigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

/* What a child that failed before execve reports to its waiting parent. */
struct spawn_report {
	int exec_failed; /* 1: execve failed, 0: a setup step failed */
	int errnum;
	char msg[TN_ERROR_MSG_MAX];
};

char **spawn_argv(char *const *words, int n, bool argv_form)
{
	char **v = calloc((size_t)n + 8, sizeof(*v));
	int k = 0;

	if (!v || n < 1) {
		free(v);
		return NULL;
	}
	v[k++] = "bash";
	v[k++] = "--noprofile";
	v[k++] = "--norc";
	v[k++] = "-c";
	v[k++] = "--"; /* a command string starting with '-' is not an option */
	if (n == 1 && !argv_form) {
		v[k++] = words[0];
	} else {
		v[k++] = "exec -- \"$@\"";
		v[k++] = "bash";
		for (int i = 0; i < n; i++)
			v[k++] = words[i];
	}
	v[k] = NULL;
	return v;
}

uint64_t spawn_signals_to_reset(void)
{
	uint64_t set = 0;

	for (int sig = 1; sig <= SPAWN_NSIG; sig++) {
		struct spawn_ksigaction old;

		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		/* one that cannot be read is reset all the same */
		if (syscall(SYS_rt_sigaction, sig, NULL, &old, sizeof(old.mask)) != 0 ||
		    old.handler != SIG_DFL)
			set |= 1ull << (sig - 1);
	}
	return set;
}

/* close_range(2) first; a runtime's seccomp profile may refuse it (older podman
 * profiles do), so fall back to closing what /proc/self/fd lists. */
int spawn_close_fds(const int *keep, int n)
{
	int sorted[8], m = 0;
	unsigned from = 3;
	DIR *d;
	struct dirent *e;
	bool ok = true;

	for (int i = 0; i < n && m < 8; i++) {
		int k = keep[i], j = m++;

		if (k < 3) {
			m--;
			continue;
		}
		while (j > 0 && sorted[j - 1] > k) {
			sorted[j] = sorted[j - 1];
			j--;
		}
		sorted[j] = k;
	}
	for (int i = 0; i < m && ok; i++) {
		if ((unsigned)sorted[i] > from)
			ok = syscall(SYS_close_range, from, (unsigned)sorted[i] - 1, 0u) == 0;
		from = (unsigned)sorted[i] + 1;
	}
	if (ok && syscall(SYS_close_range, from, ~0u, 0u) == 0)
		return 0;
	d = opendir("/proc/self/fd");
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);
		bool kept = fd <= 2 || fd == dirfd(d);

		for (int i = 0; i < m && !kept; i++)
			kept = fd == sorted[i];
		if (!kept)
			close(fd);
	}
	closedir(d);
	return 0;
}

/* prlimit64(2) itself: musl's setrlimit(3) would run it in every thread
 * through __synccall, which a CLONE_VM child must not (its thread pointer is
 * its parent's). */
static int set_limit(int resource, rlim_t want)
{
	struct rlimit cur, lim;

	if (syscall(SYS_prlimit64, 0, resource, NULL, &cur) != 0)
		return -errno;
	/* Lower only: raising a hard limit needs CAP_SYS_RESOURCE. */
	lim.rlim_max = (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < want) ? cur.rlim_max : want;
	lim.rlim_cur = lim.rlim_max;
	if (syscall(SYS_prlimit64, 0, resource, &lim, NULL) != 0)
		return -errno;
	return 0;
}

/*
 * The steps of the command process, in the child of spawn_command's
 * clone(CLONE_VM | CLONE_VFORK): it shares turninit's (or the keeper's)
 * memory while that waits (not in non-root mode), so each calls only what
 * touches no lock or thread state of libc: raw system calls for the ids,
 * rlimits and capabilities. Each step: 0, or -errno with err set; the first
 * that fails ends the set-up, and the command is not run.
 */
struct spawn_env {
	pid_t parent;  /* the caller, which the child must still have at the end */
	int report_fd; /* the exec report's write end (spawn.h), or -1 */
};

typedef int spawn_step_fn(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err);

/* A new session: no controlling tty, so TIOCSTI cannot reach a terminal, and
 * the command is a process group turninit can signal as a whole. */
static int step_session(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err)
{
	(void)p, (void)env;
	if (setsid() < 0)
		return err_errno(err, errno, "setsid");
	return 0;
}

/* Every disposition to SIG_DFL, 32 to 34 included: musl's signal() and
 * sigaction() refuse those (libc-internal), and a SIG_IGN the caller set there
 * would survive execve. So the raw rt_sigaction(2), checked; then no signal
 * blocked. */
static int step_signals(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err)
{
	(void)env;
	for (int sig = 1; sig <= SPAWN_NSIG; sig++) {
		struct spawn_ksigaction ksa = { .handler = SIG_DFL };

		if (sig == SIGKILL || sig == SIGSTOP || !(p->sig_reset & (1ull << (sig - 1))))
			continue;
		if (syscall(SYS_rt_sigaction, sig, &ksa, NULL, sizeof(ksa.mask)) != 0)
			return err_errno(err, errno, "signal %d to its default", sig);
	}
	if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &(uint64_t){ 0 }, NULL, sizeof(uint64_t)) != 0)
		return err_errno(err, errno, "signal mask");
	return 0;
}

/* stdio from the plan, and every other fd closed but the Landlock ruleset's
 * (closed by its own step), the exec report's and seccomp-notify's socket
 * to turninit (both close-on-exec). */
static int step_fds(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err)
{
	int keep[3] = { p->landlock->fd, env->report_fd, p->notify_filter ? p->notify_sock : -1 };
	int r;

	for (int i = 0; i < 3; i++)
		if (p->stdio[i] >= 0 && p->stdio[i] != i && dup2(p->stdio[i], i) < 0)
			return err_errno(err, errno, "stdio");
	r = spawn_close_fds(keep, 3);
	if (r < 0)
		return err_errno(err, r, "closing fds");
	return 0;
}

/* The OOM killer takes a command before turninit or a keeper, however little
 * of its memory is resident (a memfd, tmpfs files): 1000 adds the whole limit
 * to its badness. Raising needs no capability, but the file of a process that
 * is not dumpable (turninit, so this child) belongs to root: opened with fsuid
 * 0 (CAP_SETUID, which turninit keeps, also when it runs as a uid of its own),
 * before the uid change. Landlock keeps the command from writing it back. */
static int step_oom_score(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err)
{
	/* Non-root mode has no CAP_SETUID: the file is the process's own while
	 * it is dumpable, for the open only (a command of the turn shares the
	 * uid, and this process is not locked down yet). */
	uid_t fsuid = p->nonroot ? 0 : (uid_t)setfsuid(0);
	int fd, e;

	(void)env;
	if (p->nonroot && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
		return err_errno(err, errno, "PR_SET_DUMPABLE");
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	e = fd < 0 ? errno : 0;
	if (p->nonroot)
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	else
		setfsuid(fsuid);
	if (fd >= 0 && write(fd, "1000", 4) != 4)
		e = errno;
	if (fd >= 0)
		close(fd);
	if (e)
		return err_errno(err, e, "/proc/self/oom_score_adj");
	return 0;
}

static int step_rlimits(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err)
{
	int r;

	(void)env;
	if ((r = set_limit(RLIMIT_CORE, 0)) < 0 || (r = set_limit(RLIMIT_NOFILE, p->limits->nofile)) < 0 ||
	    (r = set_limit(RLIMIT_NPROC, p->limits->nproc)) < 0 ||
	    (r = set_limit(RLIMIT_FSIZE, p->limits->fsize_bytes)) < 0)
		return err_errno(err, r, "rlimits");
	return 0;
}

/* The ids: the manifest's, numeric only (no /etc/passwd, /etc/group or NSS,
 * ever), no supplementary group. */
static int step_ids(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err)
{
	(void)env;
	if (p->nonroot) {
		/* No capability to lock securebits, drop the bounding set or the
		 * groups, or change ids: turninit's own are the command's, as
		 * mf_user_start checked; no_new_privs (set below, before
		 * anything is exec'd) keeps an exec from gaining anything. */
		uid_t ru, eu, su;
		gid_t rg, eg, sg;

		if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0 || ru != p->uid ||
		    eu != p->uid || su != p->uid || rg != p->gid || eg != p->gid || sg != p->gid)
			return err_set(err, EPERM, "non-root mode: the ids are not %u:%u", (unsigned)p->uid,
				       (unsigned)p->gid);
		return 0;
	}
	/* securebits and the bounding set are turninit's, locked and emptied
	 * once per turn (caps_lock_down). The system calls themselves, for this
	 * one thread (musl's wrappers go through __synccall). */
	if (syscall(SYS_setgroups, 0, NULL) != 0)
		return err_errno(err, errno, "setgroups");
	if (syscall(SYS_setresgid, p->gid, p->gid, p->gid) != 0)
		return err_errno(err, errno, "setresgid %u", (unsigned)p->gid);
	if (syscall(SYS_setresuid, p->uid, p->uid, p->uid) != 0)
		return err_errno(err, errno, "setresuid %u", (unsigned)p->uid);
	return 0;
}

static int step_capabilities(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err)
{
	(void)p, (void)env;
	return caps_clear_all(err);
}

/* If turninit dies (when not PID 1: a SIGKILL), the command dies with it.
 * After the uid change, which clears the parent-death signal. */
static int step_parent_death(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err)
{
	(void)p;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		return err_errno(err, errno, "PR_SET_PDEATHSIG");
	if (getppid() != env->parent)
		return err_set(err, ESRCH, "turninit ended before the command started");
	return 0;
}

/* chdir as the command's user: it must be able to enter its workdir. */
static int step_workdir(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err)
{
	(void)env;
	if (chdir(p->workdir) != 0)
		return err_errno(err, errno, "workdir %s", p->workdir);
	return 0;
}

static int step_no_new_privs(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err)
{
	(void)p, (void)env;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return err_errno(err, errno, "no_new_privs");
	return 0;
}

static int step_landlock(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err)
{
	int r;

	(void)env;
	r = ll_restrict(p->landlock);
	if (r < 0)
		return err_errno(err, r, "landlock");
	return 0;
}

/* seccomp last: the filter need not allow any setup syscall. Under a keeper
 * that loaded it, it is inherited, and spares every call above (keeper.h,
 * keeper_calls). */
static int step_seccomp(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err)
{
	int r;

	(void)env;
	if (p->notify_filter) {
		r = sc_load_listener(p->notify_filter);
		if (r < 0)
			return err_errno(err, -r, "seccomp filter of the connections (seccomp-notify)");
		r = notify_hello_send(p->notify_sock, r, p->envp);
		if (r < 0)
			return err_errno(err, -r, "seccomp-notify: the listener handed to turninit");
	}
	r = p->filter_loaded ? 0 : sc_load(p->filter);
	if (r < 0)
		return err_errno(err, r, "seccomp filter");
	return 0;
}

/* The set-up of a command, in the one order that works (docs/design.md, "The
 * steps of PID 1", 9): the session before the ids; the oom_score_adj file
 * opened before the uid change; the parent-death signal after it (which
 * clears it); workdir as the command's user; no_new_privs before Landlock,
 * which requires it without CAP_SYS_ADMIN; seccomp last, so that its filter
 * need allow none of the calls above. spawn_step_name lists them. */
static const struct {
	const char *name;
	spawn_step_fn *run;
} spawn_steps[] = {
	{ "session", step_session },
	{ "signals", step_signals },
	{ "fds", step_fds },
	{ "oom_score_adj", step_oom_score },
	{ "rlimits", step_rlimits },
	{ "ids", step_ids },
	{ "capabilities", step_capabilities },
	{ "parent_death", step_parent_death },
	{ "workdir", step_workdir },
	{ "no_new_privs", step_no_new_privs },
	{ "landlock", step_landlock },
	{ "seccomp", step_seccomp },
};

const char *spawn_step_name(size_t i)
{
	return i < N_ELEMENTS(spawn_steps) ? spawn_steps[i].name : NULL;
}

static int child_setup(const struct spawn_plan *p, const struct spawn_env *env, struct tn_error *err)
{
	for (size_t i = 0; i < N_ELEMENTS(spawn_steps); i++) {
		int r = spawn_steps[i].run(p, env, err);

		if (r < 0)
			return r;
	}
	return 0;
}

struct spawn_plan spawn_plan_of(const struct mf_manifest *m, char *const *argv, char *const *envp,
				const char *workdir, const struct ll_ruleset *landlock,
				const struct sc_program *filter, int in_fd, int out_fd, int err_fd)
{
	return (struct spawn_plan){
		.shell = m->shell,
		.argv = argv,
		.envp = envp,
		.uid = m->uid,
		.gid = m->gid,
		.workdir = workdir ? workdir : m->workdir,
		.limits = &m->limits,
		.landlock = landlock,
		.filter = filter,
		.stdio = { in_fd, out_fd, err_fd },
		.sig_reset = ~0ull,
		.report_sock = -1,
		.notify_sock = -1,
	};
}

struct spawn_plan spawn_plan_from(const struct spawn_base *base, char *const *argv, char *const *envp,
				  const char *workdir, int in_fd, int out_fd, int err_fd)
{
	struct spawn_plan p = spawn_plan_of(base->m, argv, envp, workdir, base->landlock, base->filter, in_fd,
					    out_fd, err_fd);

	p.nonroot = base->nonroot;
	if (base->notify_filter) {
		p.notify_filter = base->notify_filter;
		p.notify_sock = base->notify_sock;
	}
	return p;
}

/* What the clone child gets: the plan, its parent, and where it reports a
 * failure (in the parent's memory, which it shares until it execs or exits). */
struct spawn_child {
	const struct spawn_plan *plan;
	pid_t parent;
	struct spawn_report *rep;
};

/* The exec report's write end, which the keeper left in its hand-over socket
 * for this child alone (keeper.c): received close-on-exec, so this process
 * is its only holder and the execve closes it. Returns the fd, or -errno
 * (-EIO: a message without exactly one fd). */
static int report_take(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))], b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT) != 1)
		return errno ? -errno : -EIO;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int)) || (mh.msg_flags & MSG_CTRUNC))
		return -EIO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	return fd;
}

static int __attribute__((noreturn)) spawn_child_main(void *arg)
{
	const struct spawn_child *c = arg;
	struct spawn_env env = { .parent = c->parent, .report_fd = -1 };
	struct tn_error cerr = { 0 };
	/* asked before the set-up: a filter loaded in the command may refuse it */
	int32_t pid = (int32_t)syscall(SYS_getpid);
	int e, r = 0;

	if (c->plan->report_sock >= 0 && (env.report_fd = report_take(c->plan->report_sock)) < 0)
		r = err_errno(&cerr, -env.report_fd, "the exec report");
	if (r == 0)
		r = child_setup(c->plan, &env, &cerr);
	/* The pid, last before the execve: its end of file without a word
	 * after it is the exec (spawn.h). */
	if (r == 0 && env.report_fd >= 0 && write(env.report_fd, &pid, sizeof(pid)) != (ssize_t)sizeof(pid))
		r = err_errno(&cerr, errno ? errno : EIO, "the exec report");
	if (r < 0) {
		c->rep->errnum = cerr.code ? cerr.code : EIO;
		snprintf(c->rep->msg, sizeof(c->rep->msg), "%s", cerr.msg);
		_exit(EXIT_REFUSED);
	}
	execve(c->plan->shell, c->plan->argv, c->plan->envp);
	e = errno;
	if (env.report_fd >= 0)
		(void)!write(env.report_fd, "F", 1); /* the exec failed: not a start */
	c->rep->exec_failed = 1;
	c->rep->errnum = e ? e : EIO;
	snprintf(c->rep->msg, sizeof(c->rep->msg), "%s: %s", c->plan->shell, strerror(e));
	_exit(e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
}

/* The child's stack: its deepest path (snprintf of a message, the /proc/self/fd
 * fallback of spawn_close_fds) uses a few KiB. */
#define SPAWN_STACK (64 * 1024)

int spawn_command(const struct spawn_plan *plan, pid_t *ret_pid, int *ret_status, bool *ret_exec_failed,
		  struct tn_error *err)
{
	/* CLONE_VM | CLONE_VFORK, as posix_spawn(3) does: no copy of the
	 * caller's page tables, and the caller waits until the child has exec'd
	 * or exited, so the report needs no pipe: a failure is written here.
	 * Non-root mode clones without CLONE_VM: its child makes its memory
	 * dumpable for a moment (the oom_score_adj step), and with a shared mm
	 * that would be the caller's too, open to a command of the same uid
	 * (/proc/PID/mem). Its report then goes through a shared page. */
	static _Alignas(16) char stack[SPAWN_STACK];
	struct spawn_report local = { 0 }, *rep = &local;
	struct spawn_child c = { .plan = plan, .parent = getpid() };
	int status = 0, flags = CLONE_VM | CLONE_VFORK | SIGCHLD, r = 0;
	pid_t pid;

	*ret_status = EXIT_REFUSED << 8;
	*ret_exec_failed = false;
	if (plan->nonroot) {
		flags = CLONE_VFORK | SIGCHLD;
		rep = mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (rep == MAP_FAILED)
			return err_errno(err, errno, "mmap");
	}
	c.rep = rep;
	pid = clone(spawn_child_main, stack + sizeof(stack), flags, &c);
	if (pid < 0) {
		r = err_errno(err, errno, "clone");
	} else if (rep->errnum == 0) {
		*ret_pid = pid;
	} else {
		TEMP_FAILURE_RETRY(waitpid(pid, &status, 0));
		*ret_status = status;
		rep->msg[sizeof(rep->msg) - 1] = '\0';
		*ret_exec_failed = rep->exec_failed != 0;
		if (rep->exec_failed)
			r = err_set(err, rep->errnum, "exec %s", rep->msg);
		else
			r = err_set(err, rep->errnum, "command setup: %s", rep->msg);
	}
	if (rep != &local)
		munmap(rep, sizeof(*rep));
	return r;
}
