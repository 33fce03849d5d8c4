/* codec_jsonl.c - the JSON Lines codec (docs/protocol.md): requests parsed by
 * policy/request.c, events encoded by policy/events.c. */
#include "codec.h"

#include "events.h"

const struct codec codec_jsonl = {
	.name = "jsonl",
	.parse = rq_parse,
	.started = ev_started,
	.output = ev_output,
	.exit = ev_exit,
	.error = ev_error,
};
