/* filter.c - see filter.h. */
#define _GNU_SOURCE
#include "filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "platform.h"
#include "seccomp_groups.h"
#include "target_calls.h"

/* The filter's architecture checks (x32 and i386 killed), SPAWN_NSIG
 * (init/process/spawn.c) and verify's "architecture" are x86_64's: a port starts here. */
#if !defined(__x86_64__)
#error "turninit builds for x86_64 only: init/sandbox/filter.c (the seccomp filter's architecture checks, i386 and x32 killed), init/process/spawn.c (SPAWN_NSIG) and init/verify.c (\"architecture\") assume it"
#endif

#define SC_ACT(a) ((a) == SCG_ENOSYS ? SCMP_ACT_ERRNO(ENOSYS) : SCMP_ACT_ERRNO(EPERM))

int sc_denied(const struct mf_seccomp *sc, struct scg_set *ret, struct tn_error *err)
{
	return scg_resolve((const char *const *)sc->deny, sc->n_deny,
			   (const char *const *)sc->allow, sc->n_allow, ret, err);
}

/* One expanded rule as libseccomp's: a whole syscall, or one masked
 * comparison (SCMP_CMP_MASKED_EQ, seccomp_rule_add(3)). */
static int sc_add_entry(scmp_filter_ctx ctx, const struct scg_entry *e, struct tn_error *err)
{
	const struct scg_rule *rule = &e->rule;
	int nr = seccomp_syscall_resolve_name(rule->syscall), r;

	if (nr == __NR_SCMP_ERROR)
		return err_set(err, EINVAL, "seccomp: unknown syscall \"%s\"", rule->syscall);
	if (rule->whole)
		r = seccomp_rule_add(ctx, SC_ACT(rule->action), nr, 0);
	else
		r = seccomp_rule_add(ctx, SC_ACT(rule->action), nr, 1,
				     (struct scmp_arg_cmp){ .arg = rule->cmp.arg, .op = SCMP_CMP_MASKED_EQ,
							    .datum_a = rule->cmp.mask,
							    .datum_b = rule->cmp.value });
	if (r < 0)
		return err_errno(err, r, "seccomp: a rule for %s", rule->syscall);
	return 0;
}

/* The calls that change another process of the same uid and that no LSM
 * hook of Landlock's sees (policy/target_calls.h, TC_GUARDED): a command
 * may make them on itself only (pid 0, who 0: for setpriority and
 * ioprio_set also its own process group), never on turninit or a keeper, where
 * they would kill the turn (RLIMIT_CPU), stop every later exec (NOFILE,
 * NPROC) or starve the loop (SCHED_IDLE, affinity, nice, I/O priority).
 * prlimit64 that only reads (new limit NULL) stays open. Each comparison is
 * of the whole register: upper bits set is not 0, so refused. EPERM, as the
 * kernel answers a target it may not change. */
static int sc_add_target_guard(scmp_filter_ctx ctx, pid_t guard, struct tn_error *err)
{
	for (size_t i = 0; i < tc_n_calls; i++) {
		const struct tc_call *c = &tc_calls[i];
		int nr = seccomp_syscall_resolve_name(c->name), r;

		if (c->cls != TC_GUARDED)
			continue;
		if (c->write_arg >= 0)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2,
					     SCMP_CMP((unsigned)c->target_arg, SCMP_CMP_NE, 0),
					     SCMP_CMP((unsigned)c->write_arg, SCMP_CMP_NE, 0));
		else
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
					     SCMP_CMP((unsigned)c->target_arg, SCMP_CMP_NE, 0));
		if ((r >= 0 || r == -EEXIST) && c->which_user >= 0)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
					     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)c->which_user));
		if (r < 0 && r != -EEXIST)
			return err_errno(err, r, "seccomp: the guard of pid %d (%s)", (int)guard, c->name);
	}
	return 0;
}

/* The signals a command may not send to turninit when it shares its uid
 * (filter.h, guard): EPERM, as the kernel answers a signal it may not send. */
static int sc_add_guard(scmp_filter_ctx ctx, pid_t guard, struct tn_error *err)
{
	static const char *const by_pid[] = { "kill", "tkill", "tgkill" };
	/* whole: sigqueue's two take a siginfo whose si_pid the sender chooses
	 * (a keeper trusts ssi_pid), and a pidfd may name turninit */
	static const char *const whole[] = {
		"rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal",
	};
	const uint32_t targets[] = { (uint32_t)guard, (uint32_t)-1, (uint32_t)-getpgid(guard) };
	int r;

	for (size_t i = 0; i < N_ELEMENTS(by_pid); i++) {
		int nr = seccomp_syscall_resolve_name(by_pid[i]);
		/* -1 and the process group mean more than one process only to kill */
		size_t n = strcmp(by_pid[i], "kill") == 0 ? 3 : 1;

		for (size_t t = 0; t < n; t++) {
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
					     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, targets[t]));
			if (r < 0 && r != -EEXIST)
				return err_errno(err, r, "seccomp: the guard of pid %d (%s)", (int)guard,
						 by_pid[i]);
		}
	}
	for (size_t i = 0; i < N_ELEMENTS(whole); i++) {
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), seccomp_syscall_resolve_name(whole[i]), 0);
		if (r < 0 && r != -EEXIST)
			return err_errno(err, r, "seccomp: the guard of pid %d (%s)", (int)guard, whole[i]);
	}
	/* F_SETSIG: a file's owner signal (F_SETOWN, FIOSETOWN, a lease) could
	 * then be any signal, SIGKILL too, sent to an owner the command names;
	 * without it that signal is SIGIO, which turninit keeps blocked. */
	r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), seccomp_syscall_resolve_name("fcntl"), 1,
			     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, F_SETSIG));
	if (r < 0 && r != -EEXIST)
		return err_errno(err, r, "seccomp: the guard of pid %d (fcntl F_SETSIG)", (int)guard);
	return sc_add_target_guard(ctx, guard, err);
}

