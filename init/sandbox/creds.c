/* creds.c - see creds.h. */
#define _GNU_SOURCE
#include "sandbox/creds.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "policy/netallow.h"

/* The bytes of fd, a regular file of at most CREDS_FILE_MAX, into buf (at
 * least CREDS_FILE_MAX + 1 bytes); their count, or -errno, -EFBIG when
 * longer (a file that grows while read is caught by the count, not fstat). */
static ssize_t creds_read_all(int fd, char *buf)
{
	size_t got = 0;

	for (;;) {
		ssize_t r = TEMP_FAILURE_RETRY(read(fd, buf + got, CREDS_FILE_MAX + 1 - got));

		if (r < 0)
			return -errno;
		if (r == 0)
			return (ssize_t)got;
		got += (size_t)r;
		if (got > CREDS_FILE_MAX)
			return -EFBIG;
	}
}

/* DIR/NAME opened for reading, its links followed only while they stay
 * below DIR: a Kubernetes Secret volume makes NAME a link to ..data/NAME,
 * and ..data a link to a folder of the same volume. By openat2(2) with
 * RESOLVE_BENEATH; where the kernel has no openat2 (before Linux 5.6), the
 * path realpath(3) resolves must be below DIR's, then opened without
 * following a link. The fd, or -errno (-EXDEV: a link leads out of DIR). */
static int creds_open(const char *dir, const char *name)
{
	_cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
	_cleanup_free_ char *rdir = NULL, *rpath = NULL, *path = NULL;
	size_t n;
	long fd;

	if (dfd < 0)
		return -errno;
	fd = syscall(SYS_openat2, dfd, name, &how, sizeof(how));
	if (fd >= 0 || errno != ENOSYS)
		return fd >= 0 ? (int)fd : -errno;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	if (!(rdir = realpath(dir, NULL)) || !(rpath = realpath(path, NULL)))
		return -errno;
	n = strlen(rdir);
	if (strncmp(rpath, rdir, n) != 0 || (rpath[n] != '/' && strcmp(rdir, "/") != 0))
		return -EXDEV;
	fd = open(rpath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	return fd >= 0 ? (int)fd : -errno;
}

/* The value of DIR/NAME into *ret (malloc'd), checked as creds_load says;
 * *ret NULL and 0 when the file is absent. what: "network.allow[i].credential
 * NAME", for the messages; path: DIR/NAME, for them too. */
static int creds_read_one(const char *dir, const char *name, const char *path, const char *what, char **ret,
			  struct tn_error *err)
{
	_cleanup_close_ int fd = creds_open(dir, name);
	char *buf;
	struct stat st;
	ssize_t n;
	size_t len;

	*ret = NULL;
	if (fd == -ENOENT)
		return 0;
	if (fd == -EXDEV)
		return err_set(err, EXDEV, "%s: %s is a link that leads out of its folder", what, path);
	if (fd < 0)
		return err_errno(err, -fd, "%s: %s", what, path);
	if (fstat(fd, &st) != 0)
		return err_errno(err, errno, "%s: %s: fstat", what, path);
	if (!S_ISREG(st.st_mode))
		return err_set(err, EINVAL, "%s: %s is not a regular file", what, path);
	if (!(buf = malloc(CREDS_FILE_MAX + 1)))
		return err_set(err, ENOMEM, "out of memory");
	n = creds_read_all(fd, buf);
	len = n > 0 ? (size_t)n : 0;
	if (len > 0 && buf[len - 1] == '\n')
		len -= 1 + (len > 1 && buf[len - 2] == '\r');
	if (n >= 0) /* the one check of a value, a request's too */
		n = na_cred_value_check(buf, len);
	if (n < 0) {
		sodium_memzero(buf, CREDS_FILE_MAX + 1);
		free(buf);
		/* the reason only: never a byte of the value, nor where it is */
		if (n == -EFBIG)
			return err_set(err, EINVAL, "%s: %s is longer than %d bytes", what, path,
				       CREDS_FILE_MAX);
		if (n == -EILSEQ)
			return err_set(err, EINVAL,
				       "%s: %s holds a byte that is not printable ASCII (0x20..0x7e) before its one trailing line break",
				       what, path);
		if (n == -E2BIG)
			return err_set(err, EINVAL, "%s: %s holds a value of more than %d bytes", what, path,
				       CREDS_FILE_MAX - 1);
		if (n == -ENODATA)
			return err_set(err, EINVAL, "%s: %s is empty", what, path);
		return err_errno(err, (int)-n, "%s: %s: read", what, path);
	}
	buf[len] = '\0';
	*ret = buf;
	return 0;
}

/* The CA bundle of a credential opens as a regular file. */
static int creds_ca_check(const char *ca, const char *what, struct tn_error *err)
{
	_cleanup_close_ int fd = open(ca, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return err_errno(err, errno, "%s: its CA bundle %s cannot be read", what, ca);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return err_set(err, EINVAL, "%s: its CA bundle %s is not a regular file", what, ca);
	return 0;
}

int creds_load(const struct mf_network *n, const char *dir, struct creds *ret, struct tn_error *err)
{
	struct creds c = { .n = n->n_allow };

	if (!(c.value = calloc(n->n_allow + 1, sizeof(*c.value))))
		return err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < n->n_allow; i++) {
		const struct na_cred *cr = n->allow[i].cred;
		char what[128], path[4096];
		int r;

		if (!cr)
			continue;
		snprintf(what, sizeof(what), "network.allow[%zu].credential %s", i, cr->name);
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, cr->name) >= sizeof(path)) {
			r = err_set(err, ENAMETOOLONG, "%s: --credentials %s is too long", what, dir);
		} else {
			r = creds_ca_check(cr->ca ? cr->ca : CREDS_DEFAULT_CA, what, err);
			if (r >= 0)
				r = creds_read_one(dir, cr->name, path, what, &c.value[i], err);
		}
		if (r < 0) {
			creds_wipe(&c);
			return r;
		}
	}
	*ret = c;
	return 0;
}

bool creds_any(const struct creds *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->value[i])
			return true;
	return false;
}

bool creds_given(const char *dir, const char *name)
{
	int fd = creds_open(dir, name);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* An empty tmpfs, read-only from the start: there is nothing to write in it,
 * and nothing may be made there that a command would take for a value. */
int creds_hide(const char *dir, struct tn_error *err)
{
	struct stat st;

	if (stat(dir, &st) != 0)
		return errno == ENOENT ?
			       0 :
			       err_errno(err, errno,
					 "credentials: %s cannot be hidden from the commands (stat)", dir);
	if (mount("tmpfs", dir, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555") !=
	    0)
		return err_errno(err, errno,
				 "credentials: %s cannot be hidden from the commands, who would read the values there (mount of an empty tmpfs over it)",
				 dir);
	return 0;
}

void creds_wipe(struct creds *c)
{
	for (size_t i = 0; c->value && i < c->n; i++)
		if (c->value[i]) {
			sodium_memzero(c->value[i], strlen(c->value[i]));
			free(c->value[i]);
		}
	free(c->value);
	c->value = NULL;
	c->n = 0;
}
