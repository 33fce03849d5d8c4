/* caps.c - see caps.h. */
#define _GNU_SOURCE
#include "sandbox/caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "util/plat.h"

bool caps_have(cap_value_t cap)
{
	_cleanup_cap_free_ cap_t c = cap_get_proc();
	cap_flag_value_t v = CAP_CLEAR;

	if (!c)
		return false;
	if (cap_get_flag(c, cap, CAP_EFFECTIVE, &v) != 0)
		v = CAP_CLEAR;
	return v == CAP_SET;
}

/* The start that is neither privileged nor non-root: which sets hold what,
 * in words, for the refusal (what, at most size bytes). */
static void caps_left(char *what, size_t size, bool bounding, bool ambient, bool nnp)
{
	_cleanup_cap_free_ cap_t c = cap_get_proc();
	_cleanup_cap_free_ cap_t empty = cap_init();

	what[0] = '\0';
	if (c && empty) {
		static const struct {
			cap_flag_t flag;
			const char *name;
		} sets[] = {
			{ CAP_EFFECTIVE, "effective" },
			{ CAP_PERMITTED, "permitted" },
			{ CAP_INHERITABLE, "inheritable" },
		};

		for (size_t i = 0; i < N_ELEMENTS(sets); i++)
			if (CAP_DIFFERS(cap_compare(c, empty), sets[i].flag))
				snprintf(what + strlen(what), size - strlen(what),
					 "%sits %s set is not empty", what[0] ? ", " : "", sets[i].name);
	}
	if (ambient)
		snprintf(what + strlen(what), size - strlen(what), "%sits ambient set is not empty",
			 what[0] ? ", " : "");
	if (bounding && !nnp)
		snprintf(what + strlen(what), size - strlen(what),
			 "%sits bounding set is not empty and no_new_privs is not set", what[0] ? ", " : "");
	if (!what[0])
		snprintf(what, size, "its real, effective and saved ids differ");
}

int caps_start(struct caps_start *ret, struct tn_error *err)
{
	static const struct {
		cap_value_t cap;
		const char *name;
	} need[] = {
		{ CAP_SETPCAP, "CAP_SETPCAP" },
		{ CAP_SETUID, "CAP_SETUID" },
		{ CAP_SETGID, "CAP_SETGID" },
		{ CAP_KILL, "CAP_KILL" },
	};
	struct caps_start st = { .mode = CAPS_PRIVILEGED };
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	char missing[64] = "", left[192];
	cap_t c, empty;
	bool none = false, ambient = false, bounding = false;

	if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0)
		return err_errno(err, errno, "capabilities: reading its ids");
	st.uid = eu;
	st.gid = eg;
	st.nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
	for (size_t i = 0; i < N_ELEMENTS(need); i++)
		if (!caps_have(need[i].cap))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
				 missing[0] ? ", " : "", need[i].name);
	if (!missing[0]) {
		*ret = st;
		return 0;
	}
	/* Root without them: a capability list that left them out. */
	if (eu == 0)
		return err_set(err, EPERM,
			       "capabilities: running without %s, turninit cannot lock a command down or end it (securebits, bounding set, uid change, signals): keep them in the container's capabilities (Kubernetes: add SETPCAP, SETUID, SETGID, KILL)",
			       missing);
	c = cap_get_proc();
	empty = cap_init();
	none = c && empty && cap_compare(c, empty) == 0;
	cap_free(c);
	cap_free(empty);
	for (cap_value_t cap = 0; cap < (cap_value_t)cap_max_bits(); cap++) {
		bounding |= prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1;
		ambient |= prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) == 1;
	}
	if (none && !ambient && (!bounding || st.nnp) && ru == eu && eu == su && rg == eg && eg == sg) {
		st.mode = CAPS_NONROOT;
		*ret = st;
		return 0;
	}
	/* Typically podman --userns=keep-id without --user 0:0, or --user UID
	 * with the runtime's default bounding set. */
	caps_left(left, sizeof(left), bounding, ambient, st.nnp);
	return err_set(err, EPERM,
		       "capabilities: running as uid %u without %s, and not in non-root mode (%s): start turninit as root in the container (podman --userns=keep-id: add --user 0:0), or as the commands' uid with no capability in any set (--cap-drop ALL --security-opt no-new-privileges; Kubernetes: capabilities drop ALL, allowPrivilegeEscalation: false)",
		       (unsigned)eu, missing, left);
}

int caps_keep_only(const cap_value_t *keep, int n, struct tn_error *err)
{
	_cleanup_cap_free_ cap_t c = cap_init();

	if (!c)
		return err_errno(err, errno, "capabilities");
	for (int i = 0; i < n; i++) {
		if (!caps_have(keep[i]))
			continue;
		if (cap_set_flag(c, CAP_EFFECTIVE, 1, &keep[i], CAP_SET) != 0 ||
		    cap_set_flag(c, CAP_PERMITTED, 1, &keep[i], CAP_SET) != 0)
			return err_errno(err, errno, "capabilities");
	}
	if (cap_set_proc(c) != 0)
		return err_errno(err, errno, "capabilities: dropping");
	return 0;
}

bool caps_securebits_probe(void)
{
	struct utsname u;
	struct pf_facts f;

	plat_facts(&f, &u);
	return pf_securebits_absent(&f);
}

int caps_lock_down(bool no_securebits, struct tn_error *err)
{
	/* NO_SETUID_FIXUP: a command's uid change must not silently keep or
	 * drop sets behind our back; they are emptied explicitly right after
	 * it (caps_clear_all). */
	const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
				   SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED;
	cap_value_t max = (cap_value_t)cap_max_bits();

	/* gVisor's prctl(2) knows no PR_SET_SECUREBITS (EINVAL): what the bits
	 * would hold is covered there by the empty bounding set, no_new_privs
	 * and gVisor's own exec, which grants no privilege (docs/security.md,
	 * "gVisor"). Any other failure, or EINVAL elsewhere, refuses. */
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0 && !(errno == EINVAL && no_securebits))
		return err_set(err, errno, "securebits: %s (turninit needs CAP_SETPCAP)", strerror(errno));
	for (cap_value_t cap = 0; cap < max; cap++) {
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1)
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
			return err_set(err, errno,
				       "bounding set: dropping capability %d: %s (turninit needs CAP_SETPCAP)",
				       (int)cap, strerror(errno));
	}
	/* Read back: nothing can raise a bounding set again, so every process
	 * forked after this has an empty one. */
	for (cap_value_t cap = 0; cap < max; cap++)
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 0)
			return err_set(err, EPERM, "bounding set: capability %d still in it after dropping",
				       (int)cap);
	return 0;
}

int caps_clear_all(struct tn_error *err)
{
	/* Raw capset(2) and capget(2): no allocation, as the child of a
	 * CLONE_VM spawn must not (init/process/spawn.c). Version 3: two 32-bit words. */
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { { 0 } };

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
		return err_errno(err, errno, "ambient set");
	if (syscall(SYS_capset, &hdr, data) != 0)
		return err_errno(err, errno, "capabilities");
	/* The kernel keeps the ambient set within permitted and inheritable
	 * (capabilities(7)), so two empty sets here mean an empty ambient set. */
	memset(data, 0xff, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, data) != 0)
		return err_errno(err, errno, "capabilities: reading back");
	for (int i = 0; i < 2; i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return err_set(err, EPERM, "capabilities: sets not empty after clearing");
	return 0;
}
