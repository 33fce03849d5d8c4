/* memcg.c - see memcg.h. */
#include "process/memcg.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/cleanup.h"

/* The counter "oom_kill N" of an open memory.events or memory.oom_control,
 * read again from its start (a cgroup file is generated anew at offset 0):
 * N, or -1. */
static long oom_kill_line(int fd)
{
	char buf[1024];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	const char *p;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (p = buf; (p = strstr(p, "oom_kill ")); p++)
		if (p == buf || p[-1] == '\n') {
			char *end;
			long v = strtol(p + 9, &end, 10);

			return end > p + 9 && v >= 0 ? v : -1;
		}
	return -1;
}

long memcg_oom_kills(void)
{
	/* Which file holds the counter is found once, and kept open: every
	 * exec and exit reads it. */
	static const char *const files[] = { "/sys/fs/cgroup/memory.events",
					     "/sys/fs/cgroup/memory/memory.oom_control" };
	static int fd = -2; /* -2 not yet known, -1 neither */
	long n;

	if (fd >= -1)
		return fd >= 0 ? oom_kill_line(fd) : -1;
	for (size_t i = 0; i < N_ELEMENTS(files); i++) {
		fd = open(files[i], O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && (n = oom_kill_line(fd)) >= 0)
			return n;
		if (fd >= 0)
			close(fd);
	}
	fd = -1;
	return -1;
}
