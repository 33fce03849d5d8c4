/* rawenv.c - exec a program with an environment read byte for byte from a file,
 * the way a hostile launcher can (execve(2) takes any bytes but NUL and '='
 * is not required): rawenv FILE PROGRAM [ARG]...
 * FILE holds the entries, each ended by a NUL byte. env(1) and shells refuse or
 * rewrite such entries (an empty name, a name with odd bytes, no '='), so the
 * hostile-input suite needs its own launcher. Exits 120 on a usage or read
 * error, 121 when execve fails (and says why on stderr). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	FILE *f;
	char *buf = NULL, **envp;
	size_t cap = 0, len = 0, n = 0, k = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: rawenv FILE PROGRAM [ARG]...\n");
		return 120;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		fprintf(stderr, "rawenv: %s: %s\n", argv[1], strerror(errno));
		return 120;
	}
	for (;;) {
		size_t r;

		if (len == cap) {
			cap = cap ? cap * 2 : 1 << 16;
			buf = realloc(buf, cap + 1);
			if (!buf)
				return 120;
		}
		r = fread(buf + len, 1, cap - len, f);
		if (r == 0)
			break;
		len += r;
	}
	fclose(f);
	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\0';
	envp = calloc(n + 1, sizeof(*envp));
	if (!envp)
		return 120;
	for (size_t i = 0; i < len && k < n; k++) {
		envp[k] = buf + i;
		i += strlen(buf + i) + 1;
	}
	execve(argv[2], argv + 2, envp);
	fprintf(stderr, "rawenv: execve %s: %s\n", argv[2], strerror(errno));
	return 121;
}
