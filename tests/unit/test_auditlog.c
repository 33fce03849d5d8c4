/* test_auditlog.c - unit tests of policy/auditlog.c, the offline check of an
 * audit log (turninit audit-verify, docs/audit.md "Checking a log").
 *
 * Logs are built here in memory with their chain computed as turninit writes
 * it (each "prev" the BLAKE2b-256 of the line before with its newline,
 * turn_start's that of its turn id), then tampered with the way an editor of
 * the file would, and fed to alog_line split as the driver
 * (init/client/audit_verify.c) splits them. Every finding must name its line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "policy/auditlog.h"
#include "policy/error.h"

#define ML_LINES 40 /* lines of one built log */
#define ML_LINE 512 /* bytes of one built line, its NUL included */

static const char turn_a[] = "0123456789abcdef0123456789abcdef";
static const char turn_b[] = "fedcba9876543210fedcba9876543210";
static const char tm[] = "\"time\":\"2026-12-01T10:00:00.000Z\"";

/* ---- a log in memory ------------------------------------------------------ */

struct mlog {
	char line[ML_LINES][ML_LINE]; /* without their newline */
	size_t n;
	size_t turn_first; /* the line number of the last turn_start */
};

/* The digest of line k (1-based) with its newline, as the next line's link. */
static void ml_digest(const struct mlog *l, size_t k, uint8_t out[ALOG_HASH_BYTES])
{
	crypto_generichash_state h;

	crypto_generichash_init(&h, NULL, 0, ALOG_HASH_BYTES);
	crypto_generichash_update(&h, (const uint8_t *)l->line[k - 1], strlen(l->line[k - 1]));
	crypto_generichash_update(&h, (const uint8_t *)"\n", 1);
	crypto_generichash_final(&h, out, ALOG_HASH_BYTES);
}

