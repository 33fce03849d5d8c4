/* audit.h - the audit log of serve and listen mode (docs/audit.md): one JSON
 * object a line per event (turn start, each exec request and how it ended),
 * each line one write(2) to a file or fd turninit opened while it was still
 * root, close-on-exec and append-only, in no place a command can write.
 * Sources: open(2) O_APPEND, write(2) on pipes (PIPE_BUF), BLAKE2b (RFC 7693,
 * libsodium crypto_generichash), RFC 3339 times. */
#ifndef TURNINIT_AUDIT_H
#define TURNINIT_AUDIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "policy/error.h"
#include "policy/events.h"
#include "policy/manifest.h"
#include "policy/netrec.h"
#include "policy/request.h"
#include "trust/load.h"

#define AUDIT_HASH_BYTES 32 /* BLAKE2b-256 */
#define AUDIT_HEAD_HEX (2 * AUDIT_HASH_BYTES + 1)
#define AUDIT_TURN_BYTES 16 /* a turn id: 128 random bits, 32 hex digits */

/* Every line carries "prev", the BLAKE2b-256 (hex) of the line before it,
 * its exact bytes with the newline; turn_start's is that of its "turn", the
 * 32 hex digits (docs/audit.md, "The chain"). */

/* audit_open - open the log named by spec, checked against m: "PATH" (absolute;
 * created mode 0600 if absent, else appended to; O_NOFOLLOW) or "fd:N" (N >= 3,
 * an fd open for writing that turninit inherited). Call it before privileges
 * are dropped. Refused, so that no command can write, truncate or replace the
 * log: PATH at or under home, a landlock.writable path or a device path
 * Landlock leaves writable (as given and as resolved through /proc/self/fd);
 * anything but a regular file for PATH. For fd:N: a directory, a device, or
 * anything but a file, a pipe or a socket; a regular file or a FIFO with a path
 * is checked as PATH is, at the path /proc/self/fd/N names, which must lead to
 * that very file (a deleted file, or one opened outside the container, is
 * refused), and a FIFO may not be readable by group or others; a pipe or a
 * socket is taken as it is. For every file: the file and its directory not
 * owned by m->uid, nor writable by group or others. The fd is made
 * close-on-exec (and O_APPEND when a regular file). m must outlive the log:
 * audit_exec names an exec's env by m's filter.
 * Errors: -EINVAL (a malformed spec), -EBADF (fd:N not open, not writable, or
 * of a kind that is no log), -EPERM (a place a command could write, or one
 * turninit cannot check), -errno of open(2)/fstat(2)/stat(2); err names the
 * spec. */
int audit_open(const char *spec, const struct mf_manifest *m, struct tn_error *err);

/* audit_probe - what audit_open would answer for spec and m, for verify: the
 * same checks and refusals, word for word, but no log is kept open, and a
 * PATH that did not exist is removed again after the check (its directory's
 * times change). Errors: as audit_open. */
int audit_probe(const char *spec, const struct mf_manifest *m, struct tn_error *err);

/* audit_turn_start - the first line: a fresh turn id (getrandom(2), the
 * chain's first link), mode ("serve", "mcp" or "listen"), the manifest's
 * source, signing key id and BLAKE2b-256 digest of its exact bytes, and
 * protections (verify_protections' record, not stolen; must not be NULL).
 * Errors: -EIO when the line cannot be written whole (the turn must not
 * start), -errno of getrandom(2). */
int audit_turn_start(const char *mode, const struct load_result *pol, json_t *protections,
		     struct tn_error *err);

/* Every request line names its stream: 0 in serve mode, in listen mode the
 * connection's number (1 for the first accepted, and so on), since ids are
 * unique only within a stream. */

/* audit_exec - an exec request, before it runs: id, command (or argv), cwd,
 * the names of the request's env that the manifest's filter admits, in the
 * request's order (never the values), timeout_s; "filter_in_command": true
 * when the seccomp filter is loaded in the command rather than in its keeper
 * (filter_in_command; absent otherwise).
 * Returns 0 (also when no log is open) or -EIO: the command must not run. */
