/* test_netconnect.c - policy/netconnect.c: the verdict on a command's
 * connect(2) under seccomp-notify isolation, for each family and address
 * class, and the lengths the kernel would refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "policy/netconnect.h"

#define PROXY 40000
#define OWN 40001

static enum nc_verdict v4(const char *a, uint16_t port, const struct mf_network *n, struct nc_dest *d)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(port) };

	assert_int_equal(inet_pton(AF_INET, a, &in.sin_addr), 1);
	return nc_classify(&in, sizeof(in), PROXY, OWN, n, d);
}

static enum nc_verdict v6(const char *a, uint16_t port, const struct mf_network *n, struct nc_dest *d)
{
	struct sockaddr_in6 in = { .sin6_family = AF_INET6, .sin6_port = htons(port) };

	assert_int_equal(inet_pton(AF_INET6, a, &in.sin6_addr), 1);
	return nc_classify(&in, sizeof(in), PROXY, OWN, n, d);
}

static void internet(void **state)
{
	struct nc_rule_fix {
		struct na_rule r[2];
	} fx = { .r = { { .host = "127.0.0.1",
			  .kind = NA_IPV4,
			  .addr = { 127, 0, 0, 1 },
			  .ports = { 5432 },
			  .n_ports = 1 },
			{ .host = "10.89.0.5",
			  .kind = NA_IPV4,
			  .addr = { 10, 89, 0, 5 },
			  .ports = { 443 },
			  .n_ports = 1 } } };
	struct mf_network n = { .filtered = true, .allow = fx.r, .n_allow = 2 };
	struct nc_dest d;

	(void)state;
	assert_int_equal(v4("127.0.0.1", PROXY, &n, &d), NC_PROXY);
	assert_int_equal(v4("127.0.0.1", OWN, &n, &d), NC_PROXY);
	assert_int_equal(v6("::ffff:127.0.0.1", PROXY, &n, &d), NC_PROXY);
	/* the proxy listens on 127.0.0.1 alone */
	assert_int_equal(v4("127.0.0.2", PROXY, &n, &d), NC_LOOPBACK);
	assert_int_equal(v4("127.0.0.1", 5432, &n, &d), NC_LISTED);
	assert_int_equal(d.rule, 0);
	assert_int_equal(v4("127.0.0.1", 5433, &n, &d), NC_LOOPBACK);
	assert_int_equal(v6("::1", 8080, &n, &d), NC_LOOPBACK);
	assert_string_equal(d.shown, "[::1]:8080");
	/* a listed address that is not loopback goes through the proxy only */
	assert_int_equal(v4("10.89.0.5", 443, &n, &d), NC_UNREACHABLE);
	assert_string_equal(d.shown, "10.89.0.5:443");
	assert_int_equal(v6("::ffff:10.89.0.5", 443, &n, &d), NC_UNREACHABLE);
	assert_int_equal(v6("2001:db8::1", 443, &n, &d), NC_UNREACHABLE);
	assert_int_equal(v4("169.254.169.254", 80, &n, &d), NC_UNREACHABLE);
	/* no proxy: its port is no exception */
	{
		struct sockaddr_in in = { .sin_family = AF_INET,
					  .sin_port = htons(PROXY),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

		assert_int_equal(nc_classify(&in, sizeof(in), 0, 0, NULL, &d), NC_LOOPBACK);
	}
}

static void other_families(void **state)
{
	struct sockaddr_un u = { .sun_family = AF_UNIX };
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	struct sockaddr_in in = { .sin_family = AF_INET };
	sa_family_t unspec = AF_UNSPEC, vsock = 40;
	char big[200] = { 0 };
	struct nc_dest d;

	(void)state;
	strcpy(u.sun_path, "/run/x.sock");
	assert_int_equal(nc_classify(&u, offsetof(struct sockaddr_un, sun_path) + 12, 0, 0, NULL, &d),
			 NC_UNIX_PATH);
	assert_string_equal(d.name, "/run/x.sock");
	memcpy(u.sun_path, "\0agent\0x", 8);
	assert_int_equal(nc_classify(&u, offsetof(struct sockaddr_un, sun_path) + 8, 0, 0, NULL, &d),
			 NC_UNIX_ABSTRACT);
	assert_string_equal(d.name, "@agent@x");
	assert_int_equal(nc_classify(&nl, sizeof(nl), 0, 0, NULL, &d), NC_PASS);
	assert_int_equal(nc_classify(&unspec, sizeof(unspec), 0, 0, NULL, &d), NC_PASS);
	assert_int_equal(nc_classify(&vsock, sizeof(vsock), 0, 0, NULL, &d), NC_INVALID);
	assert_int_equal(d.err, EAFNOSUPPORT);
	/* lengths the kernel refuses, and a short internet address */
	assert_int_equal(nc_classify(&in, 1, 0, 0, NULL, &d), NC_INVALID);
	assert_int_equal(d.err, EINVAL);
	assert_int_equal(nc_classify(big, sizeof(big), 0, 0, NULL, &d), NC_INVALID);
	assert_int_equal(d.err, EINVAL);
	assert_int_equal(nc_classify(&in, 8, 0, 0, NULL, &d), NC_INVALID);
	assert_int_equal(d.err, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(internet),
		cmocka_unit_test(other_families),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
