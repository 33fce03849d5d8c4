/* auditsum.c - see auditsum.h. */
#define _GNU_SOURCE
#include "policy/auditsum.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/sjson.h"

/* One line of the summary being built: a command (key: its stream and id,
 * while it is open), a net count (key: verdict, host and port) or a text. */
struct asum_item {
	char *key;
	bool open; /* a command without its end yet */
	char *text;
	uint64_t count; /* net: the decisions */
	int kind;       /* ITEM_* */
};

enum { ITEM_CMD, ITEM_NET, ITEM_TEXT };

struct asum_turn {
	char *head; /* "turn ID (MODE)" */
	char *end;  /* "ended with exit C", NULL: no turn_end */
	uint64_t cmds, rejected;
	struct asum_item *it;
	size_t n, cap;
};

struct asum {
	struct asum_turn *t;
	size_t n, cap;
	bool short_of_memory;
};

struct asum *asum_new(void)
{
	return calloc(1, sizeof(struct asum));
}

/* v as JSON, ASCII only, so no byte of the log reaches a terminal
 * unescaped: jansson's JSON_ENSURE_ASCII leaves DEL (0x7f) as it is, so it
 * is escaped here. */
static void put_json(FILE *f, const json_t *v)
{
	char *q = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_ENSURE_ASCII | JSON_COMPACT) : NULL;

	for (const char *c = q ? q : "null"; *c; c++) {
		if (*c == 0x7f)
			fputs("\\u007F", f);
		else
			fputc(*c, f);
	}
	free(q);
}

/* A string as the summary shows it: as it is when every byte is printable
 * ASCII and none a space, quote or backslash; else as a JSON string. */
static void put_str(FILE *f, const char *s)
{
	json_t *v;

	if (s[0] && strspn(s, "!#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`"
			      "abcdefghijklmnopqrstuvwxyz{|}~") == strlen(s)) {
		fputs(s, f);
		return;
	}
	v = json_string(s);
	if (v)
		put_json(f, v);
	else
		fputs("\"?\"", f);
	json_decref(v);
}

/* A value as put_str writes it: a string's text, else its JSON (null, a
 * number). */
static void put_val(FILE *f, const json_t *v)
{
	if (json_is_string(v))
		put_str(f, json_string_value(v));
	else
		put_json(f, v);
}

/* "YYYY-MM-DDTHH:MM:SS.mmmZ" in milliseconds since the epoch; -1 for any
 * other text. */
static int64_t time_ms(const json_t *v)
{
	const char *s = json_string_value(v);
	char whole[21];
	int64_t sec;

	if (!s || strlen(s) != 24 || s[19] != '.' || s[23] != 'Z' || strspn(s + 20, "0123456789") != 3)
		return -1;
	memcpy(whole, s, 19);
	whole[19] = 'Z';
	whole[20] = '\0';
	if (sj_time_parse(whole, &sec) < 0)
		return -1;
	return sec * 1000 + (s[20] - '0') * 100 + (s[21] - '0') * 10 + (s[22] - '0');
}

/* The key of a command: "STREAM ID" as the summary writes them; NULL when
 * out of memory. */
static char *cmd_key(const json_t *ev)
{
	char *k = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&k, &n);

	if (!f)
		return NULL;
	put_val(f, json_object_get(ev, "stream"));
	fputc(' ', f);
	put_val(f, json_object_get(ev, "id"));
	if (fclose(f) != 0) {
		free(k);
		return NULL;
	}
	return k;
}

static int add_item(struct asum_turn *t, int kind, char *key, char *text)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct asum_item *nit = realloc(t->it, cap * sizeof(*nit));

		if (!nit) {
			free(key);
			free(text);
			return -ENOMEM;
		}
		t->it = nit;
		t->cap = cap;
	}
	t->it[t->n++] = (struct asum_item){ .key = key,
					    .text = text,
					    .count = 1,
					    .kind = kind,
					    .open = kind == ITEM_CMD };
	return 0;
}

/* The item of kind and key (a command: the open one); NULL: none. */
static struct asum_item *find(struct asum_turn *t, int kind, const char *key)
{
	for (size_t i = t->n; i-- > 0;)
		if (t->it[i].kind == kind && (kind != ITEM_CMD || t->it[i].open) &&
		    strcmp(t->it[i].key, key) == 0)
			return &t->it[i];
	return NULL;
}

static bool flag(const json_t *ev, const char *name)
{
	return json_is_true(json_object_get(ev, name));
}

/* The end of a command of an exit line: "D ms, exit C, out N B, err M B"
 * and its flags. */
