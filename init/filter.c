/* filter.c - see filter.h. */
#define _GNU_SOURCE
#include "filter.h"

#include <errno.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cleanup.h"
#include "seccomp_groups.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif

static const unsigned long sc_ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER,
	CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWTIME,
};

static enum sc_rule sc_rule_of(const char *name)
{
	static const char *const with_args[] = { "clone", "unshare", "ioctl", "socket",
						 "personality", NULL };

	if (strcmp(name, "clone3") == 0)
		return SC_ENOSYS;
	for (const char *const *w = with_args; *w; w++)
		if (strcmp(name, *w) == 0)
			return SC_ARGS;
	return SC_EPERM;
}

struct sc_names {
	const char **v;
	size_t n, cap;
};

static int sc_names_add(const char *name, void *data)
{
	struct sc_names *s = data;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		const char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = name;
	return 0;
}

int sc_each_denied(const struct mf_manifest *m,
		   int (*emit)(const char *name, enum sc_rule rule, void *data), void *data,
		   struct tn_error *err)
{
	struct sc_names deny = { 0 }, allow = { 0 };
	int r;

	r = scg_expand((const char *const *)m->seccomp_deny, m->n_seccomp_deny, sc_names_add,
		       &deny, err);
	if (r >= 0)
		r = scg_expand((const char *const *)m->seccomp_allow, m->n_seccomp_allow,
			       sc_names_add, &allow, err);
	for (size_t i = 0; r >= 0 && i < deny.n; i++) {
		bool allowed = false;

		for (size_t j = 0; j < allow.n && !allowed; j++)
			allowed = strcmp(deny.v[i], allow.v[j]) == 0;
		if (!allowed)
			r = emit(deny.v[i], sc_rule_of(deny.v[i]), data);
	}
	if (r == -ENOMEM)
		err_set(err, ENOMEM, "seccomp: out of memory");
	free(deny.v);
	free(allow.v);
	return r;
}

#define EPERM_ACT SCMP_ACT_ERRNO(EPERM)

/* personality(2): only PER_LINUX (0), PER_LINUX32 (8) and the query 0xffffffff
 * pass. libseccomp allows one comparison per argument in a rule, so "not one of
 * three values" is written as rules that each catch a part of the rest, on the
 * low 32 bits the kernel reads: top bit clear and any bit other than bit 3 set;
 * or top bit set and any other bit clear. */
static int sc_add_personality(scmp_filter_ctx ctx, int nr)
{
	for (unsigned bit = 0; bit < 31; bit++) {
		uint32_t b = 1u << bit, mask = 0x80000000u | b;
		int r;

		if (bit != 3) {
			r = seccomp_rule_add(ctx, EPERM_ACT, nr, 1, SCMP_A0_32(SCMP_CMP_MASKED_EQ, mask, b));
			if (r < 0)
				return r;
		}
		r = seccomp_rule_add(ctx, EPERM_ACT, nr, 1,
				     SCMP_A0_32(SCMP_CMP_MASKED_EQ, mask, 0x80000000u));
		if (r < 0)
			return r;
	}
	return 0;
}

static int sc_add_args(scmp_filter_ctx ctx, const char *name, int nr)
{
	int r = 0;

	if (strcmp(name, "clone") == 0 || strcmp(name, "unshare") == 0) {
		/* clone(2) on x86_64 and unshare(2): the flags are argument 0. */
		for (size_t i = 0; r >= 0 && i < sizeof(sc_ns_flags) / sizeof(sc_ns_flags[0]); i++)
			r = seccomp_rule_add(ctx, EPERM_ACT, nr, 1,
					     SCMP_A0_64(SCMP_CMP_MASKED_EQ, sc_ns_flags[i], sc_ns_flags[i]));
	} else if (strcmp(name, "ioctl") == 0) {
		/* The kernel reads the request as an unsigned int: compare the low
		 * 32 bits only, so TIOCSTI | 1<<32 is caught too. */
		r = seccomp_rule_add(ctx, EPERM_ACT, nr, 1,
				     SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI));
		if (r >= 0)
			r = seccomp_rule_add(ctx, EPERM_ACT, nr, 1,
					     SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX));
	} else if (strcmp(name, "socket") == 0) {
		r = seccomp_rule_add(ctx, EPERM_ACT, nr, 1,
				     SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_ALG));
		if (r >= 0)
			r = seccomp_rule_add(ctx, EPERM_ACT, nr, 1,
					     SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_VSOCK));
	} else if (strcmp(name, "personality") == 0) {
		r = sc_add_personality(ctx, nr);
	}
	return r;
}

static int sc_add_rule(const char *name, enum sc_rule rule, void *data)
{
	scmp_filter_ctx ctx = data;
	int nr = seccomp_syscall_resolve_name(name);

	if (nr == __NR_SCMP_ERROR)
		return -EINVAL;
	switch (rule) {
	case SC_ENOSYS:
		return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
	case SC_ARGS:
		return sc_add_args(ctx, name, nr);
	case SC_EPERM:
	default:
		return seccomp_rule_add(ctx, EPERM_ACT, nr, 0);
	}
}

int sc_build(const struct mf_manifest *m, struct sc_program *ret, struct tn_error *err)
{
	scmp_filter_ctx ctx;
	_cleanup_close_ int fd = -1;
	struct sock_filter *buf = NULL;
	off_t size;
	int r;

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
	if (r < 0) {
		err_set(err, r, "seccomp: bad-arch action: %s", strerror(-r));
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
		err_set(err, r, "seccomp: optimize: %s", strerror(-r));
		goto out;
	}
	r = sc_each_denied(m, sc_add_rule, ctx, err);
	if (r < 0) {
		if (err && err->code == 0)
			err_set(err, r, "seccomp: adding a rule: %s", strerror(-r));
		goto out;
	}
	fd = memfd_create("turninit-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		r = err_set(err, errno, "seccomp: memfd_create: %s", strerror(errno));
		goto out;
	}
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0) {
		err_set(err, r, "seccomp: export: %s", strerror(-r));
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
