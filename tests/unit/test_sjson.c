/* test_sjson.c - unit tests of policy/sjson.c: RFC 3339 times written, the
 * strict-JSON front end's messages, and its allocation guard. (Parsing times
 * and the guard over a whole parse are tested through their users too:
 * test_manifest.c, test_request.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jansson_fail.h"
#include "policy/sjson.h"

/* Written as parsed: every second of the parse tests' range, both forms. */
static void time_format_round_trips(void **state)
{
	static const struct {
		int64_t ms;
		const char *s, *s_ms;
	} cases[] = {
		{ 0, "1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000Z" },
		{ -1, "1969-12-31T23:59:59Z", "1969-12-31T23:59:59.999Z" },
		{ 951827696000LL, "2000-02-29T12:34:56Z", "2000-02-29T12:34:56.000Z" },
		{ 1700000000123LL, "2023-11-14T22:13:20Z", "2023-11-14T22:13:20.123Z" },
		{ 2147483648999LL, "2038-01-19T03:14:08Z", "2038-01-19T03:14:08.999Z" },
		{ 253402300799999LL, "9999-12-31T23:59:59Z", "9999-12-31T23:59:59.999Z" },
		{ -62167219200000LL, "0000-01-01T00:00:00Z", "0000-01-01T00:00:00.000Z" },
	};
	char buf[SJ_TIME_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t t = 0;

		assert_int_equal(sj_time_format(cases[i].ms, false, buf), 0);
		assert_string_equal(buf, cases[i].s);
		assert_int_equal(sj_time_format(cases[i].ms, true, buf), 0);
		assert_string_equal(buf, cases[i].s_ms);
		assert_int_equal(sj_time_parse(cases[i].s, &t), 0);
		assert_int_equal(t, cases[i].ms >= 0 ? cases[i].ms / 1000 : (cases[i].ms - 999) / 1000);
	}
	/* every day of a leap year and of the years around the epoch */
	for (int64_t d = -800; d < 800; d++) {
		int64_t t = 0;

		assert_int_equal(sj_time_format(d * 86400000 + 3723000, false, buf), 0);
		assert_int_equal(sj_time_parse(buf, &t), 0);
		assert_int_equal(t, d * 86400 + 3723);
	}
	strcpy(buf, "untouched");
	assert_int_equal(sj_time_format(253402300800000LL, false, buf), -ERANGE);
	assert_int_equal(sj_time_format(-62167219200001LL, true, buf), -ERANGE);
	assert_string_equal(buf, "untouched");
}

/* One line per kind of bad JSON, naming where. */
static void load_errors_are_one_line(void **state)
{
	static const struct {
		const char *text;
		int code;
		const char *msg;
	} cases[] = {
		{ "{\"a\":1,\"a\":2}", -EBADMSG, "duplicate key \"a\" (line 1, column" },
		{ "{\"a\":\"\xff\"}", -EBADMSG, "not valid UTF-8 (line 1" },
		{ "{\"a\":99999999999999999999}", -EINVAL, "number out of range: " },
		{ "{\"a\":", -EBADMSG, "not valid JSON: " },
		{ "{\"a\":\"x\\u0000y\"}", -EBADMSG, "not valid JSON: " },
		{ "1", -EBADMSG, "not valid JSON: " },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_error_t je;
		struct tn_error err = { 0 };
		json_t *v;

		sj_guard_begin();
		v = sj_load(cases[i].text, strlen(cases[i].text), false, &je);
		assert_false(sj_guard_end());
		assert_null(v);
		assert_int_equal(sj_error(&je, &err), cases[i].code);
		if (!strstr(err.msg, cases[i].msg) || strchr(err.msg, '\n'))
			fail_msg("%s: \"%s\", want \"%s\"", cases[i].text, err.msg, cases[i].msg);
	}
	{
		json_error_t je;
		json_t *v = sj_load("1", 1, true, &je);

		assert_non_null(v);
		assert_int_equal(json_integer_value(v), 1);
		json_decref(v);
	}
}

/* The guard notes a failed allocation and puts back the allocator it found. */
static void guard_notes_a_failed_allocation(void **state)
{
	json_malloc_t m;
	json_free_t f;
	json_error_t je;
	json_t *v;

	static const char long_text[] = "{\"a\":\"bcdefghijklmnopqrstuvwxyz\"}";

	(void)state;
	json_set_alloc_funcs(jf_malloc, free);
	jf_count = 0;
	jf_fail_at = 2;
	sj_guard_begin();
	v = sj_load(long_text, strlen(long_text), false, &je);
	assert_true(sj_guard_end());
	json_decref(v);
	json_get_alloc_funcs(&m, &f);
	assert_ptr_equal(m, jf_malloc);
	assert_ptr_equal(f, free);
	jf_count = 0;
	jf_fail_at = -1;
	sj_guard_begin();
	v = sj_load("{\"a\":\"b\"}", strlen("{\"a\":\"b\"}"), false, &je);
	assert_false(sj_guard_end());
	assert_non_null(v);
	json_decref(v);
	json_set_alloc_funcs(malloc, free);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(time_format_round_trips),
		cmocka_unit_test(load_errors_are_one_line),
		cmocka_unit_test(guard_notes_a_failed_allocation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
