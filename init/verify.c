/* verify.c - see verify.h. */
#include "verify.h"

#include <errno.h>
#include <jansson.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "commit.h"
#include "policy/cleanup.h"
#include "policy/envfilter.h"
#include "sandbox/caps.h"
#include "sandbox/creds.h"
#include "sandbox/filter.h"
#include "sandbox/landlock.h"
#include "sandbox/net.h"
#include "serve/changes.h"
#include "turn.h"
#include "util/plat.h"

/* [{"name": "mount", "action": "EPERM", "whole": true}, {"name": "ioctl",
 *   "action": "EPERM", "whole": false, "when": ["ioctl with request ..."]}]:
 * one object per syscall, in the order of the filter's rules. */
static json_t *denied_json(const struct scg_set *set)
{
	_cleanup_json_decref_ json_t *list = json_array();
	json_t *cur = NULL, *when = NULL;
	const char *cur_name = NULL;

	for (size_t i = 0; list && i < set->n; i++) {
		const struct scg_entry *e = &set->v[i];
		const char *action = e->rule.action == SCG_ENOSYS ? "ENOSYS" : "EPERM";

		if (!cur_name || strcmp(cur_name, e->rule.syscall) != 0) {
			cur_name = e->rule.syscall;
			cur = json_pack("{s:s, s:s, s:b}", "name", cur_name, "action", action, "whole",
					e->rule.whole);
			when = e->rule.whole ? NULL : json_array();
			if (!cur || json_array_append_new(list, cur) != 0 ||
			    (!e->rule.whole && (!when || json_object_set_new(cur, "when", when) != 0)))
				return NULL;
		}
		if (when && e->why) {
			bool seen = false;

			for (size_t j = 0; j < json_array_size(when) && !seen; j++)
				seen = strcmp(json_string_value(json_array_get(when, j)), e->why) == 0;
			if (!seen && json_array_append_new(when, json_string(e->why)) != 0)
				return NULL;
		}
	}
	return steal_ptr(&list);
}

/* {"abi": N, "status": ..., "signals": ..., "always_writable": [...]};
 * signals: whether Landlock scopes the commands' signals (ABI 6), so that
 * one command cannot signal another's processes (docs/security.md) */
static json_t *landlock_json(const struct mf_manifest *m)
{
	static const char *const devices[] = LL_DEVICE_PATHS;
	int abi = ll_abi();
	const char *status = abi > 0              ? "enforced" :
			     m->landlock.optional ? "unavailable: not enforced (landlock.optional)" :
						    "unavailable: a run refuses (landlock.optional is false)";
	json_t *dev = json_array();

	for (const char *const *d = devices; dev && *d; d++)
		if (!(m->landlock.no_shm && strcmp(*d, "/dev/shm") == 0) &&
		    json_array_append_new(dev, json_string(*d)) != 0) {
			json_decref(dev);
			return NULL;
		}
	return json_pack("{s:i, s:s, s:s, s:o*}", "abi", abi, "status", status, "signals",
			 abi >= 6 ?
				 "scoped: a command signals only its own processes" :
				 "not scoped (needs Landlock ABI 6): commands of one uid may signal each other's processes",
			 "always_writable", dev);
}

/* What non-root mode cannot apply (docs/security.md, "Non-root mode"). */
static json_t *nonroot_json(void)
{
	bool bounding = false;
	gid_t groups[64];
	int n = getgroups(64, groups);
	_cleanup_json_decref_ json_t *list = json_array();
	_cleanup_json_decref_ json_t *g = json_array();

	for (cap_value_t cap = 0; cap < (cap_value_t)cap_max_bits(); cap++)
		bounding |= prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1;
	for (int i = 0; list && g && i < n; i++)
		if (json_array_append_new(g, json_integer(groups[i])) != 0)
			return NULL;
	if (!list || !g ||
	    json_array_append_new(list,
				  json_string(
					  "securebits: not locked (needs CAP_SETPCAP); with no capability in any set and no_new_privs there is nothing for them to guard")) !=
		    0 ||
	    json_array_append_new(list,
				  json_string("uid change: commands run as turninit's own uid and gid")) !=
		    0 ||
	    json_array_append_new(list, json_pack("{s:s, s:O}", "supplementary groups",
						  "kept, as the runtime gave them", "groups", g)) != 0 ||
	    (bounding &&
	     json_array_append_new(list,
				   json_string(
					   "bounding set: not empty and cannot be dropped; no_new_privs keeps an exec from gaining from it")) !=
		     0))
		return NULL;
	return steal_ptr(&list);
}

/* {"applied": B, "seccomp": [...], "landlock_signal_scope": B}: whether the
 * commands would share turninit's uid (non-root mode, or started as the
 * manifest's uid), and then what keeps them from signalling it (filter.h's
 * guard, landlock.h's signal scope from ABI 6). */
