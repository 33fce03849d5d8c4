/* seccomp_arch.c - see seccomp_arch.h. */
#include "policy/seccomp_arch.h"

#include <string.h>

#include "policy/cleanup.h"

/* clang-format 14 reads a macro body that starts with '{' as a block: kept as written */
/* clang-format off */
#define A64(name, instead, why) { "aarch64", name, instead, why }
/* clang-format on */

const struct scg_absent scg_absent[] = {
	A64("_sysctl", NULL, "removed from Linux in 5.5; /proc/sys is the interface"),
	A64("access", "faccessat", "access(p, m) is faccessat(AT_FDCWD, p, m)"),
	A64("afs_syscall", NULL, "never implemented"),
	A64("alarm", "setitimer", "alarm is an ITIMER_REAL"),
	A64("arch_prctl", NULL, "x86's FS and GS bases; aarch64's thread pointer is a register"),
	A64("chmod", "fchmodat", "chmod(p, m) is fchmodat(AT_FDCWD, p, m)"),
	A64("chown", "fchownat", "chown(p, u, g) is fchownat(AT_FDCWD, p, u, g, 0)"),
	A64("creat", "openat", "creat is openat with O_CREAT|O_WRONLY|O_TRUNC"),
	A64("create_module", NULL, "removed from Linux in 2.6; init_module and finit_module load modules"),
	A64("dup2", "dup3", "dup2 is dup3 with no flags"),
	A64("epoll_create", "epoll_create1", "epoll_create is epoll_create1(0)"),
	A64("epoll_ctl_old", NULL, "never implemented"),
	A64("epoll_wait", "epoll_pwait", "epoll_wait is epoll_pwait without a mask"),
	A64("epoll_wait_old", NULL, "never implemented"),
	A64("eventfd", "eventfd2", "eventfd is eventfd2 with no flags"),
	A64("fork", "clone", "fork is clone(SIGCHLD)"),
	A64("futimesat", "utimensat", "futimesat is utimensat in microseconds"),
	A64("get_kernel_syms", NULL, "removed from Linux in 2.6"),
	A64("get_thread_area", NULL, "x86's TLS segment descriptors"),
	A64("getdents", "getdents64", "getdents is getdents64 with 32-bit inode numbers"),
	A64("getpgrp", "getpgid", "getpgrp is getpgid(0)"),
	A64("getpmsg", NULL, "never implemented"),
	A64("inotify_init", "inotify_init1", "inotify_init is inotify_init1(0)"),
	A64("ioperm", NULL, "x86's I/O port space; aarch64 has none"),
	A64("iopl", NULL, "x86's I/O privilege level; aarch64 has none"),
	A64("lchown", "fchownat", "lchown is fchownat with AT_SYMLINK_NOFOLLOW"),
	A64("link", "linkat", "link(a, b) is linkat(AT_FDCWD, a, AT_FDCWD, b, 0)"),
	A64("lstat", "newfstatat", "lstat is newfstatat with AT_SYMLINK_NOFOLLOW"),
	A64("mkdir", "mkdirat", "mkdir(p, m) is mkdirat(AT_FDCWD, p, m)"),
	A64("mknod", "mknodat", "mknod(p, m, d) is mknodat(AT_FDCWD, p, m, d)"),
	A64("modify_ldt", NULL, "x86's local descriptor table"),
	A64("open", "openat", "open(p, f, m) is openat(AT_FDCWD, p, f, m)"),
	A64("pause", "ppoll", "pause is a wait for a signal: ppoll with no fds, or rt_sigsuspend"),
	A64("pipe", "pipe2", "pipe is pipe2 with no flags"),
	A64("poll", "ppoll", "poll is ppoll with a timespec"),
	A64("putpmsg", NULL, "never implemented"),
	A64("query_module", NULL, "removed from Linux in 2.6"),
	A64("readlink", "readlinkat", "readlink(p, b, n) is readlinkat(AT_FDCWD, p, b, n)"),
	A64("rename", "renameat2", "rename(a, b) is renameat2(AT_FDCWD, a, AT_FDCWD, b, 0)"),
	A64("rmdir", "unlinkat", "rmdir is unlinkat with AT_REMOVEDIR"),
	A64("security", NULL, "never implemented"),
	A64("select", "pselect6", "select is pselect6 with a timespec"),
	A64("set_thread_area", NULL, "x86's TLS segment descriptors"),
	A64("signalfd", "signalfd4", "signalfd is signalfd4 with no flags"),
	A64("stat", "newfstatat", "stat(p, s) is newfstatat(AT_FDCWD, p, s, 0)"),
	A64("symlink", "symlinkat", "symlink(a, b) is symlinkat(a, AT_FDCWD, b)"),
	A64("sysfs", NULL, "obsolete; /proc/filesystems is the interface"),
	A64("time", "clock_gettime", "time is clock_gettime(CLOCK_REALTIME) in seconds"),
	A64("tuxcall", NULL, "never implemented"),
	A64("unlink", "unlinkat", "unlink(p) is unlinkat(AT_FDCWD, p, 0)"),
	A64("uselib", NULL, "a.out shared libraries; aarch64 never had them"),
	A64("ustat", NULL, "obsolete; statfs and fstatfs answer it"),
	A64("utime", "utimensat", "utime is utimensat in seconds"),
	A64("utimes", "utimensat", "utimes is utimensat in microseconds"),
	A64("vfork", "clone", "vfork is clone(CLONE_VM|CLONE_VFORK|SIGCHLD)"),
	A64("vserver", NULL, "never implemented"),
};
const size_t scg_n_absent = N_ELEMENTS(scg_absent);

const struct scg_absent *scg_absent_find(const char *arch, const char *syscall)
{
	for (size_t i = 0; i < scg_n_absent; i++)
		if (strcmp(scg_absent[i].arch, arch) == 0 && strcmp(scg_absent[i].syscall, syscall) == 0)
			return &scg_absent[i];
	return NULL;
}
