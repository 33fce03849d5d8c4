/* filter.h - the seccomp filter of every command: built once with libseccomp
 * from the rules policy/seccomp_groups.c expands the manifest's seccomp.deny
 * and seccomp.allow into (this file only translates them to libseccomp),
 * exported as a BPF program, loaded last in each command process.
 * Sources: seccomp(2), seccomp_rule_add(3), seccomp_export_bpf(3),
 * Documentation/userspace-api/seccomp_filter.rst. */
#ifndef TURNINIT_FILTER_H
#define TURNINIT_FILTER_H

#include <linux/filter.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/error.h"
#include "policy/manifest.h"
#include "policy/seccomp_groups.h"

/* An architecture turninit builds a filter for. The program admits its
 * syscalls only: a syscall of any other architecture the CPU can run (on
 * x86_64: i386 through int 0x80, and x32; on aarch64: 32-bit ARM, where the
 * kernel has compat) is killed by the bad-arch action (sc_kill_action). */
struct sc_arch {
	const char *name;   /* "x86_64", "aarch64": uname -m's */
	uint32_t token;     /* SCMP_ARCH_X86_64, SCMP_ARCH_AARCH64 */
	const char *killed; /* the other architectures, for verify and the log */
};

/* sc_arches - the architectures turninit builds for, sc_n_arches of them;
 * sc_arch_native - this build's (one of them: another architecture is a
 * build error that names these two). */
extern const struct sc_arch sc_arches[];
extern const size_t sc_n_arches;
const struct sc_arch *sc_arch_native(void);

struct sc_program {
	struct sock_fprog prog; /* prog.filter is malloc'd */
	uint32_t kill_action;   /* of other architectures: SCMP_ACT_KILL_PROCESS or
				 * SCMP_ACT_KILL_THREAD (sc_kill_action) */
};

/* sc_kill_action - the filter's action for syscalls of other architectures
 * (i386 through int 0x80, x32): SCMP_ACT_KILL_PROCESS, the whole process.
 * SCMP_ACT_KILL_THREAD (the calling thread only) only where libseccomp
 * refuses KILL_PROCESS (seccomp_attr_set(3): -EINVAL) because the platform
 * answered its probe, seccomp(SECCOMP_GET_ACTION_AVAIL) of
 * SECCOMP_RET_KILL_PROCESS, with EINVAL (pf_kill_thread_fallback): gVisor,
 * which runs KILL_PROCESS as KILL_THREAD anyway (its kernel/seccomp.go),
 * and Linux before 4.14. ret is written only on success.
 * Errors: when libseccomp refuses, -ENOSYS where the platform has no
 * seccomp(2) at all (qemu-user), the platform's answer if it is another
 * -errno (-EOPNOTSUPP, -EPERM, ...), or -EINVAL if the platform
 * offers the action; other -errno of seccomp_attr_set(3); -ENOMEM. */
int sc_kill_action(uint32_t *ret, struct tn_error *err);

/* sc_denied - the rules of the manifest's seccomp.deny less seccomp.allow, expanded
 * through the group table (scg_resolve). ret is written only on success;
 * free with scg_set_free(). Errors: those of scg_resolve. */
int sc_denied(const struct mf_seccomp *sc, struct scg_set *ret, struct tn_error *err);

/* sc_build - build the filter for the manifest's seccomp section and export it,
 * for this build's architecture (sc_build_arch with sc_arch_native()). Other
 * architectures (arch->killed) are killed (sc_kill_action as the bad-arch
 * action, recorded in ret->kill_action). guard: 0, or turninit's pid, when
 * the commands share its uid and the kernel would let them signal it: kill(2)
 * of guard, of -1 and of guard's process group, tkill(2) and tgkill(2) of
 * guard (each compared on the low 32 bits, as the kernel reads a pid_t) get
 * EPERM; so do every rt_sigqueueinfo(2) and rt_tgsigqueueinfo(2) (their
 * si_pid is the sender's to forge), pidfd_send_signal(2) (a pidfd may name
 * guard) and fcntl(2) F_SETSIG (a file's owner signal would otherwise be any
 * signal to any owner; without it, SIGIO). ret is written only on success; free with
 * sc_program_free().
 * Errors: those of sc_kill_action; -errno from libseccomp (-EINVAL unknown
 * syscall, -ENOMEM, ...). */
