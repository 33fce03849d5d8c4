/* test_target_calls.c - the table of calls that take another process as their
 * target (policy/target_calls.c): sorted, each known to libseccomp, the guarded
 * ones with their argument shapes; and every x86_64 syscall libseccomp names
 * reviewed, so that one added to its table fails here until it is classified. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/target_calls.h"

/* Every x86_64 syscall libseccomp 2.5.4 names, each reviewed: those that take
 * another process as their target are in tc_calls, the rest take none (a
 * file, an address, the caller itself). A name libseccomp adds must be
 * classified in policy/target_calls.c (if it takes a pid, a pidfd or a
 * which/who pair) and added here. */
static const char *const reviewed[] = {
	"_sysctl",
	"accept",
	"accept4",
	"access",
	"acct",
	"add_key",
	"adjtimex",
	"afs_syscall",
	"alarm",
	"arch_prctl",
	"bind",
	"bpf",
	"brk",
	"cachestat",
	"capget",
	"capset",
	"chdir",
	"chmod",
	"chown",
	"chroot",
	"clock_adjtime",
	"clock_getres",
	"clock_gettime",
	"clock_nanosleep",
	"clock_settime",
	"clone",
	"clone3",
	"close",
	"close_range",
	"connect",
	"copy_file_range",
	"creat",
	"create_module",
	"delete_module",
	"dup",
	"dup2",
	"dup3",
	"epoll_create",
	"epoll_create1",
	"epoll_ctl",
	"epoll_ctl_old",
	"epoll_pwait",
	"epoll_pwait2",
	"epoll_wait",
	"epoll_wait_old",
	"eventfd",
	"eventfd2",
	"execve",
	"execveat",
	"exit",
	"exit_group",
	"faccessat",
	"faccessat2",
	"fadvise64",
	"fallocate",
	"fanotify_init",
	"fanotify_mark",
	"fchdir",
	"fchmod",
	"fchmodat",
	"fchmodat2",
	"fchown",
	"fchownat",
	"fcntl",
	"fdatasync",
	"fgetxattr",
	"finit_module",
	"flistxattr",
	"flock",
	"fork",
	"fremovexattr",
	"fsconfig",
	"fsetxattr",
	"fsmount",
	"fsopen",
	"fspick",
	"fstat",
	"fstatfs",
	"fsync",
	"ftruncate",
	"futex",
	"futex_requeue",
	"futex_wait",
	"futex_waitv",
	"futex_wake",
	"futimesat",
	"get_kernel_syms",
	"get_mempolicy",
	"get_robust_list",
	"get_thread_area",
	"getcpu",
	"getcwd",
	"getdents",
	"getdents64",
	"getegid",
	"geteuid",
	"getgid",
	"getgroups",
	"getitimer",
	"getpeername",
	"getpgid",
	"getpgrp",
	"getpid",
	"getpmsg",
	"getppid",
	"getpriority",
	"getrandom",
	"getresgid",
	"getresuid",
	"getrlimit",
	"getrusage",
	"getsid",
	"getsockname",
	"getsockopt",
	"gettid",
	"gettimeofday",
	"getuid",
	"getxattr",
	"init_module",
	"inotify_add_watch",
	"inotify_init",
	"inotify_init1",
	"inotify_rm_watch",
	"io_cancel",
	"io_destroy",
	"io_getevents",
	"io_pgetevents",
	"io_setup",
	"io_submit",
	"io_uring_enter",
	"io_uring_register",
	"io_uring_setup",
	"ioctl",
	"ioperm",
	"iopl",
	"ioprio_get",
	"ioprio_set",
	"kcmp",
	"kexec_file_load",
	"kexec_load",
	"keyctl",
	"kill",
	"landlock_add_rule",
	"landlock_create_ruleset",
	"landlock_restrict_self",
	"lchown",
	"lgetxattr",
	"link",
	"linkat",
	"listen",
	"listxattr",
	"llistxattr",
	"lookup_dcookie",
	"lremovexattr",
	"lseek",
	"lsetxattr",
	"lstat",
	"madvise",
	"map_shadow_stack",
	"mbind",
	"membarrier",
	"memfd_create",
	"memfd_secret",
	"migrate_pages",
	"mincore",
	"mkdir",
	"mkdirat",
	"mknod",
	"mknodat",
	"mlock",
	"mlock2",
	"mlockall",
	"mmap",
	"modify_ldt",
	"mount",
	"mount_setattr",
	"move_mount",
	"move_pages",
	"mprotect",
	"mq_getsetattr",
	"mq_notify",
	"mq_open",
	"mq_timedreceive",
	"mq_timedsend",
	"mq_unlink",
	"mremap",
	"msgctl",
	"msgget",
	"msgrcv",
	"msgsnd",
	"msync",
	"munlock",
	"munlockall",
	"munmap",
	"name_to_handle_at",
	"nanosleep",
	"newfstatat",
	"nfsservctl",
	"open",
	"open_by_handle_at",
	"open_tree",
	"openat",
	"openat2",
	"pause",
	"perf_event_open",
	"personality",
	"pidfd_getfd",
	"pidfd_open",
	"pidfd_send_signal",
	"pipe",
	"pipe2",
	"pivot_root",
	"pkey_alloc",
	"pkey_free",
	"pkey_mprotect",
	"poll",
	"ppoll",
	"prctl",
	"pread64",
	"preadv",
	"preadv2",
	"prlimit64",
	"process_madvise",
	"process_mrelease",
	"process_vm_readv",
	"process_vm_writev",
	"pselect6",
	"ptrace",
	"putpmsg",
	"pwrite64",
	"pwritev",
	"pwritev2",
	"query_module",
	"quotactl",
	"quotactl_fd",
	"read",
	"readahead",
	"readlink",
	"readlinkat",
	"readv",
	"reboot",
	"recvfrom",
	"recvmmsg",
	"recvmsg",
	"remap_file_pages",
	"removexattr",
	"rename",
	"renameat",
	"renameat2",
	"request_key",
	"restart_syscall",
	"rmdir",
	"rseq",
	"rt_sigaction",
	"rt_sigpending",
	"rt_sigprocmask",
	"rt_sigqueueinfo",
	"rt_sigreturn",
	"rt_sigsuspend",
	"rt_sigtimedwait",
	"rt_tgsigqueueinfo",
	"sched_get_priority_max",
	"sched_get_priority_min",
	"sched_getaffinity",
	"sched_getattr",
	"sched_getparam",
	"sched_getscheduler",
	"sched_rr_get_interval",
	"sched_setaffinity",
	"sched_setattr",
	"sched_setparam",
	"sched_setscheduler",
	"sched_yield",
	"seccomp",
	"security",
	"select",
	"semctl",
	"semget",
	"semop",
	"semtimedop",
	"sendfile",
	"sendmmsg",
	"sendmsg",
	"sendto",
	"set_mempolicy",
	"set_mempolicy_home_node",
	"set_robust_list",
	"set_thread_area",
	"set_tid_address",
	"setdomainname",
	"setfsgid",
	"setfsuid",
	"setgid",
	"setgroups",
	"sethostname",
	"setitimer",
	"setns",
	"setpgid",
	"setpriority",
	"setregid",
	"setresgid",
	"setresuid",
	"setreuid",
	"setrlimit",
	"setsid",
	"setsockopt",
	"settimeofday",
	"setuid",
	"setxattr",
	"shmat",
	"shmctl",
	"shmdt",
	"shmget",
	"shutdown",
	"sigaltstack",
	"signalfd",
	"signalfd4",
	"socket",
	"socketpair",
	"splice",
	"stat",
	"statfs",
	"statx",
	"swapoff",
	"swapon",
	"symlink",
	"symlinkat",
	"sync",
	"sync_file_range",
	"syncfs",
	"sysfs",
	"sysinfo",
	"syslog",
	"tee",
	"tgkill",
	"time",
	"timer_create",
	"timer_delete",
	"timer_getoverrun",
	"timer_gettime",
	"timer_settime",
	"timerfd_create",
	"timerfd_gettime",
	"timerfd_settime",
	"times",
	"tkill",
	"truncate",
	"tuxcall",
	"umask",
	"umount2",
	"uname",
	"unlink",
	"unlinkat",
	"unshare",
	"uselib",
	"userfaultfd",
	"ustat",
	"utime",
	"utimensat",
	"utimes",
	"vfork",
	"vhangup",
	"vmsplice",
	"vserver",
	"wait4",
	"waitid",
	"write",
	"writev",
};

