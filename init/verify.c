/* verify.c - see verify.h. */
#include "verify.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "envfilter.h"
#include "filter.h"
#include "landlock.h"

static int add_denied(const char *name, enum sc_rule rule, void *data)
{
	static const char *const how[] = {
		[SC_EPERM] = "EPERM",
		[SC_ENOSYS] = "ENOSYS",
		[SC_ARGS] = "EPERM for some arguments",
	};
	json_t *o = json_pack("{s:s, s:s}", "name", name, "action", how[rule]);

	if (!o || json_array_append_new(data, o) != 0)
		return -ENOMEM;
	return 0;
}

/* {"abi": N, "status": ..., "always_writable": [...]} */
static json_t *landlock_json(const struct mf_manifest *m)
{
	static const char *const devices[] = LL_DEVICE_PATHS;
	int abi = ll_abi();
	const char *status = abi > 0 ? "enforced" :
		m->landlock_optional ? "unavailable: not enforced (landlock.optional)" :
		"unavailable: a run refuses (landlock.optional is false)";
	json_t *dev = json_array();

	for (const char *const *d = devices; dev && *d; d++)
		if (json_array_append_new(dev, json_string(*d)) != 0) {
			json_decref(dev);
			return NULL;
		}
	return json_pack("{s:i, s:s, s:o*}", "abi", abi, "status", status, "always_writable", dev);
}

int verify_print(const struct load_result *r, struct tn_error *err)
{
	char kid[17], *mf_text = NULL, *out = NULL, **envp = NULL;
	json_t *root = NULL, *mf = NULL, *names = NULL, *denied = NULL;
	int ret = -ENOMEM;

	sig_key_id_hex(r->sig.key_id, kid);
	mf_text = mf_to_json(r->manifest);
	if (!mf_text || !(mf = json_loads(mf_text, 0, NULL)))
		goto out;
	names = json_array();
	denied = json_array();
	if (!names || !denied)
		goto out;
	if (envf_build(r->manifest, r->caller_env, &envp, err) < 0)
		goto out;
	for (size_t i = 0; envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');

		if (json_array_append_new(names, json_stringn(envp[i], (size_t)(eq - envp[i]))) != 0)
			goto out;
	}
	if (sc_each_denied(r->manifest, add_denied, denied, err) < 0)
		goto out;
	root = json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:O, s:O, s:{s:s, s:s, s:O}, s:o*}",
			 "turninit", TURNINIT_VERSION,
			 "source", r->source,
			 "trust", r->trust,
			 "signature", "algorithm", r->sig.alg, "key_id", kid,
			 "trusted_comment", r->sig.trusted_comment,
			 "manifest", mf,
			 "environment", names,
			 "seccomp", "architecture", "x86_64", "other_architectures", "killed",
			 "denied", denied,
			 "landlock", landlock_json(r->manifest));
	if (!root)
		goto out;
	out = json_dumps(root, JSON_PRESERVE_ORDER | JSON_INDENT(2));
	if (!out)
		goto out;
	if (printf("%s\n", out) < 0 || fflush(stdout) != 0) {
		ret = err_set(err, EIO, "verify: writing stdout: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (ret == -ENOMEM && err && err->code == 0)
		err_set(err, ENOMEM, "verify: out of memory");
	free(out);
	free(mf_text);
	envf_free(envp);
	json_decref(root);
	json_decref(mf);
	json_decref(names);
	json_decref(denied);
	return ret;
}
