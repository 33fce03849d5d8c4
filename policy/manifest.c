/* manifest.c - the signed manifest, version 1 (see manifest.h, docs/manifest.md,
 * policy/manifest.schema.json).
 *
 * Strict by construction: jansson refuses invalid UTF-8, "\u0000" and (with
 * JSON_REJECT_DUPLICATES) duplicate keys; this file refuses unknown keys at
 * every level, wrong types, out-of-range values and unnormalised paths. Every
 * message names the field; mf_parse adds the "manifest: " prefix once.
 */
#include "policy/manifest.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/cleanup.h"
#include "policy/envfilter.h"
#include "policy/http.h"
#include "policy/netallow.h"
#include "policy/seccomp_groups.h"
#include "policy/sjson.h"

#define MF_UID_MAX 4294967294LL /* (uid_t)-1 means "no change" to setresuid */
#define MF_FSIZE_MAX (1LL << 62)
#define MF_SYSCALL_NAME_MAX 64
#define MF_SHOW ERR_SHOWN_MAX

static const char *mf_show(const char *s, char buf[static MF_SHOW])
{
	return err_shown(s, SIZE_MAX, buf);
}

static const char *mf_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "an unknown value";
}

/* ---- field helpers; messages are "FIELD: reason" ---- */

static int mf_check_keys(const json_t *obj, const char *path, const char *const *keys, struct tn_error *err)
{
	const char *key;
	json_t *v;
	char show[MF_SHOW];

	json_object_foreach((json_t *)obj, key, v) {
		bool known = false;

		for (const char *const *k = keys; *k && !known; k++)
			known = strcmp(key, *k) == 0;
		if (!known)
			return err_set(err, EINVAL, "%s%s%s: unknown key", path, *path ? "." : "",
				       mf_show(key, show));
	}
	return 0;
}

/* parent[key] as an object; *ret NULL when absent and optional. */
static int mf_get_object(const json_t *parent, const char *key, const char *path, bool required, json_t **ret,
			 struct tn_error *err)
{
	json_t *v = json_object_get(parent, key);

	if (!v) {
		if (required)
			return err_set(err, EINVAL, "%s: required", path);
		*ret = NULL;
		return 0;
	}
	if (!json_is_object(v))
		return err_set(err, EINVAL, "%s: expected an object, got %s", path, mf_type_name(v));
	*ret = v;
	return 0;
}

static int mf_get_array(const json_t *parent, const char *key, const char *path, json_t **ret,
			struct tn_error *err)
{
	json_t *v = json_object_get(parent, key);

	if (!v) {
		*ret = NULL;
		return 0;
	}
	if (!json_is_array(v))
		return err_set(err, EINVAL, "%s: expected an array, got %s", path, mf_type_name(v));
	if (json_array_size(v) > MF_MAX_LIST)
		return err_set(err, EINVAL, "%s: %zu entries, at most %d allowed", path, json_array_size(v),
			       MF_MAX_LIST);
	*ret = v;
	return 0;
}

/* An integer in min..max. JSON reals (1.0, 1e3), strings and booleans are
 * refused: a signed policy says exactly what it means. */
static int mf_int(const json_t *v, const char *path, json_int_t min, json_int_t max, json_int_t *ret,
		  struct tn_error *err)
{
	json_int_t x = 0;

	if (!json_is_integer(v))
		return err_set(err, EINVAL, "%s: expected an integer in %lld..%lld, got %s", path,
			       (long long)min, (long long)max, mf_type_name(v));
	x = json_integer_value(v);
	if (x < min || x > max)
		return err_set(err, EINVAL, "%s: %lld is out of range %lld..%lld", path, (long long)x,
			       (long long)min, (long long)max);
	*ret = x;
	return 0;
}

/* A JSON string as a C string: no embedded NUL. jansson already refuses
 * "\u0000" without JSON_ALLOW_NUL, so this cannot fire today; it keeps the
 * guarantee here should that flag ever be turned on. */
static int mf_string(const json_t *v, const char *path, const char **ret, struct tn_error *err)
{
	if (!json_is_string(v))
		return err_set(err, EINVAL, "%s: expected a string, got %s", path, mf_type_name(v));
	if (strlen(json_string_value(v)) != json_string_length(v))
		return err_set(err, EINVAL, "%s: contains a NUL byte", path);
	*ret = json_string_value(v);
	return 0;
}

static int mf_strdup(const char *s, char **ret, struct tn_error *err)
{
	*ret = strdup(s);
	return *ret ? 0 : err_set(err, ENOMEM, "out of memory");
}

/* Absolute and normalised: starts with '/', no "//", no "." or ".."
 * component, no trailing '/', shorter than MF_PATH_MAX. "/" itself only when
 * allow_root. Normalised paths make the policy mean what it reads: a later
 * prefix comparison (Landlock rules, the HOME mount) cannot be fooled by
 * "/home/agent/../../etc". Returns the reason, or NULL when the path is good. */
static const char *mf_path_problem(const char *s, bool allow_root)
{
	size_t n = strlen(s);

	if (n == 0)
		return "is empty";
	if (s[0] != '/')
		return "is not absolute";
	if (n >= MF_PATH_MAX)
		return "is longer than 4095 bytes";
	if (n == 1)
		return allow_root ? NULL : "may not be \"/\"";
	if (s[n - 1] == '/')
		return "ends in '/'";
	for (const char *c = s; *c;) {
		const char *next = strchr(c + 1, '/');
		size_t len = next ? (size_t)(next - c - 1) : strlen(c + 1);

		/* c points at a '/', the component is c+1 .. c+1+len */
		if (len == 0)
			return "contains \"//\"";
		if ((len == 1 && c[1] == '.') || (len == 2 && c[1] == '.' && c[2] == '.'))
			return "has a \".\" or \"..\" component";
		if (!next)
			break;
		c = next;
	}
	return NULL;
}

static int mf_path(const json_t *v, const char *path, bool allow_root, char **ret, struct tn_error *err)
{
	char show[MF_SHOW];
	const char *s = NULL, *problem;
	int r;

	r = mf_string(v, path, &s, err);
	if (r < 0)
		return r;
	problem = mf_path_problem(s, allow_root);
	if (problem)
		return err_set(err, EINVAL, "%s: \"%s\" %s (paths must be absolute and normalised)", path,
			       mf_show(s, show), problem);
	return mf_strdup(s, ret, err);
}

/* ---- sections, in schema order ---- */

