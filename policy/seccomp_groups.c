/* seccomp_groups.c - the named syscall group table and its expansion (see
 * seccomp_groups.h).
 *
 * Keep scg_groups sorted by name (scg_find is a binary search; a unit test
 * checks it). Members are refused whole; a group's rules refuse a syscall for
 * some argument values only, or with another errno (clone3). docs/manifest.md
 * and `turninit verify` show which.
 */
#define _GNU_SOURCE
#include "policy/seccomp_groups.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "policy/cleanup.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif

#define MEMBERS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NO_MEMBERS ((const char *const[]){ NULL })
#define RULES(...) \
	((const struct scg_rule[]){ __VA_ARGS__ }), \
		sizeof((const struct scg_rule[]){ __VA_ARGS__ }) / sizeof(struct scg_rule)
#define NO_RULES NULL, 0, NULL

/* (arg & mask) == value, refused with EPERM */
/* clang-format 14 reads a macro body that starts with '{' as a block: kept as written */
/* clang-format off */
#define ARG(sc, a, m, v) { (sc), SCG_EPERM, false, { (a), (m), (v) } }
/* clang-format on */
/* the low 32 bits of arg a equal v: what the kernel reads as an int */
#define ARG32(sc, a, v) ARG(sc, a, 0xffffffffu, (v))
/* namespace flag f set in argument 0 (clone(2) on x86_64, unshare(2)) */
#define NS(sc, f) ARG(sc, 0, (f), (f))
#define NS_ALL(sc) \
	NS(sc, CLONE_NEWNS), NS(sc, CLONE_NEWCGROUP), NS(sc, CLONE_NEWUTS), NS(sc, CLONE_NEWIPC), \
		NS(sc, CLONE_NEWUSER), NS(sc, CLONE_NEWPID), NS(sc, CLONE_NEWNET), NS(sc, CLONE_NEWTIME)
/* personality(2): only PER_LINUX (0), PER_LINUX32 (8) and the query 0xffffffff
 * pass. A rule holds one comparison per argument, so "none of three values" is
 * written as rules that each catch a part of the rest, on the low 32 bits the
 * kernel reads: top bit clear and a bit other than bit 3 set (PER_SET); or top
 * bit set and some other bit clear (PER_CLR). */
#define PER_SET(b) ARG("personality", 0, 0x80000000u | (1u << (b)), 1u << (b))
#define PER_CLR(b) ARG("personality", 0, 0x80000000u | (1u << (b)), 0x80000000u)
#define PER_BOTH(b) PER_SET(b), PER_CLR(b)

