/* probe.c - the escape probe: what a command inside the sandbox may call.
 *
 * A static program baked into the test image of tests/integration/sandbox.sh
 * (issue 3, Deliver 6). In the try-syscall style of bubblewrap's tests, every
 * probe makes one syscall with an argument the kernel rejects before anything
 * happens (a bad pointer, fd -1, an unknown flag), so the errno says who
 * answered: EFAULT, EBADF, EINVAL, ENOENT, ... come from the kernel (verdict
 * "allowed": the call reached it), EPERM, EACCES and ENOSYS from a seccomp
 * filter ("blocked"), and a death by SIGSYS from a KILL action ("killed").
 * Controls are calls a real workload needs; they must stay allowed.
 *
 * Some syscalls check a capability before their arguments (fsopen, fspick,
 * fsmount, move_mount, pivot_root: CAP_SYS_ADMIN over the mount namespace), so
 * an unprivileged caller gets EPERM from the kernel whether or not a filter
 * refused. Those probes ("userns" in the table) first try
 * unshare(CLONE_NEWUSER | CLONE_NEWNS), the way an attacker would, ignoring a
 * failure: where namespaces are open the kernel's own check passes and the
 * argument error shows; under turninit that unshare is itself refused.
 *
 * usage: probe            every probe, each in a forked child: NAME VERDICT ERRNO
 *        probe list       the table: NAME EXPECTED ERRNO|- FLAGS, nothing is called
 *        probe NAME...    those probes in this process, no fork: a KILL action
 *                         ends the probe itself (exit status 128+SIGSYS)
 *        probe status     the process facts sandbox.sh asserts, KEY VALUE...
 *
 * VERDICT is allowed, blocked or killed; ERRNO is the errno name, "success"
 * when the call returned >= 0, or the signal name when killed. Built static
 * (musl-gcc -static) by tests/integration/sandbox.sh into build/probe/probe.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef PR_GET_SECUREBITS
#define PR_GET_SECUREBITS 27
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#define PR_X32_SYSCALL_BIT 0x40000000L
#define PR_I386_GETPID 20 /* arch/x86/entry/syscalls/syscall_32.tbl */
#define PR_READ_IMPLIES_EXEC 0x0400000
#define PR_ADDR_NO_RANDOMIZE 0x0040000
#define PR_UFFD_USER_MODE_ONLY 1
#define PR_CLONE_NEWTIME 0x00000080
/* A user address that is never mapped (below vm.mmap_min_addr): EFAULT. */
#define PR_BAD_PTR ((void *)8)
/* A pid no process has (above PID_MAX_LIMIT): ESRCH. */
#define PR_NO_PID 0x7ffffff0

enum pr_verdict { PR_ALLOWED, PR_BLOCKED, PR_KILLED };
static const char *const pr_verdict_name[] = { "allowed", "blocked", "killed" };

#define PR_USERNS 1u /* try unshare(CLONE_NEWUSER | CLONE_NEWNS) first */

/* How the filter sees a probe's call, for the BPF interpreter of
 * tests/unit/test_filter_arch.c, which includes this file: the syscall's name
 * (x86_64's: on an architecture without it, policy/seccomp_arch.c names the
 * call libc makes instead) and its first two arguments, the only ones a rule
 * of the groups compares; a pointer is 0 there. abi: the entry it goes
 * through. */
enum pr_abi {
	PR_NATIVE, /* the architecture's own */
	PR_COMPAT, /* the 32-bit one: i386 through int 0x80 on x86_64, 32-bit ARM on aarch64 */
	PR_X32,    /* x86_64's x32 (the 0x40000000 bit); no other architecture has one */
};
struct pr_sim {
	const char *syscall;
	enum pr_abi abi;
	uint64_t a0, a1;
};

struct pr_probe {
	const char *name;
	enum pr_verdict expect; /* under turninit's default manifest */
	int expect_code;        /* errno (blocked), signal (killed), 0: any (allowed) */
	unsigned flags;
	const char *call; /* how it is called, and what "allowed" returns */
	long (*fn)(void); /* >= 0, or -errno */
	struct pr_sim sim;
};

/* syscall(2) returns -1 and sets errno; the probes speak -errno. */
static long pr_ret(long r)
{
	return r < 0 ? -errno : r;
}

#define SC(...) pr_ret(syscall(__VA_ARGS__))

/* --- attacks ------------------------------------------------------------------ */

static long pr_add_key(void)
{
	return SC(SYS_add_key, "user", "probe", NULL, (size_t)0x7fffffff, 0);
}

static long pr_bpf(void)
{
	return SC(SYS_bpf, 0, PR_BAD_PTR, 8u);
}

static long pr_chroot(void)
{
	return SC(SYS_chroot, PR_BAD_PTR);
}

static long pr_clone_newns(void)
{
	/* CLONE_NEWNS | CLONE_FS is refused by copy_process: no process is made. */
	return SC(SYS_clone, (unsigned long)(CLONE_NEWNS | CLONE_FS | SIGCHLD), 0, 0, 0, 0);
}

static long pr_clone_newuser(void)
{
	/* CLONE_NEWUSER | CLONE_FS is refused by copy_process: no process is made. */
	return SC(SYS_clone, (unsigned long)(CLONE_NEWUSER | CLONE_FS | SIGCHLD), 0, 0, 0, 0);
}

