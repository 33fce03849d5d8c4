/* call.c - see call.h. */
#define _GNU_SOURCE
#include "call.h"

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

#include "events.h"
#include "exit_codes.h"
#include "log.h"

#define CALL_ID "call"

static int call_send(int fd, json_t *req)
{
	char *s = json_dumps(req, JSON_COMPACT);
	size_t n, off = 0;
	int r = 0;

	json_decref(req);
	if (!s)
		return -ENOMEM;
	n = strlen(s);
	if (n > EV_LINE_MAX) {
		log_line("call: the request is %zu bytes, more than the %d a line may hold (--stdin and the environment count)",
			 n, EV_LINE_MAX);
		free(s);
		return -E2BIG;
	}
	while (off < n && r == 0) {
		ssize_t w = send(fd, s + off, n - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			r = -errno;
		else
			off += (size_t)w;
	}
	if (r == 0 && send(fd, "\n", 1, MSG_NOSIGNAL) != 1)
		r = -errno;
	free(s);
	return r;
}

static int call_connect(const char *path)
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

static json_t *call_request(const struct cli_options *o, char **envp)
{
	json_t *req = json_pack("{s:s, s:s}", "op", "exec", "id", CALL_ID);
	json_t *env = json_object();

	if (!req || !env)
		goto fail;
	if (o->n_command == 1) {
		if (json_object_set_new(req, "command", json_string(o->command[0])))
			goto fail;
	} else {
		json_t *argv = json_array();

		for (int i = 0; argv && i < o->n_command; i++)
			if (json_array_append_new(argv, json_string(o->command[i])))
				goto fail;
		if (json_object_set_new(req, "argv", argv))
			goto fail;
	}
	for (size_t i = 0; envp && envp[i]; i++) {
		char *eq = strchr(envp[i], '=');
		char name[256];

		/* names the server could not admit are not sent at all */
		if (!eq || eq == envp[i] || (size_t)(eq - envp[i]) >= sizeof(name))
			continue;
		memcpy(name, envp[i], (size_t)(eq - envp[i]));
		name[eq - envp[i]] = '\0';
		/* the first of a name given twice wins, as in one-shot mode */
		if (json_object_get(env, name))
			continue;
		if (json_object_set_new(env, name, json_string(eq + 1)))
			continue;   /* not UTF-8: not sent */
	}
	if (json_object_set_new(req, "env", env))
		goto fail_req;
	if (o->timeout_s && json_object_set_new(req, "timeout_s", json_integer(o->timeout_s)))
		goto fail_req;
	if (o->send_stdin) {
		static uint8_t in[CALL_STDIN_MAX + 1];
		size_t len = 0;
		ssize_t r;
		char *b64;

		while ((r = read(0, in + len, sizeof(in) - len)) > 0 || (r < 0 && errno == EINTR))
			if (r > 0)
				len += (size_t)r;
		if (len > CALL_STDIN_MAX) {
			log_line("call: --stdin: more than %d bytes", CALL_STDIN_MAX);
			goto fail_req;
		}
		b64 = malloc(sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL));
		if (!b64)
			goto fail_req;
		sodium_bin2base64(b64, sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL),
				  in, len, sodium_base64_VARIANT_ORIGINAL);
		json_object_set_new(req, "stdin", json_string(b64));
		free(b64);
	}
	return req;
fail:
	json_decref(env);
fail_req:
	json_decref(req);
	return NULL;
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
	case EV_OUTPUT:
		for (size_t off = 0; off < ev.len;) {
			ssize_t w = write(ev.err_stream ? 2 : 1, ev.data + off, ev.len - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		break;
	case EV_EXIT:
		ret = ev.timed_out ? EXIT_TIMED_OUT :
		      ev.has_code ? ev.code : EXIT_SIGNAL_BASE + ev.signal;
		break;
	case EV_ERROR:
		log_line("call: %s", ev.message);
		ret = EXIT_REFUSED;
		break;
	case EV_STARTED:
		break;
	}
	ev_clear(&ev);
	return ret;
}

int call_main(const struct cli_options *o, char **envp)
{
	static char buf[EV_LINE_MAX + EV_CHUNK];
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
	fd = call_connect(o->socket_path);
	if (fd < 0) {
		log_line("call: %s: %s", o->socket_path, strerror(errno));
		return EXIT_REFUSED;
	}
	req = call_request(o, envp);
	if (!req)
		return EXIT_REFUSED;
	/* A refused peer may find the connection closed before its request is
	 * sent: read on, the server's error event says why. */
	if (call_send(fd, req) == -E2BIG)
		return EXIT_REFUSED;
	while (ret < 0) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
		struct signalfd_siginfo si;
		ssize_t n;
		size_t start = 0;

		if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
			break;
		while (sfd >= 0 && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			json_t *r = si.ssi_signo == SIGTERM ?
				json_pack("{s:s, s:s}", "op", "cancel", "id", CALL_ID) :
				json_pack("{s:s, s:s, s:s}", "op", "signal", "id", CALL_ID, "signal",
					  si.ssi_signo == SIGINT ? "INT" : "HUP");
			call_send(fd, r);
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
		for (size_t i = len - (size_t)n; i < len && ret < 0; i++)
			if (buf[i] == '\n') {
				ret = call_event(buf + start, i - start);
				start = i + 1;
			}
		memmove(buf, buf + start, len - start);
		len -= start;
		if (len == sizeof(buf)) {
			log_line("call: an event line is too long");
			return EXIT_REFUSED;
		}
	}
	close(fd);
	return ret < 0 ? EXIT_REFUSED : ret;
}
