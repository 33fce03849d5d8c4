/* fuzz_manifest.c - libFuzzer target for mf_parse (policy/manifest.c).
 *
 * The input is the manifest bytes as-is (no NUL added: a read past len is an
 * ASan error). On success the manifest is rendered with mf_to_json and the
 * rendering must parse again and render to the same text (a fixed point):
 * a failure there is a defect and aborts.
 */
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Fixed "now" (2023-11-14T22:13:20Z) so that runs are reproducible and the
 * committed good.json (expires 2099) parses. */
#define FUZZ_NOW 1700000000

/* As init/trust/load.c does it. */
static bool fuzz_syscall_known(const char *name)
{
	return seccomp_syscall_resolve_name(name) != __NR_SCMP_ERROR;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tn_error err = { 0 };
	struct mf_manifest *m = NULL;
	uint8_t *buf;
	int r;

	/* An exact-size copy: libFuzzer's buffer is exact too, but replay.c's
	 * may not be, and an empty input must not be a NULL pointer. */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	r = mf_parse(buf, size, FUZZ_NOW, fuzz_syscall_known, &m, &err);
	if (r == 0) {
		struct mf_manifest *m2 = NULL;
		struct tn_error err2 = { 0 };
		char *j1 = mf_to_json(m);
		char *j2;

		if (!j1)
			abort();
		if (mf_parse((const uint8_t *)j1, strlen(j1), FUZZ_NOW, fuzz_syscall_known, &m2, &err2) !=
		    0) {
			fprintf(stderr, "fuzz_manifest: rendering does not parse again: %s\n%s\n", err2.msg,
				j1);
			abort();
		}
		j2 = mf_to_json(m2);
		if (!j2 || strcmp(j1, j2) != 0) {
			fprintf(stderr, "fuzz_manifest: rendering is not a fixed point:\n%s\n%s\n", j1,
				j2 ? j2 : "(null)");
			abort();
		}
		free(j2);
		free(j1);
		mf_free(m2);
		mf_free(m);
	} else if (m != NULL || err.msg[0] == '\0' || memchr(err.msg, '\n', sizeof(err.msg))) {
		/* The contract: ret written only on success; an error has a one-line message. */
		fprintf(stderr, "fuzz_manifest: error contract broken (r=%d msg=\"%s\")\n", r, err.msg);
		abort();
	}
	free(buf);
	return 0;
}