static long pr_clone3(void)
{
	/* A size below CLONE_ARGS_SIZE_VER0: EINVAL. */
	return SC(SYS_clone3, NULL, (size_t)0);
}

static long pr_delete_module(void)
{
	return SC(SYS_delete_module, PR_BAD_PTR, 0);
}

static long pr_finit_module(void)
{
	return SC(SYS_finit_module, -1, "", 0x80000000u);
}

static long pr_fsconfig(void)
{
	return SC(SYS_fsconfig, -1, 0, NULL, NULL, 0);
}

static long pr_fsmount(void)
{
	return SC(SYS_fsmount, -1, 0x80000000u, 0);
}

static long pr_fsopen(void)
{
	return SC(SYS_fsopen, "tmpfs", 0x80000000u);
}

static long pr_fspick(void)
{
	return SC(SYS_fspick, -1, "", 0x80000000u);
}

static long pr_init_module(void)
{
	return SC(SYS_init_module, PR_BAD_PTR, (unsigned long)0, "");
}

static long pr_int80_getpid(void)
{
#if defined(__x86_64__)
	int ret;

	/* The i386 entry: getpid is 20 there. The 64-bit registers r8-r11 are not
	 * preserved by every kernel on this path. */
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(PR_I386_GETPID) : "r8", "r9", "r10", "r11", "memory");
	return ret;
#else
	return -ENOSYS; /* no int 0x80 here: sandbox.sh skips the row (kfeatures int80) */
#endif
}

static long pr_io_uring_enter(void)
{
	return SC(SYS_io_uring_enter, -1, 0u, 0u, 0u, NULL, (size_t)0);
}

static long pr_io_uring_register(void)
{
	return SC(SYS_io_uring_register, -1, 0u, NULL, 0u);
}

static long pr_io_uring_setup(void)
{
	return SC(SYS_io_uring_setup, 1u, NULL);
}

static long pr_ioctl_tiocli(void)
{
	return SC(SYS_ioctl, -1, (unsigned long)TIOCLINUX, NULL);
}

static long pr_ioctl_tiocsti(void)
{
	return SC(SYS_ioctl, -1, (unsigned long)TIOCSTI, NULL);
}

static long pr_ioctl_tiocsti_hi(void)
{
	/* The kernel reads the request as unsigned int: the high bits are noise a
	 * filter comparing all 64 bits would miss. */
	return SC(SYS_ioctl, -1, (unsigned long)TIOCSTI | (1ul << 32), NULL);
}

static long pr_kexec_file_load(void)
{
	return SC(SYS_kexec_file_load, -1, -1, (unsigned long)0, NULL, 0x100ul);
}

static long pr_kexec_load(void)
{
	/* 0x100 is no KEXEC_* flag: EINVAL even for a caller allowed to load. */
	return SC(SYS_kexec_load, 0ul, 0ul, NULL, 0x100ul);
}

static long pr_keyctl(void)
{
	return SC(SYS_keyctl, 0x7fff, 0, 0, 0, 0);
}

static long pr_mount(void)
{
	/* The type string is copied before any check: EFAULT. */
	return SC(SYS_mount, "none", "/", PR_BAD_PTR, 0ul, NULL);
}

static long pr_mount_setattr(void)
{
	return SC(SYS_mount_setattr, -1, "", 0x80000000u, NULL, (size_t)0);
}

static long pr_move_mount(void)
{
	return SC(SYS_move_mount, -1, "", -1, "", 0x80000000u);
}

static long pr_open_by_handle_at(void)
{
	return SC(SYS_open_by_handle_at, -1, PR_BAD_PTR, 0);
}

static long pr_open_tree(void)
{
	return SC(SYS_open_tree, -1, PR_BAD_PTR, 0u);
}

static long pr_perf_event_open(void)
{
	return SC(SYS_perf_event_open, NULL, 0, -1, -1, 0x80000000ul);
}

static long pr_personality_addr_no_rnd(void)
{
	return SC(SYS_personality, (unsigned long)PR_ADDR_NO_RANDOMIZE);
}

static long pr_personality_rie(void)
{
	return SC(SYS_personality, (unsigned long)PR_READ_IMPLIES_EXEC);
}

static long pr_personality_rie_hi(void)
{
	/* personality(2) takes an unsigned int: the high bits are dropped. */
	return SC(SYS_personality, (unsigned long)PR_READ_IMPLIES_EXEC | (1ul << 32));
}

static long pr_pidfd_getfd(void)
{
	return SC(SYS_pidfd_getfd, -1, 0, 1u);
}

static long pr_pivot_root(void)
{
	return SC(SYS_pivot_root, PR_BAD_PTR, PR_BAD_PTR);
}

static long pr_process_vm_readv(void)
{
	return SC(SYS_process_vm_readv, getppid(), NULL, 0ul, NULL, 0ul, 1ul);
}

static long pr_process_vm_writev(void)
{
	return SC(SYS_process_vm_writev, getppid(), NULL, 0ul, NULL, 0ul, 1ul);
}

