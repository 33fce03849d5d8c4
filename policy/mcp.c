/* mcp.c - see mcp.h and docs/mcp.md. */
#include "policy/mcp.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "policy/codec.h"
#include "policy/envfilter.h"
#include "policy/signals.h"
#include "policy/sjson.h"
#include "policy/utf8.h"

const char *const mcp_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL,
};

/* JSON-RPC 2.0's error codes (section 5.1). */
enum {
	RPC_PARSE = -32700,
	RPC_INVALID = -32600,
	RPC_METHOD = -32601,
	RPC_PARAMS = -32602,
};

/* What is kept of a call's output: the first head_max bytes, and the last
 * tail_max bytes of the rest in a ring; total counts every byte. */
struct mcp_out {
	uint8_t *head, *tail;
	size_t head_len, head_max;
	size_t tail_len, tail_pos, tail_max; /* tail_pos: where the next byte goes */
	uint64_t total;
};

struct mcp_call {
	struct mcp_call *next;
	char key[RQ_ID_MAX + 1];
	json_t *id;         /* the request's id, as sent */
	json_t *token;      /* its progressToken, or NULL */
	bool cancelled;     /* by the client: never answered */
	uint32_t timeout_s; /* what it runs with (rq_command_of) */
	uint64_t progress;  /* notifications sent */
	struct mcp_out out;
	char *net_notes; /* mcp_net's lines, malloc'd, or NULL */
	unsigned n_net_notes;
};

struct mcp_session {
	const struct mf_manifest *m;
	const char *version;
	char **env; /* the admitted entries of the container's environment,
		       borrowed strings in a malloc'd array; NULL: none */
	size_t n_env;
	struct mcp_call *calls;
	size_t n_calls;
};

/* Steals v. Under the allocation guard: jansson's encoder goes on past an
 * allocation that failed while writing an object key (it ignores that
 * write's result), so a line made then can lack bytes ("result:{"). */
static char *mcp_dump(json_t *v)
{
	char *s = NULL;

	if (v) {
		sj_guard_begin();
		s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
		if (sj_guard_end()) {
			free(s);
			s = NULL;
		}
	}
	json_decref(v);
	return s;
}

static char *mcp_nothing(void)
{
	return calloc(1, 1);
}

/* {"jsonrpc":"2.0","id":ID,"result":RESULT}; steals result. */
static char *rpc_result(json_t *id, json_t *result)
{
	if (!result)
		return NULL;
	return mcp_dump(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "result",
				  result));
}

/* {"jsonrpc":"2.0","id":ID|null,"error":{"code":CODE,"message":MSG}} */
static char *rpc_error(json_t *id, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static char *rpc_error(json_t *id, int code, const char *fmt, ...)
{
	char msg[TN_ERROR_MSG_MAX];
	va_list ap;
	json_t *v;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	v = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error",
		      "code", code, "message", msg);
	if (!v) /* msg cut inside a character, or shown bytes: say less */
		v = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
			      "error", "code", code, "message", "invalid request");
	return mcp_dump(v);
}

/* --- UTF-8 ------------------------------------------------------------------------ */

/* Bytes to cut off the end of p[0..n) so that it does not end inside a
 * character: 0..3. */
static size_t utf8_partial_end(const uint8_t *p, size_t n)
{
	for (size_t back = 1; back <= 3 && back <= n; back++) {
		uint8_t c = p[n - back];

		if ((c & 0xc0) == 0x80)
			continue; /* a continuation byte: look further back */
		if (c >= 0xc0 && utf8_decode(p + n - back, back, NULL) == 0 &&
		    back < (c >= 0xf0 ? 4u :
			    c >= 0xe0 ? 3u :
					2u))
			return back; /* a lead byte whose character the end cut */
		return 0;
	}
	return 0;
}

/* Append p[0..n) to the growing buffer, each byte that starts no valid
 * character replaced by U+FFFD. -ENOMEM. */
struct buf {
	char *p;
	size_t len, cap;
};

static int buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *q = realloc(b->p, cap);

		if (!q)
			return -ENOMEM;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static int buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(p = malloc((size_t)n + 1)))
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	n = buf_add(b, p, (size_t)n);
	free(p);
	return n;
}

static int buf_add_text(struct buf *b, const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t run = i;

		while (run < n && utf8_decode(p + run, n - run, NULL) > 0)
			run += utf8_decode(p + run, n - run, NULL);
		if (buf_add(b, p + i, run - i) < 0)
			return -ENOMEM;
		if (run < n && buf_add(b, "\xef\xbf\xbd", 3) < 0)
			return -ENOMEM;
		i = run < n ? run + 1 : run;
	}
	return 0;
}

/* --- output ----------------------------------------------------------------------- */

