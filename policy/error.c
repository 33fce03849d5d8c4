/* error.c - the tn_error helpers (see error.h). */
#include "policy/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* err_set and err_errno: the message, and with_errno ": strerror(code)". */
static int err_vset(struct tn_error *err, int code, bool with_errno, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
static int err_vset(struct tn_error *err, int code, bool with_errno, const char *fmt, va_list ap)
{
	int saved = errno;

	if (code < 0)
		code = -code;
	if (code == 0)
		code = EINVAL;
	if (err) {
		int n;

		err->code = code;
		n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		if (with_errno && n >= 0 && (size_t)n < sizeof(err->msg))
			snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, ": %s", strerror(code));
	}
	errno = saved;
	return -code;
}

int err_set(struct tn_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = err_vset(err, code, false, fmt, ap);
	va_end(ap);
	return r;
}

int err_errno(struct tn_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = err_vset(err, code, true, fmt, ap);
	va_end(ap);
	return r;
}

int err_prefix(struct tn_error *err, const char *fmt, ...)
{
	int saved = errno;
	char ctx[TN_ERROR_MSG_MAX], old[TN_ERROR_MSG_MAX];
	va_list ap;

	if (!err)
		return -EINVAL;
	if (err->code == 0)
		err->code = EINVAL;
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	if (snprintf(err->msg, sizeof(err->msg), "%s: %s", ctx, old) >= (int)sizeof(err->msg))
		err->msg[sizeof(err->msg) - 1] = '\0'; /* truncated, still one line */
	errno = saved;
	return -err->code;
}

const char *err_shown(const char *s, size_t n, char buf[ERR_SHOWN_MAX])
{
	size_t k = 0, i;

	for (i = 0; i < n && s[i] && i < 64; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '\\' && ch != '"')
			buf[k++] = (char)ch;
		else
			k += (size_t)snprintf(buf + k, 5, "\\x%02x", ch);
	}
	if (i < n && s[i]) {
		memcpy(buf + k, "...", 3);
		k += 3;
	}
	buf[k] = '\0';
	return buf;
}
