/* caps.h - capabilities of turninit itself and of every command.
 * Sources: capabilities(7), prctl(2) PR_CAPBSET_DROP, PR_SET_SECUREBITS,
 * PR_CAP_AMBIENT; libcap cap_set_proc(3). */
#ifndef TURNINIT_CAPS_H
#define TURNINIT_CAPS_H

#include <stdbool.h>
#include <sys/capability.h>

#include "error.h"

/* caps_have - true when cap (CAP_SYS_ADMIN, ...) is in turninit's effective set. */
bool caps_have(cap_value_t cap);

/* caps_require_start - refuse unless turninit's effective set holds what each
 * command's lock-down needs: CAP_SETPCAP (securebits, bounding set), CAP_SETUID
 * and CAP_SETGID (the uid change), and what ending it needs: CAP_KILL (the
 * commands run as another uid; without it a timeout, a cancel or the end of
 * the turn could not signal them). Called once before anything is set up, so
 * that serve and listen refuse at start instead of failing every command. In a
 * user namespace (rootless podman) these are capabilities over that namespace,
 * which is all the lock-down needs. Errors: -EPERM, with a message naming the
 * missing capabilities and what fixes it: for a uid other than 0, turninit's
 * uid and podman's --user 0:0 (capabilities(7), user_namespaces(7)). */
int caps_require_start(struct tn_error *err);

/* caps_keep_only - drop every capability of turninit except the n in keep, from
 * the effective, permitted and inheritable sets (the bounding set is cleared in
 * each command). Errors: -errno of cap_set_proc(3) (EPERM). */
int caps_keep_only(const cap_value_t *keep, int n, struct tn_error *err);

/* caps_securebits_probe - once at start, before the first command: whether
 * this platform has no securebits at all (pf_securebits_absent: gVisor,
 * recognised by uname(2) and PR_GET_SECUREBITS's EINVAL). Remembered for
 * caps_lock_down_before_setuid in every command process (they are forked
 * from turninit, so they inherit it). Anywhere else it returns false and
 * securebits stay required. Never fails. */
bool caps_securebits_probe(void);

/* caps_lock_down_before_setuid - in a command process, before the uid change:
 * lock securebits (NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off, each LOCKED) and
 * clear the bounding set. Needs CAP_SETPCAP. Where caps_securebits_probe
 * found no securebits, PR_SET_SECUREBITS's EINVAL is passed over (and only
 * that errno). Errors: -EPERM and other -errno of prctl(2). */
int caps_lock_down_before_setuid(struct tn_error *err);

/* caps_clear_all - in a command process, after the uid change: empty the
 * effective, permitted, inheritable and ambient sets, then check that all five
 * sets read back as empty. Errors: -errno of capset(2) or prctl(2), -EPERM if a
 * set is not empty afterwards. */
int caps_clear_all(struct tn_error *err);

#endif
