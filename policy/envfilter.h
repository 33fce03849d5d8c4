/* envfilter.h - the environment a command sees (docs/manifest.md "The environment").
 *
 * Owns the never-admitted name table, allowlist patterns and the construction of
 * the exact envp of a command: env.set, plus caller NAME=value pairs whose NAME
 * matches env.allow, plus HOME. Nothing else. Pure.
 */
#ifndef TURNINIT_ENVFILTER_H
#define TURNINIT_ENVFILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/error.h"

struct mf_env; /* policy/manifest.h: the manifest's "env" section */

/* envf_never_admitted - true for names no manifest may admit: BASH_ENV, ENV,
 * BASH_FUNC_*, SHELLOPTS, BASHOPTS, PS4, PROMPT_COMMAND, LD_*, TURNINIT_*,
 * GCONV_PATH, GLIBC_TUNABLES. The table is envf_never_table (exact names and
 * prefixes ending in '*'), NULL-terminated. */
bool envf_never_admitted(const char *name);
extern const char *const envf_never_table[];

/* envf_valid_name - a portable environment name: [A-Za-z_][A-Za-z0-9_]*,
 * at most 255 bytes. */
bool envf_valid_name(const char *name);

/* envf_check_pattern - validate one env.allow entry: an exact valid name, or a
 * valid name prefix followed by a single trailing '*'. Refused: empty, '*' not at
 * the end, "*" alone, a never-admitted exact name, a pattern whose every match
 * is never admitted (e.g. "LD_*", "BASH_FUNC_*"), and HOME (always set from
 * `home`). Errors: -EINVAL with the reason in err. */
int envf_check_pattern(const char *pattern, struct tn_error *err);

/* envf_check_set_name - validate one env.set name: valid, not never-admitted,
 * not HOME. Errors: -EINVAL. */
int envf_check_set_name(const char *name, struct tn_error *err);

/* envf_check_path - validate a PATH value: ':'-separated entries, each absolute
 * (starts with '/'); an empty entry (leading, trailing or doubled ':') or a
 * relative one is refused, because bash would search the working directory.
 * Errors: -EINVAL naming the entry. */
int envf_check_path(const char *value, struct tn_error *err);

/* envf_pattern_match - true when name matches pattern (exact, or prefix + '*'),
 * and name is not never-admitted: a pattern never matches such a name. */
bool envf_pattern_match(const char *pattern, const char *name);

/* envf_admits - true when the caller entry "NAME=value" is one envf_build takes
 * from the caller: NAME valid, admitted by env.allow, never-admitted excepted,
 * neither HOME nor a name of env.set. An entry without '=' is not. (Which of
 * two entries of one name envf_build keeps is its own rule: the first.) */
bool envf_admits(const struct mf_env *env, const char *entry);

/* envf_build - build the exact envp of a command.
 * env: the manifest's "env" section (env.set, env.allow); home: its "home",
 * given as HOME.
 * caller: NULL-terminated array of "NAME=value" strings (PID 1's environ copy, or
 * a serve request's env); entries without '=' are skipped; for a name given twice
 * the first wins. Order of the result: env.set in manifest order, then admitted
 * caller entries in caller order, then HOME=<home>. Values are copied as bytes,
 * never interpolated.
 * ret_envp: a NULL-terminated malloc'd array of malloc'd strings; free with
 * envf_free(). Errors: -ENOMEM. */
int envf_build(const struct mf_env *env, const char *home, char *const *caller, char ***ret_envp,
	       struct tn_error *err);

void envf_free(char **envp);

/* envf_override - set each "NAME=value" of pairs (NULL-terminated) in *envp
 * (an envf_build result): an entry of that name already there is removed, and
 * the pair appended, copied. For the values turninit fixes itself (the proxy
 * variables), which neither the manifest nor a caller may set. On an error
 * *envp is unchanged. Errors: -ENOMEM. */
int envf_override(char ***envp, char *const *pairs, struct tn_error *err);

#endif
