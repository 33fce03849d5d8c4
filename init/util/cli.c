/* cli.c - the command line parser (see cli.h). No getopt: the grammar is
 * small, and getopt's GNU permutation must never reorder a COMMAND's words. */
#include "util/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/cleanup.h"
#include "policy/envfilter.h"

const char cli_usage[] =
	"usage: turninit [OPTIONS] [--] COMMAND...   run one command, exit with its status\n"
	"       turninit serve [OPTIONS]             many commands: JSON Lines on stdin/stdout\n"
	"       turninit listen [OPTIONS] --socket PATH   serve's protocol on a unix socket\n"
	"       turninit call --socket PATH [--env NAME[=VALUE]]... [--server-uid UID]\n"
	"                     [--timeout S] [--stdin] [--] COMMAND...\n"
	"                                            run one command through a listen socket\n"
	"       turninit mcp [OPTIONS]               an MCP server on stdin/stdout: one tool, bash\n"
	"       turninit mcp --socket PATH [--server-uid UID]\n"
	"                                            the same, its commands run through a listen socket\n"
	"       turninit verify [OPTIONS]            verify the manifest, print the effective policy as JSON\n"
	"       turninit audit-verify LOG [--head HEX]... [--summary]\n"
	"                                            check an audit log: every line, the\n"
	"                                            hash chain, each exec's end, each turn anchored\n"
	"                                            by a --head (one a turn); 0 whole, 1 findings;\n"
	"                                            --summary also prints each turn's commands,\n"
	"                                            network decisions and changes (git status form)\n"
	"       turninit --version | --help\n"
	"\n"
	"One COMMAND argument is a bash command string, run as\n"
	"`bash --noprofile --norc -c -- STRING`; several are an argv, run without re-parsing.\n"
	"\n"
	"options:\n"
	"  --manifest PATH       manifest file, signature at PATH.minisig\n"
	"                        (default " CLI_DEFAULT_MANIFEST "; the image config Env\n"
	"                        TURNINIT_MANIFEST and TURNINIT_MANIFEST_SIG come first)\n"
	"  --socket PATH         listen, call, mcp: the unix socket (verify: checked as listen\n"
	"                        checks it, nothing made)\n"
	"  --timeout S           call: the command's timeout in seconds (capped by the manifest)\n"
	"  --stdin               call: send all of stdin as the command's stdin (else /dev/null)\n"
	"  -e, --env NAME[=VALUE]  call: send NAME (its value from call's environment, or\n"
	"                        VALUE) in the request's env; nothing else of the environment\n"
	"                        is sent. The server admits what its manifest allows.\n"
	"  --server-uid UID      call, mcp: the uid the server must run as (default 0: turninit\n"
	"                        listen runs as root); anything else is refused unsent\n"
	"  --audit-log PATH|fd:N serve, mcp, listen: append one JSON line per event (turn, each\n"
	"                        command and how it ended) to PATH or to inherited fd N;\n"
	"                        refused where a command could write it (docs/audit.md);\n"
	"                        verify: checked as those modes check it, nothing written\n"
	"  --audit-changes BASE  with --audit-log: at the end of the turn, write to the log\n"
	"                        each path the workdir (a copy-on-write view) changed against\n"
	"                        BASE, the tree as it was, bound read-only (docs/audit.md)\n"
	"  --credentials DIR     one-shot, serve, listen, mcp: the directory of the values of\n"
	"                        the manifest's credentials, a file each, read at start and\n"
	"                        then hidden from the commands (default /run/secrets, where\n"
	"                        podman run --secret NAME puts one); verify: which are given\n"
	"  -h, --help            this text\n"
	"  --version             the version\n"
	"\n"
	"network: the manifest's network key (docs/manifest.md) decides what commands\n"
	"reach: without it, the runtime's network; with it, loopback only, and each host\n"
	"and port of network.allow through turninit's proxy. verify prints which.\n"
	"\n"
	"trust roots: the minisign public keys compiled in (make TRUSTED_KEYS=...), else\n"
	"the file " CLI_DEFAULT_TRUSTED_KEYS " of the image; never a path from the command line\n"
	"or the environment, which whoever launches the container controls.\n"
	"\n"
	"exit status: the command's status; 128+N killed by signal N; 124 timed out;\n"
	"125 turninit refused or failed before the command started; 126 the shell could\n"
	"not be executed; 127 the shell was not found. serve and listen: 0 at the end of\n"
	"stdin, 143 after SIGTERM; mcp also 130 after SIGINT. See docs/protocol.md and\n"
	"docs/mcp.md.\n";

