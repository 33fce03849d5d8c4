/* serve.h - many commands per turn: the JSON Lines protocol of docs/protocol.md
 * on stdin/stdout (`turninit serve`) or on a unix socket (`turninit listen`).
 * Each command runs under its own keeper (init/keeper.c). */
#ifndef TURNINIT_SERVE_H
#define TURNINIT_SERVE_H

#include "error.h"
#include "manifest.h"
#include "sandbox.h"

#define SERVE_MAX_CONNS 64       /* listen mode: connections at once */
#define SERVE_QUEUE_MAX 1024     /* exec requests waiting for a slot, all connections */
#define SERVE_QUEUE_BYTES (64u << 20)   /* bytes of their request lines together */

struct serve_ctx {
	const struct mf_manifest *manifest;
	const struct sandbox *sandbox;   /* every command's lock-down (init/sandbox.h) */
	int sfd;                      /* turninit's signalfd (init/reap.c) */
	int listen_fd;                /* listen mode: the listening socket; -1: serve */
};

/* serve_listen_socket - create, bind and listen on a unix stream socket at
 * path (mode 0666: peers are checked by SO_PEERCRED, not by the file mode). A
 * stale socket there is replaced; any other file is refused (-EEXIST).
 * Errors: -errno of socket(2), bind(2), listen(2). */
int serve_listen_socket(const char *path, int *ret_fd, struct tn_error *err);

/* serve_run - run the protocol until the turn ends: end of stdin (serve mode:
 * returns 0) or SIGTERM (returns 143). Every running command is cancelled and
 * its exit event written before it returns. Never fails on its own errors:
 * they become error events or log lines. */
int serve_run(const struct serve_ctx *ctx);

#endif
