/* codec.h - the wire format of a serve or listen connection. The loop
 * (init/serve/) deals in requests (policy/request.h) and in what happened to
 * a command; a codec turns request lines into requests and events into lines.
 * codec_jsonl.c is the JSON Lines protocol of docs/protocol.md; mcp.c
 * is the Model Context Protocol of `turninit mcp` (docs/mcp.md). The codecs
 * are pure, as all of policy/: the loop owns the fds.
 *
 * st is the connection's state, made by open (NULL when open is NULL). Every
 * encoder returns one line, malloc'd, without its newline ("" for nothing to
 * send), or NULL when out of memory; id NULL is an error about no request in
 * particular. */
#ifndef TURNINIT_CODEC_H
#define TURNINIT_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/error.h"
#include "policy/events.h"
#include "policy/manifest.h"
#include "policy/request.h"

struct codec {
	const char *name;
	/* a connection's state (version: turninit's; env: serve_ctx's caller_env);
	 * NULL when out of memory */
	void *(*open)(const struct mf_manifest *m, const char *version, char *const *env);
	void (*close)(void *st);
	/* one request line (without its newline): rq_parse's contract, or 0
	 * with *ret NULL and *ret_reply a line that answers it itself */
	int (*parse)(void *st, const char *line, size_t len, struct rq_request **ret,
		     char ret_id[RQ_ID_MAX + 1], char **ret_reply, struct tn_error *err);
	char *(*started)(void *st, const char *id, int pid);
	char *(*output)(void *st, const char *id, bool err_stream, const uint8_t *data, size_t len);
	char *(*exit)(void *st, const char *id, const struct ev_end *end);
	char *(*error)(void *st, const char *id, const char *msg);
	/* a decision of turninit's proxy (policy/netrec.h), for every connection */
	char *(*net)(void *st, const struct net_record *r);
	/* the turn's end with the audit log's final head (ev_turn_end), for
	 * every connection still open; NULL: the codec says nothing */
	char *(*turn_end)(void *st, int exit_code, const char *audit_head);
	/* a running command's progress every progress_ms milliseconds; NULL: none */
	char *(*progress)(void *st, const char *id, uint64_t elapsed_ms);
	uint64_t progress_ms;
};

extern const struct codec codec_jsonl; /* docs/protocol.md */
extern const struct codec codec_mcp;   /* docs/mcp.md */

#endif
