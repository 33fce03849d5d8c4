/* jansson_fail.h - an allocator for jansson that fails the jf_fail_at-th
 * allocation after jf_count was set to 0 (json_set_alloc_funcs(jf_malloc,
 * free)): the unit tests of what must hold under memory pressure. */
#ifndef TURNINIT_TEST_JANSSON_FAIL_H
#define TURNINIT_TEST_JANSSON_FAIL_H

#include <stdlib.h>

static long jf_fail_at, jf_count;

static void *jf_malloc(size_t n)
{
	return ++jf_count == jf_fail_at ? NULL : malloc(n);
}

#endif
