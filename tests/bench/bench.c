/* bench.c - the measuring tools of `make bench` (tests/bench/run.sh), one static
 * binary with a subcommand each. Every figure is printed as "KEY VALUE" lines
 * on stdout, times in nanoseconds of CLOCK_MONOTONIC.
 *
 *   bench spawn [--setsid] [--latency FILE] [-j J] N ARGV...
 *                                N times fork+execve(ARGV) and wait, one after
 *                                the other, or J at a time (-j; a new one as
 *                                soon as one ends) (--setsid: each child calls
 *                                setsid(2) first, as turninit's do): total_ns.
 *                                --latency FILE (one at a time, with ARGV
 *                                running `bench stamp FILE`): started_ns, the
 *                                median from just before fork() to the end of
 *                                file of a close-on-exec pipe whose write end
 *                                only the child holds (its execve), and
 *                                exit_ns, the median from the command's stamp
 *                                to waitpid(2) returning
 *   bench serve [-j J] N CMD [--probe SH] [--latency FILE] [--hold CMD2] -- SERVER_ARGV...
 *                                start SERVER_ARGV (turninit serve, or podman
 *                                run -i ... serve) on pipes, run 3 warm-up
 *                                commands, then N commands CMD one after the
 *                                other (or J at a time: -j), each until its
 *                                exit event: total_ns (the N commands),
 *                                whole_ns (from starting the server to its
 *                                exit after end of stdin).
 *                                --probe SH runs `sh -c SH` after the warm-up
 *                                and after the N commands (RSS readings).
 *                                --latency FILE (with CMD `bench stamp FILE`):
 *                                started_ns, the median from writing a request
 *                                to reading its started event, and exit_ns,
 *                                the median from the command's last stamp
 *                                (written to FILE just before it exits) to
 *                                reading its exit event.
 *                                --hold CMD2 runs CMD2 after the warm-up, and
 *                                waits for its first output (bench hold's
 *                                "held N"),
 *                                before the probe; it is cancelled at the end.
 *   bench mcp N CMD -- SERVER_ARGV...
 *                                start SERVER_ARGV (turninit mcp) on pipes, the
 *                                initialize and notifications/initialized
 *                                handshake, 3 warm-up calls, then N tools/call
 *                                of the tool bash with the command CMD, one
 *                                after the other, each from writing the
 *                                request to reading its response (the line
 *                                with its id; notifications are skipped):
 *                                total_ns (the N calls), call_ns (the median)
 *   bench calls [--as UID:GID] N SOCKET SERVER_ARGV... -- CALL_ARGV...
 *                                start SERVER_ARGV (turninit listen --socket
 *                                SOCKET, its stdout to /dev/null), wait until
 *                                SOCKET listens (/proc/net/unix), run
 *                                CALL_ARGV (turninit call --socket SOCKET --
 *                                CMD) 3 times to warm up, then N times one
 *                                after the other, each from fork to waitpid,
 *                                then SIGTERM the server: total_ns (the N
 *                                runs), call_ns (the median). --as: each run
 *                                of CALL_ARGV drops to UID:GID (setgroups,
 *                                setgid, setuid) before its execve; the
 *                                server keeps the harness's uid. SERVER_ARGV
 *                                ends at the first "--"
 *   bench stamp FILE             write CLOCK_MONOTONIC now to FILE, exit 0
 *   bench getppid N              N getppid(2) calls: total_ns
 *   bench timeit ARGV...         run ARGV, stdout to /dev/null: total_ns
 *   bench orphans N              N children orphaned to PID 1, then released
 *                                at once: reap_ns until none is left in /proc
 *                                (zombies included), left (what is left then)
 *   bench connect [-p] N ADDR PORT
 *                                N TCP connections to ADDR:PORT (an IPv4
 *                                literal), one after the other, each closed
 *                                when made: connect_ns, the median; with -p
 *                                through the proxy $HTTP_PROXY names (CONNECT,
 *                                until its 200 answer ends), and syscall_ns,
 *                                the median connect(2) to the proxy's port
 *                                alone
 *   bench accept N               listen on 127.0.0.1 (a port the kernel
 *                                picks), then N times a TCP socket, its
 *                                connect(2) to that port, the accept(2) of
 *                                it, both closed (the client first):
 *                                connect_ns, the median connect(2) alone,
 *                                and accept_ns, from socket(2) to accept(2)
 *                                returning
 *   bench fetch [-p] ADDR PORT PATH
 *                                GET PATH over HTTP/1.0 (-p: in a CONNECT
 *                                tunnel), read to the end: total_ns, bytes
 *                                (the body's), mib_s
 *   bench hold -p N ADDR PORT PATH
 *                                N tunnels through the proxy, a GET PATH sent
 *                                in each and nothing read (a stalled peer),
 *                                then "held N" on stdout, then waits for
 *                                SIGTERM (serve's cancel) and exits 0
 *
 * Exit status 0, or 1 with one line on stderr. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < 0) {
		fprintf(stderr, "bench: not a count: %s\n", s);
		exit(2);
	}
	return v;
}

static int new_session;
static long as_uid = -1, as_gid = -1; /* --as of calls: -1, none */

