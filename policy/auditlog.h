/* auditlog.h - the offline check of an audit log (turninit audit-verify,
 * docs/audit.md "Checking a log"): each line strict JSON, an object with a
 * known event and its chain link, the chain whole from each turn_start on,
 * every exec answered by its exit or refused, and the last line's digest
 * equal to a head held elsewhere.
 * Sources: BLAKE2b (RFC 7693, libsodium crypto_generichash, 32-byte
 * digests), JSON (RFC 8259, strict as policy/sjson.h reads it). */
#ifndef TURNINIT_AUDITLOG_H
#define TURNINIT_AUDITLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ALOG_HASH_BYTES 32        /* BLAKE2b-256 */
#define ALOG_LINE_MAX (16u << 20) /* bytes of one log line, newline excluded */
#define ALOG_HEADS_MAX 256        /* distinct heads one check takes (--head) */

/* report(ctx, line, text): one finding (line > 0: the line it names; 0: the
 * log as a whole), or one note when note is true (said, not a failure). */
typedef void (*alog_report_fn)(void *ctx, uint64_t line, bool note, const char *text);

struct alog_pending;
struct alog_turn;

/* A head held outside the log: the digest of the line it anchors. */
struct alog_head {
	uint8_t digest[ALOG_HASH_BYTES];
	uint64_t line; /* the last line whose digest it is, 0: none */
};

struct alog_check {
	alog_report_fn report;
	void *ctx;
	uint64_t lines; /* lines read */
	uint64_t turns; /* turn_start lines */
	uint64_t findings;
	bool in_turn;                  /* a turn_start seen, its turn_end not */
	bool turn_ended;               /* the last turn's turn_end seen */
	uint64_t turn_first;           /* the line of the last turn_start */
	char turn[33];                 /* its id */
	uint8_t last[ALOG_HASH_BYTES]; /* the digest of the last line read */
	struct alog_pending *pending;  /* execs without their end, in order */
	size_t n_pending, cap_pending;
	bool stopped;           /* a line past ALOG_LINE_MAX: no more is read */
	uint64_t outside;       /* lines of the run outside any turn at hand */
	struct alog_turn *seen; /* every turn, in order: its id, first and last line */
	size_t n_seen, cap_seen;
	struct alog_head heads[ALOG_HEADS_MAX]; /* the heads given, distinct */
	size_t n_heads;
};

/* alog_init - an empty check; head (ALOG_HASH_BYTES, or NULL) is a head
 * held outside the log (alog_add_head); report is called for every finding
 * and note. */
void alog_init(struct alog_check *c, const uint8_t *head, alog_report_fn report, void *ctx);

/* alog_add_head - one more head (ALOG_HASH_BYTES) held outside the log, before
 * the first line. A head anchors the turn one of whose lines it is the
 * digest of, whatever the order the heads come in; one given twice counts
 * once. Errors: -E2BIG past ALOG_HEADS_MAX distinct heads. */
int alog_add_head(struct alog_check *c, const uint8_t head[ALOG_HASH_BYTES]);

/* alog_line - check the next line: len bytes at line (the newline excluded;
 * newline false for a last line without one, which is a finding: the log was
 * cut inside a line). Findings: not strict JSON or not an object; an unknown
 * "event"; "prev" not 64 lowercase hex digits; turn_start's "turn" not 32;
 * a chain link that is not the digest of the line before (turn_start: of its
 * turn id); a line before any turn_start, or after a turn_end but not a
 * turn_start; a line whose first key is not "event" or second not "prev"
 * (turninit writes them so); an exit, refused, cancel or signal with no
 * open exec of its "stream" and "id", an exec while one of them is open (a
 * rejected line, a request that ran nothing, is paired with none; it needs a
 * "stream", an "id" string or null and a "reason"); a
 * turn_end whose "lines" is not the turn's count. A turn_start after a turn
 * without turn_end is a note. */
void alog_line(struct alog_check *c, const char *line, size_t len, bool newline);

/* alog_finish - the end of the log: execs still without their end are
 * findings after a turn_end, a note when the turn has none (it was cut
 * short: killed, or still running). With heads given: each must be the
 * digest of a line, else a finding; the head of a turn's last line anchors
 * it; one of an earlier line anchors it up to that line, and the lines after
 * it are a note when they are only its change record and turn_end (written
 * after the last exit event), else a finding that says how many of the
 * turn's lines follow it; a turn that no head given anchors is a finding that
 * names it (a whole turn put in beside the real one has a chain of its own,
 * and no head the client holds). An empty log is a finding. Returns the
 * number of findings; frees what c holds. */
uint64_t alog_finish(struct alog_check *c);

#endif
