/* test_auditline.c - unit tests of policy/auditline.c, the audit log's line
 * as bytes (docs/audit.md, "The chain"): what the writer (init/serve/audit.c)
 * encodes and hashes is what the check (policy/auditlog.c) reads and hashes.
 *
 * A line encoded, parsed back as audit-verify parses it and encoded again
 * gives the same bytes; a log written with these functions checks whole, and
 * the check's head is the writer's.
 */
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

#include <jansson.h>
#include <sodium.h>

#include "policy/auditline.h"
#include "policy/auditlog.h"
#include "policy/sjson.h"

static const char turn_id[] = "0123456789abcdef0123456789abcdef";

/* Findings of the check, counted. */
static void count_finding(void *ctx, uint64_t line, bool note, const char *text)
{
	(void)line;
	(void)text;
	if (!note)
		(*(int *)ctx)++;
}

/* ev encoded after prev; the line's bytes must parse back to ev with "prev"
 * (strict JSON), start as turninit starts a line, and encode again to the
 * same bytes. */
static void round_trip(json_t *ev, const uint8_t prev[ALINE_HASH_BYTES])
{
	uint8_t back[ALINE_HASH_BYTES];
	char *line = NULL, *again = NULL;
	size_t n = 0, n2 = 0;
	const char *hex;
	json_error_t je;
	json_t *parsed;

	assert_int_equal(aline_encode(ev, prev, &line, &n), 0);
	assert_int_equal(n, strlen(line));
	assert_true(n > 1 && line[n - 1] == '\n');
	assert_null(memchr(line, '\n', n - 1));
	for (size_t i = 0; i < n; i++)
		assert_true((unsigned char)line[i] < 0x80);
	assert_true(aline_in_order(line, n - 1, json_string_value(json_object_get(ev, "event"))));
	sj_guard_begin();
	parsed = sj_load(line, n - 1, false, &je);
	assert_false(sj_guard_end());
	assert_non_null(parsed);
	hex = json_string_value(json_object_get(parsed, "prev"));
	assert_non_null(hex);
	assert_int_equal(strlen(hex), 2 * ALINE_HASH_BYTES);
	assert_int_equal(sodium_hex2bin(back, sizeof(back), hex, strlen(hex), NULL, NULL, NULL), 0);
	assert_memory_equal(back, prev, ALINE_HASH_BYTES);
	assert_int_equal(json_object_del(parsed, "prev"), 0);
	assert_true(json_equal(parsed, ev));
	assert_int_equal(aline_encode(parsed, back, &again, &n2), 0);
	assert_int_equal(n2, n);
	assert_memory_equal(again, line, n);
	json_decref(parsed);
	free(line);
	free(again);
}

static void encode_parse_encode(void **state)
{
	uint8_t prev[ALINE_HASH_BYTES];
	json_t *ev;

	(void)state;
	for (size_t i = 0; i < sizeof(prev); i++)
		prev[i] = (uint8_t)(i * 37 + 5);
	/* characters that end a line for some readers, a quote, a backslash, a
	 * control character, nested values, numbers and null */
	ev = json_pack("{s:s, s:s, s:I, s:s, s:[s, s], s:{s:b, s:n}, s:f}", "event", "exec", "time",
		       "2026-12-01T10:00:00.000Z", "stream", (json_int_t)3, "command",
		       "echo \xe2\x80\xa8 \xe2\x80\xa9 \xc2\x85 \"q\" \\ \x01 \xf0\x9f\x98\x80", "env_names",
		       "A", "\xc3\xa9", "read_back", "no_new_privs", true, "gone", "ratio", 0.5);
	assert_non_null(ev);
	round_trip(ev, prev);
	json_decref(ev);
}

