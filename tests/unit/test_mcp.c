/* test_mcp.c - unit tests of policy/mcp.c: the MCP side of `turninit mcp`.
 * Every line it sends is parsed back with jansson and compared field by field
 * (JSON-RPC 2.0 and the MCP specification 2025-11-25): the lifecycle, the
 * error codes, tools/call becoming an exec request, cancellation, the tool
 * results made from output and ends (the middle cut at limits.result_bytes,
 * UTF-8 kept valid), progress, and the bound on open calls. */
#define _GNU_SOURCE /* asprintf, memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jansson_fail.h"
#include "policy/mcp.h"

#define NOW 1700000000LL
#define VERSION "9.9.9-test"
#define FFFD "\xef\xbf\xbd"

/* workdir, home, env, timeout, output, concurrency and result bytes none at
 * their defaults: the tool description must name each. */
static const char manifest_json[] =
	"{\"turninit\":1,\"expires\":\"2027-06-01T00:00:00Z\",\"user\":{\"uid\":1000,\"gid\":1000},"
	"\"home\":\"/home/agent\",\"workdir\":\"/work\","
	"\"env\":{\"set\":{\"PATH\":\"/usr/bin:/bin\",\"LANG\":\"C.UTF-8\"},\"allow\":[\"TZ\",\"LC_*\"]},"
	"\"limits\":{\"timeout_s\":120,\"output_bytes\":1048576,\"concurrency\":3,"
	"\"result_bytes\":4096}}";

/* The smallest result: 128 bytes of head and 128 of tail. */
static const char small_json[] =
	"{\"turninit\":1,\"expires\":\"2027-06-01T00:00:00Z\",\"user\":{\"uid\":1000,\"gid\":1000},"
	"\"home\":\"/home/agent\",\"env\":{\"set\":{\"PATH\":\"/usr/bin:/bin\"}},"
	"\"limits\":{\"result_bytes\":256}}";

/* Only what is required: the defaults. */
static const char minimal_json[] =
	"{\"turninit\":1,\"expires\":\"2027-06-01T00:00:00Z\",\"user\":{\"uid\":1000,\"gid\":1000},"
	"\"home\":\"/home/agent\",\"env\":{\"set\":{\"PATH\":\"/usr/bin:/bin\"}}}";

struct fx {
	struct mf_manifest *m;
	struct mcp_session *s;
};

static struct mf_manifest *manifest_of(const char *text)
{
	struct mf_manifest *m = NULL;
	struct tn_error err = { 0 };

	if (mf_parse((const uint8_t *)text, strlen(text), NOW, NULL, &m, &err) != 0)
		fail_msg("manifest: %s", err.msg);
	return m;
}

static int fx_open(void **state, const char *manifest)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->m = manifest_of(manifest);
	f->s = mcp_session_new(f->m, VERSION, NULL);
	assert_non_null(f->s);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return fx_open(state, manifest_json);
}

static int setup_small(void **state)
{
	return fx_open(state, small_json);
}

static int teardown(void **state)
{
	struct fx *f = *state;

	mcp_session_free(f->s); /* open calls too: LeakSanitizer checks */
	mf_free(f->m);
	free(f);
	return 0;
}

/* ---- helpers: a line in, what comes back ---- */

/* mcp_parse of line, which must give rc 0 and a reply (no request). */
static char *reply_of(struct mcp_session *s, const char *line)
{
	struct rq_request *rq = (struct rq_request *)(uintptr_t)0x1;
	struct tn_error err = { 0 };
	char id[RQ_ID_MAX + 1] = "junk";
	char *reply = NULL;
	int rc = mcp_parse(s, line, strlen(line), &rq, id, &reply, &err);

	if (rc != 0)
		fail_msg("%s: rc %d (%s)", line, rc, err.msg);
	if (rq)
		fail_msg("%s: a request (%s), want a reply", line, rq->id);
	assert_non_null(reply);
	assert_string_equal(id, "");
	assert_null(strchr(reply, '\n'));
	return reply;
}

/* mcp_parse of line, which must give rc 0 and a request (no reply). */
static struct rq_request *request_of(struct mcp_session *s, const char *line)
{
	struct rq_request *rq = NULL;
	struct tn_error err = { 0 };
	char id[RQ_ID_MAX + 1] = "junk";
	char *reply = (char *)(uintptr_t)0x1;
	int rc = mcp_parse(s, line, strlen(line), &rq, id, &reply, &err);

	if (rc != 0)
		fail_msg("%s: rc %d (%s)", line, rc, err.msg);
	if (!rq)
		fail_msg("%s: reply %s, want a request", line, reply);
	assert_null(reply);
	assert_string_equal(id, "");
	return rq;
}

static void expect_nothing(struct mcp_session *s, const char *line)
{
	char *reply = reply_of(s, line);

	if (reply[0] != '\0')
		fail_msg("%s: reply %s, want none", line, reply);
	free(reply);
}

/* The line (freed) as a JSON object with "jsonrpc":"2.0" and the id want_id
 * (JSON text; NULL: no id, a notification). */
static json_t *load_line(char *line, const char *want_id)
{
	json_error_t je;
	json_t *v, *id;

	assert_non_null(line);
	v = json_loads(line, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	if (!json_is_object(v))
		fail_msg("not a JSON object: %s (%s)", line, je.text);
	assert_string_equal(json_string_value(json_object_get(v, "jsonrpc")), "2.0");
	if (want_id) {
		id = json_loads(want_id, JSON_DECODE_ANY, &je);
		assert_non_null(id);
		if (!json_equal(id, json_object_get(v, "id")))
			fail_msg("%s: id is not %s", line, want_id);
		json_decref(id);
	} else {
		assert_null(json_object_get(v, "id"));
	}
	free(line);
	return v;
}

/* A JSON-RPC error: code and message (a message ending in "*": its prefix). */
static void expect_rpc_error(char *line, const char *want_id, int code, const char *msg)
{
	char *copy = strdup(line);
	json_t *v = load_line(line, want_id), *e = json_object_get(v, "error");
	const char *got = json_string_value(json_object_get(e, "message"));
	size_t n = strlen(msg);

	assert_non_null(copy);
	assert_int_equal(json_object_size(v), 3);
	assert_int_equal(json_object_size(e), 2);
	if (json_integer_value(json_object_get(e, "code")) != code || !got ||
	    (msg[n - 1] == '*' ? strncmp(got, msg, n - 1) != 0 : strcmp(got, msg) != 0))
		fail_msg("%s: want code %d, message \"%s\"", copy, code, msg);
	free(copy);
	json_decref(v);
}

static void expect_error_of(struct mcp_session *s, const char *line, const char *want_id, int code,
			    const char *msg)
{
	char *reply = reply_of(s, line);

	if (reply[0] == '\0')
		fail_msg("%s: no reply, want error %d", line, code);
	expect_rpc_error(reply, want_id, code, msg);
}

/* A tools/call result: one text item, exactly text, and isError. */
static void expect_tool_result(char *line, const char *want_id, const char *text, size_t len, bool is_error)
{
	json_t *v = load_line(line, want_id), *r = json_object_get(v, "result");
	json_t *content = json_object_get(r, "content"), *item = json_array_get(content, 0);
	json_t *t = json_object_get(item, "text");

	assert_int_equal(json_object_size(v), 3);
	assert_int_equal(json_object_size(r), 2);
	assert_int_equal(json_array_size(content), 1);
	assert_int_equal(json_object_size(item), 2);
	assert_string_equal(json_string_value(json_object_get(item, "type")), "text");
	assert_true(json_is_string(t));
	if (json_string_length(t) != len || memcmp(json_string_value(t), text, len) != 0)
		fail_msg("text \"%s\" (%zu bytes), want \"%.*s\" (%zu bytes)", json_string_value(t),
			 json_string_length(t), (int)len, text, len);
	assert_true(json_is_boolean(json_object_get(r, "isError")));
	assert_int_equal(json_is_true(json_object_get(r, "isError")), is_error);
	json_decref(v);
}

static void expect_tool_text(char *line, const char *want_id, const char *text, bool is_error)
{
	expect_tool_result(line, want_id, text, strlen(text), is_error);
}

/* {"jsonrpc":"2.0","id":ID,"method":"tools/call","params":PARAMS} */
static char *call_line(const char *id, const char *params)
{
	char *line = NULL;

	assert_true(asprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\",\"params\":%s}",
			     id, params) > 0);
	return line;
}

/* A tools/call of bash with these arguments (JSON text): the request. */
static struct rq_request *call(struct mcp_session *s, const char *id, const char *args)
{
	char params[8192];
	char *line;
	struct rq_request *rq;

	snprintf(params, sizeof(params), "{\"name\":\"bash\",\"arguments\":%s}", args);
	line = call_line(id, params);
	rq = request_of(s, line);
	free(line);
	return rq;
}

/* A call of "true" that is open under key: the request is freed. */
static void open_call(struct mcp_session *s, const char *id, const char *key)
{
	struct rq_request *rq = call(s, id, "{\"command\":\"true\"}");

	assert_string_equal(rq->id, key);
	rq_free(rq);
}

static void feed(struct mcp_session *s, const char *key, const void *data, size_t len, size_t chunk)
{
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		char *l = mcp_output(s, key, (off / chunk) % 2 == 1, (const uint8_t *)data + off, n);

		assert_non_null(l);
		assert_string_equal(l, "");
		free(l);
	}
}

