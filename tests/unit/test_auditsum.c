/* test_auditsum.c - unit tests of policy/auditsum.c, the summary of an audit
 * log a person reads (turninit audit-verify --summary, docs/audit.md "A
 * summary"): a fixed log in, the whole text out. The summary checks nothing,
 * so no chain is built here ("prev" is any text). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/auditsum.h"

#define P "\"prev\":\"x\""
#define T "\"time\":\"2026-12-01T10:00:00.000Z\""

/* The summary of lines (NULL-terminated), as asum_text writes it. */
static char *summary_of(const char *const *lines)
{
	struct asum *s = asum_new();
	char *text;

	assert_non_null(s);
	for (size_t i = 0; lines[i]; i++)
		assert_int_equal(asum_line(s, lines[i], strlen(lines[i])), 0);
	text = asum_text(s);
	asum_free(s);
	assert_non_null(text);
	return text;
}

static void exit_line(char *buf, size_t n, const char *id, const char *end, const char *code, const char *sig,
		      const char *flags, int out, int err)
{
	snprintf(buf, n,
		 "{\"event\":\"exit\"," P "," T ",\"stream\":0,\"id\":\"%s\",\"pid\":6,"
		 "\"start\":\"2026-12-01T10:00:00.100Z\",\"end\":\"%s\",\"code\":%s,\"signal\":%s,%s"
		 "\"stdout_bytes\":%d,\"stderr_bytes\":%d}",
		 id, end, code, sig, flags, out, err);
}

/* Every kind of line of one turn: commands that exit, are killed on their
 * timeout, cancelled, refused and never end; a rejected line; net decisions
 * counted per verdict, host and port (a tunnel's end is none); the change
 * record in `git status` form. */
static void whole_turn(void **state)
{
	char e1[512], e2[512], e3[512];
	(void)state;
	exit_line(e1, sizeof(e1), "c1", "2026-12-01T10:00:00.145Z", "0", "null",
		  "\"timed_out\":false,\"cancelled\":false,", 1157, 0);
	exit_line(e2, sizeof(e2), "c2", "2026-12-01T10:00:03.100Z", "null", "9",
		  "\"timed_out\":true,\"cancelled\":false,", 0, 12);
	exit_line(e3, sizeof(e3), "c 3", "2026-12-01T10:00:01.000Z", "null", "15",
		  "\"timed_out\":false,\"cancelled\":true,\"truncated\":true,", 4194304, 0);
	const char *const lines[] = {
		"{\"event\":\"turn_start\"," P ",\"turn\":\"0123456789abcdef0123456789abcdef\"," T
		",\"mode\":\"serve\"}",
		"{\"event\":\"exec\"," P "," T ",\"stream\":0,\"id\":\"c1\",\"command\":\"ls\"}",
		"{\"event\":\"exec\"," P "," T ",\"stream\":0,\"id\":\"c2\",\"command\":\"sleep 9\"}",
		"{\"event\":\"exec\"," P "," T ",\"stream\":0,\"id\":\"c 3\",\"command\":\"yes\"}",
		"{\"event\":\"exec\"," P "," T ",\"stream\":0,\"id\":\"c4\",\"command\":\"x\"}",
		"{\"event\":\"refused\"," P "," T ",\"stream\":0,\"id\":\"c4\",\"reason\":\"no such cwd\"}",
		"{\"event\":\"exec\"," P "," T ",\"stream\":0,\"id\":\"c5\",\"command\":\"y\"}",
		"{\"event\":\"rejected\"," P "," T ",\"stream\":0,\"id\":null,\"reason\":\"not JSON\"}",
		"{\"event\":\"net\"," P "," T
		",\"verdict\":\"allowed\",\"request\":\"CONNECT\",\"host\":\"example.org\",\"port\":443}",
		"{\"event\":\"net\"," P "," T
		",\"verdict\":\"refused\",\"request\":\"HTTP\",\"host\":\"evil.test\",\"port\":80}",
		"{\"event\":\"net\"," P "," T
		",\"verdict\":\"closed\",\"request\":\"CONNECT\",\"host\":\"example.org\",\"port\":443}",
		"{\"event\":\"net\"," P "," T
		",\"verdict\":\"allowed\",\"request\":\"CONNECT\",\"host\":\"example.org\",\"port\":443}",
		"{\"event\":\"net\"," P "," T
		",\"verdict\":\"allowed\",\"request\":\"CONNECT\",\"host\":\"::1\",\"port\":8080}",
		e1,
		e2,
		e3,
		"{\"event\":\"change\"," P "," T ",\"op\":\"changed\",\"what\":[\"mode\"],\"path\":\".\"}",
		"{\"event\":\"change\"," P "," T
		",\"op\":\"changed\",\"what\":[\"content\",\"owner\"],\"path\":\"src/a.c\"}",
		"{\"event\":\"change\"," P "," T ",\"op\":\"added\",\"what\":[],\"path\":\"new file\"}",
		"{\"event\":\"change\"," P "," T ",\"op\":\"removed\",\"what\":[\"type\"],\"path\":\"d\"}",
		"{\"event\":\"change\"," P "," T ",\"op\":\"added\",\"what\":[\"type\"],\"path\":\"d\"}",
		"{\"event\":\"change\"," P "," T ",\"op\":\"removed\",\"what\":[],\"path_base64\":\"/w==\"}",
		"{\"event\":\"changes\"," P "," T
		",\"added\":2,\"removed\":2,\"changed\":2,\"complete\":false}",
		"{\"event\":\"turn_end\"," P "," T ",\"exit_code\":0,\"lines\":26}",
		NULL,
	};
	char *text = summary_of(lines);

	assert_string_equal(text,
			    "turn 0123456789abcdef0123456789abcdef (serve): 5 commands, 1 rejected, ended with exit 0\n"
			    "  cmd 0 c1: 45 ms, exit 0, out 1157 B, err 0 B\n"
			    "  cmd 0 c2: 3000 ms, signal 9, timed out, out 0 B, err 12 B\n"
			    "  cmd 0 \"c 3\": 900 ms, signal 15, cancelled, truncated, out 4194304 B, err 0 B\n"
			    "  cmd 0 c4: refused: \"no such cwd\"\n"
			    "  cmd 0 c5: no end in the log\n"
			    "  rejected 0 null: \"not JSON\"\n"
			    "  net allowed example.org:443 x2\n"
			    "  net refused evil.test:80 x1\n"
			    "  net allowed [::1]:8080 x1\n"
			    "   m . (mode)\n"
			    "   M src/a.c (content, owner)\n"
			    "  A  \"new file\"\n"
			    "   D d (type)\n"
			    "  A  d (type)\n"
			    "   D base64:/w==\n"
			    "  changes: 2 added, 2 removed, 2 changed, not complete\n");
	free(text);
}

