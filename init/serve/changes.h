/* changes.h - a copy-on-write turn's change record (`--audit-changes BASE`,
 * docs/audit.md "The change record"): at the end of the turn turninit, not a
 * command, compares the manifest's workdir (the copy-on-write view the
 * commands changed, podman's `-v HOSTDIR:/work:O`) with BASE (the same tree
 * as it was, bound read-only) and writes one `change` line to the audit log
 * per path added, removed or changed, then one `changes` line with the counts
 * and whether the walk was whole.
 * Sources: openat(2) O_NOFOLLOW, fstatat(2) AT_SYMLINK_NOFOLLOW,
 * readlinkat(2), getdents via fdopendir(3); BLAKE2b (RFC 7693, libsodium
 * crypto_generichash). */
#ifndef TURNINIT_CHANGES_H
#define TURNINIT_CHANGES_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "policy/error.h"
#include "policy/manifest.h"

#define CHANGES_MAX_ENTRIES 200000u      /* entries of both trees visited */
#define CHANGES_MAX_BYTES (1ull << 30)   /* bytes of files hashed */
#define CHANGES_MAX_MS 30000u            /* milliseconds of the walk */
#define CHANGES_HURRIED_MS 5000u         /* the same when a signal ended the turn */
#define CHANGES_MAX_DEPTH 128u           /* directory levels below the roots */
#define CHANGES_MAX_UNREADABLE_PATHS 32u /* unreadable paths named in the record */

/* changes_open - check BASE for m and keep both roots open: BASE absolute, a
 * directory, neither it nor m->workdir inside the other, BASE not in m's
 * writable set (a base the commands could change records nothing); m->workdir
 * a directory. probe: check only (verify), keep nothing. Call it as root,
 * before privileges are dropped; the fds are close-on-exec.
 * Errors: -EINVAL (not absolute, nested), -EPERM (writable by commands),
 * -errno of open(2) (ENOENT: err says how to bind BASE read-only; ENOTDIR),
 * err naming BASE. */
int changes_open(const char *base, const struct mf_manifest *m, bool probe, struct tn_error *err);

/* changes_given - true once changes_open passed (probe or not): the turn
 * has, or verify checked, --audit-changes. */
bool changes_given(void);

/* changes_record - at the end of the turn, when every command is gone:
 * walk both roots in name order, without following a symbolic link, and
 * write through emit (the audit log's writer; it steals each event) one
 * {"event":"change", "op": "added"|"removed"|"changed", "path": relative
 * to the roots ("." for the roots themselves; "path_base64" for a name that
 * is not UTF-8), "base": ENTRY|null, "now": ENTRY|null} per difference,
 * where ENTRY is {"type": "file"|"dir"|"symlink"|"other", "mode": "0644",
 * "uid", "gid", "size", "blake2b_256": of a file's bytes or a link's target,
 * else null}; a path changed when its mode bits, owner or bytes differ (not
 * its times); one whose type changed is removed and added; a directory
 * added or removed is listed with everything below it. Then one
 * {"event":"changes", "base", "root", "added", "removed", "changed",
 * "entries", "bytes_hashed", "unreadable" (entries it could not stat,
 * open, read or list, for any reason but ENOENT: one removed while it
 * walked is not there), "unreadable_paths" ([{"path"|"path_base64"}], the
 * first CHANGES_MAX_UNREADABLE_PATHS of their paths, a directory that
 * lists but cannot be searched once, as itself, "." for a root),
 * "unreadable_paths_more" (the paths past those, not named: a record
 * whose list was cut says so),
 * "not_compared" (files that look changed but it could not read: listed
 * as changed), "skipped" (subtrees past CHANGES_MAX_DEPTH or PATH_MAX),
 * "duration_ms", "complete": B (no bound reached, nothing unread),
 * "stopped": null|why}. The entries and time bounds (CHANGES_HURRIED_MS
 * when hurried: a signal ended the turn, and the runtime's kill follows)
 * end the walk; the bytes bound ends the reading only. Nothing when
 * changes_open was not called. */
void changes_record(int (*emit)(json_t *ev), bool hurried);

#endif
