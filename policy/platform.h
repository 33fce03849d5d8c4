/* platform.h - which platform turninit runs on, as far as the lock-down of a
 * command depends on it, decided from what the platform itself answers at
 * start, before any command ran (pure: init/platform.c asks, this decides).
 * A launcher sets environment and arguments, never uname(2)'s answer or a
 * prctl's errno; a seccomp profile can fake an errno but not uname's strings.
 * Sources: gVisor pkg/sentry/syscalls/linux/linux64.go (LinuxRelease,
 * LinuxVersion: what uname(2) says under every runsc release),
 * sys_prctl.go (PR_GET_SECUREBITS and PR_SET_SECUREBITS fall to its
 * "default: EINVAL"), kernel/seccomp.go; prctl(2), seccomp(2). */
#ifndef TURNINIT_PLATFORM_H
#define TURNINIT_PLATFORM_H

#include <stdbool.h>

/* uname(2) under gVisor, fixed in its source since 2018 (still so in 2026). */
#define PF_GVISOR_RELEASE "4.4.0"
#define PF_GVISOR_VERSION "#1 SMP Sun Jan 10 15:06:54 PST 2016"

struct pf_facts {
	const char *sysname, *release, *version; /* uname(2)'s fields; NULL: uname failed */
	int get_securebits_errno;                /* errno of prctl(PR_GET_SECUREBITS), 0 when it answered */
};

/* pf_is_gvisor - true only when every fact says gVisor: uname's sysname
 * "Linux", release PF_GVISOR_RELEASE and version PF_GVISOR_VERSION exactly,
 * and PR_GET_SECUREBITS refused with EINVAL (Linux answers it since 2.6.26,
 * with no capability and whatever the bits; only an unknown prctl gives
 * EINVAL). */
bool pf_is_gvisor(const struct pf_facts *f);

/* pf_securebits_absent - true when the platform has no securebits, so that a
 * command runs without them (stated by verify and the log): gVisor by
 * pf_is_gvisor, whose prctl(2) knows neither PR_GET_SECUREBITS nor
 * PR_SET_SECUREBITS. Anywhere else a failing securebits call is a refusal. */
bool pf_securebits_absent(const struct pf_facts *f);

/* pf_kill_thread_fallback - whether the filter's bad-architecture action may
 * fall back from SECCOMP_RET_KILL_PROCESS to SECCOMP_RET_KILL_THREAD, given
 * the errno with which the platform refused
 * seccomp(SECCOMP_GET_ACTION_AVAIL, SECCOMP_RET_KILL_PROCESS) (libseccomp
 * asks it and refuses to build the filter without it). True for EINVAL only:
 * the operation is unknown (gVisor; Linux before 4.14, whose filters know no
 * KILL_PROCESS either). 0 (available), EOPNOTSUPP (the action unknown to a
 * kernel that knows the operation), EPERM, ENOSYS (a profile refusing
 * seccomp(2)) and every other errno: false, a refusal. */
bool pf_kill_thread_fallback(int avail_errno);

#endif