int audit_exec(unsigned stream, const struct rq_request *rq, const char *cwd, uint32_t timeout_s,
	       bool filter_in_command);

/* audit_refused - an exec request that ran nothing, and why. */
void audit_refused(unsigned stream, const char *id, const char *reason);

/* audit_rejected - a request that ran nothing and has no exec line to pair
 * with: a line that is not a valid request (rq NULL; id the one it had, ""
 * or NULL: null), an exec with the id of a running command of its stream
 * (rq: its command or argv is logged). reason is the error event's message.
 * {"event":"rejected", "time", "stream", "id", "reason"[, "command"|"argv"]};
 * a line a verifier never pairs with an exec, so the running command's
 * exec and exit stay each other's. */
void audit_rejected(unsigned stream, const char *id, const struct rq_request *rq, const char *reason);

/* audit_credential - a credential request whose value is taken, before it
 * is handed to the proxy: {"event":"credential", "time", "stream", "id",
 * "name"}, the name only, never the value (docs/audit.md). Returns 0 (also
 * when no log is open) or -EIO: the value must not be taken. */
int audit_credential(unsigned stream, const char *id, const char *name);

/* audit_control - a cancel or signal request (signo 0 for cancel). */
void audit_control(unsigned stream, const char *id, int signo);

/* audit_net - a decision of turninit's proxy (policy/netrec.h): {"event":"net",
 * "time", "stream", "id", "verdict", "request", "host", "port", "address",
 * "rule", "reason", "bytes_out", "bytes_in", "duration_ms"} (docs/audit.md);
 * stream and id: the command whose port of the proxy the connection came
 * to, both null for the shared port. Nothing without a log. */
void audit_net(const struct net_record *r);

/* audit_exit - how a command ended: its start (CLOCK_REALTIME, ms since the
 * epoch) and end (start + e->duration_ms), what its exit event says (e: wait
 * status, timed_out, truncated, lost, oom_killed), cancelled, and the bytes it
 * wrote to stdout and stderr (read by turninit, kept or not), with the
 * BLAKE2b-256 of each stream's bytes, all of them (crypto_generichash), and
 * read_back (audit_read_back's, or NULL: null). */
void audit_exit(unsigned stream, const char *id, int pid, uint64_t start_ms, const struct ev_end *e,
		bool cancelled, uint64_t out_bytes, uint64_t err_bytes,
		const uint8_t out_digest[static AUDIT_HASH_BYTES],
		const uint8_t err_digest[static AUDIT_HASH_BYTES], json_t *read_back);

/* audit_read_back - the command's sandbox as the kernel shows it, read from
 * /proc/PID/status once it has exec'd (proc(5)): {"cap_inh", "cap_prm",
 * "cap_eff", "cap_bnd", "cap_amb" (the masks as hex strings), "no_new_privs",
 * "seccomp" (2: a filter), "seccomp_filters"} (a key the kernel does not
 * print is absent); NULL without a log, or when pid is gone or is no child
 * of ppid (its keeper) any more. The caller owns the object; audit_exit logs
 * it as the exit line's "read_back" (not stolen). */
json_t *audit_read_back(int pid, int ppid);

/* audit_turn_end - the last line: turninit's exit status and the turn's
 * line count (turn_end's own included); then, on stderr, one line with the
 * turn id, the count and the final head, the digest of turn_end's line:
 * "turninit: audit: turn ID ended, N lines, head HEX". */
void audit_turn_end(int exit_code);

/* audit_emit - write ev (stolen; its "event" key first) as a line, with
 * "time" after "event" (and the chain's "prev" between them); for events
 * made elsewhere (changes.h). Returns 0 (also without a log), -ENOMEM, or
 * -errno of write(2). */
int audit_emit(json_t *ev);

/* audit_on - a log is open: output digests are worth computing. */
bool audit_on(void);

/* audit_head - the chain's head (the digest of the last line written) as 64
 * hex digits and a NUL in hex; false when no log is open or no line is
 * written yet. */
bool audit_head(char hex[static AUDIT_HEAD_HEX]);

/* audit_wall_ms - CLOCK_REALTIME in milliseconds since the epoch. */
uint64_t audit_wall_ms(void);

#endif
