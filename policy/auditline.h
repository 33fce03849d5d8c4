/* auditline.h - the audit log's line as bytes (docs/audit.md, "The chain"):
 * the one encoding that init/serve/audit.c writes and hashes and that
 * auditlog.c (turninit audit-verify) reads and hashes back, so that the
 * writer and the checker cannot drift apart.
 * Sources: BLAKE2b (RFC 7693, libsodium crypto_generichash, 32-byte digests),
 * JSON (RFC 8259; jansson's compact, ordered, ASCII-only dump). */
#ifndef TURNINIT_AUDITLINE_H
#define TURNINIT_AUDITLINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ALINE_HASH_BYTES 32 /* BLAKE2b-256: a line's digest, a chain link */
#define ALINE_TURN_HEX 32   /* a turn id: 128 bits as lowercase hex digits */

/* aline_encode - ev as one line of the log: {"event":E,"prev":P,...}, E ev's
 * "event", P prev as 64 lowercase hex digits, then ev's other keys in their
 * order; compact, every non-ASCII character escaped (U+2028, U+2029 and U+0085
 * end a line for some readers), and a newline. ev is not changed and must
 * have an "event" string and no "prev". *ret_line (malloc(3), NUL after the
 * newline) holds *ret_len bytes, the newline included: the bytes to write
 * and to hash (aline_digest). Errors: -EINVAL (no "event" string, or a
 * "prev"), -ENOMEM. */
int aline_encode(const json_t *ev, const uint8_t prev[ALINE_HASH_BYTES], char **ret_line, size_t *ret_len);

/* aline_digest - the digest that links the next line to this one: the
 * BLAKE2b-256 of len bytes at line, then of a newline when newline is true
 * (a line is hashed with its newline; a log cut inside its last line has
 * none). */
void aline_digest(const char *line, size_t len, bool newline, uint8_t ret[ALINE_HASH_BYTES]);

/* aline_first_link - turn_start's "prev", the chain's first link: the
 * BLAKE2b-256 of the turn id's ALINE_TURN_HEX hex digits (no NUL). */
void aline_first_link(const char turn[static ALINE_TURN_HEX], uint8_t ret[ALINE_HASH_BYTES]);

/* aline_in_order - the len bytes at line start as aline_encode starts a line
 * of event: {"event":"EVENT","prev":" (a line whose keys were reordered, or
 * whose JSON was reformatted, was not written by turninit). */
bool aline_in_order(const char *line, size_t len, const char *event);

#endif