static const char *const mf_keys_root[] = {
	"turninit", "expires", "user",     "home",    "workdir", "shell", "env",
	"limits",   "seccomp", "landlock", "callers", "network", "audit", NULL,
};
static const char *const mf_keys_user[] = { "uid", "gid", "uid_range", "gid_range", NULL };
static const char *const mf_keys_env[] = { "set", "allow", NULL };
static const char *const mf_keys_limits[] = {
	"timeout_s", "output_bytes", "nofile", "nproc", "fsize_bytes", "concurrency", "result_bytes", NULL,
};
static const char *const mf_keys_seccomp[] = { "deny", "allow", NULL };
static const char *const mf_keys_landlock[] = { "writable", "optional", "shm", NULL };
static const char *const mf_keys_callers[] = { "uids", NULL };
static const char *const mf_keys_network[] = { "allow", "isolation", NULL };
static const char *const mf_keys_net_rule[] = { "host", "ports", "credential", NULL };
static const char *const mf_keys_net_cred[] = { "name", "as", "user", "field", "ca", NULL };
static const char *const mf_keys_audit[] = { "required", NULL };

static int mf_parse_version(const json_t *root, struct mf_manifest *m, struct tn_error *err)
{
	json_t *v = json_object_get(root, "turninit");
	json_int_t x = 0;

	/* Checked before unknown keys, so a newer manifest gets a version message. */
	if (!v)
		return err_set(err, EINVAL, "turninit: required (the format version, %d)", MF_VERSION);
	if (!json_is_integer(v))
		return err_set(err, EINVAL, "turninit: expected the integer %d, got %s", MF_VERSION,
			       mf_type_name(v));
	x = json_integer_value(v);
	if (x != MF_VERSION)
		return err_set(err, EINVAL, "turninit: unsupported version %lld (this turninit reads %d)",
			       (long long)x, MF_VERSION);
	m->version = MF_VERSION;
	return 0;
}

static int mf_parse_expires(const json_t *root, struct mf_manifest *m, int64_t now, struct tn_error *err)
{
	json_t *v = json_object_get(root, "expires");
	char show[MF_SHOW];
	const char *s = NULL;
	int r;

	if (!v)
		return err_set(err, EINVAL,
			       "expires: required (\"YYYY-MM-DDTHH:MM:SSZ\"; sealing with --expires 30d sets it)");
	r = mf_string(v, "expires", &s, err);
	if (r < 0)
		return r;
	if (sj_time_parse(s, &m->expires) < 0)
		return err_set(err, EINVAL,
			       "expires: expected a UTC time \"YYYY-MM-DDTHH:MM:SSZ\" (RFC 3339), got \"%s\"",
			       mf_show(s, show));
	/* A signed manifest stays valid wherever its key is trusted: expiry bounds replay. */
	if (m->expires <= now)
		return err_set(err, EKEYEXPIRED, "expired at %s", s);
	return 0;
}

static int mf_parse_id(const json_t *obj, const char *key, const char *path, uint32_t *ret,
		       struct tn_error *err)
{
	json_t *v = json_object_get(obj, key);
	json_int_t x = 0;
	int r;

	if (!v)
		return err_set(err, EINVAL, "%s: required", path);
	if (json_is_integer(v) && json_integer_value(v) == 0)
		return err_set(err, EINVAL, "%s: 0 (root) is refused: commands never run as root", path);
	r = mf_int(v, path, 1, MF_UID_MAX, &x, err);
	if (r < 0)
		return r;
	*ret = (uint32_t)x;
	return 0;
}

/* "uid_range" or "gid_range": [LOW, HIGH], LOW <= HIGH, min <= LOW. */
static int mf_parse_range(const json_t *user, const char *key, json_int_t min, uint32_t ret[2],
			  struct tn_error *err)
{
	json_t *v = json_object_get(user, key);
	char path[32];
	json_int_t x[2] = { 0, 0 };
	int r;

	if (!v)
		return err_set(err, EINVAL, "user.%s: required with user.%s", key,
			       key[0] == 'u' ? "gid_range" : "uid_range");
	if (!json_is_array(v) || json_array_size(v) != 2)
		return err_set(err, EINVAL, "user.%s: expected [LOW, HIGH], got %s", key,
			       json_is_array(v) ? "another number of items" : mf_type_name(v));
	for (size_t i = 0; i < 2; i++) {
		json_t *e = json_array_get(v, i);

		snprintf(path, sizeof(path), "user.%s[%zu]", key, i);
		if (min > 0 && json_is_integer(e) && json_integer_value(e) == 0)
			return err_set(err, EINVAL, "%s: 0 (root) is refused: commands never run as root",
				       path);
		r = mf_int(e, path, min, MF_UID_MAX, &x[i], err);
		if (r < 0)
			return r;
	}
	if (x[0] > x[1])
		return err_set(err, EINVAL, "user.%s: [%lld, %lld] is empty (LOW above HIGH)", key,
			       (long long)x[0], (long long)x[1]);
	ret[0] = (uint32_t)x[0];
	ret[1] = (uint32_t)x[1];
	return 0;
}

static int mf_parse_user(const json_t *root, struct mf_manifest *m, struct tn_error *err)
{
	json_t *user = NULL;
	int r;

	r = mf_get_object(root, "user", "user", true, &user, err);
	if (r < 0)
		return r;
	r = mf_check_keys(user, "user", mf_keys_user, err);
	if (r < 0)
		return r;
	if (json_object_get(user, "uid_range") || json_object_get(user, "gid_range")) {
		/* "the uid I am started as", bounded: resolved by mf_user_start */
		if (json_object_get(user, "uid") || json_object_get(user, "gid"))
			return err_set(err, EINVAL,
				       "user: give uid and gid, or uid_range and gid_range, not both");
		m->as_started = true;
		r = mf_parse_range(user, "uid_range", 1, m->uid_range, err);
		if (r < 0)
			return r;
		/* gid 0 is OpenShift's: its arbitrary uids run with group 0 */
		return mf_parse_range(user, "gid_range", 0, m->gid_range, err);
	}
	r = mf_parse_id(user, "uid", "user.uid", &m->uid, err);
	if (r < 0)
		return r;
	return mf_parse_id(user, "gid", "user.gid", &m->gid, err);
}

int mf_user_start(struct mf_manifest *m, bool nonroot, uint32_t uid, uint32_t gid, struct tn_error *err)
{
	if (!m->as_started) {
		if (nonroot && (uid != m->uid || gid != m->gid))
			return err_set(err, EPERM,
				       "user: turninit runs unprivileged as %u:%u, so commands run as %u:%u, but the manifest names user.uid %u, user.gid %u: start it as %u:%u (Kubernetes: runAsUser, runAsGroup), or seal user.uid_range and user.gid_range",
				       uid, gid, uid, gid, m->uid, m->gid, m->uid, m->gid);
		return 0;
	}
	if (!nonroot)
		return err_set(err, EPERM,
			       "user.uid_range: commands run as the uid turninit is started as, but it started privileged (uid %u): start it as an unprivileged uid in [%u, %u] with no capability in any set",
			       uid, m->uid_range[0], m->uid_range[1]);
	if (uid < m->uid_range[0] || uid > m->uid_range[1])
		return err_set(err, EPERM, "user.uid_range: turninit runs as uid %u, outside [%u, %u]", uid,
			       m->uid_range[0], m->uid_range[1]);
	if (gid < m->gid_range[0] || gid > m->gid_range[1])
		return err_set(err, EPERM, "user.gid_range: turninit runs as gid %u, outside [%u, %u]", gid,
			       m->gid_range[0], m->gid_range[1]);
	if (m->n_caller_uids == 0) {
		m->caller_uids = calloc(1, sizeof(*m->caller_uids));
		if (!m->caller_uids)
			return err_set(err, ENOMEM, "out of memory");
		m->caller_uids[m->n_caller_uids++] = uid;
	}
	m->uid = uid;
	m->gid = gid;
	return 0;
}

