/* cli.h - the command line (docs/turninit.1.md). */
#ifndef TURNINIT_CLI_H
#define TURNINIT_CLI_H

#include <stdbool.h>

#include "policy/error.h"

#define CLI_DEFAULT_MANIFEST "/etc/turninit/manifest.json"
#define CLI_DEFAULT_TRUSTED_KEYS "/etc/turninit/trusted.pub"

enum cli_mode {
	CLI_RUN,          /* one-shot: run COMMAND... */
	CLI_VERIFY,       /* print the effective policy, run nothing */
	CLI_SERVE,        /* JSON Lines on stdin/stdout */
	CLI_MCP,          /* an MCP server on stdin/stdout (docs/mcp.md) */
	CLI_LISTEN,       /* the same protocol on a unix socket */
	CLI_CALL,         /* client of listen mode */
	CLI_AUDIT_VERIFY, /* check an audit log offline (docs/audit.md) */
	CLI_HELP,
	CLI_VERSION,
};

struct cli_options {
	enum cli_mode mode;
	const char *manifest_path; /* never NULL after cli_parse */
	bool manifest_explicit;    /* --manifest was given */
	char **command;            /* NULL-terminated, points into argv */
	int n_command;
	const char *socket_path;     /* listen, call and mcp (the bridge): --socket */
	unsigned timeout_s;          /* call: --timeout, 0: the manifest's */
	bool send_stdin;             /* call: --stdin */
	const char *audit_log;       /* serve, mcp, listen: --audit-log PATH|fd:N, or NULL */
	const char *audit_changes;   /* with --audit-log: --audit-changes BASE, or NULL */
	const char *credentials_dir; /* one-shot, serve, listen, mcp, verify: --credentials
				      * DIR, absolute, or NULL: /run/secrets (creds.h) */
	const char **env;            /* call: each --env NAME or NAME=VALUE, in order (into argv;
				      * the array malloc'd, NULL without --env); names distinct */
	int n_env;
	unsigned server_uid;          /* call, mcp --socket: the uid the server must run as
				       * (--server-uid), default 0 */
	bool server_uid_given;        /* --server-uid was given */
	const char *audit_verify_log; /* audit-verify: LOG ("-": stdin) */
	const char **audit_heads;     /* audit-verify: each --head HEX, in order (into argv;
				       * the array malloc'd, NULL without --head) */
	int n_audit_heads;
	bool audit_summary; /* audit-verify --summary: print the log's summary */
};

/* cli_parse - parse argv. Options stop at the first non-option or at "--";
 * nothing after "--" is an option. A first non-option word "verify", "serve",
 * "mcp", "listen" or "call" selects that mode (run a program of such a name with
 * `turninit -- serve`); "audit-verify" takes one LOG, `--head HEX` (repeatable:
 * one a turn) and `--summary`, in any order, and nothing else.
 * `--credentials DIR` (the modes that run turns, and verify): an absolute path.
 * `-e`/`--env NAME[=VALUE]` (call; repeatable): NAME a valid environment name,
 * each NAME once. `--server-uid UID` (call): 0..4294967294.
 * Errors: -EINVAL (unknown option, missing or bad value, a name given twice,
 * no command, an option of another mode), -ENOMEM; the reason in err. */
int cli_parse(int argc, char **argv, struct cli_options *ret, struct tn_error *err);

/* cli_usage - the --help text. */
extern const char cli_usage[];

#endif
