/* call.h - `turninit call`: the client of listen mode (docs/protocol.md). */
#ifndef TURNINIT_CALL_H
#define TURNINIT_CALL_H

#include "cli.h"

/* bytes of --stdin: its base64 (4/3) takes 768 KiB of the 1 MiB request line,
 * leaving the rest for the command and the environment */
#define CALL_STDIN_MAX 589824

/* call_main - connect to o->socket_path, send one exec request for o->command
 * (one word: a command string; several: argv) with this process's environment
 * as env (the server filters it as one-shot mode does), stream the command's
 * stdout and stderr to fds 1 and 2, forward SIGINT and SIGHUP as signal
 * requests and SIGTERM as a cancel. Returns the exit status of
 * docs/exit-codes.md: code, 128+signal, 124 timed out, 125 for an error event,
 * a refused or lost connection (with one line on stderr). */
int call_main(const struct cli_options *o, char **envp);

#endif