static int mf_parse_paths(const json_t *root, struct mf_manifest *m, struct tn_error *err)
{
	json_t *v;
	int r;

	v = json_object_get(root, "home");
	if (!v)
		return err_set(err, EINVAL, "home: required");
	r = mf_path(v, "home", false, &m->home, err);
	if (r < 0)
		return r;

	v = json_object_get(root, "workdir");
	r = v ? mf_path(v, "workdir", true, &m->workdir, err) : mf_strdup(m->home, &m->workdir, err);
	if (r < 0)
		return r;

	v = json_object_get(root, "shell");
	return v ? mf_path(v, "shell", false, &m->shell, err) : mf_strdup("/bin/bash", &m->shell, err);
}

static int mf_parse_env_set(const json_t *set, struct mf_manifest *m, struct tn_error *err)
{
	const char *name;
	json_t *v;
	size_t i = 0;
	char path[64];
	int r;

	if (json_object_size(set) > MF_MAX_LIST)
		return err_set(err, EINVAL, "env.set: %zu entries, at most %d allowed", json_object_size(set),
			       MF_MAX_LIST);
	m->env.set = calloc(json_object_size(set) + 1, sizeof(*m->env.set));
	if (!m->env.set)
		return err_set(err, ENOMEM, "out of memory");
	m->env.n_set = json_object_size(set);

	/* jansson (2.14, both builds) iterates keys in file order; a unit test checks it. */
	json_object_foreach((json_t *)set, name, v) {
		const char *value = NULL;

		r = envf_check_set_name(name, err);
		if (r < 0) {
			err_prefix(err, "env.set");
			return r;
		}
		/* name is now a valid name of at most 255 bytes */
		snprintf(path, sizeof(path), "env.set.%.40s", name);
		r = mf_string(v, path, &value, err);
		if (r < 0)
			return r;
		if (strcmp(name, "PATH") == 0) {
			r = envf_check_path(value, err);
			if (r < 0) {
				err_prefix(err, "env.set.PATH");
				return r;
			}
		}
		r = mf_strdup(name, &m->env.set[i].name, err);
		if (r < 0)
			return r;
		r = mf_strdup(value, &m->env.set[i].value, err);
		if (r < 0)
			return r;
		i++;
	}
	return 0;
}

