/* notify.c - see notify.h. */
#define _GNU_SOURCE
#include "sandbox/notify.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "policy/netconnect.h"
#include "policy/netrec.h"
#include "sandbox/filter.h"
#include "sandbox/net.h"
#include "util/clock.h"
#include "util/log.h"

#define NOTIFY_LOG_MAX 10   /* refusals logged in a window, */
#define NOTIFY_LOG_MS 10000 /* ... of this long; past that counted */

/* The commands' own ports of the proxy's, and whose: written by the main
 * thread (net_cmd_listen), read by the supervisor. */
static struct {
	pthread_mutex_t lock;
	struct {
		uint16_t port;
		uint32_t stream;
		char id[RQ_ID_MAX + 1];
	} v[NET_CMD_PORTS_MAX];
} notify_ports = { .lock = PTHREAD_MUTEX_INITIALIZER };

void notify_cmd_port(uint16_t port, uint32_t stream, const char *id)
{
	pthread_mutex_lock(&notify_ports.lock);
	for (size_t i = 0; port && i < NET_CMD_PORTS_MAX; i++)
		if (notify_ports.v[i].port == 0) {
			notify_ports.v[i].port = port;
			notify_ports.v[i].stream = stream;
			snprintf(notify_ports.v[i].id, sizeof(notify_ports.v[i].id), "%s", id);
			break;
		}
	pthread_mutex_unlock(&notify_ports.lock);
}

void notify_cmd_port_closed(uint16_t port)
{
	pthread_mutex_lock(&notify_ports.lock);
	for (size_t i = 0; port && i < NET_CMD_PORTS_MAX; i++)
		if (notify_ports.v[i].port == port)
			notify_ports.v[i].port = 0;
	pthread_mutex_unlock(&notify_ports.lock);
}

/* the id and stream of the command of port into r (none: left empty) */
static void notify_who(uint16_t port, struct net_record *r)
{
	pthread_mutex_lock(&notify_ports.lock);
	for (size_t i = 0; port && i < NET_CMD_PORTS_MAX; i++)
		if (notify_ports.v[i].port == port) {
			snprintf(r->id, sizeof(r->id), "%s", notify_ports.v[i].id);
			r->stream = notify_ports.v[i].stream;
			break;
		}
	pthread_mutex_unlock(&notify_ports.lock);
}

/* --- in a command's process, before its execve -------------------------------------- */

/* the port of "HTTP_PROXY=http://127.0.0.1:PORT" in envp, 0 without */
static uint16_t notify_env_port(char *const *envp)
{
	static const char pre[] = "HTTP_PROXY=http://127.0.0.1:";
	unsigned v = 0;

	for (size_t i = 0; envp && envp[i]; i++) {
		if (strncmp(envp[i], pre, sizeof(pre) - 1) != 0)
			continue;
		for (const char *c = envp[i] + sizeof(pre) - 1; *c >= '0' && *c <= '9' && v <= 65535; c++)
			v = v * 10 + (unsigned)(*c - '0');
		return v <= 65535 ? (uint16_t)v : 0;
	}
	return 0;
}

/* mh set up for one notify_hello in h and one fd's room in u (cbuf) */
union notify_cbuf {
	struct cmsghdr h;
	char buf[CMSG_SPACE(sizeof(int))];
};

static void notify_msg(struct msghdr *mh, struct iovec *iov, struct notify_hello *h, union notify_cbuf *u)
{
	memset(u, 0, sizeof(*u));
	*iov = (struct iovec){ .iov_base = h, .iov_len = sizeof(*h) };
	*mh = (struct msghdr){ .msg_iov = iov,
			       .msg_iovlen = 1,
			       .msg_control = u->buf,
			       .msg_controllen = sizeof(u->buf) };
}

int notify_hello_send(int sock, int fd, char *const *envp)
{
	struct notify_hello h = { .pid = (int32_t)syscall(SYS_getpid), .port = notify_env_port(envp) };
	union notify_cbuf u;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *cm;
	ssize_t r;

	notify_msg(&mh, &iov, &h, &u);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	r = sendmsg(sock, &mh, MSG_NOSIGNAL);
	r = r == (ssize_t)sizeof(h) ? 0 : r < 0 ? -errno : -EMSGSIZE;
	close(fd);
	return (int)r;
}

/* --- the probe ----------------------------------------------------------------------- */

static volatile uint32_t notify_probe_word = 0x746e6e74;

/* the child of notify_probe: a listener of its own, its fd (or -errno)
 * written to out, then it waits for in's end */
