/* test_events.c - unit tests of policy/events.c: each event encoded as the
 * protocol says (docs/protocol.md, compact JSON in this key order), decoded
 * back, and the decoder's refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/events.h"

static void expect_line(char *got, const char *want)
{
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void encoders_write_the_documented_lines(void **state)
{
	char long_msg[TN_ERROR_MSG_MAX + 8];

	(void)state;
	expect_line(ev_started("c1", 42), "{\"event\":\"started\",\"id\":\"c1\",\"pid\":42}");
	expect_line(ev_credential("k1", "git"), "{\"event\":\"credential\",\"id\":\"k1\",\"name\":\"git\"}");
	expect_line(ev_output("c1", false, (const uint8_t *)"hi\n", 3),
		    "{\"event\":\"output\",\"id\":\"c1\",\"stream\":\"stdout\",\"data\":\"aGkK\"}");
	expect_line(ev_output("c1", true, (const uint8_t *)"", 1),
		    "{\"event\":\"output\",\"id\":\"c1\",\"stream\":\"stderr\",\"data\":\"AA==\"}");
	assert_null(ev_output("c1", false, (const uint8_t *)"", 0));
	expect_line(ev_exit("c1",
			    &(struct ev_end){ .wait_status = 3 << 8, .truncated = true, .duration_ms = 17 }),
		    "{\"event\":\"exit\",\"id\":\"c1\",\"code\":3,\"signal\":null,\"timed_out\":false,"
		    "\"truncated\":true,\"duration_ms\":17}");
	expect_line(ev_exit("c1",
			    &(struct ev_end){ .wait_status = 15, .timed_out = true, .duration_ms = 1000 }),
		    "{\"event\":\"exit\",\"id\":\"c1\",\"code\":null,\"signal\":15,\"timed_out\":true,"
		    "\"truncated\":false,\"duration_ms\":1000}");
	/* lost and oom_killed are written only when true */
	expect_line(ev_exit("c1", &(struct ev_end){ .wait_status = 9,
						    .lost = true,
						    .oom_killed = true,
						    .duration_ms = 2 }),
		    "{\"event\":\"exit\",\"id\":\"c1\",\"code\":null,\"signal\":9,\"timed_out\":false,"
		    "\"truncated\":false,\"duration_ms\":2,\"lost\":true,\"oom_killed\":true}");
	expect_line(ev_info("i1", "{\"turninit\":1,\"home\":\"/home/agent\"}"),
		    "{\"event\":\"info\",\"id\":\"i1\",\"manifest\":{\"turninit\":1,\"home\":\"/home/agent\"}}");
	expect_line(ev_error(NULL, "request: x"),
		    "{\"event\":\"error\",\"id\":null,\"message\":\"request: x\"}");
	/* a message cut inside a UTF-8 character loses the partial character */
	memset(long_msg, 'a', sizeof(long_msg));
	memcpy(long_msg + TN_ERROR_MSG_MAX - 2, "\xe2\x9c\x93", 3);
	long_msg[sizeof(long_msg) - 1] = '\0';
	{
		char *l = ev_error("e", long_msg);

		assert_non_null(l);
		assert_null(strstr(l, "\xe2"));
		free(l);
	}
	expect_line(ev_error("e", "bad \xff byte"),
		    "{\"event\":\"error\",\"id\":\"e\",\"message\":\"error: the message is not valid UTF-8\"}");
}

static void decoder_reads_what_encoders_write(void **state)
{
	struct ev_event e;
	char *l;

	(void)state;
	l = ev_output("o", true, (const uint8_t *)"\x00\x01\x02", 3);
	assert_int_equal(ev_parse(l, strlen(l), &e, NULL), 0);
	assert_int_equal(e.kind, EV_OUTPUT);
	assert_string_equal(e.id, "o");
	assert_true(e.err_stream);
	assert_int_equal(e.len, 3);
	assert_memory_equal(e.data, "\x00\x01\x02", 3);
	ev_clear(&e);
	free(l);
	l = ev_exit("x", &(struct ev_end){ .wait_status = 9, .timed_out = true, .duration_ms = 5 });
	assert_int_equal(ev_parse(l, strlen(l), &e, NULL), 0);
	assert_int_equal(e.kind, EV_EXIT);
	assert_false(e.has_code);
	assert_true(e.has_signal);
	assert_int_equal(e.signal, 9);
	assert_true(e.timed_out);
	assert_false(e.lost);
	assert_false(e.oom_killed);
	ev_clear(&e);
	free(l);
	l = ev_exit("x", &(struct ev_end){ .wait_status = 9, .lost = true });
	assert_int_equal(ev_parse(l, strlen(l), &e, NULL), 0);
	assert_true(e.lost);
	assert_false(e.oom_killed);
	ev_clear(&e);
	free(l);
	l = ev_info("i", "{\"workdir\":\"/work\",\"limits\":{\"result_bytes\":300}}");
	assert_int_equal(ev_parse(l, strlen(l), &e, NULL), 0);
	assert_int_equal(e.kind, EV_INFO);
	assert_string_equal(e.id, "i");
	assert_string_equal(e.manifest, "{\"workdir\":\"/work\",\"limits\":{\"result_bytes\":300}}");
	ev_clear(&e);
	free(l);
	l = ev_error(NULL, "m");
	assert_int_equal(ev_parse(l, strlen(l), &e, NULL), 0);
	assert_int_equal(e.kind, EV_ERROR);
	assert_null(e.id);
	assert_string_equal(e.message, "m");
	ev_clear(&e);
	free(l);
}

