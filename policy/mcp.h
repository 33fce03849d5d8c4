/* mcp.h - the Model Context Protocol side of `turninit mcp` (docs/mcp.md):
 * JSON-RPC 2.0 messages, one per line (the MCP stdio transport), the
 * lifecycle, and one tool, `bash`, whose calls become exec requests
 * (policy/request.h) and whose results are made from the command's output and
 * end. Pure (jansson): a session turns a message line into a request or an
 * answer line, and events into tool results.
 * Sources: JSON-RPC 2.0; the MCP specification 2025-11-25 (basic/lifecycle,
 * basic/transports, basic/utilities/cancellation and progress, server/tools). */
#ifndef TURNINIT_MCP_H
#define TURNINIT_MCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/error.h"
#include "policy/events.h"
#include "policy/manifest.h"
#include "policy/request.h"

#define MCP_TOOL "bash"      /* the tool's name (clients show mcp__SERVER__bash) */
#define MCP_PROGRESS_MS 2000 /* milliseconds between progress notifications */
#define MCP_NET_NOTES 4      /* refused connections told in one result */
#define MCP_CALLS_MAX 2048   /* tools/call requests not yet answered */
/* clang-format 14 breaks a #define whose comment runs on over lines: kept as written */
/* clang-format off */
#define MCP_COMMAND_MAX 131071      /* bytes of a command: one execve(2) argument is at
				       most MAX_ARG_STRLEN (131072) with its NUL */
/* clang-format on */

/* The protocol versions turninit speaks, newest first; initialize answers with
 * the client's when it is one of them, else with the first. */
extern const char *const mcp_versions[];

struct mcp_session;

/* The functions below that take void *st are codec_mcp's (policy/codec.h):
 * st is a session of mcp_session_new, whose void * return is one. */

/* mcp_session_new - a session under manifest m (borrowed: it must outlive the
 * session), whose tool description and limits come from m; version is
 * turninit's, for serverInfo. env ("NAME=value", NULL-terminated, borrowed
 * too; NULL: none) is the container's own environment: each call's exec
 * request carries the entries of it that m's env filter admits
 * (envf_admits), as one-shot mode takes them, since a tools/call carries no
 * environment. NULL when out of memory. */
void *mcp_session_new(const struct mf_manifest *m, const char *version, char *const *env);

void mcp_session_free(void *st);

/* mcp_parse - one message line (without its newline). Exactly one of three:
 *  - a tools/call of the tool with valid arguments: *ret is an exec request
 *    (free with rq_free) whose id is the call's key, [A-Za-z0-9._:-]{1,128}
 *    (the JSON-RPC id 7 is "7", "abc" is "s:abc", any other string "x:HEX");
 *  - a notifications/cancelled of a call not yet answered: *ret is a cancel
 *    of its key with quiet set (a cancel of nothing is not answered);
 *  - anything else: *ret NULL and *ret_reply the line to send (malloc'd; ""
 *    for nothing: a notification, a response). Errors of JSON-RPC are
 *    answered with its codes: -32700 not JSON, -32600 not a request (an
 *    array, no "jsonrpc":"2.0", a bad id, an id in use by a call not yet
 *    answered), -32601 an unknown method, -32602 bad params or an unknown
 *    tool. Invalid arguments of the tool are a tool result with isError true
 *    (the model can correct them).
 * Returns 0, or -ENOMEM with err filled (nothing to send). ret_id is "". */
int mcp_parse(void *st, const char *line, size_t len, struct rq_request **ret, char ret_id[RQ_ID_MAX + 1],
	      char **ret_reply, struct tn_error *err);

/* mcp_output - keep len bytes of the output of the call of key id: the first
 * limits.result_bytes/2 bytes and the last of the rest, counting what falls
 * between. Returns "" (malloc'd: nothing to send), NULL when out of memory. */
char *mcp_output(void *st, const char *id, bool err_stream, const uint8_t *data, size_t len);

/* mcp_started - nothing to send ("", malloc'd). */
char *mcp_started(void *st, const char *id, int pid);

/* mcp_exit - the tools/call result of the call of key id, which ends it: its
 * output as read (stdout and stderr interleaved), the middle cut when longer
 * than limits.result_bytes with a line saying how many bytes were cut, then a
 * line for an end that is not exit 0 ("[exit code 3]", "[killed by signal 9
 * (SIGKILL)]", "[timed out after 5 s ...]", ...); isError true unless it
 * exited 0. "" for a call the client cancelled (it is not answered).
 * NULL when out of memory. */
char *mcp_exit(void *st, const char *id, const struct ev_end *e);

/* mcp_error - turninit could not run the call of key id (msg says why): a
 * tool result with isError true, which ends the call ("" when it was
 * cancelled). id NULL: a JSON-RPC error -32600 with id null. NULL when out
 * of memory. */
char *mcp_error(void *st, const char *id, const char *msg);

/* mcp_abort - the result of the call of key id, which ends it, when how its
 * command ended is not known (the sidecar's server went away): its output so
 * far, then "[why]", isError true ("" for a cancelled call). NULL when out of
 * memory. */
char *mcp_abort(struct mcp_session *s, const char *id, const char *why);

/* mcp_net - a decision of turninit's proxy: a refusal becomes a line at the
 * end of the result of the call whose command made the connection (r->id,
 * the call's key), or of every call running now when the record names no
 * command (the proxy's shared port) ("[turninit: a connection to HOST:PORT
 * was refused: REASON]", at most MCP_NET_NOTES of them a call). Returns ""
 * (malloc'd: nothing to send now), NULL when out of memory. */
char *mcp_net(void *st, const struct net_record *r);

/* mcp_progress - a notifications/progress for the call of key id when its
 * request carried a progressToken ("" otherwise): progress counts the
 * notifications sent, message is the last line of output so far (at most
 * 200 bytes) or "running for N s". NULL when out of memory. */
char *mcp_progress(void *st, const char *id, uint64_t elapsed_ms);

/* mcp_tool_description - the tool's description as tools/list gives it,
 * made from m (malloc'd; NULL when out of memory). */
char *mcp_tool_description(const struct mf_manifest *m);

#endif
