/* kfeatures.c - ask the kernel, outside turninit and outside any container,
 * which of the features the suites rely on it has.
 *
 * A test that relies on a kernel feature asks this program first and is
 * skipped, with the reason it prints, where the kernel lacks the feature
 * (docs/testing.md, "Kernel features"). It is never a guess: each answer is
 * the outcome of the call itself, made bare (no seccomp filter: a process
 * under one cannot tell the kernel's answer from the filter's, and says so).
 *
 * usage: kfeatures          every feature, one line each: NAME ANSWER: WHY
 *        kfeatures NAME...  those features only
 *        kfeatures --line   one summary line for the top of `make check`:
 *                           "# kernel 6.1.0: int80 no, x32 yes, landlock 4, ..."
 *
 * ANSWER is "yes", "no", a number (landlock: its ABI, 0 for none), a cgroup
 * layout ("v1", "v2", "hybrid") or "unknown" (the question could not be put;
 * WHY says why; a suite treats it as "yes" and lets the test speak). The
 * features:
 *   int80     the i386 entry `int $0x80` reaches the kernel: a forked child
 *             calls getpid (i386 number 20) through it; "yes" when it returns
 *             the child's pid, "no" when the child dies of SIGSEGV (a kernel
 *             without IA32 emulation, or booted with ia32_emulation=0), any
 *             other outcome "unknown" with what happened
 *   x32       the x32 ABI: getpid | 0x40000000 returns the pid, or ENOSYS
 *             (both "no" on another architecture, with that reason)
 *   x86_64    the machine is x86_64 (the i386 and x32 entries exist at all)
 *   landlock  landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
 *             (Documentation/userspace-api/landlock.rst): the ABI, 0 when
 *             ENOSYS or EOPNOTSUPP (built without it, or not in lsm=)
 *   cgroup    statfs(/sys/fs/cgroup): cgroup2 "v2"; a tmpfs with a cgroup2
 *             "unified" below it "hybrid"; otherwise "v1"
 *   oom_kill  the OOM kill counter of this process's memory cgroup:
 *             memory.events (v2) or memory.oom_control (v1) has "oom_kill"
 *   userns    CONFIG_USER_NS: a forked child's unshare(CLONE_NEWUSER) as root
 *   unpriv_userns  the same as uid 65534 with no capability (sysctls
 *             kernel.unprivileged_userns_clone, user.max_user_namespaces and
 *             AppArmor's restriction all show here)
 *   io_uring  io_uring_setup(1, params) succeeds (kernel.io_uring_disabled and
 *             CONFIG_IO_URING show here)
 *
 * Exit status 0, or 2 for a usage error. Built static (make helpers) into
 * build/helpers/kfeatures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define KF_X32_SYSCALL_BIT 0x40000000L
#define KF_I386_GETPID 20            /* arch/x86/entry/syscalls/syscall_32.tbl */
#define KF_LANDLOCK_VERSION 1u       /* LANDLOCK_CREATE_RULESET_VERSION */
#define KF_CGROUP2_MAGIC 0x63677270L /* linux/magic.h */
#define KF_TMPFS_MAGIC 0x01021994L
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif

/* One answer: ANSWER and WHY, as printed. */
struct kf_answer {
	char answer[32];
	char why[200];
};

static void kf_set(struct kf_answer *a, const char *answer, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void kf_set(struct kf_answer *a, const char *answer, const char *fmt, ...)
{
	va_list ap;

	snprintf(a->answer, sizeof(a->answer), "%s", answer);
	va_start(ap, fmt);
	vsnprintf(a->why, sizeof(a->why), fmt, ap);
	va_end(ap);
}

/* Seccomp: the mode of this process (/proc/self/status), -1 when unreadable. */
static int kf_seccomp_mode(void)
{
	char line[256];
	int mode = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	fclose(f);
	return mode;
}

/* Run fn in a forked child as its exit status; ret_status: waitpid's status.
 * Returns 0, or -errno when fork or waitpid failed. */
static int kf_in_child(int (*fn)(void), int *ret_status)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* A death by signal must stay a death by that signal: no core. */
		prctl(PR_SET_DUMPABLE, 0);
		_exit(fn());
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	*ret_status = status;
	return 0;
}

#if defined(__x86_64__)
static int kf_int80_child(void)
{
	int ret;

	signal(SIGSEGV, SIG_DFL);
	/* The i386 entry; r8-r11 are not preserved by every kernel on this path. */
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(KF_I386_GETPID) : "r8", "r9", "r10", "r11", "memory");
	return ret == getpid() ? 0 : 1;
}

