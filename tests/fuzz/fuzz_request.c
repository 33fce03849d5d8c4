/* fuzz_request.c - libFuzzer target for rq_parse (policy/request.c), the
 * serve/listen request line parser.
 *
 * The input is one request line as-is (no NUL added: a read past len is an
 * ASan error). Invariants that abort: a refused line leaves ret untouched and
 * gives a one-line message; an accepted one has a valid id (the one reported),
 * an op, and for exec at least one word, a NULL-terminated argv and env, a cwd
 * that is NULL or absolute.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rq_request *r = (struct rq_request *)(uintptr_t)0x1;
	struct tn_error err = { 0 };
	char id[RQ_ID_MAX + 1];
	char *copy = malloc(size ? size : 1);
	int rc;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	rc = rq_parse(copy, size, &r, id, &err);
	if (rc < 0) {
		if (r != (struct rq_request *)(uintptr_t)0x1 || err.msg[0] == '\0' || strchr(err.msg, '\n'))
			abort();
	} else {
		if (!r || strcmp(r->id, id) != 0 || r->id[0] == '\0' || strlen(r->id) > RQ_ID_MAX)
			abort();
		if (r->op == RQ_EXEC) {
			if (r->n_words < 1 || !r->words || r->words[r->n_words] != NULL || !r->env)
				abort();
			if (r->cwd && r->cwd[0] != '/')
				abort();
			if (r->has_stdin != (r->stdin_data != NULL))
				abort();
		} else if (r->op != RQ_CANCEL && r->op != RQ_SIGNAL) {
			abort();
		}
		rq_free(r);
	}
	free(copy);
	return 0;
}
