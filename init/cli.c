/* cli.c - the command line parser (see cli.h). No getopt: the grammar is
 * small, and getopt's GNU permutation must never reorder a COMMAND's words. */
#include "cli.h"

#include <errno.h>
#include <string.h>

const char cli_usage[] =
	"usage: turninit [OPTIONS] [--] COMMAND...   run one command, exit with its status\n"
	"       turninit verify [OPTIONS]            verify the manifest, print the effective policy as JSON\n"
	"       turninit --version | --help\n"
	"\n"
	"One COMMAND argument is a bash command string, run as\n"
	"`bash --noprofile --norc -c -- STRING`; several are an argv, run without re-parsing.\n"
	"\n"
	"options:\n"
	"  --manifest PATH       manifest file, signature at PATH.minisig\n"
	"                        (default " CLI_DEFAULT_MANIFEST "; the image config Env\n"
	"                        TURNINIT_MANIFEST and TURNINIT_MANIFEST_SIG come first)\n"
	"  -h, --help            this text\n"
	"  --version             the version\n"
	"\n"
	"trust roots: the minisign public keys compiled in (make TRUSTED_KEYS=...), else\n"
	"the file " CLI_DEFAULT_TRUSTED_KEYS " of the image; never a path from the command line\n"
	"or the environment, which whoever launches the container controls.\n"
	"\n"
	"exit status: the command's status; 128+N killed by signal N; 124 timed out;\n"
	"125 turninit refused or failed before the command started; 126 the shell could\n"
	"not be executed; 127 the shell was not found.\n";

static const char *const cli_reserved[] = { "serve", "listen", "call", NULL };

/* Consume options from argv[*i] on. Returns 1 when "--" ended them, 0 at the
 * first non-option word or the end, 2 for --help / --version (o->mode set). */
static int cli_options_parse(int argc, char **argv, int *i, struct cli_options *o,
			     struct tn_error *err)
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
		if (strcmp(a, "--manifest") == 0) {
			if (*i + 1 >= argc || argv[*i + 1][0] == '\0')
				return err_set(err, EINVAL, "%s needs a PATH", a);
			o->manifest_path = argv[++(*i)];
			o->manifest_explicit = true;
			continue;
		}
		return err_set(err, EINVAL, "unknown option %s (try --help)", a);
	}
	return 0;
}

int cli_parse(int argc, char **argv, struct cli_options *ret, struct tn_error *err)
{
	struct cli_options o = {
		.mode = CLI_RUN,
		.manifest_path = CLI_DEFAULT_MANIFEST,
	};
	int i = 1;
	int r = cli_options_parse(argc, argv, &i, &o, err);

	if (r < 0)
		return r;
	if (r == 2)
		goto done;
	if (r == 0 && i < argc && strcmp(argv[i], "verify") == 0) {
		/* options may also follow the subcommand word */
		i++;
		r = cli_options_parse(argc, argv, &i, &o, err);
		if (r < 0)
			return r;
		if (r == 2)
			goto done;
		if (r == 1 || i < argc)
			return err_set(err, EINVAL, "verify takes no command");
		o.mode = CLI_VERIFY;
		goto done;
	}
	if (r == 0)
		for (const char *const *w = cli_reserved; i < argc && *w; w++)
			if (strcmp(argv[i], *w) == 0)
				return err_set(err, EINVAL,
					       "%s: not available in this version (to run a program called %s, use `turninit -- %s`)",
					       *w, *w, *w);
	o.command = argv + i;
	o.n_command = argc - i;
	if (o.n_command == 0)
		return err_set(err, EINVAL, "no command given (try --help)");
done:
	*ret = o;
	return 0;
}
