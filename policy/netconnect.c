/* netconnect.c - see netconnect.h. */
#include "policy/netconnect.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

static const uint8_t nc_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

int nc_loopback(const struct nc_dest *d)
{
	static const uint8_t one6[16] = { [15] = 1 };

	if (d->family == AF_INET)
		return d->addr[0] == 127;
	return d->family == AF_INET6 && memcmp(d->addr, one6, 16) == 0;
}

/* whether rule r names a loopback address at port */
static int nc_rule_lists(const struct na_rule *r, const struct nc_dest *d)
{
	struct nc_dest rd = { .family = r->kind == NA_IPV4 ? AF_INET : r->kind == NA_IPV6 ? AF_INET6 : 0 };

	if (!rd.family)
		return 0;
	memcpy(rd.addr, r->addr, 16);
	if (!nc_loopback(&rd) || rd.family != d->family ||
	    memcmp(rd.addr, d->addr, rd.family == AF_INET ? 4 : 16) != 0)
		return 0;
	for (size_t j = 0; j < r->n_ports; j++)
		if (r->ports[j] == d->port)
			return 1;
	return 0;
}

static enum nc_verdict nc_inet(const struct mf_network *n, uint16_t shared_port, uint16_t own_port,
			       struct nc_dest *d)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(d->family, d->addr, a, sizeof(a));
	snprintf(d->shown, sizeof(d->shown), d->family == AF_INET ? "%s:%u" : "[%s]:%u", a, d->port);
	if (!nc_loopback(d))
		return NC_UNREACHABLE;
	if (d->family == AF_INET && d->addr[1] == 0 && d->addr[2] == 0 && d->addr[3] == 1 && d->port != 0 &&
	    (d->port == shared_port || d->port == own_port))
		return NC_PROXY;
	for (size_t i = 0; n && i < n->n_allow; i++)
		if (nc_rule_lists(&n->allow[i], d)) {
			d->rule = (int)i;
			return NC_LISTED;
		}
	return NC_LOOPBACK;
}

static enum nc_verdict nc_unix(const struct sockaddr_un *u, size_t len, struct nc_dest *d)
{
	size_t off = offsetof(struct sockaddr_un, sun_path), k = len - off;

	if (len <= off) {
		d->err = EINVAL;
		return NC_INVALID;
	}
	if (u->sun_path[0] != '\0') {
		k = strnlen(u->sun_path, k);
		snprintf(d->name, sizeof(d->name), "%.*s", (int)k, u->sun_path);
		snprintf(d->shown, sizeof(d->shown), "unix:%.57s", d->name);
		return NC_UNIX_PATH;
	}
	for (size_t i = 0; i < k && i < sizeof(d->name) - 1; i++)
		d->name[i] = u->sun_path[i] ? u->sun_path[i] : '@';
	snprintf(d->shown, sizeof(d->shown), "unix:%.57s", d->name);
	return NC_UNIX_ABSTRACT;
}

enum nc_verdict nc_classify(const void *sa, size_t len, uint16_t shared_port, uint16_t own_port,
			    const struct mf_network *n, struct nc_dest *d)
{
	struct sockaddr_storage ss = { 0 };
	sa_family_t fam;

	memset(d, 0, sizeof(*d));
	d->rule = -1;
	/* the kernel's move_addr_to_kernel: more than a sockaddr_storage is EINVAL */
	if (len < sizeof(sa_family_t) || len > sizeof(ss)) {
		d->err = EINVAL;
		snprintf(d->shown, sizeof(d->shown), "an address of %zu bytes", len);
		return NC_INVALID;
	}
	memcpy(&ss, sa, len);
	fam = ss.ss_family;
	d->family = fam;
	if (fam == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)&ss;

		memcpy(d->addr, &in->sin_addr, 4);
		d->port = ntohs(in->sin_port);
		return nc_inet(n, shared_port, own_port, d);
	}
	if (fam == AF_INET6 && len >= offsetof(struct sockaddr_in6, sin6_scope_id)) {
		const struct sockaddr_in6 *in6 = (const void *)&ss;

		d->port = ntohs(in6->sin6_port);
		if (memcmp(in6->sin6_addr.s6_addr, nc_mapped, 12) == 0) {
			d->family = AF_INET;
			memcpy(d->addr, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			memcpy(d->addr, in6->sin6_addr.s6_addr, 16);
		}
		return nc_inet(n, shared_port, own_port, d);
	}
	if (fam == AF_UNIX)
		return nc_unix((const struct sockaddr_un *)&ss, len, d);
	if (fam == AF_NETLINK || fam == AF_UNSPEC) {
		snprintf(d->shown, sizeof(d->shown), fam == AF_NETLINK ? "netlink" : "AF_UNSPEC");
		return NC_PASS;
	}
	/* a short AF_INET or AF_INET6 address, or a family socket(2) refused */
	d->err = fam == AF_INET || fam == AF_INET6 ? EINVAL : EAFNOSUPPORT;
	snprintf(d->shown, sizeof(d->shown), "family %u", (unsigned)fam);
	return NC_INVALID;
}
