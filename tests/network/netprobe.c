/* netprobe.c - the ways a command could reach the network around turninit's
 * seccomp-notify isolation (docs/security.md), for the network suite
 * (tests/integration/network.sh, net-notify-*): each prints what the kernel
 * or the filter answered, "WHAT ok" or "WHAT ERRNO-NAME", and exits 0 (2 on a
 * usage error). ADDR is an IPv4 address and a port, A.B.C.D:PORT.
 *
 *   netprobe connect ADDR        one connect(2): "connect ok" or its errno
 *   netprobe tconnect ADDR       the same from a second thread ("tconnect ok"):
 *                                the supervisor takes a thread's socket too
 *   netprobe unix PATH           a unix stream socket listening at PATH, then a
 *                                connect(2) to PATH: "unix ok" or its errno
 *   netprobe unixconnect PATH    a connect(2) to PATH alone: "unix ..." likewise
 *   netprobe absserve NAME       a unix stream socket listening on the abstract
 *                                NAME, accepting forever ("listening NAME")
 *   netprobe absconnect NAME     a connect(2) to the abstract NAME: "abs ok"
 *                                or its errno
 *   netprobe absnl NAME          a listener on the abstract "NAME\nx" (which
 *                                /proc/net/unix shows as a line ending in
 *                                NAME), then a connect(2) to NAME: "abs ..."
 *   netprobe stall PORT N        a listener on 127.0.0.1:PORT with a backlog of
 *                                0 that never accepts, and N threads each in a
 *                                blocking connect(2) to it; "stalling N" once
 *                                every thread is in connect(2) or past it
 *                                (/proc/self/task/TID/syscall), held by a
 *                                child that it leaves running
 *   netprobe race PROXY TARGET MS  connect(2) in a loop for MS milliseconds
 *                                while a second thread rewrites the sockaddr
 *                                between PROXY and TARGET (family, port and
 *                                address in one 8-byte store); then
 *                                "attempts N", "connected N" and "peer-target
 *                                N": the connects whose peer (getpeername)
 *                                is TARGET
 *   netprobe udp ADDR            socket(AF_INET, SOCK_DGRAM), then a sendto
 *                                of one datagram to ADDR
 *   netprobe sendto ADDR         sendto and sendmsg with ADDR on an
 *                                unconnected TCP socket; socket(2) of UDP and
 *                                of AF_UNIX SOCK_DGRAM, socketpair(2) of the
 *                                latter
 *   netprobe fastopen ADDR       sendto and sendmsg with MSG_FASTOPEN to ADDR
 *                                on fresh TCP sockets
 *   netprobe uring               io_uring_setup(8, params)
 *   netprobe storm ADDR MS       "storming", then connect(2) to ADDR in a
 *                                loop for MS milliseconds; "connects N
 *                                reached N"
 *   netprobe ask ADDR HOST:PORT  connect to ADDR, send a CONNECT HOST:PORT
 *                                and print "answer LINE" (the first line),
 *                                "closed" (nothing before the end) or its
 *                                errno; 10 s at most
 *   netprobe undumpable ADDR HOST:PORT  "dumpable N" after
 *                                prctl(PR_SET_DUMPABLE, 0) (N as
 *                                PR_GET_DUMPABLE reads it back), then as ask:
 *                                a process whose memory turninit cannot read
 *   netprobe listen PORT         TCP and UDP on 0.0.0.0:PORT; a line
 *                                "arrival tcp|udp FROM" per connection or
 *                                datagram, flushed, until killed
 * Sources: connect(2), socket(2), sendto(2) (MSG_FASTOPEN: tcp(7)),
 * io_uring_setup(2), getpeername(2), PR_SET_DUMPABLE: prctl(2). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif

static const char *ename(int e)
{
	static char other[32];

	switch (e) {
	case 0: return "ok";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENETUNREACH: return "ENETUNREACH";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ECONNRESET: return "ECONNRESET";
	case EPIPE: return "EPIPE";
	case ENOTCONN: return "ENOTCONN";
	case EISCONN: return "EISCONN";
	case ENOSYS: return "ENOSYS";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case EFAULT: return "EFAULT";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EINPROGRESS: return "EINPROGRESS";
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	default: snprintf(other, sizeof(other), "errno-%d", e); return other;
	}
}

static void say(const char *what, int r)
{
	printf("%s %s\n", what, ename(r < 0 ? errno : 0));
	fflush(stdout);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* ADDR "A.B.C.D:PORT" into *sa; exits 2 when it is not one. */
static void parse_addr(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');

	if (!colon || (size_t)(colon - s) >= sizeof(host)) {
		fprintf(stderr, "netprobe: %s is not A.B.C.D:PORT\n", s);
		exit(2);
	}
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1) {
		fprintf(stderr, "netprobe: %s is not A.B.C.D:PORT\n", s);
		exit(2);
	}
}

