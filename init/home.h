/* home.h - the private tmpfs HOME (docs/design.md, "HOME owned by root").
 * Sources: mount(2), statfs(2) (TMPFS_MAGIC), tmpfs(5). */
#ifndef TURNINIT_HOME_H
#define TURNINIT_HOME_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

#define HOME_TMPFS_BYTES (64u << 20)   /* size of the tmpfs turninit mounts itself */
#define HOME_PODMAN_HINT "--tmpfs %s:rw,mode=0700,size=64m,U"
/* Docker refuses podman's U; it takes the owner itself (add exec when HOME
 * must run programs: Docker mounts a --tmpfs noexec) */
#define HOME_DOCKER_HINT "--tmpfs %s:mode=0700,uid=%u,gid=%u"
#define HOME_OVERFLOW_UID 65534u       /* /proc/sys/kernel/overflowuid's default */

/* home_setup - give the command a private, empty tmpfs at path, mode 0700,
 * owned by uid:gid.
 * can_mount: turninit holds CAP_SYS_ADMIN: it mounts a fresh tmpfs (nosuid,
 * nodev) on path, creating the directory if needed.
 * Otherwise path must already be a tmpfs mount point (statfs f_type TMPFS_MAGIC,
 * on another device than its parent, and in /proc/self/mountinfo a tmpfs whose
 * root is "/": not a bind of a directory inside another tmpfs) and empty; one
 * owned by root (as podman's `U` makes it when the container user is root) is
 * chowned to uid:gid (a Kubernetes emptyDir with medium Memory is a root-owned
 * tmpfs of mode 1777), one owned by anybody else is refused (in a user
 * namespace, root means the namespace's root: a tmpfs of host root's shows as
 * the overflow uid and is refused); the mode is set to 0700.
 * Errors: -errno with a message naming the podman flag to add (-ENOTSUP not a
 * tmpfs or not a mount point, -ENOTEMPTY not empty, -EPERM wrong owner). */
int home_setup(const char *path, uid_t uid, gid_t gid, bool can_mount, struct tn_error *err);

#endif
