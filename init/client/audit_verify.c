/* audit_verify.c - see audit_verify.h. */
#define _GNU_SOURCE
#include "client/audit_verify.h"

#include <errno.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/auditlog.h"
#include "policy/auditsum.h"
#include "policy/lineframe.h"
#include "util/log.h"

#define READ_CHUNK (1u << 20) /* bytes read at once past the longest line */

static void print_finding(void *ctx, uint64_t line, bool note, const char *text)
{
	(void)ctx;
	if (line)
		printf("%sline %llu: %s\n", note ? "note: " : "", (unsigned long long)line, text);
	else
		printf("%s%s\n", note ? "note: " : "", text);
}

/* Each --head of o into c; false (said) when one is not 64 hex digits or
 * there are more than c takes. */
static bool take_heads(const struct cli_options *o, struct alog_check *c)
{
	uint8_t head[ALOG_HASH_BYTES];

	for (int i = 0; i < o->n_audit_heads; i++) {
		const char *h = o->audit_heads[i];

		if (strlen(h) != 2 * ALOG_HASH_BYTES ||
		    strspn(h, "0123456789abcdefABCDEF") != 2 * ALOG_HASH_BYTES ||
		    sodium_hex2bin(head, sizeof(head), h, strlen(h), NULL, NULL, NULL) != 0) {
			log_line("audit-verify: --head %.80s: not 64 hex digits (a BLAKE2b-256 head)", h);
			return false;
		}
		if (alog_add_head(c, head) < 0) {
			log_line("audit-verify: more than %d heads given", ALOG_HEADS_MAX);
			return false;
		}
	}
	return true;
}

/* Each line of f into c, and into s when there is one; 0, or the errno of a
 * failed read (ENOMEM: no buffer). Lines are cut by the framer
 * (policy/lineframe.h), not by getdelim(3): a line has a bound (a NUL in it
 * is a byte like another, and the parse refuses it); one past it is handed
 * on as it was read so far, and ends the check. */
static int read_lines(FILE *f, struct alog_check *c, struct asum *s)
{
	struct lf_frame fr = { .max = ALOG_LINE_MAX };
	size_t cap = ALOG_LINE_MAX + 1 + READ_CHUNK;
	size_t start = 0, end = 0; /* the bytes not yet cut: buf[start, end) */
	char *buf = malloc(cap);
	bool eof = false;
	int e = 0;

	if (!buf)
		return ENOMEM;
	while (!c->stopped) {
		const char *line;
		size_t len, got;
		enum lf_kind k = lf_next(&fr, buf, end, &start, &line, &len);
		bool cut = k == LF_MORE && eof && end > start; /* the last line: no newline */

		if (cut) {
			line = buf + start;
			len = end - start;
		}
		if (k != LF_MORE || cut) {
			alog_line(c, line, len, k == LF_LINE);
			if (s)
				asum_line(s, line, len);
			if (k != LF_LINE)
				break;
			continue;
		}
		if (eof)
			break;
		memmove(buf, buf + start, end - start);
		end -= start;
		start = 0;
		got = fread(buf + end, 1, cap - end, f);
		end += got;
		if (got == 0) {
			if (ferror(f)) {
				e = errno ? errno : EIO;
				break;
			}
			eof = true;
		}
	}
	free(buf);
	return e;
}

int audit_verify_main(const struct cli_options *o)
{
	const char *path = o->audit_verify_log;
	char hex[2 * ALOG_HASH_BYTES + 1];
	struct alog_check c; /* about 10 KiB, with its heads */
	struct asum *s = NULL;
	sigset_t none;
	FILE *f;
	char *text;
	uint64_t found;
	int e;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* no sodium_init(), as in policy/signature.c: BLAKE2b needs none */
	alog_init(&c, NULL, print_finding, NULL);
	if (!take_heads(o, &c))
		return 125; /* c holds nothing allocated before its first line */
	if (o->audit_summary && !(s = asum_new())) {
		log_line("audit-verify: out of memory");
		return 125;
	}
	f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	if (!f) {
		log_errno(errno, "audit-verify: %s", path);
		asum_free(s);
		return 125;
	}
	e = read_lines(f, &c, s);
	if (f != stdin)
		fclose(f);
	if (e) {
		log_errno(e, "audit-verify: %s: reading it", path);
		asum_free(s);
		return 125;
	}
	sodium_bin2hex(hex, sizeof(hex), c.last, sizeof(c.last));
	found = alog_finish(&c);
	/* the summary after the findings, before the verdict: the last line
	 * says whether the log it sums up is whole */
	if (s) {
		text = asum_text(s);
		fputs(text ? text : "the summary: out of memory\n", stdout);
		free(text);
		asum_free(s);
	}
	if (found)
		printf("%s: %llu lines, %llu turns: %llu finding%s\n", path, (unsigned long long)c.lines,
		       (unsigned long long)c.turns, (unsigned long long)found, found == 1 ? "" : "s");
	else
		printf("%s: %llu lines, %llu turns: whole, head %s\n", path, (unsigned long long)c.lines,
		       (unsigned long long)c.turns, hex);
	fflush(stdout);
	return found ? 1 : 0;
}