/* clang-format 14 would pack the name, help and members of an entry onto one line: kept as written */
/* clang-format off */
const struct scg_group scg_groups[] = {
	{ "@aio-uring", "io_uring: a large kernel attack surface, bypasses syscall filtering",
	  MEMBERS("io_uring_enter", "io_uring_register", "io_uring_setup"), NO_RULES },
	{ "@bpf", "loading eBPF programs and maps",
	  MEMBERS("bpf"), NO_RULES },
	{ "@clock", "setting the system clock",
	  MEMBERS("adjtimex", "clock_adjtime", "clock_settime", "settimeofday"), NO_RULES },
	{ "@debug", "tracing and reading or writing other processes' memory",
	  MEMBERS("perf_event_open", "pidfd_getfd", "process_vm_readv", "process_vm_writev",
		  "ptrace"), NO_RULES },
	{ "@default", "turninit's default deny set",
	  MEMBERS("@aio-uring", "@bpf", "@clock", "@debug", "@keyring", "@kexec", "@module",
		  "@mount", "@namespaces", "@personality", "@raw-io", "@reboot", "@swap",
		  "@tty-inject", "@unusual-sockets", "open_by_handle_at", "userfaultfd"), NO_RULES },
	{ "@kexec", "loading a new kernel",
	  MEMBERS("kexec_file_load", "kexec_load"), NO_RULES },
	{ "@keyring", "the kernel keyring, shared across containers of a user",
	  MEMBERS("add_key", "keyctl", "request_key"), NO_RULES },
	{ "@module", "loading and unloading kernel modules",
	  MEMBERS("delete_module", "finit_module", "init_module"), NO_RULES },
	{ "@mount", "mounting and the new mount API; changing the root",
	  MEMBERS("chroot", "fsconfig", "fsmount", "fsopen", "fspick", "mount",
		  "mount_setattr", "move_mount", "open_tree", "pivot_root", "umount2"), NO_RULES },
	{ "@namespaces", "creating or joining namespaces",
	  MEMBERS("setns"),
	  RULES(NS_ALL("clone"), NS_ALL("unshare"),
		{ "clone3", SCG_ENOSYS, true, { 0, 0, 0 } }),
	  "clone and unshare with a namespace flag (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME in argument 0); clone3 answers ENOSYS, so libc falls back to clone" },
	{ "@personality", "execution domains that turn off ASLR or make data executable",
	  NO_MEMBERS,
	  RULES(PER_BOTH(0), PER_BOTH(1), PER_BOTH(2), PER_CLR(3), PER_BOTH(4), PER_BOTH(5),
		PER_BOTH(6), PER_BOTH(7), PER_BOTH(8), PER_BOTH(9), PER_BOTH(10), PER_BOTH(11),
		PER_BOTH(12), PER_BOTH(13), PER_BOTH(14), PER_BOTH(15), PER_BOTH(16),
		PER_BOTH(17), PER_BOTH(18), PER_BOTH(19), PER_BOTH(20), PER_BOTH(21),
		PER_BOTH(22), PER_BOTH(23), PER_BOTH(24), PER_BOTH(25), PER_BOTH(26),
		PER_BOTH(27), PER_BOTH(28), PER_BOTH(29), PER_BOTH(30)),
	  "personality with any persona but PER_LINUX (0), PER_LINUX32 (8) and the query 0xffffffff (low 32 bits of argument 0)" },
	{ "@raw-io", "raw I/O port access",
	  MEMBERS("ioperm", "iopl"), NO_RULES },
	{ "@reboot", "rebooting the machine",
	  MEMBERS("reboot"), NO_RULES },
	{ "@swap", "enabling and disabling swap",
	  MEMBERS("swapoff", "swapon"), NO_RULES },
	{ "@tty-inject", "faking terminal input",
	  NO_MEMBERS,
	  RULES(ARG32("ioctl", 1, TIOCSTI), ARG32("ioctl", 1, TIOCLINUX)),
	  "ioctl with request TIOCSTI or TIOCLINUX (low 32 bits of argument 1)" },
	{ "@unusual-sockets", "socket families with a history of kernel bugs",
	  NO_MEMBERS,
	  RULES(ARG32("socket", 0, AF_ALG), ARG32("socket", 0, AF_VSOCK)),
	  "socket with family AF_ALG or AF_VSOCK (low 32 bits of argument 0)" },
};
/* clang-format on */

const size_t scg_n_groups = N_ELEMENTS(scg_groups);

const struct scg_group *scg_find(const char *name)
{
	size_t lo = 0, hi = scg_n_groups;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, scg_groups[mid].name);

		if (c == 0)
			return &scg_groups[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

#define SCG_MAX_DEPTH 8

/* What a walk of deny or allow collects: every rule reached, in order; bare
 * marks a whole EPERM that came from a name rather than a group's rule. */
struct scg_raw {
	struct scg_entry e;
	bool bare;
};

struct scg_walk {
	struct scg_raw *v;
	size_t n, cap;
};

static int scg_push(struct scg_walk *w, const struct scg_rule *rule, const char *why, bool bare)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 128;
		struct scg_raw *v = realloc(w->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n++] = (struct scg_raw){ .e = { .rule = *rule, .why = why }, .bare = bare };
	return 0;
}

static int scg_walk_name(struct scg_walk *w, const char *name, int depth, struct tn_error *err)
{
	const struct scg_group *g;
	int r;

	if (depth > SCG_MAX_DEPTH)
		return err_set(err, ELOOP, "seccomp group %s: nested too deeply", name);
	if (name[0] != '@') {
		struct scg_rule whole = { .syscall = name, .action = SCG_EPERM, .whole = true };

		return scg_push(w, &whole, NULL, true) < 0 ? err_set(err, ENOMEM, "seccomp: out of memory") :
							     0;
	}
	if (!(g = scg_find(name)))
		return err_set(err, ENOENT, "unknown seccomp group \"%s\"", name);
	for (const char *const *m = g->members; *m; m++)
		if ((r = scg_walk_name(w, *m, depth + 1, err)) < 0)
			return r;
	for (size_t i = 0; i < g->n_rules; i++)
		if (scg_push(w, &g->rules[i], g->rules[i].whole ? NULL : g->rules_help, false) < 0)
			return err_set(err, ENOMEM, "seccomp: out of memory");
	return 0;
}

