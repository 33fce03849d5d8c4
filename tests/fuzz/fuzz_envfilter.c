/* fuzz_envfilter.c - libFuzzer target for the env filter (policy/envfilter.c).
 *
 * Input: MANIFEST '\0' LINES. MANIFEST is parsed with mf_parse; when it does not
 * parse (the usual case for mutated input) a fixed manifest with exact and
 * prefix patterns is used instead. With no NUL byte, the whole input is LINES.
 * LINES, split on '\n', is the caller environment given to envf_build, and each
 * line is also checked with envf_check_pattern, envf_check_path,
 * envf_check_set_name and matched as a name against every line as a pattern.
 * The properties the design promises are checked and abort when broken:
 *   - the envp holds env.set first, in order, then caller entries, then HOME
 *     last; each entry is NAME=value with a valid name, never a never-admitted
 *     one, and no name twice;
 *   - a pattern that envf_check_pattern accepts is non-empty, and
 *     envf_pattern_match never matches a never-admitted name (it does not
 *     promise a valid name: envf_build checks names before matching);
 *   - a PATH that envf_check_path accepts has only absolute, non-empty entries;
 *   - envf_admits agrees with envf_build: every caller entry in the envp is
 *     one it admits, and every line it admits has its name in the envp.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/envfilter.h"
#include "policy/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NOW 1700000000
#define FUZZ_MAX_LINES 4096
#define FUZZ_MATCH_LINES 8 /* lines x lines pattern matches: keep it cheap */

static const char fuzz_default_manifest[] =
	"{\"turninit\":1,\"expires\":\"2099-01-01T00:00:00Z\",\"user\":{\"uid\":1000,\"gid\":1000},"
	"\"home\":\"/home/agent\",\"env\":{\"set\":{\"PATH\":\"/usr/bin:/bin\",\"LANG\":\"C.UTF-8\"},"
	"\"allow\":[\"TZ\",\"LC_*\",\"MY_*\",\"A*\",\"TERM\"]}}";

static struct mf_manifest *fuzz_default;

static struct mf_manifest *fuzz_default_get(void)
{
	struct tn_error err = { 0 };

	if (!fuzz_default && mf_parse((const uint8_t *)fuzz_default_manifest, strlen(fuzz_default_manifest),
				      FUZZ_NOW, NULL, &fuzz_default, &err) != 0) {
		fprintf(stderr, "fuzz_envfilter: default manifest does not parse: %s\n", err.msg);
		abort();
	}
	return fuzz_default;
}

static void fuzz_fail(const char *what, const char *s)
{
	fprintf(stderr, "fuzz_envfilter: %s: \"%s\"\n", what, s);
	abort();
}

/* Compare "NAME=..." entries by NAME only. */
static int fuzz_name_cmp(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t xn = strcspn(x, "="), yn = strcspn(y, "=");
	int c = memcmp(x, y, xn < yn ? xn : yn);

	if (c)
		return c;
	return xn < yn ? -1 : xn > yn;
}

static void fuzz_check_envp(const struct mf_manifest *m, char **envp)
{
	size_t n = 0, i;
	char **sorted;

	while (envp[n])
		n++;
	if (n < m->env.n_set + 1)
		fuzz_fail("envp shorter than env.set + HOME", "");
	for (i = 0; i < m->env.n_set; i++) {
		size_t nl = strlen(m->env.set[i].name);
		if (strncmp(envp[i], m->env.set[i].name, nl) != 0 || envp[i][nl] != '=' ||
		    strcmp(envp[i] + nl + 1, m->env.set[i].value) != 0)
			fuzz_fail("env.set entry out of place", envp[i]);
	}
	if (strncmp(envp[n - 1], "HOME=", 5) != 0 || strcmp(envp[n - 1] + 5, m->home) != 0)
		fuzz_fail("HOME is not last", envp[n - 1]);
	for (i = 0; i < n; i++) {
		const char *eq = strchr(envp[i], '=');
		char name[512];
		size_t nl;

		if (!eq || eq == envp[i] || (size_t)(eq - envp[i]) >= sizeof(name))
			fuzz_fail("entry without a name", envp[i]);
		nl = (size_t)(eq - envp[i]);
		memcpy(name, envp[i], nl);
		name[nl] = '\0';
		if (!envf_valid_name(name))
			fuzz_fail("invalid name in envp", envp[i]);
		if (envf_never_admitted(name))
			fuzz_fail("never-admitted name in envp", envp[i]);
		if (i < n - 1 && strcmp(name, "HOME") == 0)
			fuzz_fail("HOME before the end", envp[i]);
	}
	/* No name twice: sort a copy by name, compare neighbours (n can be large). */
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		abort();
	memcpy(sorted, envp, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), fuzz_name_cmp);
	for (i = 1; i < n; i++)
		if (fuzz_name_cmp(&sorted[i - 1], &sorted[i]) == 0)
			fuzz_fail("name twice in envp", sorted[i]);
	free(sorted);
}

