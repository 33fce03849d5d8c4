/* test_netallow.c - network.allow's rules matched against destinations
 * (policy/netallow.c); their checks as written are in test_manifest.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "netallow.h"

static struct na_rule rule(const char *host, uint16_t port)
{
	struct na_rule r = { .host = (char *)host, .n_ports = 1, .ports = { port } };

	assert_null(na_host_problem(host, &r.kind, r.addr));
	return r;
}

static void test_match(void **state)
{
	const struct na_rule rules[] = {
		rule("registry.npmjs.org", 443),
		rule("*.pythonhosted.org", 443),
		rule("10.89.0.5", 8443),
		rule("fd00::5", 22),
	};
	size_t n = sizeof(rules) / sizeof(rules[0]);

	(void)state;
	assert_int_equal(na_match(rules, n, "registry.npmjs.org", 443), 0);
	assert_int_equal(na_match(rules, n, "REGISTRY.npmjs.ORG", 443), 0);   /* DNS ignores case */
	assert_int_equal(na_match(rules, n, "registry.npmjs.org", 80), -1);   /* not its port */
	assert_int_equal(na_match(rules, n, "evil-registry.npmjs.org", 443), -1);
	assert_int_equal(na_match(rules, n, "registry.npmjs.org.evil.example", 443), -1);
	assert_int_equal(na_match(rules, n, "files.pythonhosted.org", 443), 1);
	assert_int_equal(na_match(rules, n, "a.b.pythonhosted.org", 443), 1);
	assert_int_equal(na_match(rules, n, "pythonhosted.org", 443), -1);    /* the suffix itself */
	assert_int_equal(na_match(rules, n, "evilpythonhosted.org", 443), -1);
	assert_int_equal(na_match(rules, n, ".pythonhosted.org", 443), -1);
	assert_int_equal(na_match(rules, n, "10.89.0.5", 8443), 2);
	assert_int_equal(na_match(rules, n, "10.89.0.6", 8443), -1);
	assert_int_equal(na_match(rules, n, "fd00::5", 22), 3);
	assert_int_equal(na_match(rules, n, "fd00:0:0::5", 22), 3);          /* the address, not the text */
	assert_int_equal(na_match(rules, n, "fd00::6", 22), -1);
	assert_int_equal(na_match(rules, 0, "registry.npmjs.org", 443), -1);  /* allow []: nothing */
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
	assert_non_null(na_host_problem("1.2.3", &k, a));   /* not inet_pton's, not a name */
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
	assert_string_equal(v4(255, 255, 255, 255), "reserved");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_addr_class),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