int sc_kill_action(uint32_t *ret, struct tn_error *err)
{
	uint32_t action = SECCOMP_RET_KILL_PROCESS;
	scmp_filter_ctx ctx;
	int r, e;

#ifdef TURNINIT_VALGRIND
	/* Only the build that `make valgrind` runs: valgrind 3.19 has no wrapper
	 * for seccomp(2), so libseccomp's probe of the kernel's actions
	 * (SECCOMP_GET_ACTION_AVAIL) gets ENOSYS there. That build states API
	 * level 3 (seccomp_api_set(3)) instead; the filter is loaded with prctl,
	 * which valgrind passes through. The product build always probes. */
	seccomp_api_set(3);
#endif
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return err_set(err, ENOMEM, "seccomp: out of memory");
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	seccomp_release(ctx);
	if (r == 0) {
		*ret = SCMP_ACT_KILL_PROCESS;
		return 0;
	}
	if (r != -EINVAL)
		return err_errno(err, r, "seccomp: bad-arch action");
	/* libseccomp refused the action because its probe did not confirm it:
	 * ask the same question to learn the platform's answer. gVisor knows no
	 * SECCOMP_GET_ACTION_AVAIL (EINVAL); that alone falls back. */
	e = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0 ? 0 : errno;
	if (!pf_kill_thread_fallback(e)) {
		if (e == 0)
			return err_set(err, EINVAL, "seccomp: libseccomp refuses SECCOMP_RET_KILL_PROCESS as the bad-arch action, though the platform offers it: refusing");
		return err_errno(err, e, "seccomp: libseccomp refuses SECCOMP_RET_KILL_PROCESS as the bad-arch action, and only EINVAL from the platform's SECCOMP_GET_ACTION_AVAIL falls back to SECCOMP_RET_KILL_THREAD: refusing; the platform answered");
	}
	*ret = SCMP_ACT_KILL_THREAD;
	return 0;
}

int sc_build(const struct mf_seccomp *sc, pid_t guard, struct sc_program *ret,
	     struct tn_error *err)
{
	scmp_filter_ctx ctx;
	_cleanup_close_ int fd = -1;
	struct sock_filter *buf = NULL;
	struct scg_set set = { 0 };
	off_t size;
	uint32_t kill = SCMP_ACT_KILL_PROCESS;   /* gcc -flto sees no set on the failure path */
	int r;

	r = sc_kill_action(&kill, err);
	if (r < 0)
		return r;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return err_set(err, ENOMEM, "seccomp: out of memory");
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, kill);
	if (r < 0) {
		err_errno(err, r, "seccomp: bad-arch action");
		goto out;
	}
	/* A binary tree of syscall numbers (libseccomp's level 2) instead of a
	 * linear chain: at attach the kernel runs the filter once for every
	 * syscall number of each architecture to fill its action cache, so a
	 * chain made every command's seccomp() cost about 210 us, and each
	 * syscall not in that cache walked the whole chain
	 * (docs/benchmarks.md, "Per-command cost"). */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (r < 0) {
		err_errno(err, r, "seccomp: optimize");
		goto out;
	}
	r = sc_denied(sc, &set, err);
	for (size_t i = 0; r >= 0 && i < set.n; i++)
		r = sc_add_entry(ctx, &set.v[i], err);
	scg_set_free(&set);
	if (r >= 0 && guard > 0)
		r = sc_add_guard(ctx, guard, err);
	if (r < 0)
		goto out;
	fd = memfd_create("turninit-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		r = err_errno(err, errno, "seccomp: memfd_create");
		goto out;
	}
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0) {
		err_errno(err, r, "seccomp: export");
		goto out;
	}
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % sizeof(struct sock_filter) != 0 ||
	    size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		r = err_set(err, EINVAL, "seccomp: exported program has %lld bytes", (long long)size);
		goto out;
	}
	buf = malloc((size_t)size);
	if (!buf || pread(fd, buf, (size_t)size, 0) != size) {
		r = err_set(err, buf ? EIO : ENOMEM, "seccomp: reading the exported program");
		free(buf);
		goto out;
	}
	ret->prog.len = (unsigned short)(size / sizeof(struct sock_filter));
	ret->prog.filter = buf;
	ret->kill_action = kill;
	r = 0;
out:
	seccomp_release(ctx);
	return r;
}

int sc_load(const struct sc_program *p)
{
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p->prog, 0, 0) != 0)
		return -errno;
	return 0;
}

void sc_program_free(struct sc_program *p)
{
	free(p->prog.filter);
	p->prog.filter = NULL;
	p->prog.len = 0;
}

void sc_program_digest(const struct sc_program *p, char hex[static SC_DIGEST_HEX])
{
	uint8_t d[32];

	crypto_generichash(d, sizeof(d), (const uint8_t *)p->prog.filter,
			   (size_t)p->prog.len * sizeof(*p->prog.filter), NULL, 0);
	sodium_bin2hex(hex, SC_DIGEST_HEX, d, sizeof(d));
}
