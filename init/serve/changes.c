/* changes.c - see changes.h and docs/audit.md. */
#define _GNU_SOURCE
#include "serve/changes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/utf8.h"
#include "sandbox/place.h"
#include "util/clock.h"

static int base_fd = -1, root_fd = -1;
static char base_path[PATH_MAX], root_path[PATH_MAX];
static bool given; /* changes_open passed, probe or not (changes_given) */

struct walk {
	int (*emit)(json_t *ev);
	uint64_t entries, bytes, start_ms, max_ms;
	uint64_t added, removed, changed;
	uint64_t unreadable;                        /* entries it could not stat, open or list */
	char *unread[CHANGES_MAX_UNREADABLE_PATHS]; /* the first of their paths */
	size_t n_unread;
	uint64_t unread_more;  /* paths past those, not named */
	uint64_t not_compared; /* same-looking files it could not hash: listed as changed */
	uint64_t skipped;      /* subtrees past CHANGES_MAX_DEPTH or PATH_MAX */
	bool hash_off;         /* CHANGES_MAX_BYTES reached: no more reading */
	const char *stopped;   /* why the walk stopped early, or NULL */
	bool type_change;      /* the next change is one side of a path whose type changed */
	char path[PATH_MAX];   /* the relative path of the entry at hand */
};

/* One side of a path: lstat's answer, and the digest when it was made. */
struct ent {
	struct stat st;
	bool hashed;
	uint8_t d[crypto_generichash_BYTES];
};

int changes_open(const char *base, const struct mf_manifest *m, bool probe, struct tn_error *err)
{
	const char *w;
	int bfd, rfd;

	size_t bl = strlen(base);

	if (base[0] != '/' || strstr(base, "/./") || strstr(base, "/../") ||
	    (bl >= 2 && strcmp(base + bl - 2, "/.") == 0) || (bl >= 3 && strcmp(base + bl - 3, "/..") == 0) ||
	    bl >= sizeof(base_path))
		return err_set(err, EINVAL,
			       "--audit-changes %s: expected an absolute path without . or .. parts", base);
	if (place_path_under(base, m->workdir) || place_path_under(m->workdir, base))
		return err_set(err, EINVAL,
			       "--audit-changes %s: the base and the workdir %s may not hold one another",
			       base, m->workdir);
	if ((w = place_writable_holder(base, m)))
		return err_set(err, EPERM,
			       "--audit-changes %s: inside %s, which commands may write: the base must be the tree as it was (bind it read-only outside the writable set)",
			       base, w);
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0 && errno == ENOENT)
		return err_set(err, ENOENT,
			       "--audit-changes %s: no such directory: bind the tree as it was there, read-only, beside its copy-on-write view at %s (podman run -v HOSTDIR:%s:O -v HOSTDIR:%s:ro; docs/audit.md)",
			       base, m->workdir, m->workdir, base);
	if (bfd < 0)
		return err_errno(err, errno, "--audit-changes %s", base);
	rfd = open(m->workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd < 0) {
		close(bfd);
		return err_errno(err, errno, "--audit-changes: the workdir %s", m->workdir);
	}
	given = true;
	if (probe) {
		close(bfd);
		close(rfd);
		return 0;
	}
	base_fd = bfd;
	root_fd = rfd;
	snprintf(base_path, sizeof(base_path), "%s", base);
	snprintf(root_path, sizeof(root_path), "%s", m->workdir);
	return 0;
}

/* A bound that ends the walk reached (entries, time): it stops, and says
 * which. The bytes bound only stops the reading (hash_off). */
static bool stop_here(struct walk *w)
{
	if (w->stopped)
		return true;
	if (w->entries > CHANGES_MAX_ENTRIES)
		w->stopped = "more than 200000 entries";
	else if (clock_ms() - w->start_ms > w->max_ms)
		w->stopped = w->max_ms == CHANGES_MAX_MS ? "30 s passed" :
							   "5 s passed (the turn was ended by a signal)";
	if (!w->hash_off && w->bytes > CHANGES_MAX_BYTES)
		w->hash_off = true;
	return w->stopped != NULL;
}

