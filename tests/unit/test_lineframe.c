/* test_lineframe.c - unit tests of policy/lineframe.c, the one line framer
 * of serve's connections, turninit call, the MCP bridge and audit-verify:
 * whole lines in order, empty ones too, none joined or split across reads,
 * and a line past the bound said once and dropped to its newline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "policy/lineframe.h"

/* in fed in reads of step bytes to a framer of bound max, as the callers
 * feed it (the kept bytes moved to the buffer's start); what it gave, as
 * "L<line>|" and "X|" for a long line, into out. */
static void feed(const char *in, size_t step, size_t max, char *out, size_t outsz)
{
	struct lf_frame f = { .max = max };
	char buf[256];
	size_t len = 0, o = 0, total = strlen(in);

	out[0] = '\0';
	for (size_t at = 0; at < total;) {
		size_t n = total - at < step ? total - at : step, pos = 0, l;
		const char *line;
		enum lf_kind k;

		assert_true(len + n <= sizeof(buf));
		memcpy(buf + len, in + at, n);
		len += n;
		at += n;
		while ((k = lf_next(&f, buf, len, &pos, &line, &l)) != LF_MORE) {
			if (k == LF_LINE)
				o += (size_t)snprintf(out + o, outsz - o, "L%.*s|", (int)l, line);
			else
				o += (size_t)snprintf(out + o, outsz - o, "X|");
			assert_true(o < outsz);
		}
		memmove(buf, buf + pos, len - pos);
		len -= pos;
		assert_true(len <= max);
	}
}

static void lines_in_order(void **state)
{
	char out[512];

	(void)state;
	for (size_t step = 1; step <= 12; step++) {
		feed("ab\n\ncde\nf", step, 4, out, sizeof(out));
		assert_string_equal(out, "Lab|L|Lcde|");
	}
}

/* a line of max bytes is a line; of max + 1 it is long, said once whether
 * its newline comes in the same read or many reads later, and the next line
 * is whole */
static void long_line_said_once(void **state)
{
	char out[512];

	(void)state;
	for (size_t step = 1; step <= 30; step++) {
		feed("abcd\nabcde\nok\n", step, 4, out, sizeof(out));
		assert_string_equal(out, "Labcd|X|Lok|");
		feed("0123456789012345678901234\nok\n\n", step, 4, out, sizeof(out));
		assert_string_equal(out, "X|Lok|L|");
		feed("0123456789\n0123456789\nz\n", step, 4, out, sizeof(out));
		assert_string_equal(out, "X|X|Lz|");
	}
}

/* a long line's bytes so far are given with it; a copy looks ahead */
static void long_line_bytes_and_look_ahead(void **state)
{
	struct lf_frame f = { .max = 3 }, peek;
	const char *at = NULL;
	size_t pos = 0, p, n = 0;

	(void)state;
	peek = f;
	p = pos;
	assert_int_equal(lf_next(&peek, "abcdef", 6, &p, &at, &n), LF_LONG);
	assert_true(peek.discarding);
	assert_false(f.discarding);
	assert_int_equal(p, 6);
	assert_int_equal(n, 6);
	assert_memory_equal(at, "abcdef", 6);
	assert_int_equal(lf_next(&f, "abc", 3, &pos, &at, &n), LF_MORE);
	assert_int_equal(pos, 0);
	assert_int_equal(lf_next(&f, "", 0, &pos, &at, &n), LF_MORE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines_in_order),
		cmocka_unit_test(long_line_said_once),
		cmocka_unit_test(long_line_bytes_and_look_ahead),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