static const struct {
	const char *word;
	enum cli_mode mode;
} cli_modes[] = {
	{ "verify", CLI_VERIFY }, { "serve", CLI_SERVE }, { "mcp", CLI_MCP },
	{ "listen", CLI_LISTEN }, { "call", CLI_CALL },
};

/* --env SPEC: NAME or NAME=VALUE, NAME valid and not given before. o->env
 * holds at most one entry per two words of argv, so argc entries always fit. */
static int cli_add_env(struct cli_options *o, const char *spec, int argc, struct tn_error *err)
{
	const char *eq = strchr(spec, '=');
	size_t n = eq ? (size_t)(eq - spec) : strlen(spec);
	char name[256];

	/* longer than any name (envf_valid_name: 255 bytes at most): shown cut */
	snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), spec);
	if (n >= sizeof(name) || !envf_valid_name(name))
		return err_set(err, EINVAL,
			       "--env: \"%.64s\" is not a variable name "
			       "([A-Za-z_][A-Za-z0-9_]*)",
			       name);
	for (int k = 0; k < o->n_env; k++)
		if (strncmp(o->env[k], name, n) == 0 && (o->env[k][n] == '\0' || o->env[k][n] == '='))
			return err_set(err, EINVAL, "--env %s: given twice", name);
	if (!o->env && !(o->env = calloc((size_t)argc, sizeof(*o->env))))
		return err_set(err, ENOMEM, "out of memory");
	o->env[o->n_env++] = spec;
	return 0;
}

/* Consume options from argv[*i] on. Returns 1 when "--" ended them, 0 at the
 * first non-option word or the end, 2 for --help / --version (o->mode set).
 * Long: one branch per option, in --help's order, each a few lines; split,
 * the options would be read in several places. */
static int cli_options_parse(int argc, char **argv, int *i, struct cli_options *o, struct tn_error *err)
{
	for (; *i < argc; (*i)++) {
		const char *a = argv[*i];

		if (strcmp(a, "--") == 0) {
			(*i)++;
			return 1;
		}
		if (a[0] != '-')
			return 0;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			o->mode = CLI_HELP;
			return 2;
		}
		if (strcmp(a, "--version") == 0) {
			o->mode = CLI_VERSION;
			return 2;
		}
		if (strcmp(a, "-e") == 0 || strcmp(a, "--env") == 0) {
			int r;

			if (*i + 1 >= argc || argv[*i + 1][0] == '\0')
				return err_set(err, EINVAL, "%s needs a value", a);
			r = cli_add_env(o, argv[++(*i)], argc, err);
			if (r < 0)
				return r;
			continue;
		}
		if (strcmp(a, "--server-uid") == 0) {
			const char *v;
			char *end;
			unsigned long u;

			if (*i + 1 >= argc || argv[*i + 1][0] == '\0')
				return err_set(err, EINVAL, "%s needs a value", a);
			v = argv[++(*i)];
			errno = 0;
			u = strtoul(v, &end, 10);
			/* (uid_t)-1 is no uid: chown(2)'s "unchanged" */
			if (errno || *end || v[0] < '0' || v[0] > '9' || u > 4294967294UL)
				return err_set(err, EINVAL, "--server-uid takes a uid from 0 to 4294967294");
			o->server_uid = (unsigned)u;
			o->server_uid_given = true;
			continue;
		}
		if (strcmp(a, "--credentials") == 0) {
			if (*i + 1 >= argc || argv[*i + 1][0] == '\0')
				return err_set(err, EINVAL, "%s needs a value", a);
			if (o->credentials_dir)
				return err_set(err, EINVAL, "%s given twice", a);
			o->credentials_dir = argv[++(*i)];
			/* "/" would be hidden whole under the empty tmpfs */
			if (o->credentials_dir[0] != '/' || o->credentials_dir[1] == '\0')
				return err_set(err, EINVAL, "--credentials takes an absolute path, not /");
			continue;
		}
		if (strcmp(a, "--audit-changes") == 0) {
			if (*i + 1 >= argc || argv[*i + 1][0] == '\0')
				return err_set(err, EINVAL, "%s needs a value", a);
			if (o->audit_changes)
				return err_set(err, EINVAL, "%s given twice", a);
			o->audit_changes = argv[++(*i)];
			continue;
		}
		if (strcmp(a, "--manifest") == 0 || strcmp(a, "--socket") == 0 ||
		    strcmp(a, "--timeout") == 0 || strcmp(a, "--audit-log") == 0) {
			const char *v;

			if (*i + 1 >= argc || argv[*i + 1][0] == '\0')
				return err_set(err, EINVAL, "%s needs a value", a);
			v = argv[++(*i)];
			if (a[2] == 'm') {
				o->manifest_path = v;
				o->manifest_explicit = true;
			} else if (a[2] == 's') {
				o->socket_path = v;
			} else if (a[2] == 'a') {
				if (o->audit_log)
					return err_set(err, EINVAL, "%s given twice", a);
				o->audit_log = v;
			} else {
				char *end;
				unsigned long t = strtoul(v, &end, 10);

				if (*end || t < 1 || t > 86400 || v[0] == '-')
					return err_set(err, EINVAL,
						       "--timeout takes seconds from 1 to 86400");
				o->timeout_s = (unsigned)t;
			}
			continue;
		}
		if (strcmp(a, "--stdin") == 0) {
			o->send_stdin = true;
			continue;
		}
		return err_set(err, EINVAL, "unknown option %s (try --help)", a);
	}
	return 0;
}

