/* envfilter.c - the environment a command sees (see envfilter.h and
 * docs/manifest.md "The environment").
 *
 * Only an allowlist is sound: bash sources $BASH_ENV (and $ENV in POSIX mode),
 * imports BASH_FUNC_name%% functions, honours SHELLOPTS/BASHOPTS and runs PS4
 * and PROMPT_COMMAND; the dynamic loader honours every LD_* it knows. Those
 * names are refused here whatever the manifest says.
 */
#include "policy/envfilter.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/cleanup.h"
#include "policy/manifest.h"

#define ENVF_NAME_MAX 255 /* bytes */

/* Exact names, or prefixes ending in '*'. docs/manifest.md has the same table
 * with the reason for each entry; tests/unit/test_envfilter.c checks both. */
const char *const envf_never_table[] = {
	"BASH_ENV",       /* sourced by every non-interactive bash */
	"ENV",            /* sourced by bash in POSIX mode and by sh */
	"BASH_FUNC_*",    /* exported functions, imported by bash (Shellshock's path) */
	"SHELLOPTS",      /* turns on shell options (xtrace, ...) at startup */
	"BASHOPTS",       /* turns on shopt options at startup */
	"PS4",            /* expanded, with command substitution, under xtrace */
	"PROMPT_COMMAND", /* run before each prompt */
	"LD_*",           /* the dynamic loader: LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT, ... */
	"TURNINIT_*",     /* turninit's own: the manifest and its signature */
	"GCONV_PATH",     /* glibc iconv loads shared objects from it, like LD_PRELOAD */
	"GLIBC_TUNABLES", /* parsed by ld.so before main (CVE-2023-4911) */
	NULL,
};

static const char *envf_show(const char *s, char buf[static ERR_SHOWN_MAX])
{
	return err_shown(s, SIZE_MAX, buf);
}

/* entry ends in '*': the length of its prefix; else 0 */
static size_t envf_prefix_len(const char *entry)
{
	size_t n = strlen(entry);

	return (n > 0 && entry[n - 1] == '*') ? n - 1 : 0;
}

bool envf_never_admitted(const char *name)
{
	if (!name)
		return true;
	for (const char *const *e = envf_never_table; *e; e++) {
		size_t p = envf_prefix_len(*e);

		if (p > 0 ? strncmp(name, *e, p) == 0 : strcmp(name, *e) == 0)
			return true;
	}
	return false;
}

/* A name of the prefix form "P*": every name it can match starts with P, so it
 * matches only never-admitted names exactly when P starts with a never-admitted
 * prefix. (Otherwise P followed by some letter is an admitted match.) */
static bool envf_prefix_only_never(const char *prefix, size_t len)
{
	for (const char *const *e = envf_never_table; *e; e++) {
		size_t p = envf_prefix_len(*e);

		if (p > 0 && len >= p && strncmp(prefix, *e, p) == 0)
			return true;
	}
	return false;
}

