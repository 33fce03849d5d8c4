/* test_netpeer.c - the proxy's table of pending peers (policy/netpeer.c):
 * a pair taken once, for its own proxy port only, dropped after NP_TTL_MS,
 * and a full table refusing the next. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "policy/netpeer.h"

static struct np_table *table(void)
{
	struct np_table *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	return t;
}

static void test_take_once(void **state)
{
	struct np_table *t = table();

	(void)state;
	assert_false(np_take(t, 40000, 8080, 1000)); /* empty */
	assert_int_equal(np_add(t, 40000, 8080, 1000), 0);
	assert_false(np_take(t, 40001, 8080, 1000)); /* another source port */
	assert_false(np_take(t, 40000, 8081, 1000)); /* another proxy port */
	assert_true(np_take(t, 40000, 8080, 1001));
	assert_false(np_take(t, 40000, 8080, 1002)); /* one connection a pair */
	assert_int_equal(t->n, 0);
	/* renewed, not doubled: a second message for a pair admits one connection */
	assert_int_equal(np_add(t, 40000, 8080, 1000), 0);
	assert_int_equal(np_add(t, 40000, 8080, 2000), 0);
	assert_int_equal(t->n, 1);
	assert_true(np_take(t, 40000, 8080, 2000));
	assert_false(np_take(t, 40000, 8080, 2000));
	/* the same source port to two proxy ports: two pairs */
	assert_int_equal(np_add(t, 40000, 8080, 3000), 0);
	assert_int_equal(np_add(t, 40000, 9090, 3000), 0);
	assert_true(np_take(t, 40000, 9090, 3000));
	assert_true(np_take(t, 40000, 8080, 3000));
	assert_int_equal(np_add(t, 0, 8080, 3000), -EINVAL);
	assert_int_equal(np_add(t, 40000, 0, 3000), -EINVAL);
	assert_int_equal(t->n, 0);
	free(t);
}

static void test_expiry(void **state)
{
	struct np_table *t = table();
	uint64_t at = 5000000;

	(void)state;
	assert_int_equal(np_add(t, 40000, 8080, at), 0);
	assert_true(np_take(t, 40000, 8080, at + NP_TTL_MS)); /* 30 s old: still pending */
	assert_int_equal(np_add(t, 40000, 8080, at), 0);
	assert_false(np_take(t, 40000, 8080, at + NP_TTL_MS + 1)); /* older: dropped */
	assert_int_equal(t->n, 0);
	/* a renewal restarts its time */
	assert_int_equal(np_add(t, 40001, 8080, at), 0);
	assert_int_equal(np_add(t, 40001, 8080, at + 20000), 0);
	assert_true(np_take(t, 40001, 8080, at + 40000));
	/* old pairs are dropped by an add too, and the young kept */
	assert_int_equal(np_add(t, 40002, 8080, at), 0);
	assert_int_equal(np_add(t, 40003, 8080, at + 20000), 0);
	assert_int_equal(np_add(t, 40004, 8080, at + 40000), 0);
	assert_int_equal(t->n, 2);
	assert_false(np_take(t, 40002, 8080, at + 40000));
	assert_true(np_take(t, 40003, 8080, at + 40000));
	assert_true(np_take(t, 40004, 8080, at + 40000));
	/* a clock read earlier than an entry's (never, from one clock) keeps it */
	assert_int_equal(np_add(t, 40005, 8080, at), 0);
	assert_true(np_take(t, 40005, 8080, at - 1));
	free(t);
}

static void test_full(void **state)
{
	struct np_table *t = table();

	(void)state;
	for (unsigned i = 0; i < NP_MAX; i++)
		assert_int_equal(np_add(t, (uint16_t)(1024 + i), 8080, 1000), 0);
	assert_int_equal(np_add(t, 9999, 8080, 1000), -ENOSPC); /* full: refused, nothing added */
	assert_int_equal(t->n, NP_MAX);
	assert_false(np_take(t, 9999, 8080, 1000));
	assert_int_equal(np_add(t, 1024, 8080, 1001), 0); /* one pending: renewed */
	/* every pair still there, each once */
	for (unsigned i = 0; i < NP_MAX; i++)
		assert_true(np_take(t, (uint16_t)(1024 + i), 8080, 1002));
	assert_int_equal(t->n, 0);
	/* full of old pairs: they make room */
	for (unsigned i = 0; i < NP_MAX; i++)
		assert_int_equal(np_add(t, (uint16_t)(1024 + i), 8080, 1000), 0);
	assert_int_equal(np_add(t, 9999, 8080, 1000 + NP_TTL_MS + 1), 0);
	assert_int_equal(t->n, 1);
	assert_true(np_take(t, 9999, 8080, 1000 + NP_TTL_MS + 1));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_once),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
