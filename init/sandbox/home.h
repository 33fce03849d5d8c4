/* home.h - the private tmpfs HOME (docs/design.md, "HOME owned by root").
 * Sources: mount(2), statfs(2) (TMPFS_MAGIC), tmpfs(5). */
#ifndef TURNINIT_HOME_H
#define TURNINIT_HOME_H

#include <stdbool.h>
#include <sys/types.h>

#include "policy/error.h"

#define HOME_TMPFS_BYTES (64u << 20) /* size of the tmpfs turninit mounts itself */
#define HOME_PODMAN_HINT "--tmpfs %s:rw,mode=0700,size=64m,U"
/* Docker refuses podman's U; it takes the owner itself, and exec: Docker
 * mounts a --tmpfs noexec, where podman's runs HOME's scripts (issue 31) */
#define HOME_DOCKER_HINT "--tmpfs %s:exec,mode=0700,uid=%u,gid=%u"
#define HOME_OVERFLOW_UID 65534u /* /proc/sys/kernel/overflowuid's default */

/* How turninit comes by HOME (home_setup). */
enum home_how {
	HOME_MOUNT, /* it holds CAP_SYS_ADMIN: it mounts a fresh tmpfs */
	HOME_CHECK, /* privileged without it: it checks and takes the runtime's */
	HOME_OWN,   /* non-root mode (caps.h): it checks its own, or makes one */
};

/* home_setup - give the command a private, empty tmpfs at path, mode 0700,
 * owned by uid:gid.
 * HOME_MOUNT: turninit mounts a fresh tmpfs (nosuid, nodev) on path, creating
 * the directory if needed; when it is not PID 1 and shares PID 1's mount
 * namespace (run on a host), it first takes a mount namespace of its own
 * (unshare(2) CLONE_NEWNS, / a slave), so the tmpfs is not left behind.
 * HOME_CHECK: path must already be a tmpfs mount point (statfs f_type
 * TMPFS_MAGIC, on another device than its parent, and in /proc/self/mountinfo
 * a tmpfs whose root is "/": not a bind of a directory inside another tmpfs)
 * and empty; one owned by root (as podman's `U` makes it when the container
 * user is root) is chowned to uid:gid (a Kubernetes emptyDir with medium
 * Memory is a root-owned tmpfs of mode 1777), one owned by anybody else is
 * refused (in a user namespace, root means the namespace's root: a tmpfs of
 * host root's shows as the overflow uid and is refused); the mode is set to
 * 0700.
 * HOME_OWN (turninit is uid:gid with no capability): as HOME_CHECK, but the
 * tmpfs must already be uid:gid's; or path is missing and its parent is a
 * whole, empty tmpfs mount (a memory emptyDir, 1777 or with an fsGroup): path
 * is made there, mode 0700 (its group may be the parent's, an fsGroup).
 * Errors: -errno with a message naming the podman and docker flags to add
 * (-ENOTSUP not a tmpfs or not a mount point, -ENOTEMPTY not empty, -EPERM
 * wrong owner). */
int home_setup(const char *path, uid_t uid, gid_t gid, enum home_how how, struct tn_error *err);

/* home_probe - what home_setup would answer, found without changing
 * anything (verify): HOME_MOUNT always succeeds (the mount is made at the
 * start); HOME_CHECK and HOME_OWN make every check of home_setup, the same
 * refusal word for word, but neither chmod, chown nor mkdir (a HOME that
 * needs a chown is refused only when CAP_CHOWN or CAP_FOWNER is missing).
 * Errors: as home_setup. */
int home_probe(const char *path, uid_t uid, gid_t gid, enum home_how how, struct tn_error *err);

#endif