static void put_exit(FILE *f, const json_t *ev)
{
	int64_t a = time_ms(json_object_get(ev, "start")), b = time_ms(json_object_get(ev, "end"));
	const json_t *code = json_object_get(ev, "code");

	if (a >= 0 && b >= a)
		fprintf(f, "%" PRId64 " ms, ", b - a);
	else
		fputs("? ms, ", f);
	if (json_is_integer(code) || !json_is_integer(json_object_get(ev, "signal"))) {
		fputs("exit ", f);
		put_val(f, code);
	} else {
		fputs("signal ", f);
		put_val(f, json_object_get(ev, "signal"));
	}
	if (flag(ev, "timed_out"))
		fputs(", timed out", f);
	if (flag(ev, "cancelled"))
		fputs(", cancelled", f);
	if (flag(ev, "truncated"))
		fputs(", truncated", f);
	if (flag(ev, "lost"))
		fputs(", lost", f);
	if (flag(ev, "oom_killed"))
		fputs(", oom killed", f);
	fputs(", out ", f);
	put_val(f, json_object_get(ev, "stdout_bytes"));
	fputs(" B, err ", f);
	put_val(f, json_object_get(ev, "stderr_bytes"));
	fputs(" B", f);
}

/* A change line in `git status --short` form, its "what" after it. */
static void put_change(FILE *f, const json_t *ev)
{
	const char *op = json_string_value(json_object_get(ev, "op"));
	const json_t *what = json_object_get(ev, "what"), *w;
	bool content = false;
	size_t i;

	json_array_foreach(what, i, w)
		content = content || (json_is_string(w) && strcmp(json_string_value(w), "content") == 0);
	if (op && strcmp(op, "added") == 0)
		fputs("A  ", f);
	else if (op && strcmp(op, "removed") == 0)
		fputs(" D ", f);
	else
		fputs(content ? " M " : " m ", f);
	if (json_is_string(json_object_get(ev, "path"))) {
		put_val(f, json_object_get(ev, "path"));
	} else {
		fputs("base64:", f);
		put_val(f, json_object_get(ev, "path_base64"));
	}
	if (json_array_size(what)) {
		fputs(" (", f);
		json_array_foreach(what, i, w) {
			fputs(i ? ", " : "", f);
			put_val(f, w);
		}
		fputc(')', f);
	}
}

/* One text of an event into f's buffer, by the event; -ENOMEM, or 1 when the
 * event adds nothing. */
static int event_text(struct asum_turn *t, const char *event, const json_t *ev, FILE *f)
{
	const json_t *h = json_object_get(ev, "host");

	if (strcmp(event, "refused") == 0) {
		fputs("refused: ", f);
		put_str(f, json_string_value(json_object_get(ev, "reason")) ?: "?");
	} else if (strcmp(event, "exit") == 0) {
		put_exit(f, ev);
	} else if (strcmp(event, "rejected") == 0) {
		t->rejected++;
		fputs("  rejected ", f);
		put_val(f, json_object_get(ev, "stream"));
		fputc(' ', f);
		put_val(f, json_object_get(ev, "id"));
		fputs(": ", f);
		put_str(f, json_string_value(json_object_get(ev, "reason")) ?: "?");
	} else if (strcmp(event, "net") == 0) {
		fputs("  net ", f);
		put_val(f, json_object_get(ev, "verdict"));
		fputc(' ', f);
		if (json_is_string(h) && strchr(json_string_value(h), ':'))
			fputc('[', f), put_val(f, h), fputc(']', f); /* an IPv6 address */
		else
			put_val(f, h);
		fputc(':', f);
		put_val(f, json_object_get(ev, "port"));
	} else if (strcmp(event, "change") == 0) {
		fputs("  ", f);
		put_change(f, ev);
	} else if (strcmp(event, "changes") == 0) {
		fprintf(f,
			"  changes: %" JSON_INTEGER_FORMAT " added, %" JSON_INTEGER_FORMAT
			" removed, %" JSON_INTEGER_FORMAT " changed%s",
			json_integer_value(json_object_get(ev, "added")),
			json_integer_value(json_object_get(ev, "removed")),
			json_integer_value(json_object_get(ev, "changed")),
			flag(ev, "complete") ? "" : ", not complete");
	} else {
		return 1;
	}
	return 0;
}

