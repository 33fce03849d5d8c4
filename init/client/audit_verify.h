/* audit_verify.h - `turninit audit-verify LOG [--head HEX]... [--summary]`: the offline check
 * of an audit log (policy/auditlog.h, docs/audit.md "Checking a log"). */
#ifndef TURNINIT_AUDIT_VERIFY_H
#define TURNINIT_AUDIT_VERIFY_H

#include "util/cli.h"

/* audit_verify_main - read o->audit_verify_log ("-": stdin) line by line and
 * check it (alog_line), with each of o->audit_heads (64 hex digits) a head
 * held outside the log: with any, every turn needs one (alog_finish). Prints one line per finding or note on
 * stdout, "line N: TEXT" ("note: line N: TEXT" for a note), then a summary:
 * "LOG: N lines, T turns: whole, head HEX" or "LOG: N lines, T turns: F
 * findings". With o->audit_summary, the summary of the log (asum_text,
 * policy/auditsum.h) comes between the findings and that last line, and the
 * status is the same. Returns 0 when there is no finding, 1 when there is one, 125
 * when the log cannot be read or a head is not 64 hex digits (one line
 * on stderr). Signals are unblocked first: a long check stops at ^C. */
int audit_verify_main(const struct cli_options *o);

#endif