static void ml_put(struct mlog *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ml_put(struct mlog *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	assert_true(l->n < ML_LINES);
	va_start(ap, fmt);
	n = vsnprintf(l->line[l->n], ML_LINE, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && n < ML_LINE);
	l->n++;
}

/* A turn_start of turn id turn, linked to the digest of its id. */
static void ml_start(struct mlog *l, const char *turn)
{
	uint8_t d[ALOG_HASH_BYTES];
	char prev[2 * ALOG_HASH_BYTES + 1];

	crypto_generichash(d, sizeof(d), (const uint8_t *)turn, strlen(turn), NULL, 0);
	sodium_bin2hex(prev, sizeof(prev), d, sizeof(d));
	ml_put(l,
	       "{\"event\":\"turn_start\",\"prev\":\"%s\",\"turn\":\"%s\",%s,\"turninit\":\"0.1.0\",\"mode\":\"serve\"}",
	       prev, turn, tm);
	l->turn_first = l->n;
}

/* Line {"event":EVENT,"prev":LINK REST, linked to the line before (to 32 zero
 * bytes when there is none); rest goes on from the prev value: ",...}". */
static void ml_add(struct mlog *l, const char *event, const char *rest)
{
	uint8_t d[ALOG_HASH_BYTES] = { 0 };
	char prev[2 * ALOG_HASH_BYTES + 1];

	if (l->n)
		ml_digest(l, l->n, d);
	sodium_bin2hex(prev, sizeof(prev), d, sizeof(d));
	ml_put(l, "{\"event\":\"%s\",\"prev\":\"%s\"%s", event, prev, rest);
}

static void ml_exec(struct mlog *l, int stream, const char *id)
{
	char rest[256];

	snprintf(rest, sizeof(rest),
		 ",%s,\"stream\":%d,\"id\":\"%s\",\"command\":\"echo hi\",\"cwd\":\"/work\",\"env_names\":[],\"timeout_s\":300}",
		 tm, stream, id);
	ml_add(l, "exec", rest);
}

/* event exit or refused (or cancel, signal) of stream and id */
static void ml_end_of(struct mlog *l, const char *event, int stream, const char *id)
{
	char rest[256];

	snprintf(rest, sizeof(rest), ",%s,\"stream\":%d,\"id\":\"%s\",\"code\":0,\"signal\":null}", tm,
		 stream, id);
	ml_add(l, event, rest);
}

static void ml_net(struct mlog *l)
{
	char rest[256];

	snprintf(rest, sizeof(rest),
		 ",%s,\"verdict\":\"refused\",\"request\":\"CONNECT\",\"host\":\"a.example\",\"port\":443}",
		 tm);
	ml_add(l, "net", rest);
}

/* turn_end with the turn's true count */
static void ml_turn_end(struct mlog *l)
{
	char rest[128];

	snprintf(rest, sizeof(rest), ",%s,\"exit_code\":0,\"lines\":%zu}", tm, l->n + 1 - l->turn_first + 1);
	ml_add(l, "turn_end", rest);
}

/* A turn of every event kind, 11 lines; stream 1 reuses stream 0's id c1. */
static void ml_every_kind(struct mlog *l, const char *turn)
{
	ml_start(l, turn);                /* 1 */
	ml_exec(l, 0, "c1");              /* 2 */
	ml_net(l);                        /* 3 */
	ml_end_of(l, "exit", 0, "c1");    /* 4 */
	ml_exec(l, 0, "c2");              /* 5 */
	ml_end_of(l, "signal", 0, "c2");  /* 6 */
	ml_end_of(l, "cancel", 0, "c2");  /* 7 */
	ml_end_of(l, "exit", 0, "c2");    /* 8 */
	ml_exec(l, 1, "c1");              /* 9 */
	ml_end_of(l, "refused", 1, "c1"); /* 10 */
	ml_turn_end(l);                   /* 11 */
}

static void ml_remove(struct mlog *l, size_t k)
{
	memmove(l->line[k - 1], l->line[k], (l->n - k) * ML_LINE);
	l->n--;
}

static void ml_swap(struct mlog *l, size_t a, size_t b)
{
	char t[ML_LINE];

	memcpy(t, l->line[a - 1], ML_LINE);
	memcpy(l->line[a - 1], l->line[b - 1], ML_LINE);
	memcpy(l->line[b - 1], t, ML_LINE);
}

/* The lines with their newlines, as the file holds them. */
static char *ml_text(const struct mlog *l, size_t *ret_len)
{
	size_t len = 0;
	char *t;

	for (size_t i = 0; i < l->n; i++)
		len += strlen(l->line[i]) + 1;
	t = malloc(len + 1);
	assert_non_null(t);
	t[0] = '\0';
	for (size_t i = 0; i < l->n; i++) {
		strcat(t, l->line[i]);
		strcat(t, "\n");
	}
	*ret_len = len;
	return t;
}

/* ---- what the check said ---------------------------------------------------- */

#define SAID_MAX 64

struct said {
	uint64_t line;
	bool note;
	char text[TN_ERROR_MSG_MAX];
};

struct rec {
	struct said s[SAID_MAX];
	size_t n;
	uint64_t findings, notes;
	uint64_t lines; /* lines the check read */
};

static void record(void *ctx, uint64_t line, bool note, const char *text)
{
	struct rec *r = ctx;

	assert_non_null(text);
	assert_true(text[0] != '\0');
	assert_null(strchr(text, '\n'));
	if (note)
		r->notes++;
	else
		r->findings++;
	if (r->n < SAID_MAX) {
		r->s[r->n].line = line;
		r->s[r->n].note = note;
		snprintf(r->s[r->n].text, sizeof(r->s[r->n].text), "%s", text);
		r->n++;
	}
}

/* Check len bytes of text as audit-verify does: split on "\n", a last piece
 * without one given as cut. Returns alog_finish's count, which must be the
 * findings reported. */
static uint64_t check_text(const char *text, size_t len, const uint8_t *head, struct rec *r)
{
	struct alog_check c;
	size_t start = 0;
	uint64_t found;

	memset(r, 0, sizeof(*r));
	alog_init(&c, head, record, r);
	while (start < len && !c.stopped) {
		const char *nl = memchr(text + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - text) : len;
		/* an exact-size copy: a read past the line is an ASan error */
		char *copy = malloc(end - start ? end - start : 1);

		assert_non_null(copy);
		memcpy(copy, text + start, end - start);
		alog_line(&c, copy, end - start, nl != NULL);
		free(copy);
		start = end + 1;
	}
	r->lines = c.lines;
	found = alog_finish(&c);
	assert_int_equal(found, r->findings);
	return found;
}

static uint64_t check_log(const struct mlog *l, const uint8_t *head, struct rec *r)
{
	size_t len;
	char *t = ml_text(l, &len);
	uint64_t found = check_text(t, len, head, r);

	free(t);
	return found;
}

static void dump(const struct rec *r)
{
	for (size_t i = 0; i < r->n; i++)
		print_message("%sline %llu: %s\n", r->s[i].note ? "note: " : "",
			      (unsigned long long)r->s[i].line, r->s[i].text);
}

/* r holds a finding (note false) or a note at line whose text has want. */
static void expect_said(const struct rec *r, bool note, uint64_t line, const char *want)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->s[i].note == note && r->s[i].line == line && strstr(r->s[i].text, want))
			return;
	dump(r);
	fail_msg("no %s at line %llu with \"%s\"", note ? "note" : "finding", (unsigned long long)line, want);
}

static void expect_finding(const struct rec *r, uint64_t line, const char *want)
{
	expect_said(r, false, line, want);
}

/* The first finding names line: the change is found where it was made. */
static void expect_first_finding(const struct rec *r, uint64_t line)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->s[i].note)
			continue;
		if (r->s[i].line != line)
			dump(r);
		assert_int_equal(r->s[i].line, line);
		return;
	}
	fail_msg("no finding");
}

