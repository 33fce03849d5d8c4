/* serve_listen.c - `turninit listen`: the unix socket, and which peers may
 * drive the turn (callers.uids by SO_PEERCRED; never a command of the turn). */
#define _GNU_SOURCE
#include "serve/serve_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "process/reap.h"
#include "sandbox/place.h"
#include "util/clock.h"
#include "util/log.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5; older kernels: ENOPROTOOPT */
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

static bool peer_allowed(const struct serve *s, int fd, char *why, size_t why_size)
{
	const struct mf_manifest *mf = s->ctx->manifest;
	struct ucred cr;
	socklen_t l = sizeof(cr);
	bool uid_ok = false;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0) {
		snprintf(why, why_size, "SO_PEERCRED: %s", strerror(errno));
		return false;
	}
	for (size_t i = 0; i < mf->n_caller_uids; i++)
		uid_ok |= mf->caller_uids[i] == cr.uid;
	if (!uid_ok) {
		snprintf(why, why_size, "peer uid %u is not in callers.uids", (unsigned)cr.uid);
		return false;
	}
	/* A command of this turn runs below turninit: it may not drive the turn.
	 * Fail closed: the peer is pinned by a pidfd (SO_PEERPIDFD), and a peer that
	 * has exited, or whose line of parents cannot be read, is refused, so a
	 * command cannot connect, hand the socket on and exit before this check. */
	if (cr.pid > 0) {
		int pidfd = -1, d;
		socklen_t pl = sizeof(pidfd);
		bool pinned = getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &pl) == 0;
		bool alive = !pinned || syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;

		d = alive ? reap_is_descendant(cr.pid, getpid()) : -1;
		if (pinned && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) != 0)
			d = -1; /* gone meanwhile: what was read may be another process */
		if (pidfd >= 0)
			close(pidfd);
		if (d != 0) {
			snprintf(why, why_size,
				 d > 0 ? "peer pid %d is a command of this turn" :
					 "peer pid %d has exited or cannot be checked",
				 (int)cr.pid);
			return false;
		}
	}
	return true;
}

/* Refuse a connection that waits while turninit has no fd to spare
 * (RLIMIT_NOFILE reached): the spare fd, closed, makes room to take it, say
 * why and close it, so the listen socket is not left readable for ever (which
 * would keep the loop spinning) and the peer is not left waiting. */
