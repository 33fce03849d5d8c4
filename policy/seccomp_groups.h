/* seccomp_groups.h - named syscall groups, in the style of systemd's
 * `@mount` / `@privileged` tables (systemd.exec(5), SystemCallFilter=).
 *
 * Owns the table and its expansion into syscall names. Pure data: which
 * argument-level rules (clone flags, ioctl requests, socket families) apply is
 * decided in init/seccomp.c.
 */
#ifndef TURNINIT_SECCOMP_GROUPS_H
#define TURNINIT_SECCOMP_GROUPS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct scg_group {
	const char *name;              /* "@name" */
	const char *help;              /* one line */
	const char *const *members;    /* NULL-terminated: syscall names or "@group" */
};

extern const struct scg_group scg_groups[];   /* sorted by name */
extern const size_t scg_n_groups;

/* scg_find - the group called name ("@mount"), or NULL. */
const struct scg_group *scg_find(const char *name);

/* scg_expand - call emit(name, data) once for every syscall name reached from
 * names (groups expanded recursively, each syscall once, in table order).
 * Errors: -ENOENT an unknown group (err names it), -ELOOP a group cycle deeper
 * than 8, or the first negative value emit returns. */
int scg_expand(const char *const *names, size_t n,
	       int (*emit)(const char *syscall, void *data), void *data,
	       struct tn_error *err);

#endif