static int cli_parse_into(int argc, char **argv, struct cli_options *o, struct tn_error *err);

/* audit-verify LOG [--head HEX]... [--summary], from argv[i] on; no option before the mode
 * word but --help and --version, which end the parse before. */
static int cli_audit_verify(int argc, char **argv, int i, struct cli_options *o, struct tn_error *err)
{
	if (o->manifest_explicit || o->socket_path || o->timeout_s || o->send_stdin || o->audit_log ||
	    o->audit_changes || o->n_env || o->server_uid_given || o->credentials_dir)
		return err_set(err, EINVAL, "audit-verify takes LOG, --head HEX and --summary only");
	o->mode = CLI_AUDIT_VERIFY;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--head") == 0 || strncmp(argv[i], "--head=", 7) == 0) {
			const char *v = argv[i][6] == '=' ? argv[i] + 7 : i + 1 < argc ? argv[++i] : "";

			if (v[0] == '\0')
				return err_set(err, EINVAL,
					       "audit-verify: --head needs one value (64 hex digits)");
			if (!o->audit_heads &&
			    !(o->audit_heads = calloc((size_t)argc, sizeof(*o->audit_heads))))
				return err_set(err, ENOMEM, "out of memory");
			o->audit_heads[o->n_audit_heads++] = v;
		} else if (strcmp(argv[i], "--summary") == 0) {
			o->audit_summary = true;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			o->mode = CLI_HELP;
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			return err_set(err, EINVAL,
				       "audit-verify: unknown option %s (LOG [--head HEX]... [--summary])",
				       argv[i]);
		} else if (o->audit_verify_log || argv[i][0] == '\0') {
			return err_set(err, EINVAL, "audit-verify takes one LOG");
		} else {
			o->audit_verify_log = argv[i];
		}
	}
	if (!o->audit_verify_log)
		return err_set(err, EINVAL, "audit-verify needs LOG (a path, or - for stdin)");
	return 0;
}

int cli_parse(int argc, char **argv, struct cli_options *ret, struct tn_error *err)
{
	struct cli_options o = {
		.mode = CLI_RUN,
		.manifest_path = CLI_DEFAULT_MANIFEST,
	};
	int r = cli_parse_into(argc, argv, &o, err);

	if (r < 0) {
		free(o.env);
		free(o.audit_heads);
		return r;
	}
	*ret = o;
	return 0;
}