/* An optional "-j J" at the front of argv: J (at least 1), else 1; 0 when J
 * is not a count. argc and argv move past it. */
static long take_jobs(int *argc, char ***argv)
{
	long jobs = 1;

	if (*argc > 1 && strcmp((*argv)[0], "-j") == 0) {
		jobs = num((*argv)[1]);
		*argc -= 2;
		*argv += 2;
	}
	return jobs;
}

/* start argv (with setsid(2) first under --setsid, as_uid and as_gid under
 * --as); stdout to /dev/null when quiet. Returns its pid. */
static pid_t start_one(char **argv, int quiet)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (new_session && setsid() < 0)
			_exit(126);
		/* groups first: setuid(2) takes away the right to change them */
		if (as_uid >= 0 &&
		    (setgroups(0, NULL) < 0 || setgid((gid_t)as_gid) < 0 || setuid((uid_t)as_uid) < 0))
			_exit(126);
		if (quiet) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0)
				dup2(fd, 1);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* run argv once (start_one) and wait. Returns the wait status. */
static int run_once(char **argv, int quiet)
{
	int status;
	pid_t pid = start_one(argv, quiet);

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	return status;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return n ? v[n / 2] : 0;
}

static uint64_t read_stamp(const char *file)
{
	char buf[32] = "";
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (r <= 0) {
		fprintf(stderr, "bench: no stamp in %s\n", file);
		exit(1);
	}
	buf[r] = '\0';
	return strtoull(buf, NULL, 10);
}

/* run argv once as spawn --latency times it: the child (setsid(2) first
 * under --setsid) holds the only write end of a close-on-exec pipe, so its
 * end of file is the execve. ret_exec: from just before fork() to that end
 * of file; ret_exit: from the stamp argv wrote to stamp to waitpid(2)
 * returning. Returns the wait status. */
