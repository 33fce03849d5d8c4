/* test_seccomp_groups.c - invariants of the seccomp group table and its expansion. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>

#include "policy/seccomp_groups.h"

static void table_is_sorted_and_unique(void **state)
{
	(void)state;
	for (size_t i = 1; i < scg_n_groups; i++)
		assert_true(strcmp(scg_groups[i - 1].name, scg_groups[i].name) < 0);
}

static void every_group_is_named_and_helped(void **state)
{
	(void)state;
	for (size_t i = 0; i < scg_n_groups; i++) {
		const struct scg_group *g = &scg_groups[i];

		assert_int_equal(g->name[0], '@');
		assert_non_null(g->help);
		assert_true(strlen(g->help) > 10);
		assert_non_null(g->members);
		assert_ptr_equal(scg_find(g->name), g);
	}
	assert_null(scg_find("@nosuchgroup"));
	assert_null(scg_find("mount"));
}

/* Every member and every rule's syscall is a syscall of x86_64, every member
 * group is in the table; a group has members or rules, and rules_help exactly
 * when it has argument rules. */
static void every_member_is_known(void **state)
{
	(void)state;
	for (size_t i = 0; i < scg_n_groups; i++) {
		const struct scg_group *g = &scg_groups[i];
		bool args = false;

		assert_true(g->members[0] || g->n_rules);
		for (const char *const *m = g->members; *m; m++) {
			if ((*m)[0] == '@')
				assert_non_null(scg_find(*m));
			else if (seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, *m) == __NR_SCMP_ERROR)
				fail_msg("%s: unknown syscall %s", g->name, *m);
		}
		for (size_t j = 0; j < g->n_rules; j++) {
			const struct scg_rule *r = &g->rules[j];

			if (seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, r->syscall) ==
			    __NR_SCMP_ERROR)
				fail_msg("%s: unknown syscall %s", g->name, r->syscall);
			if (!r->whole) {
				args = true;
				assert_true(r->cmp.arg <= 5);
				assert_true(r->cmp.mask != 0);
				assert_int_equal(r->cmp.value & ~r->cmp.mask, 0);
			}
		}
		if (args)
			assert_true(g->rules_help && strlen(g->rules_help) > 10);
		else
			assert_null(g->rules_help);
	}
}

/* resolve DENY... [+ALLOW...]: the set, or fail. */
static struct scg_set resolve(const char *const *deny, size_t nd, const char *const *allow, size_t na)
{
	struct scg_set set = { 0 };
	struct tn_error err = { 0 };

	if (scg_resolve(deny, nd, allow, na, &set, &err) != 0)
		fail_msg("scg_resolve: %s", err.msg);
	return set;
}

/* The rules of set for syscall: how many, and how many whole. */
static size_t rules_for(const struct scg_set *s, const char *syscall, size_t *ret_whole,
			enum scg_action *ret_action)
{
	size_t n = 0, whole = 0;

	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].rule.syscall, syscall) == 0) {
			n++;
			whole += s->v[i].rule.whole;
			if (ret_action)
				*ret_action = s->v[i].rule.action;
		}
	if (ret_whole)
		*ret_whole = whole;
	return n;
}

/* The default set holds everything the design names, with today's rules:
 * argument rules for clone, unshare, ioctl, socket and personality, ENOSYS for
 * clone3, every other syscall whole with EPERM. */
static void default_set_is_exact(void **state)
{
	/* clang-format 14 would put each entry of this table on a line of its own: kept as written */
	/* clang-format off */
	static const char *const whole_eperm[] = {
		"setns", "mount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "open_tree",
		"move_mount", "mount_setattr", "pivot_root", "chroot", "ptrace", "process_vm_readv",
		"process_vm_writev", "pidfd_getfd", "perf_event_open", "keyctl", "add_key",
		"request_key", "bpf", "userfaultfd", "io_uring_setup", "io_uring_enter",
		"io_uring_register", "kexec_load", "kexec_file_load", "init_module", "finit_module",
		"delete_module", "open_by_handle_at", "adjtimex", "clock_adjtime", "clock_settime",
		"settimeofday", "ioperm", "iopl", "reboot", "swapoff", "swapon", NULL,
	};
	/* clang-format on */
	static const struct {
		const char *name;
		size_t n;
	} args[] = {
		{ "clone", 8 }, { "unshare", 8 }, { "ioctl", 2 }, { "socket", 2 }, { "personality", 61 },
	};
	const char *deny[] = { "@default" };
	struct scg_set s = resolve(deny, 1, NULL, 0);
	size_t whole, total = 0;
	enum scg_action act = SCG_EPERM;

	(void)state;
	for (const char *const *w = whole_eperm; *w; w++) {
		assert_int_equal(rules_for(&s, *w, &whole, &act), 1);
		assert_int_equal(whole, 1);
		assert_int_equal(act, SCG_EPERM);
		total++;
	}
	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		if (rules_for(&s, args[i].name, &whole, &act) != args[i].n)
			fail_msg("%s: %zu rules, want %zu", args[i].name,
				 rules_for(&s, args[i].name, NULL, NULL), args[i].n);
		assert_int_equal(whole, 0);
		total += args[i].n;
	}
	assert_int_equal(rules_for(&s, "clone3", &whole, &act), 1);
	assert_int_equal(whole, 1);
	assert_int_equal(act, SCG_ENOSYS);
	total++;
	assert_int_equal(s.n, total);
	/* never the basics a shell needs */
	assert_int_equal(rules_for(&s, "execve", NULL, NULL), 0);
	assert_int_equal(rules_for(&s, "read", NULL, NULL), 0);
	assert_int_equal(rules_for(&s, "fork", NULL, NULL), 0);
	scg_set_free(&s);
}

