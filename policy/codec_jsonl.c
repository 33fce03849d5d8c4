/* codec_jsonl.c - the JSON Lines codec (docs/protocol.md): requests parsed by
 * policy/request.c, events encoded by policy/events.c. It keeps no state. */
#include "policy/codec.h"

#include "policy/events.h"

static int jsonl_parse(void *st, const char *line, size_t len, struct rq_request **ret,
		       char ret_id[RQ_ID_MAX + 1], char **ret_reply, struct tn_error *err)
{
	(void)st;
	*ret_reply = NULL;
	return rq_parse(line, len, ret, ret_id, err);
}

static char *jsonl_started(void *st, const char *id, int pid)
{
	(void)st;
	return ev_started(id, pid);
}

static char *jsonl_output(void *st, const char *id, bool err_stream, const uint8_t *data, size_t len)
{
	(void)st;
	return ev_output(id, err_stream, data, len);
}

static char *jsonl_exit(void *st, const char *id, const struct ev_end *end)
{
	(void)st;
	return ev_exit(id, end);
}

static char *jsonl_error(void *st, const char *id, const char *msg)
{
	(void)st;
	return ev_error(id, msg);
}

static char *jsonl_net(void *st, const struct net_record *r)
{
	(void)st;
	return ev_net(r);
}

static char *jsonl_turn_end(void *st, int exit_code, const char *audit_head)
{
	(void)st;
	return ev_turn_end(exit_code, audit_head);
}

const struct codec codec_jsonl = {
	.name = "jsonl",
	.parse = jsonl_parse,
	.started = jsonl_started,
	.output = jsonl_output,
	.exit = jsonl_exit,
	.error = jsonl_error,
	.net = jsonl_net,
	.turn_end = jsonl_turn_end,
};