static void __attribute__((noreturn)) notify_probe_child(int out, int in)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sc_program p = { .prog = { .len = 1, .filter = &allow } };
	int fd = -EPERM;
	char b;

	/* dumpable, as a command is after its execve (PID 1 is not, and a
	 * fork inherits that); no command exists yet to read this copy */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		fd = -errno;
	else
		fd = sc_load_listener(&p);
	(void)!write(out, &fd, sizeof(fd));
	(void)!read(in, &b, 1);
	_exit(0);
}

static int notify_probe_fail(struct tn_error *err, int e, const char *what)
{
	return err_errno(err, e, "network: seccomp-notify isolation needs %s, which fails here", what);
}

/* the parent's half: each feature tried on child, which holds listener cfd */
static int notify_probe_try(pid_t child, int cfd, struct tn_error *err)
{
	_cleanup_close_ int pidfd = -1, got = -1;
	uint32_t word = 0;
	struct iovec l = { .iov_base = &word, .iov_len = sizeof(word) };
	struct iovec r = { .iov_base = (void *)&notify_probe_word, .iov_len = sizeof(word) };

	if (cfd < 0)
		return notify_probe_fail(err, -cfd,
					 "seccomp user notification (SECCOMP_FILTER_FLAG_NEW_LISTENER, Linux 5.0)");
	pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	if (pidfd < 0)
		return notify_probe_fail(err, errno, "pidfd_open(2) (Linux 5.3)");
	got = (int)syscall(SYS_pidfd_getfd, pidfd, cfd, 0);
	/* EPERM on a kernel that has it: the runtime's seccomp profile (Docker's
	 * default allows pidfd_getfd only with CAP_SYS_PTRACE; podman's allows it) */
	if (got < 0 && errno == EPERM)
		return notify_probe_fail(err, errno,
					 "pidfd_getfd(2) (Linux 5.6; the runtime's seccomp profile may refuse it, as Docker's default does: give one that allows it, such as podman's)");
	if (got < 0)
		return notify_probe_fail(err, errno, "pidfd_getfd(2) (Linux 5.6)");
	if (process_vm_readv(child, &l, 1, &r, 1, 0) != (ssize_t)sizeof(word) || word != notify_probe_word)
		return notify_probe_fail(err, errno ? errno : EIO,
					 "process_vm_readv(2) of the commands' memory");
	return 0;
}

int notify_probe(struct tn_error *err)
{
	int up[2], down[2], cfd = -EIO, r;
	pid_t child;

	if (pipe2(up, O_CLOEXEC) != 0)
		return err_errno(err, errno, "network: a pipe for the seccomp-notify probe");
	if (pipe2(down, O_CLOEXEC) != 0) {
		close(up[0]), close(up[1]);
		return err_errno(err, errno, "network: a pipe for the seccomp-notify probe");
	}
	child = fork();
	if (child == 0) {
		close(up[0]), close(down[1]);
		notify_probe_child(up[1], down[0]);
	}
	close(up[1]), close(down[0]);
	if (child < 0)
		r = err_errno(err, errno, "network: fork for the seccomp-notify probe");
	else if (TEMP_FAILURE_RETRY(read(up[0], &cfd, sizeof(cfd))) != (ssize_t)sizeof(cfd))
		r = err_set(err, EIO, "network: the seccomp-notify probe's child said nothing");
	else
		r = notify_probe_try(child, cfd, err);
	close(up[0]), close(down[1]);
	if (child > 0)
		TEMP_FAILURE_RETRY(waitpid(child, NULL, 0));
	return r;
}

/* --- the supervisor ------------------------------------------------------------------ */

#define NOTIFY_PENDING (-1)     /* notify_connect: answered later */
#define NOTIFY_PENDING_MAX 256  /* connects waited for at once; more: EAGAIN */
#define NOTIFY_PENDING_MS 30000 /* a connect in progress this long: ETIMEDOUT */

struct notify_pending {
	int sock;          /* a copy of the command's socket */
	int listener;      /* the listener its notification came on */
	uint64_t id;       /* the notification */
	uint64_t deadline; /* clock_ms */
};

struct notify_sup {
	struct net_plan plan; /* the supervisor's own: ctl_fd (a copy) and port */
	const struct mf_network *n;
	int records_wr, log_fd;
	pid_t self, proxy_pid;
	int started; /* a pipe's write end: the thread's tid, then closed */
	struct pollfd pfd[1 + NOTIFY_LISTENERS_MAX + NOTIFY_PENDING_MAX];
	/* [0] the intake, [1, n_pfd) the listeners,
	   then the pending connects' sockets */
	struct notify_pending pend[NOTIFY_PENDING_MAX];
	size_t n_pend;
	struct notify_hello who[1 + NOTIFY_LISTENERS_MAX];
	size_t n_pfd;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
	uint64_t window_ms;                  /* the refusals' window: its start, */
	unsigned window_logged, window_more; /* ... logged in it, and only counted */
};