static void table_is_sorted_and_known(void **state)
{
	(void)state;
	for (size_t i = 0; i < tc_n_calls; i++) {
		const struct tc_call *c = &tc_calls[i];

		if (i > 0)
			assert_true(strcmp(tc_calls[i - 1].name, c->name) < 0);
		if (seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, c->name) == __NR_SCMP_ERROR)
			fail_msg("%s: unknown to libseccomp on x86_64", c->name);
		assert_non_null(c->why);
		assert_true(strlen(c->why) > 10);
		assert_ptr_equal(tc_find(c->name), c);
	}
	assert_null(tc_find("read"));
}

/* The guarded calls and the argument each is held by (their prototypes). */
static void guarded_shapes(void **state)
{
	static const struct {
		const char *name;
		int target_arg, write_arg, which_user;
	} want[] = {
		{ "ioprio_set", 1, -1, 3 },          /* (which, who, ioprio); IOPRIO_WHO_USER */
		{ "prlimit64", 0, 2, -1 },           /* (pid, resource, new, old) */
		{ "sched_setaffinity", 0, -1, -1 },  /* (pid, len, mask) */
		{ "sched_setattr", 0, -1, -1 },      /* (pid, attr, flags) */
		{ "sched_setparam", 0, -1, -1 },     /* (pid, param) */
		{ "sched_setscheduler", 0, -1, -1 }, /* (pid, policy, param) */
		{ "setpriority", 1, -1, 2 },         /* (which, who, prio); PRIO_USER */
	};
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < tc_n_calls; i++) {
		const struct tc_call *c = &tc_calls[i];

		if (c->cls != TC_GUARDED)
			continue;
		if (n >= sizeof(want) / sizeof(want[0]) || strcmp(c->name, want[n].name) != 0)
			fail_msg("guarded call %s not expected here", c->name);
		assert_int_equal(c->target_arg, want[n].target_arg);
		assert_int_equal(c->write_arg, want[n].write_arg);
		assert_int_equal(c->which_user, want[n].which_user);
		n++;
	}
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
}

