/* place.h - whether a command of the turn could change a place turninit keeps
 * for itself (the audit log, the listen socket's directory): the writable set
 * (home, landlock.writable, the device paths Landlock always leaves writable),
 * the command uid's own files and what group or others may write, and where an
 * open fd really is (docs/audit.md, docs/protocol.md).
 * Sources: proc(5) /proc/self/fd, stat(2), path_resolution(7). */
#ifndef TURNINIT_PLACE_H
#define TURNINIT_PLACE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "policy/error.h"
#include "policy/manifest.h"

/* place_path_under - path is dir or lies below it, by its components ("/"
 * holds every path). Both absolute and normalised (the manifest's paths
 * are). */
bool place_path_under(const char *path, const char *dir);

/* place_writable_holder - the first place of m's writable set that holds path
 * (is path or an ancestor of it, by its components; "/" holds every path), or
 * NULL when none does. path: absolute. */
const char *place_writable_holder(const char *path, const struct mf_manifest *m);

/* place_open_to_uid - st (a file or directory) is owned by m->uid, or
 * writable by group or others: the command's uid could change it. In non-root
 * mode (turninit's euid is m->uid) owning it is not counted: turninit's files
 * are the commands' uid's too, and place_need_landlock is the guard. */
bool place_open_to_uid(const struct stat *st, const struct mf_manifest *m);

/* place_need_landlock - in non-root mode, a place turninit keeps for itself
 * (what: "audit log PATH", ...) needs Landlock, which alone keeps a command of
 * the same uid from writing, removing or replacing it (outside the writable
 * set). Errors: -EPERM when turninit's euid is m->uid and ll_abi() is 0. */
int place_need_landlock(const char *what, const struct mf_manifest *m, struct tn_error *err);

/* place_resolve - where fd is, as turninit sees it: the path /proc/self/fd/N
 * names, checked to be that very inode now (stat(2) of the path gives st's
 * st_dev and st_ino). st: fstat(2) of fd. ret_path: PATH_MAX bytes, written
 * only on success. A file of another mount namespace (opened outside the
 * container) has a path no stat here finds, or finds another file: refused,
 * since nothing shows that no path in the container names it. hint: added in
 * parentheses to that refusal (what to give instead), or NULL.
 * Errors (err names `what`): -EPERM a deleted file (st_nlink 0), a link that
 * is no absolute path (pipe:[N], socket:[N], anon_inode:...), or a path that
 * names another file or none. */
int place_resolve(const char *what, int fd, const struct stat *st, const char *hint, char ret_path[PATH_MAX],
		  struct tn_error *err);

/* place_check_dir - the directory of path (path with its last component
 * removed; "/" for "/x"): not owned by m->uid, not writable by group or
 * others. path: absolute, resolved (place_resolve).
 * Errors (err names `what`): -EPERM, or -errno of stat(2). */
int place_check_dir(const char *what, const char *path, const struct mf_manifest *m, struct tn_error *err);

#endif
