/* call.c - see call.h. */
#define _GNU_SOURCE
#include "client/call.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "policy/events.h"
#include "policy/lineframe.h"
#include "policy/request.h"
#include "util/exit_codes.h"
#include "util/io.h"
#include "util/log.h"
#include "util/plat.h"

#define CALL_ID "call"

int call_send(int fd, json_t *req)
{
	char *s = json_dumps(req, JSON_COMPACT);
	size_t n;
	int r = 0;

	json_decref(req);
	if (!s)
		return -ENOMEM;
	n = strlen(s);
	if (n > EV_LINE_MAX) {
		log_line("call: the request is %zu bytes, more than the %d a line may hold (--stdin and --env count)",
			 n, EV_LINE_MAX);
		free(s);
		return -E2BIG;
	}
	r = io_send_all(fd, s, n);
	if (r == 0)
		r = io_send_all(fd, "\n", 1);
	free(s);
	return r;
}

int call_connect(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Whom fd is connected to, before a byte is sent (call_check_server in
 * call.h): SO_PEERCRED gives the
 * credentials of the process that called listen(2) on the other end (unix(7)),
 * which neither it nor anyone else can change afterwards. turninit listen runs
 * as root (docs/design.md); a command of the turn never does (the manifest
 * refuses uid 0) and may have put its own server at the path, where it would
 * read the request (command, env values, stdin) and answer with made-up
 * output and status. So the server's uid must be o->server_uid: 0 unless
 * --server-uid names the uid turninit runs as from where call runs (another
 * user namespace). Its callers ran call_check_peercred first. Returns 0, or
 * -1 after one line on stderr. */
int call_check_server(int fd, const struct cli_options *o, const char *who)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0) {
		log_errno(errno, "%s: the server at %s: SO_PEERCRED", who, o->socket_path);
		return -1;
	}
	if (cr.uid != o->server_uid) {
		log_line("%s: the server at %s runs as uid %u, not uid %u: it is not turninit listen, "
			 "which runs as %s, and may be a command's own server (--server-uid names another uid)",
			 who, o->socket_path, (unsigned)cr.uid, o->server_uid,
			 o->server_uid_given ? "that uid" : "root");
		return -1;
	}
	return 0;
}

int call_check_peercred(const char *who)
{
	struct tn_error err = { 0 };

	if (plat_peercred_check(who, &err) < 0) {
		log_line("%s", err.msg);
		return -1;
	}
	return 0;
}

/* The value --env spec asks for: VALUE of NAME=VALUE, else NAME's in envp (its
 * first entry, as one-shot mode takes it), else NULL: not set, not sent. */
static const char *call_env_value(const char *spec, char **envp)
{
	const char *eq = strchr(spec, '=');
	size_t n = strlen(spec);

	if (eq)
		return eq + 1;
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], spec, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

/* All of stdin (--stdin), at most CALL_STDIN_MAX bytes, in base64; NULL with
 * why set (whysz bytes) when there is more, or out of memory. */
static char *stdin_b64(char *why, size_t whysz)
{
	static uint8_t in[CALL_STDIN_MAX + 1];
	size_t len = 0, n;
	ssize_t r;
	char *b64;

	while ((r = read(0, in + len, sizeof(in) - len)) > 0 || (r < 0 && errno == EINTR))
		if (r > 0)
			len += (size_t)r;
	if (len > CALL_STDIN_MAX) {
		snprintf(why, whysz, "--stdin: more than %d bytes", CALL_STDIN_MAX);
		return NULL;
	}
	n = sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL);
	if (!(b64 = malloc(n)))
		return NULL; /* why says "out of memory" */
	sodium_bin2base64(b64, n, in, len, sodium_base64_VARIANT_ORIGINAL);
	return b64;
}

/* The exec request, or NULL after one line on stderr. Its env holds the names
 * of --env only, never the rest of call's environment: what the server (and
 * its audit log) sees of the caller is what the caller chose to send. */