static const struct ev_end exit0 = { .wait_status = 0 };

/* ---- the lifecycle ---- */

static void versions_table(void **state)
{
	size_t n = 0;

	(void)state;
	assert_string_equal(mcp_versions[0], "2025-11-25");
	for (; mcp_versions[n]; n++) {
		assert_int_equal(strlen(mcp_versions[n]), 10);
		if (n > 0 && strcmp(mcp_versions[n - 1], mcp_versions[n]) <= 0)
			fail_msg("mcp_versions not newest first at %s", mcp_versions[n]);
	}
	assert_int_equal(n, 4);
	assert_string_equal(mcp_versions[n - 1], "2024-11-05");
}

static void initialize_negotiates_the_version(void **state)
{
	struct fx *f = *state;
	static const char *const other[] = {
		"{\"protocolVersion\":\"1999-01-01\",\"capabilities\":{}}",
		"{\"protocolVersion\":\"2025-11-25x\"}",
		"{\"protocolVersion\":20250618}",
		"{\"capabilities\":{}}",
		"{}",
		"[\"2024-11-05\"]",
		NULL, /* no params at all */
	};
	char line[512];
	json_t *v, *r;

	for (size_t i = 0; mcp_versions[i]; i++) {
		snprintf(line, sizeof(line),
			 "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"initialize\",\"params\":{"
			 "\"protocolVersion\":\"%s\",\"capabilities\":{},"
			 "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
			 i + 1, mcp_versions[i]);
		{
			char want_id[16];

			snprintf(want_id, sizeof(want_id), "%zu", i + 1);
			v = load_line(reply_of(f->s, line), want_id);
		}
		r = json_object_get(v, "result");
		assert_string_equal(json_string_value(json_object_get(r, "protocolVersion")),
				    mcp_versions[i]);
		json_decref(v);
	}
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		if (other[i])
			snprintf(line, sizeof(line),
				 "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\","
				 "\"params\":%s}",
				 other[i]);
		else
			snprintf(line, sizeof(line),
				 "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\"}");
		v = load_line(reply_of(f->s, line), "\"i\"");
		r = json_object_get(v, "result");
		if (strcmp(json_string_value(json_object_get(r, "protocolVersion")), mcp_versions[0]) != 0)
			fail_msg("%s: version %s, want %s", line,
				 json_string_value(json_object_get(r, "protocolVersion")), mcp_versions[0]);
		json_decref(v);
	}
	/* the whole answer, in this key order */
	{
		char *reply = reply_of(f->s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
					     "\"params\":{\"protocolVersion\":\"2025-06-18\"}}");

		assert_string_equal(reply,
				    "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-06-18\","
				    "\"capabilities\":{\"tools\":{\"listChanged\":false}},"
				    "\"serverInfo\":{\"name\":\"turninit\",\"title\":\"turninit sandboxed shell\","
				    "\"version\":\"" VERSION "\"},"
				    "\"instructions\":\"Run shell commands with the bash tool: each call is a fresh bash "
				    "in a sandboxed container, under a signed policy; files persist between calls, "
				    "nothing else does.\"}}");
		free(reply);
	}
}

static void ping_answers_an_empty_result(void **state)
{
	struct fx *f = *state;
	char *reply = reply_of(f->s, "{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"ping\"}");

	assert_string_equal(reply, "{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"result\":{}}");
	free(reply);
	reply = reply_of(f->s, "{\"jsonrpc\":\"2.0\",\"id\":-4,\"method\":\"ping\",\"params\":{}}");
	assert_string_equal(reply, "{\"jsonrpc\":\"2.0\",\"id\":-4,\"result\":{}}");
	free(reply);
	/* a whole-number real is the integer (a client that sends 5.0 matches
	 * 5: JSON numbers); it was answered with id null */
	reply = reply_of(f->s, "{\"jsonrpc\":\"2.0\",\"id\":5.0,\"method\":\"ping\"}");
	assert_string_equal(reply, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
	free(reply);
	reply = reply_of(f->s, "{\"jsonrpc\":\"2.0\",\"id\":5.5,\"method\":\"ping\"}");
	assert_non_null(strstr(reply, "\"id\":null"));
	free(reply);
}

static void tools_list_has_one_tool(void **state)
{
	struct fx *f = *state;
	json_t *v = load_line(reply_of(f->s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\","
					     "\"params\":{}}"),
			      "2");
	json_t *tools = json_object_get(json_object_get(v, "result"), "tools");
	json_t *t = json_array_get(tools, 0), *schema = json_object_get(t, "inputSchema");
	json_t *props = json_object_get(schema, "properties"), *cmd = json_object_get(props, "command");
	json_t *timeout = json_object_get(props, "timeout"), *ann = json_object_get(t, "annotations");
	char *desc = mcp_tool_description(f->m);

	assert_int_equal(json_object_size(json_object_get(v, "result")), 1);
	assert_int_equal(json_array_size(tools), 1);
	assert_int_equal(json_object_size(t), 5);
	assert_string_equal(json_string_value(json_object_get(t, "name")), "bash");
	assert_string_equal(json_string_value(json_object_get(t, "name")), MCP_TOOL);
	assert_string_equal(json_string_value(json_object_get(t, "title")), "Sandboxed bash");
	assert_non_null(desc);
	assert_string_equal(json_string_value(json_object_get(t, "description")), desc);
	free(desc);

	assert_int_equal(json_object_size(schema), 4);
	assert_string_equal(json_string_value(json_object_get(schema, "type")), "object");
	assert_int_equal(json_object_size(props), 2);
	assert_string_equal(json_string_value(json_object_get(cmd, "type")), "string");
	assert_string_equal(json_string_value(json_object_get(cmd, "description")),
			    "The command, run as bash -c COMMAND in a fresh shell.");
	assert_string_equal(json_string_value(json_object_get(timeout, "type")), "integer");
	assert_int_equal(json_integer_value(json_object_get(timeout, "minimum")), 1);
	assert_int_equal(json_integer_value(json_object_get(timeout, "maximum")), 120);
	assert_string_equal(json_string_value(json_object_get(timeout, "description")),
			    "Seconds the command may run: 1 to 120 (default 120).");
	assert_int_equal(json_array_size(json_object_get(schema, "required")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(schema, "required"), 0)),
			    "command");
	assert_true(json_is_false(json_object_get(schema, "additionalProperties")));

	assert_int_equal(json_object_size(ann), 4);
	assert_true(json_is_false(json_object_get(ann, "readOnlyHint")));
	assert_true(json_is_true(json_object_get(ann, "destructiveHint")));
	assert_true(json_is_false(json_object_get(ann, "idempotentHint")));
	assert_true(json_is_false(json_object_get(ann, "openWorldHint")));
	json_decref(v);
}

static void expect_in(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("description lacks \"%s\": %s", part, text);
}

/* The description is made from the manifest: each limit a model plans by. */
static void tool_description_says_the_manifest(void **state)
{
	struct fx *f = *state;
	struct mf_manifest *m = manifest_of(minimal_json);
	char *d = mcp_tool_description(f->m);

	assert_non_null(d);
	assert_memory_equal(d, "Run a shell command in a sandboxed container", 44);
	expect_in(d, "`bash --noprofile --norc -c COMMAND`");
	expect_in(d, "Every call starts in /work. HOME is /home/agent, private to this container");
	expect_in(d, "holds only PATH, LANG, HOME and, when the container has them, TZ, LC_*; set what else");
	expect_in(d, "A call is stopped after 120 seconds (SIGTERM, then SIGKILL) unless the argument "
		     "`timeout` sets a shorter bound.");
	expect_in(d, "Output longer than 4096 bytes keeps its first 2048 and last 2048 bytes");
	expect_in(d, "Up to 3 calls run at once; others wait.");
	assert_null(strchr(d, '\n'));
	free(d);

	d = mcp_tool_description(m);
	assert_non_null(d);
	expect_in(d, "Every call starts in /home/agent. HOME is /home/agent,");
	expect_in(d, "holds only PATH, HOME; set what else");
	expect_in(d, "stopped after 600 seconds");
	expect_in(d, "Output longer than 30000 bytes keeps its first 15000 and last 15000 bytes");
	expect_in(d, "Up to 8 calls run at once; others wait.");
	free(d);
	mf_free(m);
}

/* Notifications and responses are never answered. */
static void notifications_and_responses_get_no_reply(void **state)
{
	struct fx *f = *state;
	static const char *const lines[] = {
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\",\"params\":{}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"bash\","
		"\"arguments\":{\"command\":\"true\"}}}", /* a call without id: a notification */
		"{\"jsonrpc\":\"2.0\",\"method\":\"no/such\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":5}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":3}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":99}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":[7]}",
		/* responses: turninit sends no request, so there is nothing to match */
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
		"{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"error\":{\"code\":-32601,\"message\":\"m\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"result\":{}}",
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":\"a\\u0000\"}",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		expect_nothing(f->s, lines[i]);
}

struct err_case {
	const char *line;
	const char *id; /* JSON text of the id answered */
	int code;
	const char *msg; /* exact, or a prefix ending in '*' */
};

#define ID_TOO_LONG \
	"Invalid Request: id must be an integer or a string of at most 126 bytes of [A-Za-z0-9._:-] or 63 of others"

