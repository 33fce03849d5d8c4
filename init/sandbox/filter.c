/* filter.c - see filter.h. */
#define _GNU_SOURCE
#include "sandbox/filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <stdbool.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "policy/platform.h"
#include "policy/seccomp_arch.h"
#include "policy/seccomp_groups.h"
#include "policy/target_calls.h"

#if defined(__x86_64__)
#define SC_ARCH_NATIVE 0
#elif defined(__aarch64__)
#define SC_ARCH_NATIVE 1
#else
#error "turninit builds for x86_64 and aarch64 only: sc_arches (init/sandbox/filter.c) names the seccomp architecture of each, and policy/seccomp_arch.c the syscall names each lacks"
#endif

const struct sc_arch sc_arches[] = {
	{ "x86_64", SCMP_ARCH_X86_64, "i386 (int 0x80) and x32" },
	{ "aarch64", SCMP_ARCH_AARCH64, "32-bit ARM (compat)" },
};
const size_t sc_n_arches = N_ELEMENTS(sc_arches);

const struct sc_arch *sc_arch_native(void)
{
	return &sc_arches[SC_ARCH_NATIVE];
}

#define SC_ACT(a) ((a) == SCG_ENOSYS ? SCMP_ACT_ERRNO(ENOSYS) : SCMP_ACT_ERRNO(EPERM))

int sc_denied(const struct mf_seccomp *sc, struct scg_set *ret, struct tn_error *err)
{
	return scg_resolve((const char *const *)sc->deny, sc->n_deny, (const char *const *)sc->allow,
			   sc->n_allow, ret, err);
}

/* Whether set refuses every call of syscall: a whole rule with EPERM (the
 * strongest, scg_resolve keeps no other rule beside it). */
static bool sc_set_denies_whole(const struct scg_set *set, const char *syscall)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].rule.whole && set->v[i].rule.action == SCG_EPERM &&
		    strcmp(set->v[i].rule.syscall, syscall) == 0)
			return true;
	return false;
}

/* The number libseccomp takes for name in a filter of arch: this machine's
 * number of the name, which libseccomp translates to arch's by name
 * (seccomp_rule_add(3)). 1 and *ret set: add the rule; 0: arch has no such
 * syscall and seccomp_arch.h says why leaving it out loses nothing (for a
 * rule of set, its form there is denied whole in set); -EINVAL: unknown, or
 * absent from arch without that reason. set NULL: a rule of turninit's own
 * (the guard), whose names every architecture has. */
static int sc_nr(const struct sc_arch *a, const char *name, const struct scg_set *set, int *ret,
		 struct tn_error *err)
{
	const struct scg_absent *abs;
	int nr;

	if (seccomp_syscall_resolve_name_arch(a->token, name) >= 0) {
		/* this machine's number, or libseccomp's pseudo-number for a
		 * name it lacks (x86_64's ioperm, asked on aarch64): either is
		 * translated to a's by name */
		nr = seccomp_syscall_resolve_name(name);
		if (nr == __NR_SCMP_ERROR)
			return err_set(err, EINVAL, "seccomp: unknown syscall \"%s\"", name);
		*ret = nr;
		return 1;
	}
	if (seccomp_syscall_resolve_name(name) == __NR_SCMP_ERROR)
		return err_set(err, EINVAL, "seccomp: unknown syscall \"%s\"", name);
	abs = scg_absent_find(a->name, name);
	if (!abs || !set)
		return err_set(err, EINVAL,
			       "seccomp: \"%s\" is not a syscall of %s, and nothing says what does the same there: refusing, since a rule on it would not hold",
			       name, a->name);
	if (abs->instead && !sc_set_denies_whole(set, abs->instead))
		return err_set(err, EINVAL,
			       "seccomp: \"%s\" is not a syscall of %s; there %s does the same (%s) and is not denied: deny \"%s\" too, or the call stays open on %s",
			       name, a->name, abs->instead, abs->why, abs->instead, a->name);
	return 0;
}

/* One expanded rule of set as libseccomp's: a whole syscall, or one masked
 * comparison (SCMP_CMP_MASKED_EQ, seccomp_rule_add(3)). */