/* An entry it could not stat, open, read or list (errno e), for a reason
 * other than ENOENT (gone since it was listed: nothing there to record):
 * counted, and the first len bytes of w->path kept ("." when empty: a
 * root), once in a row, the first CHANGES_MAX_UNREADABLE_PATHS of them. */
static void unreadable(struct walk *w, int e, size_t len)
{
	char path[PATH_MAX];

	if (e == ENOENT)
		return;
	w->unreadable++;
	snprintf(path, sizeof(path), "%.*s", (int)len, w->path);
	if (!path[0])
		snprintf(path, sizeof(path), ".");
	if (w->n_unread && strcmp(w->unread[w->n_unread - 1], path) == 0)
		return;
	if (w->n_unread < CHANGES_MAX_UNREADABLE_PATHS && (w->unread[w->n_unread] = strdup(path)))
		w->n_unread++;
	else
		w->unread_more++;
}

/* lstat of name in dirfd, the entry at w->path (pushed; its parent's path
 * is old bytes long), into st; false when it fails, which is unreadable
 * (but ENOENT). EACCES is the parent's: listed (read) but not searchable (a
 * mode 0444 a command left, and no CAP_DAC_READ_SEARCH or
 * CAP_DAC_OVERRIDE), so the parent's path is kept, once for all its names. */
static bool ent_stat(struct walk *w, int dirfd, const char *name, struct stat *st, size_t old)
{
	int e;

	if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) == 0)
		return true;
	e = errno;
	unreadable(w, e, e == EACCES ? old : strlen(w->path));
	return false;
}

/* The digest of a regular file's bytes or a link's target, into e. */
static void ent_hash(struct walk *w, int dirfd, const char *name, struct ent *e)
{
	crypto_generichash_state h;
	static uint8_t buf[65536];
	struct stat st;
	ssize_t n;
	int fd;

	if (e->hashed || w->hash_off)
		return;
	crypto_generichash_init(&h, NULL, 0, sizeof(e->d));
	if (S_ISLNK(e->st.st_mode)) {
		char target[PATH_MAX];

		n = readlinkat(dirfd, name, target, sizeof(target));
		if (n < 0) {
			unreadable(w, errno, strlen(w->path));
			return;
		}
		crypto_generichash_update(&h, (const uint8_t *)target, (size_t)n);
	} else if (S_ISREG(e->st.st_mode)) {
		/* O_NONBLOCK: what lstat called a file may be a FIFO now */
		fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0) {
			unreadable(w, errno, strlen(w->path));
			return;
		}
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return;
		}
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			crypto_generichash_update(&h, buf, (size_t)n);
			w->bytes += (uint64_t)n;
			if (stop_here(w) || w->hash_off)
				break;
		}
		close(fd);
		if (n != 0)
			return;
	} else {
		return;
	}
	crypto_generichash_final(&h, e->d, sizeof(e->d));
	e->hashed = true;
}

static json_t *ent_json(const struct ent *e)
{
	char mode[8], hex[2 * crypto_generichash_BYTES + 1];
	mode_t t = e->st.st_mode & S_IFMT;

	snprintf(mode, sizeof(mode), "%04o", (unsigned)(e->st.st_mode & 07777));
	if (e->hashed)
		sodium_bin2hex(hex, sizeof(hex), e->d, sizeof(e->d));
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:s?}", "type",
			 t == S_IFREG ? "file" :
			 t == S_IFDIR ? "dir" :
			 t == S_IFLNK ? "symlink" :
					"other",
			 "mode", mode, "uid", (json_int_t)e->st.st_uid, "gid", (json_int_t)e->st.st_gid,
			 "size", (json_int_t)e->st.st_size, "blake2b_256", e->hashed ? hex : NULL);
}

