/* events.c - see events.h. */
#include "policy/events.h"

#include <errno.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "policy/cleanup.h"
#include "policy/sjson.h"

/* Steals v. */
static char *ev_dump(json_t *v)
{
	char *s = v ? json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	json_decref(v);
	return s;
}

char *ev_started(const char *id, int pid)
{
	return ev_dump(json_pack("{s:s, s:s, s:i}", "event", "started", "id", id, "pid", pid));
}

char *ev_output(const char *id, bool err_stream, const uint8_t *data, size_t len)
{
	static char b64[sodium_base64_ENCODED_LEN(EV_CHUNK, sodium_base64_VARIANT_ORIGINAL)];

	if (len == 0 || len > EV_CHUNK)
		return NULL;
	sodium_bin2base64(b64, sizeof(b64), data, len, sodium_base64_VARIANT_ORIGINAL);
	return ev_dump(json_pack("{s:s, s:s, s:s, s:s}", "event", "output", "id", id, "stream",
				 err_stream ? "stderr" : "stdout", "data", b64));
}

char *ev_exit(const char *id, const struct ev_end *e)
{
	int st = e->wait_status;
	json_t *code = WIFEXITED(st) ? json_integer(WEXITSTATUS(st)) : json_null();
	json_t *sig = WIFSIGNALED(st) ? json_integer(WTERMSIG(st)) : json_null();
	json_t *v = json_pack("{s:s, s:s, s:o, s:o, s:b, s:b, s:I}", "event", "exit", "id", id, "code", code,
			      "signal", sig, "timed_out", e->timed_out, "truncated", e->truncated,
			      "duration_ms", (json_int_t)e->duration_ms);

	/* present only when true: the lines of every other end stay as they were */
	if (v && e->lost && json_object_set_new(v, "lost", json_true()) != 0)
		json_decref(v), v = NULL;
	if (v && e->oom_killed && json_object_set_new(v, "oom_killed", json_true()) != 0)
		json_decref(v), v = NULL;
	if (v && e->audit_head && json_object_set_new(v, "audit_head", json_string(e->audit_head)) != 0)
		json_decref(v), v = NULL;
	return ev_dump(v);
}

char *ev_error(const char *id, const char *text)
{
	char msg[TN_ERROR_MSG_MAX];
	json_t *ev = NULL;

	snprintf(msg, sizeof(msg), "%s", text);
	/* A cut at the buffer's end may fall inside a UTF-8 sequence, which
	 * json_pack refuses: drop the partial character (at most 3 bytes). */
	for (int cut = 0; cut < 4 && !ev; cut++) {
		ev = json_pack("{s:s, s:s?, s:s}", "event", "error", "id", id, "message", msg);
		if (!ev && msg[0])
			msg[strlen(msg) - 1] = '\0';
	}
	if (!ev)
		ev = json_pack("{s:s, s:s?, s:s}", "event", "error", "id", id, "message",
			       "error: the message is not valid UTF-8");
	return ev_dump(ev);
}

char *ev_credential(const char *id, const char *name)
{
	return ev_dump(json_pack("{s:s, s:s, s:s}", "event", "credential", "id", id, "name", name));
}

char *ev_info(const char *id, const char *manifest)
{
	static const char key[] = ",\"manifest\":";
	_cleanup_free_ char *head = ev_dump(json_pack("{s:s, s:s}", "event", "info", "id", id));
	size_t hl, ml;
	char *line;

	if (!head || !manifest)
		return NULL;
	/* head is {"event":"info","id":ID}: its closing brace gives way to
	 * the manifest's key and text */
	hl = strlen(head) - 1;
	ml = strlen(manifest);
	line = malloc(hl + sizeof(key) - 1 + ml + 2);
	if (!line)
		return NULL;
	memcpy(line, head, hl);
	memcpy(line + hl, key, sizeof(key) - 1);
	memcpy(line + hl + sizeof(key) - 1, manifest, ml);
	memcpy(line + hl + sizeof(key) - 1 + ml, "}", 2);
	return line;
}

void ev_clear(struct ev_event *e)
{
	free(e->data);
	free(e->manifest);
	json_decref(e->json);
	memset(e, 0, sizeof(*e));
}

static int ev_bad(struct ev_event *e, struct tn_error *err, const char *what)
{
	ev_clear(e);
	return err_set(err, EBADMSG, "event: %s", what);
}

/* The parsers of each event (docs/protocol.md): fill e from v, the object;
 * 0, or -errno with e cleared and err set. */
