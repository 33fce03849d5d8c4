/* manifest.h - the signed manifest, version 1 (docs/manifest.md).
 *
 * Owns parsing and validation of the manifest JSON (strict: UTF-8, at most
 * MF_MAX_BYTES, duplicate and unknown keys refused) into struct mf_manifest,
 * with defaults filled in, and its rendering as the effective policy. Pure
 * (jansson); the caller verifies the signature over the same bytes first.
 */
#ifndef TURNINIT_MANIFEST_H
#define TURNINIT_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/error.h"
#include "policy/netallow.h"

#define MF_MAX_BYTES 65536 /* bytes */
#define MF_VERSION 1
#define MF_PATH_MAX 4096       /* bytes, including the NUL */
#define MF_MAX_LIST 256        /* entries in any array or in env.set */
#define MF_CONCURRENCY_MAX 256 /* limits.concurrency at most */

struct mf_env_pair {
	char *name;
	char *value;
};

struct mf_limits {
	uint32_t timeout_s;    /* seconds, 1..86400, default 600 */
	uint64_t output_bytes; /* bytes, 1..1073741824, default 16777216 */
	uint64_t nofile;       /* RLIMIT_NOFILE, 16..1048576, default 1024 */
	uint64_t nproc;        /* RLIMIT_NPROC, 1..1048576, default 512 */
	uint64_t fsize_bytes;  /* RLIMIT_FSIZE in bytes, 1..2^62, default 1073741824 */
	uint32_t concurrency;  /* commands at once in serve/listen, 1..256, default 8 */
	uint64_t result_bytes; /* bytes of output in one MCP tool result, 256..16777216,
				  default 30000 */
};

/* "env": what a command's environment is made of (policy/envfilter.c). */
struct mf_env {
	struct mf_env_pair *set; /* "env.set", in file order */
	size_t n_set;
	char **allow; /* "env.allow" patterns, in file order */
	size_t n_allow;
};

/* "seccomp" (policy/seccomp_groups.c expands it). */
struct mf_seccomp {
	char **deny; /* group ("@name") or syscall names; default {"@default"} */
	size_t n_deny;
	char **allow; /* default empty */
	size_t n_allow;
};

/* "landlock" (init/sandbox/landlock.c). */
struct mf_landlock {
	char **writable; /* absolute paths; default {home, workdir, "/tmp"} (deduplicated) */
	size_t n_writable;
	bool optional; /* default false: a kernel without Landlock refuses */
	bool no_shm;   /* "shm": false: /dev/shm is not always writable */
};

/* "network" (docs/manifest.md): absent, turninit does not filter the network and
 * the runtime's applies. Present, commands reach loopback and, through turninit,
 * the hosts of allow (an empty allow: loopback only). */
/* "network.isolation": how the commands are kept to the allowlist (net.h) */
enum mf_isolation {
	MF_ISO_AUTO,      /* absent: a namespace where one can be had, else
			     seccomp user notification */
	MF_ISO_NAMESPACE, /* "namespace": a network namespace, or refused */
	MF_ISO_NOTIFY,    /* "seccomp-notify": user notification, or refused */
};

struct mf_network {
	bool filtered; /* the key is present */
	enum mf_isolation isolation;
	struct na_rule *allow; /* "network.allow", in file order, hosts each once */
	size_t n_allow;
};

struct mf_manifest {
	int version;           /* "turninit": always MF_VERSION */
	int64_t expires;       /* "expires": seconds since the epoch (UTC) */
	uint32_t uid, gid;     /* "user": numeric, never 0, never 4294967295; with
				  as_started 0 until mf_user_start sets them */
	bool as_started;       /* "user.uid_range" and "gid_range" were given:
				  commands run as the ids turninit is started as */
	uint32_t uid_range[2]; /* [LOW, HIGH], 1 <= LOW <= HIGH (with as_started) */
	uint32_t gid_range[2]; /* [LOW, HIGH], 0 <= LOW <= HIGH (with as_started) */
	char *home;            /* absolute, normalised, not "/" */
	char *workdir;         /* absolute, normalised; default: home */
	char *shell;           /* absolute, normalised; default "/bin/bash" */
	struct mf_env env;
	struct mf_limits limits;
	struct mf_seccomp seccomp;
	struct mf_landlock landlock;
	uint32_t *caller_uids; /* "callers.uids", 0..4294967294; default {uid} (with
				  as_started and none given: empty until mf_user_start) */
	size_t n_caller_uids;
	struct mf_network network;
	bool audit_required; /* "audit.required", default false: serve and listen
				refuse to start without --audit-log, one-shot refuses */
};

/* mf_syscall_known_fn - how mf_parse checks a seccomp name it does not know as a
 * group: return true when name is a syscall of the native architecture. NULL
 * means every non-group name is accepted (unit tests of unrelated fields). */
typedef bool (*mf_syscall_known_fn)(const char *name);

/* mf_parse - parse and validate a manifest.
 * buf/len: the exact bytes whose signature was verified; len > MF_MAX_BYTES is
 * refused before parsing. now: the current time in seconds since the epoch; a
 * manifest whose "expires" is not after now is refused. syscall_known: see above.
 * Checks every field (type, range, unknown and duplicate keys, env rules of
 * envfilter.h, seccomp names against the group table and syscall_known).
 * ret: a malloc'd manifest, written only on success; free with mf_free().
 * Errors: -E2BIG too large, -EBADMSG not JSON / not UTF-8 / duplicate key,
 * -EINVAL schema violation (err names the field: "env.allow[3]: ..."),
 * -EKEYEXPIRED expired, -ENOMEM. */
int mf_parse(const uint8_t *buf, size_t len, int64_t now, mf_syscall_known_fn syscall_known,
	     struct mf_manifest **ret, struct tn_error *err);

void mf_free(struct mf_manifest *m);

/* mf_to_json - render the manifest with defaults filled in, as a JSON object
 * text with the same keys as the input format (compact, keys in schema order).
 * Returns a malloc'd NUL-terminated string, or NULL on ENOMEM. */
/* mf_user_start - the commands' ids, from how turninit was started (uid, gid:
 * its own ids; nonroot: it runs with no capability, so commands share them).
 * A manifest with user.uid and user.gid: in non-root mode they must be uid and
 * gid. One with user.uid_range and user.gid_range: only in non-root mode, with
 * uid and gid inside them; m->uid, m->gid and an unset callers.uids become
 * uid, gid and {uid}. Errors: -EPERM naming the field and the way to start,
 * -ENOMEM. */
int mf_user_start(struct mf_manifest *m, bool nonroot, uint32_t uid, uint32_t gid, struct tn_error *err);

char *mf_to_json(const struct mf_manifest *m);

#endif