int sc_build(const struct mf_seccomp *sc, pid_t guard, struct sc_program *ret, struct tn_error *err);

/* sc_build_arch - sc_build for arch, which need not be this machine's: the
 * unit tests build aarch64's program on x86_64 and run it in a BPF
 * interpreter (tests/unit/test_filter_arch.c). Rules are given to libseccomp
 * by name, so each expands to arch's syscall number. A name arch has no
 * syscall for (scg_absent: "open" on aarch64) is left out of its program:
 * silently when nothing there does what it did (ioperm), else only when its
 * form there ("openat") is in the same set with a rule at least as strong;
 * otherwise refused (-EINVAL), since the deny would not hold there.
 * Errors: those of sc_build. */
int sc_build_arch(const struct sc_arch *arch, const struct mf_seccomp *sc, pid_t guard,
		  struct sc_program *ret, struct tn_error *err);

/* sc_load - install p in the calling process (needs no_new_privs set first).
 * Returns 0 or -errno of prctl(PR_SET_SECCOMP). Async-signal-safe. */
int sc_load(const struct sc_program *p);

void sc_program_free(struct sc_program *p);

/* sc_build_notify - the second filter of every command where the network is
 * held by seccomp user notification (net.h, NET_NOTIFY; docs/design.md,
 * "Isolation by seccomp user notification"), for this build's architecture,
 * assembled by hand (about 40 instructions): connect(2) goes to turninit
 * (SECCOMP_RET_USER_NOTIF, notify.h); socket(2) makes only AF_UNIX stream
 * and seqpacket sockets, AF_INET and AF_INET6 TCP (type SOCK_STREAM,
 * protocol 0 or IPPROTO_TCP) and AF_NETLINK NETLINK_ROUTE, socketpair(2)
 * only the AF_UNIX ones; sendto(2), sendmsg(2) and sendmmsg(2) with
 * MSG_FASTOPEN, and io_uring_setup(2), io_uring_enter(2) and
 * io_uring_register(2), and kill(2) and tkill(2) of supervisor (the tid of
 * turninit's thread that answers the notifications: the main filter's
 * signal guard names turninit's pid, not this tid, and kill(2) of a tid
 * signals its process), are refused; each refusal is
 * EACCES. Every other
 * call, another architecture's and x32's included, is allowed here: the
 * main filter (sc_build) judges them, and the kernel takes the stronger of
 * the two answers. ret->kill_action is unused. Errors: -ENOMEM; -EINVAL
 * (a jump out of reach: a bug). */
int sc_build_notify(pid_t supervisor, struct sc_program *ret, struct tn_error *err);

/* sc_load_listener - install p (from sc_build_notify) in the calling
 * process with SECCOMP_FILTER_FLAG_NEW_LISTENER (no_new_privs set first):
 * the fd of its notifications (close-on-exec), or -errno of seccomp(2)
 * (-EBUSY: the process has a listener already; -EINVAL: no user
 * notification, Linux before 5.0 or gVisor). Async-signal-safe. */
int sc_load_listener(const struct sc_program *p);

/* sc_program_digest - the BLAKE2b-256 of p's BPF program as loaded (its
 * prog.len struct sock_filter entries, in this machine's byte order), as 64
 * hex digits and a NUL in hex: turn_start and verify name the filter by it. */
#define SC_DIGEST_HEX 65
void sc_program_digest(const struct sc_program *p, char hex[static SC_DIGEST_HEX]);

#endif