/* A refusal of the command of listener i: a line (NOTIFY_LOG_MAX a window)
 * and a record. */
static void notify_refused(struct notify_sup *s, size_t i, const struct nc_dest *d, const char *why)
{
	struct net_record r = { .rule = -1 };
	uint64_t now = clock_ms();
	char who[RQ_ID_MAX + 16] = "";

	if (now - s->window_ms >= NOTIFY_LOG_MS) {
		if (s->window_more)
			log_line_fd(s->log_fd, "net: %u more connect(s) refused in %d s, not each logged",
				    s->window_more, NOTIFY_LOG_MS / 1000);
		s->window_ms = now;
		s->window_logged = s->window_more = 0;
	}
	if (s->window_logged >= NOTIFY_LOG_MAX) {
		s->window_more++;
		return;
	}
	s->window_logged++;
	notify_who(s->who[i].port, &r);
	if (r.id[0])
		snprintf(who, sizeof(who), " (command %s)", r.id);
	log_line_fd(s->log_fd, "net: refused connect to %s (seccomp-notify): %s%s", d->shown, why, who);
	snprintf(r.verdict, sizeof(r.verdict), "refused");
	snprintf(r.host, sizeof(r.host), "%s", d->shown);
	r.port = d->port;
	snprintf(r.reason, sizeof(r.reason), "connect to %s (seccomp-notify): %s", d->shown, why);
	if (s->records_wr >= 0)
		(void)!write(s->records_wr, &r, sizeof(r));
}