static json_t *guard_json(const struct caps_start *start, const struct mf_manifest *m)
{
	/* the rule of turn.c's step_filter and place.c: turninit's euid is
	 * the commands' uid (always so in non-root mode) */
	bool applied = start && start->uid == m->uid;

	if (!applied)
		return json_pack("{s:b}", "applied", false);
	return json_pack("{s:b, s:[s, s, s, s, s, s], s:b}", "applied", true, "seccomp",
			 "kill of turninit's pid, of -1 and of its process group: EPERM",
			 "tkill and tgkill of turninit's pid: EPERM", "rt_sigqueueinfo: EPERM",
			 "rt_tgsigqueueinfo: EPERM", "pidfd_send_signal: EPERM", "fcntl F_SETSIG: EPERM",
			 "landlock_signal_scope", ll_abi() >= 6);
}

static json_t *start_json(const struct caps_start *start, const char *refusal)
{
	if (refusal)
		return json_pack("{s:s, s:s}", "mode", "refused", "refusal", refusal);
	if (start->mode == CAPS_PRIVILEGED)
		return json_pack("{s:s, s:I, s:I}", "mode", "privileged", "uid", (json_int_t)start->uid,
				 "gid", (json_int_t)start->gid);
	return json_pack("{s:s, s:I, s:I, s:b, s:o*}", "mode", "non-root", "uid", (json_int_t)start->uid,
			 "gid", (json_int_t)start->gid, "no_new_privs_at_start", start->nnp, "not_applied",
			 nonroot_json());
}

/* {"gvisor": B, "weakened": [...], "listen": "..."}: what this platform
 * offers of the layers, found as a start finds it (sc_kill_action,
 * caps_securebits_probe, ll_abi, plat_peercred_check). weakened names each
 * layer that is weaker here than on Linux, in this order: "seccomp" (other
 * architectures kill the calling thread only), "securebits" (none),
 * "landlock" (none, and the manifest allows that), "subreaper" (keepers
 * cannot be subreapers: a command's leftovers outlive it), "listen" (refused);
 * empty on a Linux kernel with Landlock. A Landlock a run refuses for is not
 * weakened but a refusal, said in "landlock". */
static json_t *platform_json(const struct mf_manifest *m, uint32_t kill, bool no_securebits)
{
	struct tn_error perr = { 0 };
	bool listen_ok = plat_peercred_check("listen", &perr) == 0;
	bool subreaper = plat_subreaper_works();
	json_t *weak = json_array();

	if (!weak ||
	    (kill != SCMP_ACT_KILL_PROCESS && json_array_append_new(weak, json_string("seccomp")) != 0) ||
	    (no_securebits && json_array_append_new(weak, json_string("securebits")) != 0) ||
	    (ll_abi() == 0 && m->landlock.optional &&
	     json_array_append_new(weak, json_string("landlock")) != 0) ||
	    (!subreaper && json_array_append_new(weak, json_string("subreaper")) != 0) ||
	    (!listen_ok && json_array_append_new(weak, json_string("listen")) != 0)) {
		json_decref(weak);
		return NULL;
	}
	return json_pack("{s:b, s:o, s:s}", "gvisor", plat_is_gvisor(), "weakened", weak, "listen",
			 listen_ok ? "available" : perr.msg);
}

/* With --audit-changes (changes_given): what the walk at the end of the
 * turn reads with, as turn.c's step_caps keeps it (CAP_DAC_READ_SEARCH,
 * else CAP_DAC_OVERRIDE), found in turninit's effective set now: at verify
 * the start's, at turn_start the set kept. Without either (non-root mode,
 * or a runtime that dropped both) a command can leave a directory that lists
 * but cannot be searched, and the record is then incomplete (changes.h).
 * NULL without --audit-changes. */
static const char *changes_reader(void)
{
	if (!changes_given())
		return NULL;
	if (caps_have(CAP_DAC_READ_SEARCH))
		return "read with CAP_DAC_READ_SEARCH, which no command holds: a mode a command sets does not hide a change";
	if (caps_have(CAP_DAC_OVERRIDE))
		return "read with CAP_DAC_OVERRIDE, which no command holds: a mode a command sets does not hide a change";
	return "read without CAP_DAC_READ_SEARCH or CAP_DAC_OVERRIDE (non-root mode, or the runtime dropped them): a command can make the change record incomplete (a directory, or the workdir, it leaves unreadable or unsearchable); the record then says so (\"complete\": false, \"unreadable_paths\"), and audit-verify notes it";
}

