/* filter.h - the seccomp filter of every command: built once with libseccomp
 * from the rules policy/seccomp_groups.c expands the manifest's seccomp.deny
 * and seccomp.allow into (this file only translates them to libseccomp),
 * exported as a BPF program, loaded last in each command process.
 * Sources: seccomp(2), seccomp_rule_add(3), seccomp_export_bpf(3),
 * Documentation/userspace-api/seccomp_filter.rst. */
#ifndef TURNINIT_FILTER_H
#define TURNINIT_FILTER_H

#include <linux/filter.h>
#include <sys/types.h>

#include "error.h"
#include "manifest.h"
#include "seccomp_groups.h"

struct sc_program {
	struct sock_fprog prog;   /* prog.filter is malloc'd */
};

/* sc_denied - the rules of the manifest's seccomp.deny less seccomp.allow, expanded
 * through the group table (scg_resolve). ret is written only on success;
 * free with scg_set_free(). Errors: those of scg_resolve. */
int sc_denied(const struct mf_seccomp *sc, struct scg_set *ret, struct tn_error *err);

/* sc_build - build the filter for the manifest's seccomp section and export it. Non-native architectures
 * (i386 via int 0x80, x32) are killed (SCMP_ACT_KILL_PROCESS as the bad-arch
 * action). guard: 0, or turninit's pid, which the commands may then not
 * signal (non-root mode, where they share its uid): kill(2) of guard, of -1
 * and of guard's process group, tkill(2), tgkill(2), rt_sigqueueinfo(2) and
 * rt_tgsigqueueinfo(2) of guard (each compared on the low 32 bits, as the
 * kernel reads a pid_t) get EPERM, and so does every pidfd_send_signal(2),
 * whose pidfd may name it. ret is written only on success; free with
 * sc_program_free().
 * Errors: -errno from libseccomp (-EINVAL unknown syscall, -ENOMEM, ...). */
int sc_build(const struct mf_seccomp *sc, pid_t guard, struct sc_program *ret,
	     struct tn_error *err);

/* sc_load - install p in the calling process (needs no_new_privs set first).
 * Returns 0 or -errno of prctl(PR_SET_SECCOMP). Async-signal-safe. */
int sc_load(const struct sc_program *p);

void sc_program_free(struct sc_program *p);

#endif
