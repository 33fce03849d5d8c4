/* netconnect.h - the verdict on one connect(2) of a command where the
 * network is held by seccomp user notification (docs/design.md, "Isolation
 * by seccomp user notification"; init/sandbox/notify.c reads the address
 * from the command's memory, this file judges it, notify.c acts).
 * Pure: no syscall. Sources: ip(7), ipv6(7), unix(7), netlink(7),
 * RFC 4291 section 2.5.5.2 (IPv4-mapped addresses). */
#ifndef TURNINIT_NETCONNECT_H
#define TURNINIT_NETCONNECT_H

#include <stddef.h>
#include <stdint.h>

#include "policy/manifest.h"

enum nc_verdict {
	NC_PROXY,         /* turninit's proxy (127.0.0.1, the shared or the command's port) */
	NC_LISTED,        /* a loopback address at a port a rule of network.allow lists
			     for a loopback address */
	NC_LOOPBACK,      /* another loopback address and port: allowed only when a
			     process of the turn listens there (the caller looks) */
	NC_UNIX_PATH,     /* an AF_UNIX socket by path: the file system's, allowed */
	NC_UNIX_ABSTRACT, /* an abstract AF_UNIX name: allowed only when a process of
			     the turn listens on it (the caller looks) */
	NC_PASS,          /* AF_NETLINK (the kernel), AF_UNSPEC (disconnect): allowed */
	NC_UNREACHABLE,   /* any other internet address: refused, ENETUNREACH */
	NC_INVALID,       /* no family, a length the kernel would refuse, or a family
			     socket(2) was refused for: refused, the errno in d->err */
};

struct nc_dest {
	int family;       /* the sockaddr's (AF_INET, ...), 0 when too short */
	uint8_t addr[16]; /* AF_INET: the first 4 bytes; AF_INET6: all 16 */
	uint16_t port;    /* host order */
	int rule;         /* NC_LISTED: the index in network.allow, else -1 */
	int err;          /* NC_INVALID: the errno to answer with */
	char name[110];   /* NC_UNIX_*: the path, or the abstract name with
			     '@' for each NUL as /proc/net/unix shows it */
	char shown[64];   /* "10.89.0.5:443", "[::1]:80", "unix:/run/x",
			     "unix:@name", "netlink" ...: for a log line */
};

/* nc_classify - the verdict on connecting to the sockaddr sa of len bytes
 * (as the command passed it, at most 128 bytes read), with d filled.
 * shared_port: the proxy's shared port, 0 without a proxy; own_port: the
 * command's own port of the proxy's, 0 without one; n: the rules. An IPv4
 * address mapped into IPv6 (::ffff:a.b.c.d) is judged as that IPv4 address;
 * loopback is 127.0.0.0/8 and ::1. */
enum nc_verdict nc_classify(const void *sa, size_t len, uint16_t shared_port, uint16_t own_port,
			    const struct mf_network *n, struct nc_dest *d);

/* nc_loopback - whether d (AF_INET or AF_INET6) is a loopback address. */
int nc_loopback(const struct nc_dest *d);

#endif