/* "event" first and "prev" second, whatever ev's order; the rest in ev's */
static void event_then_prev(void **state)
{
	uint8_t prev[ALINE_HASH_BYTES] = { 0 };
	json_t *ev = json_pack("{s:i, s:s, s:s}", "z", 1, "event", "net", "a", "b");
	char *line = NULL;
	size_t n;

	(void)state;
	assert_int_equal(aline_encode(ev, prev, &line, &n), 0);
	assert_string_equal(line,
			    "{\"event\":\"net\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\",\"z\":1,\"a\":\"b\"}\n");
	assert_false(aline_in_order(line, n - 1, "exec"));
	assert_false(aline_in_order(line, 10, "net"));
	assert_false(aline_in_order(line, n - 1, NULL));
	free(line);
	json_decref(ev);
}

static void refused_without_event_or_with_prev(void **state)
{
	uint8_t prev[ALINE_HASH_BYTES] = { 0 };
	char *line = NULL;
	size_t n = 0;
	json_t *ev;

	(void)state;
	ev = json_pack("{s:s}", "time", "x");
	assert_int_equal(aline_encode(ev, prev, &line, &n), -EINVAL);
	json_decref(ev);
	ev = json_pack("{s:i}", "event", 1);
	assert_int_equal(aline_encode(ev, prev, &line, &n), -EINVAL);
	json_decref(ev);
	ev = json_pack("{s:s, s:s}", "event", "exec", "prev", "00");
	assert_int_equal(aline_encode(ev, prev, &line, &n), -EINVAL);
	json_decref(ev);
	assert_null(line);
	assert_int_equal(n, 0);
}

/* One line of a log written as init/serve/audit.c writes it: encoded after
 * the head, which becomes the line's digest. */
static void put(struct alog_check *c, uint8_t head[ALINE_HASH_BYTES], json_t *ev)
{
	char *line = NULL;
	size_t n;

	assert_non_null(ev);
	assert_int_equal(aline_encode(ev, head, &line, &n), 0);
	json_decref(ev);
	alog_line(c, line, n - 1, true);
	aline_digest(line, n - 1, true, head);
	free(line);
}

/* The chain the writer makes is the one the check follows: no finding, and
 * the check's last digest is the writer's head. */
static void chain_digest_agrees(void **state)
{
	uint8_t head[ALINE_HASH_BYTES], whole[ALINE_HASH_BYTES];
	struct alog_check c;
	int findings = 0;
	const char *line;

	(void)state;
	alog_init(&c, NULL, count_finding, &findings);
	aline_first_link(turn_id, head);
	put(&c, head, json_pack("{s:s, s:s}", "event", "turn_start", "turn", turn_id));
	put(&c, head,
	    json_pack("{s:s, s:I, s:s, s:s}", "event", "exec", "stream", (json_int_t)0, "id", "a", "command",
		      "true \xe2\x80\xa8"));
	put(&c, head,
	    json_pack("{s:s, s:I, s:s, s:i}", "event", "exit", "stream", (json_int_t)0, "id", "a", "code",
		      0));
	put(&c, head, json_pack("{s:s, s:i, s:i}", "event", "turn_end", "exit_code", 0, "lines", 4));
	assert_memory_equal(c.last, head, ALINE_HASH_BYTES);
	/* the digest is of the line's bytes with its newline, as one buffer */
	line = (char *)"{\"event\":\"x\"}\n";
	aline_digest(line, strlen(line) - 1, true, head);
	crypto_generichash(whole, sizeof(whole), (const uint8_t *)line, strlen(line), NULL, 0);
	assert_memory_equal(head, whole, sizeof(whole));
	aline_first_link(turn_id, head);
	crypto_generichash(whole, sizeof(whole), (const uint8_t *)turn_id, 32, NULL, 0);
	assert_memory_equal(head, whole, sizeof(whole));
	assert_int_equal(alog_finish(&c), 0);
	assert_int_equal(findings, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(encode_parse_encode),
		cmocka_unit_test(event_then_prev),
		cmocka_unit_test(refused_without_event_or_with_prev),
		cmocka_unit_test(chain_digest_agrees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
