/* fuzz_mcp.c - libFuzzer target for mcp_parse (policy/mcp.c), the MCP
 * (JSON-RPC 2.0) message decoder of `turninit mcp`, and the tool results it
 * makes.
 *
 * One session of a fixed manifest (limits.result_bytes 256, so that short
 * inputs reach the cut) lives across inputs. Before each input two calls are
 * opened by fixed lines (id 7 with a progressToken, id "abc"), so that the
 * input can cancel them or reuse their ids. The input is then one message
 * line as-is (no NUL added: a read past len is an ASan error), and its bytes
 * are also the output of call 7 and of the input's own call, if it made one,
 * in chunks whose sizes come from the input, with progress notifications
 * between. Then every open call is ended (mcp_exit with an end chosen by the
 * input's length; "abc" by mcp_error on odd lengths), so nothing is left open
 * for the next input and nothing leaks.
 *
 * Invariants that abort: mcp_parse returns 0 with exactly one of a request
 * and a reply, and ret_id ""; a reply is "" or one line of a JSON-RPC 2.0
 * response (an error has one of the four codes); a request has a valid key,
 * an exec one non-empty word and runs with a timeout of 1..limits.timeout_s, a
 * cancel is quiet and names call 7 or "abc"; progress is "" or a
 * notifications/progress with the call's token and a message of at most 199
 * bytes of output (each invalid byte a 3-byte U+FFFD); every end is "" exactly when
 * the call was cancelled, else a tool result of the same id whose text is
 * valid UTF-8 (jansson parses it), bounded, isError unless it exited 0. When
 * the output was valid UTF-8 and the end exit 0: the text is the output
 * itself (at most 256 bytes), or its head, the cut line and its tail, with
 * head + cut + tail = the output's length and no U+FFFD the output lacked.
 */
#define _GNU_SOURCE /* memmem */
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "policy/mcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NOW 1700000000
#define FUZZ_RESULT 256 /* limits.result_bytes: 128 head, 128 tail */
#define FUZZ_TIMEOUT 60 /* limits.timeout_s */

static const char fuzz_manifest_json[] =
	"{\"turninit\":1,\"expires\":\"2099-01-01T00:00:00Z\",\"user\":{\"uid\":1000,\"gid\":1000},"
	"\"home\":\"/home/agent\",\"env\":{\"set\":{\"PATH\":\"/usr/bin:/bin\"}},"
	"\"limits\":{\"timeout_s\":60,\"result_bytes\":256}}";

static const char fuzz_open7[] =
	"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\","
	"\"arguments\":{\"command\":\"make\"},\"_meta\":{\"progressToken\":\"p\"}}}";
static const char fuzz_open_abc[] =
	"{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"tools/call\",\"params\":{\"name\":\"bash\","
	"\"arguments\":{\"command\":\"true\"}}}";

/* How calls end, chosen by the input's length. */
static const struct ev_end fuzz_ends[] = {
	{ .wait_status = 0 },
	{ .wait_status = 0, .truncated = true },
	{ .wait_status = 3 << 8 },
	{ .wait_status = 9 },
	{ .wait_status = 9, .timed_out = true },
	{ .wait_status = 9, .lost = true },
	{ .wait_status = 9, .oom_killed = true },
	{ .wait_status = 40 | 0x80 },
};

static struct mf_manifest *fuzz_m;
static struct mcp_session *fuzz_s;

static void fuzz_fail(const char *what, const char *s)
{
	fprintf(stderr, "fuzz_mcp: %s: \"%s\"\n", what, s ? s : "(null)");
	abort();
}

static void fuzz_init(void)
{
	struct tn_error err = { 0 };

	if (fuzz_s)
		return;
	if (mf_parse((const uint8_t *)fuzz_manifest_json, strlen(fuzz_manifest_json), FUZZ_NOW, NULL, &fuzz_m,
		     &err) != 0)
		fuzz_fail("the manifest does not parse", err.msg);
	fuzz_s = mcp_session_new(fuzz_m, "0.0.0-fuzz", NULL);
	if (!fuzz_s)
		fuzz_fail("mcp_session_new", NULL);
}

