/* vectors.h - reading committed test vectors in the unit tests.
 * $TURNINIT_VECTORS names the folder (default "tests/vectors", relative to the
 * project root, where tests/run-unit.sh runs the tests). */
#ifndef TURNINIT_TEST_VECTORS_H
#define TURNINIT_TEST_VECTORS_H

#include <stdio.h>
#include <stdlib.h>

/* vectors_read - the whole file NAME, NUL-terminated, malloc'd; its length in
 * *ret_len. NULL (with a message on stderr) when it cannot be read. */
static inline char *vectors_read(const char *name, size_t *ret_len)
{
	const char *dir = getenv("TURNINIT_VECTORS");
	char path[4096];
	char *buf = NULL;
	FILE *f;
	long n;

	if (!dir || !*dir)
		dir = "tests/vectors";
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open test vector %s (set TURNINIT_VECTORS)\n", path);
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			buf[n] = '\0';
			*ret_len = (size_t)n;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

#endif