static void expect_whole(const struct rec *r, uint64_t found)
{
	if (found)
		dump(r);
	assert_int_equal(found, 0);
}

/* ---- whole logs ----------------------------------------------------------- */

static void whole_log_of_every_kind(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_every_kind(&l, turn_a);
	expect_whole(&r, check_log(&l, NULL, &r));
	assert_int_equal(r.lines, 11);
	assert_int_equal(r.notes, 0);
}

/* A credential request's line (docs/audit.md): the name, paired with
 * nothing; without its name it is a finding. */
static void credential_line(void **state)
{
	struct mlog l = { 0 }, bad = { 0 };
	struct rec r;
	char rest[256];

	(void)state;
	ml_start(&l, turn_a);
	snprintf(rest, sizeof(rest), ",%s,\"stream\":0,\"id\":\"k1\",\"name\":\"git\"}", tm);
	ml_add(&l, "credential", rest);
	ml_exec(&l, 0, "c1");
	ml_end_of(&l, "exit", 0, "c1");
	ml_turn_end(&l);
	expect_whole(&r, check_log(&l, NULL, &r));
	assert_int_equal(r.lines, 5);
	ml_start(&bad, turn_a);
	snprintf(rest, sizeof(rest), ",%s,\"stream\":0,\"id\":\"k1\"}", tm);
	ml_add(&bad, "credential", rest);
	ml_turn_end(&bad);
	check_log(&bad, NULL, &r);
	expect_finding(&r, 2, "credential: no \"stream\" number, \"id\" string or \"name\" string");
}

static void two_turns_whole(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_every_kind(&l, turn_a);
	ml_every_kind(&l, turn_b);
	expect_whole(&r, check_log(&l, NULL, &r));
	assert_int_equal(r.lines, 22);
	assert_int_equal(r.notes, 0);
}

/* A turn killed before its turn_end, then the next turn: notes, no finding. */
static void turn_without_end_then_next_turn_is_a_note(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_start(&l, turn_a);
	ml_exec(&l, 0, "c1");
	ml_every_kind(&l, turn_b);
	expect_whole(&r, check_log(&l, NULL, &r));
	expect_said(&r, true, 2, "has no turn_end");
	expect_said(&r, true, 2, "exec 0/c1 has no exit or refused");
}

/* A change record the walk could not finish reading: a note for the
 * record and one per unreadable path, each escaped (a command chose the
 * name); no finding. */
static void incomplete_change_record_notes_its_paths(void **state)
{
	struct mlog l = { 0 };
	struct rec r;
	char rest[512];

	(void)state;
	ml_start(&l, turn_a);
	snprintf(rest, sizeof(rest),
		 ",%s,\"base\":\"/audit/base\",\"root\":\"/work\",\"added\":0,\"removed\":0,\"changed\":1,\"entries\":4,\"bytes_hashed\":0,\"unreadable\":3,\"unreadable_paths\":[{\"path\":\"docs\"},{\"path\":\"a\\nb\"},{\"path_base64\":\"/w==\"}],\"not_compared\":0,\"skipped\":0,\"duration_ms\":1,\"complete\":false,\"stopped\":null}",
		 tm);
	ml_add(&l, "changes", rest);
	ml_turn_end(&l);
	expect_whole(&r, check_log(&l, NULL, &r));
	expect_said(&r, true, 2, "the change record is not complete (entries unread");
	expect_said(&r, true, 2, "a path that could not be read: \"docs\"");
	expect_said(&r, true, 2, "a path that could not be read: \"a\\nb\"");
	expect_said(&r, true, 2, "a path that could not be read: (base64) \"/w==\"");
	assert_int_equal(r.notes, 4);
}

/* A list of unreadable paths that was cut says how many it did not name. */
static void cut_unreadable_list_notes_the_rest(void **state)
{
	struct mlog l = { 0 };
	struct rec r;
	char rest[512];

	(void)state;
	ml_start(&l, turn_a);
	snprintf(rest, sizeof(rest),
		 ",%s,\"base\":\"/audit/base\",\"root\":\"/work\",\"added\":0,\"removed\":0,\"changed\":1,\"entries\":4,\"bytes_hashed\":0,\"unreadable\":41,\"unreadable_paths\":[{\"path\":\"d01\"}],\"unreadable_paths_more\":9,\"not_compared\":0,\"skipped\":0,\"duration_ms\":1,\"complete\":false,\"stopped\":null}",
		 tm);
	ml_add(&l, "changes", rest);
	ml_turn_end(&l);
	expect_whole(&r, check_log(&l, NULL, &r));
	expect_said(&r, true, 2, "a path that could not be read: \"d01\"");
	expect_said(&r, true, 2,
		    "9 more path(s) that could not be read, not named (the record names the first 1)");
	assert_int_equal(r.notes, 3);
}

