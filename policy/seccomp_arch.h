/* seccomp_arch.h - the syscall names of the group table and of the keepers
 * (policy/seccomp_groups.c, init/process/keeper.c) that an architecture
 * turninit builds for has no syscall for, and what does the same there.
 *
 * The groups are written in x86_64's names. aarch64 (like every architecture
 * newer than Linux 3.7) has only the *at and newer forms of the legacy calls:
 * no open, only openat; no fork, only clone; no epoll_wait, only epoll_pwait.
 * A rule on such a name cannot be in aarch64's program; init/sandbox/filter.c
 * leaves it out only where this table says why: the form there (instead) is
 * denied as strongly in the same set, or nothing there does what the name
 * did (instead NULL: I/O ports, x86 segment registers, calls removed from
 * Linux long ago). Pure data, no libseccomp; tests/unit/test_filter_arch.c
 * checks it against libseccomp's tables: every x86_64 name aarch64 lacks is
 * here, every instead is a syscall of aarch64. Sources: the kernel's
 * include/uapi/asm-generic/unistd.h (aarch64's table) and
 * arch/x86/entry/syscalls/syscall_64.tbl. */
#ifndef TURNINIT_SECCOMP_ARCH_H
#define TURNINIT_SECCOMP_ARCH_H

#include <stddef.h>

struct scg_absent {
	const char *arch;    /* "aarch64" */
	const char *syscall; /* the name it lacks: "open" */
	const char *instead; /* what does the same there ("openat"), or NULL */
	const char *why;     /* one line: how instead covers it, or why nothing need */
};

extern const struct scg_absent scg_absent[]; /* by arch, then name */
extern const size_t scg_n_absent;

/* scg_absent_find - the entry of syscall on arch, or NULL when the table has
 * none (the name is a syscall there, or it was never reviewed). */
const struct scg_absent *scg_absent_find(const char *arch, const char *syscall);

#endif
