/* main.c - turninit: the checklist. Each step lives in its own module;
 * before the command starts any failure refuses with exit 125 and one line. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "client/audit_verify.h"
#include "client/call.h"
#include "client/mcp_bridge.h"
#include "client/mcp_bridge.h"
#include "commit.h"
#include "policy/envfilter.h"
#include "process/reap.h"
#include "process/spawn.h"
#include "sandbox/caps.h"
#include "sandbox/creds.h"
#include "serve/audit.h"
#include "serve/changes.h"
#include "serve/serve.h"
#include "trust/load.h"
#include "turn.h"
#include "util/cli.h"
#include "util/exit_codes.h"
#include "util/log.h"
#include "util/plat.h"
#include "verify.h"

static int refuse(const struct tn_error *err)
{
	log_line("%s", err->msg);
	return EXIT_REFUSED;
}

/* path names turninit: this very program (the inode of /proc/self/exe), or
 * a program called turninit (Docker's init-path binds the host's copy at
 * /sbin/docker-init; the image's /sbin/turninit is another file). */
static bool is_self(const char *path)
{
	const char *base = strrchr(path, '/');
	struct stat a, b;

	if (!base)
		return false;
	if (strcmp(base + 1, "turninit") == 0)
		return true;
	return stat(path, &a) == 0 && stat("/proc/self/exe", &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* Under gVisor, /proc/1/fd belongs to turninit's uid whatever its dumpable
 * flag: where the commands share that uid (non-root mode, or a start as the
 * manifest's uid) a command could open /proc/1/fd/1 and write events of its
 * own into turninit's stdout (issue 27). Refused. */
static int start_gvisor_check(const struct caps_start *start, const struct mf_manifest *m,
			      struct tn_error *err)
{
	if ((start->mode != CAPS_NONROOT && start->uid != m->uid) || !plat_is_gvisor())
		return 0;
	return err_set(err, EPERM,
		       "gVisor: the commands would share turninit's uid %u, and gVisor leaves turninit's /proc/1/fd open to that uid (PR_SET_DUMPABLE does not close it there), so a command could write into turninit's stdout: start turninit as root in the container under gVisor",
		       (unsigned)start->uid);
}

/* What the start or the platform leaves out, and a workdir the commands
 * cannot write, said once, after the last refusal (a refusal stays one
 * line). */
static void log_weakened(const struct turn *sb, const struct caps_start *start)
{
	char note[512];

	if (turn_workdir_note(sb->m, sb->landlock.abi, note, sizeof(note)))
		log_line("%s", note);
	if (turn_home_note(sb->m, sb->nonroot, note, sizeof(note)))
		log_line("%s", note);
	if (start->mode == CAPS_NONROOT)
		log_line("non-root mode: running as %u:%u with no capability; commands share these ids (no securebits, bounding set, group or uid change: docs/security.md)",
			 (unsigned)start->uid, (unsigned)start->gid);
	if (sb->landlock.abi == 0)
		log_line(
			"landlock: not available; running without it, as the manifest allows (landlock.optional)");
	/* what this platform weakens (verify lists the same under "platform") */
	if (sb->filter.kill_action != SCMP_ACT_KILL_PROCESS)
		log_line(
			"seccomp: a syscall of another architecture kills the calling thread, not the whole process (SECCOMP_RET_KILL_THREAD): the platform refuses SECCOMP_RET_KILL_PROCESS (SECCOMP_GET_ACTION_AVAIL: EINVAL)");
	if (sb->no_securebits)
		log_line(
			"securebits: not available on this platform (gVisor: PR_SET_SECUREBITS is EINVAL); commands run without them, with every capability set empty and no_new_privs");
}

/* The modes of the command line that end before any policy is loaded:
 * --help, --version, turninit given itself as its command, and the clients
 * of listen mode, which hold no policy (the server applies it). 1 with
 * *ret_status when one ran, 0 for the others (`docker run --init IMAGE
 * verify` turned into verify first). */
static int policy_free_mode(struct cli_options *opt, char **envp, int *ret_status)
{
	if (opt->mode == CLI_HELP) {
		fputs(cli_usage, stdout);
		*ret_status = 0;
		return 1;
	}
	if (opt->mode == CLI_VERSION) {
		/* the form of tini's line, which Docker's init-path check parses */
		printf("turninit version %s - git.%s\n", TURNINIT_VERSION, TURNINIT_COMMIT);
		*ret_status = 0;
		return 1;
	}
	/* A runtime's init (docker run --init, podman --init-path) given the
	 * image's ENTRYPOINT, turninit itself, as the command: the inner one
	 * would get no manifest (the environment filter never admits it). */
	/* `docker run --init IMAGE verify` gives docker-init, which Docker runs
	 * with `--` always, the command `/sbin/turninit verify`: the binary
	 * that runs as PID 1 answers for itself (issue 27; docs/deployment.md). */
	if (opt->mode == CLI_RUN && opt->n_command == 2 && is_self(opt->command[0]) &&
	    strcmp(opt->command[1], "verify") == 0)
		opt->mode = CLI_VERIFY;
	if (opt->mode == CLI_RUN && opt->n_command > 1 && is_self(opt->command[0])) {
		*ret_status = refuse(&(struct tn_error){
			.msg = "the command is turninit itself: a runtime's init (docker run --init) runs the image's ENTRYPOINT as its command; clear it (--entrypoint '')" });
		return 1;
	}
	if (opt->mode == CLI_CALL) {
		*ret_status = call_main(opt, envp);
		return 1;
	}
	if (opt->mode == CLI_AUDIT_VERIFY) {
		*ret_status = audit_verify_main(opt);
		return 1;
	}
	if (opt->mode == CLI_MCP && opt->socket_path) {
		*ret_status = mcp_bridge_main(opt);
		return 1;
	}
	return 0;
}

/* fd 0 was closed when turninit started (main, step 2, put /dev/null there) */
static bool stdin_closed;

/* stdin_can_carry - 0 when mode's stdin (serve's or mcp's requests) can carry
 * a request; -1 and err when it was closed at start (closed: main's step 2
 * put /dev/null there) or is /dev/null, which podman run and docker run give
 * without -i: the turn would read end of input at once and end, exit 0,
 * having run nothing, and an MCP client would show only "failed to
 * connect". A stdin fstat(2) cannot read passes (the loop says what it
 * meets there). */
static int stdin_can_carry(const char *mode, bool closed, struct tn_error *err)
{
	struct stat st;

	if (closed)
		return err_set(err, EBADF,
			       "%s: stdin is closed: no request can reach it; give it the client's pipe (podman run -i, docker run -i; stdin: true in Kubernetes)",
			       mode);
	if (fstat(0, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3)
		return err_set(err, ENOTTY,
			       "%s: stdin is /dev/null (podman run or docker run without -i): "
			       "no request can reach it; add -i (stdin: true in Kubernetes)",
			       mode);
	return 0;
}

/* verify (step 5's end): the checks of a start that change nothing, after
 * those of caps_start (refusal, when one refused); the effective policy on
 * stdout whatever they find; 125 and the refusal's line, as a start would
 * give it, when a turn started so would be refused; a workdir warning a
 * start would log is logged too. opt's --socket and --audit-log, when
 * given, are checked as listen (SO_PEERCRED, the socket's place) and serve,
 * mcp and listen (the log's place) check them, in the order of a start. */
static int verify(const struct cli_options *opt, const struct load_result *pol,
		  const struct caps_start *start, struct tn_error *refusal)
{
	struct tn_error err = { 0 };
	char note[512] = "";
	bool refused = refusal->code != 0;

	if (!refused && opt->socket_path && plat_peercred_check("listen", refusal) < 0)
		refused = true;
	if (!refused && opt->audit_log && audit_probe(opt->audit_log, pol->manifest, refusal) < 0)
		refused = true;
	if (!refused && opt->audit_changes &&
	    changes_open(opt->audit_changes, pol->manifest, true, refusal) < 0)
		refused = true;
	if (!refused && turn_probe(pol->manifest, start->mode == CAPS_NONROOT, refusal) < 0)
		refused = true;
	if (!refused) {
		/* the values as a start reads them, and dropped at once */
		struct creds c = { 0 };

		if (creds_load(&pol->manifest->network,
			       opt->credentials_dir ? opt->credentials_dir : CREDS_DEFAULT_DIR, &c,
			       refusal) < 0)
			refused = true;
		creds_wipe(&c);
	}
	if (!refused && opt->socket_path && serve_listen_probe(opt->socket_path, pol->manifest, refusal) < 0)
		refused = true;
	if (!refused && turn_home_note(pol->manifest, start->mode == CAPS_NONROOT, note, sizeof(note)))
		log_line("%s", note);
	note[0] = '\0';
	if (!refused && turn_workdir_note(pol->manifest, ll_abi(), note, sizeof(note)))
		log_line("%s", note);
	if (verify_print(pol, start, refused ? refusal->msg : NULL, note[0] ? note : NULL,
			 opt->credentials_dir, &err) < 0)
		return refuse(&err);
	return refused ? refuse(refusal) : 0;
}

static bool turn_ended;

/* The end of a turn of many commands, once every command is gone (serve_ctx's
 * at_end): what they changed, from the trees themselves, and the log's
 * turn_end; the log's final head to ret_head, true, or false without a log.
 * Once a turn. */
static bool turn_ends(int exit_code, char ret_head[static 65])
{
	if (turn_ended)
		return false;
	turn_ended = true;
	changes_record(audit_emit, exit_code != 0);
	audit_turn_end(exit_code);
	return audit_head(ret_head);
}

/* Step 7 of serve, mcp and listen: the loop of many commands, under the
 * turn prepared once; its exit status. */
static int many_commands(const struct cli_options *opt, const struct load_result *pol, struct turn *sb,
			 const struct caps_start *start, int sfd)
{
	static const char *const names[] = {
		[CLI_SERVE] = "serve",
		[CLI_MCP] = "mcp",
		[CLI_LISTEN] = "listen",
	};
	struct serve_ctx ctx = {
		.manifest = pol->manifest,
		.base = &sb->base,
		.proxy_pid = sb->proxy_pid,
		.proxy_env = sb->net.env,
		.records_fd = sb->net.records_fd,
		.net = sb->net.ctl_fd >= 0 ? &sb->net : NULL,
		.sfd = sfd,
		.listen_fd = -1,
		.mcp = opt->mode == CLI_MCP,
		.caller_env = opt->mode == CLI_MCP ? pol->caller_env : NULL,
	};
	struct tn_error err = { 0 };
	int status;

	if (opt->mode == CLI_LISTEN &&
	    serve_listen_socket(opt->socket_path, pol->manifest, &ctx.listen_fd, &err) < 0)
		return refuse(&err);
	if (opt->mode != CLI_LISTEN && stdin_can_carry(names[opt->mode], stdin_closed, &err) < 0)
		return refuse(&err);
	log_weakened(sb, start);
	/* Here stderr is turninit's own (events go to stdout or the socket),
	 * so the layer in force is logged; in one-shot mode it would land in
	 * the command's stderr. */
	if (opt->audit_log) {
		/* the protections in force, the record verify prints (one source) */
		char note[512];
		json_t *prot = verify_protections(pol, start, &sb->filter, &sb->net, NULL,
						  turn_workdir_note(sb->m, sb->landlock.abi, note,
								    sizeof(note)) ?
							  note :
							  NULL,
						  &err);

		if (!prot || audit_turn_start(names[opt->mode], pol, prot, &err) < 0) {
			json_decref(prot);
			return refuse(&err);
		}
		json_decref(prot);
	}
	/* one line that reads as what it is, a start that went well: an MCP
	 * client shows turninit's stderr when something fails, and a bare
	 * "landlock: ..." there read like the failure (issue 31) */
	if (sb->landlock.abi > 0)
		log_line("%s: ready, reading requests on %s; landlock: ABI %d enforced", names[opt->mode],
			 opt->mode == CLI_LISTEN ? opt->socket_path : "stdin", sb->landlock.abi);
	else
		log_line("%s: ready, reading requests on %s", names[opt->mode],
			 opt->mode == CLI_LISTEN ? opt->socket_path : "stdin");
	if (sb->net.mode != NET_RUNTIME)
		log_line("network: %s", net_describe(&sb->net, NULL, (char[512]){ 0 }, 512));
	if (!sb->filter_in_keeper)
		log_line("seccomp: the filter is loaded in each command: it refuses %s, which a keeper calls",
			 sb->keeper_refused);
	if (sb->no_subreaper)
		log_line(
			"subreaper: not available on this platform (PR_SET_CHILD_SUBREAPER fails): what a command leaves running is not ended with it, and lives until the turn ends");
	ctx.at_end = turn_ends;
	status = serve_run(&ctx);
	/* a loop that could not start ends its turn here */
	turn_ends(status, (char[65]){ 0 });
	return status;
}

/*
 * PID 1: the numbered checklist of a turn (docs/design.md, "The steps of PID
 * 1"), one call a step. Long: kept one function over 80 lines on purpose:
 * the order of the steps is the security, and it reads top to bottom here in
 * one place; what is not a step (the modes that need no policy, the loop of
 * many commands) is a function of its own above.
 */
int main(int argc, char **argv, char **envp)
{
	/* PID 1's state lives as long as the process, and main returns on many
	 * paths: static, so it stays reachable to the end (a leak checker such
	 * as valgrind's counts it reachable, not lost). */
	static struct cli_options opt;
	static struct load_result pol;
	static struct turn sb;
	static struct caps_start start;
	static char **caller_env, **cmd_env, **cmd_argv;
	int net_lines[2] = { -1, -1 }; /* one-shot: the proxy's lines (reap_run_one) */
	struct tn_error err = { 0 }, refusal = { 0 };
	struct spawn_plan plan;
	pid_t pid;
	bool exec_failed;
	int sfd = -1, status = 0; /* gcc -flto sees no set on the failure path */

	/* 1. Signals first: from here on none is lost, none kills us. */
	reap_block_signals();
	/* 2. Non-dumpable: commands cannot read /proc/1/mem or /proc/1/environ. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* A closed stdin gets /dev/null, before turninit opens anything: no fd
	 * of its own (a signalfd, a pipe) may take number 0, where serve would
	 * read requests and a command would find it. serve and mcp refuse it. */
	stdin_closed = fcntl(0, F_GETFD) < 0 && errno == EBADF && open("/dev/null", O_RDONLY) == 0;

	/* 3. Command line; the modes that need no policy end here. */
	if (cli_parse(argc, argv, &opt, &err) < 0)
		return refuse(&err);
	if (policy_free_mode(&opt, envp, &status))
		return status;

	/* 4. Policy: environment taken and wiped, signature, then manifest. */
	if (load_take_environ(envp, &caller_env, &err) < 0)
		return refuse(&err);
	if (load_policy(&opt, caller_env, &pol, &err) < 0)
		return refuse(&err);
	/* 5. First that turninit can lock a command down at all, and how: as
	 * root with capabilities, or in non-root mode as the commands' own uid;
	 * then whose ids the commands get. verify says what a run would find. */
	if (caps_start(&start, &err) < 0 ||
	    mf_user_start(pol.manifest, start.mode == CAPS_NONROOT, start.uid, start.gid, &err) < 0 ||
	    start_gvisor_check(&start, pol.manifest, &err) < 0) {
		if (opt.mode != CLI_VERIFY)
			return refuse(&err);
		refusal = err;
	}
	if (opt.mode == CLI_VERIFY)
		return verify(&opt, &pol, &start, &refusal);
	/* listen trusts SO_PEERCRED for who connects: where it does not name the
	 * peer (gVisor), refuse before anything is set up or said. */
	if (opt.mode == CLI_LISTEN && plat_peercred_check("listen", &err) < 0)
		return refuse(&err);
	/* The audit log, while turninit may still open any file, and before it
	 * opens one of its own, so fd:N can only name an inherited fd. */
	if (pol.manifest->audit_required && !opt.audit_log) {
		err_set(&err, EPERM, "manifest: audit.required: %s",
			opt.mode == CLI_RUN ? "one-shot mode keeps no audit log; use serve --audit-log" :
					      "give --audit-log PATH|fd:N");
		return refuse(&err);
	}
	if (opt.audit_log && audit_open(opt.audit_log, pol.manifest, &err) < 0)
		return refuse(&err);
	if (opt.audit_changes && changes_open(opt.audit_changes, pol.manifest, false, &err) < 0)
		return refuse(&err);

	/* Everything the command needs, prepared before anything changes. */
	if (chdir("/") != 0)
		return refuse(&(struct tn_error){ .msg = "chdir /: failed" });
	if (reap_open(&sfd, &err) < 0)
		return refuse(&err);
	/* One-shot: the command's environment is PID 1's, filtered; serve and
	 * listen filter each request's env instead. */
	if (opt.mode == CLI_RUN) {
		if (envf_build(&pol.manifest->env, pol.manifest->home, pol.caller_env, &cmd_env, &err) < 0)
			return refuse(&err);
		if (!(cmd_argv = spawn_argv(opt.command, opt.n_command, false)))
			return refuse(&(struct tn_error){ .msg = "out of memory" });
	}

	/* 6. The sandbox of every command (init/turn.c): the seccomp program,
	 * HOME, then the Landlock ruleset (its rules bind to the inodes there now,
	 * so after the tmpfs is mounted), then drop what HOME needed. */
	sb.keep_read_search = opt.audit_changes != NULL;
	sb.creds_dir = opt.credentials_dir;
	/* One-shot: the proxy's lines go to a pipe of PID 1's, written after the
	 * command's end (reap_run_one), never inside a line of its stderr. */
	if (opt.mode == CLI_RUN && pol.manifest->network.n_allow && pipe2(net_lines, O_CLOEXEC) != 0) {
		err_errno(&err, errno, "network: a pipe for the proxy's lines");
		return refuse(&err);
	}
	sb.proxy_log_fd = net_lines[1] > 0 ? net_lines[1] : 0;
	if (turn_prepare(&sb, pol.manifest, start.mode == CAPS_NONROOT, &err) < 0)
		return refuse(&err);
	if (net_lines[1] > 0) {
		close(net_lines[1]);
		fcntl(net_lines[0], F_SETFL, O_NONBLOCK);
	}
	/* the proxy's variables, known now (its port), fixed by turninit */
	if (cmd_env && sb.net.env[0] && envf_override(&cmd_env, sb.net.env, &err) < 0)
		return refuse(&err);

	/* 7. Many commands (serve, mcp, listen) or one. One-shot mode reads no
	 * record of the proxy (its decisions are on stderr): the pipe goes; and
	 * its command has no id, so no port of its own: the control socket too. */
	if (opt.mode == CLI_RUN && sb.net.records_fd >= 0) {
		close(sb.net.records_fd);
		sb.net.records_fd = -1;
	}
	if (opt.mode == CLI_RUN && sb.net.ctl_fd >= 0) {
		close(sb.net.ctl_fd);
		sb.net.ctl_fd = -1;
	}
	if (opt.mode == CLI_SERVE || opt.mode == CLI_MCP || opt.mode == CLI_LISTEN)
		return many_commands(&opt, &pol, &sb, &start, sfd);
	/* The command. */
	log_weakened(&sb, &start);
	plan = spawn_plan_from(&sb.base, cmd_argv, cmd_env, NULL, -1, -1, -1);
	if (spawn_command(&plan, &pid, &status, &exec_failed, &err) < 0) {
		log_line("%s", err.msg);
		/* execve failures keep bash's 126/127; setup failures are refusals. */
		return exec_failed ? reap_exit_code(status) : EXIT_REFUSED;
	}

	/* 8. From here on turninit never exits on an error of its own. */
	return reap_run_one(sfd, pid, (uint64_t)pol.manifest->limits.timeout_s * 1000,
			    net_lines[0] > 0 ? net_lines[0] : -1);
}