static void json_rpc_errors(void **state)
{
	struct fx *f = *state;
	static const struct err_case cases[] = {
		/* -32700: not JSON, id null */
		{ "not json", "null", -32700, "Parse error: not valid JSON: *" },
		{ "", "null", -32700, "Parse error: *" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", "null", -32700, "Parse error: *" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}", "null", -32700,
		  "Parse error: duplicate key \"id\" *" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}", "null", -32700,
		  "Parse error: not valid UTF-8 *" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\","
		  "\"arguments\":{\"command\":\"a\\u0000b\"}}}",
		  "1", -32602, "Invalid params: a string holds \\u0000 (NUL), which turninit refuses" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\","
		  "\"arguments\":{\"command\":\"x\",\"timeout\":99999999999999999999}}}",
		  "7", -32602, "Invalid params: number out of range*" },
		/* valid JSON the strict parser refuses still has its id answered */
		{ "{\"jsonrpc\":\"2.0\",\"id\":\"t\",\"method\":\"tools/call\",\"params\":{\"name\":\"bash\","
		  "\"arguments\":{\"command\":\"x\",\"timeout\":99999999999999999999}}}",
		  "\"t\"", -32602, "Invalid params: number out of range*" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"method\":\"ping\"}", "null", -32700,
		  "Parse error: number out of range*" },
		/* neither a request nor a response */
		{ "{\"jsonrpc\":\"2.0\"}", "null", -32600,
		  "Invalid Request: no method (and no result or error)" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":11}", "11", -32600,
		  "Invalid Request: no method (and no result or error)" },
		/* -32600: not a request */
		{ "[]", "null", -32600,
		  "Invalid Request: batches are not supported (MCP 2025-06-18 and later)" },
		{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", "null", -32600,
		  "Invalid Request: batches are not supported (MCP 2025-06-18 and later)" },
		{ "42", "null", -32600, "Invalid Request: not a JSON-RPC message" },
		{ "\"ping\"", "null", -32600, "Invalid Request: not a JSON-RPC message" },
		{ "null", "null", -32600, "Invalid Request: not a JSON-RPC message" },
		{ "{\"id\":1,\"method\":\"ping\"}", "1", -32600,
		  "Invalid Request: \"jsonrpc\" must be \"2.0\"" },
		{ "{\"jsonrpc\":\"1.0\",\"id\":\"a\",\"method\":\"ping\"}", "\"a\"", -32600,
		  "Invalid Request: \"jsonrpc\" must be \"2.0\"" },
		{ "{\"jsonrpc\":2.0,\"id\":3,\"method\":\"ping\"}", "3", -32600,
		  "Invalid Request: \"jsonrpc\" must be \"2.0\"" },
		{ "{\"jsonrpc\":\"1.0\",\"id\":1.5,\"method\":\"ping\"}", "null", -32600,
		  "Invalid Request: \"jsonrpc\" must be \"2.0\"" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", "null", -32600, ID_TOO_LONG },
		{ "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", "null", -32600, ID_TOO_LONG },
		{ "{\"jsonrpc\":\"2.0\",\"id\":false,\"method\":\"tools/call\"}", "null", -32600,
		  ID_TOO_LONG },
		{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", "null", -32600, ID_TOO_LONG },
		{ "{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", "null", -32600, ID_TOO_LONG },
		{ "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", "null", -32600, ID_TOO_LONG },
		/* 127 plain bytes: "s:" and 127 is past RQ_ID_MAX */
		{ "{\"jsonrpc\":\"2.0\",\"id\":\""
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "\",\"method\":\"ping\"}",
		  "null", -32600, ID_TOO_LONG },
		/* 64 bytes that need hex: "x:" and 128 is past RQ_ID_MAX */
		{ "{\"jsonrpc\":\"2.0\",\"id\":\""
		  "a a aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "\",\"method\":\"ping\"}",
		  "null", -32600, ID_TOO_LONG },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", "1", -32600,
		  "Invalid Request: method must be a string" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}", "1", -32600,
		  "Invalid Request: method must be a string" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":\"x\"}", "1", -32600,
		  "Invalid Request: params must be an object" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":null}", "1", -32600,
		  "Invalid Request: params must be an object" },
		/* -32601 */
		{ "{\"jsonrpc\":\"2.0\",\"id\":\"m\",\"method\":\"resources/list\"}", "\"m\"", -32601,
		  "Method not found: resources/list" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\\\"b\\nc\"}", "1", -32601,
		  "Method not found: a\\x22b\\x0ac" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"notifications/initialized\"}", "1", -32601,
		  "Method not found: notifications/initialized" },
		/* -32602 */
		{ "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"ls\","
		  "\"arguments\":{\"command\":\"x\"}}}",
		  "4", -32602, "Unknown tool: ls (this server has one tool, bash)" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"Bash\"}}",
		  "4", -32602, "Unknown tool: Bash (this server has one tool, bash)" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
		  "\"arguments\":{\"command\":\"x\"}}}",
		  "4", -32602, "Invalid params: tools/call: params.name must be a string" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":5}}", "4",
		  -32602, "Invalid params: tools/call: params.name must be a string" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\"}", "4", -32602,
		  "Invalid params: tools/call: params.name must be a string" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":[\"bash\"]}", "4",
		  -32602, "Invalid params: tools/call: params.name must be a string" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_error_of(f->s, cases[i].line, cases[i].id, cases[i].code, cases[i].msg);
	/* no error left a call open */
	open_call(f->s, "4", "4");
	open_call(f->s, "1", "1");
}

/* ---- tools/call ---- */

static void tools_call_makes_an_exec_request(void **state)
{
	struct fx *f = *state;
	struct rq_request *rq = call(f->s, "7", "{\"command\":\"echo hi | tr a-z A-Z\",\"timeout\":5}");

	assert_int_equal(rq->op, RQ_EXEC);
	assert_string_equal(rq->id, "7");
	assert_int_equal(rq->n_words, 1);
	assert_string_equal(rq->words[0], "echo hi | tr a-z A-Z");
	assert_null(rq->words[1]);
	assert_false(rq->argv_form);
	assert_null(rq->cwd);
	assert_null(rq->env);
	assert_false(rq->has_stdin);
	assert_int_equal(rq->timeout_s, 5);
	assert_int_equal(rq_command_of(f->m, rq).timeout_s, 5);
	assert_string_equal(rq_command_of(f->m, rq).cwd, "/work");
	rq_free(rq);

	/* no timeout: 0, the manifest's; the bound itself is accepted */
	rq = call(f->s, "8", "{\"command\":\"x\"}");
	assert_int_equal(rq->timeout_s, 0);
	assert_int_equal(rq_command_of(f->m, rq).timeout_s, 120);
	rq_free(rq);
	rq = call(f->s, "9", "{\"timeout\":120,\"command\":\"\xe2\x9c\x93 \\\"q\\\"\\n\"}");
	assert_int_equal(rq->timeout_s, 120);
	assert_string_equal(rq->words[0], "\xe2\x9c\x93 \"q\"\n");
	rq_free(rq);
	rq = call(f->s, "10", "{\"command\":\"x\",\"timeout\":1}");
	assert_int_equal(rq->timeout_s, 1);
	rq_free(rq);
	/* past limits.timeout_s: capped, as an exec request's timeout_s is */
	rq = call(f->s, "12", "{\"command\":\"x\",\"timeout\":121}");
	assert_int_equal(rq->timeout_s, 121);
	assert_int_equal(rq_command_of(f->m, rq).timeout_s, 120);
	rq_free(rq);
	rq = call(f->s, "13", "{\"command\":\"x\",\"timeout\":1000000000000}");
	assert_int_equal(rq->timeout_s, UINT32_MAX);
	assert_int_equal(rq_command_of(f->m, rq).timeout_s, 120);
	rq_free(rq);
	/* an argument a client adds of its own (Gemini CLI's wait_for_previous):
	 * ignored, whatever its value, and nothing of it in the request */
	rq = call(f->s, "14", "{\"command\":\"echo w\",\"wait_for_previous\":true}");
	assert_int_equal(rq->op, RQ_EXEC);
	assert_int_equal(rq->n_words, 1);
	assert_string_equal(rq->words[0], "echo w");
	assert_null(rq->env);
	assert_int_equal(rq->timeout_s, 0);
	rq_free(rq);
	rq = call(f->s, "15", "{\"wait_for_previous\":\"x\",\"timeout\":3,\"command\":\"echo w\"}");
	assert_string_equal(rq->words[0], "echo w");
	assert_int_equal(rq->timeout_s, 3);
	rq_free(rq);
	/* a params._meta without progressToken, other params fields: still a call */
	{
		char *line = call_line("11", "{\"name\":\"bash\",\"arguments\":{\"command\":\"x\"},"
					     "\"_meta\":{\"other\":1},\"task\":{}}");

		rq = request_of(f->s, line);
		assert_string_equal(rq->id, "11");
		rq_free(rq);
		free(line);
	}
}

/* The key of a JSON-RPC id: an integer as written, a plain string with "s:",
 * any other string as "x:" and its bytes in hex. */
static void call_keys_of_ids(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *id, *key;
	} cases[] = {
		{ "7", "7" },
		{ "0", "0" },
		{ "-3", "-3" },
		{ "9223372036854775807", "9223372036854775807" },
		{ "\"7\"", "s:7" },
		{ "\"abc\"", "s:abc" },
		{ "\"A.b_c:d-9\"", "s:A.b_c:d-9" },
		{ "\"a b\"", "x:612062" },
		{ "\"\"", "x:" },
		{ "\"s:7\"", "s:s:7" },
		{ "\"\xc3\xa9\"", "x:c3a9" },
		{ "\"a/b\"", "x:612f62" },
		{ "\"\\u0001\"", "x:01" },
		/* the longest: 126 plain bytes, 63 bytes in hex */
		{ "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"",
		  "s:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" },
		{ "\" cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\"",
		  "x:20"
		  "63636363636363636363636363636363636363636363636363636363636363"
		  "63636363636363636363636363636363636363636363636363636363636363" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rq_request *rq = call(f->s, cases[i].id, "{\"command\":\"x\"}");

		if (strcmp(rq->id, cases[i].key) != 0)
			fail_msg("id %s: key %s, want %s", cases[i].id, rq->id, cases[i].key);
		assert_true(strlen(rq->id) >= 1 && strlen(rq->id) <= RQ_ID_MAX);
		assert_int_equal(strspn(rq->id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						"0123456789._:-"),
				 strlen(rq->id));
		rq_free(rq);
	}
	/* every one is still open: each key is its own */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *l = mcp_exit(f->s, cases[i].key, &exit0);

		expect_tool_text(l, cases[i].id, "(no output)", false);
	}
}

