/* test_spawn_steps.c - the order of a command's set-up (init/process/spawn.c,
 * spawn_steps), the one copy of it: seccomp last, so that its filter need
 * allow no set-up call; no_new_privs before Landlock, which requires it
 * without CAP_SYS_ADMIN; the session first; the oom_score_adj file opened
 * before the uid change; the parent-death signal after it (the uid change
 * clears it); the workdir entered as the command's user. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "process/spawn.h"

/* The index of the step named name; fails the test when there is none. */
static size_t at(const char *name)
{
	for (size_t i = 0; spawn_step_name(i); i++)
		if (strcmp(spawn_step_name(i), name) == 0)
			return i;
	fail_msg("no set-up step %s", name);
	return 0;
}

static void seccomp_last(void **state)
{
	size_t n = 0;

	(void)state;
	while (spawn_step_name(n))
		n++;
	assert_true(n >= 2);
	assert_string_equal(spawn_step_name(n - 1), "seccomp");
}

static void the_order_that_works(void **state)
{
	(void)state;
	assert_int_equal(at("session"), 0);
	assert_true(at("no_new_privs") < at("landlock"));
	assert_true(at("oom_score_adj") < at("ids"));
	assert_true(at("ids") < at("capabilities"));
	assert_true(at("ids") < at("parent_death"));
	assert_true(at("ids") < at("workdir"));
	assert_true(at("fds") < at("landlock"));
	assert_true(at("signals") < at("seccomp"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(seccomp_last),
		cmocka_unit_test(the_order_that_works),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
