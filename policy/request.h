/* request.h - one request line of the serve/listen protocol (docs/protocol.md),
 * parsed and checked, and built for the clients (turninit call, the MCP
 * bridge). Pure: bytes in, a struct out (jansson, libsodium's
 * base64); whether cwd exists and what the command may do is init/'s. */
#ifndef TURNINIT_REQUEST_H
#define TURNINIT_REQUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/error.h"
#include "policy/manifest.h"
#include "policy/netallow.h"

#define RQ_ID_MAX 128 /* bytes of an id */

enum rq_op { RQ_EXEC = 1, RQ_CANCEL, RQ_SIGNAL, RQ_INFO, RQ_CREDENTIAL };

struct rq_request {
	enum rq_op op;
	char id[RQ_ID_MAX + 1];
	/* exec */
	char **words; /* the command string alone, or the argv; NULL-terminated */
	int n_words;
	bool argv_form;     /* words came as argv: never parsed again, even one */
	char *cwd;          /* an absolute path, or NULL: the manifest's workdir */
	char **env;         /* "NAME=value" from the env object, NULL-terminated */
	uint32_t timeout_s; /* seconds, 0: the manifest's (callers cap it) */
	bool has_stdin;
	uint8_t *stdin_data; /* decoded bytes */
	size_t stdin_len;
	/* signal */
	int signo; /* HUP INT QUIT KILL USR1 USR2 TERM WINCH */
	/* credential (serve and listen: the launcher's, before any exec) */
	char cred_name[NA_CRED_NAME_MAX + 1];
	char *cred_value; /* malloc'd, NUL-ended: na_cred_value_check's; wiped
			     by rq_free and rq_wipe_value */
	size_t cred_len;
	/* cancel */
	bool quiet; /* a cancel of nothing is not answered (an MCP
		       notification, policy/mcp.h) */
};

/* rq_parse - parse one request line (without its newline).
 * The id, when the line has a valid one, is copied to ret_id even when the
 * request is refused (the error event names it); otherwise ret_id is "".
 * Refused (-EINVAL, err says what): not a JSON object (also a duplicate key or
 * invalid UTF-8: -EBADMSG), a missing or invalid id ([A-Za-z0-9._:-], 1 to
 * RQ_ID_MAX bytes), an unknown op, a field the op does not take, a field of the
 * wrong type, both or neither of command and argv, an empty argv, a relative
 * cwd, timeout_s below 1, a non-string env value, stdin that is not base64,
 * an unknown signal name, a credential's name of 0 or more than
 * NA_CRED_NAME_MAX bytes, a value that fails na_cred_value_check. A line
 * that holds a credential's value is parsed with jansson's freed memory
 * wiped, and the message about a line that names a credential and is not
 * JSON leaves out jansson's excerpt of it: no message holds a byte of a
 * value. An env key holding '=' is skipped (it is no name;
 * the env filter skips the other invalid ones). ret is written only on
 * success; free with rq_free. */
int rq_parse(const char *line, size_t len, struct rq_request **ret, char ret_id[RQ_ID_MAX + 1],
	     struct tn_error *err);

/* rq_free - free r (NULL: nothing), its credential's value wiped first
 * (sodium_memzero). */
void rq_free(struct rq_request *r);

/* rq_wipe_value - wipe and free r's credential value now (nothing without
 * one), as soon as it has been handed on. */
void rq_wipe_value(struct rq_request *r);

/* What an exec request runs with under a manifest, decided once: its cwd (the
 * request's, or the manifest's workdir) and its timeout (the request's, capped
 * at limits.timeout_s, which is also the default). */
struct rq_command {
	const char *cwd;    /* borrowed from the request or the manifest */
	uint32_t timeout_s; /* seconds, 1..limits.timeout_s */
};

/* rq_command_of - the rq_command of exec request rq under m. Pure. */
struct rq_command rq_command_of(const struct mf_manifest *m, const struct rq_request *rq);

/* An exec request as a client sends it (docs/protocol.md, "exec"). */
struct rq_exec_args {
	char *const *words;    /* one: the command string ("command"); more: "argv" */
	int n_words;           /* >= 1 */
	json_t *env;           /* names and values, or NULL; absent when empty; not stolen */
	uint32_t timeout_s;    /* seconds, 0: absent (the manifest's) */
	const char *stdin_b64; /* stdin as base64, or NULL: absent */
};

/* rq_pack_exec - the exec request for id, the one builder of the clients'
 * exec lines: {"op":"exec", "id", "command" | "argv", "env", "timeout_s",
 * "stdin"}, in that order, each of the last three only when given.
 * *ret_req is written only on success (the caller sends and frees it).
 * Errors: -EILSEQ (a word is not UTF-8), -ENOMEM. */
int rq_pack_exec(const char *id, const struct rq_exec_args *a, json_t **ret_req);

/* rq_pack_op - the request of op for id, the one builder of the clients'
 * other lines: RQ_INFO {"op":"info", "id"}, RQ_CANCEL {"op":"cancel", "id"},
 * RQ_SIGNAL {"op":"signal", "id", "signal"} (sig: its name, "INT"; unused
 * otherwise). NULL out of memory, for an id or sig not UTF-8, or another op. */
json_t *rq_pack_op(enum rq_op op, const char *id, const char *sig);

#endif
