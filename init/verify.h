/* verify.h - `turninit verify`: the effective policy as JSON (docs/turninit.1.md,
 * VERIFY). Runs nothing. */
#ifndef TURNINIT_VERIFY_H
#define TURNINIT_VERIFY_H

#include "load.h"

/* verify_print - write the effective policy of r as one JSON object and a
 * newline on stdout: version, manifest source, trust root, signature (algorithm,
 * key id, trusted comment), the manifest with defaults filled in, the names of
 * the environment a one-shot command would get from this environment (names
 * only: values may be secrets), the seccomp rules and bad-arch action, the
 * Landlock ABI in use with what a run does about it, securebits, and the
 * platform's weakened layers (docs/security.md, "gVisor"). Forks one child
 * (plat_peercred_check) and reaps it.
 * Errors: -ENOMEM, -EIO (stdout), with err set. */
int verify_print(const struct load_result *r, struct tn_error *err);

#endif