static int run_timed(char **argv, const char *stamp, uint64_t *ret_exec, uint64_t *ret_exit)
{
	int gate[2], status;
	uint64_t t0, t_exec, t_done;
	ssize_t r;
	char c;
	pid_t pid;

	if (pipe2(gate, O_CLOEXEC) < 0)
		die("pipe2");
	t0 = now_ns();
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (new_session && setsid() < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(gate[1]);
	while ((r = read(gate[0], &c, 1)) < 0 && errno == EINTR)
		;
	t_exec = now_ns();
	if (r != 0)
		die("read of the exec pipe");
	close(gate[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	t_done = now_ns();
	if (status == 0) {
		*ret_exec = t_exec - t0;
		*ret_exit = t_done - read_stamp(stamp);
	}
	return status;
}

static int cmd_spawn(int argc, char **argv)
{
	long n;
	uint64_t t0, *lat_start = NULL, *lat_exit = NULL;
	long jobs, running = 0, started = 0;
	const char *stamp = NULL;

	for (;;) {
		if (argc > 0 && strcmp(argv[0], "--setsid") == 0) {
			new_session = 1;
			argc--;
			argv++;
		} else if (argc > 1 && strcmp(argv[0], "--latency") == 0) {
			stamp = argv[1];
			argc -= 2;
			argv += 2;
		} else {
			break;
		}
	}
	jobs = take_jobs(&argc, &argv);
	if (argc < 2 || jobs < 1 || (stamp && jobs != 1))
		return 2;
	n = num(argv[0]);
	if (stamp && (!(lat_start = calloc((size_t)n + 1, sizeof(uint64_t))) ||
		      !(lat_exit = calloc((size_t)n + 1, sizeof(uint64_t)))))
		die("calloc");
	t0 = now_ns();
	if (jobs == 1) {
		for (long i = 0; i < n; i++)
			if ((stamp ? run_timed(argv + 1, stamp, &lat_start[i], &lat_exit[i]) :
				     run_once(argv + 1, 0)) != 0) {
				fprintf(stderr, "bench: spawn: %s failed\n", argv[1]);
				return 1;
			}
	} else {
		while (started < n || running > 0) {
			int status;

			while (running < jobs && started < n) {
				start_one(argv + 1, 0);
				running++;
				started++;
			}
			if (wait(&status) < 0) {
				if (errno == EINTR)
					continue;
				die("wait");
			}
			running--;
			if (status != 0) {
				fprintf(stderr, "bench: spawn: %s failed\n", argv[1]);
				return 1;
			}
		}
	}
	printf("total_ns %llu\n", (unsigned long long)(now_ns() - t0));
	if (stamp)
		printf("started_ns %llu\nexit_ns %llu\n", (unsigned long long)median(lat_start, n),
		       (unsigned long long)median(lat_exit, n));
	return 0;
}

/* --- serve client ------------------------------------------------------ */

static int srv_in = -1, srv_out = -1;
static char rbuf[1 << 16];
static size_t rlen;

/* read_line - the next line from the server's stdout into line (NUL-ended,
 * truncated to cap). Returns 0, or -1 at end of file. */
static int read_line(char *line, size_t cap)
{
	for (;;) {
		char *nl = memchr(rbuf, '\n', rlen);

		if (nl) {
			size_t n = (size_t)(nl - rbuf), c = n < cap - 1 ? n : cap - 1;

			memcpy(line, rbuf, c);
			line[c] = '\0';
			memmove(rbuf, nl + 1, rlen - n - 1);
			rlen -= n + 1;
			return 0;
		}
		if (rlen == sizeof(rbuf))
			rlen = 0; /* a line longer than the buffer: not an exit event */
		ssize_t r = read(srv_out, rbuf + rlen, sizeof(rbuf) - rlen);

		if (r == 0)
			return -1;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("read");
		}
		rlen += (size_t)r;
	}
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		p += w;
		n -= (size_t)w;
	}
}

/* start_server - argv (turninit serve or mcp, or podman run -i ...) with its
 * stdin and stdout on pipes: srv_in, srv_out. Returns its pid. */
static pid_t start_server(char **argv)
{
	int in[2], out[2];
	pid_t pid;

	signal(SIGPIPE, SIG_IGN);
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		die("pipe2");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	srv_in = in[1];
	srv_out = out[0];
	return pid;
}

/* end_server - close the server's stdin (the end of its session), read its
 * output to the end, wait for it. */
static void end_server(pid_t pid)
{
	char sink[64];
	int status;

	close(srv_in);
	while (read_line(sink, sizeof(sink)) == 0)
		;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
}

static void send_exec(const char *cmd, long id)
{
	char req[4096];

	snprintf(req, sizeof(req), "{\"op\":\"exec\",\"id\":\"b%ld\",\"command\":\"%s\"}\n", id, cmd);
	write_all(srv_in, req, strlen(req));
}

/* The next started or exit event: its id number into *id; 1 for exit (with
 * *ok: it exited 0), 0 for started. An error event is fatal. */
static int next_event(long *id, int *ok)
{
	char line[4096];

	for (;;) {
		const char *p;

		if (read_line(line, sizeof(line)) < 0) {
			fprintf(stderr, "bench: serve: the server closed its output\n");
			exit(1);
		}
		if (strstr(line, "\"event\":\"error\"")) {
			fprintf(stderr, "bench: serve: %s\n", line);
			exit(1);
		}
		if (!(p = strstr(line, "\"id\":\"b")))
			continue;
		*id = strtol(p + 7, NULL, 10);
		if (strstr(line, "\"event\":\"started\""))
			return 0;
		if (strstr(line, "\"event\":\"exit\"")) {
			*ok = strstr(line, "\"code\":0,") != NULL;
			return 1;
		}
	}
}

/* one command through the server, until its exit event; 0 when it exited 0.
 * ret_started (may be NULL): when its started event was read. */
static int serve_one(const char *cmd, long id, uint64_t *ret_started)
{
	long got;
	int ok = 0;

	send_exec(cmd, id);
	for (;;) {
		int ev = next_event(&got, &ok);

		if (got != id)
			continue;
		if (ev == 0 && ret_started)
			*ret_started = now_ns();
		if (ev == 1)
			return ok ? 0 : 1;
	}
}

/* The --hold command: sent with its own id; its "held" output awaited. */
#define HOLD_ID "2000000000"
#define HOLD_CANCEL "{\"op\":\"cancel\",\"id\":\"b" HOLD_ID "\"}\n"
static void hold_start(const char *cmd)
{
	char line[4096];

	send_exec(cmd, atol(HOLD_ID));
	for (;;) {
		if (read_line(line, sizeof(line)) < 0) {
			fprintf(stderr, "bench: serve: the server closed its output\n");
			exit(1);
		}
		if (!strstr(line, "\"id\":\"b" HOLD_ID "\""))
			continue;
		if (strstr(line, "\"event\":\"output\""))
			return; /* its only output, "held N", comes when all are open */
		if (strstr(line, "\"event\":\"exit\"") || strstr(line, "\"event\":\"error\"")) {
			fprintf(stderr, "bench: serve: --hold: %s\n", line);
			exit(1);
		}
	}
}

static int cmd_serve(int argc, char **argv)
{
	long n, jobs = take_jobs(&argc, &argv);
	const char *cmd, *probe = NULL, *stamp = NULL, *hold = NULL;
	uint64_t t_start, t0, t1, *lat_start = NULL, *lat_exit = NULL;
	pid_t pid;
	int i;

	if (argc < 2 || jobs < 1)
		return 2;
	n = num(argv[0]);
	cmd = argv[1];
	for (i = 2; argc > i + 1 && argv[i][0] == '-' && argv[i][1] == '-' && argv[i][2]; i += 2) {
		if (strcmp(argv[i], "--probe") == 0)
			probe = argv[i + 1];
		else if (strcmp(argv[i], "--latency") == 0)
			stamp = argv[i + 1];
		else if (strcmp(argv[i], "--hold") == 0)
			hold = argv[i + 1];
		else
			return 2;
	}
	if (argc < i + 2 || strcmp(argv[i], "--") != 0 || (stamp && jobs != 1))
		return 2;
	argv += i + 1;
	if (strchr(cmd, '"') || strchr(cmd, '\\') || (hold && (strchr(hold, '"') || strchr(hold, '\\')))) {
		fprintf(stderr, "bench: serve: CMD must not need JSON escapes\n");
		return 2;
	}
	if (stamp && (!(lat_start = calloc((size_t)n + 1, sizeof(uint64_t))) ||
		      !(lat_exit = calloc((size_t)n + 1, sizeof(uint64_t)))))
		die("calloc");
	t_start = now_ns();
	pid = start_server(argv);
	for (long w = 0; w < 3; w++)
		if (serve_one(cmd, 1000000000 + w, NULL) != 0) {
			fprintf(stderr, "bench: serve: warm-up command failed\n");
			return 1;
		}
	if (hold)
		hold_start(hold);
	if (probe && system(probe) != 0)
		fprintf(stderr, "bench: serve: probe failed\n");
	t0 = now_ns();
	if (jobs == 1) {
		for (long k = 0; k < n; k++) {
			uint64_t sent = now_ns(), started = 0;

			if (serve_one(cmd, k, stamp ? &started : NULL) != 0) {
				fprintf(stderr, "bench: serve: command %ld failed\n", k);
				return 1;
			}
			if (stamp) {
				uint64_t done = now_ns();

				lat_start[k] = started - sent;
				lat_exit[k] = done - read_stamp(stamp);
			}
		}
	} else {
		long sent = 0, running = 0, got;
		int ok;

		while (sent < n || running > 0) {
			while (running < jobs && sent < n) {
				send_exec(cmd, sent++);
				running++;
			}
			if (next_event(&got, &ok) == 1) {
				if (!ok) {
					fprintf(stderr, "bench: serve: command %ld failed\n", got);
					return 1;
				}
				running--;
			}
		}
	}
	t1 = now_ns();
	if (probe && system(probe) != 0)
		fprintf(stderr, "bench: serve: probe failed\n");
	if (hold)
		write_all(srv_in, HOLD_CANCEL, strlen(HOLD_CANCEL));
	end_server(pid);
	printf("total_ns %llu\nwhole_ns %llu\n", (unsigned long long)(t1 - t0),
	       (unsigned long long)(now_ns() - t_start));
	if (stamp)
		printf("started_ns %llu\nexit_ns %llu\n", (unsigned long long)median(lat_start, n),
		       (unsigned long long)median(lat_exit, n));
	return 0;
}

/* --- MCP client ------------------------------------------------------- */

static char mline[sizeof(rbuf)];

/* has_id - whether line holds "id":id, the number followed by ',' or '}'.
 * Inside a JSON string a quote is escaped, so only a key matches. */
static int has_id(const char *line, long id)
{
	for (const char *p = line; (p = strstr(p, "\"id\":")); p += 5) {
		char *end;
		long v = strtol(p + 5, &end, 10);

		if (end != p + 5 && v == id && (*end == ',' || *end == '}'))
			return 1;
	}
	return 0;
}

/* mcp_request - one JSON-RPC request; lines are read up to the response with
 * its id (notifications and anything else are skipped). Returns 0 for a
 * result, 1 (after the line on stderr) for an error response or a tool
 * result with isError true. */
static int mcp_request(long id, const char *method, const char *params)
{
	char req[8192];

	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":%s}\n", id,
		 method, params);
	write_all(srv_in, req, strlen(req));
	for (;;) {
		if (read_line(mline, sizeof(mline)) < 0) {
			fprintf(stderr, "bench: mcp: the server closed its output\n");
			exit(1);
		}
		if (!has_id(mline, id))
			continue;
		if (strstr(mline, "\"error\":{") || strstr(mline, "\"isError\":true")) {
			fprintf(stderr, "bench: mcp: %s\n", mline);
			return 1;
		}
		return 0;
	}
}

