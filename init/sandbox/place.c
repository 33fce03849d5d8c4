/* place.c - see place.h. */
#define _GNU_SOURCE
#include "sandbox/place.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/landlock.h"

/* path is dir or lies below it (by components: /tmpx is not below /tmp). */
bool place_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

const char *place_writable_holder(const char *path, const struct mf_manifest *m)
{
	static const char *const dev[] = LL_DEVICE_PATHS;

	if (place_path_under(path, m->home))
		return m->home;
	for (size_t i = 0; i < m->landlock.n_writable; i++)
		if (place_path_under(path, m->landlock.writable[i]))
			return m->landlock.writable[i];
	for (size_t i = 0; dev[i]; i++)
		if (place_path_under(path, dev[i]))
			return dev[i];
	return NULL;
}

bool place_open_to_uid(const struct stat *st, const struct mf_manifest *m)
{
	/* Non-root mode: turninit is m->uid itself, so what it owns is its own;
	 * Landlock keeps the commands off it (place_need_landlock). */
	return (st->st_uid == m->uid && geteuid() != m->uid) || (st->st_mode & 0022) != 0;
}

int place_need_landlock(const char *what, const struct mf_manifest *m, struct tn_error *err)
{
	if (geteuid() != m->uid || ll_abi() > 0)
		return 0;
	return err_set(err, EPERM,
		       "%s: turninit runs as the commands' uid %u (non-root mode), and without Landlock nothing keeps a command from changing it",
		       what, m->uid);
}

int place_resolve(const char *what, int fd, const struct stat *st, const char *hint, char ret_path[PATH_MAX],
		  struct tn_error *err)
{
	char proc[64], real[PATH_MAX];
	struct stat now;
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, real, sizeof(real) - 1);
	if (n <= 0)
		return err_errno(err, n < 0 ? errno : ENOENT, "%s: cannot resolve where it is (%s)", what,
				 proc);
	real[n] = '\0';
	/* Unlinked: the kernel shows "PATH (deleted)". What it keeps could only
	 * be read through this fd, and no one but turninit holds it. */
	if (st->st_nlink == 0)
		return err_set(err, EPERM, "%s: a deleted file (%s), which no one could read back", what,
			       real);
	if (real[0] != '/')
		return err_set(err, EPERM, "%s: cannot check where it is: %s is not a path", what, real);
	/* The link is the path from the root of the file's own mount namespace:
	 * for a file opened outside the container it names another file here, or
	 * none. Only a path that leads to this very inode is one to check. */
	if (stat(real, &now) != 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino)
		return err_set(err, EPERM,
			       "%s: cannot check where it is: %s names another file or none%s%s%s", what,
			       real, hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
	memcpy(ret_path, real, (size_t)n + 1);
	return 0;
}

int place_check_dir(const char *what, const char *path, const struct mf_manifest *m, struct tn_error *err)
{
	char dir[PATH_MAX], *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return err_set(err, EINVAL, "%s: %s is not an absolute path", what, path);
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st) != 0)
		return err_errno(err, errno, "%s: its directory %s", what, dir);
	if (place_open_to_uid(&st, m))
		return err_set(err, EPERM,
			       "%s: its directory %s is owned by uid %u or "
			       "writable by group or others",
			       what, dir, m->uid);
	return 0;
}
