/* fdpass.c - a test helper: one command hands its stdout to another over an
 * abstract unix socket (SCM_RIGHTS), as a command trying to hold another
 * command's exit event would.
 *   fdpass recv NAME SECONDS   take an fd, write a line into it every 200 ms
 *   fdpass send NAME           give fd 1, then exit
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static socklen_t addr(struct sockaddr_un *a, const char *name)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "turninit-test-%s", name);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a->sun_path + 1));
}

int main(int argc, char **argv)
{
	struct sockaddr_un a;
	char cbuf[CMSG_SPACE(sizeof(int))], byte = 'x';
	struct iovec io = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &io,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int s = socket(AF_UNIX, SOCK_STREAM, 0), fd;

	if (argc < 3 || s < 0)
		return 2;
	if (strcmp(argv[1], "recv") == 0 && argc == 4) {
		int l, secs = atoi(argv[3]);

		if (bind(s, (struct sockaddr *)&a, addr(&a, argv[2])) != 0 || listen(s, 1) != 0)
			return 3;
		printf("listening\n");
		fflush(stdout);
		l = accept(s, NULL, NULL);
		if (l < 0 || recvmsg(l, &mh, 0) != 1 || !(cm = CMSG_FIRSTHDR(&mh)))
			return 4;
		memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
		for (int i = 0; i < secs * 5; i++) {
			struct timespec t = { 0, 200000000 };

			(void)!write(fd, "held\n", 5);
			nanosleep(&t, NULL);
		}
		return 0;
	}
	if (strcmp(argv[1], "send") == 0) {
		for (int i = 0; connect(s, (struct sockaddr *)&a, addr(&a, argv[2])) != 0; i++) {
			struct timespec t = { 0, 50000000 };

			if (i > 100)
				return 5;
			nanosleep(&t, NULL);
		}
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		fd = 1;
		memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
		return sendmsg(s, &mh, 0) == 1 ? 0 : 6;
	}
	return 2;
}
