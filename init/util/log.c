/* log.c - see log.h. */
#include "util/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void log_vline(int fd, const char *fmt, va_list ap)
{
	int saved = errno;
	char buf[1024];
	size_t n;

	memcpy(buf, "turninit: ", 10);
	vsnprintf(buf + 10, sizeof(buf) - 11, fmt, ap);
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
	log_vline(STDERR_FILENO, fmt, ap);
	va_end(ap);
}

void log_line_fd(int fd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(fd, fmt, ap);
	va_end(ap);
}
