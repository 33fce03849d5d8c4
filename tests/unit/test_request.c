/* test_request.c - the serve/listen request parser (policy/request.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "jansson_fail.h"
#include "policy/request.h"

static struct rq_request *parse_ok(const char *line)
{
	struct rq_request *r = NULL;
	struct tn_error err = { 0 };
	char id[RQ_ID_MAX + 1];

	if (rq_parse(line, strlen(line), &r, id, &err) != 0)
		fail_msg("refused %s: %s", line, err.msg);
	assert_string_equal(id, r->id);
	return r;
}

static void exec_command(void **state)
{
	struct rq_request *r = parse_ok(
		"{\"op\":\"exec\",\"id\":\"c1\",\"command\":\"make test\",\"cwd\":\"/work\","
		"\"env\":{\"TZ\":\"UTC\",\"X\":\"${PATH}\"},\"timeout_s\":30,\"stdin\":\"aGVsbG8K\"}");

	(void)state;
	assert_int_equal(r->op, RQ_EXEC);
	assert_string_equal(r->id, "c1");
	assert_int_equal(r->n_words, 1);
	assert_string_equal(r->words[0], "make test");
	assert_null(r->words[1]);
	assert_string_equal(r->cwd, "/work");
	assert_string_equal(r->env[0], "TZ=UTC");
	assert_string_equal(r->env[1], "X=${PATH}");
	assert_null(r->env[2]);
	assert_int_equal(r->timeout_s, 30);
	assert_true(r->has_stdin);
	assert_int_equal(r->stdin_len, 6);
	assert_memory_equal(r->stdin_data, "hello\n", 6);
	rq_free(r);
}

static void exec_argv_and_defaults(void **state)
{
	struct rq_request *r = parse_ok(
		"{\"op\":\"exec\",\"id\":\"a.b:c-d_1\",\"argv\":[\"-a\",\"x y\",\"\"]}");

	(void)state;
	assert_int_equal(r->n_words, 3);
	assert_string_equal(r->words[0], "-a");
	assert_string_equal(r->words[1], "x y");
	assert_string_equal(r->words[2], "");
	assert_null(r->cwd);
	assert_null(r->env[0]);
	assert_int_equal(r->timeout_s, 0);
	assert_false(r->has_stdin);
	rq_free(r);
	r = parse_ok("{\"op\":\"exec\",\"id\":\"big\",\"command\":\"x\",\"timeout_s\":99999999999}");
	assert_int_equal(r->timeout_s, UINT32_MAX);
	rq_free(r);
}

/* An argv of one word is still an argv: the serve loop must not hand it to
 * bash as a command string ({"argv":["echo x; id"]} runs no id). */
static void argv_one_word_is_argv(void **state)
{
	struct rq_request *r = parse_ok("{\"op\":\"exec\",\"id\":\"a1\",\"argv\":[\"echo x; id\"]}");

	(void)state;
	assert_int_equal(r->n_words, 1);
	assert_true(r->argv_form);
	rq_free(r);
	r = parse_ok("{\"op\":\"exec\",\"id\":\"a2\",\"command\":\"echo x; id\"}");
	assert_false(r->argv_form);
	rq_free(r);
}

/* An env key holding '=' is not a name: skipped, never split into another
 * name ("TZ=evil":"x" is not TZ with the value "evil=x"). */
static void env_name_with_equals_skipped(void **state)
{
	struct rq_request *r = parse_ok("{\"op\":\"exec\",\"id\":\"e1\",\"command\":\"env\","
					"\"env\":{\"TZ=evil\":\"x\",\"=\":\"y\",\"LANG\":\"C=1\"}}");

	(void)state;
	assert_string_equal(r->env[0], "LANG=C=1");
	assert_null(r->env[1]);
	rq_free(r);
}