static void conn_refuse_nofile(struct serve *s)
{
	int fd;

	if (s->spare_fd < 0)
		return;
	close(s->spare_fd);
	fd = accept4(s->ctx->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd >= 0) {
		struct conn tmp = { .codec = &codec_jsonl, .out_fd = fd };

		conn_error(&tmp, NULL,
			   "refused: turninit has no file descriptor to spare "
			   "(RLIMIT_NOFILE); try again when a command has ended");
		conn_drain(&tmp, 0);
		close(fd);
	}
	if (!s->nofile_said) {
		log_line("listen: refusing connections: no file descriptor to spare (RLIMIT_NOFILE)");
		s->nofile_said = true;
	}
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* The window's count of refused peers not logged, said once it has passed.
 * Returns when that is due (0: nothing to say), for the loop's timeout. */
uint64_t listen_log_tick(struct serve *s, uint64_t now)
{
	uint64_t end = s->refused_window_ms + SERVE_REFUSED_LOG_MS;

	if (!s->refused_quiet)
		return 0;
	if (now < end)
		return end;
	log_line("listen: refused %u more peer(s) in %d s, not each logged", s->refused_quiet,
		 SERVE_REFUSED_LOG_MS / 1000);
	s->refused_quiet = 0;
	return 0;
}

/* A refused peer's line, or only its count past SERVE_REFUSED_LOG_MAX in
 * the window. */
static void log_refused(struct serve *s, const char *why)
{
	uint64_t now = clock_ms();

	listen_log_tick(s, now);
	if (now >= s->refused_window_ms + SERVE_REFUSED_LOG_MS) {
		s->refused_window_ms = now;
		s->refused_logged = 0;
	}
	if (s->refused_logged < SERVE_REFUSED_LOG_MAX) {
		s->refused_logged++;
		log_line("listen: refused a peer: %s", why);
	} else {
		s->refused_quiet++;
	}
}

void conn_accept(struct serve *s)
{
	int fd = accept4(s->ctx->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	char why[256];

	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			conn_refuse_nofile(s);
		return;
	}
	if (!peer_allowed(s, fd, why, sizeof(why))) {
		struct conn tmp = { .codec = &codec_jsonl, .out_fd = fd };

		conn_error(&tmp, NULL, "refused: %s", why);
		conn_drain(&tmp, 0);
		log_refused(s, why);
		close(fd);
		return;
	}
	for (size_t i = 0; i < SERVE_MAX_CONNS; i++)
		if (!s->conns[i].used) {
			s->conns[i] = (struct conn){ .used = true,
						     .codec = &codec_jsonl,
						     .in_fd = fd,
						     .out_fd = fd,
						     .frame = { .max = EV_LINE_MAX },
						     .stream = ++s->streams };
			return;
		}
	{
		struct conn tmp = { .codec = &codec_jsonl, .out_fd = fd };

		conn_error(&tmp, NULL, "refused: more than %d connections", SERVE_MAX_CONNS);
		conn_drain(&tmp, 0);
		close(fd);
	}
}

/* The socket's directory: not in the writable set as given, nor as resolved,
 * and out of the command uid's reach (place.h). */
static int listen_check_dir(const char *path, const struct mf_manifest *m, struct tn_error *err)
{
	char dir[PATH_MAX], real[PATH_MAX], what[32 + PATH_MAX], *slash;
	const char *w;
	struct stat st;
	int dfd, r;

	snprintf(what, sizeof(what), "listen: socket %s", path);
	if ((r = place_need_landlock(what, m, err)) < 0)
		return r;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if ((w = place_writable_holder(dir, m)))
		return err_set(err, EPERM, "%s: its directory %s is inside %s, which commands may write",
			       what, dir, w);
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return err_errno(err, errno, "%s: its directory %s", what, dir);
	if (fstat(dfd, &st) != 0) {
		r = err_errno(err, errno, "%s: its directory %s", what, dir);
	} else if ((r = place_resolve(what, dfd, &st, NULL, real, err)) < 0) {
		/* err is filled */
	} else if ((w = place_writable_holder(real, m))) {
		r = err_set(err, EPERM, "%s: its directory %s is %s, inside %s, which commands may write",
			    what, dir, real, w);
	} else if (place_open_to_uid(&st, m)) {
		r = err_set(err, EPERM,
			    "%s: its directory %s is owned by uid %u or writable by group "
			    "or others",
			    what, dir, m->uid);
	}
	close(dfd);
	return r;
}

int serve_listen_probe(const char *path, const struct mf_manifest *m, struct tn_error *err)
{
	struct sockaddr_un a;
	struct stat st;
	int r;

	if (path[0] != '/')
		return err_set(err, EINVAL, "listen: socket %s: expected an absolute path", path);
	if (strlen(path) >= sizeof(a.sun_path))
		return err_set(err, ENAMETOOLONG, "listen: socket path %s is too long", path);
	r = listen_check_dir(path, m, err);
	if (r < 0)
		return r;
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode))
		return err_set(err, EEXIST, "listen: %s exists and is not a socket", path);
	return 0;
}

int serve_listen_socket(const char *path, const struct mf_manifest *m, int *ret_fd, struct tn_error *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, r;

	r = serve_listen_probe(path, m, err);
	if (r < 0)
		return r;
	strcpy(a.sun_path, path); /* its length is checked */
	if (lstat(path, &st) == 0)
		unlink(path); /* a stale socket (the probe refused anything else) */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_errno(err, errno, "listen: socket");
	/* bind(2) makes the socket 0777 less the umask: 0666, with nothing done
	 * by path afterwards (a chmod would follow a symlink put there
	 * meanwhile, as root). turninit is one thread: the umask is its alone. */
	old = umask(0111);
	r = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (r != 0 || listen(fd, 64) != 0) {
		int e = errno;

		close(fd);
		return err_errno(err, e, "listen: %s", path);
	}
	*ret_fd = fd;
	return 0;
}