static int out_add(struct mcp_out *o, const uint8_t *data, size_t len)
{
	size_t take = 0;

	o->total += len;
	if (o->head_len < o->head_max) {
		take = o->head_max - o->head_len < len ? o->head_max - o->head_len : len;
		if (!o->head && !(o->head = malloc(o->head_max)))
			return -ENOMEM;
		memcpy(o->head + o->head_len, data, take);
		o->head_len += take;
	}
	if (take == len || o->tail_max == 0)
		return 0;
	if (!o->tail && !(o->tail = malloc(o->tail_max)))
		return -ENOMEM;
	data += take;
	len -= take;
	if (len > o->tail_max) { /* only the last tail_max bytes can stay */
		data += len - o->tail_max;
		len = o->tail_max;
	}
	for (size_t i = 0; i < len; i++) {
		o->tail[o->tail_pos] = data[i];
		o->tail_pos = (o->tail_pos + 1) % o->tail_max;
	}
	o->tail_len = o->tail_len + len > o->tail_max ? o->tail_max : o->tail_len + len;
	return 0;
}

/* The kept tail in order, into a malloc'd block of o->tail_len bytes. */
static uint8_t *out_tail(const struct mcp_out *o)
{
	uint8_t *t = malloc(o->tail_len ? o->tail_len : 1);
	size_t start = (o->tail_pos + o->tail_max - o->tail_len) % (o->tail_max ? o->tail_max : 1);

	if (!t)
		return NULL;
	for (size_t i = 0; i < o->tail_len; i++)
		t[i] = o->tail[(start + i) % o->tail_max];
	return t;
}

/* The text of o: head, a line saying what was cut, tail; as valid UTF-8
 * (a character that the cut split is dropped into the cut). */
static int out_text(const struct mcp_out *o, struct buf *b)
{
	uint64_t cut = o->total - o->head_len - o->tail_len;
	uint8_t *tail = out_tail(o);
	size_t h = o->head_len, skip = 0;
	int r;

	if (!tail)
		return -ENOMEM;
	if (cut == 0 && o->tail_len) {
		/* nothing between head and tail: one text, so that a character
		 * across the two stays whole */
		uint8_t *all = malloc(o->head_len + o->tail_len);

		if (!all) {
			free(tail);
			return -ENOMEM;
		}
		memcpy(all, o->head, o->head_len);
		memcpy(all + o->head_len, tail, o->tail_len);
		r = buf_add_text(b, all, o->head_len + o->tail_len);
		free(all);
		free(tail);
		return r;
	}
	if (cut > 0) {
		h -= utf8_partial_end(o->head, h);
		while (skip < 3 && skip < o->tail_len && (tail[skip] & 0xc0) == 0x80)
			skip++;
		cut += (o->head_len - h) + skip;
	}
	r = buf_add_text(b, o->head, h);
	if (r == 0 && cut > 0)
		r = buf_addf(b,
			     "%s[... %" PRIu64 " byte%s of output cut here: a result keeps the first "
			     "%zu and the last %zu bytes ...]\n",
			     h && o->head[h - 1] != '\n' ? "\n" : "", cut, cut == 1 ? "" : "s", o->head_max,
			     o->tail_max);
	if (r == 0)
		r = buf_add_text(b, tail + skip, o->tail_len - skip);
	free(tail);
	return r;
}

static void out_free(struct mcp_out *o)
{
	free(o->head);
	free(o->tail);
}

/* --- calls ------------------------------------------------------------------------ */

void *mcp_session_new(const struct mf_manifest *m, const char *version, char *const *env)
{
	struct mcp_session *s = calloc(1, sizeof(*s));
	size_t n = 0;

	if (!s)
		return NULL;
	*s = (struct mcp_session){ .m = m, .version = version };
	while (env && env[n])
		n++;
	if (env && !(s->env = calloc(n + 1, sizeof(*s->env)))) {
		free(s);
		return NULL;
	}
	/* decided once: the filter and the environment are the turn's */
	for (size_t i = 0; i < n; i++)
		if (envf_admits(&m->env, env[i]))
			s->env[s->n_env++] = env[i];
	return s;
}

static void call_free(struct mcp_call *c)
{
	json_decref(c->id);
	json_decref(c->token);
	out_free(&c->out);
	free(c->net_notes);
	free(c);
}

void mcp_session_free(void *st)
{
	struct mcp_session *s = st;

	if (!s)
		return;
	while (s->calls) {
		struct mcp_call *c = s->calls;

		s->calls = c->next;
		call_free(c);
	}
	free(s->env);
	free(s);
}

static struct mcp_call **call_find(struct mcp_session *s, const char *key)
{
	for (struct mcp_call **c = &s->calls; *c; c = &(*c)->next)
		if (strcmp((*c)->key, key) == 0)
			return c;
	return NULL;
}

/* Take the call of key out of the session: the caller frees it. */
static struct mcp_call *call_take(struct mcp_session *s, const char *key)
{
	struct mcp_call **p = key ? call_find(s, key) : NULL, *c;

	if (!p)
		return NULL;
	c = *p;
	*p = c->next;
	s->n_calls--;
	return c;
}

/* The key of a JSON-RPC id (see mcp_parse), or -EINVAL: not an integer or a
 * string, or a string too long for a key. */
