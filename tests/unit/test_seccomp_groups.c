/* test_seccomp_groups.c - invariants of the seccomp group table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <seccomp.h>
#include <string.h>

#include "seccomp_groups.h"

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
		assert_non_null(g->members[0]);
		assert_ptr_equal(scg_find(g->name), g);
	}
	assert_null(scg_find("@nosuchgroup"));
	assert_null(scg_find("mount"));
}

/* Every member is a syscall of x86_64 or a group of the table. */
static void every_member_is_known(void **state)
{
	(void)state;
	for (size_t i = 0; i < scg_n_groups; i++)
		for (const char *const *m = scg_groups[i].members; *m; m++) {
			if ((*m)[0] == '@')
				assert_non_null(scg_find(*m));
			else if (seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, *m) == __NR_SCMP_ERROR)
				fail_msg("%s: unknown syscall %s", scg_groups[i].name, *m);
		}
}

struct collected {
	const char *names[512];
	size_t n;
};

static int collect(const char *name, void *data)
{
	struct collected *c = data;

	c->names[c->n++] = name;
	return 0;
}

static int has(const struct collected *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->names[i], name) == 0)
			return 1;
	return 0;
}

/* The default set holds everything the brief's section 6 names. */
static void default_covers_the_brief(void **state)
{
	static const char *const must[] = {
		"clone", "clone3", "unshare", "setns", "mount", "umount2", "fsopen", "fsconfig",
		"fsmount", "fspick", "open_tree", "move_mount", "mount_setattr", "pivot_root",
		"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "keyctl",
		"add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
		"io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load",
		"kexec_file_load", "init_module", "finit_module", "delete_module",
		"open_by_handle_at", "ioctl", "socket", "personality", NULL,
	};
	const char *names[] = { "@default" };
	struct collected c = { .n = 0 };

	(void)state;
	assert_int_equal(scg_expand(names, 1, collect, &c, NULL), 0);
	for (const char *const *m = must; *m; m++)
		if (!has(&c, *m))
			fail_msg("@default lacks %s", *m);
	/* each name once */
	for (size_t i = 0; i < c.n; i++)
		for (size_t j = i + 1; j < c.n; j++)
			assert_string_not_equal(c.names[i], c.names[j]);
	/* never the basics a shell needs */
	assert_false(has(&c, "execve"));
	assert_false(has(&c, "read"));
	assert_false(has(&c, "fork"));
}

static void unknown_group_is_an_error(void **state)
{
	const char *names[] = { "@mount", "@nosuch" };
	struct collected c = { .n = 0 };
	struct tn_error err = { 0 };

	(void)state;
	assert_int_equal(scg_expand(names, 2, collect, &c, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "@nosuch"));
}

static int stop_at_two(const char *name, void *data)
{
	size_t *n = data;

	(void)name;
	return ++*n == 2 ? -E2BIG : 0;
}

static void emit_error_stops_the_walk(void **state)
{
	const char *names[] = { "@mount" };
	size_t n = 0;

	(void)state;
	assert_int_equal(scg_expand(names, 1, stop_at_two, &n, NULL), -E2BIG);
	assert_int_equal(n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_is_sorted_and_unique),
		cmocka_unit_test(every_group_is_named_and_helped),
		cmocka_unit_test(every_member_is_known),
		cmocka_unit_test(default_covers_the_brief),
		cmocka_unit_test(unknown_group_is_an_error),
		cmocka_unit_test(emit_error_stops_the_walk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