/* Lines that are not JSON objects or come before any turn add nothing; a
 * byte outside printable ASCII never reaches the text raw; an id reused after
 * its command ended opens a new command; a turn cut short says so. */
static void odd_lines(void **state)
{
	const char *const lines[] = {
		"{\"event\":\"exec\"," P "," T ",\"stream\":0,\"id\":\"before\"}",
		"not json",
		"[1]",
		"{\"event\":\"turn_start\"," P ",\"turn\":\"fedcba9876543210fedcba9876543210\"," T
		",\"mode\":\"listen\"}",
		"{\"event\":\"exec\"," P "," T ",\"stream\":2,\"id\":\"\\u001B[2Jx\",\"command\":\"ls\"}",
		"{\"event\":\"exit\"," P "," T
		",\"stream\":2,\"id\":\"\\u001B[2Jx\",\"start\":\"bad\",\"end\":\"2026-12-01T10:00:00.145Z\",\"code\":1,\"signal\":null,\"stdout_bytes\":0,\"stderr_bytes\":0}",
		"{\"event\":\"exec\"," P "," T ",\"stream\":2,\"id\":\"\\u001B[2Jx\",\"command\":\"ls\"}",
		"{\"event\":\"exit\"," P "," T ",\"stream\":1,\"id\":\"nope\",\"code\":0}",
		"{\"event\":\"change\"," P "," T
		",\"op\":\"changed\",\"what\":[\"content\"],\"path\":\"caf\\u00e9\\u007f\"}",
		NULL,
	};
	char *text = summary_of(lines);

	(void)state;
	assert_string_equal(text,
			    "turn fedcba9876543210fedcba9876543210 (listen): 2 commands, 0 rejected, no turn_end\n"
			    "  cmd 2 \"\\u001B[2Jx\": ? ms, exit 1, out 0 B, err 0 B\n"
			    "  cmd 2 \"\\u001B[2Jx\": no end in the log\n"
			    "   M \"caf\\u00E9\\u007F\" (content)\n");
	free(text);
}

static void no_turn(void **state)
{
	const char *const lines[] = { "{}", NULL };
	char *text = summary_of(lines);

	(void)state;
	assert_string_equal(text, "no turn in the log\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole_turn),
		cmocka_unit_test(odd_lines),
		cmocka_unit_test(no_turn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