/* The network of the record as a start would find it: planned already (by
 * the start, whose port is left out so that the record is verify's word for
 * word, or by verify_print), else here, whose refusal is verify's to show;
 * each plan forks seccomp-notify's probe. Its line in buf (size bytes), the
 * plan in *ret; returns the isolation (net_isolation), or NULL: none, or
 * refused. */
static const char *network_of(const struct load_result *r, const struct caps_start *start,
			      const struct net_plan *planned, struct net_plan *ret, char *buf, size_t size)
{
	struct tn_error err = { 0 };

	if (planned)
		*ret = *planned, ret->port = 0;
	if (!planned && net_plan(&r->manifest->network, start->mode == CAPS_NONROOT, ret, &err) < 0) {
		net_describe(ret, err.msg, buf, size);
		return NULL;
	}
	net_describe(ret, NULL, buf, size);
	return net_isolation(ret);
}

json_t *verify_protections(const struct load_result *r, const struct caps_start *start,
			   const struct sc_program *prog, const struct net_plan *planned, const char *refusal,
			   const char *workdir_note, struct tn_error *err)
{
	char net[640], digest[SC_DIGEST_HEX] = "";
	const char *isolation;
	struct net_plan net_p = { 0 };
	struct tn_error build_err = { 0 };
	struct sc_program built = { 0 };
	struct scg_set set = { 0 };
	uint32_t kill = SCMP_ACT_KILL_PROCESS;
	unsigned prog_len = 0;
	json_t *denied, *root;
	bool no_securebits;

	isolation = network_of(r, start, planned, &net_p, net, sizeof(net));
	if (sc_kill_action(&kill, err) < 0)
		return NULL;
	no_securebits = caps_securebits_probe();
	if (sc_denied(&r->manifest->seccomp, &set, err) < 0)
		return NULL;
	denied = denied_json(&set);
	scg_set_free(&set);
	if (!denied) {
		err_set(err, ENOMEM, "verify: out of memory");
		return NULL;
	}
	/* the program a start loads: the one given, or built as a start builds
	 * it (turn.c, step_filter) */
	if (!prog && !refusal &&
	    sc_build(&r->manifest->seccomp, turn_guard(r->manifest), &built, &build_err) == 0)
		prog = &built;
	if (prog) {
		sc_program_digest(prog, digest);
		prog_len = prog->prog.len;
	}
	sc_program_free(&built);
	root = json_pack("{s:{s:s, s:s, s:s, s:s, s:o, s:s*, s:o*}, s:o*, s:s, s:s, s:s, s:o*, s:o*, s:o*, s:s*}",
			 "seccomp", "architecture", sc_arch_native()->name, "killed_architectures",
			 sc_arch_native()->killed, "other_architectures",
			 kill == SCMP_ACT_KILL_PROCESS ?
				 "killed" :
				 "the calling thread killed, not the process (the platform refuses SECCOMP_RET_KILL_PROCESS)",
			 "bad_arch_action",
			 kill == SCMP_ACT_KILL_PROCESS ? "SECCOMP_RET_KILL_PROCESS" :
							 "SECCOMP_RET_KILL_THREAD",
			 "denied", denied, "program_blake2b_256", digest[0] ? digest : NULL, "program_length",
			 prog_len ? json_integer(prog_len) : NULL, "landlock", landlock_json(r->manifest),
			 "network", net, "workdir",
			 refusal      ? "not checked: the start is refused" :
			 workdir_note ? workdir_note :
					"writable by the commands",
			 "securebits",
			 !refusal && start->mode == CAPS_NONROOT ?
				 "not locked: non-root mode (needs CAP_SETPCAP; see start.not_applied)" :
			 no_securebits ?
				 "not available on this platform (gVisor): commands run without them" :
				 "locked (NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off, each LOCKED)",
			 "platform", platform_json(r->manifest, kill, no_securebits), "start",
			 start_json(start, refusal), "signal_guard",
			 guard_json(refusal ? NULL : start, r->manifest), "changes",
			 refusal ? NULL : changes_reader());
	/* which isolation holds the network, and what seccomp-notify relies on
	 * (each tried by net_plan's probe: notify_probe) */
	if (root && isolation &&
	    (json_object_set_new(root, "network_isolation", json_string(isolation)) < 0 ||
	     (net_p.mode == NET_NOTIFY &&
	      json_object_set_new(root, "network_isolation_relies_on",
				  json_pack("[s,s,s,s]",
					    "seccomp user notification (SECCOMP_FILTER_FLAG_NEW_LISTENER)",
					    "pidfd_open", "pidfd_getfd", "process_vm_readv")) < 0))) {
		json_decref(root);
		root = NULL;
	}
	if (!root)
		err_set(err, ENOMEM, "verify: out of memory");
	return root;
}

