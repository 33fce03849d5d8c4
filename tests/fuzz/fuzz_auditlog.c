/* fuzz_auditlog.c - libFuzzer target for alog_line and alog_finish
 * (policy/auditlog.c), the audit log check of turninit audit-verify.
 *
 * The input is a log as-is, split on "\n" as init/client/audit_verify.c
 * splits it (a last piece without one given as cut); an input that starts
 * with a NUL byte and has 32 bytes after it takes those as the head to end
 * at, and the log follows them (no audit line starts with a NUL). Each line
 * is handed over in an exact-size heap copy (no NUL added: a read past len is
 * an ASan error). Invariants that abort: every report is one non-empty line
 * naming a line already read (0: the log as a whole); alog_finish returns the
 * findings reported; the lines read are the pieces given; an empty log, or
 * one whose last line has no newline, has a finding; a log without findings
 * checked against a head holds a line that is that head (the BLAKE2b-256 of
 * the line with its newline: the line the head anchors, which only the
 * change record and turn_end may follow in its turn, or the last).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "policy/auditlog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct said {
	const struct alog_check *c;
	uint64_t findings;
};

static void report(void *ctx, uint64_t line, bool note, const char *text)
{
	struct said *s = ctx;

	if (!text || text[0] == '\0' || strchr(text, '\n') || line > s->c->lines)
		abort();
	if (!note)
		s->findings++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct alog_check c;
	struct said s = { .c = &c };
	const uint8_t *head = NULL;
	uint8_t last[ALOG_HASH_BYTES];
	uint64_t pieces = 0, found;
	size_t start = 0;
	bool cut = false, anchored = false;

	if (size > ALOG_HASH_BYTES && data[0] == '\0') {
		head = data + 1;
		data += 1 + ALOG_HASH_BYTES;
		size -= 1 + ALOG_HASH_BYTES;
	}
	alog_init(&c, head, report, &s);
	while (start < size) {
		const uint8_t *nl = memchr(data + start, '\n', size - start);
		size_t len = nl ? (size_t)(nl - data) - start : size - start;
		char *copy = malloc(len ? len : 1);

		if (!copy)
			abort();
		memcpy(copy, data + start, len);
		alog_line(&c, copy, len, nl != NULL);
		free(copy);
		pieces++;
		cut = nl == NULL;
		if (head) {
			crypto_generichash_state h;

			crypto_generichash_init(&h, NULL, 0, sizeof(last));
			crypto_generichash_update(&h, data + start, len);
			if (nl)
				crypto_generichash_update(&h, (const uint8_t *)"\n", 1);
			crypto_generichash_final(&h, last, sizeof(last));
			anchored = anchored || memcmp(last, head, sizeof(last)) == 0;
		}
		start += len + 1;
	}
	if (c.lines != pieces)
		abort();
	found = alog_finish(&c);
	if (found != s.findings)
		abort();
	if ((pieces == 0 || cut) && found == 0)
		abort();
	if (head && found == 0 && !anchored)
		abort();
	return 0;
}