/* A line the session sent: one line of JSON, an object with "jsonrpc":"2.0". */
static json_t *fuzz_load(const char *line)
{
	json_t *v;

	if (strchr(line, '\n'))
		fuzz_fail("a line holds a newline", line);
	v = json_loads(line, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	if (!json_is_object(v) || !json_is_string(json_object_get(v, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(v, "jsonrpc")), "2.0") != 0)
		fuzz_fail("not a JSON-RPC 2.0 object", line);
	return v;
}

static void fuzz_check_reply(const char *line)
{
	json_t *v, *e;
	json_int_t code;

	if (line[0] == '\0')
		return;
	v = fuzz_load(line);
	if (!json_object_get(v, "id") || json_object_size(v) != 3)
		fuzz_fail("a reply without id", line);
	e = json_object_get(v, "error");
	if (e) {
		code = json_integer_value(json_object_get(e, "code"));
		if (code != -32700 && code != -32600 && code != -32601 && code != -32602)
			fuzz_fail("an unknown error code", line);
		if (!json_is_string(json_object_get(e, "message")))
			fuzz_fail("an error without message", line);
	} else if (!json_is_object(json_object_get(v, "result"))) {
		fuzz_fail("a reply neither result nor error", line);
	}
	json_decref(v);
}

static bool fuzz_key_ok(const char *key)
{
	size_t n = strlen(key);

	return n >= 1 && n <= RQ_ID_MAX &&
	       strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-") == n;
}

static void fuzz_open(const char *line, const char *key)
{
	struct rq_request *rq = NULL;
	char id[RQ_ID_MAX + 1], *reply = NULL;

	if (mcp_parse(fuzz_s, line, strlen(line), &rq, id, &reply, NULL) != 0 || !rq ||
	    strcmp(rq->id, key) != 0)
		fuzz_fail("a fixed call did not open (one left open by the last input?)", reply);
	rq_free(rq);
}

/* A progress notification of key after elapsed_ms; clean: the output so far
 * is valid UTF-8 without U+FFFD, so its message has none either. */
static void fuzz_progress(const char *key, uint64_t elapsed_ms, bool clean)
{
	char *l = mcp_progress(fuzz_s, key, elapsed_ms);
	json_t *v, *p;

	if (!l)
		fuzz_fail("mcp_progress: NULL", key);
	if (l[0] == '\0') {
		free(l);
		return;
	}
	v = fuzz_load(l);
	p = json_object_get(v, "params");
	if (strcmp(json_string_value(json_object_get(v, "method")), "notifications/progress") ||
	    !json_object_get(p, "progressToken") || json_integer_value(json_object_get(p, "progress")) < 1 ||
	    !json_is_string(json_object_get(p, "message")) ||
	    json_string_length(json_object_get(p, "message")) > 3 * 199)
		fuzz_fail("a bad progress notification", l);
	if (strcmp(key, "7") == 0 && strcmp(json_string_value(json_object_get(p, "progressToken")), "p") != 0)
		fuzz_fail("call 7's progress lost its token", l);
	if (clean && strstr(json_string_value(json_object_get(p, "message")), "\xef\xbf\xbd"))
		fuzz_fail("a U+FFFD in progress the output did not have", l);
	json_decref(v);
	free(l);
}

static void fuzz_feed(const char *key, const uint8_t *data, size_t size, bool clean)
{
	size_t off = 0, k = 0;

	fuzz_progress(key, 0, clean); /* no output yet */
	while (off < size) {
		size_t n = 1 + (size_t)data[k++ % size] % 150;
		char *l;

		if (n > size - off)
			n = size - off;
		l = mcp_output(fuzz_s, key, k % 2 == 0, data + off, n);
		if (!l || l[0] != '\0')
			fuzz_fail("mcp_output sent something", l);
		free(l);
		off += n;
		if (k % 5 == 0 || off == size)
			fuzz_progress(key, off, clean);
	}
}

/* The text of an exit 0 of output data[0..size), valid UTF-8: what is kept. */
static void fuzz_check_kept(const char *text, size_t len, const uint8_t *data, size_t size)
{
	static const char tail_of_line[] =
		" bytes of output cut here: a result keeps the first 128 and the last 128 bytes ...]\n";

	if (size == 0) {
		if (strcmp(text, "(no output)") != 0)
			fuzz_fail("no output is not (no output)", text);
		return;
	}
	if (size <= FUZZ_RESULT) {
		if (len != size || memcmp(text, data, size) != 0)
			fuzz_fail("output under the limit was changed", text);
		return;
	}
	if (!memmem(data, size, "\xef\xbf\xbd", 3) && memmem(text, len, "\xef\xbf\xbd", 3))
		fuzz_fail("a U+FFFD the output did not have", text);
	/* the cut line starts after a head of 125..128 bytes (and the newline
	 * added when the head does not end in one) */
	for (size_t h = 125; h <= 128; h++) {
		for (int nl = 0; nl <= 1; nl++) {
			size_t at = h + (size_t)nl, tail_len;
			uint64_t cut;
			char *end;

			if (at + 5 > len || memcmp(text, data, h) != 0 || (nl && text[h] != '\n') ||
			    nl != (data[h - 1] != '\n') || memcmp(text + at, "[... ", 5) != 0)
				continue;
			cut = strtoull(text + at + 5, &end, 10);
			if ((size_t)(end - text) + sizeof(tail_of_line) - 1 > len ||
			    memcmp(end, tail_of_line, sizeof(tail_of_line) - 1) != 0)
				continue;
			end += sizeof(tail_of_line) - 1;
			tail_len = len - (size_t)(end - text);
			if (tail_len < 125 || tail_len > 128 ||
			    memcmp(end, data + size - tail_len, tail_len) != 0 || h + cut + tail_len != size)
				continue;
			return; /* head, cut and tail add up */
		}
	}
	fuzz_fail("the cut does not add up", text);
}

/* End the call of key (its JSON-RPC id is want_id, JSON text) and check what
 * comes back; out/out_len: the output it was given. */
static void fuzz_end(const char *key, const char *want_id, bool cancelled, bool by_error,
		     const struct ev_end *e, const uint8_t *out, size_t out_len, bool out_utf8)
{
	char *l = by_error ? mcp_error(fuzz_s, key, "cwd /nope: No such file or directory") :
			     mcp_exit(fuzz_s, key, e);
	bool ok = !by_error && WIFEXITED(e->wait_status) && WEXITSTATUS(e->wait_status) == 0 &&
		  !e->timed_out && !e->lost;
	json_t *v, *id, *r, *item, *t;

	if (!l)
		fuzz_fail("an end: NULL", key);
	if (cancelled != (l[0] == '\0'))
		fuzz_fail(cancelled ? "a cancelled call was answered" : "a call was not answered", key);
	if (cancelled) {
		free(l);
		return;
	}
	v = fuzz_load(l);
	id = json_loads(want_id, JSON_DECODE_ANY, NULL);
	r = json_object_get(v, "result");
	item = json_array_get(json_object_get(r, "content"), 0);
	t = json_object_get(item, "text");
	if (!id || !json_equal(id, json_object_get(v, "id")))
		fuzz_fail("a result of another id", l);
	if (!json_is_string(t) || json_array_size(json_object_get(r, "content")) != 1 ||
	    strcmp(json_string_value(json_object_get(item, "type")), "text") != 0)
		fuzz_fail("a result without one text", l);
	if (!json_is_boolean(json_object_get(r, "isError")) ||
	    json_is_true(json_object_get(r, "isError")) == ok)
		fuzz_fail("isError is wrong", l);
	if (json_string_length(t) > 3 * FUZZ_RESULT + 512)
		fuzz_fail("a result past its bound", l);
	if (by_error && strcmp(json_string_value(t), "turninit did not run the command: cwd /nope: "
						     "No such file or directory") != 0)
		fuzz_fail("mcp_error's text", l);
	if (!by_error && ok && !e->truncated && out_utf8)
		fuzz_check_kept(json_string_value(t), json_string_length(t), out, out_len);
	json_decref(id);
	json_decref(v);
	free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rq_request *rq = (struct rq_request *)(uintptr_t)0x1;
	char id[RQ_ID_MAX + 1], key[RQ_ID_MAX + 1] = "", *reply = (char *)(uintptr_t)0x1;
	bool cancelled7 = false, cancelled_abc = false, utf8, clean;
	const struct ev_end *e = &fuzz_ends[size % (sizeof(fuzz_ends) / sizeof(fuzz_ends[0]))];
	char *copy = malloc(size ? size : 1);
	json_t *as_text;
	int rc;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	fuzz_init();
	fuzz_open(fuzz_open7, "7");
	fuzz_open(fuzz_open_abc, "s:abc");

	memset(id, 'x', sizeof(id));
	rc = mcp_parse(fuzz_s, copy, size, &rq, id, &reply, NULL);
	if (rc != 0 || rq == (struct rq_request *)(uintptr_t)0x1 || reply == (char *)(uintptr_t)0x1 ||
	    (rq == NULL) == (reply == NULL) || id[0] != '\0')
		fuzz_fail("mcp_parse broke its contract", NULL);
	if (reply) {
		fuzz_check_reply(reply);
		free(reply);
	} else {
		if (!fuzz_key_ok(rq->id))
			fuzz_fail("a request key out of [A-Za-z0-9._:-]{1,128}", rq->id);
		if (rq->op == RQ_EXEC) {
			if (rq->n_words != 1 || !rq->words || !rq->words[0] || rq->words[0][0] == '\0' ||
			    rq->words[1] != NULL || rq->argv_form || rq->cwd || rq->env || rq->has_stdin ||
			    rq_command_of(fuzz_m, rq).timeout_s < 1 ||
			    rq_command_of(fuzz_m, rq).timeout_s > FUZZ_TIMEOUT)
				fuzz_fail("a bad exec request", rq->id);
			if (strcmp(rq->id, "7") == 0 || strcmp(rq->id, "s:abc") == 0)
				fuzz_fail("an exec of an id in use", rq->id);
			snprintf(key, sizeof(key), "%s", rq->id);
		} else if (rq->op == RQ_CANCEL) {
			if (!rq->quiet)
				fuzz_fail("a cancel not quiet", rq->id);
			if (strcmp(rq->id, "7") == 0)
				cancelled7 = true;
			else if (strcmp(rq->id, "s:abc") == 0)
				cancelled_abc = true;
			else
				fuzz_fail("a cancel of no open call", rq->id);
		} else {
			fuzz_fail("a request neither exec nor cancel", rq->id);
		}
		rq_free(rq);
	}

	as_text = json_stringn((const char *)data, size); /* NULL: not UTF-8 */
	utf8 = as_text != NULL;
	json_decref(as_text);
	clean = utf8 && !memmem(data, size, "\xef\xbf\xbd", 3);
	{
		char *l = mcp_started(fuzz_s, "7", 42);

		if (!l || l[0])
			fuzz_fail("mcp_started sent something", l);
		free(l);
	}
	fuzz_feed("7", data, size, clean);
	fuzz_feed("no-such-call", data, size, clean);
	if (key[0])
		fuzz_feed(key, data, size, clean);

	fuzz_end("7", "7", cancelled7, false, e, data, size, utf8);
	fuzz_end("s:abc", "\"abc\"", cancelled_abc, size % 2 == 1, e, NULL, 0, true);
	if (key[0]) {
		/* the input's own call: its JSON-RPC id is not known here, so only
		 * the session's state is checked (answered, and gone after) */
		char *l = mcp_exit(fuzz_s, key, e);

		if (!l || l[0] == '\0')
			fuzz_fail("the input's call was not answered", key);
		fuzz_check_reply(l);
		free(l);
		l = mcp_exit(fuzz_s, key, e);
		if (!l || l[0] != '\0')
			fuzz_fail("a call answered twice", key);
		free(l);
	}
	free(copy);
	return 0;
}