/* The argument rules compare what the kernel reads: TIOCSTI on the low 32 bits
 * of argument 1, a namespace flag in argument 0. */
static void argument_rules_are_the_documented_ones(void **state)
{
	const char *deny[] = { "@tty-inject", "@namespaces" };
	struct scg_set s = resolve(deny, 2, NULL, 0);
	bool tiocsti = false, newuser = false;

	(void)state;
	for (size_t i = 0; i < s.n; i++) {
		const struct scg_rule *r = &s.v[i].rule;

		if (strcmp(r->syscall, "ioctl") == 0 && r->cmp.value == TIOCSTI) {
			tiocsti = r->cmp.arg == 1 && r->cmp.mask == 0xffffffffu;
			assert_non_null(strstr(s.v[i].why, "TIOCSTI"));
		}
		if (strcmp(r->syscall, "unshare") == 0 && r->cmp.value == CLONE_NEWUSER)
			newuser = r->cmp.arg == 0 && r->cmp.mask == CLONE_NEWUSER;
	}
	assert_true(tiocsti);
	assert_true(newuser);
	scg_set_free(&s);
}

/* A bare name denies the whole syscall, whatever group also names it. */
static void bare_name_is_the_whole_syscall(void **state)
{
	static const char *const names[] = { "ioctl", "socket", "unshare", "clone3", "personality" };
	size_t whole;
	enum scg_action act;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *alone[] = { names[i] };
		const char *with[] = { "@default", names[i] };
		const char *before[] = { names[i], "@default" };
		struct scg_set a = resolve(alone, 1, NULL, 0);
		struct scg_set b = resolve(with, 2, NULL, 0);
		struct scg_set c = resolve(before, 2, NULL, 0);

		assert_int_equal(a.n, 1);
		assert_true(a.v[0].rule.whole);
		assert_int_equal(a.v[0].rule.action, SCG_EPERM);
		assert_null(a.v[0].why);
		assert_int_equal(rules_for(&b, names[i], &whole, &act), 1);
		assert_int_equal(whole, 1);
		assert_int_equal(act, SCG_EPERM);
		assert_int_equal(rules_for(&c, names[i], &whole, &act), 1);
		assert_int_equal(whole, 1);
		assert_int_equal(act, SCG_EPERM);
		scg_set_free(&a);
		scg_set_free(&b);
		scg_set_free(&c);
	}
}

/* allow takes a syscall out, whatever rules it had: a bare name, or a group
 * whose members or rules name it. */
static void allow_removes_every_rule_of_a_syscall(void **state)
{
	const char *deny[] = { "@default" };
	const char *allow1[] = { "personality" };
	const char *allow2[] = { "@namespaces" };
	const char *allow3[] = { "@tty-inject", "mount" };
	struct scg_set full = resolve(deny, 1, NULL, 0);
	struct scg_set a = resolve(deny, 1, allow1, 1);
	struct scg_set b = resolve(deny, 1, allow2, 1);
	struct scg_set c = resolve(deny, 1, allow3, 2);

	(void)state;
	assert_int_equal(rules_for(&a, "personality", NULL, NULL), 0);
	assert_int_equal(a.n, full.n - 61);
	assert_int_equal(rules_for(&b, "clone", NULL, NULL) + rules_for(&b, "unshare", NULL, NULL) +
				 rules_for(&b, "clone3", NULL, NULL) + rules_for(&b, "setns", NULL, NULL),
			 0);
	assert_int_equal(b.n, full.n - 18);
	assert_int_equal(rules_for(&c, "ioctl", NULL, NULL) + rules_for(&c, "mount", NULL, NULL), 0);
	assert_int_equal(c.n, full.n - 3);
	scg_set_free(&full);
	scg_set_free(&a);
	scg_set_free(&b);
	scg_set_free(&c);
}

