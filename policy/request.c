/* request.c - see request.h. */
#define _GNU_SOURCE
#include "policy/request.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/cleanup.h"
#include "policy/signals.h"
#include "policy/sjson.h"

/* jansson's message quotes keys and input as they are: make it one line. */
static const char *rq_shown(const json_error_t *je, char buf[ERR_SHOWN_MAX])
{
	return err_shown(je->text, strlen(je->text), buf);
}

/* A failed json_unpack_ex: out of memory is -ENOMEM, anything else a request
 * that does not have the op's shape (-EINVAL). */
static int rq_unpack_error(const json_error_t *je, const char *op, struct tn_error *err)
{
	char shown[ERR_SHOWN_MAX];

	const char *left;

	if (json_error_code(je) == json_error_out_of_memory)
		return err_set(err, ENOMEM, "%s: out of memory", op);
	/* jansson's "N object item(s) left unpacked: a, b": a field the request
	 * does not take, said as such */
	if (json_error_code(je) == json_error_end_of_input_expected &&
	    (left = strstr(rq_shown(je, shown), "left unpacked: ")))
		return err_set(err, EINVAL,
			       "%s: unknown field %s (docs/protocol.md lists the fields of each op)", op,
			       left + strlen("left unpacked: "));
	return err_set(err, EINVAL, "%s: %s", op, rq_shown(je, shown));
}

static bool rq_valid_id(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > RQ_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') ||
		      (id[i] >= '0' && id[i] <= '9') || strchr("._:-", id[i])))
			return false;
	return true;
}

void rq_wipe_value(struct rq_request *r)
{
	if (!r || !r->cred_value)
		return;
	sodium_memzero(r->cred_value, r->cred_len);
	free(r->cred_value);
	r->cred_value = NULL;
	r->cred_len = 0;
}

void rq_free(struct rq_request *r)
{
	if (!r)
		return;
	rq_wipe_value(r);
	free(r->words); /* the strings are in the same block */
	for (char **e = r->env; e && *e; e++)
		free(*e);
	free(r->env);
	free(r->cwd);
	free(r->stdin_data);
	free(r);
}

/* Copy the words: the array and the strings in one block. */
static int rq_words(struct rq_request *r, json_t *command, json_t *argv, struct tn_error *err)
{
	size_t n = command ? 1 : json_array_size(argv), bytes = (n + 1) * sizeof(char *);
	char *p;

	if (argv && (!json_is_array(argv) || n == 0))
		return err_set(err, EINVAL, "exec: argv must be a non-empty array of strings");
	for (size_t i = 0; i < n; i++) {
		json_t *w = command ? command : json_array_get(argv, i);

		if (!json_is_string(w))
			return err_set(err, EINVAL, "exec: argv[%zu] is not a string", i);
		bytes += json_string_length(w) + 1;
	}
	r->words = malloc(bytes);
	if (!r->words)
		return err_set(err, ENOMEM, "exec: out of memory");
	p = (char *)(r->words + n + 1);
	for (size_t i = 0; i < n; i++) {
		json_t *w = command ? command : json_array_get(argv, i);

		memcpy(p, json_string_value(w), json_string_length(w) + 1);
		r->words[i] = p;
		p += json_string_length(w) + 1;
	}
	r->words[n] = NULL;
	r->n_words = (int)n;
	r->argv_form = argv != NULL;
	return 0;
}

static int rq_env(struct rq_request *r, json_t *env, struct tn_error *err)
{
	size_t k = 0;
	const char *name;
	json_t *val;

	if (!json_is_object(env))
		return err_set(err, EINVAL, "exec: env must be an object of strings");
	r->env = calloc(json_object_size(env) + 1, sizeof(*r->env));
	if (!r->env)
		return err_set(err, ENOMEM, "exec: out of memory");
	json_object_foreach(env, name, val) {
		/* "TZ=x":"y" would reach the filter as TZ with the value "x=y": a name
		 * holding '=' is not a name, and is skipped like every invalid one. */
		if (strchr(name, '='))
			continue;
		if (!json_is_string(val)) {
			char shown[ERR_SHOWN_MAX];

			return err_set(err, EINVAL, "exec: env.%s is not a string",
				       err_shown(name, strlen(name), shown));
		}
		if (asprintf(&r->env[k], "%s=%s", name, json_string_value(val)) < 0) {
			r->env[k] = NULL;
			return err_set(err, ENOMEM, "exec: out of memory");
		}
		k++;
	}
	return 0;
}

