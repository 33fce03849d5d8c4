/* codec_mcp.c - the MCP codec of `turninit mcp` (docs/mcp.md): a session of
 * policy/mcp.c per connection; tools/call requests become execs, their
 * output is kept and their end becomes the tool result. */
#include "codec.h"

#include "mcp.h"

static void *mcp_open(const struct mf_manifest *m, char *const *env)
{
	return mcp_session_new(m, TURNINIT_VERSION, env);
}

static void mcp_close(void *st)
{
	mcp_session_free(st);
}

static int mcp_parse_line(void *st, const char *line, size_t len, struct rq_request **ret,
			  char ret_id[RQ_ID_MAX + 1], char **ret_reply, struct tn_error *err)
{
	*ret = NULL;
	return mcp_parse(st, line, len, ret, ret_id, ret_reply, err);
}

static char *mcp_started_line(void *st, const char *id, int pid)
{
	return mcp_started(st, id, pid);
}

static char *mcp_output_line(void *st, const char *id, bool err_stream, const uint8_t *data, size_t len)
{
	return mcp_output(st, id, err_stream, data, len);
}

static char *mcp_exit_line(void *st, const char *id, const struct ev_end *end)
{
	return mcp_exit(st, id, end);
}

static char *mcp_error_line(void *st, const char *id, const char *msg)
{
	return mcp_error(st, id, msg);
}

static char *mcp_progress_line(void *st, const char *id, uint64_t elapsed_ms)
{
	return mcp_progress(st, id, elapsed_ms);
}

const struct codec codec_mcp = {
	.name = "mcp",
	.open = mcp_open,
	.close = mcp_close,
	.parse = mcp_parse_line,
	.started = mcp_started_line,
	.output = mcp_output_line,
	.exit = mcp_exit_line,
	.error = mcp_error_line,
	.progress = mcp_progress_line,
	.progress_ms = MCP_PROGRESS_MS,
};