static void kf_int80(struct kf_answer *a)
{
	int status, r = kf_in_child(kf_int80_child, &status);

	if (r < 0)
		kf_set(a, "unknown", "fork or waitpid: %s", strerror(-r));
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		kf_set(a, "yes", "a bare int 0x80 getpid returns the caller's pid");
	else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		kf_set(a, "no",
		       "this kernel does not deliver int 0x80: a bare int 0x80 getpid dies of SIGSEGV without any filter");
	else if (WIFSIGNALED(status))
		kf_set(a, "unknown", "a bare int 0x80 getpid died of signal %d", WTERMSIG(status));
	else
		kf_set(a, "unknown", "a bare int 0x80 getpid did not return the pid (exit %d)",
		       WEXITSTATUS(status));
}

static void kf_x32(struct kf_answer *a)
{
	long r = syscall(KF_X32_SYSCALL_BIT | SYS_getpid);

	if (r == getpid())
		kf_set(a, "yes", "x32 getpid returns the caller's pid");
	else if (r < 0 && errno == ENOSYS)
		kf_set(a, "no",
		       "this kernel has no x32 ABI: x32 getpid fails with ENOSYS without any filter");
	else
		kf_set(a, "unknown", "x32 getpid returned %ld (%s)", r,
		       r < 0 ? strerror(errno) : "not the pid");
}
#else
/* Another architecture: neither entry exists, and a probe row of either is
 * skipped with this reason (tests/integration/sandbox.sh, ROW_FEATURE). */
static void kf_int80(struct kf_answer *a)
{
	kf_set(a, "no", "this machine is not x86_64: there is no int 0x80 entry");
}

static void kf_x32(struct kf_answer *a)
{
	kf_set(a, "no", "this machine is not x86_64: there is no x32 ABI");
}
#endif

/* x86_64 itself: the rows of the x86-only entries need it (on a kernel
 * without the x32 ABI the filter still kills the x32 row: it sees the bit
 * first). */
static void kf_x86_64(struct kf_answer *a)
{
#if defined(__x86_64__)
	kf_set(a, "yes", "this build runs on x86_64");
#else
	kf_set(a, "no", "this machine is not x86_64: the i386 and x32 entries are x86_64's");
#endif
}

static void kf_landlock(struct kf_answer *a)
{
	long r = syscall(SYS_landlock_create_ruleset, NULL, (size_t)0, KF_LANDLOCK_VERSION);

	if (r > 0) {
		snprintf(a->answer, sizeof(a->answer), "%ld", r);
		snprintf(a->why, sizeof(a->why), "Landlock ABI %ld", r);
	} else if (errno == ENOSYS || errno == EOPNOTSUPP) {
		kf_set(a, "0", "no Landlock: landlock_create_ruleset fails with %s",
		       errno == ENOSYS ? "ENOSYS (not built in)" : "EOPNOTSUPP (not enabled in lsm=)");
	} else {
		kf_set(a, "unknown", "landlock_create_ruleset: %s", strerror(errno));
	}
}

static void kf_cgroup(struct kf_answer *a)
{
	struct statfs s;

	if (statfs("/sys/fs/cgroup", &s) != 0)
		kf_set(a, "unknown", "statfs /sys/fs/cgroup: %s", strerror(errno));
	else if ((long)s.f_type == KF_CGROUP2_MAGIC)
		kf_set(a, "v2", "/sys/fs/cgroup is cgroup2 (unified)");
	else if ((long)s.f_type == KF_TMPFS_MAGIC && statfs("/sys/fs/cgroup/unified", &s) == 0 &&
		 (long)s.f_type == KF_CGROUP2_MAGIC)
		kf_set(a, "hybrid", "cgroup v1 controllers with a cgroup2 tree at /sys/fs/cgroup/unified");
	else
		kf_set(a, "v1", "/sys/fs/cgroup holds cgroup v1 hierarchies");
}

/* Whether FILE has a line starting with "oom_kill ". */
static int kf_has_oom_kill(const char *file)
{
	char line[256];
	int found = 0;
	FILE *f = fopen(file, "re");

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = strncmp(line, "oom_kill ", 9) == 0;
	fclose(f);
	return found;
}

