/* landlock.h - the Landlock layer of every command: the manifest's
 * landlock.writable paths (and the standard device files a shell writes to)
 * keep every write right, everything else is read and execute only.
 * The ruleset is made once in turninit and applied in each command process.
 * Sources: landlock(7), landlock_create_ruleset(2), landlock_add_rule(2),
 * landlock_restrict_self(2), Documentation/userspace-api/landlock.rst. */
#ifndef TURNINIT_LANDLOCK_H
#define TURNINIT_LANDLOCK_H

#include <stdbool.h>

#include "policy/error.h"
#include "policy/manifest.h"

/* Written by a shell or its tools through paths opened at run time, so always
 * writable: an inherited fd (stdout, a pipe) is never checked by Landlock. */
/* clang-format 14 reads a macro body that starts with '{' as a block: kept as written */
/* clang-format off */
#define LL_DEVICE_PATHS { "/dev/null", "/dev/zero", "/dev/full", "/dev/tty", \
			  "/dev/ptmx", "/dev/pts", "/dev/shm", NULL }
/* clang-format on */

struct ll_ruleset {
	int fd;              /* the ruleset, close-on-exec; -1 when Landlock is not applied */
	int abi;             /* the Landlock ABI version in use; 0: none */
	bool scoped_signals; /* LANDLOCK_SCOPE_SIGNAL (ABI 6): a command signals
				only processes of its own domain */
};

/* ll_abi - the best Landlock ABI the kernel offers (1..), or 0 when it has none
 * (ENOSYS: not built; EOPNOTSUPP: disabled at boot; EPERM: refused by a
 * runtime's seccomp profile). */
int ll_abi(void);

/* ll_prepare - make the ruleset for m with the best ABI: handled are every
 * write right of that ABI (WRITE_FILE, REMOVE_*, MAKE_*, REFER from ABI 2,
 * TRUNCATE from 3, IOCTL_DEV from 5); each existing writable path (and each
 * existing LL_DEVICE_PATHS entry) gets them all (a non-directory only the
 * file rights); reading and executing are not handled, so stay allowed.
 * A path that does not exist is skipped. scope_signals (turn.c asks it
 * in every mode): from ABI 6 the ruleset also scopes signals
 * (LANDLOCK_SCOPE_SIGNAL), so a command can signal only processes of its own
 * domain, its own descendants: not turninit, a keeper or another command,
 * by kill(2) and its kin or by a file's owner signal (F_SETOWN); below ABI 6
 * only the seccomp guard holds (filter.h), ret->scoped_signals false.
 * Without Landlock: ret->fd = -1 and success when l->optional, else
 * -EOPNOTSUPP naming the manifest key. Errors: -errno of open(2) or the
 * landlock syscalls. ret is written only on success. */
int ll_prepare(const struct mf_landlock *l, bool scope_signals, struct ll_ruleset *ret, struct tn_error *err);

/* ll_restrict - in a command process, after no_new_privs: enforce r (nothing
 * when r->fd is -1) and close its fd. Returns 0 or -errno of
 * landlock_restrict_self(2). Async-signal-safe. */
int ll_restrict(const struct ll_ruleset *r);

#endif
