/* startup.c - turninit's own start-up work, step by step (`make bench`, item 6).
 *
 * Linked with turninit's own objects (everything but init/main.o), built by
 * tests/bench/run.sh with the product's flags: the steps below are the
 * product's functions, called in init/main.c's order (the sandbox by its step
 * table, init/turn.c), with the clock read
 * around each. The product binary carries no timing code. Run as the
 * entrypoint of the sealed bench image (manifest in the image's Env, tmpfs
 * HOME from podman), like turninit itself.
 *
 * Each step runs ROUNDS times after the first (cold) one; printed per step:
 *   STEP first_ns median_ns
 * Steps: verify (load_policy: trust roots, signature, parsing), filter
 * (sc_build), env (envf_build), home (home_setup), landlock (ll_prepare),
 * exec (spawn_command: clone(CLONE_VM|CLONE_VFORK), the child's sandbox
 * steps, execve of bash, until clone returns), and bare_exec: fork and execve of the same bash
 * with nothing in between, the baseline of exec. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/envfilter.h"
#include "process/reap.h"
#include "process/spawn.h"
#include "sandbox/filter.h"
#include "sandbox/landlock.h"
#include "trust/load.h"
#include "turn.h"
#include "util/cli.h"

#define ROUNDS 41

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *step, uint64_t first, uint64_t *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_u64);
	printf("%s %llu %llu\n", step, (unsigned long long)first, (unsigned long long)t[n / 2]);
}

static void fail(const char *step, const struct tn_error *err)
{
	fprintf(stderr, "startup: %s: %s\n", step, err->msg);
	exit(1);
}

static char **env_copy(char **env)
{
	int n = 0;
	char **c;

	while (env[n])
		n++;
	c = calloc((size_t)n + 1, sizeof(*c));
	for (int i = 0; c && i < n; i++)
		c[i] = strdup(env[i]);
	return c;
}

static void wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

/* plain_calls - as many cheap syscalls as spawn.c's child makes in one-shot
 * mode besides its few heavy ones: 62 rt_sigaction (every disposition to
 * SIG_DFL; a keeper's child makes only those its keeper needs). */
static int plain_calls(void)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };

	for (int sig = 1; sig <= 31; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &sa, NULL);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaction(sig, &sa, NULL);
	return 0;
}

/* fork with a close-on-exec pipe from the child: *fd is the read end in the
 * parent, the write end in the child. */
static int fork_pipe(pid_t *pid, int *fd)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) != 0 || (*pid = fork()) < 0)
		return -1;
	close(p[*pid == 0 ? 0 : 1]);
	*fd = p[*pid == 0 ? 1 : 0];
	return 0;
}

/* child_timed - in ROUNDS + 1 children, after no_new_privs: time
 * ll_restrict (which 0), sc_load (which 1) or plain_calls (2) there, and
 * report it. */
static void child_timed(const char *step, const struct ll_ruleset *ll, const struct sc_program *filter,
			int which)
{
	uint64_t t[ROUNDS], first = 0;

	for (int i = -1; i < ROUNDS; i++) {
		int p[2];
		uint64_t dt = 0;
		pid_t pid;

		if (pipe(p) < 0 || (pid = fork()) < 0) {
			perror("startup: fork");
			exit(1);
		}
		if (pid == 0) {
			uint64_t t0;
			int r;

			prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
			t0 = now_ns();
			r = which == 1 ? sc_load(filter) : which == 0 ? ll_restrict(ll) : plain_calls();
			dt = now_ns() - t0;
			_exit(r == 0 && write(p[1], &dt, sizeof(dt)) == sizeof(dt) ? 0 : 1);
		}
		close(p[1]);
		if (read(p[0], &dt, sizeof(dt)) != sizeof(dt)) {
			fprintf(stderr, "startup: %s failed\n", step);
			exit(1);
		}
		close(p[0]);
		wait_child(pid);
		*(i < 0 ? &first : &t[i]) = dt;
	}
	report(step, first, t, ROUNDS);
}