/* Every syscall libseccomp names on x86_64 was reviewed. */
static void every_syscall_reviewed(void **state)
{
	size_t unreviewed = 0;

	(void)state;
	for (size_t i = 1; i < sizeof(reviewed) / sizeof(reviewed[0]); i++)
		assert_true(strcmp(reviewed[i - 1], reviewed[i]) < 0);
	for (int nr = 0; nr < 1024; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
		bool seen = false;

		if (!name)
			continue;
		for (size_t i = 0; i < sizeof(reviewed) / sizeof(reviewed[0]) && !seen; i++)
			seen = strcmp(reviewed[i], name) == 0;
		if (!seen) {
			print_error("syscall %s (%d) is new to libseccomp: classify it in policy/target_calls.c and add it to reviewed[]\n",
				    name, nr);
			unreviewed++;
		}
		free(name);
	}
	assert_int_equal(unreviewed, 0);
	for (size_t i = 0; i < tc_n_calls; i++) {
		bool seen = false;

		for (size_t j = 0; j < sizeof(reviewed) / sizeof(reviewed[0]) && !seen; j++)
			seen = strcmp(reviewed[j], tc_calls[i].name) == 0;
		if (!seen)
			fail_msg("%s is in tc_calls but not in reviewed[]", tc_calls[i].name);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_is_sorted_and_known),
		cmocka_unit_test(guarded_shapes),
		cmocka_unit_test(every_syscall_reviewed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