static int id_key(const json_t *id, char key[RQ_ID_MAX + 1])
{
	const char *str;
	size_t n;
	bool plain = true;

	if (json_is_integer(id)) {
		snprintf(key, RQ_ID_MAX + 1, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
		return 0;
	}
	if (!json_is_string(id))
		return -EINVAL;
	str = json_string_value(id);
	n = json_string_length(id);
	for (size_t i = 0; i < n; i++)
		plain = plain &&
			(strchr("._:-", str[i]) || (str[i] >= 'a' && str[i] <= 'z') ||
			 (str[i] >= 'A' && str[i] <= 'Z') || (str[i] >= '0' && str[i] <= '9')) &&
			str[i] != '\0';
	if (plain && n >= 1 && n + 2 <= RQ_ID_MAX) {
		snprintf(key, RQ_ID_MAX + 1, "s:%s", str);
		return 0;
	}
	if (n * 2 + 2 > RQ_ID_MAX)
		return -EINVAL;
	memcpy(key, "x:", 2);
	for (size_t i = 0; i < n; i++)
		snprintf(key + 2 + 2 * i, 3, "%02x", (unsigned)(uint8_t)str[i]);
	key[2 + 2 * n] = '\0';
	return 0;
}

/* --- the tool --------------------------------------------------------------------- */

char *mcp_tool_description(const struct mf_manifest *m)
{
	struct buf b = { 0 };
	int r;

	r = buf_addf(&b, "Run a shell command in a sandboxed container and get its output. Each call "
			 "runs the command as `bash --noprofile --norc -c COMMAND`: a fresh non-login, "
			 "non-interactive shell that reads no profile or rc file. Nothing but files "
			 "persists from one call to the next: no working directory change, variable, "
			 "function, alias or shell option carries over, and every process the command "
			 "started is ended when it returns, so start background servers and use them in "
			 "the same call. ");
	r = r ? r :
		buf_addf(&b,
			 "Every call starts in %s. HOME is %s, private to this container "
			 "and gone when it ends. ",
			 m->workdir, m->home);
	r = r ? r : buf_addf(&b, "The environment is fixed by a signed policy and holds only ");
	for (size_t i = 0; r == 0 && i < m->env.n_set; i++)
		r = buf_addf(&b, "%s%s", i ? ", " : "", m->env.set[i].name);
	r = r ? r : buf_addf(&b, "%sHOME", m->env.n_set ? ", " : "");
	for (size_t i = 0; r == 0 && i < m->env.n_allow; i++)
		r = buf_addf(&b, "%s%s", i ? ", " : " and, when the container has them, ", m->env.allow[i]);
	r = r ? r : buf_addf(&b, "; set what else a command needs inside the command. ");
	r = r ? r :
		buf_addf(&b,
			 "A call is stopped after %" PRIu32 " seconds (SIGTERM, then SIGKILL) "
			 "unless the argument `timeout` sets a shorter bound. ",
			 m->limits.timeout_s);
	r = r ? r : buf_addf(&b, "stdout and stderr come back together, in the order they were read. ");
	if (m->limits.output_bytes <= m->limits.result_bytes)
		r = r ? r :
			buf_addf(&b,
				 "Only the first %" PRIu64 " bytes of output are kept, with a "
				 "line saying when more was dropped; redirect long output to a file "
				 "and read the part you need. ",
				 m->limits.output_bytes);
	else
		r = r ? r :
			buf_addf(&b,
				 "Output longer than %" PRIu64 " bytes keeps its first %" PRIu64
				 " and last %" PRIu64 " bytes with a line saying how much was cut "
				 "between them; redirect long output to a file and read the part "
				 "you need. ",
				 m->limits.result_bytes, m->limits.result_bytes / 2,
				 m->limits.result_bytes - m->limits.result_bytes / 2);
	r = r ? r :
		buf_addf(&b, "A non-zero exit code, a signal or a timeout is said on the last "
			     "line and marks the result as an error. stdin is empty: nothing can be "
			     "typed into a command. ");
	if (m->limits.concurrency == 1)
		r = r ? r : buf_addf(&b, "One call runs at a time; others wait.");
	else
		r = r ? r :
			buf_addf(&b, "Up to %" PRIu32 " calls run at once; others wait.",
				 m->limits.concurrency);
	if (r < 0) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

static json_t *tool_json(const struct mf_manifest *m)
{
	char *desc = mcp_tool_description(m);
	char tdesc[160];
	json_t *t;

	if (!desc)
		return NULL;
	snprintf(tdesc, sizeof(tdesc), "Seconds the command may run: 1 to %" PRIu32 " (default %" PRIu32 ").",
		 m->limits.timeout_s, m->limits.timeout_s);
	t = json_pack("{s:s, s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:i, s:i, s:s}}, s:[s], s:b}, "
		      "s:{s:b, s:b, s:b, s:b}}",
		      "name", MCP_TOOL, "title", "Sandboxed bash", "description", desc, "inputSchema", "type",
		      "object", "properties", "command", "type", "string", "description",
		      "The command, run as bash -c COMMAND in a fresh shell.", "timeout", "type", "integer",
		      "minimum", 1, "maximum", (json_int_t)m->limits.timeout_s, "description", tdesc,
		      "required", "command", "additionalProperties", 0, "annotations", "readOnlyHint", 0,
		      "destructiveHint", 1, "idempotentHint", 0, "openWorldHint", 0);
	free(desc);
	return t;
}

/* {"content":[{"type":"text","text":TEXT}],"isError":B}; text is valid UTF-8. */
static json_t *tool_result(const char *text, size_t len, bool is_error)
{
	return json_pack("{s:[{s:s, s:s%}], s:b}", "content", "type", "text", "text", text, len, "isError",
			 is_error);
}

/* The audit log's head after the command's exit line, in the result's _meta
 * (docs/audit.md, "Anchors"); head NULL: no log, r as it is. */
static json_t *tool_result_meta(json_t *r, const char *head)
{
	if (r && head &&
	    json_object_set_new(r, "_meta", json_pack("{s:s}", "turninit/audit_head", head)) != 0) {
		json_decref(r);
		return NULL;
	}
	return r;
}

/* A tool result that says why the call did not run. */
static char *tool_refusal(json_t *id, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *tool_refusal(json_t *id, const char *fmt, ...)
{
	char msg[TN_ERROR_MSG_MAX];
	struct buf b = { 0 };
	va_list ap;
	char *line;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (buf_add_text(&b, (const uint8_t *)msg, strlen(msg)) < 0)
		return NULL;
	line = rpc_result(id, tool_result(b.p, b.len, true));
	free(b.p);
	return line;
}

/* --- requests --------------------------------------------------------------------- */

/*
 * The arguments that MCP clients add to every tool's input on their own, for
 * their own bookkeeping, and that a call may carry beside "command" and
 * "timeout": ignored, whatever their value; nothing of them reaches the
 * command. Any other name is refused (docs/mcp.md, "Arguments clients add"):
 * an argument the model meant (a "cwd") silently dropped would run the command
 * somewhere it did not mean.
 *   wait_for_previous  Gemini CLI (0.61): added to every schema, set by the
 *                      model to order its calls, forwarded to the server
 */
static const char *const client_arguments[] = { "wait_for_previous", NULL };

static bool client_argument(const char *name)
{
	for (size_t i = 0; client_arguments[i]; i++)
		if (strcmp(name, client_arguments[i]) == 0)
			return true;
	return false;
}

static json_t *initialize_result(const struct mcp_session *s, const json_t *params)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	const char *v = mcp_versions[0];

	for (size_t i = 0; want && mcp_versions[i]; i++)
		if (strcmp(want, mcp_versions[i]) == 0)
			v = mcp_versions[i];
	return json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", v, "capabilities",
			 "tools", "listChanged", 0, "serverInfo", "name", "turninit", "title",
			 "turninit sandboxed shell", "version", s->version, "instructions",
			 "Run shell commands with the " MCP_TOOL " tool: each call is a "
			 "fresh bash in a sandboxed container, under a signed policy; files persist "
			 "between calls, nothing else does.");
}

/*
 * The arguments of a call of bash, checked: *ret_cmd (a string of 1 to
 * MCP_COMMAND_MAX bytes) and *ret_timeout_s (0: none given; else 1 ..
 * UINT32_MAX, capped later at limits.timeout_s by rq_command_of, as an exec's
 * timeout_s is) on success, 0. 1 when they are refused: *ret_reply is the tool
 * result that says why (NULL when out of memory). The arguments clients add of
 * their own are ignored (client_arguments); any other name is refused.
 */
static int bash_arguments(const struct mcp_session *s, json_t *id, json_t *args, json_t **ret_cmd,
			  uint32_t *ret_timeout_s, char **ret_reply)
{
	json_t *cmd, *timeout, *v;
	const char *unknown = NULL, *k;
	json_int_t t = 0;

	if (args && !json_is_object(args)) {
		*ret_reply = tool_refusal(id, "arguments must be an object with a string \"command\"");
		return 1;
	}
	json_object_foreach(args, k, v)
		if (strcmp(k, "command") != 0 && strcmp(k, "timeout") != 0 && !client_argument(k))
			unknown = k;
	cmd = json_object_get(args, "command");
	timeout = json_object_get(args, "timeout");
	if (!json_is_string(cmd) || json_string_length(cmd) == 0) {
		*ret_reply = tool_refusal(id, "the argument \"command\" is required: a non-empty string");
		return 1;
	}
	/* no NUL in it: sj_load refuses "\u0000" (an error of mcp_parse) */
	if (json_string_length(cmd) > MCP_COMMAND_MAX) {
		*ret_reply = tool_refusal(id,
					  "the argument \"command\" is %zu bytes, more than the %d "
					  "one argument of execve(2) may hold: write a long script to a file "
					  "in smaller calls and run that",
					  json_string_length(cmd), MCP_COMMAND_MAX);
		return 1;
	}
	/* capped at limits.timeout_s (rq_command_of), as an exec's timeout_s is;
	 * 5.0 is an integer to JSON Schema */
	if (timeout && json_is_real(timeout) && json_real_value(timeout) >= 4294967295.0)
		t = UINT32_MAX; /* capped below in any case */
	else if (timeout && json_is_real(timeout) && json_real_value(timeout) >= 1 &&
		 json_real_value(timeout) == (double)(uint32_t)json_real_value(timeout))
		t = (json_int_t)json_real_value(timeout);
	else if (timeout && json_is_integer(timeout))
		t = json_integer_value(timeout);
	else if (timeout)
		t = 0;
	if (timeout && t < 1) {
		*ret_reply = tool_refusal(id,
					  "the argument \"timeout\" must be an integer of at least 1 "
					  "(seconds; at most %" PRIu32 " are used)",
					  s->m->limits.timeout_s);
		return 1;
	}
	if (unknown) {
		char shown[ERR_SHOWN_MAX];

		*ret_reply = tool_refusal(id,
					  "unknown argument \"%s\": the tool takes \"command\" and "
					  "\"timeout\"",
					  err_shown(unknown, strlen(unknown), shown));
		return 1;
	}
	*ret_cmd = cmd;
	*ret_timeout_s = !timeout ? 0 : t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
	return 0;
}

/* The exec request of a call whose arguments are checked: the command as its
 * one word, the session's environment. NULL when out of memory. */
static struct rq_request *exec_request(const struct mcp_session *s, const char *key, json_t *cmd,
				       uint32_t timeout_s)
{
	size_t n = json_string_length(cmd);
	struct rq_request *rq = calloc(1, sizeof(*rq));

	if (!rq || !(rq->words = malloc(2 * sizeof(char *) + n + 1))) {
		free(rq);
		return NULL;
	}
	rq->op = RQ_EXEC;
	snprintf(rq->id, sizeof(rq->id), "%s", key);
	rq->words[0] = (char *)(rq->words + 2);
	memcpy(rq->words[0], json_string_value(cmd), n + 1);
	rq->words[1] = NULL;
	rq->n_words = 1;
	rq->timeout_s = timeout_s;
	if (s->env && !(rq->env = calloc(s->n_env + 1, sizeof(*rq->env)))) {
		rq_free(rq);
		return NULL;
	}
	for (size_t i = 0; i < s->n_env; i++)
		if (!(rq->env[i] = strdup(s->env[i]))) {
			rq_free(rq);
			return NULL;
		}
	return rq;
}

/* A tools/call: a request, or the line that answers it. */
static int tools_call(struct mcp_session *s, json_t *id, const char *key, json_t *params,
		      struct rq_request **ret, char **ret_reply)
{
	json_t *cmd = NULL, *v;
	const char *name;
	uint32_t timeout_s = 0;
	struct rq_request *rq;
	struct mcp_call *c;

	name = json_string_value(json_object_get(params, "name"));
	if (!json_is_object(params) || !name) {
		*ret_reply = rpc_error(id, RPC_PARAMS,
				       "Invalid params: tools/call: params.name must be a string");
		return 0;
	}
	if (strcmp(name, MCP_TOOL) != 0) {
		char shown[ERR_SHOWN_MAX];

		*ret_reply = rpc_error(id, RPC_PARAMS,
				       "Unknown tool: %s (this server has one tool, " MCP_TOOL ")",
				       err_shown(name, strlen(name), shown));
		return 0;
	}
	if (call_find(s, key)) {
		char *shown = mcp_dump(json_incref(id));

		*ret_reply = rpc_error(id, RPC_INVALID,
				       "Invalid Request: id %s is in use by a call not "
				       "yet answered (a cancelled one may still be ending)",
				       shown ? shown : "?");
		free(shown);
		return 0;
	}
	if (s->n_calls >= MCP_CALLS_MAX) {
		*ret_reply = tool_refusal(id,
					  "turninit: %d calls are running or waiting, the most it "
					  "takes: try again when one has returned",
					  MCP_CALLS_MAX);
		return 0;
	}
	if (bash_arguments(s, id, json_object_get(params, "arguments"), &cmd, &timeout_s, ret_reply))
		return 0;
	rq = exec_request(s, key, cmd, timeout_s);
	c = calloc(1, sizeof(*c));
	if (!rq || !c) {
		rq_free(rq);
		free(c);
		return -ENOMEM;
	}
	snprintf(c->key, sizeof(c->key), "%s", key);
	c->id = json_incref(id);
	v = json_object_get(json_object_get(params, "_meta"), "progressToken");
	if (json_is_string(v) || json_is_integer(v))
		c->token = json_incref(v);
	c->timeout_s = rq_command_of(s->m, rq).timeout_s;
	c->out.head_max = s->m->limits.result_bytes / 2;
	c->out.tail_max = s->m->limits.result_bytes - c->out.head_max;
	c->next = s->calls;
	s->calls = c;
	s->n_calls++;
	*ret = rq;
	return 0;
}

/* A notification: a cancel, or nothing to do. */
static int notification(struct mcp_session *s, const char *method, json_t *params, struct rq_request **ret)
{
	char key[RQ_ID_MAX + 1];
	struct mcp_call **c;
	struct rq_request *rq;

	if (strcmp(method, "notifications/cancelled") != 0)
		return 0; /* initialized, roots/list_changed, ...: nothing to do */
	if (id_key(json_object_get(params, "requestId"), key) < 0 || !(c = call_find(s, key)) ||
	    (*c)->cancelled)
		return 0; /* a cancel of what is answered already, or unknown: ignored */
	if (!(rq = calloc(1, sizeof(*rq))))
		return -ENOMEM;
	(*c)->cancelled = true;
	rq->op = RQ_CANCEL;
	rq->quiet = true;
	snprintf(rq->id, sizeof(rq->id), "%s", key);
	*ret = rq;
	return 0;
}

/* A whole-number real id (5.0) of at most 53 bits becomes that integer, as
 * on the path of a message only the lax parser took (mcp_parse): JSON knows
 * one number type, so a client that sent 5.0 matches an answer with 5.
 * Returns msg's id afterwards (NULL: none). */
static json_t *id_whole(json_t *msg)
{
	json_t *id = json_is_object(msg) ? json_object_get(msg, "id") : NULL;
	double v = json_real_value(id);

	if (json_is_real(id) && v == (double)(int64_t)v && v <= 9007199254740992.0 &&
	    v >= -9007199254740992.0 && json_object_set_new(msg, "id", json_integer((json_int_t)v)) == 0)
		id = json_object_get(msg, "id");
	return id;
}

static int dispatch(struct mcp_session *s, json_t *msg, struct rq_request **ret, char **ret_reply)
{
	json_t *id = id_whole(msg), *params = json_object_get(msg, "params");
	json_t *method_v = json_object_get(msg, "method");
	const char *method = json_string_value(method_v);
	char key[RQ_ID_MAX + 1] = "";

	if (!json_is_array(msg) && !json_is_object(msg)) {
		*ret_reply = rpc_error(NULL, RPC_INVALID, "Invalid Request: not a JSON-RPC message");
		return 0;
	}
	if (json_is_array(msg)) {
		*ret_reply = rpc_error(NULL, RPC_INVALID,
				       "Invalid Request: batches are not supported "
				       "(MCP 2025-06-18 and later)");
		return 0;
	}
	if (!json_is_string(json_object_get(msg, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") != 0) {
		*ret_reply = rpc_error(id && id_key(id, key) == 0 ? id : NULL, RPC_INVALID,
				       "Invalid Request: \"jsonrpc\" must be \"2.0\"");
		return 0;
	}
	if (!method_v && (json_object_get(msg, "result") || json_object_get(msg, "error"))) {
		*ret_reply = mcp_nothing(); /* a response: turninit sends no request */
		return 0;
	}
	if (!method_v) {
		*ret_reply = rpc_error(id && id_key(id, key) == 0 ? id : NULL, RPC_INVALID,
				       "Invalid Request: no method (and no result or error)");
		return 0;
	}
	if (id && id_key(id, key) < 0) {
		*ret_reply = rpc_error(NULL, RPC_INVALID,
				       "Invalid Request: id must be an integer or a "
				       "string of at most %d bytes of [A-Za-z0-9._:-] or %d of others",
				       RQ_ID_MAX - 2, (RQ_ID_MAX - 2) / 2);
		return 0;
	}
	if (!method) {
		*ret_reply = id ? rpc_error(id, RPC_INVALID, "Invalid Request: method must be a string") :
				  mcp_nothing();
		return 0;
	}
	if (params && !json_is_object(params) && !json_is_array(params)) {
		*ret_reply = id ? rpc_error(id, RPC_INVALID, "Invalid Request: params must be an object") :
				  mcp_nothing();
		return 0;
	}
	if (!id) {
		*ret_reply = NULL;
		if (notification(s, method, params, ret) < 0)
			return -ENOMEM;
		if (!*ret && !(*ret_reply = mcp_nothing()))
			return -ENOMEM;
		return 0;
	}
	if (strcmp(method, "initialize") == 0)
		*ret_reply = rpc_result(id, initialize_result(s, params));
	else if (strcmp(method, "ping") == 0)
		*ret_reply = rpc_result(id, json_object());
	else if (strcmp(method, "tools/list") == 0) {
		json_t *t = tool_json(s->m);

		*ret_reply = t ? rpc_result(id, json_pack("{s:[o]}", "tools", t)) : NULL;
	} else if (strcmp(method, "tools/call") == 0)
		return tools_call(s, id, key, params, ret, ret_reply);
	else {
		char shown[ERR_SHOWN_MAX];

		*ret_reply = rpc_error(id, RPC_METHOD, "Method not found: %s",
				       err_shown(method, strlen(method), shown));
	}
	return 0;
}

int mcp_parse(void *st, const char *line, size_t len, struct rq_request **ret, char ret_id[RQ_ID_MAX + 1],
	      char **ret_reply, struct tn_error *err)
{
	struct mcp_session *s = st;
	struct tn_error perr = { 0 };
	struct rq_request *rq = NULL;
	char *reply = NULL;
	json_error_t je;
	json_t *msg;
	bool failed;
	int r = 0;

	*ret = NULL;
	ret_id[0] = '\0';
	sj_guard_begin();
	msg = sj_load(line, len, true, &je);
	failed = sj_guard_end();
	if (failed) {
		json_decref(msg);
		return err_set(err, ENOMEM, "mcp: out of memory");
	}
	if (!msg) {
		json_t *id = NULL;

		sj_error(&je, &perr);
		/* Valid JSON that the strict parser refuses ("\u0000", a number past
		 * 64 bits) still has an id to answer, or its caller waits forever. */
		sj_guard_begin();
		msg = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
		if (msg) {
			err_set(&perr, EINVAL, "a string holds \\u0000 (NUL), which turninit refuses");
		} else if ((msg = json_loadb(line, len,
					     JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL |
						     JSON_DECODE_INT_AS_REAL,
					     &je))) {
			/* every integer became a real: an id of 53 bits or less is exact */
			double v = json_real_value(json_object_get(msg, "id"));

			if (json_is_real(json_object_get(msg, "id")) && v == (double)(int64_t)v &&
			    v <= 9007199254740992.0 && v >= -9007199254740992.0)
				json_object_set_new(msg, "id", json_integer((json_int_t)v));
		}
		id = json_object_get(msg, "id");
		if (sj_guard_end() || !(json_is_integer(id) || json_is_string(id)) ||
		    id_key(id, (char[RQ_ID_MAX + 1]){ 0 }) < 0)
			id = NULL;
		if (!json_object_get(msg, "method") &&
		    (json_object_get(msg, "result") || json_object_get(msg, "error")))
			reply = mcp_nothing(); /* a response: never answered */
		else if (id && json_is_string(json_object_get(msg, "method")))
			reply = rpc_error(id, RPC_PARAMS, "Invalid params: %s", perr.msg);
		else if (id)
			reply = rpc_error(id, RPC_INVALID, "Invalid Request: %s", perr.msg);
		else
			reply = rpc_error(NULL, RPC_PARSE, "Parse error: %s", perr.msg);
	} else {
		r = dispatch(s, msg, &rq, &reply);
	}
	json_decref(msg);
	if (r < 0 || (!rq && !reply)) {
		rq_free(rq);
		free(reply);
		return err_set(err, ENOMEM, "mcp: out of memory");
	}
	*ret = rq;
	*ret_reply = reply;
	return 0;
}

/* --- events ----------------------------------------------------------------------- */

char *mcp_started(void *st, const char *id, int pid)
{
	(void)st, (void)id, (void)pid;
	return mcp_nothing();
}

char *mcp_output(void *st, const char *id, bool err_stream, const uint8_t *data, size_t len)
{
	struct mcp_session *s = st;
	struct mcp_call **c = call_find(s, id);

	(void)err_stream; /* interleaved as read: the order a terminal would show */
	if (c && out_add(&(*c)->out, data, len) < 0)
		return NULL;
	return mcp_nothing();
}

/* The line that says how a call ended, when not with exit 0 (else ""). */
static int end_line(const struct mcp_call *c, const struct ev_end *e, const struct mf_manifest *m,
		    struct buf *b)
{
	int st = e->wait_status, r = 0;

	if (e->truncated)
		r = buf_addf(b, "[output past %" PRIu64 " bytes was not kept (limits.output_bytes)]\n",
			     m->limits.output_bytes);
	if (r < 0)
		return r;
	if (e->timed_out)
		return buf_addf(b,
				"[timed out after %" PRIu32 " s: the command was stopped (SIGTERM, "
				"then SIGKILL)]\n",
				c->timeout_s);
	if (e->lost)
		return buf_addf(b, "[killed (SIGKILL): turninit lost track of the command's processes "
				   "and ended them]\n");
	if (e->oom_killed)
		return buf_addf(b, "[killed by the out-of-memory killer (signal 9, SIGKILL): the "
				   "container's memory limit was reached]\n");
	if (e->ended)
		return buf_addf(b, "[stopped: the session ended while it ran (SIGTERM, then SIGKILL)]\n");
	if (WIFSIGNALED(st) && sig_name(WTERMSIG(st)))
		return buf_addf(b, "[killed by signal %d (%s)]\n", WTERMSIG(st), sig_name(WTERMSIG(st)));
	if (WIFSIGNALED(st))
		return buf_addf(b, "[killed by signal %d]\n", WTERMSIG(st));
	if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
		return buf_addf(b, "[exit code %d]\n", WEXITSTATUS(st));
	return 0;
}

/* The result of the call of key id, which ends it: its output, then the line
 * of e (or "[why]" when why is not NULL: an end turninit does not know). */
static char *call_result(struct mcp_session *s, const char *id, const struct ev_end *e, const char *why)
{
	struct mcp_call *c = call_take(s, id);
	struct buf b = { 0 };
	bool ok = WIFEXITED(e->wait_status) && WEXITSTATUS(e->wait_status) == 0 && !e->timed_out &&
		  !e->ended && !e->lost && !why;
	char *line = NULL;
	int r;

	if (!c)
		return mcp_nothing(); /* not a call of this session: nothing to answer */
	if (c->cancelled) {
		call_free(c);
		return mcp_nothing();
	}
	r = out_text(&c->out, &b);
	if (r == 0 && b.len && b.p[b.len - 1] != '\n' && (!ok || e->truncated))
		r = buf_add(&b, "\n", 1);
	if (r == 0)
		r = why ? buf_addf(&b, "[%s]\n", why) : end_line(c, e, s->m, &b);
	if (r == 0 && c->net_notes)
		r = buf_addf(&b, "%s%s", b.len ? "" : "(no output)\n", c->net_notes);
	if (r == 0 && b.len == 0)
		r = buf_addf(&b, "(no output)");
	if (r == 0)
		line = rpc_result(c->id, tool_result_meta(tool_result(b.p, b.len, !ok), e->audit_head));
	free(b.p);
	call_free(c);
	return line;
}

char *mcp_exit(void *st, const char *id, const struct ev_end *e)
{
	return call_result(st, id, e, NULL);
}

char *mcp_abort(struct mcp_session *s, const char *id, const char *why)
{
	return call_result(s, id, &(struct ev_end){ 0 }, why);
}

char *mcp_error(void *st, const char *id, const char *msg)
{
	struct mcp_session *s = st;
	struct mcp_call *c = call_take(s, id);
	char *line;

	if (!c)
		return rpc_error(NULL, RPC_INVALID, "Invalid Request: %s", msg);
	line = c->cancelled ? mcp_nothing() :
			      tool_refusal(c->id, "turninit did not run the command: %s", msg);
	call_free(c);
	return line;
}

char *mcp_net(void *st, const struct net_record *r)
{
	struct mcp_session *s = st;

	if (strcmp(r->verdict, "refused") != 0)
		return mcp_nothing();
	for (struct mcp_call *c = s->calls; c; c = c->next) {
		size_t old = c->net_notes ? strlen(c->net_notes) : 0;
		char line[512], *p;
		int n;

		/* a refusal that names its command goes to that call alone; one
		 * of the shared port (no id) to every call running */
		if (c->n_net_notes >= MCP_NET_NOTES || (r->id[0] && strcmp(c->key, r->id) != 0))
			continue;
		n = r->host[0] ?
			    snprintf(line, sizeof(line),
				     "[turninit: a connection to %s:%u was refused: %s]\n", r->host, r->port,
				     r->reason) :
			    snprintf(line, sizeof(line),
				     "[turninit: a connection to the proxy was refused: %s]\n", r->reason);
		if (n < 0)
			continue;
		if ((size_t)n >= sizeof(line))
			n = (int)sizeof(line) - 1;
		if (!(p = realloc(c->net_notes, old + (size_t)n + 1)))
			return NULL;
		memcpy(p + old, line, (size_t)n + 1);
		c->net_notes = p;
		c->n_net_notes++;
	}
	return mcp_nothing();
}

char *mcp_progress(void *st, const char *id, uint64_t elapsed_ms)
{
	struct mcp_session *s = st;
	struct mcp_call **p = call_find(s, id), *c = p ? *p : NULL;
	char last[200], fallback[64];
	const uint8_t *src = NULL;
	uint8_t *tail = NULL;
	size_t n = 0, start;
	struct buf b = { 0 };
	char *line;

	/* none for a call that is ending: its timeout has fired (the result
	 * follows at once), or it is cancelled */
	if (!c || !c->token || c->cancelled || elapsed_ms >= (uint64_t)c->timeout_s * 1000)
		return mcp_nothing();
	if (c->out.tail_len) {
		if (!(tail = out_tail(&c->out)))
			return NULL;
		src = tail, n = c->out.tail_len;
	} else {
		src = c->out.head, n = c->out.head_len;
	}
	while (n && (src[n - 1] == '\n' || src[n - 1] == '\r'))
		n--;
	start = n;
	while (start && src[start - 1] != '\n' && n - start < sizeof(last) - 1)
		start--;
	for (int k = 0; k < 3 && start < n && (src[start] & 0xc0) == 0x80; k++)
		start++; /* the bound or the tail's start cut a character: no U+FFFD */
	if (n > start)   /* src is NULL before any output */
		memcpy(last, src + start, n - start);
	n -= start;
	n -= utf8_partial_end((const uint8_t *)last, n);
	snprintf(fallback, sizeof(fallback), "running for %" PRIu64 " s", elapsed_ms / 1000);
	if (buf_add_text(&b, n ? (const uint8_t *)last : (const uint8_t *)fallback,
			 n ? n : strlen(fallback)) < 0) {
		free(tail);
		return NULL;
	}
	c->progress++;
	line = mcp_dump(json_pack("{s:s, s:s, s:{s:O, s:I, s:s%}}", "jsonrpc", "2.0", "method",
				  "notifications/progress", "params", "progressToken", c->token, "progress",
				  (json_int_t)c->progress, "message", b.p, b.len));
	free(b.p);
	free(tail);
	return line;
}

const struct codec codec_mcp = {
	.name = "mcp",
	.open = mcp_session_new,
	.close = mcp_session_free,
	.parse = mcp_parse,
	.started = mcp_started,
	.output = mcp_output,
	.exit = mcp_exit,
	.error = mcp_error,
	.net = mcp_net,
	.progress = mcp_progress,
	.progress_ms = MCP_PROGRESS_MS,
};
