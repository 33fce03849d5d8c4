/* call.h - `turninit call`: the client of listen mode (docs/protocol.md). */
#ifndef TURNINIT_CALL_H
#define TURNINIT_CALL_H

#include <jansson.h>

#include "util/cli.h"

/* bytes of --stdin: its base64 (4/3) takes 768 KiB of the 1 MiB request line,
 * leaving the rest for the command and the environment */
#define CALL_STDIN_MAX 589824

/* call_main - build one exec request for o->command (one word: a command
 * string; several: argv) with, as its env, only the names of o->env (--env
 * NAME: its value from envp, left out when unset; --env NAME=VALUE: VALUE);
 * the server filters them as one-shot mode does. Then connect to
 * o->socket_path and, before anything is sent, check the server's uid by
 * SO_PEERCRED: o->server_uid (default 0, root: turninit listen's), else refused
 * (a command could have put its own server at the path). Then send, stream the
 * command's stdout and stderr to fds 1 and 2, forward SIGINT and SIGHUP as
 * signal requests and SIGTERM as a cancel. Returns the exit status of
 * docs/exit-codes.md: code, 128+signal, 124 timed out, 125 for an error event,
 * a request that cannot be built (a value that is not UTF-8, --stdin too
 * large), a refused server, a refused or lost connection (each with one line
 * on stderr). */
int call_main(const struct cli_options *o, char **envp);

/* What `turninit mcp --socket` (init/client/mcp_bridge.c) shares with call_main. */

/* call_connect - a unix stream socket connected to path (CLOEXEC), or -1 with
 * errno set (ENAMETOOLONG past sun_path, socket(2), connect(2)). */
int call_connect(const char *path);

/* call_check_peercred - before connecting: that SO_PEERCRED names the peer
 * here (plat_peercred_check), as call_check_server needs. Where it names the
 * caller itself (gVisor, runsc 0.0~20221219), a call running as root would
 * take any server, a command's own among them, for turninit listen. who
 * prefixes the message ("call", "mcp"). Returns 0, or -1 after one line on
 * stderr. */
int call_check_peercred(const char *who);

/* call_check_server - the peer of fd runs as o->server_uid (SO_PEERCRED,
 * unix(7)); else one line on stderr, "WHO: ...", naming the uid found, and -1. */
int call_check_server(int fd, const struct cli_options *o, const char *who);

/* call_send - req (stolen) as one line on fd. 0, -E2BIG past EV_LINE_MAX
 * (after one line on stderr), -ENOMEM, or -errno of send(2). */
int call_send(int fd, json_t *req);

#endif
