/* landlock.c - see landlock.h. */
#define _GNU_SOURCE
#include "sandbox/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "util/plat.h"

/* Rights newer than this system's UAPI header (Debian 12: ABI 2). */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#endif

#define LL_FILE_RIGHTS \
	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

int ll_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return v > 0 ? (int)v : 0;
}

/* The write rights a ruleset of ABI abi handles. */
static uint64_t ll_write_rights(int abi)
{
	uint64_t r = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
		     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
		     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
		     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
		     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

/* landlock.shm false: the manifest refuses a writable path that names
 * /dev/shm or holds it, but a path that leads there through a symbolic link
 * (Debian's /run/shm) or is a bind mount of its file system is only known
 * here. fd: the writable path, opened. Returns 0, or -EPERM with err filled. */
static int ll_check_no_shm(int fd, const char *path, const struct stat *st, struct tn_error *err)
{
	char link[64], real[PATH_MAX], shm[PATH_MAX];
	struct stat shm_st, dev_st;
	ssize_t n;
	size_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, real, sizeof(real) - 1);
	if (n < 0)
		return err_errno(err, errno, "landlock: %s: cannot tell where it leads", path);
	real[n] = '\0';
	if (!realpath("/dev/shm", shm) || stat("/dev/shm", &shm_st) != 0 || stat("/dev", &dev_st) != 0)
		return 0; /* no /dev/shm: nothing to keep */
	len = strlen(real);
	if (strcmp(real, "/") == 0 ||
	    (strncmp(shm, real, len) == 0 && (shm[len] == '\0' || shm[len] == '/')) ||
	    (shm_st.st_dev != dev_st.st_dev && st->st_dev == shm_st.st_dev))
		return err_set(err, EPERM,
			       "landlock.writable: %s leads to %s, which makes /dev/shm writable, and landlock.shm is false",
			       path, real);
	return 0;
}

/* A rule granting handled under path. l: the manifest's section when path is
 * one of its writable paths (checked where it leads: not into /proc, not to
 * /dev/shm under shm false), NULL for a device path. */
static int ll_allow(int ruleset, const char *path, uint64_t handled, const struct mf_landlock *l,
		    struct tn_error *err)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	struct landlock_path_beneath_attr rule = { .allowed_access = handled };
	struct stat st;
	int r;

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 || fstat(fd, &st) != 0)
		return err_errno(err, errno, "landlock: %s", path);
	if (l && l->no_shm && (r = ll_check_no_shm(fd, path, &st, err)) < 0)
		return r;
	/* the manifest refuses /proc by name; a link into it is known here */
	if (l) {
		struct statfs fs;

		if (fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC)
			return err_set(err, EPERM,
				       "landlock.writable: %s leads into /proc, which commands may not write (they could lower their oom_score_adj)",
				       path);
	}
	if (!S_ISDIR(st.st_mode))
		rule.allowed_access &= LL_FILE_RIGHTS;
	rule.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
		return err_errno(err, errno, "landlock: rule for %s", path);
	return 0;
}

/* struct landlock_ruleset_attr as of ABI 6 (Linux 6.12), which Debian 12's
 * headers predate: scoped follows handled_access_net (ABI 4). */
struct ll_attr_v6 {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};
#define LL_SCOPE_SIGNAL (1ULL << 1) /* LANDLOCK_SCOPE_SIGNAL */

int ll_prepare(const struct mf_landlock *l, bool scope_signals, struct ll_ruleset *ret, struct tn_error *err)
{
	static const char *const devices[] = LL_DEVICE_PATHS;
	int abi = ll_abi();
	struct ll_attr_v6 attr;
	_cleanup_close_ int fd = -1;
	int r;

	if (abi == 0) {
		if (!l->optional) {
			/* the probe again, for its errno: ENOSYS under gVisor, which
			 * implements no Landlock; EOPNOTSUPP where Linux has it off */
			long v = syscall(SYS_landlock_create_ruleset, NULL, 0,
					 LANDLOCK_CREATE_RULESET_VERSION);
			int e = v < 0 ? errno : 0;
			char why[96];

			snprintf(why, sizeof(why), "%s%s",
				 e == ENOSYS     ? "ENOSYS" :
				 e == EOPNOTSUPP ? "EOPNOTSUPP" :
				 e == EPERM      ? "EPERM" :
						   strerror(e),
				 e == ENOSYS && plat_is_gvisor() ? ": gVisor implements no Landlock" : "");
			return err_set(err, EOPNOTSUPP,
				       "landlock: not available (landlock_create_ruleset: %s; or the runtime's seccomp profile refuses it), and the manifest requires it (landlock.optional is false): a manifest with landlock.optional true runs without it",
				       why);
		}
		ret->fd = -1;
		ret->abi = 0;
		ret->scoped_signals = false;
		return 0;
	}
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = ll_write_rights(abi);
	if (scope_signals && abi >= 6)
		attr.scoped = LL_SCOPE_SIGNAL;
	/* the v1 size unless scoping is asked: older kernels refuse a larger
	 * attr with unknown fields non-zero, and need not see them at all */
	fd = (int)syscall(SYS_landlock_create_ruleset, &attr,
			  attr.scoped ? sizeof(attr) : sizeof(attr.handled_access_fs), 0);
	if (fd < 0)
		return err_errno(err, errno, "landlock: creating the ruleset (ABI %d)", abi);
	for (size_t i = 0; i < l->n_writable; i++) {
		r = ll_allow(fd, l->writable[i], attr.handled_access_fs, l, err);
		if (r < 0)
			return r;
	}
	for (const char *const *d = devices; *d; d++) {
		if (l->no_shm && strcmp(*d, "/dev/shm") == 0)
			continue; /* landlock.shm: false */
		r = ll_allow(fd, *d, attr.handled_access_fs, NULL, err);
		if (r < 0)
			return r;
	}
	ret->fd = steal_fd(&fd);
	ret->abi = abi;
	ret->scoped_signals = attr.scoped != 0;
	return 0;
}

int ll_restrict(const struct ll_ruleset *r)
{
	int e = 0;

	if (r->fd < 0)
		return 0;
	if (syscall(SYS_landlock_restrict_self, r->fd, 0) != 0)
		e = -errno;
	close(r->fd);
	return e;
}
