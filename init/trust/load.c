/* load.c - see load.h. */
#define _GNU_SOURCE
#include "trust/load.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <seccomp.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "policy/envfilter.h"
#include "trusted_keys.h"

int load_take_environ(char **envp, char ***ret_copy, struct tn_error *err)
{
	size_t n = 0;
	char **copy;

	while (envp && envp[n])
		n++;
	copy = calloc(n + 1, sizeof(*copy));
	if (!copy)
		return err_set(err, ENOMEM, "environment: out of memory");
	for (size_t i = 0; i < n; i++) {
		copy[i] = strdup(envp[i]);
		if (!copy[i]) {
			envf_free(copy);
			return err_set(err, ENOMEM, "environment: out of memory");
		}
	}
	/* /proc/PID/environ reads the original bytes, not `environ`: wipe them. */
	for (size_t i = 0; i < n; i++)
		explicit_bzero(envp[i], strlen(envp[i]));
	clearenv();
	*ret_copy = copy;
	return 0;
}

/* Read at most max bytes of the regular file path; a larger file is -EFBIG.
 * O_NONBLOCK and the S_ISREG check: a FIFO, a terminal or /dev/stdin named by
 * the launcher must not hold turninit before the first command. */
static int read_bounded(const char *path, size_t max, uint8_t **ret_buf, size_t *ret_len,
			struct tn_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len = 0;
	struct stat st;

	if (fd < 0)
		return err_errno(err, errno, "%s", path);
	if (fstat(fd, &st) != 0)
		return err_errno(err, errno, "%s", path);
	if (!S_ISREG(st.st_mode))
		return err_set(err, EINVAL, "%s: not a regular file", path);
	buf = malloc(max + 2);
	if (!buf)
		return err_set(err, ENOMEM, "%s: out of memory", path);
	for (;;) {
		ssize_t r = TEMP_FAILURE_RETRY(read(fd, buf + len, max + 1 - len));

		if (r < 0)
			return err_errno(err, errno, "%s", path);
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > max)
			return err_set(err, EFBIG, "%s: larger than %zu bytes", path, max);
	}
	buf[len] = '\0';
	*ret_buf = steal_ptr(&buf);
	*ret_len = len;
	return 0;
}

static const char *env_lookup(char **env, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (strncmp(env[i], name, nl) == 0 && env[i][nl] == '=')
			return env[i] + nl + 1;
	return NULL;
}

/* Decode base64 (standard alphabet, padding required, no whitespace). */
static int decode_b64(const char *name, const char *b64, size_t max, uint8_t **ret_buf, size_t *ret_len,
		      struct tn_error *err)
{
	size_t b64_len = strlen(b64), len = 0;
	_cleanup_free_ uint8_t *buf = NULL;

