/* sig.c - the ways a command could signal another process, for the nonroot
 * suite (tests/integration/nonroot.sh): each prints what the kernel or the
 * seccomp filter answered, "WHAT: ok" or "WHAT: ERRNO-NAME", and exits 0.
 *
 *   sig setown PID SIG        a pipe whose owner is PID (F_SETOWN), its owner
 *                             signal SIG (F_SETSIG), O_ASYNC, one byte written
 *   sig queue PID SIG FAKE    rt_sigqueueinfo(PID, SIG) with si_code SI_QUEUE
 *                             and si_pid FAKE (a forged sender)
 *   sig kill PID SIG          kill(2)
 * and the calls that change another process without a signal (issue 27),
 * each setting what the target has already, so that one that goes through
 * changes nothing:
 *   sig prlimit PID           prlimit64: read PID's RLIMIT_NOFILE, then set it
 *   sig sched PID             sched_getaffinity, then sched_setaffinity
 *   sig nice PID              getpriority, then setpriority (PRIO_PROCESS)
 *   sig ioprio PID            ioprio_get, then ioprio_set (IOPRIO_WHO_PROCESS)
 *   sig user                  setpriority(PRIO_USER, 0): every process of the uid
 * Sources: fcntl(2) F_SETOWN, F_SETSIG; rt_sigqueueinfo(2); prlimit(2),
 * sched_setaffinity(2), setpriority(2), ioprio_set(2). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case 0: return "ok";
	case EPERM: return "EPERM";
	case ESRCH: return "ESRCH";
	case EINVAL: return "EINVAL";
	default: return strerror(e);
	}
}

static void say(const char *what, int r)
{
	printf("%s: %s\n", what, ename(r < 0 ? errno : 0));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	pid_t pid;
	int sig;

	if (argc == 2 && strcmp(argv[1], "user") == 0) {
		errno = 0;
		int prio = getpriority(PRIO_USER, 0);

		say("setpriority user", errno ? -1 : setpriority(PRIO_USER, 0, prio));
		return 0;
	}
	if (argc == 3) {
		pid = (pid_t)atoi(argv[2]);
		if (strcmp(argv[1], "prlimit") == 0) {
			struct rlimit rl;
			int r = (int)syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, NULL, &rl);

			say("prlimit read", r);
			say("prlimit",
			    r < 0 ? r : (int)syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, &rl, NULL));
			return 0;
		}
		if (strcmp(argv[1], "sched") == 0) {
			cpu_set_t set;
			int r = sched_getaffinity(pid, sizeof(set), &set);

			say("sched_setaffinity", r < 0 ? r : sched_setaffinity(pid, sizeof(set), &set));
			return 0;
		}
		if (strcmp(argv[1], "nice") == 0) {
			errno = 0;
			int prio = getpriority(PRIO_PROCESS, (id_t)pid);

			say("setpriority", errno ? -1 : setpriority(PRIO_PROCESS, (id_t)pid, prio));
			return 0;
		}
		if (strcmp(argv[1], "ioprio") == 0) {
			int io = (int)syscall(SYS_ioprio_get, 1, pid); /* IOPRIO_WHO_PROCESS */

			say("ioprio_set", io < 0 ? io : (int)syscall(SYS_ioprio_set, 1, pid, io));
			return 0;
		}
	}
	if (argc < 4) {
		fprintf(stderr,
			"usage: sig setown|queue|kill PID SIG [FAKE], sig prlimit|sched|nice|ioprio PID, sig user\n");
		return 2;
	}
	pid = (pid_t)atoi(argv[2]);
	sig = atoi(argv[3]);
	if (strcmp(argv[1], "setown") == 0) {
		int p[2], r;

		if (pipe(p) != 0)
			return 1;
		say("F_SETOWN", fcntl(p[0], F_SETOWN, pid));
		r = fcntl(p[0], F_SETSIG, sig);
		say("F_SETSIG", r);
		say("O_ASYNC", fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK));
		say("write", (int)write(p[1], "x", 1));
		return 0;
	}
	if (strcmp(argv[1], "queue") == 0 && argc == 5) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		si.si_signo = sig;
		si.si_code = SI_QUEUE;
		si.si_pid = (pid_t)atoi(argv[4]);
		si.si_uid = getuid();
		say("rt_sigqueueinfo", (int)syscall(SYS_rt_sigqueueinfo, pid, sig, &si));
		return 0;
	}
	if (strcmp(argv[1], "kill") == 0) {
		say("kill", (int)syscall(SYS_kill, pid, sig));
		return 0;
	}
	fprintf(stderr, "sig: unknown mode %s\n", argv[1]);
	return 2;
}
