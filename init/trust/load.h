/* load.h - where the manifest and the trust roots come from, and the order in
 * which they are checked: signature over the exact bytes first, then parsing
 * (docs/manifest.md, "Where the manifest comes from"). Also takes PID 1's environment: it is copied for the
 * env filter, then wiped in place, so /proc/1/environ shows nothing. */
#ifndef TURNINIT_LOAD_H
#define TURNINIT_LOAD_H

#include "policy/error.h"
#include "policy/manifest.h"
#include "policy/signature.h"
#include "util/cli.h"

#define LOAD_ENV_MANIFEST "TURNINIT_MANIFEST"
#define LOAD_ENV_SIGNATURE "TURNINIT_MANIFEST_SIG"

struct load_result {
	struct mf_manifest *manifest;
	struct sig_result sig;
	char source[MF_PATH_MAX + 64]; /* "image config Env" or "file PATH" */
	char trust[MF_PATH_MAX + 64];  /* "compiled in" or "file PATH" */
	char **caller_env;             /* copy of the environment turninit started with */
	uint8_t manifest_digest[32];   /* BLAKE2b-256 of the exact manifest bytes */
};

/* load_take_environ - copy envp (NULL-terminated "NAME=value" strings) into
 * ret_copy and wipe the originals in place (explicit_bzero), then clearenv().
 * Errors: -ENOMEM. */
int load_take_environ(char **envp, char ***ret_copy, struct tn_error *err);

/* load_policy - find the manifest (TURNINIT_MANIFEST/TURNINIT_MANIFEST_SIG in
 * caller_env, base64; else o->manifest_path and PATH.minisig), the trust roots
 * (compiled in, else the file CLI_DEFAULT_TRUSTED_KEYS: never a path the
 * launcher chooses), verify the signature over the exact
 * manifest bytes, then parse it with now = time(NULL).
 * caller_env passes to ret on success only; ret is written only on success.
 * Errors: -ENOENT/-EACCES/... a file cannot be read, -EFBIG a file over its
 * bound, -EINVAL ambiguous or half-given sources, and every error of
 * sig_parse_pubkeys, sig_verify and mf_parse; err says which. */
int load_policy(const struct cli_options *o, char **caller_env, struct load_result *ret,
		struct tn_error *err);

void load_result_free(struct load_result *r);

#endif
