/* platform.c - see platform.h. */
#include "policy/platform.h"

#include <errno.h>
#include <string.h>

static bool pf_eq(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

bool pf_is_gvisor(const struct pf_facts *f)
{
	return pf_eq(f->sysname, "Linux") && pf_eq(f->release, PF_GVISOR_RELEASE) &&
	       pf_eq(f->version, PF_GVISOR_VERSION) && f->get_securebits_errno == EINVAL;
}

bool pf_securebits_absent(const struct pf_facts *f)
{
	return pf_is_gvisor(f);
}

bool pf_kill_thread_fallback(int avail_errno)
{
	return avail_errno == EINVAL;
}