static int tcp_connect(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int cmd_connect(const char *addr)
{
	struct sockaddr_in sa;
	int fd;

	parse_addr(addr, &sa);
	fd = tcp_connect(&sa);
	say("connect", fd);
	if (fd >= 0)
		close(fd);
	return 0;
}

static void *tconnect_thread(void *arg)
{
	int fd = tcp_connect(arg);

	say("tconnect", fd);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int cmd_tconnect(const char *addr)
{
	struct sockaddr_in sa;
	pthread_t t;

	parse_addr(addr, &sa);
	if (pthread_create(&t, NULL, tconnect_thread, &sa) != 0)
		return 1;
	pthread_join(t, NULL);
	return 0;
}

/* a unix stream socket connected to un (len bytes), or -1 with errno */
static int unix_connect(const struct sockaddr_un *un, socklen_t len)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd >= 0 && connect(fd, (const struct sockaddr *)un, len) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		fd = -1;
	}
	return fd;
}

static int cmd_unix(const char *path, int listen_first)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int l = -1;

	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	if (listen_first) {
		l = socket(AF_UNIX, SOCK_STREAM, 0);
		if (l < 0 || bind(l, (struct sockaddr *)&un, sizeof(un)) != 0 || listen(l, 4) != 0) {
			say("unix-listen", -1);
			return 0;
		}
	}
	say("unix", unix_connect(&un, sizeof(un)));
	return 0;
}

/* an abstract address of name (suffix appended), its length in *len */
static struct sockaddr_un abs_addr(const char *name, const char *suffix, socklen_t *len)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	size_t n = strlen(name), k = strlen(suffix);

	if (n + k + 1 > sizeof(un.sun_path))
		exit(2);
	memcpy(un.sun_path + 1, name, n);
	memcpy(un.sun_path + 1 + n, suffix, k);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n + k);
	return un;
}

static int abs_listen(const char *name, const char *suffix)
{
	socklen_t len;
	struct sockaddr_un un = abs_addr(name, suffix, &len);
	int l = socket(AF_UNIX, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&un, len) != 0 || listen(l, 16) != 0)
		return -1;
	return l;
}

static int cmd_abs(const char *name, int mode)
{
	socklen_t len;
	struct sockaddr_un un = abs_addr(name, "", &len);
	int l = -1;

	if (mode == 0) { /* serve */
		if ((l = abs_listen(name, "")) < 0) {
			say("abs-listen", -1);
			return 1;
		}
		printf("listening %s\n", name);
		fflush(stdout);
		for (;;) {
			int c = accept(l, NULL, NULL);

			if (c >= 0)
				close(c);
		}
	}
	if (mode == 2 && (l = abs_listen(name, "\nx")) < 0) {
		say("abs-listen", -1);
		return 0;
	}
	say("abs", unix_connect(&un, len));
	return 0;
}

static atomic_int stall_returned;

static void *stall_thread(void *arg)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd >= 0)
		(void)connect(fd, arg, sizeof(struct sockaddr_in));
	atomic_fetch_add(&stall_returned, 1);
	for (;;)
		pause();
	return NULL;
}

/* the threads of this process now in connect(2) */
static int stall_in_connect(void)
{
	char path[64];
	int n = 0;

	for (int tid = getpid() + 1; tid < getpid() + 4096; tid++) {
		FILE *f;
		long nr;

		snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
		if (!(f = fopen(path, "r")))
			continue;
		if (fscanf(f, "%ld", &nr) == 1 && nr == SYS_connect)
			n++;
		fclose(f);
	}
	return n;
}

/* the stall itself, in a child: the listener, the threads, then a byte on
 * ready once each is in connect(2) or past it */
static void __attribute__((noreturn)) stall_child(int port, int n, int ready)
{
	static struct sockaddr_in sa = { .sin_family = AF_INET };
	int l = socket(AF_INET, SOCK_STREAM, 0);
	pthread_t t;

	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(l, 0) != 0)
		_exit(1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t, NULL, stall_thread, &sa) != 0)
			_exit(1);
	for (long waited = 0; stall_in_connect() + atomic_load(&stall_returned) < n; waited++) {
		struct timespec ts = { 0, 1000000 };

		if (waited > 30000)
			_exit(1);
		nanosleep(&ts, NULL);
	}
	(void)!write(ready, "r", 1);
	for (;;)
		pause();
}

/* "stalling N" once the child holds its stall, the child left running */
static int cmd_stall(int port, int n)
{
	int p[2];
	char b;

	if (pipe(p) != 0)
		return 1;
	switch (fork()) {
	case -1: return 1;
	case 0: close(p[0]); stall_child(port, n, p[1]);
	default: close(p[1]);
	}
	if (read(p[0], &b, 1) != 1) {
		printf("no stall\n");
		return 1;
	}
	printf("stalling %d\n", n);
	return 0;
}

