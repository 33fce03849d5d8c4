/* notify.h - the network of a turn held by seccomp user notification, where
 * no network namespace can be made (non-root mode: restricted pods,
 * OpenShift; docs/design.md, "Isolation by seccomp user notification";
 * docs/security.md, "Isolation by seccomp user notification").
 *
 * Each command loads a second filter (filter.h, sc_build_notify) that hands
 * every connect(2) to turninit, and sends the filter's listener to PID 1
 * before its execve (notify_hello). A thread of PID 1 of its own, the
 * supervisor, takes each notification: it reads the address from the
 * command's memory (process_vm_readv(2)), judges it (policy/netconnect.h),
 * takes the command's socket (pidfd_getfd(2)) and, when the address may be
 * reached, connects that socket itself, to the address it judged, and
 * answers with connect's result; the kernel never reads the command's
 * address again (no SECCOMP_USER_NOTIF_FLAG_CONTINUE). A connection to
 * turninit's proxy is announced to the proxy first (its source port,
 * notify_peer_allow in notify.c), which serves no other. Refusals are log lines and
 * records (policy/netrec.h), as the proxy's are. PID 1 is an ancestor of
 * every command and, in non-root mode, of their uid: the kernel lets it read
 * their memory and take their fds (ptrace_may_access, PTRACE_MODE_ATTACH).
 * Sources: seccomp_unotify(2), seccomp(2) SECCOMP_FILTER_FLAG_NEW_LISTENER,
 * pidfd_open(2), pidfd_getfd(2), process_vm_readv(2), proc(5) /proc/net/tcp
 * and /proc/net/unix. */
#ifndef TURNINIT_NOTIFY_H
#define TURNINIT_NOTIFY_H

#include <stdint.h>
#include <sys/types.h>

#include "policy/error.h"
#include "policy/manifest.h"

#define NOTIFY_LISTENERS_MAX 512 /* commands' listeners held at once; more: refused */

struct net_plan;

/* What a command's process tells PID 1 with its listener (SCM_RIGHTS). */
struct notify_hello {
	int32_t pid;   /* the command's first process */
	uint16_t port; /* its own port of the proxy's (HTTP_PROXY), 0: none */
};

/* notify_probe - whether this kernel and runtime give what the mode needs,
 * tried on a child forked for it: a filter with a new listener, pidfd_open,
 * pidfd_getfd of the child's fd and process_vm_readv of its memory. 0, or
 * -errno with err naming the first that failed and how ("network:
 * seccomp-notify isolation needs pidfd_getfd(2) (Linux 5.6), which fails
 * here: Function not implemented"). */
int notify_probe(struct tn_error *err);

/* notify_start - start the supervisor thread of p (NET_NOTIFY): it takes
 * listeners on p->notify_fd (the intake; its own from now on), writes its
 * records on records_wr (taken: closed by it) and its lines on log_fd
 * (taken), announces connections to the proxy on a copy of p->ctl_fd (the
 * shared port p->port read now), and judges by
 * n (borrowed for the turn) with proxy_pid's own listeners set apart. All
 * signals are blocked in it. *ret_tid: its thread id, once it runs (the
 * commands' filter keeps them from signalling it: sc_build_notify).
 * Errors: -errno of pthread_create(3) or pipe2(2). */
int notify_start(struct net_plan *p, const struct mf_network *n, int records_wr, int log_fd, pid_t proxy_pid,
		 pid_t *ret_tid, struct tn_error *err);

/* notify_cmd_port - command id's (stream's) own port of the proxy's, open
 * (net_cmd_listen) or closed (port 0 entries are ignored): the supervisor
 * lets the command's processes connect to it, and names the command in
 * their records. Thread-safe. */
void notify_cmd_port(uint16_t port, uint32_t stream, const char *id);
void notify_cmd_port_closed(uint16_t port);

/* notify_hello_send - in a command's process before its execve: the
 * listener fd and hello on sock (SOCK_SEQPACKET), then fd closed. The
 * port is read from envp's HTTP_PROXY (turninit's own value). 0 or -errno
 * of sendmsg(2). Async-signal-safe. */
int notify_hello_send(int sock, int fd, char *const *envp);

#endif
