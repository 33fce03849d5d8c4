/* net.c - see net.h. */
#define _GNU_SOURCE
#include "sandbox/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "policy/cleanup.h"
#include "policy/netrec.h"
#include "sandbox/caps.h"
#include "sandbox/notify.h"

/* The first interface of this network namespace that is not lo into other
 * ("" when lo is alone). 0, or -errno of if_nameindex(3). */
static int net_other_interface(char other[IF_NAMESIZE])
{
	struct if_nameindex *ifs = if_nameindex();

	if (!ifs)
		return -errno;
	other[0] = '\0';
	for (struct if_nameindex *i = ifs; i->if_index != 0 && !other[0]; i++)
		if (strcmp(i->if_name, "lo") != 0)
			snprintf(other, IF_NAMESIZE, "%s", i->if_name);
	if_freenameindex(ifs);
	return 0;
}

/* The namespace modes (the rules before seccomp-notify, word for word):
 * 0 with p->mode set, or -EPERM with err naming what to add. */
static int net_plan_namespace(const struct mf_network *n, bool nonroot, struct net_plan *p,
			      struct tn_error *err)
{
	/* entries need the proxy, so a namespace of turninit's: never
	 * --network none, never non-root mode */
	if (n->n_allow > 0 && nonroot)
		return err_set(err, EPERM,
			       "network.allow: %zu host%s listed, and non-root mode cannot run turninit's proxy in a network namespace of its own (\"isolation\": \"namespace\"): start turninit as root in the container, on a network, with --cap-add SYS_ADMIN --cap-add NET_ADMIN, or leave isolation to turninit (seccomp-notify)",
			       n->n_allow, n->n_allow == 1 ? "" : "s");
	if (p->mode == NET_LOOPBACK && n->n_allow > 0)
		return err_set(err, EPERM,
			       "network.allow: %zu host%s listed, and the container has no network but loopback (--network none): run it on a network, with --cap-add SYS_ADMIN --cap-add NET_ADMIN",
			       n->n_allow, n->n_allow == 1 ? "" : "s");
	if (p->mode == NET_OWN && nonroot)
		return err_set(err, EPERM,
			       "network: the container has interface %s besides lo, and non-root mode cannot make a network namespace of loopback only: add --network none to podman or docker run",
			       p->other);
	if (p->mode == NET_OWN && (!caps_have(CAP_SYS_ADMIN) || !caps_have(CAP_NET_ADMIN)))
		return err_set(err, EPERM,
			       "network: the container has interface %s besides lo, and turninit lacks %s to make the commands a network namespace of their own: add %s to podman or docker run",
			       p->other,
			       caps_have(CAP_SYS_ADMIN) ? "CAP_NET_ADMIN" :
			       caps_have(CAP_NET_ADMIN) ? "CAP_SYS_ADMIN" :
							  "CAP_SYS_ADMIN and CAP_NET_ADMIN",
			       n->n_allow > 0 ?
				       "--cap-add SYS_ADMIN --cap-add NET_ADMIN" :
				       "--network none (loopback only needs no capability), or --cap-add SYS_ADMIN --cap-add NET_ADMIN");
	return 0;
}

/* seccomp-notify where it holds: non-root mode, a kernel that passes the
 * probe. 0 with p->mode NET_NOTIFY, or -errno with err. */
static int net_plan_notify(const struct mf_network *n, bool nonroot, struct net_plan *p, struct tn_error *err)
{
	if (p->mode == NET_LOOPBACK && n->n_allow > 0)
		return err_set(err, EPERM,
			       "network.allow: %zu host%s listed, and the container has no network but loopback (--network none): run it on a network",
			       n->n_allow, n->n_allow == 1 ? "" : "s");
	if (!nonroot)
		return err_set(err, EPERM,
			       "network: seccomp-notify needs turninit to run as the commands' user (--user UID:GID, non-root mode), since it reads their connect calls; as root, add --cap-add SYS_ADMIN --cap-add NET_ADMIN for a namespace of its own");
	p->mode = NET_NOTIFY;
	return notify_probe(err);
}

