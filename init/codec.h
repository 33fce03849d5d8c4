/* codec.h - the wire format of a serve or listen connection. The loop
 * (init/serve*.c) deals in requests (policy/request.h) and in what happened to
 * a command; a codec turns request lines into requests and events into lines.
 * codec_jsonl.c is the JSON Lines protocol of docs/protocol.md; a second wire
 * format (JSON-RPC for MCP) is a new codec_*.c beside it.
 *
 * Every encoder returns one line, malloc'd, without its newline, or NULL when
 * out of memory; id NULL is an error about no request in particular. */
#ifndef TURNINIT_CODEC_H
#define TURNINIT_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "events.h"
#include "request.h"

struct codec {
	const char *name;
	/* one request line (without its newline); rq_parse's contract */
	int (*parse)(const char *line, size_t len, struct rq_request **ret,
		     char ret_id[RQ_ID_MAX + 1], struct tn_error *err);
	char *(*started)(const char *id, int pid);
	char *(*output)(const char *id, bool err_stream, const uint8_t *data, size_t len);
	char *(*exit)(const char *id, const struct ev_end *end);
	char *(*error)(const char *id, const char *msg);
};

extern const struct codec codec_jsonl;   /* docs/protocol.md */

#endif
