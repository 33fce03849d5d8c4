/* landlock.c - see landlock.h. */
#define _GNU_SOURCE
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"

/* Rights newer than this system's UAPI header (Debian 12: ABI 2). */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)    /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)   /* ABI 5 */
#endif

#define LL_FILE_RIGHTS (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
			LANDLOCK_ACCESS_FS_IOCTL_DEV)

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

static int ll_allow(int ruleset, const char *path, uint64_t handled, struct tn_error *err)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	struct landlock_path_beneath_attr rule = { .allowed_access = handled };
	struct stat st;

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 || fstat(fd, &st) != 0)
		return err_errno(err, errno, "landlock: %s", path);
	if (!S_ISDIR(st.st_mode))
		rule.allowed_access &= LL_FILE_RIGHTS;
	rule.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
		return err_errno(err, errno, "landlock: rule for %s", path);
	return 0;
}

int ll_prepare(const struct mf_landlock *l, struct ll_ruleset *ret, struct tn_error *err)
{
	static const char *const devices[] = LL_DEVICE_PATHS;
	int abi = ll_abi();
	struct landlock_ruleset_attr attr;
	_cleanup_close_ int fd = -1;
	int r;

	if (abi == 0) {
		if (!l->optional)
			return err_set(err, EOPNOTSUPP,
				       "landlock: the kernel offers no Landlock ABI (or the runtime's seccomp profile refuses it), and the manifest requires it (landlock.optional is false)");
		ret->fd = -1;
		ret->abi = 0;
		return 0;
	}
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = ll_write_rights(abi);
	fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (fd < 0)
		return err_errno(err, errno, "landlock: creating the ruleset (ABI %d)", abi);
	for (size_t i = 0; i < l->n_writable; i++) {
		r = ll_allow(fd, l->writable[i], attr.handled_access_fs, err);
		if (r < 0)
			return r;
	}
	for (const char *const *d = devices; *d; d++) {
		if (l->no_shm && strcmp(*d, "/dev/shm") == 0)
			continue;   /* landlock.shm: false */
		r = ll_allow(fd, *d, attr.handled_access_fs, err);
		if (r < 0)
			return r;
	}
	ret->fd = steal_fd(&fd);
	ret->abi = abi;
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
