/* spawn.h - starting one command process: the steps of its set-up, in the
 * one order that works (spawn.c's table spawn_steps, the one copy of that
 * order; spawn_step_name lists it), then execve of the shell.
 * Sources: clone(2) CLONE_VM and CLONE_VFORK, setsid(2), setrlimit(2), setgroups(2), setresuid(2),
 * prctl(2) PR_SET_NO_NEW_PRIVS, execve(2), close_range(2). */
#ifndef TURNINIT_SPAWN_H
#define TURNINIT_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

#include "policy/error.h"
#include "policy/manifest.h"
#include "sandbox/filter.h"
#include "sandbox/landlock.h"

struct spawn_plan {
	const char *shell; /* absolute path of bash */
	char *const *argv; /* {"bash","--noprofile","--norc","-c",CMD,...,NULL} */
	char *const *envp; /* the exact environment (envfilter.h) */
	uid_t uid;
	gid_t gid;
	const char *workdir;
	const struct mf_limits *limits;
	const struct ll_ruleset *landlock;
	const struct sc_program *filter;
	int stdio[3];                           /* fds for 0, 1, 2; -1: inherit turninit's */
	uint64_t sig_reset;                     /* bit N-1: signal N is set to SIG_DFL in the
						   child (every one in spawn_plan_of; a keeper
						   gives spawn_signals_to_reset's) */
	bool filter_loaded;                     /* the caller (a keeper) runs under filter
						   already, which the child inherits: not
						   loaded again (false in spawn_plan_of) */
	int report_sock;                        /* a keeper's hand-over socket, holding the
						   write end of the command's exec report for
						   the child to take (spawn_command); -1: none
						   (spawn_plan_of) */
	const struct sc_program *notify_filter; /* seccomp-notify (notify.h): the
					 second filter, whose listener the child
					 sends on notify_sock before the main one is
					 loaded; NULL: none (spawn_plan_of) */
	int notify_sock;
	bool nonroot; /* turninit runs as uid:gid with no capability
			 (caps.h): no securebits, bounding set, group
			 or uid change; false in spawn_plan_of */
};

/* spawn_plan_of - the plan of one command under manifest m: its shell, uid,
 * gid and limits, with argv and envp as given, workdir (NULL: the manifest's),
 * the prepared Landlock ruleset and seccomp filter, and stdio fds (-1:
 * inherit turninit's). Pure; the pointers must outlive the plan. */
struct spawn_plan spawn_plan_of(const struct mf_manifest *m, char *const *argv, char *const *envp,
				const char *workdir, const struct ll_ruleset *landlock,
				const struct sc_program *filter, int in_fd, int out_fd, int err_fd);

/* The per-turn half of every command's plan: what the turn prepared once
 * (init/turn.h, turn_base) and each command and keeper of the turn shares.
 * A command's plan is made from it (spawn_plan_from); a keeper starts from
 * it (keeper.h). The pointers are the turn's, which outlives every plan. */
struct spawn_base {
	const struct mf_manifest *m;
	bool nonroot;                      /* non-root mode (caps.h) */
	const struct ll_ruleset *landlock; /* fd -1 without Landlock */
	const struct sc_program *filter;
	const struct sc_program *notify_filter; /* seccomp-notify (notify.h): the
					 commands' second filter; NULL: none */
	int notify_sock;                        /* the write end the commands hand their
						   listener to PID 1 on (net.h notify_wr); -1:
						   none */
	bool filter_in_keeper;                  /* the filter refuses no call of a keeper,
						   which then loads it once (keeper.h) */
};

/* spawn_plan_from - the spawn plan of one command under base: argv, envp,
 * workdir (NULL: the manifest's) and its stdin, stdout, stderr (-1:
 * inherited); spawn_plan_of's, with base's mode and seccomp-notify's filter
 * and socket. Pure; base's pointers must outlive the plan. */
struct spawn_plan spawn_plan_from(const struct spawn_base *base, char *const *argv, char *const *envp,
				  const char *workdir, int in_fd, int out_fd, int err_fd);

/* spawn_signals_to_reset - the signals whose disposition in the calling
 * process is not SIG_DFL (bit N-1 for signal N; one whose disposition cannot
 * be read is in it too): those a child would inherit and must reset, when
 * the caller's dispositions do not change afterwards (a keeper's do not).
 * Sources: rt_sigaction(2). */
uint64_t spawn_signals_to_reset(void);

/* spawn_close_fds - close every fd above 2 except the n in keep (-1 entries
 * are ignored). close_range(2) where allowed, else what /proc/self/fd lists.
 * Returns 0 or -errno. */
int spawn_close_fds(const int *keep, int n);

/* spawn_argv - the shell argv for a command: one word is a bash command string
 * (`bash --noprofile --norc -c -- WORD`) unless argv_form; several words, or
 * one with argv_form (a request's argv), are an argv run through
 * `bash --noprofile --norc -c -- 'exec -- "$@"' bash WORD...` so no word is
 * re-parsed. Each `--` keeps a word that starts with '-' from being read as an
 * option of bash or of its exec.
 * Returns a malloc'd NULL-terminated array (strings not copied), or NULL. */
char **spawn_argv(char *const *words, int n, bool argv_form);

/* spawn_command - start the command of plan in a child made by
 * clone(CLONE_VM | CLONE_VFORK) (the caller's memory is shared, not copied,
 * until the child execs; the caller waits until then; in non-root mode
 * CLONE_VFORK alone, a copy), and exec its shell.
 * The caller must be single-threaded (turninit and a keeper are). On success *ret_pid is
 * the child (a session and process group leader: its pgid is its pid).
 * Errors: -errno with err naming the step. When a child existed, it has exited
 * and been reaped, and *ret_status is its wait status: exit 127 when execve of
 * the shell failed with ENOENT, 126 for another execve error (as bash does;
 * *ret_exec_failed is then true), 125 when a setup step failed. Without a
 * child (clone(2) failed) *ret_status is 125 << 8.
 *
 * The exec report (serve and listen mode, plan->report_sock >= 0): the child
 * takes a pipe's write end from that socket, close-on-exec, before its
 * set-up, so that it alone holds it. Last before its execve it writes its pid
 * there (a native int32_t); when the execve fails it writes one byte more.
 * The reader (turninit) thus learns without the caller having to run: the
 * pid and then end of file is the exec; end of file without the pid, or with
 * a byte after it, is no start (the caller's own report says why). A child
 * that cannot take or write the report fails its set-up (exit 125). */
int spawn_command(const struct spawn_plan *plan, pid_t *ret_pid, int *ret_status, bool *ret_exec_failed,
		  struct tn_error *err);

/* spawn_step_name - the name of the set-up step i (0 first: "session", ...,
 * "seccomp" last), or NULL past the last; for the unit test that holds the
 * order (tests/unit/test_spawn_steps.c). */
const char *spawn_step_name(size_t i);

#endif