static long pr_ptrace(void)
{
	return SC(SYS_ptrace, 2L /* PTRACE_PEEKDATA */, PR_NO_PID, NULL, NULL);
}

static long pr_request_key(void)
{
	return SC(SYS_request_key, PR_BAD_PTR, "probe", NULL, 0);
}

static long pr_setns(void)
{
	return SC(SYS_setns, -1, 0);
}

static long pr_socket_alg(void)
{
	/* Type 15 is above SOCK_MAX: EINVAL before any protocol module is asked for. */
	return SC(SYS_socket, AF_ALG, 15, 0);
}

static long pr_socket_vsock(void)
{
	return SC(SYS_socket, AF_VSOCK, 15, 0);
}

static long pr_socket_vsock_hi(void)
{
	/* The kernel reads the family as int: high bits a 64-bit compare would see. */
	return SC(SYS_socket, (unsigned long)AF_VSOCK | (1ul << 32), 15, 0);
}

static long pr_umount2(void)
{
	return SC(SYS_umount2, "/", 0x80000000);
}

/* Flag 0x1 is no CLONE_* flag unshare takes: EINVAL, nothing is unshared. */
static long pr_unshare(unsigned long flag)
{
	return SC(SYS_unshare, flag | 0x1);
}

static long pr_unshare_newcgroup(void)
{
	return pr_unshare(CLONE_NEWCGROUP);
}

static long pr_unshare_newipc(void)
{
	return pr_unshare(CLONE_NEWIPC);
}

static long pr_unshare_newnet(void)
{
	return pr_unshare(CLONE_NEWNET);
}

static long pr_unshare_newns(void)
{
	return pr_unshare(CLONE_NEWNS);
}

static long pr_unshare_newpid(void)
{
	return pr_unshare(CLONE_NEWPID);
}

static long pr_unshare_newtime(void)
{
	return pr_unshare(PR_CLONE_NEWTIME);
}

static long pr_unshare_newuser(void)
{
	return pr_unshare(CLONE_NEWUSER);
}

static long pr_unshare_newuts(void)
{
	return pr_unshare(CLONE_NEWUTS);
}

static long pr_userfaultfd(void)
{
	/* UFFD_USER_MODE_ONLY passes the kernel's privilege check; 0x2 is no flag. */
	return SC(SYS_userfaultfd, PR_UFFD_USER_MODE_ONLY | 0x2);
}

static long pr_x32_getpid(void)
{
#if defined(__x86_64__)
	return SC(PR_X32_SYSCALL_BIT | SYS_getpid);
#else
	return -ENOSYS;
#endif
}

/* --- controls ------------------------------------------------------------------- */