/* The proxy's decisions: every field there, null where the record has none;
 * read back as `turninit call` and the bridge read them. */
static void net_events(void **state)
{
	struct net_record r = { .verdict = "refused",
				.request = "CONNECT",
				.host = "a.example",
				.port = 443,
				.rule = -1,
				.reason = "no entry names it" };
	struct net_record ok = { .verdict = "closed",
				 .request = "HTTP",
				 .host = "b.example",
				 .port = 80,
				 .addr = "10.89.0.2",
				 .rule = 2,
				 .bytes_out = 10,
				 .bytes_in = 20,
				 .duration_ms = 30 };
	struct net_record none = { .verdict = "refused", .rule = -1, .reason = "a bare CR" };
	struct tn_error err = { 0 };
	struct ev_event e;
	char *line;

	(void)state;
	expect_line(ev_net(&r),
		    "{\"event\":\"net\",\"id\":null,\"verdict\":\"refused\",\"request\":\"CONNECT\",\"host\":\"a.example\",\"port\":443,\"address\":null,\"rule\":null,\"reason\":\"no entry names it\",\"bytes_out\":0,\"bytes_in\":0,\"duration_ms\":0}");
	expect_line(ev_net(&ok),
		    "{\"event\":\"net\",\"id\":null,\"verdict\":\"closed\",\"request\":\"HTTP\",\"host\":\"b.example\",\"port\":80,\"address\":\"10.89.0.2\",\"rule\":2,\"reason\":null,\"bytes_out\":10,\"bytes_in\":20,\"duration_ms\":30}");
	expect_line(ev_net(&none),
		    "{\"event\":\"net\",\"id\":null,\"verdict\":\"refused\",\"request\":null,\"host\":null,\"port\":null,\"address\":null,\"rule\":null,\"reason\":\"a bare CR\",\"bytes_out\":0,\"bytes_in\":0,\"duration_ms\":0}");
	line = ev_net(&r);
	assert_int_equal(ev_parse(line, strlen(line), &e, &err), 0);
	assert_int_equal(e.kind, EV_NET);
	assert_null(e.id);
	assert_string_equal(e.verdict, "refused");
	assert_string_equal(e.host, "a.example");
	assert_int_equal(e.port, 443);
	assert_string_equal(e.reason, "no entry names it");
	ev_clear(&e);
	free(line);
	line = ev_net(&none);
	assert_int_equal(ev_parse(line, strlen(line), &e, &err), 0);
	assert_null(e.host);
	assert_int_equal(e.port, 0);
	ev_clear(&e);
	free(line);
	/* a record of a command's own port names it; its id read back */
	snprintf(ok.id, sizeof(ok.id), "c-7");
	expect_line(ev_net(&ok),
		    "{\"event\":\"net\",\"id\":\"c-7\",\"verdict\":\"closed\",\"request\":\"HTTP\",\"host\":\"b.example\",\"port\":80,\"address\":\"10.89.0.2\",\"rule\":2,\"reason\":null,\"bytes_out\":10,\"bytes_in\":20,\"duration_ms\":30}");
	line = ev_net(&ok);
	assert_int_equal(ev_parse(line, strlen(line), &e, &err), 0);
	assert_string_equal(e.id, "c-7");
	ev_clear(&e);
	free(line);
	/* a net event with a field missing is refused */
	{
		static const char missing[] =
			"{\"event\":\"net\",\"id\":null,\"verdict\":\"x\",\"host\":null}";

		assert_int_equal(ev_parse(missing, sizeof(missing) - 1, &e, &err), -EBADMSG);
	}
}

/* turn_end: the last event of a turn with an audit log, id null, the log's
 * final head; read back as `turninit call` and the bridge read it */