/* ---- tampering: each a finding at the line where it shows -------------------- */

static void line_removed(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_every_kind(&l, turn_a);
	ml_remove(&l, 3);
	assert_int_equal(check_log(&l, NULL, &r), 2);
	expect_first_finding(&r, 3);
	expect_finding(&r, 3, "the chain breaks here");
	expect_finding(&r, 10, "\"lines\" is not 10");
}

static void two_lines_swapped(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_every_kind(&l, turn_a);
	ml_swap(&l, 3, 4);
	assert_int_equal(check_log(&l, NULL, &r), 3);
	expect_first_finding(&r, 3);
	expect_finding(&r, 3, "the chain breaks here");
	expect_finding(&r, 4, "the chain breaks here");
	expect_finding(&r, 5, "the chain breaks here");
}

/* A byte edited inside line 4 (its exit code): line 4 itself still links to
 * line 3, the line after it does not. */
static void byte_edited(void **state)
{
	struct mlog l = { 0 };
	struct rec r;
	char *p;

	(void)state;
	ml_every_kind(&l, turn_a);
	p = strstr(l.line[3], "\"code\":0");
	assert_non_null(p);
	p[7] = '1';
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 5, "the chain breaks here");
}

/* A line put in with a correct link of its own: the line after it breaks,
 * and turn_end's count. */
static void line_inserted(void **state)
{
	struct mlog l = { 0 }, m = { 0 };
	struct rec r;

	(void)state;
	ml_every_kind(&l, turn_a);
	memcpy(m.line, l.line, 4 * ML_LINE);
	m.n = 4;
	ml_net(&m);
	memcpy(m.line[5], l.line[4], (l.n - 4) * ML_LINE);
	m.n = l.n + 1;
	assert_int_equal(check_log(&m, NULL, &r), 2);
	expect_first_finding(&r, 6);
	expect_finding(&r, 6, "the chain breaks here");
	expect_finding(&r, 12, "\"lines\" is not 12");
}

/* Cut inside the last line: no newline, and what is left is not JSON. Cut
 * just before the last newline: the newline alone is missing. */
static void log_cut_inside_a_line(void **state)
{
	struct mlog l = { 0 };
	struct rec r;
	size_t len;
	char *t;

	(void)state;
	ml_every_kind(&l, turn_a);
	t = ml_text(&l, &len);
	assert_true(check_text(t, len - 20, NULL, &r) >= 1);
	assert_int_equal(r.lines, 11);
	expect_first_finding(&r, 11);
	expect_finding(&r, 11, "no newline at its end");
	for (size_t i = 0; i < r.n; i++)
		if (!r.s[i].note)
			assert_int_equal(r.s[i].line, 11);
	assert_int_equal(check_text(t, len - 1, NULL, &r), 1);
	expect_finding(&r, 11, "no newline at its end");
	free(t);
}

/* Turn A's first two lines, then turn B's from its third: each part whole on
 * its own, the seam a finding. */
static void spliced_from_two_turns(void **state)
{
	struct mlog a = { 0 }, b = { 0 };
	struct rec r;

	(void)state;
	ml_every_kind(&a, turn_a);
	ml_every_kind(&b, turn_b);
	memcpy(a.line[2], b.line[2], (b.n - 2) * ML_LINE);
	assert_int_equal(check_log(&a, NULL, &r), 1);
	expect_finding(&r, 3, "the chain breaks here");
}

/* ---- lines that are not audit lines ------------------------------------------ */

static void prev_not_hex(void **state)
{
	struct mlog l = { 0 };
	struct rec r;
	char *p;

	(void)state;
	ml_every_kind(&l, turn_a);
	p = strstr(l.line[2], "\"prev\":\"");
	assert_non_null(p);
	p[8] = 'g';
	check_log(&l, NULL, &r);
	expect_first_finding(&r, 3);
	expect_finding(&r, 3, "\"prev\" is not 64 lowercase hex digits");
	/* upper case is not the form turninit writes */
	memset(&l, 0, sizeof(l));
	ml_every_kind(&l, turn_a);
	p = strstr(l.line[2], "\"prev\":\"");
	for (size_t i = 8; i < 8 + 64; i++)
		p[i] = (char)(p[i] >= 'a' && p[i] <= 'f' ? p[i] - 'a' + 'A' : p[i]);
	check_log(&l, NULL, &r);
	expect_first_finding(&r, 3);
	expect_finding(&r, 3, "\"prev\" is not 64 lowercase hex digits");
	/* too short */
	memset(&l, 0, sizeof(l));
	ml_start(&l, turn_a);
	ml_put(&l, "{\"event\":\"net\",\"prev\":\"abc\"}");
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 2, "\"prev\" is not 64 lowercase hex digits");
}