/* the pid whose parent is written in /proc/PID/stat, or -1 */
static pid_t notify_parent(pid_t pid)
{
	char path[32], buf[512], *p;
	_cleanup_close_ int fd = -1;
	ssize_t n;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

/* whether pid is a process of the turn's commands: below turninit, not
 * turninit itself nor its proxy or anything below the proxy */
static bool notify_of_turn(const struct notify_sup *s, pid_t pid)
{
	if (pid == s->self || pid == s->proxy_pid)
		return false;
	for (int depth = 0; depth < 256 && pid > 1; depth++) {
		pid = notify_parent(pid);
		if (pid == s->proxy_pid)
			return false;
		if (pid == s->self)
			return true;
	}
	return false;
}

/* The sockets a process of the turn holds, found in one walk of /proc for
 * the inodes asked (at most NOTIFY_CANDIDATES): for each, a holder and its
 * fd number, pid 0 when none. A walk past NOTIFY_SCAN_FDS fds stops and
 * counts as finding nothing more (fails closed): a command cannot make the
 * walk, which holds every other connect of the turn, as long as it likes. */
#define NOTIFY_CANDIDATES 64
#define NOTIFY_SCAN_FDS 65536

struct notify_held {
	unsigned long ino[NOTIFY_CANDIDATES];
	pid_t pid[NOTIFY_CANDIDATES];
	int fd[NOTIFY_CANDIDATES];
	size_t n;
};

static void notify_find_holders(const struct notify_sup *s, struct notify_held *h)
{
	_cleanup_closedir_ DIR *proc = opendir("/proc");
	size_t seen = 0, left = h->n;
	struct dirent *e;

	while (proc && left > 0 && seen < NOTIFY_SCAN_FDS && (e = readdir(proc))) {
		char path[64], link[48];
		pid_t pid = (pid_t)atoi(e->d_name);
		_cleanup_closedir_ DIR *fds = NULL;
		struct dirent *f;
		unsigned long ino;

		if (pid <= 0 || !notify_of_turn(s, pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
		if (!(fds = opendir(path)))
			continue;
		while (left > 0 && seen++ < NOTIFY_SCAN_FDS && (f = readdir(fds))) {
			ssize_t n = readlinkat(dirfd(fds), f->d_name, link, sizeof(link) - 1);

			if (n <= 0 || (link[n] = '\0', sscanf(link, "socket:[%lu]", &ino) != 1))
				continue;
			for (size_t k = 0; k < h->n; k++)
				if (h->ino[k] == ino && h->pid[k] == 0) {
					h->pid[k] = pid;
					h->fd[k] = atoi(f->d_name);
					left--;
				}
		}
	}
}

/* addr (4 or 16 bytes) as /proc/net/tcp and tcp6 write a local address:
 * each 32-bit word of it in this machine's order, "%08X" */
static void notify_proc_addr(const uint8_t *addr, size_t n, char *out)
{
	for (size_t w = 0; w < n / 4; w++) {
		uint32_t v;

		memcpy(&v, addr + 4 * w, 4);
		sprintf(out + 8 * w, "%08X", v);
	}
}

/* whether a listener at local (as /proc/net/tcp[6] writes it) can take a
 * connection to d: its address, a wildcard, or (tcp6, d of IPv4) the
 * mapped form of d's or IPv6's wildcard, which may take IPv4 too */
static bool notify_may_take(const char *local, bool six, const struct nc_dest *d)
{
	static const uint8_t any6[16];
	uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff };
	char want[33];

	if (!six) {
		if (d->family != AF_INET)
			return false;
		notify_proc_addr(d->addr, 4, want);
		return strcmp(local, want) == 0 || strcmp(local, "00000000") == 0;
	}
	notify_proc_addr(any6, 16, want);
	if (strcmp(local, want) == 0)
		return true;
	if (d->family == AF_INET)
		memcpy(mapped + 12, d->addr, 4);
	notify_proc_addr(d->family == AF_INET ? mapped : d->addr, 16, want);
	return strcmp(local, want) == 0;
}

/* whether a process of the turn listens where a connection to d (a
 * loopback address and port) lands, and only one of the turn: every
 * listening socket that could take it (d's address or a wildcard, IPv4 or
 * IPv6: /proc/net/tcp and tcp6) must be held by a process of the turn, so
 * that a command that listens on 127.0.0.2:5432 or with SO_REUSEPORT beside
 * a pod's service on 127.0.0.1:5432 reaches nothing of the pod's */
static bool notify_turn_listens_tcp(const struct notify_sup *s, const struct nc_dest *d)
{
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	struct notify_held h = { .n = 0 };

	for (size_t k = 0; k < 2; k++) {
		_cleanup_fclose_ FILE *f = fopen(files[k], "re");
		char line[512];

		if (!f)
			return false;
		while (fgets(line, sizeof(line), f)) {
			char local[40];
			unsigned lport, st;
			unsigned long ino;

			/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
			if (sscanf(line, " %*d: %32[0-9A-F]:%x %*s %x %*s %*s %*s %*u %*u %lu", local, &lport,
				   &st, &ino) != 4)
				continue;
			if (st != 0x0a || lport != d->port || !notify_may_take(local, k == 1, d))
				continue;
			if (h.n == NOTIFY_CANDIDATES)
				return false;
			h.ino[h.n++] = ino;
		}
	}
	notify_find_holders(s, &h);
	for (size_t k = 0; k < h.n; k++)
		if (h.pid[k] == 0)
			return false;
	return h.n > 0;
}

/* whether a process of the turn listens on the abstract name of un (len
 * bytes of address). /proc/net/unix writes a name's bytes raw, a line break
 * included, so a line is only a lead: the socket it names is taken from its
 * holder (pidfd_getfd) and its own name, read by getsockname(2), must be
 * the one asked, byte for byte, and it must be listening. */
static bool notify_turn_listens_unix(const struct notify_sup *s, const struct nc_dest *d,
				     const struct sockaddr_un *un, socklen_t len)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/net/unix", "re");
	struct notify_held h = { .n = 0 };
	char line[512];

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long ino, flags;
		int at = 0;

		/* Num RefCount Protocol Flags Type St Inode Path */
		if (sscanf(line, "%*s %*s %*s %lx %*s %*s %lu %n", &flags, &ino, &at) != 2 || at <= 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (!(flags & 0x10000) || strcmp(line + at, d->name) != 0)
			continue;
		if (h.n == NOTIFY_CANDIDATES)
			break;
		h.ino[h.n++] = ino;
	}
	notify_find_holders(s, &h);
	for (size_t k = 0; k < h.n; k++) {
		struct sockaddr_un got = { 0 };
		socklen_t glen = sizeof(got);
		int on = 0;
		socklen_t olen = sizeof(on);
		_cleanup_close_ int pidfd = -1, sock = -1;

		if (h.pid[k] == 0 || (pidfd = (int)syscall(SYS_pidfd_open, h.pid[k], 0)) < 0 ||
		    (sock = (int)syscall(SYS_pidfd_getfd, pidfd, h.fd[k], 0)) < 0)
			continue;
		if (getsockname(sock, (struct sockaddr *)&got, &glen) == 0 && glen == len &&
		    memcmp(got.sun_path, un->sun_path, len - offsetof(struct sockaddr_un, sun_path)) == 0 &&
		    getsockopt(sock, SOL_SOCKET, SO_ACCEPTCONN, &on, &olen) == 0 && on)
			return true;
	}
	return false;
}

/* A connect of listener i's notification s->req that cannot end at once
 * (a blocking socket whose listener's queue is full): a copy of sock kept,
 * polled for its end (notify_main), the answer sent then or at
 * NOTIFY_PENDING_MS. NOTIFY_PENDING, or EAGAIN when NOTIFY_PENDING_MAX wait. */
static int notify_pend(struct notify_sup *s, size_t i, int sock)
{
	struct notify_pending *p;
	int fd;

	if (s->n_pend >= NOTIFY_PENDING_MAX || (fd = fcntl(sock, F_DUPFD_CLOEXEC, 3)) < 0)
		return EAGAIN;
	p = &s->pend[s->n_pend++];
	p->sock = fd;
	p->listener = s->pfd[i].fd;
	p->id = s->req->id;
	p->deadline = clock_ms() + NOTIFY_PENDING_MS;
	return NOTIFY_PENDING;
}

/* connect(2) of sock to sa, made here for the command, never waited for:
 * a blocking socket is made non-blocking for the call (its file's flag, put
 * back after), and a connect that is then in progress is answered when it
 * ends (notify_pend), so that no listener with a full queue holds the
 * supervisor and every other command's connects. 0, an errno, or
 * NOTIFY_PENDING. A unix socket's full queue is EAGAIN either way. */
static int notify_connect(struct notify_sup *s, size_t i, int sock, const void *sa, socklen_t len)
{
	int fl = fcntl(sock, F_GETFL), e;

	if (fl < 0)
		return errno;
	if (fl & O_NONBLOCK)
		return connect(sock, sa, len) == 0 ? 0 : errno;
	if (fcntl(sock, F_SETFL, fl | O_NONBLOCK) != 0)
		return errno;
	e = connect(sock, sa, len) == 0 ? 0 : errno;
	(void)fcntl(sock, F_SETFL, fl);
	/* EALREADY: a blocking connect restarted after a signal, its first
	 * still in progress */
	return e == EINPROGRESS || e == EALREADY ? notify_pend(s, i, sock) : e;
}

/* The end of pending connect k (its socket's error, or ETIMEDOUT), answered. */
static void notify_pend_end(struct notify_sup *s, size_t k, bool timed_out)
{
	struct notify_pending *p = &s->pend[k];
	int e = 0;
	socklen_t elen = sizeof(e);

	if (timed_out)
		e = ETIMEDOUT;
	else if (getsockopt(p->sock, SOL_SOCKET, SO_ERROR, &e, &elen) != 0)
		e = errno;
	memset(s->resp, 0, s->resp_size);
	s->resp->id = p->id;
	s->resp->error = -e;
	(void)ioctl(p->listener, SECCOMP_IOCTL_NOTIF_SEND, s->resp);
	close(p->sock);
	*p = s->pend[--s->n_pend];
}

/* whether the socket option opt (SOL_SOCKET) is set on sock; an option
 * that cannot be read counts as set */
static bool notify_sockopt(int sock, int opt)
{
	int v = 1;
	socklen_t len = sizeof(v);

	return getsockopt(sock, SOL_SOCKET, opt, &v, &len) != 0 || v != 0;
}

/* notify_peer_allow - the proxy told (struct net_ctl_peer, policy/netrec.h) that
 * the next connection from 127.0.0.1:port to its listening port `to` (the
 * shared one or a command's) is one PID 1 makes for a command
 * (seccomp-notify mode: proxy_start's peers), before PID 1 calls connect(2)
 * on that socket: the proxy takes what waits on its control socket before
 * it decides on a connection, so the message is seen. One send(2) a
 * message, never blocking (MSG_DONTWAIT): safe from a thread of its own
 * while another sends other messages on p->ctl_fd. Errors: -ENOTCONN
 * without the proxy's control socket, -errno of sendmsg(2) (-EAGAIN: the
 * proxy has not read what came before; the connection would be refused). */
static int notify_peer_allow(struct net_plan *p, uint16_t port, uint16_t to, struct tn_error *err)
{
	const struct net_ctl_peer m = { .kind = NET_CTL_PEER, .port = port, .to = to };
	ssize_t r;

	if (p->ctl_fd < 0)
		return err_set(err, ENOTCONN, "network: no control socket of the proxy's");
	/* one send(2) a message: whole on a SOCK_SEQPACKET socket, never mixed
	 * with another thread's */
	r = send(p->ctl_fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL);
	if (r != (ssize_t)sizeof(m))
		return err_errno(err, r < 0 ? errno : EMSGSIZE,
				 "network: a connection from 127.0.0.1:%u to the proxy's port %u told to the proxy",
				 port, to);
	return 0;
}

/* A connection to the proxy: sock bound to 127.0.0.1 (its port the
 * kernel's) unless bound already, its source port announced to the proxy,
 * then connected. 0 or errno. */
static int notify_connect_proxy(struct notify_sup *s, size_t i, int sock, const void *sa, socklen_t len,
				const struct nc_dest *d)
{
	struct sockaddr_storage me = { 0 };
	socklen_t mlen = sizeof(me);
	struct tn_error err = { 0 };
	uint16_t port = 0;

	if (getsockname(sock, (struct sockaddr *)&me, &mlen) != 0)
		return errno;
	if (me.ss_family == AF_INET)
		port = ntohs(((struct sockaddr_in *)&me)->sin_port);
	else if (me.ss_family == AF_INET6)
		port = ntohs(((struct sockaddr_in6 *)&me)->sin6_port);
	/* a source port another process may share (SO_REUSEADDR or
	 * SO_REUSEPORT, on both sockets) could be taken by one of the pod's
	 * to reach the proxy first: cleared before turninit binds, refused
	 * on a socket the command bound */
	if (port != 0 && (notify_sockopt(sock, SO_REUSEADDR) || notify_sockopt(sock, SO_REUSEPORT)))
		return EACCES;
	if (port == 0 && (setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &(int){ 0 }, sizeof(int)) != 0 ||
			  setsockopt(sock, SOL_SOCKET, SO_REUSEPORT, &(int){ 0 }, sizeof(int)) != 0))
		return errno;
	if (port == 0) {
		struct sockaddr_in lo4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		struct sockaddr_in6 lo6 = { .sin6_family = AF_INET6 };

		lo6.sin6_addr.s6_addr[10] = lo6.sin6_addr.s6_addr[11] = 0xff;
		lo6.sin6_addr.s6_addr[12] = 127, lo6.sin6_addr.s6_addr[15] = 1;
		if ((me.ss_family == AF_INET ? bind(sock, (struct sockaddr *)&lo4, sizeof(lo4)) :
					       bind(sock, (struct sockaddr *)&lo6, sizeof(lo6))) != 0)
			return errno;
		mlen = sizeof(me);
		if (getsockname(sock, (struct sockaddr *)&me, &mlen) != 0)
			return errno;
		port = me.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&me)->sin_port) :
						 ntohs(((struct sockaddr_in6 *)&me)->sin6_port);
	}
	if (notify_peer_allow(&s->plan, port, d->port, &err) < 0) {
		log_line_fd(s->log_fd, "net: a connection to the proxy not announced: %s", err.msg);
		return ECONNREFUSED;
	}
	return notify_connect(s, i, sock, sa, len);
}

