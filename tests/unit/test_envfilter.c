/* test_envfilter.c - unit tests of policy/envfilter.c (docs/manifest.md, "The environment"). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "policy/envfilter.h"
#include "policy/manifest.h"

/* ---- names and the never-admitted table ---- */

static void test_valid_name(void **state)
{
	char long_name[300];

	(void)state;
	assert_true(envf_valid_name("A"));
	assert_true(envf_valid_name("_"));
	assert_true(envf_valid_name("a1_B2"));
	assert_true(envf_valid_name("LC_ALL"));
	assert_false(envf_valid_name(NULL));
	assert_false(envf_valid_name(""));
	assert_false(envf_valid_name("1A"));
	assert_false(envf_valid_name("A-B"));
	assert_false(envf_valid_name("A=B"));
	assert_false(envf_valid_name("A B"));
	assert_false(envf_valid_name("BASH_FUNC_ls%%"));
	assert_false(envf_valid_name("A*"));
	assert_false(envf_valid_name("\xc3\xa9"));

	memset(long_name, 'A', sizeof(long_name));
	long_name[255] = '\0';
	assert_true(envf_valid_name(long_name));
	long_name[255] = 'A';
	long_name[256] = '\0';
	assert_false(envf_valid_name(long_name));
}

/* The table is documented in docs/manifest.md; this is the same list. */
static void test_never_table(void **state)
{
	static const char *const expected[] = {
		"BASH_ENV",       "ENV",  "BASH_FUNC_*", "SHELLOPTS",  "BASHOPTS",       "PS4",
		"PROMPT_COMMAND", "LD_*", "TURNINIT_*",  "GCONV_PATH", "GLIBC_TUNABLES",
	};
	size_t n = 0;

	(void)state;
	while (envf_never_table[n])
		n++;
	assert_int_equal(n, sizeof(expected) / sizeof(expected[0]));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(envf_never_table[i], expected[i]);
}

static void test_never_admitted(void **state)
{
	/* clang-format 14 would put each entry of this table on a line of its own: kept as written */
	/* clang-format off */
	static const char *const never[] = {
		"BASH_ENV", "ENV", "BASH_FUNC_ls%%", "BASH_FUNC_", "BASH_FUNC_x", "SHELLOPTS",
		"BASHOPTS", "PS4", "PROMPT_COMMAND", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT",
		"LD_", "TURNINIT_MANIFEST", "TURNINIT_MANIFEST_SIG", "TURNINIT_", "GCONV_PATH",
		"GLIBC_TUNABLES",
	};
	/* clang-format on */
	static const char *const fine[] = {
		"LD",  "LDX",  "ENVX", "ENV_",     "BASH_ENVX",  "BASH_FUNC", "PS3",
		"PS1", "PATH", "HOME", "TURNINIT", "ld_preload", "LANG",
	};

	(void)state;
	assert_true(envf_never_admitted(NULL));
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		assert_true(envf_never_admitted(never[i]));
	for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++)
		assert_false(envf_never_admitted(fine[i]));
}

/* ---- manifest-time checks ---- */