static void fuzz_check_line(const char *s)
{
	struct tn_error err = { 0 };

	if (envf_check_pattern(s, &err) == 0 && s[0] == '\0')
		fuzz_fail("empty pattern accepted", s);
	if (envf_check_path(s, &err) == 0) {
		size_t len = strlen(s);
		if (s[0] != '/' || s[len - 1] == ':' || strstr(s, "::") || strstr(s, ":.") ||
		    (strchr(s, ':') && strstr(s, ":/") == NULL))
			fuzz_fail("PATH with a relative or empty entry accepted", s);
		for (const char *c = strchr(s, ':'); c; c = strchr(c + 1, ':'))
			if (c[1] != '/')
				fuzz_fail("PATH with a relative entry accepted", s);
	}
	if (envf_check_set_name(s, &err) == 0 &&
	    (!envf_valid_name(s) || envf_never_admitted(s) || strcmp(s, "HOME") == 0))
		fuzz_fail("set name accepted", s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memchr(data, '\0', size);
	struct mf_manifest *parsed = NULL, *m;
	struct tn_error err = { 0 };
	char *text = NULL, **lines = NULL, **envp = NULL;
	size_t tlen, n = 0, i, j;

	if (sep) {
		size_t mlen = (size_t)(sep - data);
		uint8_t *mb = malloc(mlen ? mlen : 1);
		if (!mb)
			return 0;
		memcpy(mb, data, mlen);
		if (mf_parse(mb, mlen, FUZZ_NOW, NULL, &parsed, &err) != 0)
			parsed = NULL;
		free(mb);
		data = sep + 1;
		size -= mlen + 1;
	}
	m = parsed ? parsed : fuzz_default_get();

	/* LINES as NUL-terminated strings (a NUL inside a line ends it early). */
	tlen = size;
	text = malloc(tlen + 1);
	lines = calloc(FUZZ_MAX_LINES + 1, sizeof(*lines));
	if (!text || !lines)
		goto out;
	memcpy(text, data, tlen);
	text[tlen] = '\0';
	if (tlen > 0) {
		char *p = text;
		while (n < FUZZ_MAX_LINES) {
			char *nl = memchr(p, '\n', (size_t)(text + tlen - p));
			lines[n++] = p;
			if (!nl)
				break;
			*nl = '\0';
			p = nl + 1;
		}
	}

	if (envf_build(&m->env, m->home, lines, &envp, &err) != 0)
		abort(); /* only ENOMEM can fail, and the fuzzer caps memory far above this */
	fuzz_check_envp(m, envp);
	for (i = m->env.n_set; envp[i] && envp[i + 1]; i++)
		if (!envf_admits(&m->env, envp[i]))
			fuzz_fail("a caller entry in envp that envf_admits refuses", envp[i]);
	for (i = 0; i < n; i++) {
		size_t nl = strcspn(lines[i], "=");
		bool found = false;

		if (!envf_admits(&m->env, lines[i]))
			continue;
		for (j = 0; envp[j] && !found; j++)
			found = strncmp(envp[j], lines[i], nl) == 0 && envp[j][nl] == '=';
		if (!found)
			fuzz_fail("an entry envf_admits admits is not in envp", lines[i]);
	}
	envf_free(envp);

	for (i = 0; i < n; i++)
		fuzz_check_line(lines[i]);
	for (i = 0; i < n && i < FUZZ_MATCH_LINES; i++) {
		for (j = 0; j < n && j < FUZZ_MATCH_LINES; j++) {
			if (!envf_pattern_match(lines[i], lines[j]))
				continue;
			if (envf_never_admitted(lines[j]))
				fuzz_fail("pattern matches a never-admitted name", lines[j]);
		}
	}
out:
	free(lines);
	free(text);
	mf_free(parsed);
	return 0;
}
