/* mcp_bridge.h - `turninit mcp --socket PATH`: an MCP server on stdin/stdout
 * that runs its tool's calls through a `turninit listen` socket (the sidecar
 * of docs/mcp.md). It holds no policy, like `turninit call`: the server
 * applies its manifest, which it sends for the tool's description and limits. */
#ifndef TURNINIT_MCP_BRIDGE_H
#define TURNINIT_MCP_BRIDGE_H

#include "util/cli.h"

/* mcp_bridge_main - connect to o->socket_path, check the server's uid as
 * `call` does (o->server_uid, SO_PEERCRED), ask for its manifest (the info
 * request of docs/protocol.md), then answer MCP on stdin/stdout: each
 * tools/call an exec request, each notifications/cancelled a cancel, the
 * results and progress made as `turninit mcp` makes them (policy/mcp.c).
 * Returns 0 at the end of stdin, 128+N after signal N (SIGINT, SIGTERM,
 * SIGHUP), 125 when the server cannot be reached, is refused, does not answer
 * info, or closes the connection (one line on stderr each). Closing the
 * connection cancels what still runs. */
int mcp_bridge_main(const struct cli_options *o);

#endif
