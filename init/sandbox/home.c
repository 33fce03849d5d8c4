/* home.c - see home.h. */
#define _GNU_SOURCE
#include "sandbox/home.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "sandbox/caps.h"

/* mkdir -p with mode 0755 for the parents and path itself. */
static int mkdir_parents(const char *path)
{
	char buf[PATH_MAX];

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int dir_is_empty(int fd)
{
	_cleanup_close_ int dfd = dup(fd);
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *e;

	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d)
		return -errno;
	dfd = -1; /* d's now */
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			return 0;
	return 1;
}

/* The mount at path, as /proc/self/mountinfo (proc(5)) lists it: true when the
 * last (topmost) entry for path is a tmpfs whose root is "/", on device dev.
 * A bind mount of a directory inside some other tmpfs (a host's /dev/shm/x)
 * has that directory as its root: it is not a private tmpfs. */
static bool home_mount_is_whole_tmpfs(const char *path, dev_t dev)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	bool ok = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		/* "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE ..." */
		char *field[5], *save = NULL, *dash = strstr(line, " - "), *fstype, *end;
		unsigned long maj, min;
		int n = 0;

		if (!dash)
			continue;
		*dash = '\0';
		for (char *t = strtok_r(line, " ", &save); t && n < 5; t = strtok_r(NULL, " ", &save))
			field[n++] = t;
		fstype = strtok_r(dash + 3, " ", &save);
		if (n < 5 || !fstype || strcmp(field[4], path) != 0)
			continue;
		maj = strtoul(field[2], &end, 10);
		if (*end != ':')
			continue;
		min = strtoul(end + 1, &end, 10);
		if (*end != '\0')
			continue;
		/* a later entry for the same point is mounted over an earlier one */
		ok = strcmp(fstype, "tmpfs") == 0 && strcmp(field[3], "/") == 0 && makedev(maj, min) == dev;
	}
	return ok;
}

/* turninit not PID 1 and in PID 1's mount namespace (run by hand on a host,
 * or under another init in one container): a mount made there would outlive
 * turninit, over whatever that namespace had at HOME (a host's /home/agent).
 * It takes a mount namespace of its own first, every mount a slave of the
 * old one (mount_namespaces(7)), so HOME's tmpfs goes with its last process.
 * A PID 1 of /proc/1 that cannot be read counts as another namespace's
 * owner: turninit takes its own then too. */
static int home_own_mount_ns(struct tn_error *err)
{
	struct stat self, init;

	if (getpid() == 1)
		return 0;
	if (stat("/proc/self/ns/mnt", &self) == 0 && stat("/proc/1/ns/mnt", &init) == 0 &&
	    (self.st_dev != init.st_dev || self.st_ino != init.st_ino))
		return 0;
	if (unshare(CLONE_NEWNS) != 0)
		return err_errno(err, errno,
				 "HOME: turninit is not PID 1 and shares PID 1's mount namespace; taking one of its own so HOME's tmpfs is not left there");
	/* source and type are ignored for a propagation change; given as
	 * strings all the same (valgrind checks the pointers) */
	if (mount("none", "/", "none", MS_REC | MS_SLAVE, NULL) != 0)
		return err_errno(err, errno, "HOME: making its own mount namespace a slave of PID 1's");
	return 0;
}

static int home_mount(const char *path, uid_t uid, gid_t gid, struct tn_error *err)
{
	char opts[128];
	int r = home_own_mount_ns(err);

	if (r < 0)
		return r;
	r = mkdir_parents(path);
	if (r < 0)
		return err_errno(err, r, "HOME %s: cannot create it", path);
	snprintf(opts, sizeof(opts), "mode=0700,uid=%u,gid=%u,size=%u", (unsigned)uid, (unsigned)gid,
		 HOME_TMPFS_BYTES);
	if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
		return err_errno(err, errno, "HOME %s: mounting a tmpfs", path);
	return 0;
}

/* The parent directory of path, in buf (PATH_MAX bytes). */
static void home_parent(const char *path, char *buf)
{
	char *slash;

	snprintf(buf, PATH_MAX, "%s", path);
	slash = strrchr(buf, '/');
	if (slash == buf)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
}

/* Non-root mode, HOME missing: a kubelet's memory emptyDir (root's, 1777, or
 * with fsGroup root:GROUP 2777) mounted at HOME's parent, which turninit
 * cannot chown; it makes HOME there itself, mode 0700, its own. */
static int home_make(const char *path, uid_t uid, bool dry, struct tn_error *err)
{
	char parent[PATH_MAX];
	_cleanup_close_ int pfd = -1, fd = -1;
	struct statfs sfs;
	struct stat st;
	int r;

	home_parent(path, parent);
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return err_errno(err, errno, "HOME %s is missing, and its parent %s", path, parent);
	if (fstatfs(pfd, &sfs) != 0 || fstat(pfd, &st) != 0)
		return err_errno(err, errno, "HOME %s: parent %s", path, parent);
	if ((unsigned long)sfs.f_type != TMPFS_MAGIC || !home_mount_is_whole_tmpfs(parent, st.st_dev))
		return err_set(err, ENOTSUP,
			       "HOME %s is missing and turninit runs unprivileged (non-root mode), so it cannot mount one: mount a tmpfs of uid %u at %s, or a memory emptyDir at its parent %s (turninit then makes %s in it)",
			       path, (unsigned)uid, path, parent, path);
	r = dir_is_empty(pfd);
	if (r < 0)
		return err_errno(err, r, "HOME %s: parent %s", path, parent);
	if (r == 0)
		return err_set(err, ENOTEMPTY,
			       "HOME %s is missing and its parent %s, a tmpfs, is not empty: it must be a fresh emptyDir of this container only",
			       path, parent);
	if (dry)
		return 0;
	if (mkdirat(pfd, strrchr(path, '/') + 1, 0700) != 0)
		return err_errno(err, errno, "HOME %s: making it in %s", path, parent);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0)
		return err_errno(err, errno, "HOME %s", path);
	if (st.st_uid != uid)
		return err_set(err, EPERM, "HOME %s: made owned by uid %u, not %u", path, (unsigned)st.st_uid,
			       (unsigned)uid);
	/* 0700 whatever the umask; clears a setgid bit of an fsGroup parent */
	if (fchmod(fd, 0700) != 0)
		return err_errno(err, errno, "HOME %s: chmod 0700", path);
	return 0;
}

