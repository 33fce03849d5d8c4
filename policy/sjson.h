/* sjson.h - the strict-JSON front end of policy/ and its one time format.
 *
 * Owns how untrusted JSON text becomes a jansson value (the manifest, a
 * request line): duplicate keys refused, "\u0000" refused, UTF-8 only, and a
 * parse during which any allocation failed refused as a whole, since jansson
 * can then return a value that differs from the bytes. Owns RFC 3339 UTC times
 * too, parsed for the manifest's expiry and written for it and the audit log.
 * Sources: RFC 8259, RFC 3339, jansson's json_loadb and json_set_alloc_funcs.
 */
#ifndef TURNINIT_SJSON_H
#define TURNINIT_SJSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/error.h"

/* sj_load - parse len bytes of buf as one JSON text (any: a scalar too, else
 * an array or object only), strict: a duplicate key, invalid UTF-8 and a NUL
 * in a string are refused. Returns the value, or NULL with je filled. Call it,
 * and everything else that reads the value, between sj_guard_begin and
 * sj_guard_end. */
json_t *sj_load(const void *buf, size_t len, bool any, json_error_t *je);

/* sj_guard_begin, sj_guard_end - note every jansson allocation that fails in
 * between: jansson's lexer drops a byte when one does and goes on, so a value
 * parsed then may differ from the bytes. sj_guard_end returns true when one
 * failed: the caller must refuse, whatever the parse returned. Not nested,
 * not thread-safe (it swaps jansson's allocator). */
void sj_guard_begin(void);
bool sj_guard_end(void);

/* sj_guard_wipe - after sj_guard_begin, until sj_guard_end: every block
 * jansson frees is zeroed first (sodium_memzero over its malloc_usable_size),
 * its token buffer and strings included, for a text that may hold a
 * secret (a credential request line, policy/request.c). */
void sj_guard_wipe(void);

/* sj_error - one line for a failed sj_load, from je: "duplicate key "K" (line
 * L, column C)", "not valid UTF-8 (...)", "number out of range: ... (...)",
 * "not valid JSON: ... (...)". Returns -EBADMSG (-EINVAL for a number out of
 * range, -ENOMEM for jansson's out of memory), with err filled. */
int sj_error(const json_error_t *je, struct tn_error *err);

/* sj_time_parse - an RFC 3339 UTC timestamp of the exact form
 * "YYYY-MM-DDTHH:MM:SSZ" (years 0000..9999, no leap second) in seconds since
 * the epoch. Returns 0, or -EINVAL for any other text; ret only on success. */
int sj_time_parse(const char *s, int64_t *ret_seconds);

#define SJ_TIME_MAX 40 /* bytes of a buffer for sj_time_format (24 used) */

/* sj_time_format - ms (milliseconds since the epoch) as RFC 3339 UTC:
 * "YYYY-MM-DDTHH:MM:SSZ", or with millis "YYYY-MM-DDTHH:MM:SS.mmmZ".
 * Returns 0, or -ERANGE outside years 0000..9999 (buf untouched). */
int sj_time_format(int64_t ms, bool millis, char buf[static SJ_TIME_MAX]);

#endif