static void cancel_and_signal(void **state)
{
	struct rq_request *r = parse_ok("{\"op\":\"cancel\",\"id\":\"c1\"}");

	(void)state;
	assert_int_equal(r->op, RQ_CANCEL);
	rq_free(r);
	r = parse_ok("{\"op\":\"signal\",\"id\":\"c1\",\"signal\":\"INT\"}");
	assert_int_equal(r->op, RQ_SIGNAL);
	assert_int_equal(r->signo, SIGINT);
	assert_false(r->quiet); /* only an MCP cancel is quiet (policy/mcp.c) */
	rq_free(r);
	r = parse_ok("{\"op\":\"info\",\"id\":\"i1\"}");
	assert_int_equal(r->op, RQ_INFO);
	assert_string_equal(r->id, "i1");
	rq_free(r);
}

/* Each refusal: the error code, the id the error event carries, and a word
 * of the message. */
static void refusals(void **state)
{
	static const struct {
		const char *line, *id, *word;
		int code;
	} bad[] = {
		{ "{\"op\":\"exec\",\"id\":\"b1\",\"command\":\"true\"", "", "not a JSON object", -EBADMSG },
		{ "[\"exec\"]", "", "not a JSON object", -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b\",\"command\":\"a\",\"command\":\"b\"}", "", "duplicate",
		  -EBADMSG },
		{ "{\"op\":\"launch\",\"id\":\"b2\"}", "b2", "unknown op", -EINVAL },
		{ "{\"id\":\"b3\",\"command\":\"true\"}", "b3", "op must be", -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b4\",\"command\":\"true\",\"colour\":\"red\"}", "b4", "colour",
		  -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b5\",\"command\":42}", "b5", "command must be a string",
		  -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b6\",\"command\":\"t\",\"argv\":[\"t\"]}", "b6", "exactly one",
		  -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b7\"}", "b7", "exactly one", -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b8\",\"argv\":[]}", "b8", "non-empty", -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b9\",\"argv\":[\"echo\",1]}", "b9", "argv[1]", -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"bad id\",\"command\":\"t\"}", "", "id must be", -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"\",\"command\":\"t\"}", "", "id must be", -EINVAL },
		{ "{\"op\":\"exec\",\"id\":7,\"command\":\"t\"}", "", "id must be", -EINVAL },
		{ "{\"op\":\"exec\",\"command\":\"t\"}", "", "id must be", -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b10\",\"command\":\"t\",\"cwd\":\"work\"}", "b10", "absolute",
		  -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b13\",\"command\":\"t\",\"stdin\":\"!!!\"}", "b13", "base64",
		  -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b14\",\"command\":\"t\",\"timeout_s\":0}", "b14", "timeout_s",
		  -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b15\",\"command\":\"t\",\"timeout_s\":1.5}", "b15", "timeout_s",
		  -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b16\",\"command\":\"t\",\"timeout_s\":-3}", "b16", "timeout_s",
		  -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b17\",\"command\":\"t\",\"env\":{\"TZ\":1}}", "b17", "env.TZ",
		  -EINVAL },
		{ "{\"op\":\"exec\",\"id\":\"b18\",\"command\":\"t\",\"env\":[\"TZ=UTC\"]}", "b18",
		  "env must be", -EINVAL },
		{ "{\"op\":\"cancel\",\"id\":\"b20\",\"signal\":\"INT\"}", "b20", "signal", -EINVAL },
		{ "{\"op\":\"signal\",\"id\":\"b21\",\"signal\":\"STOP\"}", "b21", "unknown signal",
		  -EINVAL },
		{ "{\"op\":\"signal\",\"id\":\"b22\"}", "b22", "signal", -EINVAL },
		{ "{\"op\":\"info\",\"id\":\"b23\",\"command\":\"t\"}", "b23", "info", -EINVAL },
		{ "{\"op\":\"launch\",\"id\":\"b24\"}", "b24", "(exec, cancel, signal, info, credential)",
		  -EINVAL },
		/* MCP's argument is timeout, serve's field timeout_s: the field is named unknown */
		{ "{\"op\":\"exec\",\"id\":\"b25\",\"command\":\"t\",\"timeout\":1}", "b25",
		  "exec: unknown field timeout (docs/protocol.md", -EINVAL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rq_request *r = NULL;
		struct tn_error err = { 0 };
		char id[RQ_ID_MAX + 1];
		int rc = rq_parse(bad[i].line, strlen(bad[i].line), &r, id, &err);

		if (rc != bad[i].code || strcmp(id, bad[i].id) != 0 || !strstr(err.msg, bad[i].word))
			fail_msg("%s: rc %d id \"%s\" message \"%s\"", bad[i].line, rc, id, err.msg);
		assert_null(r);
	}
}

/* cwd defaults to the workdir; timeout_s defaults to, and is capped at,
 * limits.timeout_s. */
static void command_of_applies_the_manifest(void **state)
{
	struct mf_manifest m = { .workdir = "/work", .limits = { .timeout_s = 60 } };
	static const struct {
		const char *line;
		const char *cwd;
		uint32_t t;
	} cases[] = {
		{ "{\"op\":\"exec\",\"id\":\"a\",\"command\":\"x\"}", "/work", 60 },
		{ "{\"op\":\"exec\",\"id\":\"a\",\"command\":\"x\",\"timeout_s\":5,\"cwd\":\"/tmp\"}", "/tmp",
		  5 },
		{ "{\"op\":\"exec\",\"id\":\"a\",\"command\":\"x\",\"timeout_s\":60}", "/work", 60 },
		{ "{\"op\":\"exec\",\"id\":\"a\",\"command\":\"x\",\"timeout_s\":61}", "/work", 60 },
		{ "{\"op\":\"exec\",\"id\":\"a\",\"command\":\"x\",\"timeout_s\":86400}", "/work", 60 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rq_request *r = parse_ok(cases[i].line);
		struct rq_command c = rq_command_of(&m, r);

		assert_string_equal(c.cwd, cases[i].cwd);
		assert_int_equal(c.timeout_s, cases[i].t);
		rq_free(r);
	}
}

/* ---- jansson under allocation failure ---- */

/* As for the manifest (test_manifest.c): with each of jansson's allocations
 * failing once in turn, a request line parses to the very same command or is
 * refused with -ENOMEM; a dropped byte would change the command string. */
static void jansson_oom_never_changes_a_command(void **state)
{
	static const char line[] =
		"{\"op\":\"exec\",\"id\":\"c1\",\"command\":\"rm -rf /tmp/build-0123456789abcdef\","
		"\"cwd\":\"/srv/project/some/long/directory/name\",\"env\":{\"TZ\":\"Europe/Amsterdam\"}}";
	long n_enomem = 0;

	(void)state;
	json_set_alloc_funcs(jf_malloc, free);
	for (jf_fail_at = 1;; jf_fail_at++) {
		struct rq_request *r = NULL;
		struct tn_error err = { 0 };
		char id[RQ_ID_MAX + 1];
		int rc;

		jf_count = 0;
		rc = rq_parse(line, strlen(line), &r, id, &err);
		if (rc == -ENOMEM) {
			n_enomem++;
			assert_null(r);
			continue;
		}
		if (rc != 0) {
			json_set_alloc_funcs(malloc, free);
			fail_msg("allocation %ld failed: %d %s", jf_fail_at, rc, err.msg);
		}
		assert_string_equal(r->words[0], "rm -rf /tmp/build-0123456789abcdef");
		assert_string_equal(r->cwd, "/srv/project/some/long/directory/name");
		assert_string_equal(r->env[0], "TZ=Europe/Amsterdam");
		rq_free(r);
		if (jf_count < jf_fail_at)
			break; /* no allocation left to fail */
	}
	json_set_alloc_funcs(malloc, free);
	assert_true(n_enomem > 5);
}

/* A credential request (docs/protocol.md, "credential"): its name and value
 * copied; the value's own check, creds.c's (na_cred_value_check). */
static void credential(void **state)
{
	struct rq_request *r = parse_ok(
		"{\"op\":\"credential\",\"id\":\"k1\",\"name\":\"git\",\"value\":\"tok en~1\"}");

	(void)state;
	assert_int_equal(r->op, RQ_CREDENTIAL);
	assert_string_equal(r->cred_name, "git");
	assert_int_equal(r->cred_len, 8);
	assert_memory_equal(r->cred_value, "tok en~1", 9);
	rq_free(r);
}

/* Each refusal of a credential request names why and never holds a byte of
 * the value ("SECRET..."), also where jansson's own message would quote the
 * line: its excerpt is left out of a line that names a credential. */
static void credential_refusals(void **state)
{
	static const struct {
		const char *line, *id, *word;
		int code;
	} bad[] = {
		{ "{\"op\":\"credential\",\"id\":\"k1\",\"name\":\"git\"}", "k1", "credential: ", -EINVAL },
		{ "{\"op\":\"credential\",\"id\":\"k2\",\"value\":\"SECRET\"}", "k2",
		  "credential: ", -EINVAL },
		{ "{\"op\":\"credential\",\"id\":\"k3\",\"name\":\"git\",\"value\":7}", "k3",
		  "credential: ", -EINVAL },
		{ "{\"op\":\"credential\",\"id\":\"k4\",\"name\":\"git\",\"value\":\"\"}", "k4",
		  "value is empty", -EINVAL },
		{ "{\"op\":\"credential\",\"id\":\"k5\",\"name\":\"git\",\"value\":\"SECRET\\u0001\"}", "k5",
		  "value holds a byte that is not printable ASCII (0x20..0x7e)", -EINVAL },
		{ "{\"op\":\"credential\",\"id\":\"k6\",\"name\":\"git\",\"value\":\"SECRET\\u00e9\"}", "k6",
		  "not printable ASCII", -EINVAL },
		{ "{\"op\":\"credential\",\"id\":\"k7\",\"name\":\"git\",\"value\":\"SECRET\",\"as\":\"basic\"}",
		  "k7", "credential: unknown field as", -EINVAL },
		{ "{\"op\":\"credential\",\"id\":\"k8\",\"name\":\"\",\"value\":\"SECRET\"}", "k8",
		  "credential: name", -EINVAL },
		{ "{\"op\":\"credential\",\"id\":\"k9\",\"name\":\"git\",\"value\":\"SECRET\x01\"}", "",
		  "control character 0x1 (the text near it is not shown", -EBADMSG },
		{ "{\"op\":\"credential\",\"id\":\"k11\",\"name\":\"git\",\"value\":\"SECRET\\q\"}", "",
		  "invalid escape (the text near it is not shown", -EBADMSG },
		{ "{\"op\":\"credential\",\"id\":\"k10\",\"name\":\"git\",\"value\":\"SECRET", "",
		  "not a JSON object", -EBADMSG },
	};
	char longer[NA_CRED_VALUE_MAX + 128];
	struct rq_request *r = NULL;
	struct tn_error err = { 0 };
	char id[RQ_ID_MAX + 1];
	int n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = rq_parse(bad[i].line, strlen(bad[i].line), &r, id, &err);

		if (rc != bad[i].code || strcmp(id, bad[i].id) != 0 || !strstr(err.msg, bad[i].word) ||
		    strstr(err.msg, "SECRET"))
			fail_msg("%s: rc %d id \"%s\" message \"%s\"", bad[i].line, rc, id, err.msg);
		assert_null(r);
	}
	/* 4095 bytes pass, 4096 do not */
	n = snprintf(longer, sizeof(longer),
		     "{\"op\":\"credential\",\"id\":\"k\",\"name\":\"git\",\"value\":\"%0*d\"}",
		     NA_CRED_VALUE_MAX, 0);
	assert_int_equal(rq_parse(longer, (size_t)n, &r, id, &err), 0);
	assert_int_equal(r->cred_len, NA_CRED_VALUE_MAX);
	rq_free(r);
	r = NULL;
	n = snprintf(longer, sizeof(longer),
		     "{\"op\":\"credential\",\"id\":\"k\",\"name\":\"git\",\"value\":\"%0*d\"}",
		     NA_CRED_VALUE_MAX + 1, 0);
	assert_int_equal(rq_parse(longer, (size_t)n, &r, id, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "value is longer than 4095 bytes"));
	assert_null(r);
}

/* rq_pack_exec's and rq_pack_op's lines, compact as call_send writes them:
 * the keys in the order of docs/protocol.md, and each parses back to what
 * was packed (the clients' requests are the server's). */
static char *packed(json_t *req)
{
	char *s;

	assert_non_null(req);
	s = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	assert_non_null(s);
	return s;
}

static void packed_parses_back(void **state)
{
	char *one[] = { "echo RAN", NULL }, *two[] = { "printf", "[%s]", NULL }, *bad[] = { "\xff", NULL };
	struct rq_exec_args a = { .words = one, .n_words = 1 };
	char id[RQ_ID_MAX + 1], *s;
	struct tn_error err = { 0 };
	struct rq_request *r;
	json_t *req = NULL;

	(void)state;
	assert_int_equal(rq_pack_exec("call", &a, &req), 0);
	s = packed(req);
	assert_string_equal(s, "{\"op\":\"exec\",\"id\":\"call\",\"command\":\"echo RAN\"}");
	free(s);
	a = (struct rq_exec_args){ .words = two,
				   .n_words = 2,
				   .env = json_pack("{s:s}", "TZ", "UTC"),
				   .timeout_s = 7,
				   .stdin_b64 = "eAo=" };
	assert_int_equal(rq_pack_exec("c1", &a, &req), 0);
	json_decref(a.env);
	s = packed(req);
	assert_string_equal(s, "{\"op\":\"exec\",\"id\":\"c1\",\"argv\":[\"printf\",\"[%s]\"],"
			       "\"env\":{\"TZ\":\"UTC\"},\"timeout_s\":7,\"stdin\":\"eAo=\"}");
	assert_int_equal(rq_parse(s, strlen(s), &r, id, &err), 0);
	assert_int_equal(r->op, RQ_EXEC);
	assert_true(r->argv_form);
	assert_int_equal(r->n_words, 2);
	assert_string_equal(r->words[1], "[%s]");
	assert_string_equal(r->env[0], "TZ=UTC");
	assert_int_equal(r->timeout_s, 7);
	assert_int_equal(r->stdin_len, 2);
	rq_free(r);
	free(s);
	a = (struct rq_exec_args){ .words = bad, .n_words = 1 };
	req = NULL;
	assert_int_equal(rq_pack_exec("c", &a, &req), -EILSEQ);
	a.words = two;
	a.n_words = 2;
	two[1] = "\xff";
	assert_int_equal(rq_pack_exec("c", &a, &req), -EILSEQ);
	assert_null(req);
	s = packed(rq_pack_op(RQ_SIGNAL, "call", "INT"));
	assert_string_equal(s, "{\"op\":\"signal\",\"id\":\"call\",\"signal\":\"INT\"}");
	assert_int_equal(rq_parse(s, strlen(s), &r, id, &err), 0);
	assert_int_equal(r->op, RQ_SIGNAL);
	assert_int_equal(r->signo, SIGINT);
	rq_free(r);
	free(s);
	s = packed(rq_pack_op(RQ_CANCEL, "call", NULL));
	assert_string_equal(s, "{\"op\":\"cancel\",\"id\":\"call\"}");
	free(s);
	s = packed(rq_pack_op(RQ_INFO, "i", NULL));
	assert_string_equal(s, "{\"op\":\"info\",\"id\":\"i\"}");
	free(s);
	assert_null(rq_pack_op(RQ_EXEC, "c", NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exec_command),
		cmocka_unit_test(command_of_applies_the_manifest),
		cmocka_unit_test(jansson_oom_never_changes_a_command),
		cmocka_unit_test(exec_argv_and_defaults),
		cmocka_unit_test(argv_one_word_is_argv),
		cmocka_unit_test(env_name_with_equals_skipped),
		cmocka_unit_test(cancel_and_signal),
		cmocka_unit_test(refusals),
		cmocka_unit_test(credential),
		cmocka_unit_test(credential_refusals),
		cmocka_unit_test(packed_parses_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
