/* seccomp_groups.h - named syscall groups, in the style of systemd's filter
 * sets (systemd.exec(5), SystemCallFilter=; src/shared/seccomp-util.c), and
 * their expansion into the rules of a seccomp filter.
 *
 * Owns the table and the expansion; pure data and code, no libseccomp. A bare
 * syscall name always means the whole syscall. Argument-level rules (namespace
 * flags of clone and unshare, ioctl TIOCSTI and TIOCLINUX, socket families,
 * personality values) belong to named groups of their own, so that a manifest
 * that denies "ioctl" denies ioctl, and one that denies "@tty-inject" denies
 * two of its requests. init/sandbox/filter.c translates the expanded rules to
 * libseccomp. Sources: seccomp(2), seccomp_rule_add(3).
 */
#ifndef TURNINIT_SECCOMP_GROUPS_H
#define TURNINIT_SECCOMP_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/error.h"

/* How a rule refuses a call. */
enum scg_action {
	SCG_EPERM,  /* fail with EPERM */
	SCG_ENOSYS, /* fail with ENOSYS (clone3: libc then falls back to clone) */
};

/* One argument comparison: the call matches when (arg[arg] & mask) == value.
 * A mask with the high 32 bits clear compares what the kernel reads as an int
 * (the request of ioctl, the family of socket), so TIOCSTI | 1 << 32 matches
 * TIOCSTI. */
struct scg_cmp {
	unsigned arg; /* 0..5 */
	uint64_t mask;
	uint64_t value;
};

/* One rule of a group: the syscall, refused by action when cmp matches, or
 * always when whole. */
struct scg_rule {
	const char *syscall;
	enum scg_action action;
	bool whole;
	struct scg_cmp cmp; /* unused when whole */
};

struct scg_group {
	const char *name;             /* "@name" */
	const char *help;             /* one line */
	const char *const *members;   /* NULL-terminated: whole syscalls or "@group" */
	const struct scg_rule *rules; /* n_rules rules of this group itself */
	size_t n_rules;
	const char *rules_help; /* what the rules refuse, one line; NULL without rules */
};

extern const struct scg_group scg_groups[]; /* sorted by name */
extern const size_t scg_n_groups;

/* scg_find - the group called name ("@mount"), or NULL. */
const struct scg_group *scg_find(const char *name);

/* One entry of an expanded set: a rule, and for an argument rule the
 * rules_help of the group it came from. */
struct scg_entry {
	struct scg_rule rule;
	const char *why; /* NULL for a whole syscall */
};

struct scg_set {
	struct scg_entry *v; /* malloc'd; free with scg_set_free */
	size_t n;
};

/* scg_resolve - the rules of seccomp.deny less seccomp.allow.
 * deny, allow: names (syscalls, "@group"), n_deny and n_allow of them.
 * Groups expand recursively. A syscall named bare in deny, or a member of a
 * denied group, is refused whole with EPERM; a group's rules add theirs. Per
 * syscall the strongest wins: a whole EPERM, then a whole rule of a group
 * (clone3's ENOSYS), then argument rules, each once. A syscall reached from
 * allow (bare, a member, or the syscall of a rule of an allowed group) gets
 * no rule at all. Entries come per syscall, in the order syscalls are first
 * reached, rules in table order. ret is written only on success.
 * Errors: -ENOENT an unknown group (err names it), -ELOOP groups nested
 * deeper than 8, -ENOMEM. */
int scg_resolve(const char *const *deny, size_t n_deny, const char *const *allow, size_t n_allow,
		struct scg_set *ret, struct tn_error *err);

void scg_set_free(struct scg_set *s);

/* One system call a process makes, and what it passes: arg < 0 when its
 * arguments vary (any rule on the syscall may refuse it), else the n_values
 * values its argument arg can take, the others not compared by any rule. */
struct scg_use {
	const char *syscall;
	int arg;
	const uint64_t *values;
	size_t n_values;
};

/* scg_spares - whether no entry of set can refuse a call of use (n of
 * them): an entry that names one of its syscalls refuses it when it is whole,
 * when the call's arguments vary, when it compares another argument, or when
 * one of the call's values matches it ((value & mask) == value of the rule).
 * Returns NULL when none can, else the syscall of the first entry that can.
 * Pure. */
const char *scg_spares(const struct scg_set *set, const struct scg_use *use, size_t n);

#endif
