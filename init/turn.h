/* turn.h - the turn at the top: what every command of a turn is locked down
 * with, prepared once per turn from the manifest, in the one order that
 * works: what the platform offers (securebits or none:
 * caps_securebits_probe), the seccomp program (libseccomp, exported as BPF),
 * HOME (a tmpfs turninit mounts or checks), the network (the proxy forked
 * here, init/proxy/proxy.h), the Landlock ruleset (its rules bind to the
 * inodes there, so after HOME), then turninit drops every capability but
 * those the commands' lock-down and end need, and (privileged mode) locks
 * its own securebits and empties its bounding set, which every command
 * inherits. main.c runs the steps once; the benchmark
 * (tests/bench/startup.c) runs the same table step by step to time each.
 * What the commands' processes take of it is its spawn base (turn_base,
 * init/process/spawn.h): a command's plan and a keeper are made from that
 * alone. turn.c sits at the top of init/ with main.c and verify.c, and may
 * include every folder. */
#ifndef TURNINIT_TURN_H
#define TURNINIT_TURN_H

#include <stdbool.h>

#include "policy/error.h"
#include "policy/manifest.h"
#include "process/spawn.h"
#include "sandbox/creds.h"
#include "sandbox/filter.h"
#include "sandbox/landlock.h"
#include "sandbox/net.h"

struct turn {
	const struct mf_manifest *m;
	bool nonroot;                    /* non-root mode (caps.h): set before the steps */
	bool keep_read_search;           /* keep a capability to read any file in turninit
					    (--audit-changes, turn.c step_caps): set before the steps */
	pid_t guard;                     /* turninit's pid when the commands share its uid
					    (the signal guard, filter.h), else 0; step "filter" */
	struct sc_program filter;        /* step "filter" */
	struct net_plan net;             /* step "network" */
	struct sc_program notify_filter; /* step "network", NET_NOTIFY: the commands'
					    second filter (sc_build_notify) */
	pid_t proxy_pid;                 /* step "network": the proxy (proxy.h), or 0 */
	const char *creds_dir;           /* --credentials DIR, set before the steps (NULL:
					    CREDS_DEFAULT_DIR) */
	struct creds creds;              /* step "network": read, handed to the proxy, then
					    wiped in PID 1 (empty after the step) */
	int proxy_log_fd;                /* the proxy's stderr, set before the steps: the
					    write end of one-shot mode's pipe of its lines
					    (reap_run_one holds them), or 0: turninit's */
	struct ll_ruleset landlock;      /* step "landlock"; fd -1 without Landlock */
	bool no_securebits;              /* step "platform": the platform has none (gVisor) */
	bool no_subreaper;               /* step "platform": PR_SET_CHILD_SUBREAPER fails
					    (Debian's runsc): keepers are no subreapers */
	bool filter_in_keeper;           /* step "filter": the filter refuses no call of a
					    keeper (keeper.h), which then loads it once */
	const char *keeper_refused;      /* else the first such call it refuses */
	struct spawn_base base;          /* turn_prepare, last: turn_base of this turn */
};

struct turn_step {
	const char *name; /* "platform", "filter", "home", "network", "landlock", "caps", "lockdown" */
	int (*run)(struct turn *sb, struct tn_error *err); /* -errno, err filled */
	void (*undo)(struct turn *sb);                     /* frees what run made (NULL: nothing) */
	bool once;                                         /* cannot run twice in one process */
};

extern const struct turn_step turn_steps[]; /* in order; ends with a NULL name */

/* turn_prepare - every step of turn_steps for manifest m, in order, in
 * the mode caps_start found (nonroot), then ret->base (turn_base). ret->m and ret->nonroot are set first; on
 * an error the steps done so far are not undone (the caller refuses and exits). Errors: the failing step's.
 */
int turn_prepare(struct turn *ret, const struct mf_manifest *m, bool nonroot, struct tn_error *err);

/* turn_guard - the pid the seccomp filter keeps the commands from
 * signalling (sc_build's guard): turninit's own when its euid is the
 * commands' uid m->uid (non-root mode, or started as that uid), else 0. */
pid_t turn_guard(const struct mf_manifest *m);

/* turn_probe - what turn_prepare would refuse for m in this mode,
 * found without changing anything (verify): HOME (home_probe), the network
 * (net_plan) and the Landlock ruleset (made and closed). 0 when a start
 * would get past them; else the step's error, word for word as a start
 * gives it. */
int turn_probe(const struct mf_manifest *m, bool nonroot, struct tn_error *err);

/* turn_workdir_note - whether commands of m's uid:gid can write its
 * workdir: 0 when they can (or it cannot be told: no stat); 1 with a
 * one-line warning in note (n bytes, no "turninit: " prefix) when it is
 * missing, not a directory, on a read-only mount (statvfs ST_RDONLY), not
 * writable by uid:gid by its owner and mode bits (ACLs are not read), or
 * outside landlock.writable and HOME where Landlock is enforced (landlock:
 * the ABI in use, 0 none). A start logs it once; verify prints it. */
int turn_workdir_note(const struct mf_manifest *m, int landlock, char *note, size_t n);

/* turn_home_note - whether HOME, given by the runtime (not mounted by
 * turninit), is mounted noexec (statvfs ST_NOEXEC): 0 when not (or when
 * turninit mounts it, or it cannot be told); 1 with a one-line warning in
 * note (n bytes, no "turninit: " prefix) naming Docker's exec option. A
 * start logs it once; verify logs it too. */
int turn_home_note(const struct mf_manifest *m, bool nonroot, char *note, size_t n);

/* turn_base - what the commands' processes take of t, whose steps have run:
 * the manifest, the mode, the seccomp program and Landlock ruleset, and
 * under seccomp-notify the second filter and its socket (spawn.h). Its
 * pointers are into t, which outlives it. */
struct spawn_base turn_base(const struct turn *t);

#endif