static void test_check_set_name(void **state)
{
	struct tn_error err = { 0 };

	(void)state;
	assert_int_equal(envf_check_set_name("PATH", &err), 0);
	assert_int_equal(envf_check_set_name("LANG", &err), 0);
	assert_int_equal(envf_check_set_name("_x9", &err), 0);

	assert_int_equal(envf_check_set_name("LD_PRELOAD", &err), -EINVAL);
	assert_string_equal(err.msg, "\"LD_PRELOAD\" is never admitted");
	assert_int_equal(envf_check_set_name("BASH_ENV", &err), -EINVAL);
	assert_int_equal(envf_check_set_name("BASH_FUNC_foo", &err), -EINVAL);
	assert_int_equal(envf_check_set_name("TURNINIT_MANIFEST", &err), -EINVAL);
	assert_int_equal(envf_check_set_name("SHELLOPTS", &err), -EINVAL);
	assert_int_equal(envf_check_set_name("HOME", &err), -EINVAL);
	assert_string_equal(err.msg, "\"HOME\" is always set from home");
	assert_int_equal(envf_check_set_name("", &err), -EINVAL);
	assert_int_equal(envf_check_set_name("1X", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is not a valid name"));
	/* a message stays one line whatever the name holds */
	assert_int_equal(envf_check_set_name("A\nB", &err), -EINVAL);
	assert_null(strchr(err.msg, '\n'));
	assert_non_null(strstr(err.msg, "A\\x0aB"));
	assert_int_equal(envf_check_set_name("BASH_FUNC_ls%%", &err), -EINVAL);
	assert_int_equal(envf_check_set_name(NULL, &err), -EINVAL);
}

static void test_check_pattern(void **state)
{
	static const char *const good[] = {
		"TZ",        "LC_*", "GIT_*",     "B*", "L*", "LD*",        "BASH_FUNC*",
		"BASH_ENV*", "T*",   "TURNINIT*", "E*", "_*", "HOMEBREW_*", "H*",
	};
	/* clang-format 14 would put each entry of this table on a line of its own: kept as written */
	/* clang-format off */
	static const char *const bad[] = {
		"", "*", "**", "*A", "A*B", "A**", "1*", "A-*", "A B", "LD_*", "LD_PRE*",
		"LD_PRELOAD", "BASH_FUNC_*", "BASH_FUNC_ls*", "BASH_FUNC_ls%%", "TURNINIT_*",
		"TURNINIT_MANIFEST", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4",
		"PROMPT_COMMAND", "HOME",
	};
	/* clang-format on */
	struct tn_error err = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (envf_check_pattern(good[i], &err) != 0)
			fail_msg("pattern \"%s\" refused: %s", good[i], err.msg);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (envf_check_pattern(bad[i], &err) != -EINVAL)
			fail_msg("pattern \"%s\" accepted", bad[i]);
	}
	assert_int_equal(envf_check_pattern(NULL, &err), -EINVAL);

	assert_int_equal(envf_check_pattern("LD_PRELOAD", &err), -EINVAL);
	assert_string_equal(err.msg, "\"LD_PRELOAD\" is never admitted");
	assert_int_equal(envf_check_pattern("LD_*", &err), -EINVAL);
	assert_string_equal(err.msg, "\"LD_*\" matches only never-admitted names");
	assert_int_equal(envf_check_pattern("BASH_FUNC_*", &err), -EINVAL);
	assert_string_equal(err.msg, "\"BASH_FUNC_*\" matches only never-admitted names");
	assert_int_equal(envf_check_pattern("A*B", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is not a valid pattern"));
	/* err may be NULL */
	assert_int_equal(envf_check_pattern("*", NULL), -EINVAL);
}

static void test_pattern_match(void **state)
{
	(void)state;
	assert_true(envf_pattern_match("LC_*", "LC_ALL"));
	assert_true(envf_pattern_match("LC_*", "LC_"));
	assert_false(envf_pattern_match("LC_*", "LANG"));
	assert_false(envf_pattern_match("LC_*", "LC"));
	assert_true(envf_pattern_match("TZ", "TZ"));
	assert_false(envf_pattern_match("TZ", "TZX"));
	assert_false(envf_pattern_match("TZ", "T"));
	assert_false(envf_pattern_match("TZ", "tz"));

	/* a broad pattern never matches a never-admitted name */
	assert_true(envf_pattern_match("B*", "BASHX"));
	assert_false(envf_pattern_match("B*", "BASH_ENV"));
	assert_false(envf_pattern_match("B*", "BASHOPTS"));
	assert_false(envf_pattern_match("B*", "BASH_FUNC_ls%%"));
	assert_false(envf_pattern_match("BASH_FUNC*", "BASH_FUNC_ls%%"));
	assert_true(envf_pattern_match("L*", "LANG"));
	assert_false(envf_pattern_match("L*", "LD_PRELOAD"));
	assert_false(envf_pattern_match("LD*", "LD_LIBRARY_PATH"));
	assert_true(envf_pattern_match("LD*", "LDFLAGS"));
	assert_false(envf_pattern_match("T*", "TURNINIT_MANIFEST"));
	assert_false(envf_pattern_match("E*", "ENV"));
	assert_true(envf_pattern_match("E*", "EDITOR"));
	assert_false(envf_pattern_match("P*", "PS4"));
	assert_false(envf_pattern_match("P*", "PROMPT_COMMAND"));
	assert_false(envf_pattern_match("S*", "SHELLOPTS"));
	/* a never-admitted exact pattern cannot get through either */
	assert_false(envf_pattern_match("LD_PRELOAD", "LD_PRELOAD"));
	assert_false(envf_pattern_match(NULL, "A"));
	assert_false(envf_pattern_match("A", NULL));
}

static void test_check_path(void **state)
{
	static const char *const good[] = {
		"/bin",
		"/usr/local/bin:/usr/bin:/bin",
		"/",
		"/opt/x y/bin",
	};
	static const char *const bad[] = {
		"", ":/bin", "/bin:", "/bin::/usr/bin", "bin", ".", "/bin:.", "/bin:usr/bin", "~/bin", ":",
	};
	struct tn_error err = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (envf_check_path(good[i], &err) != 0)
			fail_msg("PATH \"%s\" refused: %s", good[i], err.msg);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (envf_check_path(bad[i], &err) != -EINVAL)
			fail_msg("PATH \"%s\" accepted", bad[i]);
	}
	assert_int_equal(envf_check_path(":/bin", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "entry 1 is empty"));
	assert_int_equal(envf_check_path("/bin:", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "entry 2 is empty"));
	assert_int_equal(envf_check_path("/bin::/usr/bin", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "entry 2 is empty"));
	assert_int_equal(envf_check_path("/bin:bin:/sbin", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "entry 2 \"bin\" is not absolute"));
	assert_int_equal(envf_check_path("bin", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "entry 1 \"bin\" is not absolute"));
	assert_int_equal(envf_check_path(NULL, &err), -EINVAL);
}

/* ---- envf_build ---- */

static struct mf_env_pair test_set[] = {
	{ (char *)"PATH", (char *)"/usr/bin:/bin" },
	{ (char *)"LITERAL", (char *)"${PATH}:$HOME" },
	{ (char *)"LC_ALL", (char *)"C.UTF-8" },
};
static char *test_allow[] = { (char *)"TZ", (char *)"GIT_*", (char *)"LC_*", (char *)"B*",
			      (char *)"L*", (char *)"H*",    (char *)"EMPTY" };

static struct mf_manifest test_manifest(void)
{
	return (struct mf_manifest){
		.version = 1,
		.uid = 1000,
		.gid = 1000,
		.home = (char *)"/home/agent",
		.env.set = test_set,
		.env.n_set = sizeof(test_set) / sizeof(test_set[0]),
		.env.allow = test_allow,
		.env.n_allow = sizeof(test_allow) / sizeof(test_allow[0]),
	};
}

static void assert_envp(char **envp, const char *const *expected)
{
	size_t i;

	for (i = 0; expected[i]; i++) {
		if (!envp[i])
			fail_msg("envp ends at %zu, expected \"%s\"", i, expected[i]);
		assert_string_equal(envp[i], expected[i]);
	}
	if (envp[i])
		fail_msg("unexpected envp[%zu] \"%s\"", i, envp[i]);
}

static void test_build_exact(void **state)
{
	struct mf_manifest m = test_manifest();
	char *caller[] = {
		(char *)"GIT_AUTHOR_NAME=A. Agent",
		(char *)"HOME=/root",               /* never from the caller */
		(char *)"LD_PRELOAD=/tmp/evil.so",  /* never admitted, even via "L*" */
		(char *)"BASH_ENV=/tmp/x",          /* never admitted, even via "B*" */
		(char *)"BASH_FUNC_ls%%=() { :; }", /* never admitted */
		(char *)"TZ=UTC",
		(char *)"NOEQUALS",             /* no '=': skipped */
		(char *)"SECRET_TOKEN=hunter2", /* not allowed */
		(char *)"TZ=Europe/Paris",      /* second TZ: the first wins */
		(char *)"LC_ALL=de_DE",         /* in env.set: set wins */
		(char *)"LC_TIME=C",
		(char *)"PATH=.:/tmp",   /* in env.set: set wins */
		(char *)"LANG=",         /* empty value is a value */
		(char *)"HOME_X=1",      /* via "H*": admitted */
		(char *)"BAD-NAME=1",    /* not a valid name */
		(char *)"=nothing",      /* empty name */
		(char *)"EMPTY=a=b",     /* value keeps its '=' */
		(char *)"BASHX=${PATH}", /* literal */
		NULL,
	};
	static const char *const expected[] = {
		"PATH=/usr/bin:/bin",
		"LITERAL=${PATH}:$HOME",
		"LC_ALL=C.UTF-8",
		"GIT_AUTHOR_NAME=A. Agent",
		"TZ=UTC",
		"LC_TIME=C",
		"LANG=",
		"HOME_X=1",
		"EMPTY=a=b",
		"BASHX=${PATH}",
		"HOME=/home/agent",
		NULL,
	};
	struct tn_error err = { 0 };
	char **envp = NULL;

	(void)state;
	assert_int_equal(envf_build(&m.env, m.home, caller, &envp, &err), 0);
	assert_envp(envp, expected);
	envf_free(envp);
}

static void test_build_no_caller(void **state)
{
	struct mf_manifest m = test_manifest();
	char *empty[] = { NULL };
	static const char *const expected[] = {
		"PATH=/usr/bin:/bin", "LITERAL=${PATH}:$HOME", "LC_ALL=C.UTF-8", "HOME=/home/agent", NULL,
	};
	char **envp = NULL;

	(void)state;
	assert_int_equal(envf_build(&m.env, m.home, NULL, &envp, NULL), 0);
	assert_envp(envp, expected);
	envf_free(envp);
	envp = NULL;
	assert_int_equal(envf_build(&m.env, m.home, empty, &envp, NULL), 0);
	assert_envp(envp, expected);
	envf_free(envp);
}

/* A manifest with an empty env: only HOME, whatever the caller offers. */
static void test_build_nothing_allowed(void **state)
{
	struct mf_manifest m = { .version = 1, .home = (char *)"/h" };
	char *caller[] = { (char *)"PATH=/bin", (char *)"TZ=UTC", (char *)"HOME=/x", NULL };
	static const char *const expected[] = { "HOME=/h", NULL };
	char **envp = NULL;

	(void)state;
	assert_int_equal(envf_build(&m.env, m.home, caller, &envp, NULL), 0);
	assert_envp(envp, expected);
	envf_free(envp);
}

/* envf_admits says of one entry what envf_build does with it (the audit log's
 * env_names): every entry test_build_exact offers, admitted or not. */
static void test_admits_agrees_with_build(void **state)
{
	struct mf_manifest m = test_manifest();
	/* clang-format 14 would put each entry of this table on a line of its own: kept as written */
	/* clang-format off */
	const char *const in[] = {
		"GIT_AUTHOR_NAME=A. Agent", "TZ=UTC", "EMPTY=", "LC_CTYPE=C",
		"BASHOPTS_X=1", "BFOO=1", "LANG=C", "HX=1=2",   /* H*: the name HX, value "1=2" */
	};
	const char *const out[] = {
		"HOME=/root", "PATH=/evil", "LC_ALL=C", "LD_PRELOAD=/x.so", "BASH_ENV=/x",
		"BASH_FUNC_ls%%=() { :; }", "SHELLOPTS=xtrace", "TURNINIT_MANIFEST=x",
		"GH_TOKEN=secret", "TZ", "=x", "T Z=1",
	};
	/* clang-format on */
	char *one[2] = { NULL, NULL };
	char **envp = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		assert_true(envf_admits(&m.env, in[i]));
		one[0] = (char *)in[i];
		assert_int_equal(envf_build(&m.env, m.home, one, &envp, NULL), 0);
		assert_string_equal(envp[m.env.n_set], in[i]); /* after env.set, before HOME */
		envf_free(envp);
	}
	for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
		assert_false(envf_admits(&m.env, out[i]));
		one[0] = (char *)out[i];
		assert_int_equal(envf_build(&m.env, m.home, one, &envp, NULL), 0);
		assert_string_equal(envp[m.env.n_set], "HOME=/home/agent");
		envf_free(envp);
	}
	assert_false(envf_admits(NULL, "TZ=UTC"));
	assert_false(envf_admits(&m.env, NULL));
}

