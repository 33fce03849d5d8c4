/* memcg.c - see memcg.h. */
#include "memcg.h"

#include <stdio.h>
#include <string.h>

static long oom_kill_line(const char *path)
{
	char line[128];
	long n = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "oom_kill ", 9) == 0 && sscanf(line + 9, "%ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

long memcg_oom_kills(void)
{
	long n = oom_kill_line("/sys/fs/cgroup/memory.events");

	return n >= 0 ? n : oom_kill_line("/sys/fs/cgroup/memory/memory.oom_control");
}
