/* peerrace.c - a command of the turn that tries to drive turninit's listen
 * socket (tests/integration/serve.sh, l-command-peer-race). Static; it runs in
 * the test image as /bin/peerrace.
 *
 *     peerrace SOCKET TRIES
 *
 * turninit refuses a peer that is one of its own descendants, judged by the pid
 * SO_PEERCRED reports. That pid is the process that called connect(2), as it
 * was then: each try here connects from a process A that forks B (B inherits
 * the connection) and exits at once, and A is reaped at once, so /proc/A may be
 * gone by the time turninit looks. B then sends one exec request for
 * `echo ESCAPED` and reads the connection until it closes or 5 s pass; a
 * "started" event means the command ran: the connection was accepted.
 *
 * Prints "tries N refused R escaped E other O"; only "escaped 0" passes.
 * Exits 0 when it could run its tries, 2 on a usage or setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { REFUSED = 'r', ESCAPED = 'e', OTHER = 'o' };

static const char request[] = "{\"op\":\"exec\",\"id\":\"race\",\"command\":\"echo ESCAPED\"}\n";

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* B: wait for A to be gone, send the request, judge the answer. */
static char drive(int fd, pid_t a)
{
	char buf[4096];
	size_t len = 0;
	long deadline = now_ms() + 5000;

	while (getppid() == a && now_ms() < deadline)
		usleep(100);
	if (send(fd, request, sizeof(request) - 1, MSG_NOSIGNAL) < 0 && errno != EPIPE)
		return OTHER;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return OTHER;
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, "\"event\":\"started\""))
			return ESCAPED;
		if (len == sizeof(buf) - 1)
			break;
	}
	buf[len] = '\0';
	return strstr(buf, "\"event\":\"error\"") ? REFUSED : OTHER;
}

int main(int argc, char **argv)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int tries, counts[3] = { 0 };

	if (argc != 3 || strlen(argv[1]) >= sizeof(addr.sun_path) || (tries = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: peerrace SOCKET TRIES\n");
		return 2;
	}
	strcpy(addr.sun_path, argv[1]);
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < tries; i++) {
		int res[2];
		char verdict = OTHER;
		pid_t a;

		if (pipe(res) != 0) {
			perror("peerrace: pipe");
			return 2;
		}
		a = fork();
		if (a < 0) {
			perror("peerrace: fork");
			return 2;
		}
		if (a == 0) {
			int fd = socket(AF_UNIX, SOCK_STREAM, 0);
			pid_t self = getpid();

			close(res[0]);
			if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
				_exit(1);
			if (fork() == 0) {
				char v = drive(fd, self);

				if (write(res[1], &v, 1) != 1)
					_exit(1);
				_exit(0);
			}
			_exit(0);
		}
		close(res[1]);
		waitpid(a, NULL, 0);
		if (read(res[0], &verdict, 1) != 1)
			verdict = OTHER;
		close(res[0]);
		counts[verdict == REFUSED ? 0 : verdict == ESCAPED ? 1 : 2]++;
	}
	printf("tries %d refused %d escaped %d other %d\n", tries, counts[0], counts[1], counts[2]);
	return 0;
}