#define MCP_INIT \
	"{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}," \
	"\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}"
#define MCP_INITIALIZED "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"

static int cmd_mcp(int argc, char **argv)
{
	char params[4096];
	long n, id = 1;
	uint64_t t0, total, *t;
	pid_t pid;

	if (argc < 4 || strcmp(argv[2], "--") != 0)
		return 2;
	n = num(argv[0]);
	if (strchr(argv[1], '"') || strchr(argv[1], '\\') || strlen(argv[1]) > 3000) {
		fprintf(stderr, "bench: mcp: CMD must not need JSON escapes, and fit 3000 bytes\n");
		return 2;
	}
	if (!(t = calloc((size_t)n + 1, sizeof(*t))))
		die("calloc");
	snprintf(params, sizeof(params), "{\"name\":\"bash\",\"arguments\":{\"command\":\"%s\"}}", argv[1]);
	pid = start_server(argv + 3);
	if (mcp_request(0, "initialize", MCP_INIT) != 0)
		return 1;
	write_all(srv_in, MCP_INITIALIZED, strlen(MCP_INITIALIZED));
	for (int w = 0; w < 3; w++)
		if (mcp_request(id++, "tools/call", params) != 0) {
			fprintf(stderr, "bench: mcp: warm-up call failed\n");
			return 1;
		}
	t0 = now_ns();
	for (long k = 0; k < n; k++) {
		uint64_t sent = now_ns();

		if (mcp_request(id++, "tools/call", params) != 0) {
			fprintf(stderr, "bench: mcp: call %ld failed\n", k);
			return 1;
		}
		t[k] = now_ns() - sent;
	}
	total = now_ns() - t0;
	end_server(pid);
	printf("total_ns %llu\ncall_ns %llu\n", (unsigned long long)total, (unsigned long long)median(t, n));
	return 0;
}