static int mf_parse_env_allow(const json_t *allow, struct mf_manifest *m, struct tn_error *err)
{
	size_t n = json_array_size(allow);
	char show[MF_SHOW];
	int r;

	m->env.allow = calloc(n + 1, sizeof(*m->env.allow));
	if (!m->env.allow)
		return err_set(err, ENOMEM, "out of memory");
	m->env.n_allow = n;
	for (size_t i = 0; i < n; i++) {
		char path[32];
		const char *s = NULL;

		snprintf(path, sizeof(path), "env.allow[%zu]", i);
		r = mf_string(json_array_get(allow, i), path, &s, err);
		if (r < 0)
			return r;
		r = envf_check_pattern(s, err);
		if (r < 0) {
			err_prefix(err, "%s", path);
			return r;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(m->env.allow[j], s) == 0)
				return err_set(err, EINVAL, "%s: \"%s\" is listed twice", path,
					       mf_show(s, show));
		r = mf_strdup(s, &m->env.allow[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int mf_parse_env(const json_t *root, struct mf_manifest *m, struct tn_error *err)
{
	json_t *env = NULL, *set = NULL, *allow = NULL;
	bool have_path = false;
	int r;

	r = mf_get_object(root, "env", "env", true, &env, err);
	if (r < 0)
		return r;
	r = mf_check_keys(env, "env", mf_keys_env, err);
	if (r < 0)
		return r;

	r = mf_get_object(env, "set", "env.set", false, &set, err);
	if (r < 0)
		return r;
	if (set) {
		r = mf_parse_env_set(set, m, err);
		if (r < 0)
			return r;
	}

	r = mf_get_array(env, "allow", "env.allow", &allow, err);
	if (r < 0)
		return r;
	if (allow) {
		r = mf_parse_env_allow(allow, m, err);
		if (r < 0)
			return r;
	}

	/* A name in both would have two sources; say which one is meant. (A prefix
	 * pattern may cover a set name: set wins, see envf_build.) */
	for (size_t i = 0; i < m->env.n_set; i++) {
		if (strcmp(m->env.set[i].name, "PATH") == 0)
			have_path = true;
		for (size_t j = 0; j < m->env.n_allow; j++)
			if (strcmp(m->env.set[i].name, m->env.allow[j]) == 0)
				return err_set(err, EINVAL, "env: %s is both in set and allow",
					       m->env.set[i].name);
	}
	/* Without PATH, bash uses its built-in default, which ends in "." (the
	 * working directory): the hole envf_check_path exists to close. */
	if (!have_path)
		return err_set(err, EINVAL,
			       "env.set: PATH is required (without it bash's built-in default searches the working directory)");
	return 0;
}

struct mf_limit_spec {
	const char *key;
	json_int_t min, max;
	size_t offset; /* in struct mf_limits */
	bool is_u32;
};

static const struct mf_limit_spec mf_limit_specs[] = {
	{ "timeout_s", 1, 86400, offsetof(struct mf_limits, timeout_s), true },
	{ "output_bytes", 1, 1073741824, offsetof(struct mf_limits, output_bytes), false },
	{ "nofile", 16, 1048576, offsetof(struct mf_limits, nofile), false },
	{ "nproc", 1, 1048576, offsetof(struct mf_limits, nproc), false },
	{ "fsize_bytes", 1, MF_FSIZE_MAX, offsetof(struct mf_limits, fsize_bytes), false },
	{ "concurrency", 1, MF_CONCURRENCY_MAX, offsetof(struct mf_limits, concurrency), true },
	{ "result_bytes", 256, 16777216, offsetof(struct mf_limits, result_bytes), false },
};

static int mf_parse_limits(const json_t *root, struct mf_manifest *m, struct tn_error *err)
{
	json_t *limits = NULL;
	int r;

	m->limits = (struct mf_limits){
		.timeout_s = 600,
		.output_bytes = 16777216,
		.nofile = 1024,
		.nproc = 512,
		.fsize_bytes = 1073741824,
		.concurrency = 8,
		.result_bytes = 30000,
	};
	r = mf_get_object(root, "limits", "limits", false, &limits, err);
	if (r < 0 || !limits)
		return r;
	r = mf_check_keys(limits, "limits", mf_keys_limits, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < N_ELEMENTS(mf_limit_specs); i++) {
		const struct mf_limit_spec *s = &mf_limit_specs[i];
		json_t *v = json_object_get(limits, s->key);
		char *field = (char *)&m->limits + s->offset;
		char path[32];
		json_int_t x = 0;

		if (!v)
			continue;
		snprintf(path, sizeof(path), "limits.%s", s->key);
		r = mf_int(v, path, s->min, s->max, &x, err);
		if (r < 0)
			return r;
		if (s->is_u32)
			*(uint32_t *)(void *)field = (uint32_t)x;
		else
			*(uint64_t *)(void *)field = (uint64_t)x;
	}
	return 0;
}

/* Syscall names as libseccomp spells them: lowercase letters, digits, '_'. */
static bool mf_syscall_syntax(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > MF_SYSCALL_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* Fills *list and *n_list in place, also on failure: mf_free cleans up. */
static int mf_parse_seccomp_list(const json_t *seccomp, const char *key, mf_syscall_known_fn syscall_known,
				 char ***list, size_t *n_list, struct tn_error *err)
{
	char section[32], show[MF_SHOW];
	json_t *arr = NULL;
	size_t n;
	int r;

	snprintf(section, sizeof(section), "seccomp.%s", key);
	r = mf_get_array(seccomp, key, section, &arr, err);
	if (r < 0)
		return r;
	if (!arr) {
		/* default: deny {"@default"}, allow {} */
		bool deny = strcmp(key, "deny") == 0;

		*list = calloc(2, sizeof(**list));
		if (!*list)
			return err_set(err, ENOMEM, "out of memory");
		*n_list = deny ? 1 : 0;
		return deny ? mf_strdup("@default", &(*list)[0], err) : 0;
	}
	n = json_array_size(arr);
	*list = calloc(n + 1, sizeof(**list));
	if (!*list)
		return err_set(err, ENOMEM, "out of memory");
	*n_list = n;
	for (size_t i = 0; i < n; i++) {
		char path[64];
		const char *s = NULL;

		snprintf(path, sizeof(path), "%s[%zu]", section, i);
		r = mf_string(json_array_get(arr, i), path, &s, err);
		if (r < 0)
			return r;
		if (s[0] == '@') {
			if (!scg_find(s))
				return err_set(err, EINVAL, "%s: unknown group \"%s\"", path,
					       mf_show(s, show));
		} else if (!mf_syscall_syntax(s) || (syscall_known && !syscall_known(s))) {
			return err_set(err, EINVAL, "%s: unknown syscall \"%s\"", path, mf_show(s, show));
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp((*list)[j], s) == 0)
				return err_set(err, EINVAL, "%s: \"%s\" is listed twice", path, s);
		r = mf_strdup(s, &(*list)[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int mf_parse_seccomp(const json_t *root, struct mf_manifest *m, mf_syscall_known_fn syscall_known,
			    struct tn_error *err)
{
	json_t *seccomp = NULL;
	json_t *empty _cleanup_json_decref_ = NULL;
	int r;

	r = mf_get_object(root, "seccomp", "seccomp", false, &seccomp, err);
	if (r < 0)
		return r;
	if (!seccomp) {
		empty = json_object();
		if (!empty)
			return err_set(err, ENOMEM, "out of memory");
		seccomp = empty;
	}
	r = mf_check_keys(seccomp, "seccomp", mf_keys_seccomp, err);
	if (r < 0)
		return r;
	r = mf_parse_seccomp_list(seccomp, "deny", syscall_known, &m->seccomp.deny, &m->seccomp.n_deny, err);
	if (r < 0)
		return r;
	r = mf_parse_seccomp_list(seccomp, "allow", syscall_known, &m->seccomp.allow, &m->seccomp.n_allow,
				  err);
	if (r < 0)
		return r;
	/* allow subtracts from deny (a syscall allowed out of a denied group); the
	 * very same name in both says nothing and is refused as contradictory. */
	for (size_t i = 0; i < m->seccomp.n_allow; i++)
		for (size_t j = 0; j < m->seccomp.n_deny; j++)
			if (strcmp(m->seccomp.allow[i], m->seccomp.deny[j]) == 0)
				return err_set(err, EINVAL,
					       "seccomp.allow[%zu]: \"%s\" is also in seccomp.deny", i,
					       m->seccomp.allow[i]);
	/* Nor may a group in allow take out a syscall that deny names bare:
	 * {"deny": ["ioctl"], "allow": ["@tty-inject"]} would deny nothing. */
	for (size_t i = 0; i < m->seccomp.n_allow; i++) {
		struct scg_set set = { 0 };

		if (m->seccomp.allow[i][0] != '@')
			continue;
		r = scg_resolve((const char *const *)&m->seccomp.allow[i], 1, NULL, 0, &set, err);
		if (r < 0)
			return r;
		for (size_t j = 0; j < m->seccomp.n_deny && r == 0; j++)
			for (size_t k = 0; k < set.n && r == 0; k++)
				if (strcmp(set.v[k].rule.syscall, m->seccomp.deny[j]) == 0)
					r = err_set(err, EINVAL,
						    "seccomp.allow[%zu]: \"%s\" takes out \"%s\", which seccomp.deny names",
						    i, m->seccomp.allow[i], m->seccomp.deny[j]);
		scg_set_free(&set);
		if (r < 0)
			return r;
	}
	return 0;
}

static int mf_add_unique_path(struct mf_manifest *m, const char *p, struct tn_error *err)
{
	for (size_t i = 0; i < m->landlock.n_writable; i++)
		if (strcmp(m->landlock.writable[i], p) == 0)
			return 0;
	return mf_strdup(p, &m->landlock.writable[m->landlock.n_writable++], err);
}

/* parent[key] as a boolean into *ret; *ret unchanged when absent. Errors:
 * -EINVAL naming path when it is not a boolean. */
static int mf_get_bool(const json_t *parent, const char *key, const char *path, bool *ret,
		       struct tn_error *err)
{
	json_t *v = json_object_get(parent, key);

	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return err_set(err, EINVAL, "%s: expected a boolean, got %s", path, mf_type_name(v));
	*ret = json_is_true(v);
	return 0;
}

/* true when p is path or below it (writing under path reaches p); both
 * absolute and normalised. */
static bool mf_path_covers(const char *path, const char *p)
{
	size_t n = strlen(path);

	if (strcmp(path, "/") == 0)
		return true;
	return strncmp(p, path, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static int mf_parse_landlock(const json_t *root, struct mf_manifest *m, struct tn_error *err)
{
	json_t *landlock = NULL, *list = NULL;
	char show[MF_SHOW];
	int r;

	r = mf_get_object(root, "landlock", "landlock", false, &landlock, err);
	if (r < 0)
		return r;
	if (landlock) {
		r = mf_check_keys(landlock, "landlock", mf_keys_landlock, err);
		if (r < 0)
			return r;
		r = mf_get_array(landlock, "writable", "landlock.writable", &list, err);
		if (r < 0)
			return r;
		bool shm = true;

		r = mf_get_bool(landlock, "optional", "landlock.optional", &m->landlock.optional, err);
		if (r >= 0)
			r = mf_get_bool(landlock, "shm", "landlock.shm", &shm, err);
		if (r < 0)
			return r;
		m->landlock.no_shm = !shm;
	}

	if (!list) {
		/* default: home, workdir, /tmp (deduplicated) */
		m->landlock.writable = calloc(4, sizeof(*m->landlock.writable));
		if (!m->landlock.writable)
			return err_set(err, ENOMEM, "out of memory");
		r = mf_add_unique_path(m, m->home, err);
		if (r >= 0)
			r = mf_add_unique_path(m, m->workdir, err);
		if (r >= 0)
			r = mf_add_unique_path(m, "/tmp", err);
		return r;
	}
	m->landlock.writable = calloc(json_array_size(list) + 1, sizeof(*m->landlock.writable));
	if (!m->landlock.writable)
		return err_set(err, ENOMEM, "out of memory");
	m->landlock.n_writable = json_array_size(list);
	for (size_t i = 0; i < m->landlock.n_writable; i++) {
		char path[48];

		snprintf(path, sizeof(path), "landlock.writable[%zu]", i);
		r = mf_path(json_array_get(list, i), path, true, &m->landlock.writable[i], err);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (strcmp(m->landlock.writable[j], m->landlock.writable[i]) == 0)
				return err_set(err, EINVAL, "%s: \"%s\" is listed twice", path,
					       mf_show(m->landlock.writable[i], show));
		/* /proc writable would let a command lower its oom_score_adj (and
		 * write the other files of its own /proc/self) */
		if (strcmp(m->landlock.writable[i], "/") != 0 &&
		    mf_path_covers("/proc", m->landlock.writable[i]))
			return err_set(err, EINVAL,
				       "%s: \"%s\" is in /proc, which commands may not write (they could lower their oom_score_adj)",
				       path, mf_show(m->landlock.writable[i], show));
		/* shm false and a writable path that holds /dev/shm say two things */
		if (m->landlock.no_shm && mf_path_covers(m->landlock.writable[i], "/dev/shm"))
			return err_set(err, EINVAL,
				       "%s: \"%s\" makes /dev/shm writable, and landlock.shm is false", path,
				       mf_show(m->landlock.writable[i], show));
	}
	return 0;
}

static int mf_parse_callers(const json_t *root, struct mf_manifest *m, struct tn_error *err)
{
	json_t *callers = NULL, *list = NULL;
	int r;

	r = mf_get_object(root, "callers", "callers", false, &callers, err);
	if (r < 0)
		return r;
	if (callers) {
		r = mf_check_keys(callers, "callers", mf_keys_callers, err);
		if (r < 0)
			return r;
		r = mf_get_array(callers, "uids", "callers.uids", &list, err);
		if (r < 0)
			return r;
	}
	if (!list && m->as_started)
		return 0; /* the started uid, set by mf_user_start */
	if (!list) {
		m->caller_uids = calloc(1, sizeof(*m->caller_uids));
		if (!m->caller_uids)
			return err_set(err, ENOMEM, "out of memory");
		m->caller_uids[0] = m->uid;
		m->n_caller_uids = 1;
		return 0;
	}
	m->caller_uids = calloc(json_array_size(list) + 1, sizeof(*m->caller_uids));
	if (!m->caller_uids)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < json_array_size(list); i++) {
		char path[48];
		json_int_t x = 0;

		snprintf(path, sizeof(path), "callers.uids[%zu]", i);
		/* a caller may be root (a sidecar peer); commands still never are */
		r = mf_int(json_array_get(list, i), path, 0, MF_UID_MAX, &x, err);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (m->caller_uids[j] == (uint32_t)x)
				return err_set(err, EINVAL, "%s: %lld is listed twice", path, (long long)x);
		m->caller_uids[m->n_caller_uids++] = (uint32_t)x;
	}
	return 0;
}

/* The fields a credential may not be written into: the hop-by-hop fields
 * (RFC 9110 section 7.6.1, and Keep-Alive and Proxy-Connection, which clients
 * still send), those that frame or route the request, Cookie, and
 * Authorization, which "bearer" and "basic" write. */
/* clang-format 14 would put each entry of this table on a line of its own: kept as written */
/* clang-format off */
static const char *const mf_cred_fields_refused[] = {
	"Connection", "Keep-Alive", "Proxy-Connection", "TE", "Trailer", "Transfer-Encoding",
	"Upgrade", "Proxy-Authenticate", "Proxy-Authorization", "Host", "Content-Length",
	"Cookie", "Authorization", NULL,
};
/* clang-format on */

/* A credential's name: 1 to NA_CRED_NAME_MAX bytes of [A-Za-z0-9_.-], the
 * first a letter or a digit. It is a file name under --credentials DIR, so
 * never "." or "..", never a '/'. */
static bool mf_cred_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > NA_CRED_NAME_MAX || !isalnum((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
			return false;
	return true;
}

/* A Basic user name: 1 to NA_CRED_USER_MAX bytes of printable ASCII, no ':'
 * (RFC 7617 section 2: the first ':' ends the user-id). */
static bool mf_cred_user_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > NA_CRED_USER_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e || s[i] == ':')
			return false;
	return true;
}

/* A field name: 1 to NA_CRED_FIELD_MAX bytes of RFC 9110's tchar
 * (section 5.6.2). */
static bool mf_cred_token_ok(const char *s)
{
	size_t n = strlen(s);

	return n <= NA_CRED_FIELD_MAX && http_token(s, n);
}

/* An optional string of the credential at path ("user", "field"): required
 * when want, else refused when given; copied into out (n bytes) when ok(). */
static int mf_cred_string(const json_t *c, const char *key, const char *path, bool want, const char *why,
			  bool (*ok)(const char *), const char *shape, char *out, size_t n,
			  struct tn_error *err)
{
	char show[MF_SHOW], sub[112];
	const json_t *v = json_object_get(c, key);
	const char *s = NULL;
	int rc;

	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	if (!v && want)
		return err_set(err, EINVAL, "%s.%s: required (%s)", path, key, why);
	if (!v)
		return 0;
	if (!want)
		return err_set(err, EINVAL, "%s.%s: given, but only %s takes it", path, key, why);
	rc = mf_string(v, sub, &s, err);
	if (rc < 0)
		return rc;
	if (!ok(s))
		return err_set(err, EINVAL, "%s.%s: \"%s\" is not %s", path, key, mf_show(s, show), shape);
	snprintf(out, n, "%s", s);
	return 0;
}

/* "field" of an "as": "header" credential, a token and none of the refused. */
static int mf_cred_field(const json_t *c, const char *path, struct na_cred *cr, struct tn_error *err)
{
	int rc = mf_cred_string(c, "field", path, cr->present == NA_HEADER,
				"\"as\": \"header\", the header it is written into", mf_cred_token_ok,
				"a header field name (an RFC 9110 token of 1 to 64 bytes)", cr->field,
				sizeof(cr->field), err);

	if (rc < 0 || cr->present != NA_HEADER)
		return rc;
	for (const char *const *f = mf_cred_fields_refused; *f; f++) {
		if (strcasecmp(cr->field, *f) != 0)
			continue;
		if (strcasecmp(*f, "Authorization") == 0)
			return err_set(err, EINVAL,
				       "%s.field: \"%s\" is written by \"as\": \"bearer\" or \"basic\": use one of those",
				       path, cr->field);
		return err_set(err, EINVAL,
			       "%s.field: \"%s\" frames, routes or belongs to the connection, not to a credential",
			       path, cr->field);
	}
	return 0;
}

/* Where a rule's credential may go: one named host, on one port that is
 * not 80 (the gateway speaks TLS to it). */
static int mf_cred_rule_ok(const struct na_rule *r, const char *path, struct tn_error *err)
{
	if (r->kind == NA_SUFFIX)
		return err_set(err, EINVAL,
			       "%s: \"%s\": a credential goes to one named host, never a wildcard", path,
			       r->host);
	if (r->kind != NA_NAME)
		return err_set(err, EINVAL,
			       "%s: \"%s\": a credential needs a host name, which its certificate names",
			       path, r->host);
	if (r->n_ports != 1 || r->ports[0] == 80)
		return err_set(err, EINVAL,
			       "%s: the gateway speaks TLS to the one port listed; port 80 is plain HTTP",
			       path);
	return 0;
}

/* "credential" of a rule at path (docs/manifest.md,
 * "network.allow[].credential"), into r->cred; r->host is set. */
static int mf_parse_net_cred(const json_t *c, const char *path, struct na_rule *r, struct tn_error *err)
{
	static const char
		*const as_names[] = { [NA_BEARER] = "bearer", [NA_BASIC] = "basic", [NA_HEADER] = "header" };
	char show[MF_SHOW], sub[96];
	const char *name = NULL, *as = NULL;
	struct na_cred *cr;
	json_t *ca;
	int rc;
	size_t k;

	if (!json_is_object(c))
		return err_set(err, EINVAL, "%s: expected an object {\"name\", \"as\"}, got %s", path,
			       mf_type_name(c));
	rc = mf_check_keys(c, path, mf_keys_net_cred, err);
	if (rc < 0 || (rc = mf_cred_rule_ok(r, path, err)) < 0)
		return rc;
	snprintf(sub, sizeof(sub), "%s.name", path);
	if (!json_object_get(c, "name"))
		return err_set(err, EINVAL, "%s: required (the file of its value under --credentials)", sub);
	rc = mf_string(json_object_get(c, "name"), sub, &name, err);
	if (rc < 0)
		return rc;
	if (!mf_cred_name_ok(name))
		return err_set(err, EINVAL,
			       "%s: \"%s\" is not 1 to 64 of [A-Za-z0-9_.-], the first a letter or a digit (it is a file name)",
			       sub, mf_show(name, show));
	snprintf(sub, sizeof(sub), "%s.as", path);
	if (!json_object_get(c, "as"))
		return err_set(err, EINVAL, "%s: required (\"bearer\", \"basic\" or \"header\")", sub);
	rc = mf_string(json_object_get(c, "as"), sub, &as, err);
	if (rc < 0)
		return rc;
	for (k = 0; k < N_ELEMENTS(as_names) && strcmp(as, as_names[k]) != 0; k++)
		;
	if (k == N_ELEMENTS(as_names))
		return err_set(err, EINVAL, "%s: \"%s\" is not \"bearer\", \"basic\" or \"header\"", sub,
			       mf_show(as, show));
	if (!(cr = r->cred = calloc(1, sizeof(*cr))))
		return err_set(err, ENOMEM, "out of memory");
	snprintf(cr->name, sizeof(cr->name), "%s", name);
	cr->present = (enum na_present)k;
	rc = mf_cred_string(c, "user", path, cr->present == NA_BASIC,
			    "\"as\": \"basic\", the user name sent with the value", mf_cred_user_ok,
			    "1 to 128 bytes of printable ASCII without ':'", cr->user, sizeof(cr->user), err);
	if (rc < 0 || (rc = mf_cred_field(c, path, cr, err)) < 0)
		return rc;
	snprintf(sub, sizeof(sub), "%s.ca", path);
	ca = json_object_get(c, "ca");
	return ca ? mf_path(ca, sub, false, &cr->ca, err) : 0;
}

/* One entry of network.allow, at path, into *r. */
static int mf_parse_net_rule(const json_t *v, const char *path, struct na_rule *r, struct tn_error *err)
{
	char show[MF_SHOW], sub[64];
	const char *host = NULL, *problem;
	json_t *ports;
	int rc;

	if (!json_is_object(v))
		return err_set(err, EINVAL, "%s: expected an object {\"host\", \"ports\"}, got %s", path,
			       mf_type_name(v));
	rc = mf_check_keys(v, path, mf_keys_net_rule, err);
	if (rc < 0)
		return rc;
	snprintf(sub, sizeof(sub), "%s.host", path);
	if (!json_object_get(v, "host"))
		return err_set(err, EINVAL, "%s: required", sub);
	rc = mf_string(json_object_get(v, "host"), sub, &host, err);
	if (rc < 0)
		return rc;
	problem = na_host_problem(host, &r->kind, r->addr);
	if (problem)
		return err_set(err, EINVAL, "%s: \"%s\" %s", sub, mf_show(host, show), problem);
	snprintf(sub, sizeof(sub), "%s.ports", path);
	ports = json_object_get(v, "ports");
	if (!ports)
		return err_set(err, EINVAL, "%s: required (the ports this host may be reached on)", sub);
	if (!json_is_array(ports) || json_array_size(ports) == 0 || json_array_size(ports) > NA_PORTS_MAX)
		return err_set(err, EINVAL, "%s: expected an array of 1 to %d ports", sub, NA_PORTS_MAX);
	for (size_t i = 0; i < json_array_size(ports); i++) {
		char at[96];
		json_int_t x = 0;

		snprintf(at, sizeof(at), "%s[%zu]", sub, i);
		rc = mf_int(json_array_get(ports, i), at, 1, 65535, &x, err);
		if (rc < 0)
			return rc;
		for (size_t j = 0; j < r->n_ports; j++)
			if (r->ports[j] == (uint16_t)x)
				return err_set(err, EINVAL, "%s: %lld is listed twice", at, (long long)x);
		r->ports[r->n_ports++] = (uint16_t)x;
	}
	/* the host first: mf_free frees the credential of a rule with a host */
	rc = mf_strdup(host, &r->host, err);
	if (rc < 0 || !json_object_get(v, "credential"))
		return rc;
	snprintf(sub, sizeof(sub), "%s.credential", path);
	return mf_parse_net_cred(json_object_get(v, "credential"), sub, r, err);
}

/* A credential's CA bundle is out of the commands' writable folders
 * (landlock.writable, parsed before: HOME, the workdir and /tmp by
 * default): a command that could rewrite it would choose whom the gateway
 * trusts with the credential. */
static int mf_cred_ca_unwritable(const struct mf_manifest *m, const struct na_rule *r, const char *path,
				 struct tn_error *err)
{
	const char *ca = r->cred ? r->cred->ca : NULL;

	for (size_t i = 0; ca && i < m->landlock.n_writable; i++) {
		const char *w = m->landlock.writable[i];
		size_t n = strlen(w);

		if (strcmp(w, "/") == 0 || (strncmp(ca, w, n) == 0 && (ca[n] == '/' || ca[n] == '\0')))
			return err_set(err, EINVAL,
				       "%s.credential.ca: %s is under %s, where commands may write (landlock.writable): a command could choose whom the credential is sent to",
				       path, ca, w);
	}
	return 0;
}

/* "network": absent, not filtered; present, its allow list (default empty:
 * loopback only) and isolation: absent (MF_ISO_AUTO), "namespace" or
 * "seccomp-notify". */
static int mf_parse_network(const json_t *root, struct mf_manifest *m, struct tn_error *err)
{
	json_t *net = NULL, *list = NULL, *iso;
	const char *s = NULL;
	int r;

	r = mf_get_object(root, "network", "network", false, &net, err);
	if (r < 0 || !net)
		return r;
	m->network.filtered = true;
	r = mf_check_keys(net, "network", mf_keys_network, err);
	if (r < 0)
		return r;
	if ((iso = json_object_get(net, "isolation"))) {
		r = mf_string(iso, "network.isolation", &s, err);
		if (r < 0)
			return r;
		if (strcmp(s, "namespace") == 0)
			m->network.isolation = MF_ISO_NAMESPACE;
		else if (strcmp(s, "seccomp-notify") == 0)
			m->network.isolation = MF_ISO_NOTIFY;
		else
			return err_set(err, EINVAL,
				       "network.isolation: \"%s\" is neither \"namespace\" nor \"seccomp-notify\"",
				       mf_show(s, (char[MF_SHOW]){ 0 }));
	}
	r = mf_get_array(net, "allow", "network.allow", &list, err);
	if (r < 0 || !list)
		return r;
	m->network.allow = calloc(json_array_size(list) + 1, sizeof(*m->network.allow));
	if (!m->network.allow)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < json_array_size(list); i++) {
		char path[48];

		snprintf(path, sizeof(path), "network.allow[%zu]", i);
		r = mf_parse_net_rule(json_array_get(list, i), path, &m->network.allow[i], err);
		m->network.n_allow += m->network.allow[i].host != NULL;
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (strcmp(m->network.allow[j].host, m->network.allow[i].host) == 0)
				return err_set(err, EINVAL,
					       "%s.host: \"%s\" is listed twice (list its ports in one entry)",
					       path, mf_show(m->network.allow[i].host, (char[MF_SHOW]){ 0 }));
		r = mf_cred_ca_unwritable(m, &m->network.allow[i], path, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int mf_parse_audit(const json_t *root, struct mf_manifest *m, struct tn_error *err)
{
	json_t *audit = NULL;
	int r;

	r = mf_get_object(root, "audit", "audit", false, &audit, err);
	if (r < 0 || !audit)
		return r;
	r = mf_check_keys(audit, "audit", mf_keys_audit, err);
	if (r < 0)
		return r;
	return mf_get_bool(audit, "required", "audit.required", &m->audit_required, err);
}

static int mf_parse_root(const json_t *root, struct mf_manifest *m, int64_t now,
			 mf_syscall_known_fn syscall_known, struct tn_error *err)
{
	int r;

	if (!json_is_object(root))
		return err_set(err, EINVAL, "expected a JSON object, got %s", mf_type_name(root));
	r = mf_parse_version(root, m, err);
	if (r >= 0)
		r = mf_check_keys(root, "", mf_keys_root, err);
	if (r >= 0)
		r = mf_parse_expires(root, m, now, err);
	if (r >= 0)
		r = mf_parse_user(root, m, err);
	if (r >= 0)
		r = mf_parse_paths(root, m, err);
	if (r >= 0)
		r = mf_parse_env(root, m, err);
	if (r >= 0)
		r = mf_parse_limits(root, m, err);
	if (r >= 0)
		r = mf_parse_seccomp(root, m, syscall_known, err);
	if (r >= 0)
		r = mf_parse_landlock(root, m, err);
	if (r >= 0)
		r = mf_parse_callers(root, m, err);
	if (r >= 0)
		r = mf_parse_network(root, m, err);
	if (r >= 0)
		r = mf_parse_audit(root, m, err);
	return r;
}

int mf_parse(const uint8_t *buf, size_t len, int64_t now, mf_syscall_known_fn syscall_known,
	     struct mf_manifest **ret, struct tn_error *err)
{
	json_t *root _cleanup_json_decref_ = NULL;
	struct mf_manifest *m = NULL;
	json_error_t je;
	int r;

	if (!ret)
		return err_set(err, EINVAL, "manifest: no result pointer");
	/* before parsing: the size bound is what keeps the parser's work bounded */
	if (len > MF_MAX_BYTES)
		return err_set(err, E2BIG, "manifest: %zu bytes, more than the limit of %d", len,
			       MF_MAX_BYTES);
	if (len == 0 || !buf)
		return err_set(err, EBADMSG, "manifest: empty");
	/* The whole parse under the guard: a value read while an allocation
	 * failed may not be the signed bytes (sjson.h). */
	sj_guard_begin();
	root = sj_load(buf, len, true, &je);
	if (!root)
		r = sj_error(&je, err);
	else if (!(m = calloc(1, sizeof(*m))))
		r = err_set(err, ENOMEM, "out of memory");
	else
		r = mf_parse_root(root, m, now, syscall_known, err);
	if (sj_guard_end())
		r = err_set(err, ENOMEM, "out of memory while parsing");
	if (r < 0) {
		mf_free(m);
		if (err)
			err_prefix(err, "manifest");
		return r;
	}
	*ret = m;
	return 0;
}

static void mf_free_strv(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void mf_free(struct mf_manifest *m)
{
	if (!m)
		return;
	free(m->home);
	free(m->workdir);
	free(m->shell);
	if (m->env.set)
		for (size_t i = 0; i < m->env.n_set; i++) {
			free(m->env.set[i].name);
			free(m->env.set[i].value);
		}
	free(m->env.set);
	mf_free_strv(m->env.allow, m->env.n_allow);
	mf_free_strv(m->seccomp.deny, m->seccomp.n_deny);
	mf_free_strv(m->seccomp.allow, m->seccomp.n_allow);
	mf_free_strv(m->landlock.writable, m->landlock.n_writable);
	free(m->caller_uids);
	for (size_t i = 0; i < m->network.n_allow; i++) {
		free(m->network.allow[i].host);
		if (m->network.allow[i].cred)
			free(m->network.allow[i].cred->ca);
		free(m->network.allow[i].cred);
	}
	free(m->network.allow);
	free(m);
}

/* ---- rendering ---- */

static json_t *mf_strv_json(char *const *v, size_t n)
{
	json_t *a = json_array();

	if (!a)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(a, json_string(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* json_object_set_new takes the value's reference even when it fails (and
 * accepts NULL as a failure), so a chain of sets needs one check each. */
#define MF_SET(obj, key, value) \
	do { \
		if (json_object_set_new((obj), (key), (value)) < 0) \
			return NULL; \
	} while (0)

/* A rule's credential as written: name, as, then user, field and ca when
 * it has them. */
static json_t *mf_render_cred(const struct na_cred *c)
{
	static const char
		*const as_names[] = { [NA_BEARER] = "bearer", [NA_BASIC] = "basic", [NA_HEADER] = "header" };
	json_t *cred _cleanup_json_decref_ = json_object();

	if (!cred)
		return NULL;
	MF_SET(cred, "name", json_string(c->name));
	MF_SET(cred, "as", json_string(as_names[c->present]));
	if (c->present == NA_BASIC)
		MF_SET(cred, "user", json_string(c->user));
	if (c->present == NA_HEADER)
		MF_SET(cred, "field", json_string(c->field));
	if (c->ca)
		MF_SET(cred, "ca", json_string(c->ca));
	return steal_ptr(&cred);
}

static json_t *mf_render_network(const struct mf_network *n)
{
	json_t *net _cleanup_json_decref_ = json_object();
	json_t *allow;

	if (!net)
		return NULL;
	MF_SET(net, "allow", allow = json_array());
	for (size_t i = 0; i < n->n_allow; i++) {
		const struct na_rule *r = &n->allow[i];
		json_t *rule = json_object(), *ports = json_array();

		if (json_array_append_new(allow, rule) < 0) {
			json_decref(ports);
			return NULL;
		}
		MF_SET(rule, "host", json_string(r->host));
		MF_SET(rule, "ports", ports);
		for (size_t j = 0; j < r->n_ports; j++)
			if (json_array_append_new(ports, json_integer(r->ports[j])) < 0)
				return NULL;
		if (r->cred)
			MF_SET(rule, "credential", mf_render_cred(r->cred));
	}
	if (n->isolation != MF_ISO_AUTO)
		MF_SET(net, "isolation",
		       json_string(n->isolation == MF_ISO_NAMESPACE ? "namespace" : "seccomp-notify"));
	return steal_ptr(&net);
}

static json_t *mf_render(const struct mf_manifest *m)
{
	json_t *root _cleanup_json_decref_ = json_object();
	json_t *user, *env, *set, *limits, *seccomp, *landlock, *callers, *uids, *audit;
	char expires[SJ_TIME_MAX];

	if (!root || sj_time_format(m->expires * 1000, false, expires) < 0)
		return NULL;
	MF_SET(root, "turninit", json_integer(m->version));
	MF_SET(root, "expires", json_string(expires));

	MF_SET(root, "user", user = json_object());
	if (m->as_started) {
		/* as sealed, resolved or not (mf_user_start): it parses back, and
		 * the ids themselves are turninit's (verify's "start") */
		MF_SET(user, "uid_range",
		       json_pack("[I, I]", (json_int_t)m->uid_range[0], (json_int_t)m->uid_range[1]));
		MF_SET(user, "gid_range",
		       json_pack("[I, I]", (json_int_t)m->gid_range[0], (json_int_t)m->gid_range[1]));
	} else {
		MF_SET(user, "uid", json_integer(m->uid));
		MF_SET(user, "gid", json_integer(m->gid));
	}
	MF_SET(root, "home", json_string(m->home));
	MF_SET(root, "workdir", json_string(m->workdir));
	MF_SET(root, "shell", json_string(m->shell));

	MF_SET(root, "env", env = json_object());
	MF_SET(env, "set", set = json_object());
	for (size_t i = 0; i < m->env.n_set; i++)
		MF_SET(set, m->env.set[i].name, json_string(m->env.set[i].value));
	MF_SET(env, "allow", mf_strv_json(m->env.allow, m->env.n_allow));

	MF_SET(root, "limits", limits = json_object());
	MF_SET(limits, "timeout_s", json_integer(m->limits.timeout_s));
	MF_SET(limits, "output_bytes", json_integer((json_int_t)m->limits.output_bytes));
	MF_SET(limits, "nofile", json_integer((json_int_t)m->limits.nofile));
	MF_SET(limits, "nproc", json_integer((json_int_t)m->limits.nproc));
	MF_SET(limits, "fsize_bytes", json_integer((json_int_t)m->limits.fsize_bytes));
	MF_SET(limits, "concurrency", json_integer(m->limits.concurrency));
	MF_SET(limits, "result_bytes", json_integer((json_int_t)m->limits.result_bytes));

	MF_SET(root, "seccomp", seccomp = json_object());
	MF_SET(seccomp, "deny", mf_strv_json(m->seccomp.deny, m->seccomp.n_deny));
	MF_SET(seccomp, "allow", mf_strv_json(m->seccomp.allow, m->seccomp.n_allow));

	MF_SET(root, "landlock", landlock = json_object());
	MF_SET(landlock, "writable", mf_strv_json(m->landlock.writable, m->landlock.n_writable));
	MF_SET(landlock, "optional", json_boolean(m->landlock.optional));
	MF_SET(landlock, "shm", json_boolean(!m->landlock.no_shm));

	MF_SET(root, "callers", callers = json_object());
	MF_SET(callers, "uids", uids = json_array());
	for (size_t i = 0; i < m->n_caller_uids; i++)
		if (json_array_append_new(uids, json_integer(m->caller_uids[i])) < 0)
			return NULL;

	if (m->network.filtered)
		MF_SET(root, "network", mf_render_network(&m->network));

	MF_SET(root, "audit", audit = json_object());
	MF_SET(audit, "required", json_boolean(m->audit_required));

	return steal_ptr(&root);
}

char *mf_to_json(const struct mf_manifest *m)
{
	json_t *root _cleanup_json_decref_ = NULL;

	if (!m)
		return NULL;
	root = mf_render(m);
	if (!root)
		return NULL;
	return json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
}
