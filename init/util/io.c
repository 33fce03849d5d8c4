/* io.c - see io.h. */
#include "util/io.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "policy/cleanup.h"

static int put_all(int fd, const char *p, size_t len, bool sock)
{
	while (len > 0) {
		ssize_t w = TEMP_FAILURE_RETRY(sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len));

		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int io_write_all(int fd, const void *buf, size_t len)
{
	return put_all(fd, buf, len, false);
}

int io_send_all(int fd, const void *buf, size_t len)
{
	return put_all(fd, buf, len, true);
}
