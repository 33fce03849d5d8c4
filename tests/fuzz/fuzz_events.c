/* fuzz_events.c - libFuzzer target for ev_parse (policy/events.c), the event
 * line decoder of `turninit call`.
 *
 * The input is one event line as-is (no NUL added). Invariants that abort: a
 * refused line gives a one-line message and leaves ret untouched; an accepted
 * one is of a known kind with the fields of that kind, and encoding it again
 * (ev_started, ev_output, ev_exit, ev_error, ev_info, ev_net, ev_turn_end)
 * decodes to the same event.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_again(const struct ev_event *e)
{
	struct ev_event back;
	struct tn_error err = { 0 };
	char *line = NULL;

	switch (e->kind) {
	case EV_STARTED: line = ev_started(e->id, e->pid); break;
	case EV_OUTPUT:
		if (e->len == 0 || e->len > EV_CHUNK)
			return; /* the encoder sends 1..EV_CHUNK bytes only */
		line = ev_output(e->id, e->err_stream, e->data, e->len);
		break;
	case EV_EXIT:
		line = ev_exit(e->id, &(struct ev_end){ .wait_status = e->has_code ? e->code << 8 : e->signal,
							.timed_out = e->timed_out,
							.truncated = e->truncated,
							.lost = e->lost,
							.oom_killed = e->oom_killed });
		break;
	case EV_ERROR: line = ev_error(e->id, e->message); break;
	case EV_INFO: line = ev_info(e->id, e->manifest); break;
	case EV_NET: {
		struct net_record r = { .port = (uint16_t)e->port, .rule = -1 };

		/* what a record holds: an empty host or reason is null again */
		if (strlen(e->verdict) >= sizeof(r.verdict) ||
		    (e->host && (!e->host[0] || strlen(e->host) >= sizeof(r.host))) ||
		    (e->reason && (!e->reason[0] || strlen(e->reason) >= sizeof(r.reason))))
			return;
		strcpy(r.verdict, e->verdict);
		strcpy(r.host, e->host ? e->host : "");
		strcpy(r.reason, e->reason ? e->reason : "");
		line = ev_net(&r);
		break;
	}
	case EV_TURN_END: line = ev_turn_end(e->exit_code, e->audit_head); break;
	}
	if (!line)
		return; /* out of memory, or a message jansson will not encode */
	if (ev_parse(line, strlen(line), &back, &err) != 0 || back.kind != e->kind ||
	    (e->id == NULL) != (back.id == NULL) || (e->id && strcmp(e->id, back.id) != 0))
		abort();
	if (e->kind == EV_OUTPUT && (back.len != e->len || memcmp(back.data, e->data, e->len) != 0 ||
				     back.err_stream != e->err_stream))
		abort();
	if (e->kind == EV_EXIT &&
	    (back.has_code != e->has_code || back.code != e->code || back.signal != e->signal ||
	     back.timed_out != e->timed_out || back.truncated != e->truncated || back.lost != e->lost ||
	     back.oom_killed != e->oom_killed))
		abort();
	if (e->kind == EV_INFO && strcmp(back.manifest, e->manifest) != 0)
		abort();
	if (e->kind == EV_TURN_END &&
	    (back.exit_code != e->exit_code || strcmp(back.audit_head, e->audit_head) != 0))
		abort();
	if (e->kind == EV_NET &&
	    (strcmp(back.verdict, e->verdict) != 0 || back.port != e->port ||
	     (back.host == NULL) != (e->host == NULL) || (e->host && strcmp(back.host, e->host) != 0) ||
	     (back.reason == NULL) != (e->reason == NULL) ||
	     (e->reason && strcmp(back.reason, e->reason) != 0)))
		abort();
	ev_clear(&back);
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ev_event e, before;
	struct tn_error err = { 0 };
	char *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	memset(&e, 0x5a, sizeof(e));
	before = e;
	if (ev_parse(copy, size, &e, &err) < 0) {
		if (memcmp(&e, &before, sizeof(e)) != 0 || err.msg[0] == '\0' || strchr(err.msg, '\n'))
			abort();
	} else {
		if (e.kind < EV_STARTED || e.kind > EV_TURN_END ||
		    (e.kind != EV_ERROR && e.kind != EV_NET && e.kind != EV_TURN_END && !e.id) ||
		    (e.kind == EV_TURN_END && e.id))
			abort();
		same_again(&e);
		ev_clear(&e);
	}
	free(copy);
	return 0;
}
