/* caps.h - capabilities of turninit itself and of every command.
 * Sources: capabilities(7), prctl(2) PR_CAPBSET_DROP, PR_SET_SECUREBITS,
 * PR_CAP_AMBIENT; libcap cap_set_proc(3). */
#ifndef TURNINIT_CAPS_H
#define TURNINIT_CAPS_H

#include <stdbool.h>
#include <sys/capability.h>
#include <sys/types.h>

#include "policy/error.h"

/* caps_have - true when cap (CAP_SYS_ADMIN, ...) is in turninit's effective set. */
bool caps_have(cap_value_t cap);

/* The two ways turninit may be started (docs/security.md, "Non-root mode"). */
enum caps_mode {
	CAPS_PRIVILEGED = 0, /* CAP_SETPCAP, CAP_SETUID, CAP_SETGID and CAP_KILL held */
	CAPS_NONROOT,        /* an unprivileged uid with no capability in any set */
};

/* What turninit found at start: the mode, its ids (getresuid/getresgid, real =
 * effective = saved in non-root mode) and whether no_new_privs was already set. */
struct caps_start {
	enum caps_mode mode;
	uid_t uid;
	gid_t gid;
	bool nnp;
};

/* caps_start - how turninit may run, from what it holds now: privileged when
 * its effective set holds what each command's lock-down needs (CAP_SETPCAP:
 * securebits, bounding set; CAP_SETUID, CAP_SETGID: the uid change) and what
 * ending it needs (CAP_KILL: the commands run as another uid); non-root when
 * it runs as a uid other than 0 (real, effective and saved alike, and so the
 * gids) with its effective, permitted, inheritable and ambient sets empty and
 * its bounding set empty or no_new_privs set, so that nothing it or a command
 * execs can gain a capability. Called once before anything is set up, so that
 * serve and listen refuse at start instead of failing every command. In a user
 * namespace (rootless podman) the capabilities are over that namespace, which
 * is all the lock-down needs. ret is written only on success.
 * Errors: -EPERM, any other start (half-privileged), with a message naming
 * what is missing or left and the two ways to start (capabilities(7),
 * prctl(2) PR_GET_NO_NEW_PRIVS, PR_CAPBSET_READ, PR_CAP_AMBIENT). */
int caps_start(struct caps_start *ret, struct tn_error *err);

/* caps_keep_only - drop every capability of turninit except the n in keep, from
 * the effective, permitted and inheritable sets (the bounding set is cleared by
 * caps_lock_down). Errors: -errno of cap_set_proc(3) (EPERM). */
int caps_keep_only(const cap_value_t *keep, int n, struct tn_error *err);

/* caps_securebits_probe - once at start, before the first command: whether
 * this platform has no securebits at all (pf_securebits_absent: gVisor,
 * recognised by uname(2) and PR_GET_SECUREBITS's EINVAL), for
 * caps_lock_down (the sandbox keeps it: sb->no_securebits). Anywhere else it
 * returns false and securebits stay required. Never fails. */
bool caps_securebits_probe(void);

/* caps_lock_down - once per turn, in turninit itself (privileged mode), after
 * caps_keep_only: lock securebits (NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off,
 * each LOCKED), clear the bounding set and read it back empty. turninit never
 * execs, so neither limits it; every command is forked from it (directly or
 * through a keeper) and inherits both, and neither can be undone. Needs
 * CAP_SETPCAP. With no_securebits (what caps_securebits_probe found),
 * PR_SET_SECUREBITS's EINVAL is passed over (and only that errno).
 * Errors: -EPERM and other -errno of prctl(2). */
int caps_lock_down(bool no_securebits, struct tn_error *err);

/* caps_clear_all - in a command process, after the uid change: empty the
 * effective, permitted, inheritable and ambient sets with capset(2), then
 * check with one capget(2) that they read back empty (an empty permitted set
 * holds the ambient set empty too). Allocates nothing (a CLONE_VM child may
 * call it). The bounding set is turninit's, already empty (caps_lock_down),
 * or in non-root mode left as it was, with no_new_privs set.
 * Errors: -errno of capset(2), capget(2) or prctl(2), -EPERM if a set is not
 * empty afterwards. */
int caps_clear_all(struct tn_error *err);

#endif