static int sc_add_entry(scmp_filter_ctx ctx, const struct sc_arch *a, const struct scg_entry *e,
			const struct scg_set *set, struct tn_error *err)
{
	const struct scg_rule *rule = &e->rule;
	int nr, r;

	r = sc_nr(a, rule->syscall, set, &nr, err);
	if (r <= 0)
		return r;
	if (rule->whole)
		r = seccomp_rule_add(ctx, SC_ACT(rule->action), nr, 0);
	else
		r = seccomp_rule_add(ctx, SC_ACT(rule->action), nr, 1,
				     (struct scmp_arg_cmp){ .arg = rule->cmp.arg,
							    .op = SCMP_CMP_MASKED_EQ,
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
static int sc_add_target_guard(scmp_filter_ctx ctx, const struct sc_arch *a, pid_t guard,
			       struct tn_error *err)
{
	for (size_t i = 0; i < tc_n_calls; i++) {
		const struct tc_call *c = &tc_calls[i];
		int nr, r;

		if (c->cls != TC_GUARDED)
			continue;
		r = sc_nr(a, c->name, NULL, &nr, err);
		if (r < 0)
			return r;
		if (c->write_arg >= 0)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2,
					     SCMP_CMP((unsigned)c->target_arg, SCMP_CMP_NE, 0),
					     SCMP_CMP((unsigned)c->write_arg, SCMP_CMP_NE, 0));
		else
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
					     SCMP_CMP((unsigned)c->target_arg, SCMP_CMP_NE, 0));
		if ((r >= 0 || r == -EEXIST) && c->which_user >= 0)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
					     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu,
						     (uint32_t)c->which_user));
		if (r < 0 && r != -EEXIST)
			return err_errno(err, r, "seccomp: the guard of pid %d (%s)", (int)guard, c->name);
	}
	return 0;
}

/* The signals a command may not send to turninit when it shares its uid
 * (filter.h, guard): EPERM, as the kernel answers a signal it may not send. */
static int sc_add_guard(scmp_filter_ctx ctx, const struct sc_arch *a, pid_t guard, struct tn_error *err)
{
	static const char *const by_pid[] = { "kill", "tkill", "tgkill" };
	/* whole: sigqueue's two take a siginfo whose si_pid the sender chooses
	 * (a keeper trusts ssi_pid), and a pidfd may name turninit */
	static const char *const whole[] = {
		"rt_sigqueueinfo",
		"rt_tgsigqueueinfo",
		"pidfd_send_signal",
	};
	const uint32_t targets[] = { (uint32_t)guard, (uint32_t)-1, (uint32_t)-getpgid(guard) };
	int nr, r;

	for (size_t i = 0; i < N_ELEMENTS(by_pid); i++) {
		/* -1 and the process group mean more than one process only to kill */
		size_t n = strcmp(by_pid[i], "kill") == 0 ? 3 : 1;

		r = sc_nr(a, by_pid[i], NULL, &nr, err);
		if (r < 0)
			return r;
		for (size_t t = 0; t < n; t++) {
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
					     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, targets[t]));
			if (r < 0 && r != -EEXIST)
				return err_errno(err, r, "seccomp: the guard of pid %d (%s)", (int)guard,
						 by_pid[i]);
		}
	}
	for (size_t i = 0; i < N_ELEMENTS(whole); i++) {
		r = sc_nr(a, whole[i], NULL, &nr, err);
		if (r < 0)
			return r;
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (r < 0 && r != -EEXIST)
			return err_errno(err, r, "seccomp: the guard of pid %d (%s)", (int)guard, whole[i]);
	}
	/* F_SETSIG: a file's owner signal (F_SETOWN, FIOSETOWN, a lease) could
	 * then be any signal, SIGKILL too, sent to an owner the command names;
	 * without it that signal is SIGIO, which turninit keeps blocked. */
	r = sc_nr(a, "fcntl", NULL, &nr, err);
	if (r < 0)
		return r;
	r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
			     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, F_SETSIG));
	if (r < 0 && r != -EEXIST)
		return err_errno(err, r, "seccomp: the guard of pid %d (fcntl F_SETSIG)", (int)guard);
	return sc_add_target_guard(ctx, a, guard, err);
}