/* AF_UNIX by path: the socket file opened first (O_PATH), relative to the
 * command's working directory, with no magic link followed on the way
 * (openat2 RESOLVE_NO_MAGICLINKS): resolved here, /proc/self would be PID
 * 1's, and a link the command made to /proc/self/fd/N would lead into a
 * directory turninit holds open. Then sock is connected to the file by its
 * /proc/self/fd name, which the kernel takes for the file itself. */
static int notify_connect_unix(struct notify_sup *s, size_t i, pid_t pid, int sock, const struct nc_dest *d)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	char path[32];
	_cleanup_close_ int cwd = -1, file = -1;

	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
	if (d->name[0] != '/' && (cwd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return EACCES;
	file = (int)syscall(SYS_openat2, d->name[0] == '/' ? AT_FDCWD : cwd, d->name, &how, sizeof(how));
	if (file < 0)
		return errno == ELOOP || errno == EXDEV ? EACCES : errno;
	snprintf(un.sun_path, sizeof(un.sun_path), "/proc/self/fd/%d", file);
	return notify_connect(s, i, sock, &un, sizeof(un));
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd of a thread, not only a leader */
#endif

/* A pidfd of the thread tid, whose fd table pidfd_getfd reads: of the
 * thread itself (PIDFD_THREAD), else, on a kernel before 6.9, of its
 * thread group's leader (the same table: threads share it). -1 with errno. */
static int notify_pidfd(pid_t tid)
{
	char path[40], line[128];
	_cleanup_fclose_ FILE *f = NULL;
	int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD), tgid = 0;

	if (fd >= 0 || errno != EINVAL)
		return fd;
	fd = (int)syscall(SYS_pidfd_open, tid, 0);
	if (fd >= 0 || errno != EINVAL)
		return fd;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f) && sscanf(line, "Tgid: %d", &tgid) != 1)
		;
	return tgid > 0 ? (int)syscall(SYS_pidfd_open, tgid, 0) : (errno = ESRCH, -1);
}

