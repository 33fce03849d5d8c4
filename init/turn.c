/* turn.c - see turn.h. */
#define _GNU_SOURCE /* ST_NOEXEC (glibc: a GNU extension) */
#include "turn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "process/keeper.h"
#include "proxy/proxy.h"
#include "sandbox/caps.h"
#include "sandbox/home.h"
#include "sandbox/notify.h"
#include "sandbox/place.h"
#include "util/log.h"
#include "util/plat.h"

/* The capabilities turninit keeps once HOME is set up: SETPCAP (securebits and
 * the bounding set, in step lockdown), SETUID and SETGID (each command's uid
 * change), KILL
 * (signalling commands that run as another uid). */
static const cap_value_t turn_keep_caps[] = { CAP_SETPCAP, CAP_SETUID, CAP_SETGID, CAP_KILL };

static int step_platform(struct turn *sb, struct tn_error *err)
{
	(void)err;
	sb->no_securebits = caps_securebits_probe();
	sb->no_subreaper = !plat_subreaper_works();
	return 0;
}

pid_t turn_guard(const struct mf_manifest *m)
{
	return geteuid() == m->uid ? getpid() : 0;
}

static int step_filter(struct turn *sb, struct tn_error *err)
{
	/* The commands share turninit's uid (non-root mode, or turninit started
	 * as the manifest's uid with capabilities), so the kernel would let them
	 * signal it: the filter and Landlock's signal scope keep them from it
	 * (filter.h, landlock.h). */
	struct scg_set set = { 0 };
	int r;

	sb->guard = turn_guard(sb->m);
	r = sc_build(&sb->m->seccomp, sb->guard, &sb->filter, err);
	if (r < 0)
		return r;
	/* The guard's rules name turninit alone, whom no keeper signals. */
	r = sc_denied(&sb->m->seccomp, &set, err);
	if (r < 0)
		return r;
	sb->keeper_refused = scg_spares(&set, keeper_calls, keeper_n_calls);
	sb->filter_in_keeper = !sb->keeper_refused;
	scg_set_free(&set);
	return 0;
}

static void undo_filter(struct turn *sb)
{
	sc_program_free(&sb->filter);
}

static enum home_how home_how_here(bool nonroot)
{
	return nonroot ? HOME_OWN : caps_have(CAP_SYS_ADMIN) ? HOME_MOUNT : HOME_CHECK;
}

static int step_home(struct turn *sb, struct tn_error *err)
{
	return home_setup(sb->m->home, sb->m->uid, sb->m->gid, home_how_here(sb->nonroot), err);
}

/* The credentials' values (creds.h), read while turninit may still read
 * any file, then their files hidden under an empty tmpfs while it still
 * holds CAP_SYS_ADMIN (privileged mode with a network key; non-root mode
 * refused the rules in net_prepare). An absent file is said once. */
static int network_creds(struct turn *sb, struct tn_error *err)
{
	const struct mf_network *n = &sb->m->network;
	const char *dir = sb->creds_dir ? sb->creds_dir : CREDS_DEFAULT_DIR;
	int r = creds_load(n, dir, &sb->creds, err);

	if (r < 0)
		return r;
	/* which values came by file: a credential request may give only
	 * the others (net_cred_give) */
	if (!(sb->net.cred_src = calloc(n->n_allow + 1, 1)))
		return err_set(err, ENOMEM, "network: out of memory");
	for (size_t i = 0; i < n->n_allow; i++)
		if (sb->creds.value[i])
			sb->net.cred_src[i] = NET_CRED_FILE;
	for (size_t i = 0; i < n->n_allow; i++)
		if (n->allow[i].cred && !sb->creds.value[i])
			log_line("network.allow[%zu]: credential %s was not given (no %s/%s): requests to %s are answered 503 naming it",
				 i, n->allow[i].cred->name, dir, n->allow[i].cred->name, n->allow[i].host);
	/* seccomp-notify is non-root mode's, which cannot mount */
	for (size_t i = 0; sb->net.mode == NET_NOTIFY && i < n->n_allow; i++)
		if (sb->creds.value[i])
			return err_set(err, EPERM,
				       "network.allow[%zu]: credential %s is a file in %s, which non-root mode cannot hide from the commands (no mount): give its value by the credential request of serve or listen mode instead",
				       i, n->allow[i].cred->name, dir);
	return creds_any(&sb->creds) ? creds_hide(dir, err) : 0;
}

/* seccomp-notify (notify.h): the supervisor thread, which takes its own
 * copies of the records' pipe and the proxy's log, then the commands'
 * second filter, which keeps them from signalling that thread by its tid. */