int sc_kill_action(uint32_t *ret, struct tn_error *err)
{
	uint32_t action = SECCOMP_RET_KILL_PROCESS;
	_cleanup_seccomp_release_ scmp_filter_ctx ctx = NULL;
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
	if (e == ENOSYS)
		return err_set(err, ENOSYS,
			       "seccomp: this platform has no seccomp(2) (ENOSYS: a kernel built without it, or an emulator such as qemu-user): refusing, since no command runs without its filter");
	if (!pf_kill_thread_fallback(e)) {
		if (e == 0)
			return err_set(err, EINVAL,
				       "seccomp: libseccomp refuses SECCOMP_RET_KILL_PROCESS as the bad-arch action, though the platform offers it: refusing");
		return err_errno(err, e,
				 "seccomp: libseccomp refuses SECCOMP_RET_KILL_PROCESS as the bad-arch action, and only EINVAL from the platform's SECCOMP_GET_ACTION_AVAIL falls back to SECCOMP_RET_KILL_THREAD: refusing; the platform answered");
	}
	*ret = SCMP_ACT_KILL_THREAD;
	return 0;
}

/* ctx exported as a BPF program into ret (kill: its bad-arch action, kept
 * for verify). 0, or -errno with err set. */
static int sc_export(scmp_filter_ctx ctx, uint32_t kill, struct sc_program *ret, struct tn_error *err)
{
	_cleanup_close_ int fd = memfd_create("turninit-seccomp", MFD_CLOEXEC);
	struct sock_filter *buf;
	off_t size;
	int r;

	if (fd < 0)
		return err_errno(err, errno, "seccomp: memfd_create");
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return err_errno(err, r, "seccomp: export");
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % sizeof(struct sock_filter) != 0 ||
	    size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return err_set(err, EINVAL, "seccomp: exported program has %lld bytes", (long long)size);
	buf = malloc((size_t)size);
	if (!buf)
		return err_set(err, ENOMEM, "seccomp: out of memory");
	if (pread(fd, buf, (size_t)size, 0) != size) {
		free(buf);
		return err_set(err, EIO, "seccomp: reading the exported program");
	}
	ret->prog.len = (unsigned short)(size / sizeof(struct sock_filter));
	ret->prog.filter = buf;
	ret->kill_action = kill;
	return 0;
}

int sc_build(const struct mf_seccomp *sc, pid_t guard, struct sc_program *ret, struct tn_error *err)
{
	return sc_build_arch(sc_arch_native(), sc, guard, ret, err);
}

int sc_build_arch(const struct sc_arch *a, const struct mf_seccomp *sc, pid_t guard, struct sc_program *ret,
		  struct tn_error *err)
{
	_cleanup_seccomp_release_ scmp_filter_ctx ctx = NULL;
	struct scg_set set = { 0 };
	uint32_t kill = SCMP_ACT_KILL_PROCESS; /* gcc -flto sees no set on the failure path */
	int r;

	r = sc_kill_action(&kill, err);
	if (r < 0)
		return r;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return err_set(err, ENOMEM, "seccomp: out of memory");
	/* The program admits a's syscalls only: libseccomp's first check
	 * compares seccomp_data.arch with a's AUDIT_ARCH_*, and every other
	 * architecture takes the bad-arch action. The same two calls build the
	 * native program and, in the unit tests, another architecture's. */
	r = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE);
	if (r == 0)
		r = seccomp_arch_add(ctx, a->token);
	if (r < 0)
		return err_errno(err, r, "seccomp: the %s architecture", a->name);
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, kill);
	if (r < 0)
		return err_errno(err, r, "seccomp: bad-arch action");
	/* A binary tree of syscall numbers (libseccomp's level 2) instead of a
	 * linear chain: at attach the kernel runs the filter once for every
	 * syscall number of each architecture to fill its action cache, so a
	 * chain made every command's seccomp() cost about 210 us, and each
	 * syscall not in that cache walked the whole chain
	 * (docs/benchmarks.md, "Per-command cost"). */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (r < 0)
		return err_errno(err, r, "seccomp: optimize");
	r = sc_denied(sc, &set, err);
	for (size_t i = 0; r >= 0 && i < set.n; i++)
		r = sc_add_entry(ctx, a, &set.v[i], &set, err);
	scg_set_free(&set);
	if (r >= 0 && guard > 0)
		r = sc_add_guard(ctx, a, guard, err);
	if (r < 0)
		return r;
	return sc_export(ctx, kill, ret, err);
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

