/* auditlog.c - see auditlog.h and docs/audit.md. */
#include "policy/auditlog.h"

#include <errno.h>
#include <jansson.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/auditline.h"
#include "policy/cleanup.h"
#include "policy/error.h"
#include "policy/sjson.h"

/* A string of the log in a finding or note: its bytes escaped (err_shown),
 * so that no byte of the log reaches the reader's terminal as it is. */
#define SHOWN(s, buf) err_shown((s), strlen(s), (buf))

struct alog_pending {
	json_int_t stream;
	char *id;
	uint64_t line;
};

_Static_assert(ALOG_HASH_BYTES == ALINE_HASH_BYTES, "one digest size for the writer and the check");

struct alog_turn {
	char id[33];
	uint64_t line; /* its turn_start */
	uint64_t end;  /* its last line (turn_end, or where it was cut) */
	uint64_t work; /* its last line not of the change record or turn_end */
};

static void say(struct alog_check *c, uint64_t line, bool note, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void say(struct alog_check *c, uint64_t line, bool note, const char *fmt, ...)
{
	char text[TN_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!note)
		c->findings++;
	if (c->report)
		c->report(c->ctx, line, note, text);
}

void alog_init(struct alog_check *c, const uint8_t *head, alog_report_fn report, void *ctx)
{
	memset(c, 0, sizeof(*c));
	c->report = report;
	c->ctx = ctx;
	if (head)
		alog_add_head(c, head);
}

int alog_add_head(struct alog_check *c, const uint8_t head[ALOG_HASH_BYTES])
{
	for (size_t i = 0; i < c->n_heads; i++)
		if (memcmp(c->heads[i].digest, head, ALOG_HASH_BYTES) == 0)
			return 0;
	if (c->n_heads == ALOG_HEADS_MAX)
		return -E2BIG;
	memcpy(c->heads[c->n_heads].digest, head, ALOG_HASH_BYTES);
	c->heads[c->n_heads++].line = 0;
	return 0;
}

/* The turn at hand (the last turn_start read), or NULL when its record could
 * not be kept (out of memory, said then). */
static struct alog_turn *turn_now(struct alog_check *c)
{
	return c->turns && c->n_seen == c->turns ? &c->seen[c->n_seen - 1] : NULL;
}

/* s is exactly n lowercase hex digits */
static bool is_hex(const char *s, size_t n)
{
	if (!s || strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static void hex_of(const uint8_t d[ALOG_HASH_BYTES], char out[2 * ALOG_HASH_BYTES + 1])
{
	sodium_bin2hex(out, 2 * ALOG_HASH_BYTES + 1, d, ALOG_HASH_BYTES);
}

/* The open execs of a turn that ended: each a finding after a turn_end, a
 * note when the turn has none. Empties the list. */
static void pending_close(struct alog_check *c, bool ended)
{
	char b[ERR_SHOWN_MAX];

	for (size_t i = 0; i < c->n_pending; i++) {
		struct alog_pending *p = &c->pending[i];

		if (ended)
			say(c, p->line, false,
			    "exec %lld/%s has no exit or refused before its turn's turn_end",
			    (long long)p->stream, SHOWN(p->id, b));
		else
			say(c, p->line, true, "exec %lld/%s has no exit or refused: its turn has no turn_end",
			    (long long)p->stream, SHOWN(p->id, b));
		free(p->id);
	}
	c->n_pending = 0;
}

static void pending_add(struct alog_check *c, json_int_t stream, const char *id, uint64_t line)
{
	if (c->n_pending == c->cap_pending) {
		size_t cap = c->cap_pending ? 2 * c->cap_pending : 16;
		struct alog_pending *p = realloc(c->pending, cap * sizeof(*p));

		if (!p) {
			say(c, line, false, "out of memory keeping the open execs");
			return;
		}
		c->pending = p;
		c->cap_pending = cap;
	}
	c->pending[c->n_pending].id = strdup(id);
	if (!c->pending[c->n_pending].id) {
		say(c, line, false, "out of memory keeping the open execs");
		return;
	}
	c->pending[c->n_pending].stream = stream;
	c->pending[c->n_pending++].line = line;
}

/* An open exec of stream and id. */
static bool pending_find(const struct alog_check *c, json_int_t stream, const char *id)
{
	for (size_t i = 0; i < c->n_pending; i++)
		if (c->pending[i].stream == stream && strcmp(c->pending[i].id, id) == 0)
			return true;
	return false;
}

/* Take the open exec of stream and id; false when there is none. */
static bool pending_take(struct alog_check *c, json_int_t stream, const char *id)
{
	for (size_t i = 0; i < c->n_pending; i++) {
		if (c->pending[i].stream != stream || strcmp(c->pending[i].id, id) != 0)
			continue;
		free(c->pending[i].id);
		memmove(&c->pending[i], &c->pending[i + 1], (c->n_pending - i - 1) * sizeof(*c->pending));
		c->n_pending--;
		return true;
	}
	return false;
}

/* The turn that ends here (a turn_start after it, or the log's end) without
 * a turn_end: said, with its open execs. */
static void turn_cut(struct alog_check *c, uint64_t last)
{
	if (!c->in_turn)
		return;
	char b[ERR_SHOWN_MAX];

	if (turn_now(c))
		turn_now(c)->end = last;
	say(c, last, true,
	    "turn %s (line %llu on) has no turn_end: it ends at line %llu (cut short: killed, or still running)",
	    SHOWN(c->turn, b), (unsigned long long)c->turn_first, (unsigned long long)last);
	pending_close(c, false);
	c->in_turn = false;
}

/* A turn id read at line n, kept in order: one seen before is a finding
 * (every turn_start has a fresh random one, so the same id twice is a turn
 * copied in). */
static void turn_seen(struct alog_check *c, const char *id, uint64_t n)
{
	char b[ERR_SHOWN_MAX];

	for (size_t i = 0; i < c->n_seen; i++)
		if (strcmp(c->seen[i].id, id) == 0) {
			say(c, n, false, "turn %s began before, at line %llu: a turn copied in", SHOWN(id, b),
			    (unsigned long long)c->seen[i].line);
			break;
		}
	if (c->n_seen == c->cap_seen) {
		size_t cap = c->cap_seen ? 2 * c->cap_seen : 8;
		struct alog_turn *v = realloc(c->seen, cap * sizeof(*v));

		if (!v) {
			say(c, n, false, "out of memory keeping the turn ids");
			return;
		}
		c->seen = v;
		c->cap_seen = cap;
	}
	memcpy(c->seen[c->n_seen].id, id, 33);
	c->seen[c->n_seen].end = c->seen[c->n_seen].work = n;
	c->seen[c->n_seen++].line = n;
}

/* The end of a run of lines outside any turn, before line n: the lines
 * after its first, counted in one finding. */
static void outside_close(struct alog_check *c, uint64_t n)
{
	if (c->outside > 1)
		say(c, n - 1, false, "and %llu more lines up to this one outside any turn",
		    (unsigned long long)(c->outside - 1));
	c->outside = 0;
}

/* A note per path of a changes line's "unreadable_paths" (docs/audit.md,
 * "The change record"): where the record may miss changes. Each path as a
 * JSON string, escaped, since a command chose the name: no control
 * character reaches the reader's terminal; then how many more it did not
 * name (more: "unreadable_paths_more"), when any. */
static void unreadable_notes(struct alog_check *c, uint64_t n, json_t *paths, json_t *more)
{
	size_t i;
	json_t *p;

	json_array_foreach(paths, i, p) {
		json_t *v = json_object_get(p, "path");
		bool b64 = !v;
		char *q;

		if (b64)
			v = json_object_get(p, "path_base64");
		if (!json_is_string(v) ||
		    !(q = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_ENSURE_ASCII)))
			continue;
		say(c, n, true, "the change record is not complete: a path that could not be read: %s%s",
		    b64 ? "(base64) " : "", q);
		free(q);
	}
	if (json_is_integer(more) && json_integer_value(more) > 0)
		say(c, n, true,
		    "the change record is not complete: %lld more path(s) that could not be read, not named (the record names the first %zu)",
		    (long long)json_integer_value(more), json_array_size(paths));
}

/* An exec, its end (exit, refused) and its requests (cancel, signal) are
 * paired by "stream" and "id"; their lines must carry both. */
static bool stream_id(struct alog_check *c, json_t *ev, const char *event, uint64_t n, json_int_t *ret_stream,
		      const char **ret_id)
{
	const char *id = json_string_value(json_object_get(ev, "id"));
	json_t *stream = json_object_get(ev, "stream");

	if (!id || !json_is_integer(stream)) {
		say(c, n, false, "%s: no \"id\" string or \"stream\" number", event);
		return false;
	}
	*ret_stream = json_integer_value(stream);
	*ret_id = id;
	return true;
}

static void check_exec(struct alog_check *c, json_t *ev, const char *event, uint64_t n)
{
	char b[ERR_SHOWN_MAX];
	json_int_t stream;
	const char *id;

	if (!stream_id(c, ev, event, n, &stream, &id))
		return;
	if (pending_find(c, stream, id))
		say(c, n, false,
		    "exec of %lld/%s while one of that stream and id is open (turninit refuses a running id)",
		    (long long)stream, SHOWN(id, b));
	else
		pending_add(c, stream, id, n);
}

/* exit, refused (close: true): the end of an open exec, which it closes;
 * cancel, signal (close: false): turninit logs these only for a running
 * command */
static void check_open(struct alog_check *c, json_t *ev, const char *event, uint64_t n, bool close)
{
	char b[ERR_SHOWN_MAX];
	json_int_t stream;
	const char *id;

	if (stream_id(c, ev, event, n, &stream, &id) &&
	    !(close ? pending_take(c, stream, id) : pending_find(c, stream, id)))
		say(c, n, false, "%s of %lld/%s: no exec of that stream and id is open", event,
		    (long long)stream, SHOWN(id, b));
}

static void check_end(struct alog_check *c, json_t *ev, const char *event, uint64_t n)
{
	check_open(c, ev, event, n, true);
}

static void check_control(struct alog_check *c, json_t *ev, const char *event, uint64_t n)
{
	check_open(c, ev, event, n, false);
}

/* a request that ran nothing: paired with no exec, whatever its id */
static void check_rejected(struct alog_check *c, json_t *ev, const char *event, uint64_t n)
{
	(void)event;
	if (!json_is_integer(json_object_get(ev, "stream")) ||
	    !(json_is_string(json_object_get(ev, "id")) || json_is_null(json_object_get(ev, "id"))) ||
	    !json_is_string(json_object_get(ev, "reason")))
		say(c, n, false,
		    "rejected: no \"stream\" number, \"id\" string or null, or \"reason\" string");
}

/* a value given by request: its name only, paired with nothing */
static void check_credential(struct alog_check *c, json_t *ev, const char *event, uint64_t n)
{
	(void)event;
	if (!json_is_integer(json_object_get(ev, "stream")) || !json_is_string(json_object_get(ev, "id")) ||
	    !json_is_string(json_object_get(ev, "name")))
		say(c, n, false, "credential: no \"stream\" number, \"id\" string or \"name\" string");
}

/* the change record's completeness */
static void check_changes(struct alog_check *c, json_t *ev, const char *event, uint64_t n)
{
	json_t *done = json_object_get(ev, "complete");
	const char *why = json_string_value(json_object_get(ev, "stopped"));
	char b[ERR_SHOWN_MAX];

	(void)event;
	if (!json_is_true(done))
		say(c, n, true, "the change record is not complete%s%s: changes past it may be missing",
		    why ? ": " : "",
		    why ? SHOWN(why, b) : " (entries unread, not compared or skipped: see this line)");
	unreadable_notes(c, n, json_object_get(ev, "unreadable_paths"),
			 json_object_get(ev, "unreadable_paths_more"));
}

/* turn_end's count, which closes the turn */
static void check_turn_end(struct alog_check *c, json_t *ev, const char *event, uint64_t n)
{
	json_t *lines = json_object_get(ev, "lines");

	(void)event;
	if (!json_is_integer(lines) || (uint64_t)json_integer_value(lines) != n - c->turn_first + 1)
		say(c, n, false, "turn_end: \"lines\" is not %llu, the turn's count from line %llu",
		    (unsigned long long)(n - c->turn_first + 1), (unsigned long long)c->turn_first);
	pending_close(c, true);
	if (turn_now(c))
		turn_now(c)->end = n;
	c->in_turn = false;
	c->turn_ended = true;
}

/* The events of the log (docs/audit.md), each with the check of a line of
 * it in a turn (NULL: none past the chain), and whether it is the turn's own
 * work: not the change record or turn_end, which turninit writes once every
 * command has ended, after the last exit event's head. turn_start, which
 * opens a turn, is checked by turn_open. */
static const struct alog_kind {
	const char *name;
	void (*check)(struct alog_check *c, json_t *ev, const char *event, uint64_t n);
	bool work;
} alog_kinds[] = {
	{ "turn_start", NULL, true },
	{ "exec", check_exec, true },
	{ "refused", check_end, true },
	{ "rejected", check_rejected, true },
	{ "cancel", check_control, true },
	{ "signal", check_control, true },
	{ "exit", check_end, true },
	{ "net", NULL, true },
	{ "change", NULL, false },
	{ "changes", check_changes, false },
	{ "turn_end", check_turn_end, false },
	{ "credential", check_credential, true },
};

/* event's entry of alog_kinds, or NULL */
static const struct alog_kind *kind_of(const char *event)
{
	for (size_t k = 0; event && k < N_ELEMENTS(alog_kinds); k++)
		if (strcmp(event, alog_kinds[k].name) == 0)
			return &alog_kinds[k];
	return NULL;
}

/* A turn_start line n whose "prev" is got: a turn opens, and its chain's
 * first link is that of its turn id. */
static void turn_open(struct alog_check *c, json_t *ev, uint64_t n, const uint8_t got[ALOG_HASH_BYTES])
{
	const char *turn = json_string_value(json_object_get(ev, "turn"));
	uint8_t want[ALOG_HASH_BYTES];

	if (!is_hex(turn, ALINE_TURN_HEX)) {
		say(c, n, false, "turn_start: \"turn\" is not 32 lowercase hex digits");
		return;
	}
	turn_cut(c, n - 1);
	outside_close(c, n);
	turn_seen(c, turn, n);
	c->in_turn = true;
	c->turn_ended = false;
	c->turns++;
	c->turn_first = n;
	memcpy(c->turn, turn, ALINE_TURN_HEX + 1);
	aline_first_link(turn, want);
	if (sodium_memcmp(want, got, sizeof(want)) != 0)
		say(c, n, false, "turn_start: \"prev\" is not the BLAKE2b-256 of its turn id");
}

/* The checks of one parsed line n: its event known, its chain link, its
 * place in a turn, then its event's own check. */
static void alog_event(struct alog_check *c, json_t *ev, uint64_t n, bool in_order)
{
	const char *event = json_string_value(json_object_get(ev, "event"));
	const char *prev = json_string_value(json_object_get(ev, "prev"));
	const struct alog_kind *k = kind_of(event);
	uint8_t got[ALOG_HASH_BYTES];
	char wh[2 * ALOG_HASH_BYTES + 1];

	if (!k) {
		say(c, n, false, "not an audit event (\"event\" is missing or unknown)");
		return;
	}
	if (!is_hex(prev, 2 * ALOG_HASH_BYTES)) {
		say(c, n, false, "%s: \"prev\" is not 64 lowercase hex digits", event);
		return;
	}
	if (!in_order) {
		say(c, n, false,
		    "%s: not written by turninit: a line starts with \"event\" and then \"prev\"", event);
		return;
	}
	sodium_hex2bin(got, sizeof(got), prev, strlen(prev), NULL, NULL, NULL);
	if (strcmp(event, "turn_start") == 0) {
		turn_open(c, ev, n, got);
		return;
	}
	if (!c->in_turn) {
		/* the first of a run of such lines is named; the rest counted */
		if (c->outside++ == 0) {
			if (c->turn_ended)
				say(c, n, false,
				    "%s after turn_end: a line after a turn's end must be a turn_start",
				    event);
			else
				say(c, n, false, "%s before any turn_start", event);
		}
		return;
	}
	if (k->work && turn_now(c))
		turn_now(c)->work = n;
	if (sodium_memcmp(c->last, got, sizeof(got)) != 0) {
		hex_of(c->last, wh);
		say(c, n, false,
		    "the chain breaks here: \"prev\" is %.16s..., line %llu hashes to %.16s... (a line was removed, reordered, edited or put in before this one)",
		    prev, (unsigned long long)(n - 1), wh);
	}
	if (k->check)
		k->check(c, ev, event, n);
}

void alog_line(struct alog_check *c, const char *line, size_t len, bool newline)
{
	uint8_t d[ALOG_HASH_BYTES];
	json_error_t je;
	struct tn_error e = { 0 };
	uint64_t n;
	json_t *ev;
	bool failed;

	if (c->stopped)
		return;
	n = ++c->lines;
	if (len > ALOG_LINE_MAX) {
		say(c, n, false, "longer than %u bytes: no audit line is; the rest is not read",
		    ALOG_LINE_MAX);
		c->stopped = true;
		return;
	}
	aline_digest(line, len, newline, d);
	if (!newline)
		say(c, n, false, "no newline at its end: the log was cut inside this line");
	sj_guard_begin();
	ev = sj_load(line, len, false, &je);
	failed = sj_guard_end();
	if (failed) {
		say(c, n, false, "out of memory parsing it");
	} else if (!ev) {
		/* the parser counts the line it was given as its line 1: only its
		 * column means something here */
		char *at;

		sj_error(&je, &e);
		if ((at = strstr(e.msg, "(line 1, column ")))
			memmove(at + 1, at + 9, strlen(at + 9) + 1);
		say(c, n, false, "%s", e.msg);
	} else if (!json_is_object(ev)) {
		say(c, n, false, "not a JSON object");
	} else {
		/* turninit writes "event" first and "prev" second, compact */
		alog_event(c, ev, n,
			   aline_in_order(line, len, json_string_value(json_object_get(ev, "event"))));
	}
	json_decref(ev);
	memcpy(c->last, d, sizeof(d));
	for (size_t i = 0; i < c->n_heads; i++)
		if (sodium_memcmp(d, c->heads[i].digest, sizeof(d)) == 0)
			c->heads[i].line = n;
}

/* The turn whose lines hold line n (the last turn_start at or before it), or
 * NULL. */
static struct alog_turn *turn_of(struct alog_check *c, uint64_t n)
{
	for (size_t i = c->n_seen; i > 0; i--)
		if (c->seen[i - 1].line <= n)
			return &c->seen[i - 1];
	return NULL;
}

/* The heads given against the turns read: each the digest of a line, of its
 * turn's last line, and every turn anchored by one. A head of an earlier line
 * anchors its turn up to that line: the lines after it are a note when they
 * are only the change record and turn_end (turninit writes them once every
 * command has ended, after the last exit event's head, so a client holds no
 * head of them but the final one), else a finding (a command, a request or
 * a net line the head does not vouch for). */
static void heads_check(struct alog_check *c)
{
	char hh[2 * ALOG_HASH_BYTES + 1], b[ERR_SHOWN_MAX];
	bool *anchored = calloc(c->n_seen ? c->n_seen : 1, sizeof(*anchored));

	if (!anchored) {
		say(c, 0, false, "out of memory matching the heads to the turns");
		return;
	}
	for (size_t i = 0; i < c->n_heads; i++) {
		const struct alog_head *h = &c->heads[i];
		struct alog_turn *t = h->line ? turn_of(c, h->line) : NULL;

		hex_of(h->digest, hh);
		if (!h->line)
			say(c, 0, false,
			    "the head given (%.16s...) is no line's digest: this is not the log it came from, or its last lines changed",
			    hh);
		else if (!t || h->line > t->end)
			say(c, h->line, false,
			    "the head given (%.16s...) is this line's, which is in no turn", hh);
		else if (h->line < t->end && h->line >= t->work)
			say(c, h->line, true,
			    "the head given (%.16s...) is this line's: the %llu lines of its turn after it are its change record and turn_end, unanchored (written after the last exit; the turn's final head anchors them)",
			    hh, (unsigned long long)(t->end - h->line));
		else if (h->line < t->end)
			say(c, h->line, false,
			    "the head given (%.16s...) is this line's: %llu lines of its turn follow it", hh,
			    (unsigned long long)(t->end - h->line));
		if (t && h->line <= t->end)
			anchored[t - c->seen] = true;
	}
	/* a turn without its head: a chain anyone who can write the log can
	 * make, put in beside the turn the heads are of */
	for (size_t i = 0; i < c->n_seen; i++)
		if (!anchored[i])
			say(c, c->seen[i].line, false,
			    "turn %s (lines %llu to %llu): no head given anchors it (each turn's head is its own: give one --head per turn)",
			    SHOWN(c->seen[i].id, b), (unsigned long long)c->seen[i].line,
			    (unsigned long long)c->seen[i].end);
	free(anchored);
}

uint64_t alog_finish(struct alog_check *c)
{
	if (c->lines == 0)
		say(c, 0, false, "empty: no line");
	outside_close(c, c->lines + 1);
	turn_cut(c, c->lines);
	pending_close(c, true);
	if (c->n_heads && !c->stopped)
		heads_check(c);
	free(c->pending);
	c->pending = NULL;
	c->cap_pending = 0;
	free(c->seen);
	c->seen = NULL;
	c->n_seen = c->cap_seen = 0;
	return c->findings;
}