/* The race: the sockaddr connect(2) is given, rewritten by a second thread. */
static union {
	struct sockaddr_in sa;
	_Atomic uint64_t head; /* family, port, address: the first 8 bytes */
} race_addr;
static uint64_t race_heads[2];
static atomic_int race_done;

static void *race_flip(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&race_done, memory_order_relaxed)) {
		atomic_store_explicit(&race_addr.head, race_heads[0], memory_order_relaxed);
		atomic_store_explicit(&race_addr.head, race_heads[1], memory_order_relaxed);
	}
	return NULL;
}

static int cmd_race(const char *proxy, const char *target, long ms)
{
	struct sockaddr_in p, t, peer;
	long attempts = 0, connected = 0, at_target = 0, end = now_ms() + ms;
	pthread_t th;

	parse_addr(proxy, &p);
	parse_addr(target, &t);
	memcpy(&race_heads[0], &p, sizeof(uint64_t));
	memcpy(&race_heads[1], &t, sizeof(uint64_t));
	race_addr.sa = p;
	if (pthread_create(&th, NULL, race_flip, NULL) != 0) {
		puts("pthread_create failed");
		return 1;
	}
	while (now_ms() < end) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		socklen_t len = sizeof(peer);

		if (fd < 0)
			break;
		attempts++;
		if (connect(fd, (struct sockaddr *)&race_addr.sa, sizeof(race_addr.sa)) == 0) {
			connected++;
			if (getpeername(fd, (struct sockaddr *)&peer, &len) == 0 &&
			    peer.sin_addr.s_addr == t.sin_addr.s_addr && peer.sin_port == t.sin_port)
				at_target++;
		}
		close(fd);
	}
	atomic_store(&race_done, 1);
	pthread_join(th, NULL);
	printf("attempts %ld\nconnected %ld\npeer-target %ld\n", attempts, connected, at_target);
	return 0;
}

static int cmd_udp(const char *addr)
{
	struct sockaddr_in sa;
	int fd;

	parse_addr(addr, &sa);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	say("socket", fd);
	if (fd < 0)
		return 0;
	say("sendto", (int)sendto(fd, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa)));
	close(fd);
	return 0;
}

static int cmd_sendto(const char *addr)
{
	struct sockaddr_in sa;
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	struct msghdr mh = { .msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov, .msg_iovlen = 1 };
	int fd, sv[2];

	parse_addr(addr, &sa);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		say("tcp-socket", fd);
		return 0;
	}
	say("tcp-sendto", (int)sendto(fd, "x", 1, MSG_NOSIGNAL, (struct sockaddr *)&sa, sizeof(sa)));
	say("tcp-sendmsg", (int)sendmsg(fd, &mh, MSG_NOSIGNAL));
	close(fd);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	say("udp-socket", fd);
	if (fd >= 0) {
		say("udp-sendto", (int)sendto(fd, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa)));
		close(fd);
	}
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	say("unix-dgram-socket", fd);
	if (fd >= 0)
		close(fd);
	say("unix-dgram-socketpair", socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	return 0;
}

static int cmd_fastopen(const char *addr)
{
	struct sockaddr_in sa;
	struct iovec iov = { .iov_base = "GET / HTTP/1.0\r\n\r\n", .iov_len = 18 };
	struct msghdr mh = { .msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov, .msg_iovlen = 1 };
	int fd;

	parse_addr(addr, &sa);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		say("tcp-socket", fd);
		return 0;
	}
	say("sendto-fastopen", (int)sendto(fd, iov.iov_base, iov.iov_len, MSG_FASTOPEN | MSG_NOSIGNAL,
					   (struct sockaddr *)&sa, sizeof(sa)));
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return 0;
	say("sendmsg-fastopen", (int)sendmsg(fd, &mh, MSG_FASTOPEN | MSG_NOSIGNAL));
	close(fd);
	return 0;
}

static int cmd_uring(void)
{
	unsigned char params[120]; /* struct io_uring_params */
	long fd;

	memset(params, 0, sizeof(params));
	fd = syscall(SYS_io_uring_setup, 8, params);
	say("io_uring_setup", (int)fd);
	if (fd >= 0)
		close((int)fd);
	return 0;
}

static int cmd_storm(const char *addr, long ms)
{
	struct sockaddr_in sa;
	long n = 0, reached = 0, end;

	parse_addr(addr, &sa);
	puts("storming");
	fflush(stdout);
	for (end = now_ms() + ms; now_ms() < end; n++) {
		int fd = tcp_connect(&sa);

		if (fd >= 0) {
			reached++;
			close(fd);
		}
	}
	printf("connects %ld reached %ld\n", n, reached);
	return 0;
}