static int network_notify(struct turn *sb, struct tn_error *err)
{
	pid_t tid = 0;
	int rec, log, r;

	rec = fcntl(sb->net.records_wr, F_DUPFD_CLOEXEC, 3);
	log = fcntl(sb->proxy_log_fd > 0 ? sb->proxy_log_fd : STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (rec < 0 || log < 0)
		return err_errno(err, errno, "network: the supervisor's fds");
	log_line("network: seccomp-notify isolation%s%s%s: turninit judges each connect of the commands",
		 sb->net.why_notify ? " (" : "", sb->net.why_notify ? sb->net.why_notify : "",
		 sb->net.why_notify ? ")" : "");
	r = notify_start(&sb->net, &sb->m->network, rec, log, sb->proxy_pid, &tid, err);
	return r < 0 ? r : sc_build_notify(tid, &sb->notify_filter, err);
}

/* After HOME, before the capabilities it needs are dropped (net.h). */
static int step_network(struct turn *sb, struct tn_error *err)
{
	int r = net_prepare(&sb->m->network, sb->nonroot, &sb->net, err);

	if (r < 0 || sb->net.mode == NET_RUNTIME || sb->net.mode == NET_LOOPBACK ||
	    (sb->net.mode == NET_OWN && sb->net.listen_fd < 0))
		return r;
	if (sb->net.listen_fd >= 0) {
		r = network_creds(sb, err);
		if (r < 0)
			return r;
	}
	/* the proxy keeps the socket; PID 1 closes its own copy, so that with
	 * the proxy gone a connect is refused at once. The proxy keeps its copy
	 * of the credentials' values too; PID 1 keeps none. */
	if (sb->net.listen_fd >= 0)
		r = proxy_start(&sb->m->network, &sb->creds, sb->net.listen_fd, sb->net.outside_ns,
				sb->net.mode == NET_NOTIFY, sb->net.records_wr, sb->net.ctl_proxy,
				sb->proxy_log_fd > 0 ? sb->proxy_log_fd : -1, &sb->proxy_pid, err);
	creds_wipe(&sb->creds);
	if (r == 0 && sb->net.mode == NET_NOTIFY)
		r = network_notify(sb, err);
	if (sb->net.listen_fd >= 0)
		close(sb->net.listen_fd);
	if (sb->net.outside_ns >= 0)
		close(sb->net.outside_ns);
	if (sb->net.records_wr >= 0)
		close(sb->net.records_wr);
	if (sb->net.ctl_proxy >= 0)
		close(sb->net.ctl_proxy);
	sb->net.listen_fd = sb->net.outside_ns = sb->net.records_wr = sb->net.ctl_proxy = -1;
	return r;
}

/* Signals are scoped in every mode (from ABI 6): in privileged mode the
 * commands share one uid too, and a command that could stop another's
 * process between its uid change and its exec would hold that command's
 * start (issue 27). */
static int step_landlock(struct turn *sb, struct tn_error *err)
{
	return ll_prepare(&sb->m->landlock, true, &sb->landlock, err);
}

static void undo_landlock(struct turn *sb)
{
	if (sb->landlock.fd >= 0)
		close(sb->landlock.fd);
	sb->landlock.fd = -1;
}

/* With --audit-changes turninit also keeps a capability to read what the
 * commands made unreadable, for the walk at the end of the turn (a directory
 * of mode 0000, or 0700 of the commands' uid, must not hide what is in it:
 * changes.h): CAP_DAC_READ_SEARCH where the runtime gave it, else
 * CAP_DAC_OVERRIDE (podman's and Docker's defaults hold only that one),
 * else none (the walk counts what it cannot read). The bounding set is
 * empty (step_lockdown) and every command clears its sets, so no command
 * gets it. */
static int step_caps(struct turn *sb, struct tn_error *err)
{
	cap_value_t keep[N_ELEMENTS(turn_keep_caps) + 1];
	int n = (int)N_ELEMENTS(turn_keep_caps);

	memcpy(keep, turn_keep_caps, sizeof(turn_keep_caps));
	if (sb->keep_read_search && caps_have(CAP_DAC_READ_SEARCH))
		keep[n++] = CAP_DAC_READ_SEARCH;
	else if (sb->keep_read_search && caps_have(CAP_DAC_OVERRIDE))
		keep[n++] = CAP_DAC_OVERRIDE;
	return caps_keep_only(keep, n, err);
}

/* Privileged mode: securebits and the bounding set once, in turninit, for
 * every command it forks (caps.h). Non-root mode has no CAP_SETPCAP and
 * keeps its start's sets, with no_new_privs. */
static int step_lockdown(struct turn *sb, struct tn_error *err)
{
	return sb->nonroot ? 0 : caps_lock_down(sb->no_securebits, err);
}

const struct turn_step turn_steps[] = {
	{ "platform", step_platform, NULL, false },
	{ "filter", step_filter, undo_filter, false },
	{ "home", step_home, NULL, false },
	{ "network", step_network, NULL, true },
	{ "landlock", step_landlock, undo_landlock, false },
	{ "caps", step_caps, NULL, true },
	{ "lockdown", step_lockdown, NULL, true },
	{ NULL, NULL, NULL, false },
};

int turn_prepare(struct turn *ret, const struct mf_manifest *m, bool nonroot, struct tn_error *err)
{
	ret->m = m;
	ret->nonroot = nonroot;
	ret->landlock.fd = -1;
	for (const struct turn_step *s = turn_steps; s->name; s++) {
		int r = s->run(ret, err);

		if (r < 0)
			return r;
	}
	ret->base = turn_base(ret);
	return 0;
}

int turn_probe(const struct mf_manifest *m, bool nonroot, struct tn_error *err)
{
	struct net_plan net = { 0 };
	struct ll_ruleset ll = { .fd = -1 };
	int r = home_probe(m->home, m->uid, m->gid, home_how_here(nonroot), err);

	if (r < 0 || (r = net_plan(&m->network, nonroot, &net, err)) < 0 ||
	    (r = ll_prepare(&m->landlock, true, &ll, err)) < 0)
		return r;
	if (ll.fd >= 0)
		close(ll.fd);
	return 0;
}

int turn_workdir_note(const struct mf_manifest *m, int landlock, char *note, size_t n)
{
	const char *w = m->workdir;
	struct statvfs vfs;
	struct stat st;
	bool under = false;
	mode_t bit;
	int found;

	/* HOME is the commands' own tmpfs (made at the start: verify cannot
	 * look in it yet) */
	if (place_path_under(w, m->home))
		return 0;
	found = stat(w, &st) == 0 ? 0 : errno;
	if (found || !S_ISDIR(st.st_mode)) {
		snprintf(note, n,
			 "workdir %s: %s: a command given no workdir of its own is refused (the manifest's \"workdir\")",
			 w, found ? strerror(found) : "not a directory");
		return 1;
	}
	if (statvfs(w, &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) {
		snprintf(note, n,
			 "workdir %s is on a read-only mount: commands cannot write there (mount it read-write, or set the manifest's \"workdir\" to a folder they can)",
			 w);
		return 1;
	}
	bit = st.st_uid == m->uid ? S_IWUSR : st.st_gid == m->gid ? S_IWGRP : S_IWOTH;
	if (!(st.st_mode & bit)) {
		snprintf(note, n,
			 "workdir %s (owner %u:%u, mode %04o) is not writable by the commands' %u:%u: they cannot write there (give them the folder, for example -v DIR:%s with DIR theirs, or set the manifest's \"workdir\")",
			 w, (unsigned)st.st_uid, (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777),
			 (unsigned)m->uid, (unsigned)m->gid, w);
		return 1;
	}
	for (size_t i = 0; landlock > 0 && !under && i < m->landlock.n_writable; i++)
		under = place_path_under(w, m->landlock.writable[i]);
	if (landlock > 0 && !under) {
		snprintf(note, n,
			 "workdir %s is outside landlock.writable: Landlock keeps commands from writing there (add it to landlock.writable)",
			 w);
		return 1;
	}
	return 0;
}

int turn_home_note(const struct mf_manifest *m, bool nonroot, char *note, size_t n)
{
	struct statvfs vfs;

	/* the tmpfs turninit mounts itself is exec (home.c) */
	if (home_how_here(nonroot) == HOME_MOUNT || statvfs(m->home, &vfs) != 0 || !(vfs.f_flag & ST_NOEXEC))
		return 0;
	snprintf(note, n,
		 "HOME %s is mounted noexec: a script or program the commands put there fails with 126 (Docker mounts a --tmpfs noexec unless its options say exec: " HOME_DOCKER_HINT
		 ")",
		 m->home, m->home, (unsigned)m->uid, (unsigned)m->gid);
	return 1;
}

struct spawn_base turn_base(const struct turn *t)
{
	struct spawn_base b = { .m = t->m,
				.nonroot = t->nonroot,
				.landlock = &t->landlock,
				.filter = &t->filter,
				.notify_sock = t->net.notify_wr,
				.filter_in_keeper = t->filter_in_keeper };

	if (t->net.mode == NET_NOTIFY)
		b.notify_filter = &t->notify_filter;
	return b;
}
