/* net.h - the network of a turn's commands (docs/manifest.md, "network";
 * docs/design.md, "The network of a turn"). Without the manifest's network key
 * turninit leaves the runtime's network as it is. With it, the commands run in a
 * network namespace whose only interface is loopback: the container's own when
 * it has no other (podman or docker run --network none), else one turninit
 * makes before the first command, which needs CAP_SYS_ADMIN (unshare) and
 * CAP_NET_ADMIN (bringing its lo up) at start; both are dropped afterwards as
 * every capability but those the set-up of a command needs.
 * Sources: network_namespaces(7), unshare(2) CLONE_NEWNET, if_nameindex(3),
 * netdevice(7) SIOCGIFFLAGS and SIOCSIFFLAGS. */
#ifndef TURNINIT_NET_H
#define TURNINIT_NET_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "policy/error.h"
#include "policy/manifest.h"

enum net_mode {
	NET_RUNTIME,  /* no network key: the runtime's network, not filtered */
	NET_LOOPBACK, /* the container's namespace has only lo: kept */
	NET_OWN,      /* turninit makes a namespace with only lo */
	NET_NOTIFY,   /* the container's namespace, each command's connect(2)
			 judged by turninit (notify.h): seccomp-notify */
};

#define NET_PROXY_VARS 9                       /* the proxy's variables of net_proxy_env */
#define NET_GW_HOSTS_MAX 32                    /* credential hosts git is pointed at the gateway for */
#define NET_GW_VARS (1 + 4 * NET_GW_HOSTS_MAX) /* GIT_CONFIG_COUNT, a KEY and VALUE pair or two a host */
#define NET_GW_BUF (NET_GW_VARS * 300)

struct net_plan {
	enum net_mode mode;
	char other[IF_NAMESIZE]; /* NET_OWN: the first interface that is not lo */
	bool proxy;              /* allow has entries: the proxy runs (NET_OWN, NET_NOTIFY) */
	const char *why_notify;  /* NET_NOTIFY: why not a namespace, for the log */
	/* NET_NOTIFY: the socket pair on which each command's process hands
	 * PID 1 its filter's listener (notify.h): the supervisor's end, and
	 * the end every command's process inherits (close-on-exec); -1 else */
	int notify_fd, notify_wr;
	/* net_prepare with allow entries: the proxy's listening socket on the
	 * commands' loopback and the container's namespace, for proxy_start
	 * (each -1 otherwise); the port; the variables every command gets */
	int listen_fd, outside_ns;
	/* the proxy's records (policy/netrec.h): a pipe, its read end for PID 1
	 * (non-blocking), its write end for the proxy_start; each -1 without */
	int records_fd, records_wr;
	/* the control socket pair with the proxy (policy/netrec.h, struct
	 * net_ctl): PID 1's end, the proxy's end for proxy_start; each -1
	 * without; and the commands' listeners handed over and not closed */
	int ctl_fd, ctl_proxy;
	unsigned cmd_ports;
	/* per rule of network.allow, how its credential's value came: 0 not
	 * (yet), NET_CRED_FILE, NET_CRED_REQUEST; malloc'd with the proxy
	 * (init/turn.c), NULL without one */
	unsigned char *cred_src;
	uint16_t port;
	char env_buf[NET_PROXY_VARS][64];
	char gw_buf[NET_GW_BUF];                     /* the gateway's variables, NUL-separated */
	char *env[NET_PROXY_VARS + NET_GW_VARS + 1]; /* NULL-terminated; env[0] NULL
							without a proxy */
};

/* net_plan - how n would be enforced here, found without changing anything
 * but a probe child (verify shows it): *ret on success. n->isolation
 * chooses: MF_ISO_NAMESPACE a namespace (NET_LOOPBACK or NET_OWN) or a
 * refusal; MF_ISO_NOTIFY NET_NOTIFY or a refusal; MF_ISO_AUTO a namespace
 * where one can be had, else NET_NOTIFY where that holds, else a refusal.
 * NET_NOTIFY holds in non-root mode only (turninit reads the commands'
 * memory, which the kernel lets it do for its own uid), where the kernel
 * passes notify_probe. Errors (err names what to add or change): -EPERM
 * when entries are listed and the container has no network but loopback
 * (no host could be reached), or when no mode the manifest allows can be
 * had here; notify_probe's; -errno of if_nameindex(3). */
int net_plan(const struct mf_network *n, bool nonroot, struct net_plan *ret, struct tn_error *err);