static int new_turn(struct asum *s, const json_t *ev)
{
	struct asum_turn *t;
	char *head = NULL;
	size_t n = 0;
	FILE *f;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4;
		struct asum_turn *nt = realloc(s->t, cap * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		s->t = nt;
		s->cap = cap;
	}
	if (!(f = open_memstream(&head, &n)))
		return -ENOMEM;
	fputs("turn ", f);
	put_val(f, json_object_get(ev, "turn"));
	fputs(" (", f);
	put_val(f, json_object_get(ev, "mode"));
	fputc(')', f);
	if (fclose(f) != 0 || !head)
		return free(head), -ENOMEM;
	t = &s->t[s->n++];
	*t = (struct asum_turn){ .head = head };
	return 0;
}

/* An event of the turn at hand: an exec opens a command, its exit or refused
 * ends it; the rest adds a text (a net decision counted on its first). */
static int take_event(struct asum_turn *t, const char *event, const json_t *ev)
{
	struct asum_item *it;
	char *text = NULL, *key = NULL;
	size_t n = 0;
	FILE *f;
	int r;

	if (strcmp(event, "turn_end") == 0) {
		free(t->end);
		return asprintf(&t->end, "ended with exit %" JSON_INTEGER_FORMAT,
				json_integer_value(json_object_get(ev, "exit_code"))) < 0 ?
			       -ENOMEM :
			       0;
	}
	if (strcmp(event, "exec") == 0) {
		t->cmds++;
		if (!(key = cmd_key(ev)) || !(text = strdup("no end in the log")))
			return free(key), -ENOMEM;
		return add_item(t, ITEM_CMD, key, text);
	}
	if (!(f = open_memstream(&text, &n)))
		return -ENOMEM;
	r = event_text(t, event, ev, f);
	if (fclose(f) != 0 || !text)
		return free(text), -ENOMEM;
	if (r != 0)
		return free(text), 0;
	if (strcmp(event, "exit") == 0 || strcmp(event, "refused") == 0) {
		if (!(key = cmd_key(ev)))
			return free(text), -ENOMEM;
		it = find(t, ITEM_CMD, key);
		free(key);
		if (!it)
			return free(text), 0; /* no exec of it: audit-verify says so */
		free(it->text);
		it->text = text;
		it->open = false;
		return 0;
	}
	if (strcmp(event, "net") == 0) {
		const char *v = json_string_value(json_object_get(ev, "verdict"));

		if (!v || (strcmp(v, "allowed") != 0 && strcmp(v, "refused") != 0))
			return free(text), 0; /* a tunnel's end: no decision */
		if ((it = find(t, ITEM_NET, text))) {
			it->count++;
			return free(text), 0;
		}
		if (!(key = strdup(text)))
			return free(text), -ENOMEM;
		return add_item(t, ITEM_NET, key, text);
	}
	return add_item(t, ITEM_TEXT, NULL, text);
}

int asum_line(struct asum *s, const char *line, size_t len)
{
	json_error_t je;
	json_t *ev;
	const char *event;
	bool failed;
	int r = 0;

	sj_guard_begin();
	ev = sj_load(line, len, false, &je);
	failed = sj_guard_end();
	event = json_string_value(json_object_get(ev, "event"));
	if (failed)
		r = -ENOMEM;
	else if (!json_is_object(ev) || !event)
		r = 0;
	else if (strcmp(event, "turn_start") == 0)
		r = new_turn(s, ev);
	else if (s->n)
		r = take_event(&s->t[s->n - 1], event, ev);
	json_decref(ev);
	if (r < 0)
		s->short_of_memory = true;
	return r;
}

char *asum_text(const struct asum *s)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);

	if (!f)
		return NULL;
	for (size_t i = 0; i < s->n; i++) {
		const struct asum_turn *t = &s->t[i];

		fprintf(f, "%s: %" PRIu64 " command%s, %" PRIu64 " rejected, %s\n", t->head, t->cmds,
			t->cmds == 1 ? "" : "s", t->rejected, t->end ? t->end : "no turn_end");
		for (size_t j = 0; j < t->n; j++) {
			if (t->it[j].kind == ITEM_CMD)
				fprintf(f, "  cmd %s: %s\n", t->it[j].key, t->it[j].text);
			else if (t->it[j].kind == ITEM_NET)
				fprintf(f, "%s x%" PRIu64 "\n", t->it[j].text, t->it[j].count);
			else
				fprintf(f, "%s\n", t->it[j].text);
		}
	}
	if (!s->n)
		fputs("no turn in the log\n", f);
	if (s->short_of_memory)
		fputs("out of memory: lines are missing from this summary\n", f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

void asum_free(struct asum *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		for (size_t j = 0; j < s->t[i].n; j++) {
			free(s->t[i].it[j].key);
			free(s->t[i].it[j].text);
		}
		free(s->t[i].it);
		free(s->t[i].head);
		free(s->t[i].end);
	}
	free(s->t);
	free(s);
}