/* The exact-name rule: "TZ" admits TZ only; later duplicates never override. */
static void test_build_first_wins(void **state)
{
	char *allow[] = { (char *)"TZ" };
	struct mf_manifest m = {
		.version = 1,
		.home = (char *)"/h",
		.env.allow = allow,
		.env.n_allow = 1,
	};
	char *caller[] = { (char *)"TZX=1", (char *)"TZ", (char *)"TZ=first", (char *)"TZ=second", NULL };
	static const char *const expected[] = { "TZ=first", "HOME=/h", NULL };
	char **envp = NULL;

	(void)state;
	assert_int_equal(envf_build(&m.env, m.home, caller, &envp, NULL), 0);
	assert_envp(envp, expected);
	envf_free(envp);
}

static void test_build_bad_args(void **state)
{
	struct tn_error err = { 0 };
	char **envp = NULL;

	(void)state;
	assert_int_equal(envf_build(NULL, NULL, NULL, &envp, &err), -EINVAL);
	assert_null(envp);
	envf_free(NULL);
}

/* 200000 admitted names, every one given twice: first occurrences win, and it
 * takes well under a second (a quadratic check took minutes). */
static void test_build_many_entries(void **state)
{
	enum { N = 200000 };
	char **caller = calloc(2 * N + 1, sizeof(*caller));
	struct mf_manifest m = { 0 };
	char *allow[] = { "LC_*" };
	char **envp = NULL;
	struct tn_error err = { 0 };
	struct timespec t0, t1;
	size_t n = 0;

	(void)state;
	assert_non_null(caller);
	for (int i = 0; i < 2 * N; i++) {
		caller[i] = malloc(32);
		assert_non_null(caller[i]);
		snprintf(caller[i], 32, "LC_%d=%s", i % N, i < N ? "first" : "second");
	}
	m.env.allow = allow;
	m.env.n_allow = 1;
	m.home = "/home/agent";
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(envf_build(&m.env, m.home, caller, &envp, &err), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (char **e = envp; *e; e++, n++)
		if (strncmp(*e, "LC_", 3) == 0)
			assert_non_null(strstr(*e, "=first"));
	assert_int_equal(n, N + 1); /* + HOME */
	assert_true((t1.tv_sec - t0.tv_sec) < 5);
	envf_free(envp);
	for (int i = 0; i < 2 * N; i++)
		free(caller[i]);
	free(caller);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_name),
		cmocka_unit_test(test_never_table),
		cmocka_unit_test(test_never_admitted),
		cmocka_unit_test(test_check_set_name),
		cmocka_unit_test(test_check_pattern),
		cmocka_unit_test(test_pattern_match),
		cmocka_unit_test(test_check_path),
		cmocka_unit_test(test_build_exact),
		cmocka_unit_test(test_build_many_entries),
		cmocka_unit_test(test_build_no_caller),
		cmocka_unit_test(test_build_nothing_allowed),
		cmocka_unit_test(test_build_first_wins),
		cmocka_unit_test(test_admits_agrees_with_build),
		cmocka_unit_test(test_build_bad_args),
	};

	return cmocka_run_group_tests_name("envfilter", tests, NULL, NULL);
}