static int cmd_ask(const char *addr, const char *target)
{
	struct sockaddr_in sa;
	struct pollfd pfd;
	char req[300], line[300];
	size_t got = 0;
	long end = now_ms() + 10000;
	int fd;

	parse_addr(addr, &sa);
	fd = tcp_connect(&sa);
	if (fd < 0) {
		say("connect", fd);
		return 0;
	}
	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		say("send", -1);
		close(fd);
		return 0;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	while (got < sizeof(line) - 1 && now_ms() < end) {
		ssize_t r;

		if (poll(&pfd, 1, 500) <= 0)
			continue;
		r = recv(fd, line + got, sizeof(line) - 1 - got, 0);
		if (r < 0) {
			say("recv", -1);
			close(fd);
			return 0;
		}
		if (r == 0)
			break;
		got += (size_t)r;
		line[got] = '\0';
		if (strchr(line, '\n'))
			break;
	}
	close(fd);
	line[got] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (got == 0)
		puts(now_ms() < end ? "closed" : "no answer in 10 s");
	else
		printf("answer %s\n", line);
	return 0;
}

/* A process that is not dumpable: turninit, as the commands' uid with no
 * capability, may neither read its memory (process_vm_readv) nor take its
 * socket (pidfd_getfd), so its connect must be refused. */
static int cmd_undumpable(const char *addr, const char *target)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		say("prctl", -1);
		return 0;
	}
	printf("dumpable %d\n", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
	fflush(stdout);
	return cmd_ask(addr, target);
}

static int cmd_listen(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct pollfd pfd[2];
	int one = 1;

	pfd[0].fd = socket(AF_INET, SOCK_STREAM, 0);
	pfd[1].fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (pfd[0].fd < 0 || pfd[1].fd < 0 ||
	    setsockopt(pfd[0].fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(pfd[0].fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(pfd[0].fd, 64) != 0 ||
	    bind(pfd[1].fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		perror("netprobe listen");
		return 1;
	}
	pfd[0].events = pfd[1].events = POLLIN;
	printf("listening %d\n", port);
	fflush(stdout);
	for (;;) {
		struct sockaddr_in from;
		socklen_t len = sizeof(from);
		char buf[512], ip[INET_ADDRSTRLEN];

		if (poll(pfd, 2, -1) < 0)
			continue;
		if (pfd[0].revents & POLLIN) {
			int c = accept(pfd[0].fd, (struct sockaddr *)&from, &len);

			if (c >= 0) {
				inet_ntop(AF_INET, &from.sin_addr, ip, sizeof(ip));
				printf("arrival tcp %s\n", ip);
				close(c);
			}
		}
		len = sizeof(from);
		if (pfd[1].revents & POLLIN &&
		    recvfrom(pfd[1].fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len) >= 0) {
			inet_ntop(AF_INET, &from.sin_addr, ip, sizeof(ip));
			printf("arrival udp %s\n", ip);
		}
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(c, "connect") && argc == 3)
		return cmd_connect(argv[2]);
	if (!strcmp(c, "tconnect") && argc == 3)
		return cmd_tconnect(argv[2]);
	if (!strcmp(c, "absserve") && argc == 3)
		return cmd_abs(argv[2], 0);
	if (!strcmp(c, "absconnect") && argc == 3)
		return cmd_abs(argv[2], 1);
	if (!strcmp(c, "absnl") && argc == 3)
		return cmd_abs(argv[2], 2);
	if (!strcmp(c, "stall") && argc == 4)
		return cmd_stall(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(c, "unix") && argc == 3)
		return cmd_unix(argv[2], 1);
	if (!strcmp(c, "unixconnect") && argc == 3)
		return cmd_unix(argv[2], 0);
	if (!strcmp(c, "race") && argc == 5)
		return cmd_race(argv[2], argv[3], atol(argv[4]));
	if (!strcmp(c, "udp") && argc == 3)
		return cmd_udp(argv[2]);
	if (!strcmp(c, "sendto") && argc == 3)
		return cmd_sendto(argv[2]);
	if (!strcmp(c, "fastopen") && argc == 3)
		return cmd_fastopen(argv[2]);
	if (!strcmp(c, "uring") && argc == 2)
		return cmd_uring();
	if (!strcmp(c, "storm") && argc == 4)
		return cmd_storm(argv[2], atol(argv[3]));
	if (!strcmp(c, "ask") && argc == 4)
		return cmd_ask(argv[2], argv[3]);
	if (!strcmp(c, "undumpable") && argc == 4)
		return cmd_undumpable(argv[2], argv[3]);
	if (!strcmp(c, "listen") && argc == 3)
		return cmd_listen(atoi(argv[2]));
	fprintf(stderr,
		"usage: netprobe connect|tconnect|absserve|absconnect|absnl|stall|unix|unixconnect|race|udp|sendto|fastopen|uring|storm|ask|undumpable|listen ...\n");
	return 2;
}