static int rq_stdin(struct rq_request *r, const char *b64, struct tn_error *err)
{
	size_t n = strlen(b64), len = 0;

	r->stdin_data = malloc(n / 4 * 3 + 3);
	if (!r->stdin_data)
		return err_set(err, ENOMEM, "exec: out of memory");
	/* No sodium_init(): the codec needs none (policy/signature.c says why
	 * turninit never calls it). */
	if (sodium_base642bin(r->stdin_data, n / 4 * 3 + 3, b64, n, NULL, &len, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0)
		return err_set(err, EINVAL, "exec: stdin is not valid base64");
	r->stdin_len = len;
	r->has_stdin = true;
	return 0;
}

static int rq_exec(struct rq_request *r, json_t *req, struct tn_error *err)
{
	json_t *command = NULL, *argv = NULL, *env = NULL, *timeout = NULL;
	const char *cwd = NULL, *stdin_b64 = NULL;
	json_error_t je;
	int rc;

	if (json_unpack_ex(req, &je, JSON_STRICT, "{s:s, s:s, s?o, s?o, s?s, s?o, s?o, s?s}", "op",
			   &(const char *){ NULL }, "id", &(const char *){ NULL }, "command", &command,
			   "argv", &argv, "cwd", &cwd, "env", &env, "timeout_s", &timeout, "stdin",
			   &stdin_b64) != 0)
		return rq_unpack_error(&je, "exec", err);
	if (!command == !argv)
		return err_set(err, EINVAL, "exec: give exactly one of command and argv");
	if (command && !json_is_string(command))
		return err_set(err, EINVAL, "exec: command must be a string");
	if ((rc = rq_words(r, command, argv, err)) < 0)
		return rc;
	if (cwd) {
		if (cwd[0] != '/')
			return err_set(err, EINVAL, "exec: cwd must be an absolute path");
		if (!(r->cwd = strdup(cwd)))
			return err_set(err, ENOMEM, "exec: out of memory");
	}
	if (env && (rc = rq_env(r, env, err)) < 0)
		return rc;
	if (!env && !(r->env = calloc(1, sizeof(*r->env))))
		return err_set(err, ENOMEM, "exec: out of memory");
	if (timeout) {
		if (!json_is_integer(timeout) || json_integer_value(timeout) < 1)
			return err_set(err, EINVAL, "exec: timeout_s must be an integer of at least 1");
		r->timeout_s = json_integer_value(timeout) > UINT32_MAX ?
				       UINT32_MAX :
				       (uint32_t)json_integer_value(timeout);
	}
	if (stdin_b64 && (rc = rq_stdin(r, stdin_b64, err)) < 0)
		return rc;
	return 0;
}

/* cancel and info: nothing but op and id. */
static int rq_bare(struct rq_request *r, json_t *req, struct tn_error *err)
{
	const char *op, *id;
	json_error_t je;

	if (json_unpack_ex(req, &je, JSON_STRICT, "{s:s, s:s}", "op", &op, "id", &id) != 0)
		return rq_unpack_error(&je, r->op == RQ_CANCEL ? "cancel" : "info", err);
	return 0;
}

/* signal: op, id and a signal a request may name (signals.h). */
static int rq_signal(struct rq_request *r, json_t *req, struct tn_error *err)
{
	const char *op, *id, *sig = NULL;
	json_error_t je;

	if (json_unpack_ex(req, &je, JSON_STRICT, "{s:s, s:s, s:s}", "op", &op, "id", &id, "signal", &sig) !=
	    0)
		return rq_unpack_error(&je, "signal", err);
	if (!(r->signo = sig_of_request(sig)))
		return err_set(err, EINVAL, "signal: unknown signal (" SIG_REQUEST_NAMES ")");
	return 0;
}

/* credential: op, id, the name and the value (docs/protocol.md); the
 * value checked as a file's is (na_cred_value_check) and copied (jansson's
 * copies are wiped as they are freed: rq_parse). Whether the manifest names
 * it, and when it may come, is serve's. */
static int rq_credential(struct rq_request *r, json_t *req, struct tn_error *err)
{
	const char *op, *id, *name = NULL;
	json_t *value = NULL;
	json_error_t je;
	size_t len;
	int rc;

	if (json_unpack_ex(req, &je, JSON_STRICT, "{s:s, s:s, s:s, s:o}", "op", &op, "id", &id, "name", &name,
			   "value", &value) != 0)
		return rq_unpack_error(&je, "credential", err);
	if (!json_is_string(value))
		return err_set(err, EINVAL, "credential: value must be a string");
	if (strlen(name) == 0 || strlen(name) > NA_CRED_NAME_MAX)
		return err_set(err, EINVAL, "credential: name must be 1 to %d bytes", NA_CRED_NAME_MAX);
	strcpy(r->cred_name, name);
	len = json_string_length(value);
	rc = na_cred_value_check(json_string_value(value), len);
	if (rc == -ENODATA)
		return err_set(err, EINVAL, "credential: value is empty");
	if (rc == -E2BIG)
		return err_set(err, EINVAL, "credential: value is longer than %d bytes", NA_CRED_VALUE_MAX);
	if (rc < 0)
		return err_set(err, EINVAL,
			       "credential: value holds a byte that is not printable ASCII (0x20..0x7e)");
	if (!(r->cred_value = malloc(len + 1)))
		return err_set(err, ENOMEM, "credential: out of memory");
	memcpy(r->cred_value, json_string_value(value), len + 1);
	r->cred_len = len;
	return 0;
}

/* A line that is not JSON: jansson's message, whose excerpt ("near '...'")
 * quotes the line; left out when the line names a credential or a value,
 * which the excerpt could hold. */
static int rq_not_json(const char *line, size_t len, const json_error_t *je, struct tn_error *err)
{
	char shown[ERR_SHOWN_MAX];
	const char *near;

	if (!memmem(line, len, "credential", 10) && !memmem(line, len, "value", 5))
		return err_set(err, EBADMSG, "request: not a JSON object: %s", rq_shown(je, shown));
	near = strstr(je->text, " near '");
	return err_set(err, EBADMSG,
		       "request: not a JSON object: %.*s (the text near it is not shown: the line may hold a credential's value)",
		       (int)(near ? (size_t)(near - je->text) : strlen(je->text)), je->text);
}

/* The operations of a request line (docs/protocol.md), each with its parser:
 * 0, or -errno with err set. */
static const struct {
	const char *name;
	enum rq_op op;
	int (*parse)(struct rq_request *r, json_t *req, struct tn_error *err);
} rq_ops[] = {
	{ "exec", RQ_EXEC, rq_exec },
	{ "cancel", RQ_CANCEL, rq_bare },
	{ "signal", RQ_SIGNAL, rq_signal },
	{ "info", RQ_INFO, rq_bare },
	{ "credential", RQ_CREDENTIAL, rq_credential },
};

/* The parsed request req into *r (allocated here, the caller's to free also
 * when this fails) and its id into ret_id: 0, or -errno with err filled. */
static int rq_parse_object(json_t *req, struct rq_request **r, char ret_id[RQ_ID_MAX + 1],
			   struct tn_error *err)
{
	char shown[ERR_SHOWN_MAX];
	const char *op, *id;
	size_t i;

	if (!json_is_object(req))
		return err_set(err, EINVAL, "request: not a JSON object");
	id = json_string_value(json_object_get(req, "id"));
	if (!id || !rq_valid_id(id))
		return err_set(err, EINVAL,
			       "request: id must be a string of 1 to %d characters from [A-Za-z0-9._:-]",
			       RQ_ID_MAX);
	strcpy(ret_id, id);
	op = json_string_value(json_object_get(req, "op"));
	if (!op)
		return err_set(err, EINVAL, "request: op must be a string");
	*r = calloc(1, sizeof(**r));
	if (!*r)
		return err_set(err, ENOMEM, "request: out of memory");
	strcpy((*r)->id, id);
	for (i = 0; i < N_ELEMENTS(rq_ops) && strcmp(op, rq_ops[i].name) != 0; i++)
		;
	if (i == N_ELEMENTS(rq_ops))
		return err_set(err, EINVAL, "request: unknown op %s (exec, cancel, signal, info, credential)",
			       err_shown(op, strlen(op), shown));
	(*r)->op = rq_ops[i].op;
	return rq_ops[i].parse(*r, req, err);
}

int rq_parse(const char *line, size_t len, struct rq_request **ret, char ret_id[RQ_ID_MAX + 1],
	     struct tn_error *err)
{
	json_error_t je;
	json_t *req;
	struct rq_request *r = NULL;
	int rc;

	ret_id[0] = '\0';
	/* A failed allocation can make jansson drop a byte of a string, which
	 * here would change a command: the whole parse runs under the guard and
	 * is refused then, like a manifest's (sjson.h). */
	sj_guard_begin();
	/* every line: a credential's is known only once parsed, and the cost
	 * (a memset of what was allocated) is the parse's own order */
	sj_guard_wipe();
	req = sj_load(line, len, false, &je);
	rc = req ? rq_parse_object(req, &r, ret_id, err) : rq_not_json(line, len, &je, err);
	json_decref(req);
	if (sj_guard_end()) {
		ret_id[0] = '\0'; /* it may not be the id that was sent either */
		rc = err_set(err, ENOMEM, "request: out of memory while parsing");
	}
	if (rc < 0) {
		rq_free(r);
		return rc;
	}
	*ret = r;
	return 0;
}

struct rq_command rq_command_of(const struct mf_manifest *m, const struct rq_request *rq)
{
	uint32_t t = rq->timeout_s, max = m->limits.timeout_s;

	return (struct rq_command){
		.cwd = rq->cwd ? rq->cwd : m->workdir,
		.timeout_s = t == 0 || t > max ? max : t,
	};
}

/* The command of a: its one word as a string, or every word as an array;
 * NULL when one is not UTF-8 (*ret_bad set) or out of memory. */
static json_t *rq_pack_words(const struct rq_exec_args *a, bool *ret_bad)
{
	json_t *words;

	if (a->n_words == 1) {
		words = json_string(a->words[0]);
		*ret_bad = !words;
		return words;
	}
	if (!(words = json_array()))
		return NULL;
	for (int i = 0; i < a->n_words; i++) {
		json_t *w = json_string(a->words[i]);

		if (!w)
			*ret_bad = true;
		if (!w || json_array_append_new(words, w) != 0) {
			json_decref(words);
			return NULL;
		}
	}
	return words;
}

int rq_pack_exec(const char *id, const struct rq_exec_args *a, json_t **ret_req)
{
	json_t *req = json_pack("{s:s, s:s}", "op", "exec", "id", id);
	bool bad = false;
	json_t *words = req ? rq_pack_words(a, &bad) : NULL;

	if (!words)
		goto fail;
	if (json_object_set_new(req, a->n_words == 1 ? "command" : "argv", words) != 0 ||
	    (a->env && json_object_size(a->env) && json_object_set(req, "env", a->env) != 0) ||
	    (a->timeout_s && json_object_set_new(req, "timeout_s", json_integer(a->timeout_s)) != 0) ||
	    (a->stdin_b64 && json_object_set_new(req, "stdin", json_string(a->stdin_b64)) != 0))
		goto fail;
	*ret_req = req;
	return 0;
fail:
	json_decref(req);
	return bad ? -EILSEQ : -ENOMEM;
}

json_t *rq_pack_op(enum rq_op op, const char *id, const char *sig)
{
	switch (op) {
	case RQ_INFO: return json_pack("{s:s, s:s}", "op", "info", "id", id);
	case RQ_CANCEL: return json_pack("{s:s, s:s}", "op", "cancel", "id", id);
	case RQ_SIGNAL: return json_pack("{s:s, s:s, s:s}", "op", "signal", "id", id, "signal", sig);
	default: return NULL;
	}
}