static long pr_wait_child(pid_t pid)
{
	int status;

	if (pid < 0)
		return pid;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

static long pr_ctl_clone_plain(void)
{
	long r = SC(SYS_clone, (unsigned long)SIGCHLD, 0, 0, 0, 0);

	if (r == 0)
		_exit(0);
	return r < 0 ? r : pr_wait_child((pid_t)r);
}

static long pr_ctl_fork(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	return pr_wait_child(pid < 0 ? -errno : pid);
}

static long pr_ctl_getppid(void)
{
	return SC(SYS_getppid);
}

static long pr_ctl_ioctl_tcgets(void)
{
	struct termios t;
	int p[2];
	long r;

	if (pipe(p) != 0)
		return -errno;
	r = SC(SYS_ioctl, p[0], (unsigned long)TCGETS, &t);
	close(p[0]);
	close(p[1]);
	return r;
}

static long pr_ctl_personality_linux(void)
{
	return SC(SYS_personality, 0ul /* PER_LINUX */);
}

static long pr_ctl_personality_query(void)
{
	return SC(SYS_personality, 0xfffffffful);
}

static long pr_ctl_socketpair_unix(void)
{
	int sv[2];
	long r = SC(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv);

	if (r == 0) {
		close(sv[0]);
		close(sv[1]);
	}
	return r;
}

static long pr_ctl_socket_unix(void)
{
	long r = SC(SYS_socket, AF_UNIX, SOCK_STREAM, 0);

	if (r >= 0)
		close((int)r);
	return r < 0 ? r : 0;
}

static long pr_ctl_unshare_none(void)
{
	return SC(SYS_unshare, 0);
}

/* Sorted by name (strcmp); main checks it. */
#define A PR_ALLOWED
#define B PR_BLOCKED
#define K PR_KILLED
/* clang-format 14 would put each entry of this table on a line of its own: kept as written */
/* clang-format off */
static const struct pr_probe pr_probes[] = {
	{ "add_key", B, EPERM, 0, "add_key(\"user\", \"probe\", NULL, 0x7fffffff): EINVAL", pr_add_key,
	  { "add_key", PR_NATIVE, 0, 0 } },
	{ "bpf", B, EPERM, 0, "bpf(0, bad pointer, 8): EFAULT", pr_bpf,
	  { "bpf", PR_NATIVE, 0, 8 } },
	{ "chroot", B, EPERM, 0, "chroot(bad pointer): EFAULT", pr_chroot,
	  { "chroot", PR_NATIVE, 8, 0 } },
	{ "clone3", B, ENOSYS, 0, "clone3(NULL, 0): EINVAL; a filter must say ENOSYS so libc falls back to clone", pr_clone3,
	  { "clone3", PR_NATIVE, 0, 0 } },
	{ "clone_newns", B, EPERM, 0, "raw clone(CLONE_NEWNS|CLONE_FS|SIGCHLD): EINVAL", pr_clone_newns,
	  { "clone", PR_NATIVE, CLONE_NEWNS | CLONE_FS | SIGCHLD, 0 } },
	{ "clone_newuser", B, EPERM, 0, "raw clone(CLONE_NEWUSER|CLONE_FS|SIGCHLD): EINVAL", pr_clone_newuser,
	  { "clone", PR_NATIVE, CLONE_NEWUSER | CLONE_FS | SIGCHLD, 0 } },
	{ "ctl_clone_plain", A, 0, 0, "control: raw clone(SIGCHLD), the child exits: success", pr_ctl_clone_plain,
	  { "clone", PR_NATIVE, SIGCHLD, 0 } },
	{ "ctl_fork", A, 0, 0, "control: fork() and wait: success", pr_ctl_fork,
	  { "fork", PR_NATIVE, SIGCHLD, 0 } },
	{ "ctl_getppid", A, 0, 0, "control: getppid(): success", pr_ctl_getppid,
	  { "getppid", PR_NATIVE, 0, 0 } },
	{ "ctl_ioctl_tcgets", A, 0, 0, "control: ioctl(pipe, TCGETS): ENOTTY", pr_ctl_ioctl_tcgets,
	  { "ioctl", PR_NATIVE, 3, TCGETS } },
	{ "ctl_personality_linux", A, 0, 0, "control: personality(PER_LINUX): success", pr_ctl_personality_linux,
	  { "personality", PR_NATIVE, 0, 0 } },
	{ "ctl_personality_query", A, 0, 0, "control: personality(0xffffffff): success", pr_ctl_personality_query,
	  { "personality", PR_NATIVE, 0xffffffffu, 0 } },
	{ "ctl_socket_unix", A, 0, 0, "control: socket(AF_UNIX, SOCK_STREAM): success", pr_ctl_socket_unix,
	  { "socket", PR_NATIVE, AF_UNIX, SOCK_STREAM } },
	{ "ctl_socketpair_unix", A, 0, 0, "control: socketpair(AF_UNIX, SOCK_STREAM): success", pr_ctl_socketpair_unix,
	  { "socketpair", PR_NATIVE, AF_UNIX, SOCK_STREAM } },
	{ "ctl_unshare_none", A, 0, 0, "control: unshare(0): success", pr_ctl_unshare_none,
	  { "unshare", PR_NATIVE, 0, 0 } },
	{ "delete_module", B, EPERM, 0, "delete_module(bad pointer, 0): EFAULT, or EPERM/ENOSYS from the kernel", pr_delete_module,
	  { "delete_module", PR_NATIVE, 8, 0 } },
	{ "finit_module", B, EPERM, 0, "finit_module(-1, \"\", unknown flag): EINVAL, or EPERM/ENOSYS from the kernel", pr_finit_module,
	  { "finit_module", PR_NATIVE, (uint64_t)-1, 0 } },
	{ "fsconfig", B, EPERM, 0, "fsconfig(-1, 0, NULL, NULL, 0): EINVAL", pr_fsconfig,
	  { "fsconfig", PR_NATIVE, (uint64_t)-1, 0 } },
	{ "fsmount", B, EPERM, PR_USERNS, "fsmount(-1, unknown flag, 0): EINVAL", pr_fsmount,
	  { "fsmount", PR_NATIVE, (uint64_t)-1, 0x80000000u } },
	{ "fsopen", B, EPERM, PR_USERNS, "fsopen(\"tmpfs\", unknown flag): EINVAL", pr_fsopen,
	  { "fsopen", PR_NATIVE, 0, 0x80000000u } },
	{ "fspick", B, EPERM, PR_USERNS, "fspick(-1, \"\", unknown flag): EINVAL", pr_fspick,
	  { "fspick", PR_NATIVE, (uint64_t)-1, 0 } },
	{ "init_module", B, EPERM, 0, "init_module(bad pointer, 0, \"\"): EFAULT, or EPERM/ENOSYS from the kernel", pr_init_module,
	  { "init_module", PR_NATIVE, 8, 0 } },
	{ "int80_getpid", K, SIGSYS, 0, "i386 getpid through int $0x80: success", pr_int80_getpid,
	  { "getpid", PR_COMPAT, 0, 0 } },
	{ "io_uring_enter", B, EPERM, 0, "io_uring_enter(-1, ...): EBADF", pr_io_uring_enter,
	  { "io_uring_enter", PR_NATIVE, (uint64_t)-1, 0 } },
	{ "io_uring_register", B, EPERM, 0, "io_uring_register(-1, 0, NULL, 0): EBADF", pr_io_uring_register,
	  { "io_uring_register", PR_NATIVE, (uint64_t)-1, 0 } },
	{ "io_uring_setup", B, EPERM, 0, "io_uring_setup(1, NULL): EFAULT", pr_io_uring_setup,
	  { "io_uring_setup", PR_NATIVE, 1, 0 } },
	{ "ioctl_tioclinux", B, EPERM, 0, "ioctl(-1, TIOCLINUX, NULL): EBADF", pr_ioctl_tiocli,
	  { "ioctl", PR_NATIVE, (uint64_t)-1, TIOCLINUX } },
	{ "ioctl_tiocsti", B, EPERM, 0, "ioctl(-1, TIOCSTI, NULL): EBADF", pr_ioctl_tiocsti,
	  { "ioctl", PR_NATIVE, (uint64_t)-1, TIOCSTI } },
	{ "ioctl_tiocsti_hi32", B, EPERM, 0, "raw ioctl(-1, TIOCSTI | 1<<32, NULL): EBADF", pr_ioctl_tiocsti_hi,
	  { "ioctl", PR_NATIVE, (uint64_t)-1, TIOCSTI | (1ull << 32) } },
	{ "kexec_file_load", B, EPERM, 0, "kexec_file_load(-1, -1, 0, NULL, unknown flag): EINVAL, or EPERM/ENOSYS from the kernel", pr_kexec_file_load,
	  { "kexec_file_load", PR_NATIVE, (uint64_t)-1, (uint64_t)-1 } },
	{ "kexec_load", B, EPERM, 0, "kexec_load(0, 0, NULL, unknown flag): EINVAL, or EPERM/ENOSYS from the kernel", pr_kexec_load,
	  { "kexec_load", PR_NATIVE, 0, 0 } },
	{ "keyctl", B, EPERM, 0, "keyctl(unknown operation): EOPNOTSUPP", pr_keyctl,
	  { "keyctl", PR_NATIVE, 0x7fff, 0 } },
	{ "mount", B, EPERM, 0, "mount(\"none\", \"/\", bad pointer, 0, NULL): EFAULT", pr_mount,
	  { "mount", PR_NATIVE, 0, 0 } },
	{ "mount_setattr", B, EPERM, 0, "mount_setattr(-1, \"\", unknown flag, NULL, 0): EINVAL", pr_mount_setattr,
	  { "mount_setattr", PR_NATIVE, (uint64_t)-1, 0 } },
	{ "move_mount", B, EPERM, PR_USERNS, "move_mount(-1, \"\", -1, \"\", unknown flag): EINVAL", pr_move_mount,
	  { "move_mount", PR_NATIVE, (uint64_t)-1, 0 } },
	{ "open_by_handle_at", B, EPERM, 0, "open_by_handle_at(-1, bad pointer, 0): EFAULT or EBADF", pr_open_by_handle_at,
	  { "open_by_handle_at", PR_NATIVE, (uint64_t)-1, 8 } },
	{ "open_tree", B, EPERM, 0, "open_tree(-1, bad pointer, 0): EFAULT", pr_open_tree,
	  { "open_tree", PR_NATIVE, (uint64_t)-1, 8 } },
	{ "perf_event_open", B, EPERM, 0, "perf_event_open(NULL, 0, -1, -1, unknown flag): EINVAL", pr_perf_event_open,
	  { "perf_event_open", PR_NATIVE, 0, 0 } },
	{ "personality_addr_no_randomize", B, EPERM, 0, "personality(ADDR_NO_RANDOMIZE): success", pr_personality_addr_no_rnd,
	  { "personality", PR_NATIVE, PR_ADDR_NO_RANDOMIZE, 0 } },
	{ "personality_read_implies_exec", B, EPERM, 0, "personality(READ_IMPLIES_EXEC): success", pr_personality_rie,
	  { "personality", PR_NATIVE, PR_READ_IMPLIES_EXEC, 0 } },
	{ "personality_read_implies_exec_hi32", B, EPERM, 0, "raw personality(READ_IMPLIES_EXEC | 1<<32): success", pr_personality_rie_hi,
	  { "personality", PR_NATIVE, PR_READ_IMPLIES_EXEC | (1ull << 32), 0 } },
	{ "pidfd_getfd", B, EPERM, 0, "pidfd_getfd(-1, 0, unknown flag): EINVAL", pr_pidfd_getfd,
	  { "pidfd_getfd", PR_NATIVE, (uint64_t)-1, 0 } },
	{ "pivot_root", B, EPERM, PR_USERNS, "pivot_root(bad pointer, bad pointer): EFAULT", pr_pivot_root,
	  { "pivot_root", PR_NATIVE, 8, 8 } },
	{ "process_vm_readv", B, EPERM, 0, "process_vm_readv(parent, NULL, 0, NULL, 0, unknown flag): EINVAL", pr_process_vm_readv,
	  { "process_vm_readv", PR_NATIVE, 1, 0 } },
	{ "process_vm_writev", B, EPERM, 0, "process_vm_writev(parent, NULL, 0, NULL, 0, unknown flag): EINVAL", pr_process_vm_writev,
	  { "process_vm_writev", PR_NATIVE, 1, 0 } },
	{ "ptrace", B, EPERM, 0, "ptrace(PTRACE_PEEKDATA, no such pid): ESRCH", pr_ptrace,
	  { "ptrace", PR_NATIVE, 2, PR_NO_PID } },
	{ "request_key", B, EPERM, 0, "request_key(bad pointer, \"probe\", NULL, 0): EFAULT", pr_request_key,
	  { "request_key", PR_NATIVE, 8, 0 } },
	{ "setns", B, EPERM, 0, "setns(-1, 0): EBADF", pr_setns,
	  { "setns", PR_NATIVE, (uint64_t)-1, 0 } },
	{ "socket_af_alg", B, EPERM, 0, "socket(AF_ALG, type 15, 0): EINVAL", pr_socket_alg,
	  { "socket", PR_NATIVE, AF_ALG, 15 } },
	{ "socket_af_vsock", B, EPERM, 0, "socket(AF_VSOCK, type 15, 0): EINVAL", pr_socket_vsock,
	  { "socket", PR_NATIVE, AF_VSOCK, 15 } },
	{ "socket_af_vsock_hi32", B, EPERM, 0, "raw socket(AF_VSOCK | 1<<32, type 15, 0): EINVAL", pr_socket_vsock_hi,
	  { "socket", PR_NATIVE, AF_VSOCK | (1ull << 32), 15 } },
	{ "umount2", B, EPERM, 0, "umount2(\"/\", unknown flag): EINVAL", pr_umount2,
	  { "umount2", PR_NATIVE, 0, 0x80000000u } },
	{ "unshare_newcgroup", B, EPERM, 0, "unshare(CLONE_NEWCGROUP | 0x1): EINVAL", pr_unshare_newcgroup,
	  { "unshare", PR_NATIVE, CLONE_NEWCGROUP | 0x1, 0 } },
	{ "unshare_newipc", B, EPERM, 0, "unshare(CLONE_NEWIPC | 0x1): EINVAL", pr_unshare_newipc,
	  { "unshare", PR_NATIVE, CLONE_NEWIPC | 0x1, 0 } },
	{ "unshare_newnet", B, EPERM, 0, "unshare(CLONE_NEWNET | 0x1): EINVAL", pr_unshare_newnet,
	  { "unshare", PR_NATIVE, CLONE_NEWNET | 0x1, 0 } },
	{ "unshare_newns", B, EPERM, 0, "unshare(CLONE_NEWNS | 0x1): EINVAL", pr_unshare_newns,
	  { "unshare", PR_NATIVE, CLONE_NEWNS | 0x1, 0 } },
	{ "unshare_newpid", B, EPERM, 0, "unshare(CLONE_NEWPID | 0x1): EINVAL", pr_unshare_newpid,
	  { "unshare", PR_NATIVE, CLONE_NEWPID | 0x1, 0 } },
	{ "unshare_newtime", B, EPERM, 0, "unshare(CLONE_NEWTIME | 0x1): EINVAL", pr_unshare_newtime,
	  { "unshare", PR_NATIVE, PR_CLONE_NEWTIME | 0x1, 0 } },
	{ "unshare_newuser", B, EPERM, 0, "unshare(CLONE_NEWUSER | 0x1): EINVAL", pr_unshare_newuser,
	  { "unshare", PR_NATIVE, CLONE_NEWUSER | 0x1, 0 } },
	{ "unshare_newuts", B, EPERM, 0, "unshare(CLONE_NEWUTS | 0x1): EINVAL", pr_unshare_newuts,
	  { "unshare", PR_NATIVE, CLONE_NEWUTS | 0x1, 0 } },
	{ "userfaultfd", B, EPERM, 0, "userfaultfd(UFFD_USER_MODE_ONLY | 0x2): EINVAL", pr_userfaultfd,
	  { "userfaultfd", PR_NATIVE, PR_UFFD_USER_MODE_ONLY | 0x2, 0 } },
	{ "x32_getpid", K, SIGSYS, 0, "x32 getpid (39 | 0x40000000 through syscall): success, or ENOSYS without CONFIG_X86_X32_ABI", pr_x32_getpid,
	  { "getpid", PR_X32, 0, 0 } },
};
/* clang-format on */
#undef A
#undef B
#undef K
#define PR_N (sizeof(pr_probes) / sizeof(pr_probes[0]))

/* --- names ----------------------------------------------------------------------- */

static const char *pr_errno_name(int e)
{
	/* clang-format 14 would put each entry of this table on a line of its own: kept as written */
	/* clang-format off */
	static const struct { int e; const char *name; } names[] = {
		{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { ESRCH, "ESRCH" }, { EINTR, "EINTR" },
		{ EIO, "EIO" }, { ENXIO, "ENXIO" }, { E2BIG, "E2BIG" }, { ENOEXEC, "ENOEXEC" },
		{ EBADF, "EBADF" }, { ECHILD, "ECHILD" }, { EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" }, { EFAULT, "EFAULT" }, { EBUSY, "EBUSY" }, { EEXIST, "EEXIST" },
		{ ENODEV, "ENODEV" }, { ENOTDIR, "ENOTDIR" }, { EISDIR, "EISDIR" }, { EINVAL, "EINVAL" },
		{ ENFILE, "ENFILE" }, { EMFILE, "EMFILE" }, { ENOTTY, "ENOTTY" }, { EFBIG, "EFBIG" },
		{ ENOSPC, "ENOSPC" }, { ESPIPE, "ESPIPE" }, { EROFS, "EROFS" }, { ERANGE, "ERANGE" },
		{ ENOSYS, "ENOSYS" }, { ENOKEY, "ENOKEY" }, { EOPNOTSUPP, "EOPNOTSUPP" },
		{ EAFNOSUPPORT, "EAFNOSUPPORT" }, { EPROTONOSUPPORT, "EPROTONOSUPPORT" },
		{ ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT" }, { EKEYREJECTED, "EKEYREJECTED" },
		{ EUSERS, "EUSERS" }, { ELOOP, "ELOOP" }, { ENAMETOOLONG, "ENAMETOOLONG" },
	};
	/* clang-format on */
	static char buf[16];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return names[i].name;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static const char *pr_signal_name(int sig)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {
		{ SIGSYS, "SIGSYS" },   { SIGSEGV, "SIGSEGV" }, { SIGBUS, "SIGBUS" },
		{ SIGILL, "SIGILL" },   { SIGKILL, "SIGKILL" }, { SIGABRT, "SIGABRT" },
		{ SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" }, { SIGTRAP, "SIGTRAP" },
		{ SIGXFSZ, "SIGXFSZ" },
	};
	static char buf[16];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].sig == sig)
			return names[i].name;
	snprintf(buf, sizeof(buf), "SIG%d", sig);
	return buf;
}

/* --- running ----------------------------------------------------------------------- */

static long pr_call(const struct pr_probe *p)
{
	if (p->flags & PR_USERNS)
		(void)syscall(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS);
	return p->fn();
}

static void pr_print_result(const struct pr_probe *p, long r)
{
	if (r >= 0)
		printf("%s allowed success\n", p->name);
	else if (r == -EPERM || r == -EACCES || r == -ENOSYS)
		printf("%s blocked %s\n", p->name, pr_errno_name((int)-r));
	else
		printf("%s allowed %s\n", p->name, pr_errno_name((int)-r));
}

/* Run one probe in a forked child, which sends its result on a pipe; a child
 * killed before it could is reported by its signal. */
static void pr_run_forked(const struct pr_probe *p)
{
	int fds[2], status;
	long r = 0;
	ssize_t n;
	pid_t pid;

	fflush(stdout);
	if (pipe(fds) != 0 || (pid = fork()) < 0) {
		printf("%s error %s\n", p->name, pr_errno_name(errno));
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		alarm(10);
		r = pr_call(p);
		(void)!write(fds[1], &r, sizeof(r));
		_exit(0);
	}
	close(fds[1]);
	do
		n = read(fds[0], &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			printf("%s error waitpid-%s\n", p->name, pr_errno_name(errno));
			return;
		}
	if (WIFSIGNALED(status))
		printf("%s killed %s\n", p->name, pr_signal_name(WTERMSIG(status)));
	else if (n != (ssize_t)sizeof(r))
		printf("%s error exit-%d\n", p->name, WEXITSTATUS(status));
	else
		pr_print_result(p, r);
}

static const struct pr_probe *pr_find(const char *name)
{
	for (size_t i = 0; i < PR_N; i++)
		if (strcmp(pr_probes[i].name, name) == 0)
			return &pr_probes[i];
	return NULL;
}

static void pr_list(void)
{
	for (size_t i = 0; i < PR_N; i++) {
		const struct pr_probe *p = &pr_probes[i];
		const char *code = "-";

		if (p->expect == PR_BLOCKED)
			code = pr_errno_name(p->expect_code);
		else if (p->expect == PR_KILLED)
			code = pr_signal_name(p->expect_code);
		printf("%s %s %s %s %s\n", p->name, pr_verdict_name[p->expect], code,
		       (p->flags & PR_USERNS) ? "userns" : "-", p->call);
	}
}

/* --- status ------------------------------------------------------------------------ */

static void pr_status_lines(void)
{
	static const char *const keys[] = { "CapInh:", "CapPrm:",     "CapEff:",  "CapBnd:",
					    "CapAmb:", "NoNewPrivs:", "Seccomp:", NULL };
	char line[512];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f) {
		printf("proc_status %s\n", pr_errno_name(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		for (const char *const *k = keys; *k; k++) {
			size_t len = strlen(*k);
			char *v;

			if (strncmp(line, *k, len) != 0)
				continue;
			v = line + len;
			v += strspn(v, " \t");
			printf("%.*s %s", (int)len - 1, line, v);
		}
	}
	fclose(f);
}

static void pr_status_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fds[256], n = 0, own;

	if (!d) {
		printf("fds %s\n", pr_errno_name(errno));
		return;
	}
	own = dirfd(d);
	while ((e = readdir(d)) && n < 256)
		if (e->d_name[0] != '.' && atoi(e->d_name) != own)
			fds[n++] = atoi(e->d_name);
	closedir(d);
	/* readdir of /proc/self/fd is in fd order; sort anyway. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j];

			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	printf("fds");
	for (int i = 0; i < n; i++)
		printf(" %d", fds[i]);
	printf("\nfds_listing_dirfd %d\n", own);
}

static void pr_status_tty(void)
{
	char buf[1024], *p;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	long tty_nr = -1;

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			/* After "pid (comm) ": state ppid pgrp session tty_nr. */
			p = strrchr(buf, ')');
			if (p && sscanf(p + 1, " %*c %*d %*d %*d %ld", &tty_nr) != 1)
				tty_nr = -1;
		}
	}
	printf("tty_nr %ld\n", tty_nr);
	fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		printf("dev_tty opened\n");
		close(fd);
	} else {
		printf("dev_tty %s\n", pr_errno_name(errno));
	}
}

