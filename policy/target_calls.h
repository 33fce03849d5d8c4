/* target_calls.h - the x86_64 system calls that take another process as
 * their target (a pid, a pidfd, or a which/who pair), each with what keeps a
 * command from turning it on turninit, a keeper or another command when they
 * share its uid (non-root mode; docs/security.md, "Non-root mode").
 * Built from libseccomp's syscall table, every entry reviewed; the unit test
 * fails when libseccomp names a syscall the review has not seen. */
#ifndef TURNINIT_TARGET_CALLS_H
#define TURNINIT_TARGET_CALLS_H

#include <stddef.h>

enum tc_class {
	TC_SIGNAL,  /* sends a signal: the seccomp guard of turninit's pid (filter.h)
		       and Landlock's signal scope (ABI 6) */
	TC_PTRACE,  /* checked by ptrace_may_access(): Landlock denies it towards a
		       process outside the caller's domain (every ABI) */
	TC_GUARDED, /* changes the target and no Landlock hook sees it: the seccomp
		       guard lets a command make it on itself only */
	TC_READ,    /* only reads about the target (or the kernel allows it on a
		       dying process only): left open */
	TC_SELF,    /* the kernel itself allows only the caller or its children */
};

struct tc_call {
	const char *name;
	enum tc_class cls;
	/* TC_GUARDED: refused unless argument target_arg (a pid, or who) is 0
	 * (the caller itself, or its own process group) ... */
	int target_arg;
	/* ... and, when write_arg >= 0, only when that argument is not 0 (the
	 * call changes something: prlimit64's new limit) */
	int write_arg;
	/* TC_GUARDED: the value of argument 0 (which) that names every process
	 * of a uid, refused whatever who is; -1: none */
	int which_user;
	const char *why;
};

/* tc_calls - sorted by name (strcmp), tc_n_calls of them. */
extern const struct tc_call tc_calls[];
extern const size_t tc_n_calls;

/* tc_find - the entry of name, or NULL. */
const struct tc_call *tc_find(const char *name);

#endif