/* w->path as "path", or "path_base64" when it is not UTF-8 */
static int set_path(json_t *ev, const char *path)
{
	size_t n = strlen(path), i = 0, cap;
	uint32_t cp;
	char *b;
	int r;

	while (i < n) {
		size_t k = utf8_decode((const uint8_t *)path + i, n - i, &cp);

		if (k == 0)
			break;
		i += k;
	}
	if (i == n)
		return json_object_set_new(ev, "path", json_string(path));
	cap = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
	b = malloc(cap);
	if (!b)
		return -1;
	sodium_bin2base64(b, cap, (const uint8_t *)path, n, sodium_base64_VARIANT_ORIGINAL);
	r = json_object_set_new(ev, "path_base64", json_string(b));
	free(b);
	return r;
}

/* What a change is of (docs/audit.md "The change record"): a subset of
 * "content" (a file's bytes or size, a link's target, a device's number, or
 * not known to be the same: not compared), "mode", "owner" (uid or gid) of
 * a changed path; ["type"] for each side of a path whose type changed (its
 * removed and added lines); [] for any other added or removed path. */
static json_t *change_what(const struct walk *w, const struct ent *b, const struct ent *r)
{
	json_t *what = json_array();
	bool content;

	if (!what)
		return NULL;
	if (w->type_change)
		json_array_append_new(what, json_string("type"));
	if (!b || !r)
		return what;
	if (S_ISREG(b->st.st_mode) || S_ISLNK(b->st.st_mode))
		content = b->st.st_size != r->st.st_size || !b->hashed || !r->hashed ||
			  memcmp(b->d, r->d, sizeof(b->d)) != 0;
	else
		content = !S_ISDIR(b->st.st_mode) && b->st.st_rdev != r->st.st_rdev;
	if (content)
		json_array_append_new(what, json_string("content"));
	if (b->st.st_mode != r->st.st_mode)
		json_array_append_new(what, json_string("mode"));
	if (b->st.st_uid != r->st.st_uid || b->st.st_gid != r->st.st_gid)
		json_array_append_new(what, json_string("owner"));
	return what;
}

static void emit_change(struct walk *w, const char *op, const struct ent *base, const struct ent *now)
{
	json_t *ev = json_pack("{s:s, s:s, s:o}", "event", "change", "op", op, "what",
			       change_what(w, base, now));

	w->type_change = false;
	if (!ev || set_path(ev, w->path) != 0 ||
	    json_object_set_new(ev, "base", base ? ent_json(base) : json_null()) != 0 ||
	    json_object_set_new(ev, "now", now ? ent_json(now) : json_null()) != 0) {
		json_decref(ev);
		w->stopped = "out of memory";
		return;
	}
	*(op[0] == 'a' ? &w->added : op[0] == 'r' ? &w->removed : &w->changed) += 1;
	w->emit(ev);
}

static int strcmp_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The entry names of dirfd but "." and "..", sorted, into *ret_v and *ret_n
 * (*ret_v may be NULL when there are none). Errors: -errno of fdopendir(3)
 * or readdir(3) (EACCES, EIO), -ENOMEM: nothing listed, not half a list. */
static int list_dir(int dirfd, char ***ret_v, size_t *ret_n)
{
	int fd = dup(dirfd), r = 0;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char **v = NULL;
	size_t cap = 0, n = 0;
	struct dirent *e;

	if (!d) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	for (errno = 0; (e = readdir(d)); errno = 0) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (n == cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 32) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		if (!(v[n] = strdup(e->d_name)))
			break;
		n++;
	}
	if (errno)
		r = -errno;
	closedir(d);
	if (r < 0) {
		free_list(v, n);
		return r;
	}
	if (n)
		qsort(v, n, sizeof(*v), strcmp_ptr);
	*ret_v = v;
	*ret_n = n;
	return 0;
}

/* w->path + "/" + name (no "/" at the top); false when it would not fit */
static bool path_push(struct walk *w, const char *name, size_t *old)
{
	size_t l = strlen(w->path), k = strlen(name);

	*old = l;
	if (l + (l ? 1 : 0) + k + 1 > sizeof(w->path)) {
		w->skipped++; /* a path longer than PATH_MAX: not listed */
		return false;
	}
	if (l)
		w->path[l++] = '/';
	memcpy(w->path + l, name, k + 1);
	return true;
}