static void pr_print_rlim(rlim_t v)
{
	if (v == RLIM_INFINITY)
		printf(" unlimited");
	else
		printf(" %llu", (unsigned long long)v);
}

static void pr_status_rlimits(void)
{
	static const struct {
		int res;
		const char *name;
	} lims[] = {
		{ RLIMIT_CORE, "RLIMIT_CORE" },
		{ RLIMIT_NOFILE, "RLIMIT_NOFILE" },
		{ RLIMIT_NPROC, "RLIMIT_NPROC" },
		{ RLIMIT_FSIZE, "RLIMIT_FSIZE" },
	};

	for (size_t i = 0; i < sizeof(lims) / sizeof(lims[0]); i++) {
		struct rlimit rl;

		printf("%s", lims[i].name);
		if (getrlimit(lims[i].res, &rl) != 0) {
			printf(" %s\n", pr_errno_name(errno));
			continue;
		}
		pr_print_rlim(rl.rlim_cur);
		pr_print_rlim(rl.rlim_max);
		printf("\n");
	}
}

/* What a command learns from PID 1's /proc entries: an errno, or how much. */
static void pr_status_proc1(const char *key, const char *path)
{
	char buf[4096];
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		printf("%s %s\n", key, pr_errno_name(errno));
		return;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	if (n < 0 && total == 0)
		printf("%s opened-read-%s\n", key, pr_errno_name(errno));
	else if (total == 0)
		printf("%s empty\n", key);
	else
		printf("%s readable-%zd-bytes\n", key, total);
	close(fd);
}