/* The answer to the connect of listener i's notification s->req: 0 or an
 * errno. The address read once, judged, and used as read. */
static int notify_decide(struct notify_sup *s, size_t i)
{
	const struct seccomp_notif *q = s->req;
	int lfd = s->pfd[i].fd;
	pid_t pid = (pid_t)q->pid;
	uint32_t len = (uint32_t)q->data.args[2];
	struct sockaddr_storage sa = { 0 };
	struct iovec l = { .iov_base = &sa, .iov_len = len };
	struct iovec r = { .iov_base = (void *)(uintptr_t)q->data.args[1], .iov_len = len };
	struct nc_dest d;
	_cleanup_close_ int pidfd = -1, sock = -1;
	enum nc_verdict v;
	int e;

	if ((int32_t)len < 0 || len > sizeof(sa))
		return EINVAL;
	if (len > 0 && process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)len) {
		e = errno;
		if (e == EFAULT)
			return EFAULT;
		d = (struct nc_dest){ .port = 0 };
		snprintf(d.shown, sizeof(d.shown), "an address turninit cannot read");
		notify_refused(s, i, &d, "the command's memory cannot be read (process_vm_readv)");
		return EACCES;
	}
	v = nc_classify(&sa, len, s->plan.port, s->who[i].port, s->n, &d);
	switch (v) {
	case NC_INVALID: return d.err;
	case NC_UNREACHABLE:
		notify_refused(s, i, &d, "not turninit's proxy nor a listed loopback port");
		return ENETUNREACH;
	case NC_LOOPBACK:
		if (notify_turn_listens_tcp(s, &d))
			break;
		notify_refused(s, i, &d, "a loopback port neither listed nor a command's own");
		return ECONNREFUSED;
	case NC_UNIX_ABSTRACT:
		if (notify_turn_listens_unix(s, &d, (const struct sockaddr_un *)&sa, len))
			break;
		notify_refused(s, i, &d, "an abstract socket no command listens on");
		return ECONNREFUSED;
	default: break;
	}
	/* the pid is the notification's still, so pidfd names its process */
	pidfd = notify_pidfd(pid);
	if (pidfd < 0 || ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &q->id) != 0) {
		notify_refused(s, i, &d, "the command's process is gone");
		return EACCES;
	}
	sock = (int)syscall(SYS_pidfd_getfd, pidfd, (int)q->data.args[0], 0);
	if (sock < 0 && errno == EBADF)
		return EBADF;
	if (sock < 0) {
		e = errno;
		notify_refused(s, i, &d,
			       e == EPERM ?
				       "turninit cannot take the command's socket (pidfd_getfd: a process that is not dumpable)" :
				       "turninit cannot take the command's socket (pidfd_getfd)");
		return EACCES;
	}
	if (v == NC_PROXY)
		return notify_connect_proxy(s, i, sock, &sa, len, &d);
	if (v == NC_UNIX_PATH)
		return notify_connect_unix(s, i, pid, sock, &d);
	return notify_connect(s, i, sock, &sa, len);
}