/* The options that go with some modes only, checked once the mode is known:
 * 0, or -EINVAL with the line that names the pair. */
static int cli_check_pairs(const struct cli_options *o, struct tn_error *err)
{
	if (o->audit_log && o->mode != CLI_SERVE && o->mode != CLI_MCP && o->mode != CLI_LISTEN &&
	    o->mode != CLI_VERIFY && o->mode != CLI_HELP && o->mode != CLI_VERSION)
		return err_set(err, EINVAL, "--audit-log goes with serve, mcp or listen");
	if (o->audit_changes && !o->audit_log && o->mode != CLI_HELP && o->mode != CLI_VERSION)
		return err_set(err, EINVAL,
			       "--audit-changes goes with --audit-log (the change record is written there)");
	if (o->mode == CLI_LISTEN && (o->timeout_s || o->send_stdin))
		return err_set(err, EINVAL, "--timeout and --stdin go with call");
	if (o->credentials_dir && o->mode == CLI_CALL)
		return err_set(err, EINVAL,
			       "--credentials goes with the server (one-shot, serve, listen, mcp) or verify: call holds no policy");
	if (o->mode != CLI_CALL && o->mode != CLI_HELP && o->mode != CLI_VERSION &&
	    (o->n_env || (o->server_uid_given && o->mode != CLI_MCP)))
		return err_set(err, EINVAL, "--env and --server-uid go with call");
	return 0;
}

/* cli_parse into o, which holds the defaults. o->env may be allocated also
 * when it fails: cli_parse frees it then. */
static int cli_parse_into(int argc, char **argv, struct cli_options *o, struct tn_error *err)
{
	int i = 1;
	int r = cli_options_parse(argc, argv, &i, o, err);

	if (r < 0)
		return r;
	if (r == 2)
		return cli_check_pairs(o, err);
	if (r == 0 && i < argc && strcmp(argv[i], "audit-verify") == 0)
		return cli_audit_verify(argc, argv, i + 1, o, err);
	for (size_t k = 0; r == 0 && i < argc && k < N_ELEMENTS(cli_modes); k++) {
		if (strcmp(argv[i], cli_modes[k].word) != 0)
			continue;
		/* options may also follow the mode word */
		o->mode = cli_modes[k].mode;
		i++;
		r = cli_options_parse(argc, argv, &i, o, err);
		if (r < 0)
			return r;
		if (r == 2)
			return cli_check_pairs(o, err);
		if (o->mode != CLI_CALL) {
			if (r == 1 || i < argc)
				return err_set(err, EINVAL, "%s takes no command", cli_modes[k].word);
			if (o->mode == CLI_LISTEN && !o->socket_path)
				return err_set(err, EINVAL, "listen needs --socket PATH");
			if (o->socket_path && o->mode != CLI_LISTEN && o->mode != CLI_MCP &&
			    o->mode != CLI_VERIFY)
				return err_set(err, EINVAL, "--socket goes with listen, call or mcp");
			if (o->mode == CLI_MCP && o->socket_path &&
			    (o->audit_log || o->manifest_explicit || o->credentials_dir))
				return err_set(err, EINVAL,
					       "mcp --socket holds no policy: --manifest, "
					       "--audit-log and --credentials go with the listen server");
			if (o->mode == CLI_MCP && (o->timeout_s || o->send_stdin))
				return err_set(err, EINVAL, "--timeout and --stdin go with call");
			if (o->mode == CLI_MCP && o->server_uid_given && !o->socket_path)
				return err_set(err, EINVAL, "--server-uid goes with call or mcp --socket");
			return cli_check_pairs(o, err);
		}
		if (!o->socket_path)
			return err_set(err, EINVAL, "call needs --socket PATH");
		break;
	}
	if (o->mode != CLI_CALL && (o->socket_path || o->timeout_s || o->send_stdin))
		return err_set(err, EINVAL, "--socket, --timeout and --stdin go with listen or call");
	o->command = argv + i;
	o->n_command = argc - i;
	if (o->n_command == 0)
		return err_set(err, EINVAL, "no command given (try --help)");
	return cli_check_pairs(o, err);
}