/* The owner of PID 1's /proc/1/environ: root (0) when PID 1 is not dumpable,
 * PID 1's own uid otherwise (proc(5), PR_SET_DUMPABLE). */
static void pr_status_proc1_owner(void)
{
	struct stat st;

	if (stat("/proc/1/environ", &st) != 0)
		printf("proc1_environ_uid %s\n", pr_errno_name(errno));
	else
		printf("proc1_environ_uid %u\n", (unsigned)st.st_uid);
}

/* PID 1's supplementary groups as /proc/1/status gives them (readable by all):
 * what the runtime handed turninit, against the command's own "groups". */
static void pr_status_proc1_groups(void)
{
	char line[512];
	FILE *f = fopen("/proc/1/status", "re");
	bool found = false;

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "Groups:", 7) == 0) {
			char *v = line + 7;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			while (v[0] && v[strlen(v) - 1] == ' ')
				v[strlen(v) - 1] = '\0';
			printf("proc1_groups %s\n", v[0] ? v : "none");
			found = true;
		}
	if (!found)
		printf("proc1_groups %s\n", f ? "missing" : pr_errno_name(errno));
	if (f)
		fclose(f);
}

static int pr_status(void)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg, groups[64];
	int ng = getgroups(64, groups);
	int sb = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);

	getresuid(&ru, &eu, &su);
	getresgid(&rg, &eg, &sg);
	printf("uid %u %u %u\ngid %u %u %u\ngroups", ru, eu, su, rg, eg, sg);
	if (ng <= 0)
		printf(" none");
	for (int i = 0; i < ng; i++)
		printf(" %u", groups[i]);
	printf("\n");
	pr_status_lines();
	printf("securebits 0x%x\n", sb);
	/* gVisor's /proc/self/status has no NoNewPrivs line: prctl says it too */
	printf("no_new_privs %d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	printf("dumpable %d\n", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
	pr_status_fds();
	pr_status_tty();
	pr_status_rlimits();
	printf("pid %d\nppid %d\nsid %d\npgid %d\n", (int)getpid(), (int)getppid(), (int)getsid(0),
	       (int)getpgid(0));
	pr_status_proc1("proc1_environ", "/proc/1/environ");
	pr_status_proc1("proc1_mem", "/proc/1/mem");
	pr_status_proc1_owner();
	pr_status_proc1_groups();
	return 0;
}

/* --- main -------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	for (size_t i = 1; i < PR_N; i++)
		if (strcmp(pr_probes[i - 1].name, pr_probes[i].name) >= 0) {
			fprintf(stderr, "probe: table not sorted at %s\n", pr_probes[i].name);
			return 2;
		}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 1) {
		for (size_t i = 0; i < PR_N; i++)
			pr_run_forked(&pr_probes[i]);
		return 0;
	}
	if (strcmp(argv[1], "list") == 0) {
		pr_list();
		return 0;
	}
	if (strcmp(argv[1], "status") == 0)
		return pr_status();
	for (int i = 1; i < argc; i++)
		if (!pr_find(argv[i])) {
			fprintf(stderr, "probe: no probe %s (probe list)\n", argv[i]);
			return 2;
		}
	for (int i = 1; i < argc; i++) {
		const struct pr_probe *p = pr_find(argv[i]);

		fflush(stdout);
		pr_print_result(p, pr_call(p));
	}
	return 0;
}