static void duplicate_id_of_an_open_call(void **state)
{
	struct fx *f = *state;
	char *line = call_line("7", "{\"name\":\"bash\",\"arguments\":{\"command\":\"y\"}}");
	char *sline = call_line("\"abc\"", "{\"name\":\"bash\",\"arguments\":{\"command\":\"y\"}}");

	open_call(f->s, "7", "7");
	open_call(f->s, "\"abc\"", "s:abc");
	expect_error_of(f->s, line, "7", -32600,
			"Invalid Request: id 7 is in use by a call not yet answered (a cancelled one may still be ending)");
	expect_error_of(f->s, sline, "\"abc\"", -32600,
			"Invalid Request: id \"abc\" is in use by a call not yet answered (a cancelled one may still be ending)");
	/* other methods may reuse it; "7" and 7 are different ids */
	{
		char *r = reply_of(f->s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");

		assert_string_equal(r, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}");
		free(r);
	}
	open_call(f->s, "\"7\"", "s:7");
	/* once answered, the id is free again */
	expect_tool_text(mcp_exit(f->s, "7", &exit0), "7", "(no output)", false);
	open_call(f->s, "7", "7");
	expect_tool_text(mcp_error(f->s, "s:abc", "gone"), "\"abc\"",
			 "turninit did not run the command: gone", true);
	open_call(f->s, "\"abc\"", "s:abc");
	free(line);
	free(sline);
}

/* A refusal of turninit's proxy ends the result of every call running then,
 * after its exit line; an allowed connection adds nothing; a call keeps at
 * most MCP_NET_NOTES of them. */
static void net_refusals_in_results(void **state)
{
	struct fx *f = *state;
	struct net_record refused = {
		.verdict = "refused",
		.request = "CONNECT",
		.host = "evil.example",
		.port = 443,
		.rule = -1,
		.reason = "no entry of the manifest's network.allow names this host and port"
	};
	struct net_record allowed = { .verdict = "allowed",
				      .request = "CONNECT",
				      .host = "ok.example",
				      .port = 443,
				      .rule = 0 };
	char *l;

	open_call(f->s, "7", "7");
	open_call(f->s, "8", "8");
	l = mcp_net(f->s, &allowed);
	assert_string_equal(l, "");
	free(l);
	l = mcp_net(f->s, &refused);
	assert_string_equal(l, "");
	free(l);
	expect_tool_text(mcp_exit(f->s, "7", &exit0), "7",
			 "(no output)\n[turninit: a connection to evil.example:443 was refused: no entry of the manifest's network.allow names this host and port]\n",
			 false);
	for (int i = 0; i < MCP_NET_NOTES + 2; i++)
		free(mcp_net(f->s, &refused));
	l = mcp_exit(f->s, "8", &(struct ev_end){ .wait_status = 3 << 8 });
	{
		const char *p = l;
		int n = 0;

		while ((p = strstr(p, "evil.example:443 was refused")))
			n++, p++;
		assert_int_equal(n, MCP_NET_NOTES);
		assert_non_null(strstr(l, "[exit code 3]\\n[turninit: a connection to evil.example:443"));
	}
	free(l);
	/* no call running: nothing kept, nothing sent */
	l = mcp_net(f->s, &refused);
	assert_string_equal(l, "");
	free(l);
	open_call(f->s, "9", "9");
	expect_tool_text(mcp_exit(f->s, "9", &exit0), "9", "(no output)", false);
	/* a refusal that names its command (its own port of the proxy) goes to
	 * that call's result alone */
	open_call(f->s, "10", "10");
	open_call(f->s, "11", "11");
	snprintf(refused.id, sizeof(refused.id), "11");
	free(mcp_net(f->s, &refused));
	expect_tool_text(mcp_exit(f->s, "10", &exit0), "10", "(no output)", false);
	expect_tool_text(mcp_exit(f->s, "11", &exit0), "11",
			 "(no output)\n[turninit: a connection to evil.example:443 was refused: no entry of the manifest's network.allow names this host and port]\n",
			 false);
}

/* Invalid arguments are a tool result with isError (the model can correct
 * them), and open no call. */
static void invalid_arguments_are_tool_errors(void **state)
{
	struct fx *f = *state;
	static const char *const need_command = "the argument \"command\" is required: a non-empty string";
	static const char *const bad_timeout =
		"the argument \"timeout\" must be an integer of at least 1 (seconds; at most 120 are used)";
	static const struct {
		const char *params, *text;
	} cases[] = {
		{ "{\"name\":\"bash\",\"arguments\":\"ls\"}",
		  "arguments must be an object with a string \"command\"" },
		{ "{\"name\":\"bash\",\"arguments\":[\"ls\"]}",
		  "arguments must be an object with a string \"command\"" },
		{ "{\"name\":\"bash\",\"arguments\":null}",
		  "arguments must be an object with a string \"command\"" },
		{ "{\"name\":\"bash\"}", NULL },
		{ "{\"name\":\"bash\",\"arguments\":{}}", NULL },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":\"\"}}", NULL },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":5}}", NULL },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":null}}", NULL },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":[\"ls\"]}}", NULL },
		{ "{\"name\":\"bash\",\"arguments\":{\"cmd\":\"ls\"}}", NULL },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":\"x\",\"timeout\":0}}", "T" },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":\"x\",\"timeout\":-1}}", "T" },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":\"x\",\"timeout\":\"5\"}}", "T" },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":\"x\",\"timeout\":1.5}}", "T" },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":\"x\",\"timeout\":true}}", "T" },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":\"x\",\"timeout\":null}}", "T" },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":\"x\",\"cwd\":\"/\"}}",
		  "unknown argument \"cwd\": the tool takes \"command\" and \"timeout\"" },
		/* a client's own argument does not excuse another, nor a bad command */
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":\"x\",\"wait_for_previous\":true,\"cwd\":\"/\"}}",
		  "unknown argument \"cwd\": the tool takes \"command\" and \"timeout\"" },
		{ "{\"name\":\"bash\",\"arguments\":{\"wait_for_previous\":true}}", NULL },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":\"x\",\"wait_for_previous\":true,\"timeout\":0}}",
		  "T" },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":\"x\",\"Wait_for_previous\":true}}",
		  "unknown argument \"Wait_for_previous\": the tool takes \"command\" and \"timeout\"" },
		{ "{\"name\":\"bash\",\"arguments\":{\"command\":\"x\",\"a\\\"b\\n\":1}}",
		  "unknown argument \"a\\x22b\\x0a\": the tool takes \"command\" and \"timeout\"" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *line = call_line("3", cases[i].params);
		const char *want = !cases[i].text                  ? need_command :
				   strcmp(cases[i].text, "T") == 0 ? bad_timeout :
								     cases[i].text;

		expect_tool_text(reply_of(f->s, line), "3", want, true);
		free(line);
	}
	/* none of them opened a call of id 3 */
	open_call(f->s, "3", "3");
}

/* ---- cancellation ---- */

