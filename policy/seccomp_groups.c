/* seccomp_groups.c - the named syscall group table (see seccomp_groups.h).
 *
 * Keep scg_groups sorted by name (scg_find is a binary search; a unit test
 * checks it). Syscalls that init/seccomp.c refuses only for some argument
 * values (clone, unshare, ioctl, socket, personality) are listed here by name
 * like the others; docs/security.md lists which argument values are refused.
 */
#include "seccomp_groups.h"

#include <errno.h>
#include <string.h>

#define MEMBERS(...) ((const char *const[]){ __VA_ARGS__, NULL })

const struct scg_group scg_groups[] = {
	{ "@aio-uring", "io_uring: a large kernel attack surface, bypasses syscall filtering",
	  MEMBERS("io_uring_enter", "io_uring_register", "io_uring_setup") },
	{ "@bpf", "loading eBPF programs and maps",
	  MEMBERS("bpf") },
	{ "@clock", "setting the system clock",
	  MEMBERS("adjtimex", "clock_adjtime", "clock_settime", "settimeofday") },
	{ "@debug", "tracing and reading or writing other processes' memory",
	  MEMBERS("perf_event_open", "pidfd_getfd", "process_vm_readv", "process_vm_writev",
		  "ptrace") },
	{ "@default", "turninit's default deny set",
	  MEMBERS("@aio-uring", "@bpf", "@clock", "@debug", "@keyring", "@kexec", "@module",
		  "@mount", "@namespaces", "@raw-io", "@reboot", "@swap", "@tty-inject",
		  "@unusual-sockets", "open_by_handle_at", "personality", "userfaultfd") },
	{ "@kexec", "loading a new kernel",
	  MEMBERS("kexec_file_load", "kexec_load") },
	{ "@keyring", "the kernel keyring, shared across containers of a user",
	  MEMBERS("add_key", "keyctl", "request_key") },
	{ "@module", "loading and unloading kernel modules",
	  MEMBERS("delete_module", "finit_module", "init_module") },
	{ "@mount", "mounting and the new mount API; changing the root",
	  MEMBERS("chroot", "fsconfig", "fsmount", "fsopen", "fspick", "mount",
		  "mount_setattr", "move_mount", "open_tree", "pivot_root", "umount2") },
	{ "@namespaces", "creating or joining namespaces (clone and unshare: namespace flags only; clone3: ENOSYS)",
	  MEMBERS("clone", "clone3", "setns", "unshare") },
	{ "@raw-io", "raw I/O port access",
	  MEMBERS("ioperm", "iopl") },
	{ "@reboot", "rebooting the machine",
	  MEMBERS("reboot") },
	{ "@swap", "enabling and disabling swap",
	  MEMBERS("swapoff", "swapon") },
	{ "@tty-inject", "faking terminal input (ioctl TIOCSTI and TIOCLINUX only)",
	  MEMBERS("ioctl") },
	{ "@unusual-sockets", "socket families AF_ALG and AF_VSOCK only",
	  MEMBERS("socket") },
};

const size_t scg_n_groups = sizeof(scg_groups) / sizeof(scg_groups[0]);

const struct scg_group *scg_find(const char *name)
{
	size_t lo = 0, hi = scg_n_groups;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, scg_groups[mid].name);

		if (c == 0)
			return &scg_groups[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Each syscall is emitted once: remember what was emitted in a small set. The
 * table is tiny (well under SCG_MAX_SEEN names), so a linear set is enough. */
#define SCG_MAX_SEEN 512
#define SCG_MAX_DEPTH 8

struct scg_walk {
	const char *seen[SCG_MAX_SEEN];
	size_t n_seen;
	int (*emit)(const char *, void *);
	void *data;
};

static int scg_walk_name(struct scg_walk *w, const char *name, int depth, struct tn_error *err)
{
	if (depth > SCG_MAX_DEPTH)
		return err_set(err, ELOOP, "seccomp group %s: nested too deeply", name);
	if (name[0] == '@') {
		const struct scg_group *g = scg_find(name);

		if (!g)
			return err_set(err, ENOENT, "unknown seccomp group \"%s\"", name);
		for (const char *const *m = g->members; *m; m++) {
			int r = scg_walk_name(w, *m, depth + 1, err);
			if (r < 0)
				return r;
		}
		return 0;
	}
	for (size_t i = 0; i < w->n_seen; i++)
		if (strcmp(w->seen[i], name) == 0)
			return 0;
	if (w->n_seen == SCG_MAX_SEEN)
		return err_set(err, E2BIG, "more than %d syscalls in one set", SCG_MAX_SEEN);
	w->seen[w->n_seen++] = name;
	return w->emit(name, w->data);
}

int scg_expand(const char *const *names, size_t n,
	       int (*emit)(const char *syscall, void *data), void *data,
	       struct tn_error *err)
{
	struct scg_walk w = { .n_seen = 0, .emit = emit, .data = data };

	for (size_t i = 0; i < n; i++) {
		int r = scg_walk_name(&w, names[i], 0, err);
		if (r < 0)
			return r;
	}
	return 0;
}