/* One notification of listener i, answered. A notification gone before
 * its answer (the process died, or a signal interrupted the call) is not
 * an error. */
static void notify_one(struct notify_sup *s, size_t i)
{
	int e;

	memset(s->req, 0, s->req_size);
	if (ioctl(s->pfd[i].fd, SECCOMP_IOCTL_NOTIF_RECV, s->req) != 0)
		return;
	memset(s->resp, 0, s->resp_size);
	s->resp->id = s->req->id;
	e = s->req->data.nr == __NR_connect ? notify_decide(s, i) : ENOSYS;
	if (e == NOTIFY_PENDING)
		return; /* answered when the connect ends */
	s->resp->error = -e;
	(void)ioctl(s->pfd[i].fd, SECCOMP_IOCTL_NOTIF_SEND, s->resp);
}

/* The listeners a command's process sends (notify_hello_send). */
static void notify_intake(struct notify_sup *s)
{
	for (;;) {
		struct notify_hello h;
		union notify_cbuf u;
		struct iovec iov;
		struct msghdr mh;
		struct cmsghdr *cm;
		ssize_t n;
		int fd = -1;

		notify_msg(&mh, &iov, &h, &u);
		n = recvmsg(s->pfd[0].fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (n < 0)
			return;
		cm = CMSG_FIRSTHDR(&mh);
		if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
		if (fd < 0)
			continue;
		/* a listener with no supervisor answers ENOSYS to every
		 * connect: a full table fails closed */
		if (n != (ssize_t)sizeof(h) || s->n_pfd >= 1 + NOTIFY_LISTENERS_MAX) {
			log_line_fd(s->log_fd,
				    "network: a command's listener not taken (%s): its connects fail",
				    n != (ssize_t)sizeof(h) ? "a message cut short" : "too many at once");
			close(fd);
			continue;
		}
		s->pfd[s->n_pfd] = (struct pollfd){ .fd = fd, .events = POLLIN };
		s->who[s->n_pfd++] = h;
	}
}

static void *notify_main(void *arg)
{
	struct notify_sup *s = arg;
	int32_t tid = (int32_t)syscall(SYS_gettid);

	(void)!write(s->started, &tid, sizeof(tid));
	close(s->started);

	for (;;) {
		uint64_t now = clock_ms(), next = UINT64_MAX;
		int timeout;

		for (size_t k = 0; k < s->n_pend; k++) {
			s->pfd[s->n_pfd + k] = (struct pollfd){ .fd = s->pend[k].sock, .events = POLLOUT };
			next = s->pend[k].deadline < next ? s->pend[k].deadline : next;
		}
		timeout = next == UINT64_MAX ? -1 : next <= now ? 0 : (int)(next - now);
		if (poll(s->pfd, s->n_pfd + s->n_pend, timeout) < 0)
			continue;
		/* the pending connects first, from the last: an end moves the
		 * last entry into its place */
		now = clock_ms();
		for (size_t k = s->n_pend; k-- > 0;)
			if (s->pfd[s->n_pfd + k].revents || s->pend[k].deadline <= now)
				notify_pend_end(s, k, !s->pfd[s->n_pfd + k].revents);
		if (s->pfd[0].revents & POLLIN)
			notify_intake(s);
		/* one notification of each listener a round: a command that
		 * connects in a loop waits its turn among the others */
		for (size_t i = 1; i < s->n_pfd; i++) {
			if (s->pfd[i].revents & POLLIN) {
				notify_one(s, i);
			} else if (s->pfd[i].revents & (POLLHUP | POLLERR | POLLNVAL)) {
				/* no process of the filter is left */
				close(s->pfd[i].fd);
				s->pfd[i] = s->pfd[--s->n_pfd];
				s->who[i] = s->who[s->n_pfd];
				i--;
			}
		}
	}
	return NULL;
}

int notify_start(struct net_plan *p, const struct mf_network *n, int records_wr, int log_fd, pid_t proxy_pid,
		 pid_t *ret_tid, struct tn_error *err)
{
	struct seccomp_notif_sizes sz;
	int started[2];
	int32_t tid = 0;
	struct notify_sup *s;
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t t;
	int r;

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) != 0)
		return err_errno(err, errno,
				 "network: the sizes of seccomp notifications (SECCOMP_GET_NOTIF_SIZES)");
	s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(err, ENOMEM, "network: out of memory");
	s->req_size = sz.seccomp_notif > sizeof(*s->req) ? sz.seccomp_notif : sizeof(*s->req);
	s->resp_size = sz.seccomp_notif_resp > sizeof(*s->resp) ? sz.seccomp_notif_resp : sizeof(*s->resp);
	s->req = calloc(1, s->req_size);
	s->resp = calloc(1, s->resp_size);
	if (!s->req || !s->resp)
		return err_set(err, ENOMEM, "network: out of memory");
	s->plan.port = p->port;
	s->plan.ctl_fd = p->ctl_fd >= 0 ? fcntl(p->ctl_fd, F_DUPFD_CLOEXEC, 3) : -1;
	if (p->ctl_fd >= 0 && s->plan.ctl_fd < 0)
		return err_errno(err, errno, "network: the supervisor's copy of the proxy's control socket");
	s->n = n;
	s->records_wr = records_wr;
	s->log_fd = log_fd;
	s->self = getpid();
	s->proxy_pid = proxy_pid;
	s->pfd[0] = (struct pollfd){ .fd = steal_fd(&p->notify_fd), .events = POLLIN };
	s->n_pfd = 1;
	if (pipe2(started, O_CLOEXEC) != 0)
		return err_errno(err, errno, "network: a pipe for the seccomp-notify supervisor");
	s->started = started[1];
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &at, notify_main, s);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		close(started[0]), close(started[1]);
		return err_errno(err, r, "network: the seccomp-notify supervisor (pthread_create)");
	}
	r = (int)TEMP_FAILURE_RETRY(read(started[0], &tid, sizeof(tid)));
	close(started[0]);
	if (r != (int)sizeof(tid) || tid <= 0)
		return err_set(err, EIO, "network: the seccomp-notify supervisor did not start");
	*ret_tid = tid;
	return 0;
}