static void cancelled_calls_are_never_answered(void **state)
{
	struct fx *f = *state;
	char *line = call_line("7", "{\"name\":\"bash\",\"arguments\":{\"command\":\"sleep 9\"},"
				    "\"_meta\":{\"progressToken\":\"t\"}}");
	struct rq_request *rq = request_of(f->s, line);
	char *l;

	rq_free(rq);
	open_call(f->s, "\"a b\"", "x:612062");
	open_call(f->s, "8", "8");

	rq = request_of(f->s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			      "\"params\":{\"requestId\":7,\"reason\":\"the user pressed Esc\"}}");
	assert_int_equal(rq->op, RQ_CANCEL);
	assert_string_equal(rq->id, "7");
	assert_true(rq->quiet);
	assert_null(rq->words);
	rq_free(rq);
	/* a second cancel of it, and cancels of what is not open: nothing */
	expect_nothing(f->s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			     "\"params\":{\"requestId\":7}}");
	expect_nothing(f->s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			     "\"params\":{\"requestId\":\"7\"}}");
	expect_nothing(f->s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			     "\"params\":{\"requestId\":7.0}}");
	expect_nothing(f->s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			     "\"params\":{\"requestId\":6}}");
	/* a cancel with an id is a request of an unknown method, not a cancel */
	expect_error_of(f->s,
			"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"notifications/cancelled\","
			"\"params\":{\"requestId\":8}}",
			"5", -32601, "Method not found: notifications/cancelled");
	rq = request_of(f->s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			      "\"params\":{\"requestId\":\"a b\"}}");
	assert_int_equal(rq->op, RQ_CANCEL);
	assert_string_equal(rq->id, "x:612062");
	assert_true(rq->quiet);
	rq_free(rq);

	/* the cancelled call: no progress, output kept quiet, its id still in use */
	feed(f->s, "7", "out\n", 4, 4);
	l = mcp_progress(f->s, "7", 5000);
	assert_non_null(l);
	assert_string_equal(l, "");
	free(l);
	expect_error_of(f->s, line, "7", -32600,
			"Invalid Request: id 7 is in use by a call not yet answered (a cancelled one may still be ending)");
	/* its end is not answered, and then the id is free */
	l = mcp_exit(f->s, "7", &(struct ev_end){ .wait_status = 15 });
	assert_non_null(l);
	assert_string_equal(l, "");
	free(l);
	l = mcp_error(f->s, "x:612062", "could not start");
	assert_non_null(l);
	assert_string_equal(l, "");
	free(l);
	l = mcp_exit(f->s, "7", &exit0); /* ended already: not a call any more */
	assert_string_equal(l, "");
	free(l);
	rq = request_of(f->s, line);
	assert_string_equal(rq->id, "7");
	rq_free(rq);
	/* the call not cancelled is answered */
	expect_tool_text(mcp_exit(f->s, "8", &exit0), "8", "(no output)", false);
	free(line);
}

/* ---- results ---- */

struct end_case {
	const char *name;
	const char *args; /* the call's arguments */
	const char *out;  /* its output, in three pieces split at '|' */
	struct ev_end end;
	const char *text;
	bool is_error;
};

static void exit_results(void **state)
{
	struct fx *f = *state;
	/* clang-format 14 would put each entry of this table on a line of its own: kept as written */
	/* clang-format off */
	static const struct end_case cases[] = {
		{ "exit 0", "{\"command\":\"x\"}", "hello\n", { .wait_status = 0 }, "hello\n", false },
		{ "exit 0, no newline", "{\"command\":\"x\"}", "hel|lo", { .wait_status = 0 }, "hello", false },
		{ "exit 0, stdout and stderr as read", "{\"command\":\"x\"}", "a\n|b\n|c\n", { .wait_status = 0 },
		  "a\nb\nc\n", false },
		{ "exit 0, no output", "{\"command\":\"x\"}", "", { .wait_status = 0 }, "(no output)", false },
		{ "exit 3", "{\"command\":\"x\"}", "oops", { .wait_status = 3 << 8 }, "oops\n[exit code 3]\n", true },
		{ "exit 3, newline", "{\"command\":\"x\"}", "oops\n", { .wait_status = 3 << 8 },
		  "oops\n[exit code 3]\n", true },
		{ "exit 3, no output", "{\"command\":\"x\"}", "", { .wait_status = 3 << 8 }, "[exit code 3]\n", true },
		{ "exit 255", "{\"command\":\"x\"}", "", { .wait_status = 255 << 8 }, "[exit code 255]\n", true },
		{ "SIGKILL", "{\"command\":\"x\"}", "x", { .wait_status = 9 },
		  "x\n[killed by signal 9 (SIGKILL)]\n", true },
		{ "SIGTERM", "{\"command\":\"x\"}", "", { .wait_status = 15 }, "[killed by signal 15 (SIGTERM)]\n", true },
		{ "SIGSEGV, core", "{\"command\":\"x\"}", "", { .wait_status = 11 | 0x80 },
		  "[killed by signal 11 (SIGSEGV)]\n", true },
		{ "signal 40", "{\"command\":\"x\"}", "", { .wait_status = 40 },
		  "[killed by signal 40]\n", true },
		{ "timed out, the call's timeout", "{\"command\":\"x\",\"timeout\":5}", "partial",
		  { .wait_status = 9, .timed_out = true },
		  "partial\n[timed out after 5 s: the command was stopped (SIGTERM, then SIGKILL)]\n", true },
		{ "timed out, the manifest's", "{\"command\":\"x\"}", "", { .wait_status = 15, .timed_out = true },
		  "[timed out after 120 s: the command was stopped (SIGTERM, then SIGKILL)]\n", true },
		{ "timed out, a timeout past the manifest's", "{\"command\":\"x\",\"timeout\":500}", "",
		  { .wait_status = 9, .timed_out = true },
		  "[timed out after 120 s: the command was stopped (SIGTERM, then SIGKILL)]\n", true },
		{ "timed out, exit 0 on SIGTERM", "{\"command\":\"x\",\"timeout\":2}", "done\n",
		  { .wait_status = 0, .timed_out = true },
		  "done\n[timed out after 2 s: the command was stopped (SIGTERM, then SIGKILL)]\n", true },
		{ "lost", "{\"command\":\"x\"}", "a", { .wait_status = 9, .lost = true },
		  "a\n[killed (SIGKILL): turninit lost track of the command's processes and ended them]\n", true },
		{ "lost, status 0", "{\"command\":\"x\"}", "", { .wait_status = 0, .lost = true },
		  "[killed (SIGKILL): turninit lost track of the command's processes and ended them]\n", true },
		{ "oom killed", "{\"command\":\"x\"}", "", { .wait_status = 9, .oom_killed = true },
		  "[killed by the out-of-memory killer (signal 9, SIGKILL): the container's memory limit "
		  "was reached]\n", true },
		{ "truncated, exit 0", "{\"command\":\"x\"}", "abc\n", { .wait_status = 0, .truncated = true },
		  "abc\n[output past 1048576 bytes was not kept (limits.output_bytes)]\n", false },
		{ "truncated, exit 0, no newline", "{\"command\":\"x\"}", "abc",
		  { .wait_status = 0, .truncated = true },
		  "abc\n[output past 1048576 bytes was not kept (limits.output_bytes)]\n", false },
		{ "truncated, exit 2", "{\"command\":\"x\"}", "abc", { .wait_status = 2 << 8, .truncated = true },
		  "abc\n[output past 1048576 bytes was not kept (limits.output_bytes)]\n[exit code 2]\n", true },
		{ "truncated, timed out", "{\"command\":\"x\",\"timeout\":9}", "",
		  { .wait_status = 9, .truncated = true, .timed_out = true },
		  "[output past 1048576 bytes was not kept (limits.output_bytes)]\n"
		  "[timed out after 9 s: the command was stopped (SIGTERM, then SIGKILL)]\n", true },
	};
	/* clang-format on */

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rq_request *rq = call(f->s, "42", cases[i].args);
		const char *p = cases[i].out;
		bool err_stream = false;
		char *l;

		rq_free(rq);
		while (*p) {
			size_t n = strcspn(p, "|");

			l = mcp_output(f->s, "42", err_stream, (const uint8_t *)p, n);
			assert_string_equal(l, "");
			free(l);
			err_stream = !err_stream;
			p += n + (p[n] == '|');
		}
		l = mcp_exit(f->s, "42", &cases[i].end);
		if (!l)
			fail_msg("%s: NULL", cases[i].name);
		{
			char *copy = strdup(l);
			json_t *v = json_loads(l, 0, NULL);
			json_t *t = json_object_get(json_array_get(json_object_get(json_object_get(v,
												   "result"),
										   "content"),
								   0),
						    "text");

			if (!t || strcmp(json_string_value(t), cases[i].text) != 0)
				fail_msg("%s: %s", cases[i].name, copy);
			json_decref(v);
			free(copy);
		}
		expect_tool_text(l, "42", cases[i].text, cases[i].is_error);
	}
	/* the whole line, in this key order */
	{
		char *l;

		open_call(f->s, "7", "7");
		feed(f->s, "7", "hello\n", 6, 6);
		l = mcp_exit(f->s, "7", &exit0);
		assert_string_equal(l,
				    "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\","
				    "\"text\":\"hello\\n\"}],\"isError\":false}}");
		free(l);
	}
	/* an end, output or progress of no call of this session: nothing */
	{
		char *l = mcp_exit(f->s, "nope", &exit0);

		assert_string_equal(l, "");
		free(l);
		feed(f->s, "nope", "x", 1, 1);
		l = mcp_progress(f->s, "nope", 1);
		assert_string_equal(l, "");
		free(l);
		l = mcp_started(f->s, "nope", 12);
		assert_string_equal(l, "");
		free(l);
	}
}