static void walk_pair(struct walk *w, int bfd, int rfd, unsigned depth);

/* name exists on one side only (base: removed, else added): it, and below
 * it when it is a directory. */
static void one_side(struct walk *w, int dirfd, const char *name, bool base, unsigned depth)
{
	struct ent e = { 0 };
	size_t old, n = 0;
	char **v = NULL;
	int fd, r;

	w->entries++;
	if (stop_here(w) || !path_push(w, name, &old))
		return;
	if (ent_stat(w, dirfd, name, &e.st, old)) {
		ent_hash(w, dirfd, name, &e);
		emit_change(w, base ? "removed" : "added", base ? &e : NULL, base ? NULL : &e);
		if (S_ISDIR(e.st.st_mode)) {
			if (depth >= CHANGES_MAX_DEPTH) {
				w->skipped++;
			} else if ((fd = openat(dirfd, name,
						O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
				unreadable(w, errno, strlen(w->path)); /* no read permission (EACCES) */
			} else {
				if ((r = list_dir(fd, &v, &n)) < 0)
					unreadable(w, -r, strlen(w->path));
				for (size_t i = 0; i < n && !stop_here(w); i++)
					one_side(w, fd, v[i], base, depth + 1);
				free_list(v, n);
				close(fd);
			}
		}
	}
	w->path[old] = '\0';
}

/* The same name on both sides. A file whose size, mode, owner, mtime and
 * ctime are the base's is the base's own file, not copied up: overlayfs
 * shows the lower inode until a copy-up, and no command can set a ctime. It
 * is not read. */
static void both_sides(struct walk *w, int bdir, int rdir, const char *name, unsigned depth)
{
	struct ent b = { 0 }, r = { 0 };
	size_t old;
	int bfd, rfd;
	bool same;

	w->entries += 2;
	if (stop_here(w) || !path_push(w, name, &old))
		return;
	if (!ent_stat(w, bdir, name, &b.st, old) || !ent_stat(w, rdir, name, &r.st, old))
		goto out;
	if ((b.st.st_mode & S_IFMT) != (r.st.st_mode & S_IFMT)) {
		w->path[old] = '\0';
		w->type_change = true;
		one_side(w, bdir, name, true, depth);
		w->type_change = true;
		one_side(w, rdir, name, false, depth);
		w->type_change = false; /* when a side emitted nothing */
		return;
	}
	same = b.st.st_mode == r.st.st_mode && b.st.st_uid == r.st.st_uid && b.st.st_gid == r.st.st_gid;
	if (S_ISREG(b.st.st_mode) || S_ISLNK(b.st.st_mode)) {
		bool untouched = same && b.st.st_size == r.st.st_size &&
				 b.st.st_mtim.tv_sec == r.st.st_mtim.tv_sec &&
				 b.st.st_mtim.tv_nsec == r.st.st_mtim.tv_nsec &&
				 b.st.st_ctim.tv_sec == r.st.st_ctim.tv_sec &&
				 b.st.st_ctim.tv_nsec == r.st.st_ctim.tv_nsec;

		if (!untouched) {
			ent_hash(w, bdir, name, &b);
			ent_hash(w, rdir, name, &r);
			/* a file it could not read on either side is not known to be
			 * the same: listed as changed, its digests null */
			if (same && b.st.st_size == r.st.st_size && !(b.hashed && r.hashed))
				w->not_compared++;
			same = same && b.st.st_size == r.st.st_size && b.hashed && r.hashed &&
			       memcmp(b.d, r.d, sizeof(b.d)) == 0;
		}
	} else if (!S_ISDIR(b.st.st_mode)) {
		same = same && b.st.st_rdev == r.st.st_rdev;
	}
	if (!same && !stop_here(w))
		emit_change(w, "changed", &b, &r);
	if (S_ISDIR(b.st.st_mode) && !stop_here(w)) {
		if (depth >= CHANGES_MAX_DEPTH) {
			w->skipped++;
		} else {
			bfd = openat(bdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (bfd < 0)
				unreadable(w, errno, strlen(w->path));
			rfd = openat(rdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (rfd < 0)
				unreadable(w, errno, strlen(w->path));
			if (bfd >= 0 && rfd >= 0)
				walk_pair(w, bfd, rfd, depth + 1);
			if (bfd >= 0)
				close(bfd);
			if (rfd >= 0)
				close(rfd);
		}
	}
out:
	w->path[old] = '\0';
}

/* Two directories of the same path (w->path): their names merged in
 * order. A side that cannot be listed is unreadable, and neither is walked:
 * half a pair would list the other side's names as added or removed. */
static void walk_pair(struct walk *w, int bfd, int rfd, unsigned depth)
{
	size_t nb = 0, nr = 0, i = 0, j = 0;
	char **b = NULL, **r = NULL;
	int eb = list_dir(bfd, &b, &nb), er = list_dir(rfd, &r, &nr);

	if (eb < 0 || er < 0) {
		unreadable(w, eb < 0 ? -eb : -er, strlen(w->path));
		free_list(b, nb);
		free_list(r, nr);
		return;
	}
	while ((i < nb || j < nr) && !stop_here(w)) {
		int c = i == nb ? 1 : j == nr ? -1 : strcmp(b[i], r[j]);

		if (c < 0)
			one_side(w, bfd, b[i++], true, depth);
		else if (c > 0)
			one_side(w, rfd, r[j++], false, depth);
		else
			both_sides(w, bfd, rfd, b[i++], depth), j++;
	}
	free_list(b, nb);
	free_list(r, nr);
}

/* w's unreadable paths as [{"path"|"path_base64": ...}], and freed; NULL
 * when out of memory. */
static json_t *unread_json(struct walk *w)
{
	json_t *a = json_array();

	for (size_t i = 0; i < w->n_unread; i++) {
		json_t *p = a ? json_object() : NULL;

		if (a && (!p || set_path(p, w->unread[i]) != 0)) {
			json_decref(p);
			json_decref(a);
			a = NULL;
		} else if (a && json_array_append_new(a, p) != 0) {
			json_decref(a);
			a = NULL;
		}
		free(w->unread[i]);
	}
	w->n_unread = 0;
	return a;
}

bool changes_given(void)
{
	return given;
}

void changes_record(int (*emit)(json_t *ev), bool hurried)
{
	struct walk w = { .emit = emit,
			  .start_ms = clock_ms(),
			  .max_ms = hurried ? CHANGES_HURRIED_MS : CHANGES_MAX_MS };
	struct ent b = { 0 }, r = { 0 };

	if (base_fd < 0)
		return;
	/* the roots themselves: their mode and owner (a chmod of /work) */
	if (fstat(base_fd, &b.st) == 0 && fstat(root_fd, &r.st) == 0 &&
	    (b.st.st_mode != r.st.st_mode || b.st.st_uid != r.st.st_uid || b.st.st_gid != r.st.st_gid)) {
		snprintf(w.path, sizeof(w.path), ".");
		emit_change(&w, "changed", &b, &r);
		w.path[0] = '\0';
	}
	walk_pair(&w, base_fd, root_fd, 0);
	emit(json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:I, s:I, s:I, s:b, s:s?}",
		       "event", "changes", "base", base_path, "root", root_path, "added", (json_int_t)w.added,
		       "removed", (json_int_t)w.removed, "changed", (json_int_t)w.changed, "entries",
		       (json_int_t)w.entries, "bytes_hashed", (json_int_t)w.bytes, "unreadable",
		       (json_int_t)w.unreadable, "unreadable_paths", unread_json(&w), "unreadable_paths_more",
		       (json_int_t)w.unread_more, "not_compared", (json_int_t)w.not_compared, "skipped",
		       (json_int_t)w.skipped, "duration_ms", (json_int_t)(clock_ms() - w.start_ms),
		       "complete",
		       !w.stopped && !w.unreadable && !w.not_compared && !w.skipped && !w.hash_off, "stopped",
		       w.stopped));
	close(base_fd);
	close(root_fd);
	base_fd = root_fd = -1;
}
