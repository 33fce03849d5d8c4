/* test_netallow.c - network.allow's rules matched against destinations
 * (policy/netallow.c); their checks as written are in test_manifest.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/netallow.h"

static struct na_rule rule(const char *host, uint16_t port)
{
	struct na_rule r = { .host = (char *)host, .n_ports = 1, .ports = { port } };

	assert_null(na_host_problem(host, &r.kind, r.addr));
	return r;
}

static void test_match(void **state)
{
	const struct na_rule rules[] = {
		rule("registry.example.org", 443),
		rule("*.pkgs.example.org", 443),
		rule("10.89.0.5", 8443),
		rule("fd00::5", 22),
	};
	size_t n = sizeof(rules) / sizeof(rules[0]);

	(void)state;
	assert_int_equal(na_match(rules, n, "registry.example.org", 443), 0);
	assert_int_equal(na_match(rules, n, "REGISTRY.Example.ORG", 443), 0); /* DNS ignores case */
	assert_int_equal(na_match(rules, n, "registry.example.org", 80), -1); /* not its port */
	assert_int_equal(na_match(rules, n, "evil-registry.example.org", 443), -1);
	assert_int_equal(na_match(rules, n, "registry.example.org.evil.example", 443), -1);
	assert_int_equal(na_match(rules, n, "files.pkgs.example.org", 443), 1);
	assert_int_equal(na_match(rules, n, "a.b.pkgs.example.org", 443), 1);
	assert_int_equal(na_match(rules, n, "pkgs.example.org", 443), -1); /* the suffix itself */
	assert_int_equal(na_match(rules, n, "evilpkgs.example.org", 443), -1);
	assert_int_equal(na_match(rules, n, ".pkgs.example.org", 443), -1);
	assert_int_equal(na_match(rules, n, "10.89.0.5", 8443), 2);
	assert_int_equal(na_match(rules, n, "10.89.0.6", 8443), -1);
	assert_int_equal(na_match(rules, n, "fd00::5", 22), 3);
	assert_int_equal(na_match(rules, n, "fd00:0:0::5", 22), 3); /* the address, not the text */
	assert_int_equal(na_match(rules, n, "fd00::6", 22), -1);
	assert_int_equal(na_match(rules, 0, "registry.example.org", 443), -1); /* allow []: nothing */
}

static void test_kinds(void **state)
{
	enum na_kind k;
	uint8_t a[16];

	(void)state;
	assert_null(na_host_problem("a.example", &k, a));
	assert_int_equal(k, NA_NAME);
	assert_null(na_host_problem("*.a.example", &k, a));
	assert_int_equal(k, NA_SUFFIX);
	assert_null(na_host_problem("127.0.0.1", &k, a));
	assert_int_equal(k, NA_IPV4);
	assert_null(na_host_problem("::ffff:10.0.0.1", &k, a));
	assert_int_equal(k, NA_IPV6);
	assert_non_null(na_host_problem("*", &k, a));
	assert_non_null(na_host_problem("*.", &k, a));
	assert_non_null(na_host_problem("**.a.example", &k, a));
	assert_non_null(na_host_problem("1.2.3", &k, a)); /* not inet_pton's, not a name */
}

static const char *v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	return na_addr_class(true, (uint8_t[]){ a, b, c, d });
}

static const char *v6(const char *text)
{
	static uint8_t a[16];
	enum na_kind k;

	assert_null(na_host_problem(text, &k, a));
	return na_addr_class(false, a);
}

static void test_addr_class(void **state)
{
	(void)state;
	assert_string_equal(v4(127, 0, 0, 1), "loopback");
	assert_string_equal(v4(10, 1, 2, 3), "private");
	assert_string_equal(v4(172, 16, 0, 1), "private");
	assert_string_equal(v4(172, 31, 255, 255), "private");
	assert_null(v4(172, 32, 0, 1));
	assert_string_equal(v4(192, 168, 1, 1), "private");
	assert_string_equal(v4(169, 254, 169, 254), "cloud metadata");
	assert_string_equal(v4(169, 254, 1, 1), "link-local");
	assert_string_equal(v4(100, 64, 0, 1), "shared (CGNAT)");
	assert_null(v4(100, 128, 0, 1));
	assert_string_equal(v4(0, 0, 0, 0), "unspecified");
	assert_string_equal(v4(224, 0, 0, 1), "multicast");
	assert_string_equal(v4(255, 255, 255, 255), "broadcast");
	assert_null(v4(93, 184, 216, 34));
	assert_string_equal(v6("::1"), "loopback");
	assert_string_equal(v6("::"), "unspecified");
	assert_string_equal(v6("fd00:ec2::254"), "private");
	assert_string_equal(v6("fe80::1"), "link-local");
	assert_string_equal(v6("ff02::1"), "multicast");
	assert_string_equal(v6("::ffff:10.0.0.1"), "private");
	assert_string_equal(v6("::ffff:169.254.169.254"), "cloud metadata");
	assert_string_equal(v6("::10.0.0.1"), "reserved");
	assert_string_equal(v6("64:ff9b::10.0.0.1"), "private");
	assert_null(v6("64:ff9b::93.184.216.34"));
	assert_null(v6("2606:2800:220:1::1"));
}