/* "credentials": for each rule with a credential, its name, where it goes,
 * how it is presented, its file and whether that is given (never the
 * value); NULL when the manifest names none. */
static json_t *creds_json(const struct mf_network *n, const char *dir)
{
	json_t *list = NULL;

	for (size_t i = 0; i < n->n_allow; i++) {
		const struct na_cred *c = n->allow[i].cred;
		char to[NA_HOST_MAX + 8], how[NA_CRED_USER_MAX + 64], file[4096];

		if (!c)
			continue;
		if (!list && !(list = json_array()))
			return NULL;
		snprintf(to, sizeof(to), "%s:%u", n->allow[i].host, n->allow[i].ports[0]);
		if (c->present == NA_BEARER)
			snprintf(how, sizeof(how), "Authorization: Bearer");
		else if (c->present == NA_BASIC)
			snprintf(how, sizeof(how), "Authorization: Basic, user %s", c->user);
		else
			snprintf(how, sizeof(how), "%s:", c->field);
		snprintf(file, sizeof(file), "%s/%s", dir, c->name);
		if (json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "name", c->name,
							  "to", to, "presented", how, "file", file, "ca",
							  c->ca ? c->ca : CREDS_DEFAULT_CA, "value",
							  creds_given(dir, c->name) ? "given" :
										      "not given")) != 0) {
			json_decref(list);
			return NULL;
		}
	}
	return list;
}

/* verify_print's failures without a message of their own: out of memory. */
static int verify_nomem(struct tn_error *err)
{
	if (err && err->code == 0)
		err_set(err, ENOMEM, "verify: out of memory");
	return -ENOMEM;
}

static void verify_envf_freep(char ***envp)
{
	envf_free(*envp);
}

int verify_print(const struct load_result *r, const struct caps_start *start, const char *refusal,
		 const char *workdir_note, const char *creds_dir, struct tn_error *err)
{
	char kid[17];
	_cleanup_free_ char *mf_text = NULL, *out = NULL;
	__attribute__((cleanup(verify_envf_freep))) char **envp = NULL;
	struct net_plan net_p = { 0 };
	struct tn_error net_err = { 0 };
	_cleanup_json_decref_ json_t *root = NULL, *mf = NULL, *names = NULL, *prot = NULL;
	bool planned;

	sig_key_id_hex(r->sig.key_id, kid);
	mf_text = mf_to_json(r->manifest);
	if (!mf_text || !(mf = json_loads(mf_text, 0, NULL)))
		return verify_nomem(err);
	names = json_array();
	if (!names)
		return verify_nomem(err);
	if (envf_build(&r->manifest->env, r->manifest->home, r->caller_env, &envp, err) < 0)
		return verify_nomem(err);
	/* with the proxy, its variables replace any of the manifest's or the
	 * caller's (their port is chosen at start); the plan is handed on to
	 * verify_protections */
	planned = net_plan(&r->manifest->network, start->mode == CAPS_NONROOT, &net_p, &net_err) == 0;
	if (planned && net_p.proxy) {
		net_proxy_env(&net_p, 0, &r->manifest->network);
		if (envf_override(&envp, net_p.env, err) < 0)
			return verify_nomem(err);
	}
	for (size_t i = 0; envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');

		if (json_array_append_new(names, json_stringn(envp[i], (size_t)(eq - envp[i]))) != 0)
			return verify_nomem(err);
	}
	prot = verify_protections(r, start, NULL, planned ? &net_p : NULL, refusal, workdir_note, err);
	if (!prot)
		return err->code ? -err->code : verify_nomem(err);
	root = json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:O, s:O}", "turninit", TURNINIT_VERSION,
			 "commit", TURNINIT_COMMIT, "source", r->source, "trust", r->trust, "signature",
			 "algorithm", r->sig.alg, "key_id", kid, "trusted_comment", r->sig.trusted_comment,
			 "manifest", mf, "environment", names);
	if (root && r->manifest->network.n_allow) {
		json_t *creds = creds_json(&r->manifest->network, creds_dir ? creds_dir : CREDS_DEFAULT_DIR);

		if (creds && json_object_set_new(root, "credentials", creds) != 0)
			return verify_nomem(err);
	}
	/* the protections after the policy, in their own order (one source
	 * with turn_start's, docs/audit.md) */
	if (!root || json_object_update(root, prot) != 0)
		return verify_nomem(err);
	out = json_dumps(root, JSON_PRESERVE_ORDER | JSON_INDENT(2));
	if (!out)
		return verify_nomem(err);
	if (printf("%s\n", out) < 0 || fflush(stdout) != 0)
		return err_set(err, EIO, "verify: writing stdout: %s", strerror(errno));
	return 0;
}