/* --- turninit call against turninit listen ------------------------------- */

/* take_ids - "UID:GID" (--as) into *uid and *gid. */
static void take_ids(const char *s, long *uid, long *gid)
{
	char u[32];
	const char *c = strchr(s, ':');

	if (!c || c == s || (size_t)(c - s) >= sizeof(u)) {
		fprintf(stderr, "bench: --as: not UID:GID: %s\n", s);
		exit(2);
	}
	memcpy(u, s, (size_t)(c - s));
	u[c - s] = '\0';
	*uid = num(u);
	*gid = num(c + 1);
}

/* listening - whether a unix socket bound to path listens, from this
 * network namespace's /proc/net/unix: a line whose flags hold __SO_ACCEPTCON
 * (0x10000, set by listen(2)) and whose path is path. Nothing connects, so
 * the server has no peer to refuse and log. */
static int listening(const char *path)
{
	char line[512], p[256];
	unsigned long flags;
	FILE *f = fopen("/proc/net/unix", "re");
	int found = 0;

	if (!f)
		die("/proc/net/unix");
	/* Num RefCount Protocol Flags Type St Inode Path (the header fails %lx) */
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %lx %*s %*s %*s %255s", &flags, p) == 2)
			found = (flags & 0x10000) && strcmp(p, path) == 0;
	fclose(f);
	return found;
}