static void invalid_bytes_become_fffd(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *out, *text;
	} cases[] = {
		{ "a\xff"
		  "b",
		  "a" FFFD "b" },
		{ "\xc0\xaf", FFFD FFFD }, /* overlong '/' */
		{ "\xc1\xbf", FFFD FFFD },
		{ "\xe0\x80\xaf", FFFD FFFD FFFD }, /* overlong, 3 bytes */
		{ "\xed\xa0\x80"
		  "d",
		  FFFD FFFD FFFD "d" },                      /* a surrogate */
		{ "\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD }, /* past U+10FFFF */
		{ "\xf5\x80", FFFD FFFD },
		{ "\x80"
		  "x",
		  FFFD "x" }, /* a lone continuation */
		{ "\xe2\x82"
		  "x",
		  FFFD FFFD "x" },              /* a short sequence */
		{ "x\xe2\x82", "x" FFFD FFFD }, /* cut at the very end */
		{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" },
		{ "\xef\xbf\xbd", FFFD },
		{ "nul\0byte", "nul\0byte" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = i == sizeof(cases) / sizeof(cases[0]) - 1 ? 8 : strlen(cases[i].out);

		open_call(f->s, "1", "1");
		feed(f->s, "1", cases[i].out, n, 1);
		expect_tool_result(mcp_exit(f->s, "1", &exit0), "1", cases[i].text,
				   i == sizeof(cases) / sizeof(cases[0]) - 1 ? 8 : strlen(cases[i].text),
				   false);
	}
}

/* ---- the cut at limits.result_bytes (256: 128 head, 128 tail) ---- */

static char *repeat(char *p, int c, size_t n)
{
	memset(p, c, n);
	return p + n;
}

/* The output of buf[0..len), fed whole, a byte at a time and in chunks of 7,
 * must come back as want (want_len bytes) each time. */
static void expect_cut(struct mcp_session *s, const char *buf, size_t len, const char *want, size_t want_len,
		       const struct ev_end *e, bool is_error)
{
	static const size_t chunks[] = { SIZE_MAX, 1, 7, 128, 129 };

	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		open_call(s, "\"c\"", "s:c");
		feed(s, "s:c", buf, len, chunks[i] == SIZE_MAX ? (len ? len : 1) : chunks[i]);
		expect_tool_result(mcp_exit(s, "s:c", e), "\"c\"", want, want_len, is_error);
	}
}

#define CUT_LINE(n) \
	"[... " #n " bytes of output cut here: a result keeps the first 128 and the last 128 bytes ...]\n"
#define CUT_LINE1 "[... 1 byte of output cut here: a result keeps the first 128 and the last 128 bytes ...]\n"

static void cut_keeps_head_and_tail(void **state)
{
	struct fx *f = *state;
	char in[1024], want[1024], *p, *w;

	/* exactly result_bytes: nothing cut */
	p = repeat(in, 'a', 256);
	expect_cut(f->s, in, 256, in, 256, &exit0, false);

	/* one byte more: one cut, with a newline before the line */
	p = repeat(in, 'a', 128);
	*p++ = 'm';
	p = repeat(p, 'z', 128);
	w = repeat(want, 'a', 128);
	memcpy(w, "\n" CUT_LINE1, strlen("\n" CUT_LINE1));
	w += strlen("\n" CUT_LINE1);
	w = repeat(w, 'z', 128);
	expect_cut(f->s, in, (size_t)(p - in), want, (size_t)(w - want), &exit0, false);

	/* a head that ends in a newline gets no second one; exit 3 after a tail
	 * without one gets it */
	p = repeat(in, 'a', 127);
	*p++ = '\n';
	p = repeat(p, 'm', 10);
	p = repeat(p, 'z', 128);
	w = repeat(want, 'a', 127);
	*w++ = '\n';
	memcpy(w, CUT_LINE(10), strlen(CUT_LINE(10)));
	w += strlen(CUT_LINE(10));
	w = repeat(w, 'z', 128);
	memcpy(w, "\n[exit code 3]\n", 15);
	w += 15;
	expect_cut(f->s, in, (size_t)(p - in), want, (size_t)(w - want),
		   &(struct ev_end){ .wait_status = 3 << 8 }, true);

	/* 10000 bytes: the first 128 and the last 128 */
	{
		char *big = malloc(10000);
		size_t k;

		assert_non_null(big);
		for (k = 0; k < 10000; k++)
			big[k] = (char)('A' + k % 26);
		w = want;
		memcpy(w, big, 128);
		w += 128;
		memcpy(w, "\n" CUT_LINE(9744), strlen("\n" CUT_LINE(9744)));
		w += strlen("\n" CUT_LINE(9744));
		memcpy(w, big + 10000 - 128, 128);
		w += 128;
		expect_cut(f->s, big, 10000, want, (size_t)(w - want), &exit0, false);
		free(big);
	}
}

/* A character the cut splits is dropped into it, and counted: no U+FFFD
 * where the output was valid UTF-8. */
static void cut_splits_no_character(void **state)
{
	struct fx *f = *state;
	char in[1024], want[1024], *p, *w;

	/* a 3-byte character at the head's end (bytes 127..129) and one at the
	 * tail's start (its lead the last byte of the cut) */
	p = repeat(in, 'a', 127);
	memcpy(p, "\xe2\x82\xac", 3);
	p += 3;
	p = repeat(p, 'm', 50);
	memcpy(p, "\xe2\x82\xac", 3);
	p += 3;
	p = repeat(p, 'z', 126);
	assert_int_equal(p - in, 309);
	w = repeat(want, 'a', 127);
	memcpy(w, "\n" CUT_LINE(56), strlen("\n" CUT_LINE(56))); /* 53 cut, 1 + 2 dropped */
	w += strlen("\n" CUT_LINE(56));
	w = repeat(w, 'z', 126);
	expect_cut(f->s, in, (size_t)(p - in), want, (size_t)(w - want), &exit0, false);
	assert_null(memmem(want, (size_t)(w - want), FFFD, 3));

	/* a 4-byte character with 2 bytes in the head */
	p = repeat(in, 'a', 126);
	memcpy(p, "\xf0\x9f\x98\x80", 4);
	p += 4;
	p = repeat(p, 'm', 10);
	p = repeat(p, 'z', 128);
	w = repeat(want, 'a', 126);
	memcpy(w, "\n" CUT_LINE(14), strlen("\n" CUT_LINE(14))); /* 12 cut, 2 dropped */
	w += strlen("\n" CUT_LINE(14));
	w = repeat(w, 'z', 128);
	expect_cut(f->s, in, (size_t)(p - in), want, (size_t)(w - want), &exit0, false);

	/* a 4-byte character whose last 3 bytes start the tail */
	p = repeat(in, 'a', 128);
	p = repeat(p, 'm', 5);
	memcpy(p, "\xf0\x9f\x98\x80", 4);
	p += 4;
	p = repeat(p, 'z', 125);
	w = repeat(want, 'a', 128);
	memcpy(w, "\n" CUT_LINE(9), strlen("\n" CUT_LINE(9))); /* 6 cut, 3 dropped */
	w += strlen("\n" CUT_LINE(9));
	w = repeat(w, 'z', 125);
	expect_cut(f->s, in, (size_t)(p - in), want, (size_t)(w - want), &exit0, false);

	/* a whole character at the head's end stays */
	p = repeat(in, 'a', 126);
	memcpy(p, "\xc3\xa9", 2);
	p += 2;
	p = repeat(p, 'm', 4);
	p = repeat(p, 'z', 128);
	w = repeat(want, 'a', 126);
	memcpy(w, "\xc3\xa9", 2);
	w += 2;
	memcpy(w, "\n" CUT_LINE(4), strlen("\n" CUT_LINE(4)));
	w += strlen("\n" CUT_LINE(4));
	w = repeat(w, 'z', 128);
	expect_cut(f->s, in, (size_t)(p - in), want, (size_t)(w - want), &exit0, false);

	/* nothing cut, and a character across the head's end: kept whole */
	p = repeat(in, 'a', 127);
	memcpy(p, "\xe2\x82\xac", 3);
	p += 3;
	p = repeat(p, 'z', 70);
	expect_cut(f->s, in, (size_t)(p - in), in, (size_t)(p - in), &exit0, false);
	p = repeat(in, 'a', 126);
	memcpy(p, "\xf0\x9f\x98\x80", 4);
	p += 4;
	p = repeat(p, 'z', 126);
	assert_int_equal(p - in, 256);
	expect_cut(f->s, in, (size_t)(p - in), in, (size_t)(p - in), &exit0, false);
}

/* ---- mcp_error ---- */

/* An end turninit does not know (the sidecar's server gone), and the end of
 * the session: said in words after the output so far. */
static void aborted_and_ended_calls(void **state)
{
	struct fx *f = *state;
	char *l;

	open_call(f->s, "7", "7");
	feed(f->s, "7", "partial", 7, 7);
	expect_tool_text(mcp_abort(f->s, "7", "the server went away"), "7",
			 "partial\n[the server went away]\n", true);
	l = mcp_abort(f->s, "7", "again"); /* it ended the call */
	assert_string_equal(l, "");
	free(l);
	open_call(f->s, "8", "8");
	feed(f->s, "8", "up\n", 3, 3);
	expect_tool_text(mcp_exit(f->s, "8", &(struct ev_end){ .wait_status = 15, .ended = true }), "8",
			 "up\n[stopped: the session ended while it ran (SIGTERM, then SIGKILL)]\n", true);
	/* a command that exits 0 on the session's SIGTERM was still stopped */
	open_call(f->s, "9", "9");
	expect_tool_text(mcp_exit(f->s, "9", &(struct ev_end){ .wait_status = 0, .ended = true }), "9",
			 "[stopped: the session ended while it ran (SIGTERM, then SIGKILL)]\n", true);
}

/* A timeout of 5.0 is the integer 5 (JSON Schema); a command longer than one
 * execve(2) argument may be is a tool error. */
static void timeout_real_and_command_length(void **state)
{
	struct fx *f = *state;
	struct rq_request *rq = call(f->s, "3", "{\"command\":\"x\",\"timeout\":5.0}");
	char *big = malloc(MCP_COMMAND_MAX + 64), *line;

	assert_int_equal(rq->timeout_s, 5);
	rq_free(rq);
	assert_non_null(big);
	memcpy(big, "{\"command\":\"", 12);
	memset(big + 12, 'e', MCP_COMMAND_MAX + 1);
	strcpy(big + 12 + MCP_COMMAND_MAX + 1, "\"}");
	{
		char *params;

		assert_true(asprintf(&params, "{\"name\":\"bash\",\"arguments\":%s}", big) > 0);
		line = call_line("4", params);
		free(params);
	}
	expect_tool_text(reply_of(f->s, line), "4",
			 "the argument \"command\" is 131072 bytes, more than the 131071 one argument of "
			 "execve(2) may hold: write a long script to a file in smaller calls and run that",
			 true);
	free(line);
	free(big);
}

/* Each call carries what the manifest admits of the container's own
 * environment (TZ and LC_* here), and nothing else of it. */
static void calls_carry_the_admitted_environment(void **state)
{
	static char *const env[] = {
		"TZ=Europe/Paris", "ANTHROPIC_API_KEY=secret",
		"LC_ALL=C",        "BASH_ENV=/x",
		"PATH=/evil",      "HOME=/tmp",
		"LANG=fr",         NULL,
	};
	struct mf_manifest *m = manifest_of(manifest_json);
	struct mcp_session *s = mcp_session_new(m, VERSION, env);
	struct rq_request *rq;

	(void)state;
	assert_non_null(s);
	rq = call(s, "1", "{\"command\":\"env\"}");
	assert_non_null(rq->env);
	assert_string_equal(rq->env[0], "TZ=Europe/Paris");
	assert_string_equal(rq->env[1], "LC_ALL=C");
	assert_null(rq->env[2]);
	rq_free(rq);
	mcp_session_free(s);
	mf_free(m);
}

/* One call at a time, and an output bound below the result's: said so. */
static void tool_description_of_small_limits(void **state)
{
	struct mf_manifest *m = manifest_of(
		"{\"turninit\":1,\"expires\":\"2027-06-01T00:00:00Z\","
		"\"user\":{\"uid\":1000,\"gid\":1000},\"home\":\"/home/agent\",\"env\":{\"set\":"
		"{\"PATH\":\"/bin\"}},\"limits\":{\"concurrency\":1,\"output_bytes\":300,\"result_bytes\":1000}}");
	char *d = mcp_tool_description(m);

	(void)state;
	assert_non_null(d);
	expect_in(d,
		  "Only the first 300 bytes of output are kept, with a line saying when more was dropped;");
	expect_in(d, "One call runs at a time; others wait.");
	assert_null(strstr(d, "Output longer than"));
	free(d);
	mf_free(m);
}

static void errors_of_calls(void **state)
{
	struct fx *f = *state;
	char *l;

	open_call(f->s, "7", "7");
	feed(f->s, "7", "ignored", 7, 7);
	expect_tool_text(mcp_error(f->s, "7", "cwd /nope: No such file or directory"), "7",
			 "turninit did not run the command: cwd /nope: No such file or directory", true);
	/* it ended the call */
	l = mcp_exit(f->s, "7", &exit0);
	assert_string_equal(l, "");
	free(l);
	/* no call: a JSON-RPC error with id null */
	l = mcp_error(f->s, NULL, "request: too long");
	assert_string_equal(l, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
			       "\"message\":\"Invalid Request: request: too long\"}}");
	free(l);
	expect_rpc_error(mcp_error(f->s, "nope", "m"), "null", -32600, "Invalid Request: m");
	/* a message that is not UTF-8 is still answered */
	open_call(f->s, "\"e\"", "s:e");
	expect_tool_text(mcp_error(f->s, "s:e", "bad \xff byte"), "\"e\"",
			 "turninit did not run the command: bad " FFFD " byte", true);
	expect_rpc_error(mcp_error(f->s, NULL, "bad \xff byte"), "null", -32600, "invalid request");
}

/* ---- progress ---- */

static void expect_progress(char *line, const char *token, uint64_t n, const char *message)
{
	json_t *v = load_line(line, NULL), *p = json_object_get(v, "params");
	json_t *tok = json_loads(token, JSON_DECODE_ANY, NULL);

	assert_int_equal(json_object_size(v), 3);
	assert_string_equal(json_string_value(json_object_get(v, "method")), "notifications/progress");
	assert_int_equal(json_object_size(p), 3);
	assert_true(json_equal(json_object_get(p, "progressToken"), tok));
	assert_int_equal(json_integer_value(json_object_get(p, "progress")), n);
	if (strcmp(json_string_value(json_object_get(p, "message")), message) != 0)
		fail_msg("message \"%s\", want \"%s\"", json_string_value(json_object_get(p, "message")),
			 message);
	json_decref(tok);
	json_decref(v);
}

static void open_with_meta(struct mcp_session *s, const char *id, const char *meta, const char *key)
{
	char params[256];
	char *line;
	struct rq_request *rq;

	snprintf(params, sizeof(params),
		 "{\"name\":\"bash\",\"arguments\":{\"command\":\"make\"},"
		 "\"_meta\":%s}",
		 meta);
	line = call_line(id, params);
	rq = request_of(s, line);
	assert_string_equal(rq->id, key);
	rq_free(rq);
	free(line);
}

static void progress_of_calls(void **state)
{
	struct fx *f = *state;
	char big[400], want[400];
	char *l;

	open_with_meta(f->s, "11", "{\"progressToken\":\"tok\"}", "11");
	l = mcp_progress(f->s, "11", 2500);
	assert_string_equal(l, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
			       "{\"progressToken\":\"tok\",\"progress\":1,\"message\":\"running for 2 s\"}}");
	free(l);
	feed(f->s, "11", "building\nstep 1\n", 16, 5);
	expect_progress(mcp_progress(f->s, "11", 4000), "\"tok\"", 2, "step 1");
	feed(f->s, "11", "step 2\r\n\n", 9, 9);
	expect_progress(mcp_progress(f->s, "11", 6000), "\"tok\"", 3, "step 2");
	feed(f->s, "11", "part", 4, 4);
	expect_progress(mcp_progress(f->s, "11", 8000), "\"tok\"", 4, "part");
	/* a character not yet whole at the end is left out */
	feed(f->s, "11", " \xe2\x82", 3, 3);
	expect_progress(mcp_progress(f->s, "11", 8000), "\"tok\"", 5, "part ");
	feed(f->s, "11", "\xac", 1, 1);
	expect_progress(mcp_progress(f->s, "11", 8000), "\"tok\"", 6, "part \xe2\x82\xac");
	/* a long last line: its last 199 bytes */
	memset(big, 'x', sizeof(big));
	big[0] = '\n';
	big[sizeof(big) - 1] = 'y';
	feed(f->s, "11", big, sizeof(big), 100);
	memset(want, 'x', 198);
	want[198] = 'y';
	want[199] = '\0';
	expect_progress(mcp_progress(f->s, "11", 9000), "\"tok\"", 7, want);
	/* ... no character split at its start: 150 x "é" is 300 bytes, the last
	 * 199 start inside one */
	feed(f->s, "11", "\n", 1, 1);
	for (int i = 0; i < 150; i++)
		memcpy(big + 2 * i, "\xc3\xa9", 2);
	feed(f->s, "11", big, 300, 300);
	for (int i = 0; i < 99; i++)
		memcpy(want + 2 * i, "\xc3\xa9", 2);
	want[198] = '\0';
	expect_progress(mcp_progress(f->s, "11", 9000), "\"tok\"", 8, want);
	/* once the call's timeout has fired (120 s here) it is ending: no more */
	l = mcp_progress(f->s, "11", 120000);
	assert_string_equal(l, "");
	free(l);
	expect_progress(mcp_progress(f->s, "11", 119999), "\"tok\"", 9, want);
	free(mcp_exit(f->s, "11", &exit0));
	l = mcp_progress(f->s, "11", 9000); /* ended */
	assert_string_equal(l, "");
	free(l);

	/* no progressToken, or one that is neither a string nor an integer:
	 * no notifications */
	open_call(f->s, "12", "12");
	feed(f->s, "12", "out\n", 4, 4);
	l = mcp_progress(f->s, "12", 2000);
	assert_string_equal(l, "");
	free(l);
	open_with_meta(f->s, "13", "{\"progressToken\":true}", "13");
	l = mcp_progress(f->s, "13", 2000);
	assert_string_equal(l, "");
	free(l);
	open_with_meta(f->s, "14", "{\"progressToken\":1.5}", "14");
	l = mcp_progress(f->s, "14", 2000);
	assert_string_equal(l, "");
	free(l);
	/* an integer token; each call counts its own */
	open_with_meta(f->s, "\"p\"", "{\"progressToken\":42}", "s:p");
	expect_progress(mcp_progress(f->s, "s:p", 0), "42", 1, "running for 0 s");
	expect_progress(mcp_progress(f->s, "s:p", 61999), "42", 2, "running for 61 s");
	feed(f->s, "s:p", "\n\n", 2, 2); /* only empty lines: still the time */
	expect_progress(mcp_progress(f->s, "s:p", 62000), "42", 3, "running for 62 s");
	feed(f->s, "s:p", "bad \xff byte\n", 11, 11);
	expect_progress(mcp_progress(f->s, "s:p", 64000), "42", 4, "bad " FFFD " byte");
	open_with_meta(f->s, "15", "{\"progressToken\":\"t15\"}", "15");
	expect_progress(mcp_progress(f->s, "15", 2000), "\"t15\"", 1, "running for 2 s");
	expect_progress(mcp_progress(f->s, "s:p", 66000), "42", 5, "bad " FFFD " byte");
}

/* With the output past the head, the last line comes from the tail. */
static void progress_reads_the_tail(void **state)
{
	struct fx *f = *state;
	char big[300];

	open_with_meta(f->s, "1", "{\"progressToken\":\"t\"}", "1");
	memset(big, 'a', sizeof(big));
	feed(f->s, "1", big, 200, 50);
	/* the last line as the tail has it: 200 - 128 bytes */
	big[72] = '\0';
	expect_progress(mcp_progress(f->s, "1", 2000), "\"t\"", 1, big);
	big[72] = 'a';
	feed(f->s, "1", "\nlast line\n", 11, 3);
	expect_progress(mcp_progress(f->s, "1", 4000), "\"t\"", 2, "last line");
	/* the tail ring wrapped more than once */
	for (int i = 0; i < 10; i++)
		feed(f->s, "1", big, sizeof(big), 77);
	feed(f->s, "1", "\nthe end", 8, 8);
	expect_progress(mcp_progress(f->s, "1", 6000), "\"t\"", 3, "the end");
}

/* ---- the bound on open calls ---- */

static void calls_max_bound(void **state)
{
	struct fx *f = *state;
	char id[32], key[32];
	char *line, *l;

	for (int i = 0; i < MCP_CALLS_MAX; i++) {
		snprintf(id, sizeof(id), "%d", i);
		open_call(f->s, id, id);
	}
	line = call_line("\"one more\"", "{\"name\":\"bash\",\"arguments\":{\"command\":\"x\"}}");
	expect_tool_text(reply_of(f->s, line), "\"one more\"",
			 "turninit: 2048 calls are running or waiting, the most it takes: try again when "
			 "one has returned",
			 true);
	/* a duplicate is still a duplicate */
	expect_error_of(f->s,
			"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
			"{\"name\":\"bash\",\"arguments\":{\"command\":\"x\"}}}",
			"5", -32600,
			"Invalid Request: id 5 is in use by a call not yet answered (a cancelled one may still be ending)");
	/* a cancelled call still counts until it ends */
	{
		struct rq_request *rq =
			request_of(f->s, "{\"jsonrpc\":\"2.0\",\"method\":"
					 "\"notifications/cancelled\",\"params\":{\"requestId\":0}}");

		rq_free(rq);
	}
	expect_tool_text(reply_of(f->s, line), "\"one more\"",
			 "turninit: 2048 calls are running or waiting, the most it takes: try again when "
			 "one has returned",
			 true);
	l = mcp_exit(f->s, "0", &exit0);
	assert_string_equal(l, "");
	free(l);
	{
		struct rq_request *rq = request_of(f->s, line);

		assert_string_equal(rq->id, "x:6f6e65206d6f7265");
		rq_free(rq);
	}
	expect_tool_text(reply_of(f->s, "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"tools/call\","
					"\"params\":{\"name\":\"bash\",\"arguments\":{\"command\":\"x\"}}}"),
			 "\"two\"",
			 "turninit: 2048 calls are running or waiting, the most it takes: try "
			 "again when one has returned",
			 true);
	/* end half of them; the rest go with the session (teardown) */
	for (int i = 1; i < MCP_CALLS_MAX; i += 2) {
		snprintf(key, sizeof(key), "%d", i);
		snprintf(id, sizeof(id), "%d", i);
		expect_tool_text(mcp_exit(f->s, key, &(struct ev_end){ .wait_status = 1 << 8 }), id,
				 "[exit code 1]\n", true);
	}
	free(line);
}

/* ---- jansson under allocation failure ---- */

/* With each of jansson's allocations failing once in turn, a tools/call is
 * the very same request or -ENOMEM with no call left open; an initialize
 * is the very same answer or -ENOMEM. */
static void jansson_oom(void **state)
{
	struct fx *f = *state;
	static const char call_json[] =
		"{\"jsonrpc\":\"2.0\",\"id\":\"c-1\",\"method\":\"tools/call\",\"params\":{\"name\":\"bash\","
		"\"arguments\":{\"command\":\"rm -rf /tmp/build-0123456789abcdef\",\"timeout\":7},"
		"\"_meta\":{\"progressToken\":\"pt-0123456789\"}}}";
	static const char init_json[] =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
		"\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"roots\":{}}}}";
	char *init_reply = reply_of(f->s, init_json);
	long n_enomem = 0;

	json_set_alloc_funcs(jf_malloc, free);
	for (jf_fail_at = 1;; jf_fail_at++) {
		struct rq_request *rq = NULL;
		struct tn_error err = { 0 };
		char id[RQ_ID_MAX + 1], *reply = NULL, *l;
		int rc;

		jf_count = 0;
		rc = mcp_parse(f->s, call_json, strlen(call_json), &rq, id, &reply, &err);
		if (rc == -ENOMEM) {
			n_enomem++;
			assert_null(rq);
			assert_int_equal(err.code, ENOMEM);
			l = mcp_exit(f->s, "s:c-1", &exit0); /* nothing open */
			json_set_alloc_funcs(malloc, free);
			assert_string_equal(l, "");
			free(l);
			json_set_alloc_funcs(jf_malloc, free);
			continue;
		}
		json_set_alloc_funcs(malloc, free);
		if (rc != 0 || !rq)
			fail_msg("allocation %ld failed: %d %s %s", jf_fail_at, rc, err.msg,
				 reply ? reply : "");
		assert_string_equal(rq->id, "s:c-1");
		assert_string_equal(rq->words[0], "rm -rf /tmp/build-0123456789abcdef");
		assert_int_equal(rq->timeout_s, 7);
		rq_free(rq);
		expect_progress(mcp_progress(f->s, "s:c-1", 3000), "\"pt-0123456789\"", 1, "running for 3 s");
		expect_tool_text(mcp_exit(f->s, "s:c-1", &exit0), "\"c-1\"", "(no output)", false);
		json_set_alloc_funcs(jf_malloc, free);
		if (jf_count < jf_fail_at)
			break; /* no allocation left to fail */
	}
	for (jf_fail_at = 1;; jf_fail_at++) {
		struct rq_request *rq = NULL;
		struct tn_error err = { 0 };
		char id[RQ_ID_MAX + 1], *reply = NULL;
		int rc;

		jf_count = 0;
		rc = mcp_parse(f->s, init_json, strlen(init_json), &rq, id, &reply, &err);
		if (rc == -ENOMEM) {
			n_enomem++;
			continue;
		}
		json_set_alloc_funcs(malloc, free);
		assert_int_equal(rc, 0);
		assert_null(rq);
		assert_string_equal(reply, init_reply);
		free(reply);
		json_set_alloc_funcs(jf_malloc, free);
		if (jf_count < jf_fail_at)
			break;
	}
	/* the end of a call: the very same line or NULL (the call is gone) */
	for (jf_fail_at = 1;; jf_fail_at++) {
		char *l;

		json_set_alloc_funcs(malloc, free);
		open_call(f->s, "9", "9");
		feed(f->s, "9", "output\n", 7, 7);
		json_set_alloc_funcs(jf_malloc, free);
		jf_count = 0;
		l = mcp_exit(f->s, "9", &(struct ev_end){ .wait_status = 2 << 8 });
		json_set_alloc_funcs(malloc, free);
		if (!l) {
			n_enomem++;
			l = mcp_exit(f->s, "9", &exit0);
			assert_string_equal(l, "");
			free(l);
			continue;
		}
		expect_tool_text(l, "9", "output\n[exit code 2]\n", true);
		if (jf_count < jf_fail_at)
			break;
	}
	json_set_alloc_funcs(malloc, free);
	free(init_reply);
	assert_true(n_enomem > 10);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
#define T_SMALL(name) cmocka_unit_test_setup_teardown(name, setup_small, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(versions_table),
		T(initialize_negotiates_the_version),
		T(ping_answers_an_empty_result),
		T(tools_list_has_one_tool),
		T(tool_description_says_the_manifest),
		T(notifications_and_responses_get_no_reply),
		T(json_rpc_errors),
		T(tools_call_makes_an_exec_request),
		T(call_keys_of_ids),
		T(duplicate_id_of_an_open_call),
		T(net_refusals_in_results),
		T(invalid_arguments_are_tool_errors),
		T(cancelled_calls_are_never_answered),
		T(exit_results),
		T(invalid_bytes_become_fffd),
		T_SMALL(cut_keeps_head_and_tail),
		T_SMALL(cut_splits_no_character),
		T(errors_of_calls),
		T(aborted_and_ended_calls),
		T(timeout_real_and_command_length),
		cmocka_unit_test(tool_description_of_small_limits),
		cmocka_unit_test(calls_carry_the_admitted_environment),
		T(progress_of_calls),
		T_SMALL(progress_reads_the_tail),
		T(calls_max_bound),
		T(jansson_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