static int parse_started(struct ev_event *e, json_t *v, struct tn_error *err)
{
	json_t *pid = json_object_get(v, "pid");

	if (!json_is_integer(pid) || json_integer_value(pid) < 1 || json_integer_value(pid) > INT32_MAX)
		return ev_bad(e, err, "started: pid is not a pid");
	e->pid = (int)json_integer_value(pid);
	return 0;
}

static int parse_output(struct ev_event *e, json_t *v, struct tn_error *err)
{
	const char *stream = json_string_value(json_object_get(v, "stream"));
	const char *data = json_string_value(json_object_get(v, "data"));
	size_t n = data ? strlen(data) : 0;

	if (!stream || (strcmp(stream, "stdout") != 0 && strcmp(stream, "stderr") != 0))
		return ev_bad(e, err, "output: stream is not stdout or stderr");
	if (!data)
		return ev_bad(e, err, "output: no data");
	e->err_stream = stream[3] == 'e';
	if (!(e->data = malloc(n / 4 * 3 + 3))) {
		ev_clear(e);
		return err_set(err, ENOMEM, "event: out of memory");
	}
	if (sodium_base642bin(e->data, n / 4 * 3 + 3, data, n, NULL, &e->len, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0)
		return ev_bad(e, err, "output: data is not base64");
	return 0;
}

static int parse_exit(struct ev_event *e, json_t *v, struct tn_error *err)
{
	json_t *code = json_object_get(v, "code"), *sig = json_object_get(v, "signal");
	json_t *to = json_object_get(v, "timed_out"), *tr = json_object_get(v, "truncated");
	json_t *lost = json_object_get(v, "lost"), *oom = json_object_get(v, "oom_killed");

	if (!json_is_boolean(to) || !json_is_boolean(tr))
		return ev_bad(e, err, "exit: timed_out and truncated must be booleans");
	if ((lost && !json_is_boolean(lost)) || (oom && !json_is_boolean(oom)))
		return ev_bad(e, err, "exit: lost and oom_killed, when there, must be booleans");
	e->has_code = json_is_integer(code);
	e->has_signal = json_is_integer(sig);
	if (e->has_code == e->has_signal ||
	    (e->has_code && (json_integer_value(code) < 0 || json_integer_value(code) > 255)) ||
	    (e->has_signal && (json_integer_value(sig) < 1 || json_integer_value(sig) > 64)))
		return ev_bad(e, err, "exit: exactly one of code (0..255) and signal (1..64)");
	e->code = e->has_code ? (int)json_integer_value(code) : 0;
	e->signal = e->has_signal ? (int)json_integer_value(sig) : 0;
	e->timed_out = json_is_true(to);
	e->truncated = json_is_true(tr);
	e->lost = json_is_true(lost);
	e->oom_killed = json_is_true(oom);
	return 0;
}

static int parse_error(struct ev_event *e, json_t *v, struct tn_error *err)
{
	if (!(e->message = json_string_value(json_object_get(v, "message"))))
		return ev_bad(e, err, "error: no message");
	return 0;
}

static int parse_info(struct ev_event *e, json_t *v, struct tn_error *err)
{
	json_t *m = json_object_get(v, "manifest");

	if (!json_is_object(m))
		return ev_bad(e, err, "info: manifest is not an object");
	if (!(e->manifest = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER))) {
		ev_clear(e);
		return err_set(err, ENOMEM, "event: out of memory");
	}
	return 0;
}

/* s, or JSON null for "" */
static json_t *ev_str_or_null(const char *s)
{
	return s[0] ? json_string(s) : json_null();
}

json_t *ev_net_fields(json_t *obj, const struct net_record *r)
{
	json_t *f = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I}", "verdict", r->verdict,
			      "request", ev_str_or_null(r->request), "host", ev_str_or_null(r->host), "port",
			      r->port ? json_integer(r->port) : json_null(), "address",
			      ev_str_or_null(r->addr), "rule",
			      r->rule >= 0 ? json_integer(r->rule) : json_null(), "reason",
			      ev_str_or_null(r->reason), "bytes_out", (json_int_t)r->bytes_out, "bytes_in",
			      (json_int_t)r->bytes_in, "duration_ms", (json_int_t)r->duration_ms);

	/* a request of the credential gateway: what it was and what became of
	 * it, the credential by name (its value is never in a record) */
	if (f && strcmp(r->request, "GATEWAY") == 0 &&
	    json_object_update_new(f, json_pack("{s:s, s:s, s:o, s:s, s:b, s:I}", "method", r->method, "path",
						r->path, "status",
						r->status > 0 ? json_integer(r->status) : json_null(),
						"credential", r->credential, "credential_added",
						r->credential_added != 0, "redactions",
						(json_int_t)r->redactions)) != 0) {
		json_decref(f);
		f = NULL;
	}
	if (!obj || !f || json_object_update(obj, f) != 0) {
		json_decref(obj);
		obj = NULL;
	}
	json_decref(f);
	return obj;
}