static void unknown_event(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_start(&l, turn_a);
	ml_exec(&l, 0, "c1");
	ml_add(&l, "bogus", ",\"stream\":0,\"id\":\"c1\"}");
	ml_end_of(&l, "exit", 0, "c1");
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 3, "not an audit event");
	/* no "event" at all */
	memset(&l, 0, sizeof(l));
	ml_start(&l, turn_a);
	ml_put(&l, "{\"prev\":\"%064d\"}", 0);
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 2, "not an audit event");
}

static void invalid_json(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_start(&l, turn_a);
	ml_add(&l, "net", ",\"port\":443,}"); /* a trailing comma */
	ml_net(&l);
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 2, "not valid JSON");
	/* an array is JSON, not an object */
	memset(&l, 0, sizeof(l));
	ml_start(&l, turn_a);
	ml_put(&l, "[\"net\"]");
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 2, "not a JSON object");
	/* an empty line */
	memset(&l, 0, sizeof(l));
	ml_start(&l, turn_a);
	ml_put(&l, "%s", "");
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 2, "not valid JSON");
}

/* strict JSON: the key jansson would keep last is refused, as in a manifest */
static void duplicate_key(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_start(&l, turn_a);
	ml_exec(&l, 0, "c1");
	ml_add(&l, "exit", ",\"stream\":0,\"id\":\"c1\",\"code\":0,\"code\":1}");
	ml_turn_end(&l);
	check_log(&l, NULL, &r);
	expect_first_finding(&r, 3);
	expect_finding(&r, 3, "duplicate key");
}

/* ---- lines out of place ---------------------------------------------------- */

static void line_before_any_turn_start(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_net(&l);
	ml_every_kind(&l, turn_a);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 1, "net before any turn_start");
}

static void line_after_turn_end(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_every_kind(&l, turn_a);
	ml_net(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 12, "net after turn_end");
}

static void exit_without_exec(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_start(&l, turn_a);
	ml_end_of(&l, "exit", 0, "c9");
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 2, "exit of 0/c9: no exec of that stream and id is open");
	/* an id the log's writer chose reaches the reader escaped: no escape
	 * sequence of its moves the cursor or hides the verdict */
	memset(&l, 0, sizeof(l));
	ml_start(&l, turn_a);
	ml_end_of(&l, "exit", 0, "c\\u001b[2K\\rALL GOOD");
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 2, "exit of 0/c\\x1b[2K\\x0dALL GOOD: no exec of that stream and id is open");
	/* the id of another stream is not this one's */
	memset(&l, 0, sizeof(l));
	ml_start(&l, turn_a);
	ml_exec(&l, 1, "c1");
	ml_end_of(&l, "refused", 2, "c1");
	ml_end_of(&l, "exit", 1, "c1");
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 3, "refused of 2/c1: no exec");
	/* an exec ends once */
	memset(&l, 0, sizeof(l));
	ml_start(&l, turn_a);
	ml_exec(&l, 0, "c1");
	ml_end_of(&l, "exit", 0, "c1");
	ml_end_of(&l, "exit", 0, "c1");
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 4, "no exec of that stream and id is open");
}

static void exec_without_end_before_turn_end(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_start(&l, turn_a);
	ml_exec(&l, 0, "c1");
	ml_net(&l);
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 2, "exec 0/c1 has no exit or refused before its turn's turn_end");
}

/* The container killed while c1 ran: the log is whole up to its last line. */
static void exec_without_end_in_turn_without_end(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_start(&l, turn_a);
	ml_exec(&l, 0, "c1");
	ml_net(&l);
	expect_whole(&r, check_log(&l, NULL, &r));
	expect_said(&r, true, 2, "exec 0/c1 has no exit or refused: its turn has no turn_end");
	expect_said(&r, true, 3, "has no turn_end");
}

static void turn_end_wrong_count(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_start(&l, turn_a);
	ml_exec(&l, 0, "c1");
	ml_end_of(&l, "exit", 0, "c1");
	ml_add(&l, "turn_end", ",\"exit_code\":0,\"lines\":5}");
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 4, "\"lines\" is not 4, the turn's count from line 1");
	/* no count at all */
	memset(&l, 0, sizeof(l));
	ml_start(&l, turn_a);
	ml_add(&l, "turn_end", ",\"exit_code\":0}");
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 2, "\"lines\" is not 2");
}

/* turn_start's link is its turn id's digest; its turn id 32 hex digits. */
static void turn_start_link_and_id(void **state)
{
	struct mlog l = { 0 };
	struct rec r;
	char *p;

	(void)state;
	ml_every_kind(&l, turn_a);
	p = strstr(l.line[0], turn_a);
	assert_non_null(p);
	p[0] = '1'; /* the id changed, its link not */
	check_log(&l, NULL, &r);
	expect_first_finding(&r, 1);
	expect_finding(&r, 1, "turn_start: \"prev\" is not the BLAKE2b-256 of its turn id");
	memset(&l, 0, sizeof(l));
	ml_start(&l, "0123456789abcdef");
	assert_true(check_log(&l, NULL, &r) >= 1);
	expect_finding(&r, 1, "\"turn\" is not 32 lowercase hex digits");
}