	if (b64_len > (max / 3 + 1) * 4)
		return err_set(err, EFBIG, "%s: larger than %zu bytes", name, max);
	buf = malloc(b64_len / 4 * 3 + 4);
	if (!buf)
		return err_set(err, ENOMEM, "%s: out of memory", name);
	if (sodium_base642bin(buf, b64_len / 4 * 3 + 3, b64, b64_len, NULL, &len, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    (b64_len % 4) != 0)
		return err_set(err, EBADMSG, "%s: not valid base64", name);
	if (len > max)
		return err_set(err, EFBIG, "%s: larger than %zu bytes", name, max);
	buf[len] = '\0';
	*ret_buf = steal_ptr(&buf);
	*ret_len = len;
	return 0;
}

static bool syscall_known(const char *name)
{
	return seccomp_syscall_resolve_name(name) != __NR_SCMP_ERROR;
}

static int load_keys(struct sig_keyring *ring, char *trust, size_t trust_size, struct tn_error *err)
{
	static const char *const compiled = TURNINIT_COMPILED_KEYS;
	_cleanup_free_ uint8_t *text = NULL;
	size_t len = 0;
	int r;

	if (compiled[0]) {
		r = sig_parse_pubkeys(compiled, strlen(compiled), ring, err);
		if (r < 0)
			return err_prefix(err, "compiled-in trusted keys");
		snprintf(trust, trust_size, "compiled in");
		return 0;
	}
	r = read_bounded(CLI_DEFAULT_TRUSTED_KEYS, SIG_MAX_FILE_BYTES, &text, &len, err);
	if (r < 0)
		return err_prefix(err, "trusted keys (no keys compiled in)");
	r = sig_parse_pubkeys((const char *)text, len, ring, err);
	if (r < 0)
		return err_prefix(err, "trusted keys %s", CLI_DEFAULT_TRUSTED_KEYS);
	snprintf(trust, trust_size, "file %s", CLI_DEFAULT_TRUSTED_KEYS);
	return 0;
}

int load_policy(const struct cli_options *o, char **caller_env, struct load_result *ret, struct tn_error *err)
{
	const char *env_mf = env_lookup(caller_env, LOAD_ENV_MANIFEST);
	const char *env_sig = env_lookup(caller_env, LOAD_ENV_SIGNATURE);
	_cleanup_free_ uint8_t *mf_buf = NULL, *sig_buf = NULL;
	size_t mf_len = 0, sig_len = 0;
	struct sig_keyring ring = { .n = 0 };
	struct load_result res = { .manifest = NULL };
	int r;

	r = load_keys(&ring, res.trust, sizeof(res.trust), err);
	if (r < 0)
		return r;

	if (env_mf || env_sig) {
		if (!env_mf || !env_sig)
			return err_set(err, EINVAL, "manifest: %s is set but %s is not",
				       env_mf ? LOAD_ENV_MANIFEST : LOAD_ENV_SIGNATURE,
				       env_mf ? LOAD_ENV_SIGNATURE : LOAD_ENV_MANIFEST);
		if (o->manifest_explicit)
			return err_set(err, EINVAL, "manifest: both --manifest and %s are given; give one",
				       LOAD_ENV_MANIFEST);
		r = decode_b64(LOAD_ENV_MANIFEST, env_mf, MF_MAX_BYTES, &mf_buf, &mf_len, err);
		if (r < 0)
			return err_prefix(err, "manifest");
		r = decode_b64(LOAD_ENV_SIGNATURE, env_sig, SIG_MAX_FILE_BYTES, &sig_buf, &sig_len, err);
		if (r < 0)
			return err_prefix(err, "manifest");
		snprintf(res.source, sizeof(res.source), "image config Env (%s)", LOAD_ENV_MANIFEST);
	} else {
		char sig_path[MF_PATH_MAX + 16];

		if ((size_t)snprintf(sig_path, sizeof(sig_path), "%s.minisig", o->manifest_path) >=
		    sizeof(sig_path))
			return err_set(err, ENAMETOOLONG, "manifest: path too long");
		r = read_bounded(o->manifest_path, MF_MAX_BYTES, &mf_buf, &mf_len, err);
		if (r == -ENOENT && !o->manifest_explicit)
			/* the usual first mistake: an image not sealed, or the
			 * binary run on the host */
			return err_set(err, ENOENT,
				       "manifest: none: no %s in the environment (an image sealed with turninit-seal, oci/seal.sh, carries it) and no %s (or --manifest PATH); turninit runs nothing without a signed manifest",
				       LOAD_ENV_MANIFEST, o->manifest_path);
		if (r < 0)
			return err_prefix(err, "manifest");
		r = read_bounded(sig_path, SIG_MAX_FILE_BYTES, &sig_buf, &sig_len, err);
		if (r < 0)
			return err_prefix(err, "manifest signature");
		snprintf(res.source, sizeof(res.source), "file %s", o->manifest_path);
	}

	/* Signature first, over the exact bytes; nothing is parsed before it holds. */
	r = sig_verify(&ring, mf_buf, mf_len, (const char *)sig_buf, sig_len, &res.sig, err);
	if (r == -ENOKEY && err) {
		/* where the trusted keys come from, and what would be trusted */
		size_t l = strlen(err->msg);

		snprintf(err->msg + l, sizeof(err->msg) - l,
			 " (%s%s): sign the manifest with one of them (oci/seal.sh --key)", res.trust,
			 res.trust[0] == 'f' ? ", in the image" : "");
	}
	if (r < 0)
		return err_prefix(err, "manifest");
	r = mf_parse(mf_buf, mf_len, (int64_t)time(NULL), syscall_known, &res.manifest, err);
	if (r < 0)
		return r;
	/* The audit log names the policy of a turn by this digest (docs/audit.md). */
	crypto_generichash(res.manifest_digest, sizeof(res.manifest_digest), mf_buf, mf_len, NULL, 0);
	res.caller_env = caller_env;
	*ret = res;
	return 0;
}

void load_result_free(struct load_result *r)
{
	mf_free(r->manifest);
	r->manifest = NULL;
	envf_free(r->caller_env);
	r->caller_env = NULL;
}