int net_plan(const struct mf_network *n, bool nonroot, struct net_plan *ret, struct tn_error *err)
{
	struct net_plan p = { .mode = NET_RUNTIME,
			      .listen_fd = -1,
			      .outside_ns = -1,
			      .records_fd = -1,
			      .records_wr = -1,
			      .ctl_fd = -1,
			      .ctl_proxy = -1,
			      .notify_fd = -1,
			      .notify_wr = -1 };
	int r;

	if (!n->filtered) {
		*ret = p;
		return 0;
	}
	r = net_other_interface(p.other);
	if (r < 0)
		return err_errno(err, -r, "network: listing the interfaces (if_nameindex)");
	p.mode = p.other[0] ? NET_OWN : NET_LOOPBACK;
	p.proxy = n->n_allow > 0;
	if (n->isolation == MF_ISO_NOTIFY)
		r = net_plan_notify(n, nonroot, &p, err);
	else if (n->isolation == MF_ISO_NAMESPACE || !nonroot)
		r = net_plan_namespace(n, nonroot, &p, err);
	else if ((r = net_plan_namespace(n, nonroot, &p, err)) < 0)
		/* non-root mode and no namespace to be had: seccomp-notify,
		 * said at start and by verify */
		r = net_plan_notify(n, nonroot, &p, err);
	if (r < 0)
		return r;
	if (p.mode == NET_NOTIFY && n->isolation == MF_ISO_AUTO)
		p.why_notify = "non-root mode cannot make a network namespace";
	*ret = p;
	return 0;
}

/* lo of this namespace up (a new one starts with it down). */
static int net_lo_up(struct tn_error *err)
{
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = { 0 };

	if (fd < 0)
		return err_errno(err, errno, "network: socket for lo");
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0)
		return err_errno(err, errno, "network: lo's flags (SIOCGIFFLAGS)");
	if (ifr.ifr_flags & IFF_UP)
		return 0;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
		return err_errno(err, errno, "network: lo up (SIOCSIFFLAGS)");
	return 0;
}

/* One NAME=VALUE of the gateway's into p->gw_buf at *at, and p->env. */
static void net_gw_var(struct net_plan *p, size_t *at, size_t *n_env, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*at >= sizeof(p->gw_buf))
		return;
	va_start(ap, fmt);
	w = vsnprintf(p->gw_buf + *at, sizeof(p->gw_buf) - *at, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= sizeof(p->gw_buf) - *at)
		return;
	p->env[(*n_env)++] = p->gw_buf + *at;
	*at += (size_t)w + 1;
}

/* git's url.<base>.insteadOf for each credential host (net_proxy_env). */
static void net_gateway_env(struct net_plan *p, const struct mf_network *n)
{
	size_t at = 0, n_env = NET_PROXY_VARS, k = 0, hosts = 0;

	for (size_t i = 0; n && i < n->n_allow && hosts < NET_GW_HOSTS_MAX; i++) {
		const struct na_rule *r = &n->allow[i];

		if (!r->cred || r->n_ports != 1)
			continue;
		hosts++;
		for (int form = 0; form < (r->ports[0] == 443 ? 2 : 1); form++) {
			net_gw_var(p, &at, &n_env, "GIT_CONFIG_KEY_%zu=url.http://%s:%u/.insteadOf", k,
				   r->host, r->ports[0]);
			if (form == 0)
				net_gw_var(p, &at, &n_env, "GIT_CONFIG_VALUE_%zu=https://%s:%u/", k, r->host,
					   r->ports[0]);
			else
				net_gw_var(p, &at, &n_env, "GIT_CONFIG_VALUE_%zu=https://%s/", k, r->host);
			k++;
		}
	}
	if (k > 0)
		net_gw_var(p, &at, &n_env, "GIT_CONFIG_COUNT=%zu", k);
	p->env[n_env] = NULL;
}

void net_proxy_vars(char buf[NET_PROXY_VARS][64], char *env[NET_PROXY_VARS + 1], uint16_t port)
{
	/* NODE_USE_ENV_PROXY=1: Node.js (22.21 and later) reads the variables
	 * above for its fetch and http/https only when asked; without it they
	 * try the host themselves, and with no resolver nor route fail as DNS
	 * does (EAI_AGAIN). */
	static const char *const names[NET_PROXY_VARS] = {
		"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy",         "https_proxy",
		"all_proxy",  "NO_PROXY",    "no_proxy",  "NODE_USE_ENV_PROXY",
	};

	for (size_t i = 0; i < NET_PROXY_VARS; i++) {
		if (strcmp(names[i], "NODE_USE_ENV_PROXY") == 0)
			snprintf(buf[i], 64, "%s=1", names[i]);
		else if (strstr(names[i], "NO_") || strstr(names[i], "no_"))
			snprintf(buf[i], 64, "%s=localhost,127.0.0.1,::1", names[i]);
		else
			snprintf(buf[i], 64, "%s=http://127.0.0.1:%u", names[i], port);
		env[i] = buf[i];
	}
	env[NET_PROXY_VARS] = NULL;
}

void net_proxy_env(struct net_plan *p, uint16_t port, const struct mf_network *n)
{
	net_proxy_vars(p->env_buf, p->env, port);
	p->port = port;
	net_gateway_env(p, n);
}

/* The proxy's socket: TCP, listening on 127.0.0.1 of this namespace, its
 * port the kernel's choice, in *ret_port. */
