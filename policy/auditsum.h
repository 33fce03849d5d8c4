/* auditsum.h - the summary of an audit log a person reads (turninit
 * audit-verify --summary, docs/audit.md "A summary"): per turn, one line per
 * command, the proxy's decisions counted by host and port, and the change
 * record in `git status` form. Bytes in, text out; it checks nothing (the
 * check is policy/auditlog.h's).
 * Sources: the events of docs/audit.md (policy/audit.schema.json), JSON as
 * policy/sjson.h reads it, `git status --short` (git-status(1)). */
#ifndef TURNINIT_AUDITSUM_H
#define TURNINIT_AUDITSUM_H

#include <stdbool.h>
#include <stddef.h>

struct asum;

/* asum_new - an empty summary. Returns NULL when out of memory. */
struct asum *asum_new(void);

/* asum_line - take the next log line: len bytes at line, the newline
 * excluded. A line that is not a strict JSON object with a known "event",
 * or comes before any turn_start, adds nothing (audit-verify reports it).
 * Returns 0, or -ENOMEM (the summary then says it is short of lines). */
int asum_line(struct asum *s, const char *line, size_t len);

/* asum_text - the summary of the lines taken, as text ending in a newline,
 * malloc'd (NULL when out of memory). Per turn, in order:
 *   "turn ID (MODE): N commands, R rejected, ended with exit C" (or "no
 *   turn_end"), then each command in the order of its exec:
 *   "  cmd STREAM ID: D ms, exit C, out N B, err M B" ("signal S" for a
 *   killed one, then ", timed out", ", cancelled", ", truncated", ", lost",
 *   ", oom killed" as they hold; "refused: REASON"; "no end in the log"),
 *   "  rejected STREAM ID: REASON", "  net VERDICT HOST:PORT xN" (allowed
 *   and refused, each host and port once, in the order first seen),
 *   "  changes: A added, R removed, C changed[, not complete]", and each
 *   change line as `git status --short` writes one: "A  PATH", " D PATH",
 *   " M PATH" (its content changed), " m PATH" (mode or owner only), the
 *   change's "what" after it in parentheses. An id, host, reason or path
 *   with a byte outside printable ASCII, a space, a quote or a backslash is
 *   written as a JSON string; a path_base64 as "base64:B64". D is exit's
 *   end minus its start, in milliseconds. */
char *asum_text(const struct asum *s);

/* asum_free - free s (NULL: nothing). */
void asum_free(struct asum *s);

#endif
