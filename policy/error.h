/* error.h - the error contract shared by policy/ and init/.
 *
 * A function that can fail returns a negative errno-style int and fills a
 * struct tn_error with one human-readable line; callers add context as the
 * error rises ("manifest: env.allow[3]: ..."). A negative return with a
 * non-NULL err always means err is filled. Library code never prints.
 *
 * The second contract: what runs in a command's child after fork (spawn.c's
 * child steps before execve: sc_load, ll_restrict, spawn_close_fds) is
 * async-signal-safe, returns -errno only and writes no buffer; the child's own
 * step list puts the message into a tn_error on its stack and sends it to the
 * parent on the report pipe.
 */
#ifndef TURNINIT_ERROR_H
#define TURNINIT_ERROR_H

#include <stddef.h>

#define TN_ERROR_MSG_MAX 512

struct tn_error {
	int code;                   /* positive errno value, 0 when unset */
	char msg[TN_ERROR_MSG_MAX]; /* one line, no trailing newline */
};

/* err_set - record an error.
 * code: a positive errno value (EINVAL, EBADMSG, ...); the sign is ignored.
 * Returns -code, so callers can write `return err_set(err, EINVAL, ...)`.
 * err may be NULL (the message is dropped). Preserves errno. */
int err_set(struct tn_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* err_errno - err_set, then ": " and strerror(code) appended: the one place
 * that renders an errno, so call sites never format it by hand.
 * `return err_errno(err, errno, "open %s", path)` gives
 * "open /x: No such file or directory" and returns -ENOENT. */
int err_errno(struct tn_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* err_prefix - prepend "CONTEXT: " to the recorded message, keeping its code.
 * Returns -err->code (or -EINVAL when no error was recorded). Preserves errno. */
int err_prefix(struct tn_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* err_shown - a string from untrusted input made safe for a one-line message:
 * printable ASCII is kept, '\\', '"' and every other byte become \xNN, at most
 * 64 input bytes are shown (then "..."); s ends at n bytes or its first NUL.
 * Returns buf, which must hold ERR_SHOWN_MAX bytes. */
#define ERR_SHOWN_MAX 300
const char *err_shown(const char *s, size_t n, char buf[ERR_SHOWN_MAX]);

#endif