static int net_listen(int *ret_fd, uint16_t *ret_port, struct tn_error *err)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	_cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return err_errno(err, errno, "network: the proxy's socket");
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		return err_errno(err, errno, "network: the proxy's socket on 127.0.0.1");
	*ret_port = ntohs(a.sin_port);
	*ret_fd = steal_fd(&fd);
	return 0;
}

/* One message of PID 1's to the proxy (struct net_ctl), with fd (SCM_RIGHTS)
 * when fd >= 0. 0, or -errno of sendmsg(2). */
static int net_ctl_send(int ctl, const struct net_ctl *m, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	memset(&u, 0, sizeof(u));
	if (fd >= 0) {
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	}
	return sendmsg(ctl, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof(*m) ? 0 : -errno;
}

int net_cmd_listen(struct net_plan *p, unsigned stream, const char *id, struct tn_error *err)
{
	struct net_ctl m = { .open = 1, .stream = stream };
	_cleanup_close_ int fd = -1;
	int r;

	if (p->ctl_fd < 0)
		return err_set(err, ENOTCONN, "network: no control socket of the proxy's");
	if (p->cmd_ports >= NET_CMD_PORTS_MAX)
		return err_set(err, EBUSY,
			       "network: %d commands' ports of the proxy are open, the most at once",
			       NET_CMD_PORTS_MAX);
	r = net_listen(&fd, &m.port, err);
	if (r < 0)
		return r;
	snprintf(m.id, sizeof(m.id), "%s", id);
	r = net_ctl_send(p->ctl_fd, &m, fd);
	if (r < 0)
		return err_errno(err, -r, "network: a command's port handed to the proxy");
	p->cmd_ports++;
	if (p->mode == NET_NOTIFY)
		notify_cmd_port(m.port, stream, id);
	return m.port;
}

int net_cred_check(const struct net_plan *p, const struct mf_network *n, const char *name,
		   struct tn_error *err)
{
	char shown[ERR_SHOWN_MAX];
	bool named = false;

	for (size_t i = 0; i < n->n_allow; i++) {
		if (!n->allow[i].cred || strcmp(n->allow[i].cred->name, name) != 0)
			continue;
		named = true;
		if (p && p->cred_src && p->cred_src[i])
			return err_set(err, EEXIST, "credential: %s was already given, by %s", name,
				       p->cred_src[i] == NET_CRED_FILE ? "its file" : "an earlier request");
	}
	if (!named)
		return err_set(err, ENOENT,
			       "credential: the manifest names no credential %s (network.allow[].credential.name)",
			       err_shown(name, strlen(name), shown));
	if (!p || p->ctl_fd < 0 || !p->cred_src)
		return err_set(err, ENOTCONN, "credential: %s: turninit's proxy has no control socket", name);
	return 0;
}

int net_cred_give(struct net_plan *p, const struct mf_network *n, const char *name, const char *value,
		  size_t len, struct tn_error *err)
{
	struct net_ctl_cred m = { .kind = NET_CTL_CREDENTIAL, .len = (uint16_t)len };
	ssize_t r;
	int e = net_cred_check(p, n, name, err);

	if (e < 0)
		return e;
	if (len == 0 || len > NA_CRED_VALUE_MAX)
		return err_set(err, EINVAL, "credential: %s: a value of %zu bytes", name, len);
	snprintf(m.name, sizeof(m.name), "%s", name);
	memcpy(m.value, value, len);
	r = send(p->ctl_fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL);
	e = r < 0 ? errno : EMSGSIZE;
	sodium_memzero(&m, sizeof(m));
	if (r != (ssize_t)sizeof(m))
		return err_errno(err, e, "credential: %s: handing it to the proxy", name);
	for (size_t i = 0; i < n->n_allow; i++)
		if (n->allow[i].cred && strcmp(n->allow[i].cred->name, name) == 0)
			p->cred_src[i] = NET_CRED_REQUEST;
	return 0;
}

int net_cmd_close(struct net_plan *p, uint16_t port)
{
	struct net_ctl m = { .open = 0, .port = port };
	int r = p->ctl_fd >= 0 ? net_ctl_send(p->ctl_fd, &m, -1) : -ENOTCONN;

	if (r == 0 && p->cmd_ports > 0)
		p->cmd_ports--;
	if (p->mode == NET_NOTIFY)
		notify_cmd_port_closed(port);
	return r;
}

int net_prepare(const struct mf_network *n, bool nonroot, struct net_plan *ret, struct tn_error *err)
{
	struct net_plan p;
	char other[IF_NAMESIZE];
	_cleanup_close_ int outside = -1, lfd = -1;
	uint16_t port = 0;
	int r = net_plan(n, nonroot, &p, err);

	if (r < 0 || (p.mode != NET_OWN && p.mode != NET_NOTIFY)) {
		if (r == 0)
			*ret = p;
		return r;
	}
	if (p.mode == NET_OWN) {
		if (n->n_allow > 0 && (outside = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)
			return err_errno(err, errno,
					 "network: the container's network namespace (/proc/self/ns/net)");
		if (unshare(CLONE_NEWNET) != 0)
			return err_errno(err, errno,
					 "network: a network namespace of loopback only (unshare CLONE_NEWNET)");
		r = net_lo_up(err);
		if (r < 0)
			return r;
		/* what the commands will see, checked rather than assumed */
		r = net_other_interface(other);
		if (r < 0)
			return err_errno(err, -r, "network: listing the interfaces (if_nameindex)");
		if (other[0])
			return err_set(err, EPERM,
				       "network: interface %s is in turninit's new network namespace", other);
	}
	/* seccomp-notify: the supervisor's records (its refusals) with or
	 * without a proxy, and the commands' listeners' way in */
	if (n->n_allow > 0 || p.mode == NET_NOTIFY) {
		int rec[2];

		if (pipe2(rec, O_CLOEXEC) != 0 || fcntl(rec[0], F_SETFL, O_NONBLOCK) != 0)
			return err_errno(err, errno, "network: the pipe of the proxy's records");
		p.records_fd = rec[0];
		p.records_wr = rec[1];
	}
	if (p.mode == NET_NOTIFY) {
		int in[2];

		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, in) != 0)
			return err_errno(err, errno, "network: the socket pair of the commands' listeners");
		p.notify_fd = in[0];
		p.notify_wr = in[1];
	}
	if (n->n_allow > 0) {
		int ctl[2];

		/* NET_NOTIFY: on the container's own loopback (the proxy
		 * serves only the connections PID 1 makes: net_peer_allow) */
		r = net_listen(&lfd, &port, err);
		if (r < 0)
			return r;
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) != 0)
			return err_errno(err, errno, "network: the proxy's control socket pair");
		net_proxy_env(&p, port, n);
		p.listen_fd = steal_fd(&lfd);
		p.outside_ns = steal_fd(&outside);
		p.ctl_fd = ctl[0];
		p.ctl_proxy = ctl[1];
	}
	*ret = p;
	/* env points into p's own buffers: re-pointed at ret's */
	for (size_t i = 0; ret->env[i]; i++)
		ret->env[i] = i < NET_PROXY_VARS ? ret->env_buf[i] : ret->gw_buf + (p.env[i] - p.gw_buf);
	return 0;
}