static int scg_walk_all(struct scg_walk *w, const char *const *names, size_t n, struct tn_error *err)
{
	for (size_t i = 0; i < n; i++) {
		int r = scg_walk_name(w, names[i], 0, err);

		if (r < 0)
			return r;
	}
	return 0;
}

static bool scg_same_rule(const struct scg_rule *a, const struct scg_rule *b)
{
	return a->action == b->action && a->whole == b->whole &&
	       (a->whole ||
		(a->cmp.arg == b->cmp.arg && a->cmp.mask == b->cmp.mask && a->cmp.value == b->cmp.value));
}

static bool scg_names(const struct scg_walk *w, const char *syscall)
{
	for (size_t i = 0; i < w->n; i++)
		if (strcmp(w->v[i].e.rule.syscall, syscall) == 0)
			return true;
	return false;
}

/* The rules of deny for the syscall of deny->v[first], the strongest kind only,
 * each once, appended to out. */
static void scg_emit_syscall(const struct scg_walk *deny, size_t first, struct scg_set *out)
{
	const char *sc = deny->v[first].e.rule.syscall;
	int best = 0; /* 3 bare whole, 2 a group's whole rule, 1 argument rules */

	for (size_t i = first; i < deny->n; i++) {
		const struct scg_raw *r = &deny->v[i];
		int kind = r->bare ? 3 : r->e.rule.whole ? 2 : 1;

		if (strcmp(r->e.rule.syscall, sc) == 0 && kind > best)
			best = kind;
	}
	for (size_t i = first; i < deny->n; i++) {
		const struct scg_raw *r = &deny->v[i];
		int kind = r->bare ? 3 : r->e.rule.whole ? 2 : 1;
		bool dup = false;

		if (strcmp(r->e.rule.syscall, sc) != 0 || kind != best)
			continue;
		for (size_t j = 0; j < out->n && !dup; j++)
			dup = strcmp(out->v[j].rule.syscall, sc) == 0 &&
			      scg_same_rule(&out->v[j].rule, &r->e.rule);
		if (!dup)
			out->v[out->n++] = r->e;
		if (best > 1)
			break; /* whole: one rule */
	}
}

int scg_resolve(const char *const *deny, size_t n_deny, const char *const *allow, size_t n_allow,
		struct scg_set *ret, struct tn_error *err)
{
	struct scg_walk d = { 0 }, a = { 0 };
	struct scg_set out = { 0 };
	int r;

	if ((r = scg_walk_all(&d, deny, n_deny, err)) < 0 || (r = scg_walk_all(&a, allow, n_allow, err)) < 0)
		goto out;
	out.v = malloc((d.n ? d.n : 1) * sizeof(*out.v));
	if (!out.v) {
		r = err_set(err, ENOMEM, "seccomp: out of memory");
		goto out;
	}
	for (size_t i = 0; i < d.n; i++) {
		const char *sc = d.v[i].e.rule.syscall;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(d.v[j].e.rule.syscall, sc) == 0;
		if (!seen && !scg_names(&a, sc))
			scg_emit_syscall(&d, i, &out);
	}
	*ret = out;
	out.v = NULL;
	r = 0;
out:
	free(out.v);
	free(d.v);
	free(a.v);
	return r;
}

void scg_set_free(struct scg_set *s)
{
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

const char *scg_spares(const struct scg_set *set, const struct scg_use *use, size_t n)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct scg_rule *r = &set->v[i].rule;

		for (size_t j = 0; j < n; j++) {
			if (strcmp(use[j].syscall, r->syscall) != 0)
				continue;
			if (r->whole || use[j].arg < 0 || (unsigned)use[j].arg != r->cmp.arg)
				return r->syscall;
			for (size_t k = 0; k < use[j].n_values; k++)
				if ((use[j].values[k] & r->cmp.mask) == r->cmp.value)
					return r->syscall;
		}
	}
	return NULL;
}