static json_t *call_request(const struct cli_options *o, char **envp)
{
	struct rq_exec_args a = { .words = o->command, .n_words = o->n_command, .timeout_s = o->timeout_s };
	char why[320] = "out of memory", *b64 = NULL;
	json_t *req = NULL;
	int r = -ENOMEM;

	if (!(a.env = json_object()))
		goto fail;
	for (int i = 0; i < o->n_env; i++) {
		const char *spec = o->env[i], *value = call_env_value(spec, envp);
		const char *eq = strchr(spec, '=');
		int n = eq ? (int)(eq - spec) : (int)strlen(spec);
		char name[256];
		json_t *v;

		if (!value)
			continue;
		snprintf(name, sizeof(name), "%.*s", n, spec); /* cli_parse: a valid name */
		if (!(v = json_string(value))) {
			snprintf(why, sizeof(why), "--env %s: the value is not valid UTF-8", name);
			goto fail;
		}
		if (json_object_set_new(a.env, name, v))
			goto fail;
	}
	if (o->send_stdin && !(a.stdin_b64 = b64 = stdin_b64(why, sizeof(why))))
		goto fail;
	r = rq_pack_exec(CALL_ID, &a, &req);
	if (r == -EILSEQ)
		snprintf(why, sizeof(why), "the command is not valid UTF-8");
fail:
	if (r < 0)
		log_line("call: %s", why);
	json_decref(a.env);
	free(b64);
	return r < 0 ? NULL : req;
}

/* One event line: returns -1 to go on, or the exit status. */
static int call_event(const char *line, size_t len)
{
	struct ev_event ev;
	struct tn_error err = { 0 };
	int ret = -1;

	if (ev_parse(line, len, &ev, &err) < 0) {
		log_line("call: the server sent a line that is not an event (%s)", err.msg);
		return EXIT_REFUSED;
	}
	switch (ev.kind) {
	case EV_OUTPUT: (void)io_write_all(ev.err_stream ? 2 : 1, ev.data, ev.len); break;
	case EV_EXIT:
		ret = ev.timed_out ? EXIT_TIMED_OUT : ev.has_code ? ev.code : EXIT_SIGNAL_BASE + ev.signal;
		break;
	case EV_ERROR:
		log_line("call: %s", ev.message);
		ret = EXIT_REFUSED;
		break;
	case EV_STARTED:
	case EV_INFO: /* never asked for */
	case EV_NET:  /* the turn's proxy, not this command's: the server logs it */
	case EV_TURN_END: /* the turn ended: the connection closes next */ break;
	}
	ev_clear(&ev);
	return ret;
}

int call_main(const struct cli_options *o, char **envp)
{
	static char buf[EV_LINE_MAX + EV_CHUNK];
	/* an event line may fill buf, its newline excluded */
	struct lf_frame frame = { .max = sizeof(buf) - 1 };
	size_t len = 0;
	sigset_t set;
	int fd, sfd, ret = -1;
	json_t *req;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	/* The whole request first: nothing of it is decided once connected. */
	req = call_request(o, envp);
	if (!req)
		return EXIT_REFUSED;
	if (call_check_peercred("call") < 0) {
		json_decref(req);
		return EXIT_REFUSED;
	}
	fd = call_connect(o->socket_path);
	if (fd < 0) {
		log_errno(errno, "call: %s", o->socket_path);
		json_decref(req);
		return EXIT_REFUSED;
	}
	if (call_check_server(fd, o, "call") < 0) {
		close(fd);
		json_decref(req);
		return EXIT_REFUSED;
	}
	/* A refused peer may find the connection closed before its request is
	 * sent: read on, the server's error event says why. */
	if (call_send(fd, req) == -E2BIG)
		return EXIT_REFUSED;
	while (ret < 0) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
		struct signalfd_siginfo si;
		size_t start = 0, n_line;
		const char *line;
		enum lf_kind k = LF_MORE;
		ssize_t n;

		if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
			break;
		while (sfd >= 0 && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			call_send(fd, si.ssi_signo == SIGTERM ?
					      rq_pack_op(RQ_CANCEL, CALL_ID, NULL) :
					      rq_pack_op(RQ_SIGNAL, CALL_ID,
							 si.ssi_signo == SIGINT ? "INT" : "HUP"));
		}
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_line("call: the connection closed before the command ended");
			return EXIT_REFUSED;
		}
		len += (size_t)n;
		while (ret < 0 && (k = lf_next(&frame, buf, len, &start, &line, &n_line)) == LF_LINE)
			ret = call_event(line, n_line);
		if (ret < 0 && k == LF_LONG) {
			log_line("call: an event line is too long");
			return EXIT_REFUSED;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
	}
	close(fd);
	return ret < 0 ? EXIT_REFUSED : ret;
}
