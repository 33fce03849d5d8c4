/* target_calls.c - see target_calls.h. Sources: the kernel's permission
 * check of each call (kernel/sys.c, kernel/sched/syscalls.c, block/ioprio.c,
 * mm/, kernel/kcmp.c, kernel/pid.c, kernel/events/core.c, kernel/futex/),
 * security/landlock/task.c (the ptrace and signal hooks). */
#include "policy/target_calls.h"

#include <string.h>

#include "policy/cleanup.h"

/* clang-format 14 reads a macro body that starts with '{' as a block: kept as written */
/* clang-format off */
#define G(name, target, write, user, why) { name, TC_GUARDED, target, write, user, why }
#define C(name, cls, why) { name, cls, -1, -1, -1, why }
/* clang-format on */

const struct tc_call tc_calls[] = {
	C("capget", TC_READ, "reads another process's capability sets"),
	C("capset", TC_SELF, "the kernel refuses any pid but the caller's"),
	C("get_robust_list", TC_PTRACE, "ptrace_may_access (PTRACE_MODE_READ)"),
	C("getpgid", TC_READ, "reads a process group"),
	C("getpriority", TC_READ, "reads a nice value"),
	C("getsid", TC_READ, "reads a session"),
	C("ioprio_get", TC_READ, "reads an I/O priority"),
	G("ioprio_set", 1, -1, 3,
	  "an I/O priority of another process, a group or a whole uid (IOPRIO_WHO_USER 3): security_task_setioprio, which Landlock does not hook"),
	C("kcmp", TC_PTRACE, "ptrace_may_access (PTRACE_MODE_READ) of both"),
	C("kill", TC_SIGNAL, "sends a signal to the target"),
	C("migrate_pages", TC_PTRACE, "ptrace_may_access (PTRACE_MODE_READ)"),
	C("move_pages", TC_PTRACE, "ptrace_may_access (PTRACE_MODE_READ)"),
	C("perf_event_open", TC_PTRACE, "ptrace_may_access (PTRACE_MODE_READ) of the target task"),
	C("pidfd_getfd", TC_PTRACE, "ptrace_may_access (PTRACE_MODE_ATTACH)"),
	C("pidfd_open", TC_READ, "only a handle: what is done with it is checked there"),
	C("pidfd_send_signal", TC_SIGNAL, "a signal (refused whole by the guard: a pidfd may name turninit)"),
	G("prlimit64", 0, 2, -1,
	  "another process's resource limits (RLIMIT_CPU kills it, NOFILE and NPROC stop its forks and opens): only a uid match and security_task_prlimit, which Landlock does not hook"),
	C("process_madvise", TC_PTRACE, "mm_access: ptrace_may_access (PTRACE_MODE_READ)"),
	C("process_mrelease", TC_READ, "only a process that is already dying (SIGKILL pending)"),
	C("process_vm_readv", TC_PTRACE, "mm_access: ptrace_may_access (PTRACE_MODE_ATTACH)"),
	C("process_vm_writev", TC_PTRACE, "mm_access: ptrace_may_access (PTRACE_MODE_ATTACH)"),
	C("ptrace", TC_PTRACE, "ptrace_may_access, and Landlock's ptrace hooks"),
	C("rt_sigqueueinfo", TC_SIGNAL, "a signal with a forged sender (refused whole by the guard)"),
	C("rt_tgsigqueueinfo", TC_SIGNAL, "a signal with a forged sender (refused whole by the guard)"),
	C("sched_getaffinity", TC_READ, "reads a CPU mask"),
	C("sched_getattr", TC_READ, "reads a scheduling policy"),
	C("sched_getparam", TC_READ, "reads a priority"),
	C("sched_getscheduler", TC_READ, "reads a policy"),
	C("sched_rr_get_interval", TC_READ, "reads a time slice"),
	G("sched_setaffinity", 0, -1, -1,
	  "another process's CPUs: check_same_owner and security_task_setscheduler, which Landlock does not hook"),
	G("sched_setattr", 0, -1, -1, "another process's policy (SCHED_IDLE): as sched_setscheduler"),
	G("sched_setparam", 0, -1, -1, "another process's priority: as sched_setscheduler"),
	G("sched_setscheduler", 0, -1, -1,
	  "another process's policy (SCHED_IDLE starves turninit's loop): check_same_owner and security_task_setscheduler, which Landlock does not hook"),
	C("setpgid", TC_SELF, "the caller or a child of its own session"),
	G("setpriority", 1, -1, 2,
	  "a nice value of another process, a group or a whole uid (PRIO_USER 2): security_task_setnice, which Landlock does not hook"),
	C("tgkill", TC_SIGNAL, "sends a signal to the target"),
	C("tkill", TC_SIGNAL, "sends a signal to the target"),
	C("wait4", TC_SELF, "the caller's children"),
	C("waitid", TC_SELF, "the caller's children"),
};
const size_t tc_n_calls = N_ELEMENTS(tc_calls);

const struct tc_call *tc_find(const char *name)
{
	for (size_t i = 0; i < tc_n_calls; i++)
		if (strcmp(tc_calls[i].name, name) == 0)
			return &tc_calls[i];
	return NULL;
}