static void turn_end_event(void **state)
{
	static const char head[] = "9b1d000000000000000000000000000000000000000000000000000000000007";
	struct tn_error err = { 0 };
	struct ev_event e;
	char *line;

	(void)state;
	expect_line(ev_turn_end(143, head),
		    "{\"event\":\"turn_end\",\"id\":null,\"exit_code\":143,\"audit_head\":\"9b1d000000000000000000000000000000000000000000000000000000000007\"}");
	line = ev_turn_end(0, head);
	assert_int_equal(ev_parse(line, strlen(line), &e, &err), 0);
	assert_int_equal(e.kind, EV_TURN_END);
	assert_null(e.id);
	assert_string_equal(e.audit_head, head);
	assert_int_equal(e.exit_code, 0);
	ev_clear(&e);
	free(line);
}

static void decoder_refuses(void **state)
{
	/* clang-format 14 would put each entry of this table on a line of its own: kept as written */
	/* clang-format off */
	static const struct { const char *line; const char *msg; } bad[] = {
		{ "not json", "not a JSON object" },
		{ "[1]", "not a JSON object" },
		{ "{\"id\":\"a\"}", "no event name" },
		{ "{\"event\":\"started\",\"pid\":3}", "no id" },
		{ "{\"event\":\"started\",\"id\":null,\"pid\":3}", "no id" },
		{ "{\"event\":\"started\",\"id\":\"a\",\"pid\":0}", "pid is not a pid" },
		{ "{\"event\":\"output\",\"id\":\"a\",\"stream\":\"x\",\"data\":\"\"}", "stream" },
		{ "{\"event\":\"output\",\"id\":\"a\",\"stream\":\"stdout\",\"data\":\"!!\"}", "not base64" },
		{ "{\"event\":\"exit\",\"id\":\"a\",\"code\":1,\"signal\":2,\"timed_out\":false,\"truncated\":false}", "exactly one" },
		{ "{\"event\":\"exit\",\"id\":\"a\",\"code\":256,\"signal\":null,\"timed_out\":false,\"truncated\":false}", "exactly one" },
		{ "{\"event\":\"exit\",\"id\":\"a\",\"code\":0,\"signal\":null,\"timed_out\":0,\"truncated\":false}", "booleans" },
		{ "{\"event\":\"exit\",\"id\":\"a\",\"code\":null,\"signal\":9,\"timed_out\":false,\"truncated\":false,\"lost\":1}", "lost and oom_killed" },
		{ "{\"event\":\"error\",\"id\":\"a\"}", "no message" },
		{ "{\"event\":\"hello\",\"id\":\"a\"}", "unknown event" },
		{ "{\"event\":\"info\",\"id\":\"a\",\"manifest\":[1]}", "manifest is not an object" },
		{ "{\"event\":\"info\",\"id\":\"a\"}", "manifest is not an object" },
		{ "{\"event\":\"turn_end\",\"id\":null,\"exit_code\":0,\"audit_head\":\"9b1d\"}", "audit_head is not 64 hex digits" },
		{ "{\"event\":\"turn_end\",\"id\":null,\"exit_code\":0}", "audit_head is not 64 hex digits" },
		{ "{\"event\":\"turn_end\",\"id\":null,\"exit_code\":null,\"audit_head\":\"9b1d000000000000000000000000000000000000000000000000000000000007\"}", "exit_code is not 0..255" },
		{ "{\"event\":\"turn_end\",\"id\":null,\"exit_code\":256,\"audit_head\":\"9b1d000000000000000000000000000000000000000000000000000000000007\"}", "exit_code is not 0..255" },
	};
	/* clang-format on */

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ev_event e;
		struct tn_error err = { 0 };

		assert_int_equal(ev_parse(bad[i].line, strlen(bad[i].line), &e, &err), -EBADMSG);
		if (!strstr(err.msg, bad[i].msg) || strncmp(err.msg, "event: ", 7) != 0)
			fail_msg("%s: \"%s\", want \"%s\"", bad[i].line, err.msg, bad[i].msg);
	}
}

/* info: the manifest's text (made once a turn) copied after the escaped id */
static void info_embeds_the_manifest_text(void **state)
{
	(void)state;
	expect_line(ev_info("a\"b", "{}"), "{\"event\":\"info\",\"id\":\"a\\\"b\",\"manifest\":{}}");
	assert_null(ev_info("i1", NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(encoders_write_the_documented_lines),
		cmocka_unit_test(decoder_reads_what_encoders_write),
		cmocka_unit_test(decoder_refuses),
		cmocka_unit_test(net_events),
		cmocka_unit_test(turn_end_event),
		cmocka_unit_test(info_embeds_the_manifest_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