int main(int argc, char **argv, char **envp)
{
	char *cli_argv[] = { argv[0], "--", "true", NULL };
	struct tn_error err = { 0 };
	struct cli_options opt;
	struct load_result pol;
	static struct turn sb;
	struct spawn_plan plan;
	char **caller_env, **cmd_env, **cmd_argv;
	uint64_t t[ROUNDS], t_s[ROUNDS], first, first_s = 0, t0;
	bool exec_failed;
	int status;
	pid_t pid;

	(void)argc;
	reap_block_signals();
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (cli_parse(3, cli_argv, &opt, &err) < 0)
		fail("cli", &err);
	if (load_take_environ(envp, &caller_env, &err) < 0)
		fail("environ", &err);

	/* verify: trust roots, signature over the exact bytes, parsing. */
	for (int i = -1; i < ROUNDS; i++) {
		char **env = env_copy(caller_env);

		t0 = now_ns();
		if (load_policy(&opt, env, &pol, &err) < 0)
			fail("verify", &err);
		*(i < 0 ? &first : &t[i]) = now_ns() - t0;
		if (i < ROUNDS - 1)
			load_result_free(&pol);
	}
	report("verify", first, t, ROUNDS);
	if (chdir("/") != 0)
		return 1;

	for (int i = -1; i < ROUNDS; i++) {
		t0 = now_ns();
		if (envf_build(&pol.manifest->env, pol.manifest->home, pol.caller_env, &cmd_env, &err) < 0)
			fail("env", &err);
		cmd_argv = spawn_argv(cli_argv + 2, 1, false);
		*(i < 0 ? &first : &t[i]) = now_ns() - t0;
	}
	report("env", first, t, ROUNDS);

	/* The sandbox, by the table init/main.c runs (init/turn.c), each step
	 * ROUNDS times but those that run once. HOME: the first call is the real
	 * one (chown, chmod of podman's tmpfs); later calls find it set up. */
	sb.m = pol.manifest;
	sb.landlock.fd = -1;
	for (const struct turn_step *st = turn_steps; st->name; st++) {
		int n = st->once ? 1 : ROUNDS;

		for (int i = -1; i < n; i++) {
			if (st->once && i < 0)
				continue;
			t0 = now_ns();
			if (st->run(&sb, &err) < 0)
				fail(st->name, &err);
			*(i < 0 ? &first : &t[i]) = now_ns() - t0;
			if (st->once)
				first = t[0];
			if (i < n - 1 && st->undo)
				st->undo(&sb);
		}
		report(st->name, first, t, n);
		if (strcmp(st->name, "filter") == 0)
			printf("filter_insns %u %u\n", sb.filter.prog.len, sb.filter.prog.len);
	}

	sb.base = turn_base(&sb);
	plan = spawn_plan_from(&sb.base, cmd_argv, cmd_env, NULL, -1, -1, -1);
	for (int i = -1; i < ROUNDS; i++) {
		t0 = now_ns();
		if (spawn_command(&plan, &pid, &status, &exec_failed, &err) < 0)
			fail("exec", &err);
		*(i < 0 ? &first : &t[i]) = now_ns() - t0;
		wait_child(pid);
	}
	report("exec", first, t, ROUNDS);

	/* The baseline: fork, execve of the same bash, nothing in between; the
	 * same close-on-exec pipe tells when the exec happened. Then the same
	 * with setsid(2) before the execve (setsid_exec). */
	for (int i = -1; i < 2 * ROUNDS + 1; i++) {
		bool session = i >= ROUNDS;
		int fd;
		char c;

		t0 = now_ns();
		if (fork_pipe(&pid, &fd) < 0)
			fail("bare_exec", &(struct tn_error){ .code = errno, .msg = "fork" });
		if (pid == 0) {
			if (session)
				setsid();
			execve(plan.shell, cmd_argv, cmd_env);
			_exit(127);
		}
		while (read(fd, &c, 1) < 0 && errno == EINTR)
			;
		if (i == ROUNDS)
			first_s = now_ns() - t0;
		else if (session)
			t_s[i - ROUNDS - 1] = now_ns() - t0;
		else
			*(i < 0 ? &first : &t[i]) = now_ns() - t0;
		close(fd);
		wait_child(pid);
	}
	report("bare_exec", first, t, ROUNDS);
	report("setsid_exec", first_s, t_s, ROUNDS);

	/* Parts of exec, each timed in a child: fork alone (to the child's
	 * exit), and the kernel's work in the two sandbox calls that are not a
	 * plain flag (Landlock enforcement, seccomp filter attach). */
	for (int i = -1; i < ROUNDS; i++) {
		t0 = now_ns();
		pid = fork();
		if (pid == 0)
			_exit(0);
		wait_child(pid);
		*(i < 0 ? &first : &t[i]) = now_ns() - t0;
	}
	report("fork", first, t, ROUNDS);
	child_timed("landlock_restrict", &sb.landlock, &sb.filter, 0);
	child_timed("seccomp_attach", &sb.landlock, &sb.filter, 1);
	child_timed("plain_syscalls", &sb.landlock, &sb.filter, 2);
	return 0;
}