static uint32_t sc_native_audit_arch(void)
{
#if defined(__x86_64__)
	return AUDIT_ARCH_X86_64;
#else
	return AUDIT_ARCH_AARCH64;
#endif
}

/* The program of sc_build_notify, assembled by hand: a jump is to a label,
 * resolved once every instruction is placed. */
enum {
	L_ALLOW,
	L_REFUSE,
	L_NOTIFY,
	L_SOCKET,
	L_UNIX_TYPE,
	L_INET,
	L_NETLINK,
	L_PAIR,
	L_FLAGS2,
	L_FLAGS3,
	L_TKILL,
	L_N
};

struct sc_asm {
	struct sock_filter v[96];
	size_t n;
	int lab[L_N];       /* instruction index of each label, -1: not yet */
	int jt[96], jf[96]; /* label of each conditional branch, -1: none */
};

static void sc_asm_op(struct sc_asm *a, uint16_t code, uint32_t k, int jt, int jf)
{
	a->jt[a->n] = jt;
	a->jf[a->n] = jf;
	a->v[a->n++] = (struct sock_filter)BPF_STMT(code, k);
}

static void sc_asm_label(struct sc_asm *a, int l)
{
	a->lab[l] = (int)a->n;
}

#define SC_ARG_LO(i) ((uint32_t)offsetof(struct seccomp_data, args) + 8 * (i))
#define SC_LD(k) sc_asm_op(&a, BPF_LD | BPF_W | BPF_ABS, (k), -1, -1)
#define SC_JEQ(k, l) sc_asm_op(&a, BPF_JMP | BPF_JEQ | BPF_K, (k), (l), -1)
#define SC_RET(k) sc_asm_op(&a, BPF_RET | BPF_K, (k), -1, -1)

/* See filter.h. Long: one BPF program, written top to bottom in the order
 * the kernel runs it, its labels and their jumps in one place. */
