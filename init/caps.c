/* caps.c - see caps.h. */
#define _GNU_SOURCE
#include "caps.h"

#include <errno.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "plat.h"

/* Set once at start by caps_securebits_probe (and then read-only): the
 * platform has no securebits (gVisor). */
static bool caps_no_securebits;

bool caps_have(cap_value_t cap)
{
	cap_t c = cap_get_proc();
	cap_flag_value_t v = CAP_CLEAR;

	if (!c)
		return false;
	if (cap_get_flag(c, cap, CAP_EFFECTIVE, &v) != 0)
		v = CAP_CLEAR;
	cap_free(c);
	return v == CAP_SET;
}

int caps_require_start(struct tn_error *err)
{
	static const struct { cap_value_t cap; const char *name; } need[] = {
		{ CAP_SETPCAP, "CAP_SETPCAP" }, { CAP_SETUID, "CAP_SETUID" }, { CAP_SETGID, "CAP_SETGID" },
		{ CAP_KILL, "CAP_KILL" },
	};
	char missing[64] = "";

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!caps_have(need[i].cap))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
				 missing[0] ? ", " : "", need[i].name);
	if (!missing[0])
		return 0;
	/* Not root in the container: typically podman --userns=keep-id without
	 * --user 0:0 (turninit is then the host user, with no capabilities), or
	 * --user UID. Root without them: a capability list that left them out. */
	if (geteuid() != 0)
		return err_set(err, EPERM,
			       "capabilities: running as uid %u without %s, turninit cannot lock a command down or end it (securebits, bounding set, uid change, signals): start it as root in the container (podman --userns=keep-id: add --user 0:0; never --user UID)",
			       (unsigned)geteuid(), missing);
	return err_set(err, EPERM,
		       "capabilities: running without %s, turninit cannot lock a command down or end it (securebits, bounding set, uid change, signals): keep them in the container's capabilities (Kubernetes: add SETPCAP, SETUID, SETGID, KILL)",
		       missing);
}

int caps_keep_only(const cap_value_t *keep, int n, struct tn_error *err)
{
	cap_t c = cap_init();
	int r = 0;

	if (!c)
		return err_errno(err, errno, "capabilities");
	for (int i = 0; i < n; i++) {
		if (!caps_have(keep[i]))
			continue;
		if (cap_set_flag(c, CAP_EFFECTIVE, 1, &keep[i], CAP_SET) != 0 ||
		    cap_set_flag(c, CAP_PERMITTED, 1, &keep[i], CAP_SET) != 0) {
			r = err_errno(err, errno, "capabilities");
			goto out;
		}
	}
	if (cap_set_proc(c) != 0)
		r = err_errno(err, errno, "capabilities: dropping");
out:
	cap_free(c);
	return r;
}

bool caps_securebits_probe(void)
{
	struct utsname u;
	struct pf_facts f;

	plat_facts(&f, &u);
	caps_no_securebits = pf_securebits_absent(&f);
	return caps_no_securebits;
}

int caps_lock_down_before_setuid(struct tn_error *err)
{
	/* NO_SETUID_FIXUP: the uid change must not silently keep or drop sets
	 * behind our back; they are emptied explicitly right after it. */
	const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
		SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
		SECBIT_KEEP_CAPS_LOCKED;
	cap_value_t max = (cap_value_t)cap_max_bits();

	/* gVisor's prctl(2) knows no PR_SET_SECUREBITS (EINVAL): what the bits
	 * would hold is covered there by the empty bounding set, no_new_privs
	 * and gVisor's own exec, which grants no privilege (docs/security.md,
	 * "gVisor"). Any other failure, or EINVAL elsewhere, refuses. */
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0 && !(errno == EINVAL && caps_no_securebits))
		return err_set(err, errno, "securebits: %s (turninit needs CAP_SETPCAP)",
			       strerror(errno));
	for (cap_value_t cap = 0; cap < max; cap++) {
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1)
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
			return err_set(err, errno, "bounding set: dropping capability %d: %s (turninit needs CAP_SETPCAP)",
				       (int)cap, strerror(errno));
	}
	return 0;
}

int caps_clear_all(struct tn_error *err)
{
	cap_t empty = cap_init();
	cap_t now = NULL;
	int r = 0;

	if (!empty)
		return err_errno(err, errno, "capabilities");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
		r = err_errno(err, errno, "ambient set");
		goto out;
	}
	if (cap_set_proc(empty) != 0) {
		r = err_errno(err, errno, "capabilities");
		goto out;
	}
	now = cap_get_proc();
	if (!now || cap_compare(now, empty) != 0) {
		r = err_set(err, EPERM, "capabilities: sets not empty after clearing");
		goto out;
	}
	for (cap_value_t cap = 0; cap < (cap_value_t)cap_max_bits(); cap++)
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 ||
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) == 1) {
			r = err_set(err, EPERM, "capabilities: capability %d still in the bounding or ambient set",
				    (int)cap);
			goto out;
		}
out:
	cap_free(now);
	cap_free(empty);
	return r;
}