/* ---- the head ---------------------------------------------------------------- */

static void head_of_last_line(void **state)
{
	struct mlog l = { 0 };
	uint8_t head[ALOG_HASH_BYTES];
	struct rec r;

	(void)state;
	ml_every_kind(&l, turn_a);
	ml_digest(&l, 11, head);
	expect_whole(&r, check_log(&l, head, &r));
}

/* The log goes on past the head held: its last lines were added after. */
static void head_of_an_earlier_line(void **state)
{
	struct mlog l = { 0 };
	uint8_t head[ALOG_HASH_BYTES];
	struct rec r;

	(void)state;
	ml_every_kind(&l, turn_a);
	ml_digest(&l, 4, head);
	assert_int_equal(check_log(&l, head, &r), 1);
	expect_finding(&r, 4, "the head given");
	expect_finding(&r, 4, "this line's: 7 lines of its turn follow it");
}

static void head_of_no_line(void **state)
{
	struct mlog l = { 0 };
	uint8_t head[ALOG_HASH_BYTES];
	struct rec r;

	(void)state;
	ml_every_kind(&l, turn_a);
	ml_digest(&l, 11, head);
	head[0] ^= 1;
	assert_int_equal(check_log(&l, head, &r), 2);
	expect_finding(&r, 0, "is no line's digest");
	expect_finding(&r, 1, "no head given anchors it");
	/* the turn's last line cut away: whole, but not the log the head is of */
	ml_digest(&l, 11, head);
	l.n--;
	expect_whole(&r, check_log(&l, NULL, &r));
	assert_int_equal(check_log(&l, head, &r), 2);
	expect_finding(&r, 0, "is no line's digest");
	expect_finding(&r, 1, "(lines 1 to 10): no head given anchors it");
}

/* ---- edges --------------------------------------------------------------------- */

static void empty_log(void **state)
{
	struct rec r;

	(void)state;
	assert_int_equal(check_text("", 0, NULL, &r), 1);
	expect_finding(&r, 0, "empty");
	assert_int_equal(r.lines, 0);
}

/* A line past ALOG_LINE_MAX is a finding and the last line read; one of
 * exactly ALOG_LINE_MAX bytes is read (and is not JSON here). */
static void line_past_the_limit(void **state)
{
	struct alog_check c;
	struct mlog l = { 0 };
	struct rec r;
	char *big = malloc(ALOG_LINE_MAX + 1);

	(void)state;
	assert_non_null(big);
	memset(big, 'x', ALOG_LINE_MAX + 1);
	ml_start(&l, turn_a);
	ml_exec(&l, 0, "c1");
	ml_net(&l);
	ml_turn_end(&l);

	memset(&r, 0, sizeof(r));
	alog_init(&c, NULL, record, &r);
	alog_line(&c, l.line[0], strlen(l.line[0]), true);
	alog_line(&c, l.line[1], strlen(l.line[1]), true);
	alog_line(&c, big, ALOG_LINE_MAX + 1, true);
	assert_true(c.stopped);
	alog_line(&c, l.line[2], strlen(l.line[2]), true);
	alog_line(&c, l.line[3], strlen(l.line[3]), true);
	assert_int_equal(c.lines, 3);
	assert_int_equal(alog_finish(&c), 1);
	expect_finding(&r, 3, "longer than");

	memset(&r, 0, sizeof(r));
	alog_init(&c, NULL, record, &r);
	alog_line(&c, l.line[0], strlen(l.line[0]), true);
	alog_line(&c, big, ALOG_LINE_MAX, true);
	assert_false(c.stopped);
	alog_line(&c, l.line[1], strlen(l.line[1]), true);
	assert_int_equal(c.lines, 3);
	assert_int_equal(alog_finish(&c), 2);
	expect_finding(&r, 2, "not valid JSON");
	expect_finding(&r, 3, "the chain breaks here");
	free(big);
}

/* Keys in another order than turninit writes them: "prev" first. */
static void keys_out_of_order(void **state)
{
	struct mlog l = { 0 };
	uint8_t d[ALOG_HASH_BYTES];
	char prev[2 * ALOG_HASH_BYTES + 1];
	struct rec r;

	(void)state;
	ml_start(&l, turn_a);
	ml_digest(&l, 1, d);
	sodium_bin2hex(prev, sizeof(prev), d, sizeof(d));
	ml_put(&l, "{\"prev\":\"%s\",\"event\":\"net\",%s}", prev, tm);
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 2, "not written by turninit");
}