/* calls_fail - "WHAT K failed" on stderr, the server ended (SIGTERM).
 * Returns 1. */
static int calls_fail(pid_t server, const char *what, long k)
{
	fprintf(stderr, "bench: calls: %s %ld failed\n", what, k);
	kill(server, SIGTERM);
	return 1;
}

static int cmd_calls(int argc, char **argv)
{
	long n, uid = -1, gid = -1;
	const char *sock;
	char **call;
	uint64_t t0, total, deadline, *t;
	int i, status;
	pid_t server;

	if (argc > 1 && strcmp(argv[0], "--as") == 0) {
		take_ids(argv[1], &uid, &gid);
		argc -= 2;
		argv += 2;
	}
	if (argc < 5)
		return 2;
	n = num(argv[0]);
	sock = argv[1];
	for (i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
		;
	if (i == 2 || i + 1 >= argc)
		return 2;
	argv[i] = NULL; /* SERVER_ARGV ends here */
	call = argv + i + 1;
	if (!(t = calloc((size_t)n + 1, sizeof(*t))))
		die("calloc");
	/* a socket left there would read as listening before the server does */
	if (unlink(sock) < 0 && errno != ENOENT)
		die(sock);
	server = start_one(argv + 2, 1); /* as the harness's uid: --as is not set yet */
	as_uid = uid;
	as_gid = gid;
	deadline = now_ns() + 30ull * 1000000000u;
	while (!listening(sock)) {
		if (waitpid(server, &status, WNOHANG) == server) {
			fprintf(stderr, "bench: calls: %s exited (status %d) before %s listened\n", argv[2],
				WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), sock);
			return 1;
		}
		if (now_ns() > deadline) {
			fprintf(stderr, "bench: calls: nothing listens at %s after 30 s\n", sock);
			kill(server, SIGTERM);
			return 1;
		}
		usleep(1000);
	}
	for (long w = 0; w < 3; w++)
		if (run_once(call, 1) != 0)
			return calls_fail(server, "warm-up call", w);
	t0 = now_ns();
	for (long k = 0; k < n; k++) {
		uint64_t s0 = now_ns();

		if (run_once(call, 1) != 0)
			return calls_fail(server, "call", k);
		t[k] = now_ns() - s0;
	}
	total = now_ns() - t0;
	kill(server, SIGTERM);
	while (waitpid(server, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	printf("total_ns %llu\ncall_ns %llu\n", (unsigned long long)total, (unsigned long long)median(t, n));
	return 0;
}

static int cmd_stamp(const char *file)
{
	char buf[32];
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int len = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)now_ns());

	if (fd < 0 || write(fd, buf, (size_t)len) != len)
		die(file);
	_exit(0);
}

/* --- syscalls, one program --------------------------------------------- */

static int cmd_getppid(char **argv)
{
	long n = num(argv[0]);
	uint64_t t0 = now_ns();

	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	printf("total_ns %llu\n", (unsigned long long)(now_ns() - t0));
	return 0;
}

static int cmd_timeit(char **argv)
{
	uint64_t t0 = now_ns();
	int status = run_once(argv, 1);

	printf("total_ns %llu\n", (unsigned long long)(now_ns() - t0));
	return status == 0 ? 0 : 1;
}

/* --- network: direct, or through turninit's proxy ------------------------- */

/* the time of tcp_to's last connect(2), ns */
static uint64_t last_connect_ns;

/* tcp_to - a connected TCP socket to the IPv4 literal addr:port, or -1. */
static int tcp_to(const char *addr, int port)
{
	uint64_t t0;

	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd;

	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "bench: %s: not an IPv4 address\n", addr);
		exit(1);
	}
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		die("socket");
	t0 = now_ns();
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("connect");
	last_connect_ns = now_ns() - t0;
	return fd;
}

