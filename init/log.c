/* log.c - see log.h. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void log_line(const char *fmt, ...)
{
	int saved = errno;
	char buf[1024];
	size_t n;
	va_list ap;

	memcpy(buf, "turninit: ", 10);
	va_start(ap, fmt);
	vsnprintf(buf + 10, sizeof(buf) - 11, fmt, ap);
	va_end(ap);
	n = strlen(buf);
	buf[n++] = '\n';
	(void)!write(STDERR_FILENO, buf, n);
	errno = saved;
}