/* A cancel and a signal are logged only for a running command. */
static void cancel_without_exec(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_start(&l, turn_a);
	ml_end_of(&l, "cancel", 0, "zz");
	ml_end_of(&l, "signal", 0, "zz");
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 2);
	expect_finding(&r, 2, "cancel of 0/zz: no exec of that stream and id is open");
	expect_finding(&r, 3, "signal of 0/zz: no exec");
}

/* turninit refuses an exec whose id runs: two open at once are forged. */
static void exec_while_open(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_start(&l, turn_a);
	ml_exec(&l, 0, "c1");
	ml_exec(&l, 0, "c1");
	ml_end_of(&l, "exit", 0, "c1");
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 3, "while one of that stream and id is open");
}

/* A whole turn forged ahead of the real one, the real turn's head given: the
 * forged turn, which no head anchors, is a finding that names it. */
static void head_of_the_last_turn_only(void **state)
{
	struct mlog l = { 0 };
	uint8_t head[ALOG_HASH_BYTES];
	struct rec r;

	(void)state;
	ml_every_kind(&l, turn_a);
	ml_every_kind(&l, turn_b);
	ml_digest(&l, 22, head);
	assert_int_equal(check_log(&l, head, &r), 1);
	expect_finding(&r, 1,
		       "turn "
		       "0123456789abcdef0123456789abcdef"
		       " (lines 1 to 11): no head given anchors it");
	/* the first turn's head alone: the second is the one without */
	ml_digest(&l, 11, head);
	assert_int_equal(check_log(&l, head, &r), 1);
	expect_finding(&r, 12,
		       "turn "
		       "fedcba9876543210fedcba9876543210"
		       " (lines 12 to 22): no head given anchors it");
}

/* The last exit's head on a turn with a change record: the record and
 * turn_end after it are a note (no exit event's head can cover them); the
 * exec's head, with the exit after it, a finding. */
static void head_of_the_last_exit(void **state)
{
	struct mlog l = { 0 };
	uint8_t head[ALOG_HASH_BYTES];
	char rest[256];
	struct rec r;

	(void)state;
	ml_start(&l, turn_a);           /* 1 */
	ml_exec(&l, 0, "c1");           /* 2 */
	ml_end_of(&l, "exit", 0, "c1"); /* 3 */
	snprintf(rest, sizeof(rest), ",%s,\"op\":\"added\",\"path\":\"NEW.md\",\"base\":null,\"now\":null}",
		 tm);
	ml_add(&l, "change", rest); /* 4 */
	snprintf(rest, sizeof(rest), ",%s,\"complete\":true,\"stopped\":null}", tm);
	ml_add(&l, "changes", rest); /* 5 */
	ml_turn_end(&l);             /* 6 */
	ml_digest(&l, 3, head);
	expect_whole(&r, check_log(&l, head, &r));
	expect_said(&r, true, 3,
		    "the 3 lines of its turn after it are its change record and turn_end, unanchored");
	ml_digest(&l, 6, head);
	expect_whole(&r, check_log(&l, head, &r));
	assert_int_equal(r.notes, 0);
	ml_digest(&l, 2, head);
	assert_int_equal(check_log(&l, head, &r), 1);
	expect_finding(&r, 2, "this line's: 4 lines of its turn follow it");
	/* a turn_end alone after the head: the same note */
	l.n = 3;
	ml_turn_end(&l);
	ml_digest(&l, 3, head);
	expect_whole(&r, check_log(&l, head, &r));
	expect_said(&r, true, 3, "the 1 lines of its turn after it");
}

/* One head a turn, in any order, one given twice: whole. */
static void head_of_each_turn(void **state)
{
	struct mlog l = { 0 };
	uint8_t h1[ALOG_HASH_BYTES], h2[ALOG_HASH_BYTES];
	struct alog_check c;
	struct rec r;
	size_t len;
	char *t;

	(void)state;
	ml_every_kind(&l, turn_a);
	ml_every_kind(&l, turn_b);
	ml_digest(&l, 11, h1);
	ml_digest(&l, 22, h2);
	t = ml_text(&l, &len);
	memset(&r, 0, sizeof(r));
	alog_init(&c, h2, record, &r);
	assert_int_equal(alog_add_head(&c, h1), 0);
	assert_int_equal(alog_add_head(&c, h2), 0);
	assert_int_equal(c.n_heads, 2);
	for (size_t start = 0; start < len;) {
		const char *nl = memchr(t + start, '\n', len - start);

		assert_non_null(nl);
		alog_line(&c, t + start, (size_t)(nl - (t + start)), true);
		start = (size_t)(nl - t) + 1;
	}
	expect_whole(&r, alog_finish(&c));
	free(t);
}