char *ev_net(const struct net_record *r)
{
	return ev_dump(
		ev_net_fields(json_pack("{s:s, s:o}", "event", "net", "id", ev_str_or_null(r->id)), r));
}

static int parse_net(struct ev_event *e, json_t *v, struct tn_error *err)
{
	json_t *host = json_object_get(v, "host"), *port = json_object_get(v, "port");
	json_t *reason = json_object_get(v, "reason");

	e->verdict = json_string_value(json_object_get(v, "verdict"));
	if (!e->verdict)
		return ev_bad(e, err, "net: no verdict");
	if ((!json_is_string(host) && !json_is_null(host)) ||
	    (!json_is_string(reason) && !json_is_null(reason)) ||
	    (!json_is_integer(port) && !json_is_null(port)))
		return ev_bad(e, err, "net: host, reason and port must be there, or null");
	e->host = json_string_value(host);
	e->reason = json_string_value(reason);
	e->port = json_is_integer(port) && json_integer_value(port) > 0 && json_integer_value(port) <= 65535 ?
			  (int)json_integer_value(port) :
			  0;
	return 0;
}

char *ev_turn_end(int exit_code, const char *audit_head)
{
	return ev_dump(json_pack("{s:s, s:n, s:i, s:s}", "event", "turn_end", "id", "exit_code", exit_code,
				 "audit_head", audit_head));
}

static int parse_turn_end(struct ev_event *e, json_t *v, struct tn_error *err)
{
	const char *h = json_string_value(json_object_get(v, "audit_head"));
	json_t *code = json_object_get(v, "exit_code");

	if (!h || strlen(h) != 64 || strspn(h, "0123456789abcdef") != 64)
		return ev_bad(e, err, "turn_end: audit_head is not 64 hex digits");
	if (!json_is_integer(code) || json_integer_value(code) < 0 || json_integer_value(code) > 255)
		return ev_bad(e, err, "turn_end: exit_code is not 0..255");
	e->audit_head = h;
	e->exit_code = (int)json_integer_value(code);
	return 0;
}

static const struct {
	const char *name;
	enum ev_kind kind;
	int (*parse)(struct ev_event *e, json_t *v, struct tn_error *err);
} ev_kinds[] = {
	{ "started", EV_STARTED, parse_started },
	{ "output", EV_OUTPUT, parse_output },
	{ "exit", EV_EXIT, parse_exit },
	{ "error", EV_ERROR, parse_error },
	{ "info", EV_INFO, parse_info },
	{ "net", EV_NET, parse_net },
	{ "turn_end", EV_TURN_END, parse_turn_end },
};

int ev_parse(const char *line, size_t len, struct ev_event *ret, struct tn_error *err)
{
	struct ev_event e = { 0 };
	json_error_t je;
	json_t *v, *id;
	const char *kind;
	size_t i;
	int rc;

	sj_guard_begin();
	v = sj_load(line, len, false, &je);
	if (sj_guard_end()) {
		json_decref(v);
		return err_set(err, ENOMEM, "event: out of memory");
	}
	if (!v || !json_is_object(v)) {
		json_decref(v);
		return err_set(err, EBADMSG, "event: not a JSON object");
	}
	e.json = v;
	kind = json_string_value(json_object_get(v, "event"));
	id = json_object_get(v, "id");
	if (!kind)
		return ev_bad(&e, err, "no event name");
	if (!json_is_string(id) &&
	    !(json_is_null(id) &&
	      (strcmp(kind, "error") == 0 || strcmp(kind, "net") == 0 || strcmp(kind, "turn_end") == 0)))
		return ev_bad(&e, err, "no id");
	e.id = json_string_value(id);
	for (i = 0; i < N_ELEMENTS(ev_kinds) && strcmp(kind, ev_kinds[i].name) != 0; i++)
		;
	if (i == N_ELEMENTS(ev_kinds))
		return ev_bad(&e, err, "unknown event");
	e.kind = ev_kinds[i].kind;
	if ((rc = ev_kinds[i].parse(&e, v, err)) < 0)
		return rc;
	*ret = e;
	return 0;
}