/* One vector (or a few, at a block's edges) per entry of the IANA IPv4 and
 * IPv6 Special-Purpose Address Registries (RFC 6890, as updated), and of
 * the forms that embed an IPv4 address: refused with its class, or NULL
 * where the registry says globally reachable. */
static const struct {
	const char *addr, *kind;
} special[] = {
	{ "0.0.0.0", "unspecified" }, /* 0.0.0.0/8 "this network" */
	{ "0.255.255.255", "unspecified" },
	{ "10.255.255.255", "private" },    /* 10.0.0.0/8 */
	{ "100.64.0.0", "shared (CGNAT)" }, /* 100.64.0.0/10 */
	{ "100.127.255.255", "shared (CGNAT)" },
	{ "127.255.0.1", "loopback" },                 /* 127.0.0.0/8 */
	{ "169.254.0.1", "link-local" },               /* 169.254.0.0/16 */
	{ "172.16.0.0", "private" },                   /* 172.16.0.0/12 */
	{ "192.0.0.0", "IETF protocol assignment" },   /* 192.0.0.0/24, refused whole: */
	{ "192.0.0.8", "IETF protocol assignment" },   /* ... the dummy address, */
	{ "192.0.0.9", "IETF protocol assignment" },   /* ... PCP anycast (globally reachable), */
	{ "192.0.0.10", "IETF protocol assignment" },  /* ... TURN anycast (globally reachable), */
	{ "192.0.0.170", "IETF protocol assignment" }, /* ... NAT64/DNS64 discovery */
	{ "192.0.1.0", NULL },
	{ "192.0.2.1", "documentation" },        /* 192.0.2.0/24 TEST-NET-1 */
	{ "192.31.196.1", NULL },                /* AS112-v4: globally reachable */
	{ "192.52.193.1", NULL },                /* AMT: globally reachable */
	{ "192.88.99.1", "6to4 relay anycast" }, /* 192.88.99.0/24, deprecated */
	{ "192.168.0.1", "private" },            /* 192.168.0.0/16 */
	{ "192.175.48.1", NULL },                /* direct delegation AS112: globally reachable */
	{ "198.17.255.255", NULL },
	{ "198.18.0.0", "benchmarking" }, /* 198.18.0.0/15 */
	{ "198.19.255.255", "benchmarking" },
	{ "198.20.0.0", NULL },
	{ "198.51.100.7", "documentation" }, /* 198.51.100.0/24 TEST-NET-2 */
	{ "203.0.113.7", "documentation" },  /* 203.0.113.0/24 TEST-NET-3 */
	{ "239.255.255.255", "multicast" },  /* 224.0.0.0/4 */
	{ "240.0.0.1", "reserved" },         /* 240.0.0.0/4 */
	{ "255.255.255.254", "reserved" },
	{ "255.255.255.255", "broadcast" }, /* limited broadcast */
	{ "::", "unspecified" },            /* ::/128 */
	{ "::1", "loopback" },              /* ::1/128 */
	{ "::2", "reserved" },              /* IPv4-compatible, deprecated */
	{ "::ffff:10.0.0.1", "private" },   /* ::ffff:0:0/96 IPv4-mapped: the IPv4 address's */
	{ "::ffff:198.18.0.1", "benchmarking" },
	{ "::ffff:93.184.216.34", NULL },
	{ "::ffff:0:10.0.0.1", "private" }, /* ::ffff:0:0:0/96 IPv4-translated (RFC 2765) */
	{ "::ffff:0:93.184.216.34", "IPv4-translated" },
	{ "64:ff9b::192.0.2.1", "documentation" }, /* 64:ff9b::/96 NAT64 (globally reachable) */
	{ "64:ff9b::93.184.216.34", NULL },
	{ "64:ff9b:1::10.0.0.1", "NAT64 local-use" }, /* 64:ff9b:1::/48, refused whole */
	{ "64:ff9b:1::93.184.216.34", "NAT64 local-use" },
	{ "64:ff9b:1:ffff::1", "NAT64 local-use" },
	{ "100::", "discard-only" }, /* 100::/64 */
	{ "100::ffff:ffff:ffff:ffff", "discard-only" },
	{ "100:0:0:1::", "reserved" },
	/* Teredo 2001::/32 (RFC 4380 section 4): 2001:0:SERVER:flags:port:CLIENT,
	 * the client's port and address inverted; the client's class, else the
	 * server's, else Teredo's own (a tunnel, never a host of the internet) */
	{ "2001:0:4136:e378:8000:63bf:f5ff:fffe", "private" }, /* client 10.0.0.1 */
	{ "2001:0:c0a8:101::a247:27dd", "private" },           /* server 192.168.1.1 */
	{ "2001:0:4136:e378:8000:63bf:a247:27dd", "Teredo" },  /* both global */
	{ "2001:0:4136:e378:8000:63bf:f7f7:f7f7", "Teredo" },
	{ "2001:1::1", "IETF protocol assignment" }, /* 2001::/23, refused whole: PCP anycast, */
	{ "2001:1::3", "IETF protocol assignment" }, /* ... DNS-SD SRP anycast, */
	{ "2001:2::1", "benchmarking" },             /* 2001:2::/48 */
	{ "2001:2:0:1::1", "benchmarking" },
	{ "2001:3::1", "IETF protocol assignment" },     /* ... AMT, */
	{ "2001:4:112::1", "IETF protocol assignment" }, /* ... AS112-v6, */
	{ "2001:10::1", "IETF protocol assignment" },    /* ... ORCHID (deprecated), */
	{ "2001:20::1", "IETF protocol assignment" },    /* ... ORCHIDv2, */
	{ "2001:30::1", "IETF protocol assignment" },    /* ... DRIP */
	{ "2001:1ff:ffff::1", "IETF protocol assignment" },
	{ "2001:200::1", NULL },
	{ "2001:db8::1", "documentation" }, /* 2001:db8::/32 */
	{ "2001:db8:ffff::1", "documentation" },
	{ "2001:db9::1", NULL },
	{ "2002:a00:1::1", "private" }, /* 2002::/16 6to4: the IPv4 address's */
	{ "2002:c000:201::1", "documentation" },
	{ "2002:c058:6301::1", "6to4 relay anycast" },
	{ "2002:5db8:d822::1", NULL },
	{ "2620:4f:8000::1", NULL },    /* direct delegation AS112: globally reachable */
	{ "3fff::1", "documentation" }, /* 3fff::/20 */
	{ "3fff:fff:ffff::1", "documentation" },
	{ "3fff:1000::1", NULL },
	{ "5f00::1", "SRv6 SID" }, /* 5f00::/16 */
	{ "5f00:ffff::1", "SRv6 SID" },
	{ "fc00::1", "private" }, /* fc00::/7 unique local */
	{ "fdff:ffff::1", "private" },
	{ "fe80::1", "link-local" }, /* fe80::/10 */
	{ "febf:ffff::1", "link-local" },
	{ "fec0::1", "site-local" }, /* fec0::/10, deprecated (RFC 3879) */
	{ "feff:ffff::1", "site-local" },
	{ "ff0e::1", "multicast" }, /* ff00::/8 */
	/* outside 2000::/3, the one global unicast block (IANA's IPv6 address space) */
	{ "4000::1", "reserved" },
	{ "8000::1", "reserved" },
	{ "e000::1", "reserved" },
	{ "1fff:ffff::1", "reserved" },
	{ "2000::1", NULL },
	{ "3fff:ffff:ffff::1", NULL },
};

static void test_special_purpose(void **state)
{
	size_t wrong = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
		uint8_t a[16];
		enum na_kind k;
		const char *got;

		assert_null(na_host_problem(special[i].addr, &k, a));
		got = na_addr_class(k == NA_IPV4, a);
		if (!got != !special[i].kind || (got && strcmp(got, special[i].kind) != 0)) {
			print_error("%s: class %s, want %s\n", special[i].addr, got ? got : "NULL",
				    special[i].kind ? special[i].kind : "NULL");
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_addr_class),
		cmocka_unit_test(test_special_purpose),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
