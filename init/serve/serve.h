/* serve.h - many commands per turn: the JSON Lines protocol of docs/protocol.md
 * on stdin/stdout (`turninit serve`) or on a unix socket (`turninit listen`).
 * Each command runs under its own keeper (init/process/keeper.c). */
#ifndef TURNINIT_SERVE_H
#define TURNINIT_SERVE_H

#include <stdbool.h>

#include "policy/error.h"
#include "policy/manifest.h"
#include "process/spawn.h"
#include "sandbox/net.h"

#define SERVE_MAX_CONNS 64 /* listen mode: connections at once */

struct serve_ctx {
	const struct mf_manifest *manifest;
	const struct spawn_base *base; /* every command's lock-down, the turn's
					  (init/process/spawn.h): keepers start
					  from it */
	pid_t proxy_pid;               /* the proxy of network.allow (init/proxy/proxy.h),
					  or 0: a child of turninit, not a stray */
	char *const *proxy_env;        /* the proxy's variables (net.h, net_plan's env),
					  set in every command's environment;
					  NULL-terminated */
	int records_fd;                /* the proxy's records (policy/netrec.h), or -1 */
	struct net_plan *net;          /* the turn's network, whose proxy each command
					  gets a port of its own on (net_cmd_listen), or
					  NULL: no proxy, or no control socket of its */
	int sfd;                       /* turninit's signalfd (init/process/reap.c) */
	int listen_fd;                 /* listen mode: the listening socket; -1: serve */
	bool mcp;                      /* serve mode speaks MCP (codec_mcp), and SIGINT
					  ends the turn as SIGTERM does (exit 130) */
	char *const *caller_env;       /* mcp: the container's own environment, given to
					  the codec (a tools/call carries none, and the
					  MCP session adds what the manifest admits of
					  it); NULL otherwise */
	/* called once every command is gone, before the connections still
	 * open are drained, with the turn's exit status: what the turn ends
	 * with (the change record, the audit log's turn_end). It writes the
	 * log's final head to ret_head (65 bytes) and returns true, or false
	 * when there is no log; then the loop sends a turn_end event with that
	 * head to each of those connections (docs/protocol.md, "turn_end").
	 * NULL: nothing. */
	bool (*at_end)(int exit_code, char ret_head[static 65]);
};

/* serve_listen_socket - create, bind and listen on a unix stream socket at
 * path (mode 0666: peers are checked by SO_PEERCRED, not by the file mode),
 * in a directory no command could change: a command able to remove the socket
 * could bind its own in its place and answer the callers. Refused (-EPERM)
 * when path's directory, as given or as resolved through /proc/self/fd, lies
 * in m's writable set (home, landlock.writable, the device paths Landlock
 * leaves writable), or is owned by m->uid or writable by group or others;
 * -EINVAL when path is not absolute. The mode is set by bind(2) itself under a
 * umask, never by a chmod of path afterwards (which would follow a symlink put
 * there meanwhile). A stale socket there is replaced; any other file is
 * refused (-EEXIST). ret_fd is written only on success.
 * Errors: also -ENAMETOOLONG, -errno of open(2) of the directory, socket(2),
 * bind(2), listen(2); err names the path. */
int serve_listen_socket(const char *path, const struct mf_manifest *m, int *ret_fd, struct tn_error *err);

/* serve_listen_probe - what serve_listen_socket would refuse of path and m,
 * found without making or removing anything (verify --socket): the path's
 * form, its directory's place and owner, another file than a socket there.
 * 0 when a bind could be tried. Errors: as serve_listen_socket's refusals. */
int serve_listen_probe(const char *path, const struct mf_manifest *m, struct tn_error *err);

/* serve_run - run the protocol until the turn ends: end of stdin (serve mode:
 * returns 0) or SIGTERM (returns 143; with ctx->mcp also SIGINT, 130). Every running command is cancelled and
 * its exit event written before it returns. Never fails on its own errors:
 * they become error events or log lines. */
int serve_run(const struct serve_ctx *ctx);

#endif