static int home_check(const char *path, uid_t uid, gid_t gid, bool nonroot, bool dry, struct tn_error *err)
{
	char parent[PATH_MAX], hint[PATH_MAX + 64], dhint[PATH_MAX + 64];
	_cleanup_close_ int fd = -1;
	struct statfs sfs;
	struct stat st, pst;
	int r;

	snprintf(hint, sizeof(hint), HOME_PODMAN_HINT, path);
	snprintf(dhint, sizeof(dhint), HOME_DOCKER_HINT, path, (unsigned)uid, (unsigned)gid);
	/* O_NOFOLLOW|O_DIRECTORY: a symlink planted at HOME is refused, and every
	 * later check is made on this one open directory. */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && nonroot)
		return home_make(path, uid, dry, err);
	if (fd < 0)
		return err_set(err, errno == ENOENT ? ENOTSUP : errno,
			       "HOME %s: %s, and turninit lacks CAP_SYS_ADMIN to mount a tmpfs: add %s to podman run, %s to docker run (Kubernetes: an emptyDir with medium: Memory)",
			       path, strerror(errno), hint, dhint);
	if (fstatfs(fd, &sfs) != 0 || fstat(fd, &st) != 0)
		return err_errno(err, errno, "HOME %s", path);
	home_parent(path, parent);
	if (stat(parent, &pst) != 0)
		return err_errno(err, errno, "HOME %s: parent", path);
	if ((unsigned long)sfs.f_type != TMPFS_MAGIC || st.st_dev == pst.st_dev ||
	    !home_mount_is_whole_tmpfs(path, st.st_dev))
		return err_set(err, ENOTSUP,
			       "HOME %s is not a private tmpfs mount and turninit lacks CAP_SYS_ADMIN to mount one: add %s to podman run, %s to docker run (Kubernetes: an emptyDir with medium: Memory)",
			       path, hint, dhint);
	r = dir_is_empty(fd);
	if (r < 0)
		return err_errno(err, r, "HOME %s", path);
	if (r == 0)
		return err_set(err, ENOTEMPTY,
			       "HOME %s is a tmpfs but not empty: nothing may be mounted below it (no -v into HOME), and podman copies the image's %s into a --tmpfs unless told not to (add notmpcopyup to its options; Docker never copies)",
			       path, path);
	if (st.st_uid != uid || st.st_gid != gid) {
		/* In a user namespace (rootless podman) an owner outside it, such
		 * as host root, shows as the overflow uid and is refused here. */
		if (nonroot)
			return err_set(err, EPERM,
				       "HOME %s is a tmpfs of %u:%u and turninit runs unprivileged as %u:%u (non-root mode), so it cannot take it: mount it owned by %u:%u (%s), or mount a memory emptyDir at its parent directory, where turninit makes HOME itself",
				       path, (unsigned)st.st_uid, (unsigned)st.st_gid, (unsigned)uid,
				       (unsigned)gid, (unsigned)uid, (unsigned)gid, dhint);
		if (st.st_uid != 0 && st.st_uid != geteuid())
			return err_set(err, EPERM, "HOME %s is owned by uid %u, not %u%s", path,
				       (unsigned)st.st_uid, (unsigned)uid,
				       st.st_uid == HOME_OVERFLOW_UID ?
					       " (the overflow uid: an owner outside this user namespace, such as host root)" :
					       "");
		if (dry && caps_have(CAP_CHOWN) && caps_have(CAP_FOWNER))
			return 0;
		if (dry)
			errno = EPERM; /* what fchown(2) would answer */
		if (dry || fchmod(fd, 0700) != 0 || fchown(fd, uid, gid) != 0)
			return err_set(err, errno,
				       "HOME %s: giving it to %u:%u: %s (turninit needs CAP_CHOWN and CAP_FOWNER for that, as root in the container: do not start it with --user or drop those)",
				       path, (unsigned)uid, (unsigned)gid, strerror(errno));
	} else if (!dry && (st.st_mode & 07777) != 0700 && fchmod(fd, 0700) != 0) {
		return err_errno(err, errno, "HOME %s: chmod 0700", path);
	}
	return 0;
}

int home_setup(const char *path, uid_t uid, gid_t gid, enum home_how how, struct tn_error *err)
{
	return how == HOME_MOUNT ? home_mount(path, uid, gid, err) :
				   home_check(path, uid, gid, how == HOME_OWN, false, err);
}

int home_probe(const char *path, uid_t uid, gid_t gid, enum home_how how, struct tn_error *err)
{
	return how == HOME_MOUNT ? 0 : home_check(path, uid, gid, how == HOME_OWN, true, err);
}
