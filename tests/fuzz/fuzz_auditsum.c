/* fuzz_auditsum.c - libFuzzer target for asum_line and asum_text
 * (policy/auditsum.c), the summary of turninit audit-verify --summary.
 *
 * The input is a log as-is, split on "\n" as init/client/audit_verify.c
 * splits it; each line is handed over in an exact-size heap copy (no NUL
 * added: a read past len is an ASan error). Invariants that abort: the text
 * is made and ends with a newline, and every byte of it is printable ASCII
 * or a newline (no byte of the log reaches a terminal unescaped).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/auditsum.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct asum *s = asum_new();
	size_t start = 0;
	char *text;

	if (!s)
		return 0;
	while (start <= size) {
		const uint8_t *nl = memchr(data + start, '\n', size - start);
		size_t n = nl ? (size_t)(nl - (data + start)) : size - start;
		char *copy = malloc(n ? n : 1);

		if (!copy)
			abort();
		memcpy(copy, data + start, n);
		asum_line(s, copy, n);
		free(copy);
		start += n + 1;
	}
	text = asum_text(s);
	asum_free(s);
	if (!text || !text[0] || text[strlen(text) - 1] != '\n')
		abort();
	for (const char *p = text; *p; p++)
		if (*p != '\n' && (*p < 0x20 || *p > 0x7e))
			abort();
	free(text);
	return 0;
}
