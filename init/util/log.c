/* log.c - see log.h. */
#include "util/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The line on fd; errnum (sign ignored) != 0 appends ": strerror(errnum)". */
static void log_vline(int fd, int errnum, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
static void log_vline(int fd, int errnum, const char *fmt, va_list ap)
{
	int saved = errno;
	char buf[1024];
	size_t n;

	memcpy(buf, "turninit: ", 10);
	vsnprintf(buf + 10, sizeof(buf) - 11, fmt, ap);
	n = strlen(buf);
	if (errnum != 0)
		snprintf(buf + n, sizeof(buf) - 1 - n, ": %s", strerror(errnum < 0 ? -errnum : errnum));
	n = strlen(buf);
	/* One line, whatever a path or option from the launcher holds: printable
	 * ASCII only, since C1 controls (0x80-0x9f), U+0085 NEL and U+2028/9
	 * (line and paragraph separators) are line ends or terminal escapes to
	 * some readers. A non-ASCII letter shows as '?' too. */
	for (size_t i = 10; i < n; i++)
		if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f)
			buf[i] = '?';
	buf[n++] = '\n';
	(void)!write(fd, buf, n);
	errno = saved;
}

void log_line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(STDERR_FILENO, 0, fmt, ap);
	va_end(ap);
}

void log_line_fd(int fd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(fd, 0, fmt, ap);
	va_end(ap);
}

void log_errno(int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(STDERR_FILENO, errnum, fmt, ap);
	va_end(ap);
}
