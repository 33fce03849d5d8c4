/* memhog.c - a command that charges memory to its container's memory cgroup
 * without owning it (tests/integration/fault.sh): it touches RSS_KIB KiB of
 * its own (0 by default: it stays tiny), then writes 64 KiB chunks into a
 * memfd until a write fails or the OOM killer ends it. The pages of a memfd
 * are the cgroup's, and count in no process's resident set. Prints
 * "memhog: N MiB: ERROR" when a write fails; killed, it prints nothing.
 * With --sleep it is the bystander: a process as small as a static program
 * gets, that sleeps SECONDS and exits 0.
 *   memhog [RSS_KIB]
 *   memhog --sleep SECONDS */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char chunk[64 << 10]; /* small: the process stays tiny */
	size_t rss;
	int fd;
	long chunks = 0;

	if (argc == 3 && strcmp(argv[1], "--sleep") == 0) {
		sleep((unsigned)strtoul(argv[2], NULL, 10));
		return 0;
	}
	rss = argc > 1 ? strtoul(argv[1], NULL, 10) << 10 : 0;
	fd = memfd_create("memhog", MFD_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "memhog: memfd_create: %s\n", strerror(errno));
		return 2;
	}
	if (rss) {
		char *p = malloc(rss);

		if (!p)
			return 2;
		memset(p, 1, rss);
	}
	memset(chunk, 'm', sizeof(chunk));
	printf("memhog: filling\n");
	fflush(stdout);
	for (;;) {
		/* write(2) copies into the memfd's page cache: not mapped here */
		if (write(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk)) {
			printf("memhog: %ld MiB: %s\n", chunks / 16, strerror(errno));
			return 1;
		}
		chunks++;
	}
}
