/* test_platform.c - unit tests of policy/platform.c: gVisor is recognised
 * only when every fact says so, securebits are absent only there, and the
 * seccomp kill action falls back for EINVAL only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "policy/platform.h"

/* clang-format 14 reads a macro body that starts with '{' as a block: kept as written */
/* clang-format off */
#define GV { "Linux", PF_GVISOR_RELEASE, PF_GVISOR_VERSION, EINVAL }
/* clang-format on */

/* What runsc 0.0~20221219 answers (tests/integration/gvisor.sh sees it). */
static void gvisor_is_recognised(void **state)
{
	const struct pf_facts f = GV;

	(void)state;
	assert_true(pf_is_gvisor(&f));
	assert_true(pf_securebits_absent(&f));
}

/* One fact off is not gVisor: a real kernel whose runtime profile makes
 * PR_GET_SECUREBITS fail, a Linux 4.4.0 of another build, a uname that failed. */
static void one_fact_off_is_not_gvisor(void **state)
{
	static const struct pf_facts cases[] = {
		{ "Linux", PF_GVISOR_RELEASE, PF_GVISOR_VERSION, 0 },
		{ "Linux", PF_GVISOR_RELEASE, PF_GVISOR_VERSION, EPERM },
		{ "Linux", PF_GVISOR_RELEASE, PF_GVISOR_VERSION, ENOSYS },
		{ "Linux", "6.1.0-13-amd64", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1", EINVAL },
		{ "Linux", "4.4.0", "#1 SMP Sun Jan 10 15:06:54 PST 2017", EINVAL },
		{ "Linux", "4.4.0-1", PF_GVISOR_VERSION, EINVAL },
		{ "Linux", "4.4.0 ", PF_GVISOR_VERSION, EINVAL },
		{ "linux", PF_GVISOR_RELEASE, PF_GVISOR_VERSION, EINVAL },
		{ "FreeBSD", PF_GVISOR_RELEASE, PF_GVISOR_VERSION, EINVAL },
		{ NULL, PF_GVISOR_RELEASE, PF_GVISOR_VERSION, EINVAL },
		{ "Linux", NULL, PF_GVISOR_VERSION, EINVAL },
		{ "Linux", PF_GVISOR_RELEASE, NULL, EINVAL },
		{ NULL, NULL, NULL, EINVAL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_false(pf_is_gvisor(&cases[i]));
		assert_false(pf_securebits_absent(&cases[i]));
	}
}

static void kill_fallback_for_einval_only(void **state)
{
	static const int no[] = { 0, EOPNOTSUPP, EPERM, ENOSYS, EACCES, EFAULT, ENOMEM, -EINVAL };

	(void)state;
	assert_true(pf_kill_thread_fallback(EINVAL));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(pf_kill_thread_fallback(no[i]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gvisor_is_recognised),
		cmocka_unit_test(one_fact_off_is_not_gvisor),
		cmocka_unit_test(kill_fallback_for_einval_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