/* proxy_port - the port of $HTTP_PROXY (http://127.0.0.1:PORT, turninit's). */
static int proxy_port(void)
{
	const char *v = getenv("HTTP_PROXY"), *c = v ? strrchr(v, ':') : NULL;

	if (!c || atoi(c + 1) <= 0) {
		fprintf(stderr, "bench: -p: no port in HTTP_PROXY\n");
		exit(1);
	}
	return atoi(c + 1);
}

/* open_to - a stream to addr:port, direct, or (via) a tunnel of the proxy
 * whose answer's head has been read. */
static int open_to(const char *addr, int port, int via)
{
	char req[256], head[1024];
	size_t got = 0;
	int fd;

	if (!via)
		return tcp_to(addr, port);
	fd = tcp_to("127.0.0.1", proxy_port());
	snprintf(req, sizeof(req), "CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n", addr, port, addr, port);
	write_all(fd, req, strlen(req));
	/* byte by byte: nothing of the tunnel's own data is read here */
	while (got < sizeof(head) - 1 && (got < 4 || memcmp(head + got - 4, "\r\n\r\n", 4) != 0)) {
		ssize_t r = read(fd, head + got, 1);

		if (r <= 0)
			die("proxy answer");
		got++;
	}
	head[got] = '\0';
	if (strncmp(head, "HTTP/1.1 200", 12) != 0) {
		fprintf(stderr, "bench: proxy: %.*s\n", (int)strcspn(head, "\r"), head);
		exit(1);
	}
	return fd;
}

static int take_via(int *argc, char ***argv)
{
	if (*argc > 0 && strcmp((*argv)[0], "-p") == 0) {
		(*argc)--;
		(*argv)++;
		return 1;
	}
	return 0;
}

static int cmd_connect(int argc, char **argv)
{
	int via = take_via(&argc, &argv);
	long n;
	uint64_t *t, *sys;

	if (argc != 3 || (n = num(argv[0])) < 1)
		return 2;
	if (!(t = calloc((size_t)n, sizeof(*t))) || !(sys = calloc((size_t)n, sizeof(*sys))))
		die("calloc");
	for (long i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		close(open_to(argv[1], atoi(argv[2]), via));
		t[i] = now_ns() - t0;
		sys[i] = last_connect_ns;
	}
	printf("connect_ns %llu\n", (unsigned long long)median(t, n));
	if (via)
		printf("syscall_ns %llu\n", (unsigned long long)median(sys, n));
	return 0;
}

/* bench accept: connects to a listener of the command's own on loopback,
 * the case seccomp-notify isolation answers by looking the port's listener
 * up in /proc (docs/manifest.md, "By seccomp user notification"). */
static int cmd_accept(char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	long n = num(argv[0]);
	uint64_t *t, *c;
	int lfd;

	if (n < 1)
		return 2;
	if (!(t = calloc((size_t)n, sizeof(*t))) || !(c = calloc((size_t)n, sizeof(*c))))
		die("calloc");
	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		die("socket");
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 16) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len) < 0)
		die("listen on 127.0.0.1");
	for (long i = 0; i < n; i++) {
		uint64_t t0 = now_ns(), t1;
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), afd;

		if (fd < 0)
			die("socket");
		t1 = now_ns();
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			die("connect to the own listener");
		c[i] = now_ns() - t1;
		if ((afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			die("accept");
		t[i] = now_ns() - t0;
		close(fd);
		close(afd);
	}
	printf("connect_ns %llu\naccept_ns %llu\n", (unsigned long long)median(c, n),
	       (unsigned long long)median(t, n));
	return 0;
}