/* The same group twice, or a group and its member, gives each rule once. */
static void each_rule_once(void **state)
{
	const char *deny[] = { "@default", "@tty-inject", "@mount", "mount" };
	const char *one[] = { "@default" };
	struct scg_set s = resolve(deny, 4, NULL, 0);
	struct scg_set d = resolve(one, 1, NULL, 0);

	(void)state;
	assert_int_equal(s.n, d.n);
	for (size_t i = 0; i < s.n; i++)
		for (size_t j = i + 1; j < s.n; j++)
			if (strcmp(s.v[i].rule.syscall, s.v[j].rule.syscall) == 0 &&
			    s.v[i].rule.cmp.arg == s.v[j].rule.cmp.arg &&
			    s.v[i].rule.cmp.mask == s.v[j].rule.cmp.mask &&
			    s.v[i].rule.cmp.value == s.v[j].rule.cmp.value)
				fail_msg("%s twice", s.v[i].rule.syscall);
	scg_set_free(&s);
	scg_set_free(&d);
}

static void unknown_group_is_an_error(void **state)
{
	const char *names[] = { "@mount", "@nosuch" };
	struct scg_set s = { 0 };
	struct tn_error err = { 0 };

	(void)state;
	assert_int_equal(scg_resolve(names, 2, NULL, 0, &s, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "@nosuch"));
	assert_null(s.v);
	assert_int_equal(scg_resolve(NULL, 0, names, 2, &s, &err), -ENOENT);
}

/* scg_spares: the calls of a keeper (a clone with fixed flags, a prctl with
 * fixed options, a call with any arguments) against sets that refuse them
 * or not. */
static void spares_only_what_no_rule_can_refuse(void **state)
{
	static const uint64_t clone_flags[] = { 0x4111 }; /* CLONE_VM | CLONE_VFORK | SIGCHLD */
	static const uint64_t options[] = { 1, 38 };
	const struct scg_use use[] = {
		{ "clone", 0, clone_flags, 1 },
		{ "prctl", 0, options, 2 },
		{ "getppid", -1, NULL, 0 },
	};
	const char *def[] = { "@default" }, *ppid[] = { "@default", "getppid" }, *cl[] = { "clone" },
		   *mnt[] = { "@mount", "setns" };
	struct scg_set s;

	(void)state;
	s = resolve(def, 1, NULL, 0); /* clone only with a namespace flag */
	assert_null(scg_spares(&s, use, 3));
	scg_set_free(&s);
	s = resolve(ppid, 2, NULL, 0);
	assert_string_equal(scg_spares(&s, use, 3), "getppid");
	scg_set_free(&s);
	s = resolve(cl, 1, NULL, 0); /* whole */
	assert_string_equal(scg_spares(&s, use, 3), "clone");
	scg_set_free(&s);
	s = resolve(mnt, 2, NULL, 0); /* none of the three */
	assert_null(scg_spares(&s, use, 3));
	scg_set_free(&s);
	{
		/* an argument rule: matching a value, another argument, or none */
		struct scg_entry e = { .rule = { "clone", SCG_EPERM, false, { 0, 0x100, 0x100 } } };
		struct scg_set one = { .v = &e, .n = 1 };

		assert_string_equal(scg_spares(&one, use, 3), "clone");
		e.rule.cmp = (struct scg_cmp){ 1, 0x100, 0x100 };
		assert_string_equal(scg_spares(&one, use, 3), "clone");
		e.rule.cmp = (struct scg_cmp){ 0, 0x20000, 0x20000 };
		assert_null(scg_spares(&one, use, 3));
		e.rule = (struct scg_rule){ "prctl", SCG_EPERM, false, { 0, 0xffffffff, 38 } };
		assert_string_equal(scg_spares(&one, use, 3), "prctl");
		e.rule.cmp.value = 22; /* PR_SET_SECCOMP: not one of the keeper's */
		assert_null(scg_spares(&one, use, 3));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_is_sorted_and_unique),
		cmocka_unit_test(every_group_is_named_and_helped),
		cmocka_unit_test(every_member_is_known),
		cmocka_unit_test(default_set_is_exact),
		cmocka_unit_test(argument_rules_are_the_documented_ones),
		cmocka_unit_test(bare_name_is_the_whole_syscall),
		cmocka_unit_test(allow_removes_every_rule_of_a_syscall),
		cmocka_unit_test(each_rule_once),
		cmocka_unit_test(unknown_group_is_an_error),
		cmocka_unit_test(spares_only_what_no_rule_can_refuse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