const char *net_describe(const struct net_plan *p, const char *refusal, char *buf, size_t size)
{
	if (refusal)
		snprintf(buf, size, "refused at start: %s", refusal);
	else if (p->mode == NET_RUNTIME)
		snprintf(buf, size,
			 "not filtered by turninit (the manifest has no network key): the runtime's network applies");
	else if (p->mode == NET_NOTIFY && p->proxy)
		snprintf(buf, size,
			 "allowlist by seccomp-notify: the commands share the container's network namespace (it has %s), and turninit makes each of their connections itself, to its proxy on 127.0.0.1 (which reaches the hosts of network.allow), to the loopback ports network.allow lists and to their own listeners, and refuses every other",
			 p->other[0] ? p->other : "lo alone");
	else if (p->mode == NET_NOTIFY)
		snprintf(buf, size,
			 "loopback only by seccomp-notify: the commands share the container's network namespace (it has %s), and turninit makes each of their connections itself, to the loopback ports network.allow lists and to their own listeners, and refuses every other",
			 p->other[0] ? p->other : "lo alone");
	else if (p->proxy && p->port)
		snprintf(buf, size,
			 "allowlist: the commands run in a network namespace of their own with lo alone, and reach the hosts of network.allow through turninit's proxy at 127.0.0.1:%u (the container's namespace has %s)",
			 p->port, p->other);
	else if (p->proxy)
		snprintf(buf, size,
			 "allowlist: the commands run in a network namespace of their own with lo alone, and reach the hosts of network.allow through turninit's proxy on 127.0.0.1 (the container's namespace has %s)",
			 p->other);
	else if (p->mode == NET_LOOPBACK)
		snprintf(buf, size,
			 "loopback only: the container's network namespace has no interface but lo (as under --network none)");
	else
		snprintf(buf, size,
			 "loopback only: turninit runs the commands in a network namespace of its own with lo alone (the container's has %s)",
			 p->other);
	return buf;
}

const char *net_isolation(const struct net_plan *p)
{
	return p->mode == NET_RUNTIME ? NULL : p->mode == NET_NOTIFY ? "seccomp-notify" : "namespace";
}