/* net_prepare - net_plan, then apply it: for NET_OWN, a new network namespace
 * for turninit (so for every command it starts) with lo up, and no interface
 * but lo checked afterwards; with allow entries, the proxy's socket listening
 * on 127.0.0.1 there (port chosen by the kernel) and the proxy variables
 * (net_proxy_env), the container's namespace kept open for the proxy (the
 * caller starts it and closes both fds). Once per process. Errors: net_plan's,
 * -errno of open(2), unshare(2), socket(2), bind(2), listen(2) or the ioctls,
 * -EPERM when an interface but lo is seen. */
int net_prepare(const struct mf_network *n, bool nonroot, struct net_plan *ret, struct tn_error *err);

/* net_describe - one sentence for verify and the log: the mode of p (from
 * net_plan) or, with refusal non-NULL, that a start is refused and why. */
/* net_proxy_env - the proxy variables of port into p->env: HTTP_PROXY,
 * HTTPS_PROXY, ALL_PROXY and their lower-case forms as http://127.0.0.1:PORT
 * (what curl, git, pip, npm, cargo and go read), NO_PROXY and no_proxy as
 * localhost,127.0.0.1,::1, and NODE_USE_ENV_PROXY=1 (Node.js's opt-in to
 * them for its fetch and http/https, from 22.21). With rules of n that name
 * a credential, git's configuration by environment (git-config(1),
 * GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n>, GIT_CONFIG_VALUE_<n>) too: for each
 * such host (the first NET_GW_HOSTS_MAX), url.http://HOST:PORT/.insteadOf
 * https://HOST:PORT/ (and https://HOST/ for port 443), so that git's https
 * URLs of that host go through the proxy as plain HTTP, to the gateway.
 * Fixed by turninit: they override any of the manifest or a caller
 * (envf_override). */
void net_proxy_env(struct net_plan *p, uint16_t port, const struct mf_network *n);

/* net_proxy_vars - the NET_PROXY_VARS variables of net_proxy_env for port
 * (HTTP_PROXY ... NODE_USE_ENV_PROXY), written in buf, into env
 * (NULL-terminated). */
void net_proxy_vars(char buf[NET_PROXY_VARS][64], char *env[NET_PROXY_VARS + 1], uint16_t port);

/* net_cmd_listen - a listening socket of the proxy's for command id alone
 * (serve, listen and mcp mode): TCP on 127.0.0.1 of the commands'
 * namespace (PID 1 is in it), its port the kernel's choice, handed to the
 * proxy on p->ctl_fd (SCM_RIGHTS, struct net_ctl) and closed here. The
 * proxy names id (and in the records stream, the command's: 0 serve, 1..
 * listen) in the records and lines of the connections that come to
 * it. Never blocks (MSG_DONTWAIT). Returns the port, or a negative errno
 * with err set, the command then to use the shared port (its records name
 * no command): -ENOTCONN without a proxy's control socket, -EBUSY with
 * NET_CMD_PORTS_MAX open (policy/netrec.h), -errno of socket(2), bind(2),
 * listen(2) or sendmsg(2) (-EAGAIN: the proxy has not read what came
 * before). */
int net_cmd_listen(struct net_plan *p, unsigned stream, const char *id, struct tn_error *err);

/* net_cmd_close - the proxy told to close the listener of port (from
 * net_cmd_listen) at its command's end; the connections it accepted go on.
 * A message that cannot be sent at once leaves the port counted open (the
 * bound stays the proxy's), and returns -errno of sendmsg(2); else 0. */
int net_cmd_close(struct net_plan *p, uint16_t port);

const char *net_describe(const struct net_plan *p, const char *refusal, char *buf, size_t size);

/* net_isolation - "namespace", "seccomp-notify", or NULL without a network
 * key (NET_RUNTIME): for verify's and turn_start's protections. */
const char *net_isolation(const struct net_plan *p);

#define NET_CRED_FILE 1
#define NET_CRED_REQUEST 2

/* net_cred_check - whether a value of credential name may be given by
 * request now: net_cred_give's errors but those of sendmsg(2), nothing
 * sent. p may be NULL. */
int net_cred_check(const struct net_plan *p, const struct mf_network *n, const char *name,
		   struct tn_error *err);

/* net_cred_give - the value (len bytes, checked by na_cred_value_check) of
 * credential name, which a `credential` request gave (docs/protocol.md),
 * handed to the proxy on p->ctl_fd (struct net_ctl_cred) for every rule of
 * n whose credential is named so, which then count as given by request.
 * p may be NULL (no proxy). The message's copy is wiped here; the caller
 * wipes its own. Never blocks. Errors (err says why, naming the
 * credential, never a byte of value): -ENOENT no rule of n names it,
 * -EEXIST its value was given already (by its file or a request),
 * -ENOTCONN no proxy's control socket, -errno of sendmsg(2). */
int net_cred_give(struct net_plan *p, const struct mf_network *n, const char *name, const char *value,
		  size_t len, struct tn_error *err);

#endif
