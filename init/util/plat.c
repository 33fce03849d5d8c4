/* plat.c - see plat.h. */
#define _GNU_SOURCE
#include "util/plat.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "util/clock.h"

void plat_facts(struct pf_facts *ret, struct utsname *buf)
{
	bool named = uname(buf) == 0;
	int e = 0;

	if (prctl(PR_GET_SECUREBITS, 0, 0, 0, 0) < 0)
		e = errno;
	*ret = (struct pf_facts){
		.sysname = named ? buf->sysname : NULL,
		.release = named ? buf->release : NULL,
		.version = named ? buf->version : NULL,
		.get_securebits_errno = e,
	};
}

bool plat_is_gvisor(void)
{
	struct utsname u;
	struct pf_facts f;

	plat_facts(&f, &u);
	return pf_is_gvisor(&f);
}

bool plat_subreaper_works(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		return false;
	if (pid == 0)
		_exit(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : 1);
	TEMP_FAILURE_RETRY(waitpid(pid, &status, 0));
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The child's end: connect, and exit 0 when SO_PEERCRED names the parent
 * (the listener), 1 when it names another process (itself, under gVisor), 2
 * when a call failed. */
static void __attribute__((noreturn)) peercred_child(const struct sockaddr_un *a, socklen_t al, pid_t parent)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (const struct sockaddr *)a, al) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0)
		_exit(2);
	_exit(cr.pid == parent ? 0 : 1);
}

/* How long the check may take, in milliseconds: the test child's connection
 * must arrive by then, and the child must have exited. */
#define PLAT_PEERCRED_MS 2000

/* Wait for child pid until deadline_ms (CLOCK_MONOTONIC); SIGKILL then, and
 * reap it (a child of ours that nothing traces dies at once). */
static int peercred_reap(pid_t pid, uint64_t deadline_ms)
{
	int status = 0;

	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			return status;
		if (w < 0 && errno != EINTR)
			return -1;
		if (clock_ms() >= deadline_ms)
			break;
		poll(NULL, 0, 5);
	}
	kill(pid, SIGKILL);
	TEMP_FAILURE_RETRY(waitpid(pid, &status, 0));
	return -1;
}

int plat_peercred_check(const char *who, struct tn_error *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timespec now = { 0 };
	socklen_t al;
	_cleanup_close_ int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct ucred cr = { 0 };
	pid_t pid, parent = getpid();
	uint64_t deadline;
	int status, r = 0, strangers = 0;

	if (ls < 0)
		return err_errno(err, errno, "%s: checking SO_PEERCRED: socket", who);
	/* An abstract name (unix(7)): no path to write or leave behind. Not an
	 * autobound one: gVisor refuses autobind (bind of sun_family alone:
	 * EINVAL). Abstract names belong to the network namespace, which a
	 * pod's containers share, and /proc/net/unix shows them: a process that
	 * connects first is not the child (its SO_PEERCRED names neither end),
	 * and is closed and passed over; nothing waits past PLAT_PEERCRED_MS,
	 * so a stream of them makes the check fail, never hang or pass. The
	 * backlog leaves the child room beside a few of them. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	al = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			 (size_t)snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1,
					  "turninit-peercred-%d-%lld.%09ld", (int)parent,
					  (long long)now.tv_sec, now.tv_nsec));
	if (bind(ls, (struct sockaddr *)&a, al) != 0 || listen(ls, 16) != 0)
		return err_errno(err, errno, "%s: checking SO_PEERCRED: an abstract socket", who);
	pid = fork();
	if (pid < 0)
		return err_errno(err, errno, "%s: checking SO_PEERCRED: fork", who);
	if (pid == 0)
		peercred_child(&a, al, parent);
	deadline = clock_ms() + PLAT_PEERCRED_MS;
	for (;;) {
		struct pollfd p = { .fd = ls, .events = POLLIN };
		uint64_t t = clock_ms();
		socklen_t l = sizeof(cr);
		int fd;

		if (t >= deadline || poll(&p, 1, (int)(deadline - t)) != 1 ||
		    (fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC)) < 0) {
			r = err_set(err, ETIMEDOUT,
				    "%s: checking SO_PEERCRED: no connection from the test child in %d ms%s",
				    who, PLAT_PEERCRED_MS,
				    strangers ?
					    " (other processes of the network namespace connected to its socket meanwhile)" :
					    "");
			break;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0) {
			r = err_errno(err, errno, "%s: checking SO_PEERCRED", who);
			close(fd);
			break;
		}
		close(fd);
		/* the child, or (gVisor) the listener's own credentials: judged
		 * below; anyone else came first and is passed over */
		if (cr.pid == pid || cr.pid == parent)
			break;
		strangers++;
	}
	status = peercred_reap(pid, r < 0 ? 0 : deadline);
	if (r < 0)
		return r;
	if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) == 2)
		return err_set(err, EIO,
			       "%s: checking SO_PEERCRED: the test child could not connect or read it", who);
	if (cr.pid != pid || WEXITSTATUS(status) != 0)
		return err_set(err, ENOTSUP,
			       "%s: SO_PEERCRED here does not name the peer (the listener saw pid %d, not its client %d; the client %s)%s, so turninit cannot tell who is at the other end of the socket: refusing; use serve over the runtime's stdin (podman run -i) instead",
			       who, (int)cr.pid, (int)pid,
			       WEXITSTATUS(status) == 0 ? "saw its server" : "did not see its server",
			       plat_is_gvisor() ?
				       " (gVisor: this runsc answers SO_PEERCRED with the caller's own credentials)" :
				       "");
	return 0;
}
