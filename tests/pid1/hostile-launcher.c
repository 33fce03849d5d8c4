/* hostile-launcher.c - exec argv the way a careless caller would: every catchable
 * signal set to SIG_IGN (SIGCHLD included) and every signal blocked. What turninit
 * inherits from it must not reach the command (issue 5: signals ignored or blocked
 * because the caller ignored or blocked them).
 *
 * Raw rt_sigaction/rt_sigprocmask: libc wrappers refuse the signals libc keeps for
 * itself (32-34), and a caller written in another language need not spare them. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

int main(int argc, char **argv)
{
	struct kernel_sigaction ign;
	unsigned long all = ~0UL;
	int sig;

	if (argc < 2) {
		fprintf(stderr, "usage: hostile-launcher PROGRAM [ARG]...\n");
		return 2;
	}
	memset(&ign, 0, sizeof(ign));
	ign.handler = SIG_IGN;
	for (sig = 1; sig <= 64; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (syscall(SYS_rt_sigaction, sig, &ign, NULL, sizeof(unsigned long)) != 0) {
			perror("hostile-launcher: rt_sigaction");
			return 2;
		}
	}
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, sizeof(all)) != 0) {
		perror("hostile-launcher: rt_sigprocmask");
		return 2;
	}
	execvp(argv[1], argv + 1);
	perror("hostile-launcher: execvp");
	return 127;
}
