/* verify.h - `turninit verify`: the effective policy as JSON (docs/turninit.1.md,
 * VERIFY). Runs nothing. */
#ifndef TURNINIT_VERIFY_H
#define TURNINIT_VERIFY_H

#include <jansson.h>

#include "sandbox/caps.h"
#include "sandbox/filter.h"
#include "sandbox/net.h"
#include "trust/load.h"

/* verify_print - write the effective policy of r as one JSON object and a
 * newline on stdout: version, manifest source, trust root, signature (algorithm,
 * key id, trusted comment), the manifest with defaults filled in, the names of
 * the environment a one-shot command would get from this environment (names
 * only: values may be secrets), the seccomp rules and bad-arch action, the
 * Landlock ABI in use with what a run does about it, securebits, the
 * platform's weakened layers (docs/security.md, "gVisor (runsc)": forks one
 * child, plat_peercred_check, and reaps it); and "start": how a run started as this
 * process is would go (start: what caps_start found, NULL when it refused;
 * refusal: the start's refusal, or NULL): {"mode": "privileged" | "non-root" |
 * "refused", "uid", "gid", "refusal", "not_applied": [what non-root mode
 * cannot do]}, and "signal_guard": whether the commands would share
 * turninit's uid and what then keeps them from signalling it; "workdir":
 * "writable" or the warning a start logs (workdir_note, turn_workdir_note).
 * After "environment", when the manifest names a credential, "credentials":
 * [{"name", "to": "HOST:PORT", "presented", "file": "DIR/NAME", "ca",
 * "value": "given" | "not given"}], DIR being creds_dir (NULL:
 * CREDS_DEFAULT_DIR); never a value.
 * refusal is that of caps_start, of turn_probe or of creds_load: the
 * caller exits 125 after printing (main.c, verify).
 * Errors: -ENOMEM, -EIO (stdout), with err set. */
int verify_print(const struct load_result *r, const struct caps_start *start, const char *refusal,
		 const char *workdir_note, const char *creds_dir, struct tn_error *err);

/* verify_protections - the protections in force, the one record verify
 * prints and turn_start logs (docs/audit.md): {"seccomp": {architecture
 * (this build's, sc_arch_native), killed_architectures, other_architectures,
 * bad_arch_action, denied, program_blake2b_256 and program_length (of prog's
 * BPF program in instructions, or of one built by a start's rule when prog
 * is NULL; absent when refused)}, "landlock", "network" (of planned: the
 * network as a start prepared it, its port left out, or as verify_print
 * planned it; NULL: planned here by net_plan, whose seccomp-notify probe
 * forks a child), "workdir", "securebits", "platform",
 * "start", "signal_guard", "changes" (with --audit-changes only: what the
 * change record's walk reads with, and, without CAP_DAC_READ_SEARCH or
 * CAP_DAC_OVERRIDE, that a command can make the record incomplete)}, each
 * as verify_print describes it. Returns a new
 * object, or NULL with err set (-ENOMEM; sc_kill_action's and sc_denied's
 * errors). */
json_t *verify_protections(const struct load_result *r, const struct caps_start *start,
			   const struct sc_program *prog, const struct net_plan *planned, const char *refusal,
			   const char *workdir_note, struct tn_error *err);

#endif