/* More heads than a check takes: refused, not dropped. */
static void heads_bounded(void **state)
{
	uint8_t h[ALOG_HASH_BYTES] = { 0 };
	struct alog_check c;

	(void)state;
	alog_init(&c, NULL, NULL, NULL);
	for (unsigned i = 0; i < ALOG_HEADS_MAX; i++) {
		memcpy(h, &i, sizeof(i));
		assert_int_equal(alog_add_head(&c, h), 0);
	}
	assert_int_equal(alog_add_head(&c, h), 0); /* the same again */
	h[31] = 1;
	assert_int_equal(alog_add_head(&c, h), -E2BIG);
	/* empty, and each head no line's digest */
	assert_int_equal(alog_finish(&c), 1 + ALOG_HEADS_MAX);
}

/* The same turn twice in one file: the second is a copy. */
static void turn_copied_in(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_every_kind(&l, turn_a);
	ml_every_kind(&l, turn_a);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 12, "began before, at line 1: a turn copied in");
}

/* A rejected request of a running id, and lines that did not parse (id
 * null): paired with no exec, so the running command's exit still ends it;
 * without its fields, a finding. */
static void rejected_pairs_with_nothing(void **state)
{
	struct mlog l = { 0 };
	char rest[256];
	struct rec r;

	(void)state;
	ml_start(&l, turn_a); /* 1 */
	ml_exec(&l, 0, "c1"); /* 2 */
	snprintf(rest, sizeof(rest),
		 ",%s,\"stream\":0,\"id\":\"c1\",\"reason\":\"exec: id c1 is already running or waiting\",\"command\":\"echo dup\"}",
		 tm);
	ml_add(&l, "rejected", rest); /* 3 */
	snprintf(rest, sizeof(rest), ",%s,\"stream\":0,\"id\":null,\"reason\":\"request: not JSON\"}", tm);
	ml_add(&l, "rejected", rest);   /* 4 */
	ml_end_of(&l, "exit", 0, "c1"); /* 5 */
	ml_turn_end(&l);                /* 6 */
	expect_whole(&r, check_log(&l, NULL, &r));
	l.n = 4;
	snprintf(rest, sizeof(rest), ",%s,\"id\":\"c2\",\"reason\":\"x\"}", tm);
	ml_add(&l, "rejected", rest); /* 5 */
	ml_end_of(&l, "exit", 0, "c1");
	ml_turn_end(&l);
	assert_int_equal(check_log(&l, NULL, &r), 1);
	expect_finding(&r, 5, "rejected: no \"stream\" number");
}

/* A run of lines outside any turn: its first named, the rest counted once. */
static void lines_outside_counted(void **state)
{
	struct mlog l = { 0 };
	struct rec r;

	(void)state;
	ml_every_kind(&l, turn_a);
	ml_remove(&l, 1);
	assert_int_equal(check_log(&l, NULL, &r), 2);
	expect_finding(&r, 1, "before any turn_start");
	expect_finding(&r, 10, "and 9 more lines up to this one outside any turn");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole_log_of_every_kind),
		cmocka_unit_test(credential_line),
		cmocka_unit_test(two_turns_whole),
		cmocka_unit_test(turn_without_end_then_next_turn_is_a_note),
		cmocka_unit_test(incomplete_change_record_notes_its_paths),
		cmocka_unit_test(cut_unreadable_list_notes_the_rest),
		cmocka_unit_test(line_removed),
		cmocka_unit_test(two_lines_swapped),
		cmocka_unit_test(byte_edited),
		cmocka_unit_test(line_inserted),
		cmocka_unit_test(log_cut_inside_a_line),
		cmocka_unit_test(spliced_from_two_turns),
		cmocka_unit_test(prev_not_hex),
		cmocka_unit_test(unknown_event),
		cmocka_unit_test(invalid_json),
		cmocka_unit_test(duplicate_key),
		cmocka_unit_test(line_before_any_turn_start),
		cmocka_unit_test(line_after_turn_end),
		cmocka_unit_test(exit_without_exec),
		cmocka_unit_test(exec_without_end_before_turn_end),
		cmocka_unit_test(exec_without_end_in_turn_without_end),
		cmocka_unit_test(turn_end_wrong_count),
		cmocka_unit_test(turn_start_link_and_id),
		cmocka_unit_test(head_of_last_line),
		cmocka_unit_test(head_of_an_earlier_line),
		cmocka_unit_test(head_of_no_line),
		cmocka_unit_test(empty_log),
		cmocka_unit_test(line_past_the_limit),
		cmocka_unit_test(keys_out_of_order),
		cmocka_unit_test(cancel_without_exec),
		cmocka_unit_test(exec_while_open),
		cmocka_unit_test(head_of_the_last_turn_only),
		cmocka_unit_test(head_of_each_turn),
		cmocka_unit_test(head_of_the_last_exit),
		cmocka_unit_test(heads_bounded),
		cmocka_unit_test(turn_copied_in),
		cmocka_unit_test(lines_outside_counted),
		cmocka_unit_test(rejected_pairs_with_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