static void kf_oom_kill(struct kf_answer *a)
{
	char line[512], path[700];
	FILE *f = fopen("/proc/self/cgroup", "re");

	kf_set(a, "no", "no memory cgroup of this process has an oom_kill counter");
	if (!f) {
		kf_set(a, "unknown", "/proc/self/cgroup: %s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *rel = ctl ? strchr(ctl + 1, ':') : NULL;

		if (!rel)
			continue;
		*rel++ = '\0';
		rel[strcspn(rel, "\n")] = '\0';
		ctl++;
		if (*ctl == '\0')
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.events", rel);
		else if (strstr(ctl, "memory"))
			snprintf(path, sizeof(path), "/sys/fs/cgroup/memory%s/memory.oom_control", rel);
		else
			continue;
		if (kf_has_oom_kill(path) == 1) {
			kf_set(a, "yes", "%s counts OOM kills", path);
			break;
		}
	}
	fclose(f);
}

static int kf_unshare_user_child(void)
{
	return unshare(CLONE_NEWUSER) == 0 ? 0 : errno;
}

static int kf_unshare_user_nobody_child(void)
{
	if (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
	    setresuid(65534, 65534, 65534) != 0)
		return 200;
	return kf_unshare_user_child();
}

static void kf_userns_common(struct kf_answer *a, int (*fn)(void), const char *who)
{
	int status, r = kf_in_child(fn, &status);

	if (r < 0)
		kf_set(a, "unknown", "fork or waitpid: %s", strerror(-r));
	else if (!WIFEXITED(status))
		kf_set(a, "unknown", "the child died of signal %d", WTERMSIG(status));
	else if (WEXITSTATUS(status) == 0)
		kf_set(a, "yes", "unshare(CLONE_NEWUSER) as %s succeeds", who);
	else if (WEXITSTATUS(status) == 200)
		kf_set(a, "unknown", "could not become uid 65534");
	else
		kf_set(a, "no", "unshare(CLONE_NEWUSER) as %s fails with %s", who,
		       strerror(WEXITSTATUS(status)));
}

static void kf_userns(struct kf_answer *a)
{
	if (access("/proc/self/ns/user", F_OK) != 0)
		kf_set(a, "no", "no /proc/self/ns/user: the kernel is built without CONFIG_USER_NS");
	else
		kf_userns_common(a, kf_unshare_user_child, geteuid() == 0 ? "root" : "this user");
}

static void kf_unpriv_userns(struct kf_answer *a)
{
	if (geteuid() != 0)
		kf_userns_common(a, kf_unshare_user_child, "this user");
	else
		kf_userns_common(a, kf_unshare_user_nobody_child, "uid 65534");
}

static void kf_io_uring(struct kf_answer *a)
{
	unsigned char params[120] = { 0 }; /* struct io_uring_params */
	long fd = syscall(SYS_io_uring_setup, 1u, params);

	if (fd >= 0) {
		close((int)fd);
		kf_set(a, "yes", "io_uring_setup succeeds");
	} else if (errno == ENOSYS || errno == EPERM) {
		kf_set(a, "no", "io_uring_setup fails with %s (CONFIG_IO_URING or kernel.io_uring_disabled)",
		       errno == ENOSYS ? "ENOSYS" : "EPERM");
	} else {
		kf_set(a, "unknown", "io_uring_setup: %s", strerror(errno));
	}
}

static const struct kf_feature {
	const char *name;
	void (*ask)(struct kf_answer *a);
	int bare; /* the answer is the kernel's only without a seccomp filter */
} kf_features[] = {
	{ "int80", kf_int80, 1 },       { "x32", kf_x32, 1 },
	{ "x86_64", kf_x86_64, 0 },     { "landlock", kf_landlock, 1 },
	{ "cgroup", kf_cgroup, 0 },     { "oom_kill", kf_oom_kill, 0 },
	{ "userns", kf_userns, 1 },     { "unpriv_userns", kf_unpriv_userns, 1 },
	{ "io_uring", kf_io_uring, 1 },
};
#define KF_N (sizeof(kf_features) / sizeof(kf_features[0]))

static void kf_ask(const struct kf_feature *f, struct kf_answer *a)
{
	int mode = f->bare ? kf_seccomp_mode() : 0;

	if (mode != 0)
		kf_set(a, "unknown",
		       "this process is under a seccomp filter (mode %d): its answer would not be the kernel's",
		       mode);
	else
		f->ask(a);
}

static const struct kf_feature *kf_find(const char *name)
{
	for (size_t i = 0; i < KF_N; i++)
		if (strcmp(kf_features[i].name, name) == 0)
			return &kf_features[i];
	return NULL;
}

int main(int argc, char **argv)
{
	struct kf_answer a;
	struct utsname u;

	if (argc == 2 && strcmp(argv[1], "--line") == 0) {
		static const char *const shown[] = { "int80",  "x32",           "landlock", "cgroup",
						     "userns", "unpriv_userns", "io_uring" };

		uname(&u);
		printf("# kernel %s:", u.release);
		for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
			kf_ask(kf_find(shown[i]), &a);
			printf("%s %s %s", i ? "," : "", shown[i], a.answer);
		}
		printf("\n");
		return 0;
	}
	for (int i = 1; i < argc; i++)
		if (!kf_find(argv[i])) {
			fprintf(stderr, "kfeatures: unknown feature %s\n", argv[i]);
			return 2;
		}
	if (argc == 1) {
		uname(&u);
		printf("kernel %s: %s %s\n", u.release, u.release, u.machine);
	}
	for (size_t i = 0; i < KF_N; i++) {
		int want = argc == 1;

		for (int j = 1; j < argc; j++)
			want |= strcmp(argv[j], kf_features[i].name) == 0;
		if (!want)
			continue;
		kf_ask(&kf_features[i], &a);
		printf("%s %s: %s\n", kf_features[i].name, a.answer, a.why);
	}
	return 0;
}