int sc_build_notify(pid_t supervisor, struct sc_program *ret, struct tn_error *err)
{
	struct sc_asm a = { .n = 0 };
	struct sock_filter *buf;

	memset(a.lab, -1, sizeof(a.lab));
	/* another architecture's calls, and x32's: the main filter kills them */
	SC_LD(offsetof(struct seccomp_data, arch));
	sc_asm_op(&a, BPF_JMP | BPF_JEQ | BPF_K, sc_native_audit_arch(), -1, L_ALLOW);
	SC_LD(offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	sc_asm_op(&a, BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, L_ALLOW, -1);
#endif
	SC_JEQ(__NR_connect, L_NOTIFY);
	SC_JEQ(__NR_socket, L_SOCKET);
	SC_JEQ(__NR_socketpair, L_PAIR);
	SC_JEQ(__NR_sendto, L_FLAGS3);
	SC_JEQ(__NR_sendmmsg, L_FLAGS3);
	SC_JEQ(__NR_sendmsg, L_FLAGS2);
	SC_JEQ(__NR_io_uring_setup, L_REFUSE);
	SC_JEQ(__NR_io_uring_enter, L_REFUSE);
	SC_JEQ(__NR_io_uring_register, L_REFUSE);
	SC_JEQ(__NR_tkill, L_TKILL);
	SC_JEQ(__NR_kill, L_TKILL);
	SC_RET(SECCOMP_RET_ALLOW);
	/* kill(2) and tkill(2) of the supervisor thread, whose tid is not
	 * turninit's pid (the main filter's guard): kill(2) of a thread's id
	 * signals its whole process. Its low 32 bits, as the kernel reads a
	 * pid_t */
	sc_asm_label(&a, L_TKILL);
	SC_LD(SC_ARG_LO(0));
	sc_asm_op(&a, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)supervisor, L_REFUSE, L_ALLOW);
	/* socket(2): its family, then its type less SOCK_NONBLOCK and
	 * SOCK_CLOEXEC, then its protocol, each an int (the low 32 bits) */
	sc_asm_label(&a, L_SOCKET);
	SC_LD(SC_ARG_LO(0));
	SC_JEQ(AF_UNIX, L_UNIX_TYPE);
	SC_JEQ(AF_INET, L_INET);
	SC_JEQ(AF_INET6, L_INET);
	SC_JEQ(AF_NETLINK, L_NETLINK);
	SC_RET(SECCOMP_RET_ERRNO | EACCES);
	sc_asm_label(&a, L_PAIR);
	SC_LD(SC_ARG_LO(0));
	sc_asm_op(&a, BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, L_UNIX_TYPE, L_REFUSE);
	sc_asm_label(&a, L_UNIX_TYPE);
	SC_LD(SC_ARG_LO(1));
	sc_asm_op(&a, BPF_ALU | BPF_AND | BPF_K, 0xf, -1, -1);
	SC_JEQ(SOCK_STREAM, L_ALLOW);
	sc_asm_op(&a, BPF_JMP | BPF_JEQ | BPF_K, SOCK_SEQPACKET, L_ALLOW, L_REFUSE);
	sc_asm_label(&a, L_INET);
	SC_LD(SC_ARG_LO(1));
	sc_asm_op(&a, BPF_ALU | BPF_AND | BPF_K, 0xf, -1, -1);
	sc_asm_op(&a, BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, -1, L_REFUSE);
	SC_LD(SC_ARG_LO(2));
	SC_JEQ(0, L_ALLOW);
	sc_asm_op(&a, BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, L_ALLOW, L_REFUSE);
	sc_asm_label(&a, L_NETLINK);
	SC_LD(SC_ARG_LO(2));
	sc_asm_op(&a, BPF_JMP | BPF_JEQ | BPF_K, NETLINK_ROUTE, L_ALLOW, L_REFUSE);
	/* sendmsg's flags are its third argument, sendto's and sendmmsg's its fourth */
	sc_asm_label(&a, L_FLAGS2);
	SC_LD(SC_ARG_LO(2));
	sc_asm_op(&a, BPF_JMP | BPF_JSET | BPF_K, MSG_FASTOPEN, L_REFUSE, L_ALLOW);
	sc_asm_label(&a, L_FLAGS3);
	SC_LD(SC_ARG_LO(3));
	sc_asm_op(&a, BPF_JMP | BPF_JSET | BPF_K, MSG_FASTOPEN, L_REFUSE, L_ALLOW);
	/* the answers last: a classic BPF jump goes forward only */
	sc_asm_label(&a, L_ALLOW);
	SC_RET(SECCOMP_RET_ALLOW);
	sc_asm_label(&a, L_REFUSE);
	SC_RET(SECCOMP_RET_ERRNO | EACCES);
	sc_asm_label(&a, L_NOTIFY);
	SC_RET(SECCOMP_RET_USER_NOTIF);
	/* each branch's label to a forward offset; a fall-through stays 0 */
	for (size_t i = 0; i < a.n; i++) {
		int l[2] = { a.jt[i], a.jf[i] };
		uint8_t *o[2] = { &a.v[i].jt, &a.v[i].jf };

		for (int k = 0; k < 2; k++) {
			if (l[k] < 0)
				continue;
			if (a.lab[l[k]] <= (int)i || a.lab[l[k]] - (int)i - 1 > 255)
				return err_set(err, EINVAL, "seccomp: the connection filter's jump %zu", i);
			*o[k] = (uint8_t)(a.lab[l[k]] - (int)i - 1);
		}
	}
	buf = malloc(a.n * sizeof(*buf));
	if (!buf)
		return err_set(err, ENOMEM, "seccomp: out of memory");
	memcpy(buf, a.v, a.n * sizeof(*buf));
	ret->prog.len = (unsigned short)a.n;
	ret->prog.filter = buf;
	ret->kill_action = SCMP_ACT_KILL_PROCESS;
	return 0;
}

int sc_load_listener(const struct sc_program *p)
{
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &p->prog);

	return fd < 0 ? -errno : (int)fd;
}