static int cmd_fetch(int argc, char **argv)
{
	int via = take_via(&argc, &argv), fd;
	static char buf[1 << 17];
	unsigned long long bytes = 0;
	char req[512], *body = NULL;
	uint64_t t0, dt;
	ssize_t r;

	if (argc != 3)
		return 2;
	t0 = now_ns();
	fd = open_to(argv[0], atoi(argv[1]), via);
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s:%s\r\n\r\n", argv[2], argv[0], argv[1]);
	write_all(fd, req, strlen(req));
	while ((r = read(fd, buf, sizeof(buf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("read");
		}
		/* the body starts after the head's blank line (in the first read) */
		if (!body && (body = memmem(buf, (size_t)r, "\r\n\r\n", 4)))
			r -= body + 4 - buf;
		bytes += (unsigned long long)r;
	}
	dt = now_ns() - t0;
	printf("total_ns %llu\nbytes %llu\nmib_s %.1f\n", (unsigned long long)dt, bytes,
	       (double)bytes / 1048576.0 / ((double)dt / 1e9));
	return 0;
}

static volatile sig_atomic_t held_done;
static void on_term(int sig)
{
	(void)sig;
	held_done = 1;
}

static int cmd_hold(int argc, char **argv)
{
	int via = take_via(&argc, &argv);
	char req[512];
	long n;

	if (!via || argc != 4 || (n = num(argv[0])) < 1)
		return 2;
	signal(SIGTERM, on_term);
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s:%s\r\n\r\n", argv[3], argv[1], argv[2]);
	for (long i = 0; i < n; i++)
		write_all(open_to(argv[1], atoi(argv[2]), via), req, strlen(req));
	printf("held %ld\n", n);
	fflush(stdout);
	while (!held_done)
		pause();
	return 0;
}

/* --- orphans ----------------------------------------------------------- */

/* The processes in this PID namespace's /proc, zombies included. */
static long count_procs(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long n = 0;

	if (!d)
		die("opendir /proc");
	while ((e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			n++;
	closedir(d);
	return n;
}

static int cmd_orphans(char **argv)
{
	long n = num(argv[0]), before, left;
	int gate[2], status;
	uint64_t t0, deadline;
	char c;
	pid_t mid;

	before = count_procs(); /* PID 1 and this process */
	if (pipe(gate) < 0)
		die("pipe");
	mid = fork();
	if (mid < 0)
		die("fork");
	if (mid == 0) {
		/* The middle process: starts n children that wait on the gate,
		 * then exits, so they are orphaned to PID 1. */
		close(gate[1]);
		for (long i = 0; i < n; i++) {
			pid_t p = fork();

			if (p < 0) {
				fprintf(stderr, "bench: orphans: fork %ld: %s\n", i, strerror(errno));
				_exit(1);
			}
			if (p == 0) {
				while (read(gate[0], &c, 1) < 0 && errno == EINTR)
					;
				_exit(0);
			}
		}
		_exit(0);
	}
	close(gate[0]);
	while (waitpid(mid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	if (count_procs() < before + n) {
		fprintf(stderr, "bench: orphans: fewer than %ld orphans\n", n);
		return 1;
	}
	/* Release them all at once; time until PID 1 has reaped every one. */
	t0 = now_ns();
	close(gate[1]);
	deadline = t0 + 60ull * 1000000000u;
	while ((left = count_procs() - before) > 0 && now_ns() < deadline)
		usleep(500);
	printf("reap_ns %llu\nleft %ld\n", (unsigned long long)(now_ns() - t0), left);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "spawn") == 0)
		return cmd_spawn(argc - 2, argv + 2);
	if (argc >= 4 && strcmp(argv[1], "serve") == 0)
		return cmd_serve(argc - 2, argv + 2);
	if (argc >= 6 && strcmp(argv[1], "mcp") == 0)
		return cmd_mcp(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "calls") == 0)
		return cmd_calls(argc - 2, argv + 2);
	if (argc == 3 && strcmp(argv[1], "getppid") == 0)
		return cmd_getppid(argv + 2);
	if (argc >= 3 && strcmp(argv[1], "timeit") == 0)
		return cmd_timeit(argv + 2);
	if (argc == 3 && strcmp(argv[1], "orphans") == 0)
		return cmd_orphans(argv + 2);
	if (argc == 3 && strcmp(argv[1], "stamp") == 0)
		return cmd_stamp(argv[2]);
	if (argc >= 2 && strcmp(argv[1], "connect") == 0)
		return cmd_connect(argc - 2, argv + 2);
	if (argc == 3 && strcmp(argv[1], "accept") == 0)
		return cmd_accept(argv + 2);
	if (argc >= 2 && strcmp(argv[1], "fetch") == 0)
		return cmd_fetch(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "hold") == 0)
		return cmd_hold(argc - 2, argv + 2);
	fprintf(stderr,
		"usage: bench spawn|serve|mcp|calls|getppid|timeit|orphans|stamp|connect|accept|fetch|hold ... (see bench.c)\n");
	return 2;
}