static bool envf_valid_namen(const char *s, size_t n)
{
	if (n == 0 || n > ENVF_NAME_MAX)
		return false;
	if (!(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];

		if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

bool envf_valid_name(const char *name)
{
	return name && envf_valid_namen(name, strnlen(name, ENVF_NAME_MAX + 1));
}

int envf_check_pattern(const char *pattern, struct tn_error *err)
{
	char show[ERR_SHOWN_MAX];
	size_t n, p;

	if (!pattern || pattern[0] == '\0')
		return err_set(err, EINVAL, "empty pattern");
	n = strnlen(pattern, ENVF_NAME_MAX + 2);
	p = envf_prefix_len(pattern);
	if (strcmp(pattern, "*") == 0)
		return err_set(err, EINVAL, "\"*\" would admit every name; list the names");
	if (p > 0) {
		if (!envf_valid_namen(pattern, p))
			return err_set(err, EINVAL,
				       "\"%s\" is not a valid pattern (a name, or a name prefix and a single trailing '*')",
				       envf_show(pattern, show));
		if (envf_prefix_only_never(pattern, p))
			return err_set(err, EINVAL, "\"%s\" matches only never-admitted names", pattern);
		return 0;
	}
	if (!envf_valid_namen(pattern, n))
		return err_set(err, EINVAL,
			       "\"%s\" is not a valid pattern (a name, or a name prefix and a single trailing '*')",
			       envf_show(pattern, show));
	if (envf_never_admitted(pattern))
		return err_set(err, EINVAL, "\"%s\" is never admitted", pattern);
	if (strcmp(pattern, "HOME") == 0)
		return err_set(err, EINVAL, "\"HOME\" is always set from home");
	return 0;
}

int envf_check_set_name(const char *name, struct tn_error *err)
{
	char show[ERR_SHOWN_MAX];

	if (!envf_valid_name(name))
		return err_set(err, EINVAL,
			       "\"%s\" is not a valid name ([A-Za-z_][A-Za-z0-9_]*, at most %d bytes)",
			       envf_show(name ? name : "", show), ENVF_NAME_MAX);
	if (envf_never_admitted(name))
		return err_set(err, EINVAL, "\"%s\" is never admitted", name);
	if (strcmp(name, "HOME") == 0)
		return err_set(err, EINVAL, "\"HOME\" is always set from home");
	return 0;
}

int envf_check_path(const char *value, struct tn_error *err)
{
	char show[ERR_SHOWN_MAX];
	const char *s;
	size_t idx = 1;

	if (!value)
		return err_set(err, EINVAL, "no value");
	/* bash reads an empty entry as ".", and searches a relative entry from the
	 * working directory: either lets a file in the work tree shadow a command. */
	s = value;
	for (;;) {
		const char *colon = strchr(s, ':');
		size_t n = colon ? (size_t)(colon - s) : strlen(s);

		if (n == 0)
			return err_set(err, EINVAL,
				       "entry %zu is empty (bash would search the working directory)", idx);
		if (s[0] != '/')
			return err_set(err, EINVAL,
				       "entry %zu \"%s\" is not absolute (bash would search from the working directory)",
				       idx, err_shown(s, n, show));
		if (!colon)
			return 0;
		s = colon + 1;
		idx++;
	}
}

bool envf_pattern_match(const char *pattern, const char *name)
{
	size_t p;

	if (!pattern || !name || envf_never_admitted(name))
		return false;
	p = envf_prefix_len(pattern);
	if (p > 0)
		return strncmp(name, pattern, p) == 0;
	return strcmp(name, pattern) == 0;
}

/* Length of the NAME of a "NAME=value" entry, or -1 without '='. */
static ssize_t envf_entry_name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');

	return eq ? eq - entry : -1;
}

/* A caller entry is admitted when its NAME is a valid name, is not HOME (always
 * from `home`), is not in env.set (set wins over a prefix pattern, so a name is
 * never given twice), and matches an env.allow pattern. */
static bool envf_admitted(const struct mf_env *env, const char *entry, size_t n)
{
	char name[ENVF_NAME_MAX + 1];

	if (!envf_valid_namen(entry, n))
		return false;
	memcpy(name, entry, n);
	name[n] = '\0';
	if (strcmp(name, "HOME") == 0)
		return false;
	for (size_t i = 0; i < env->n_set; i++)
		if (strcmp(env->set[i].name, name) == 0)
			return false;
	for (size_t i = 0; i < env->n_allow; i++)
		if (envf_pattern_match(env->allow[i], name))
			return true;
	return false;
}

bool envf_admits(const struct mf_env *env, const char *entry)
{
	ssize_t n = entry ? envf_entry_name_len(entry) : -1;

	return env && n >= 0 && envf_admitted(env, entry, (size_t)n);
}

static char *envf_join(const char *name, const char *value)
{
	size_t nn = strlen(name), vn = strlen(value);
	char *s = malloc(nn + 1 + vn + 1);

	if (!s)
		return NULL;
	memcpy(s, name, nn);
	s[nn] = '=';
	memcpy(s + nn + 1, value, vn + 1);
	return s;
}

/* An admitted caller entry, for finding repeated names by sorting. */
struct envf_ref {
	size_t idx; /* position in the caller's list */
	size_t name_len;
	const char *s;
};

/* By name, then by position: the first occurrence of a name sorts first. */
static int envf_ref_cmp(const void *a, const void *b)
{
	const struct envf_ref *x = a, *y = b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = memcmp(x->s, y->s, n);

	if (c)
		return c;
	if (x->name_len != y->name_len)
		return x->name_len < y->name_len ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int envf_build(const struct mf_env *env, const char *home, char *const *caller, char ***ret_envp,
	       struct tn_error *err)
{
	size_t n_caller = 0, n_ref = 0, k = 0;
	_cleanup_free_ struct envf_ref *refs = NULL;
	_cleanup_free_ bool *keep = NULL;
	char **envp;

	if (!env || !ret_envp)
		return err_set(err, EINVAL, "envf_build: no env section");
	if (caller)
		while (caller[n_caller])
			n_caller++;
	/* set + caller + HOME + NULL */
	envp = calloc(env->n_set + n_caller + 2, sizeof(*envp));
	refs = calloc(n_caller + 1, sizeof(*refs));
	keep = calloc(n_caller + 1, sizeof(*keep));
	if (!envp || !refs || !keep)
		goto oom;

	for (size_t i = 0; i < env->n_set; i++) {
		envp[k] = envf_join(env->set[i].name, env->set[i].value);
		if (!envp[k])
			goto oom;
		k++;
	}
	/* First occurrence wins. Sorting keeps this O(n log n): a caller's
	 * environment is not trusted to be small. */
	for (size_t i = 0; i < n_caller; i++) {
		ssize_t n = envf_entry_name_len(caller[i]);

		if (n < 0 || !envf_admitted(env, caller[i], (size_t)n))
			continue;
		refs[n_ref++] = (struct envf_ref){ .idx = i, .name_len = (size_t)n, .s = caller[i] };
	}
	qsort(refs, n_ref, sizeof(*refs), envf_ref_cmp);
	for (size_t i = 0; i < n_ref; i++)
		keep[refs[i].idx] = i == 0 || refs[i - 1].name_len != refs[i].name_len ||
				    memcmp(refs[i - 1].s, refs[i].s, refs[i].name_len) != 0;
	for (size_t i = 0; i < n_caller; i++) {
		if (!keep[i])
			continue;
		envp[k] = strdup(caller[i]);
		if (!envp[k])
			goto oom;
		k++;
	}
	envp[k] = envf_join("HOME", home ? home : "");
	if (!envp[k])
		goto oom;
	*ret_envp = envp;
	return 0;

oom: /* the rollback: the strings made so far */
	envf_free(envp);
	return err_set(err, ENOMEM, "environment: out of memory");
}

void envf_free(char **envp)
{
	if (!envp)
		return;
	for (char **e = envp; *e; e++)
		free(*e);
	free(envp);
}

int envf_override(char ***envp, char *const *pairs, struct tn_error *err)
{
	size_t n = 0, np = 0, k = 0;
	char **out;

	while ((*envp)[n])
		n++;
	while (pairs[np])
		np++;
	out = calloc(n + np + 1, sizeof(*out));
	if (!out)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < np; i++)
		if (!(out[n + i] = strdup(pairs[i]))) {
			for (size_t j = 0; j < i; j++)
				free(out[n + j]);
			free(out);
			return err_set(err, ENOMEM, "out of memory");
		}
	for (size_t i = 0; i < n; i++) {
		const char *e = (*envp)[i], *eq = strchr(e, '=');
		size_t len = eq ? (size_t)(eq - e) + 1 : strlen(e);
		bool replaced = false;

		for (size_t j = 0; j < np && !replaced; j++)
			replaced = strncmp(pairs[j], e, len) == 0;
		if (replaced)
			free((*envp)[i]);
		else
			out[k++] = (*envp)[i];
	}
	memmove(out + k, out + n, (np + 1) * sizeof(*out));
	free(*envp);
	*envp = out;
	return 0;
}
