/* replay.c - run a libFuzzer target over a corpus without libFuzzer.
 *
 * Built with gcc -fsanitize=address,undefined against one fuzz_*.c, so that
 * `make check` replays the committed corpora where clang is not installed.
 * Usage: replay DIR. Every regular file of DIR is read and given to
 * LLVMFuzzerTestOneInput once, in an exact-size buffer, in a child process of
 * its own, so that a sanitizer report or abort fails that file only.
 * Prints "replay: FAIL PATH" for each failed file, then the last line
 * "replay: P passed, F failed" (tests/fuzz/run.sh reads it). Exit status: 0
 * when every file passed, 1 otherwise, 2 on a usage or I/O error.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	char **names = NULL;
	size_t n = 0, cap = 0, passed = 0, failed = 0;
	struct dirent *de;
	DIR *d;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	d = opendir(argv[1]);
	if (!d) {
		perror(argv[1]);
		return 2;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				return 2;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			return 2;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), replay_cmp);

	for (size_t i = 0; i < n; i++) {
		char path[4096];
		struct stat st;
		uint8_t *buf;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", argv[1], names[i]);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		pid_t pid;
		int status;

		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 2;
		}
		if (pid == 0) {
			f = fopen(path, "rb");
			if (!f) {
				perror(path);
				_exit(3);
			}
			buf = malloc(st.st_size ? (size_t)st.st_size : 1);
			if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
				fprintf(stderr, "%s: short read\n", path);
				_exit(3);
			}
			fclose(f);
			LLVMFuzzerTestOneInput(buf, (size_t)st.st_size);
			free(buf);
			exit(0); /* exit, not _exit: LeakSanitizer runs at exit */
		}
		if (waitpid(pid, &status, 0) != pid) {
			perror("waitpid");
			return 2;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			passed++;
		} else {
			failed++;
			printf("replay: FAIL %s\n", path);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	printf("replay: %zu passed, %zu failed\n", passed, failed);
	return failed ? 1 : 0;
}
