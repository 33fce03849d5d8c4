/* netallow.c - see netallow.h. */
#include "policy/netallow.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "policy/cleanup.h"

/* Why the labels of name (no "*." prefix) do not make a host name, or NULL. */
static const char *na_name_problem(const char *name, size_t *ret_labels)
{
	size_t n = strlen(name), labels = 0;
	const char *label = name;
	bool digits = true;

	if (n == 0)
		return "is empty";
	if (n > NA_HOST_MAX)
		return "is longer than 253 bytes";
	if (name[n - 1] == '.')
		return "ends in a dot (write the name without it)";
	for (const char *c = name;; c++) {
		if (*c == '.' || *c == '\0') {
			size_t len = (size_t)(c - label);

			if (len == 0)
				return "has an empty label";
			if (len > NA_LABEL_MAX)
				return "has a label longer than 63 bytes";
			if (label[0] == '-' || c[-1] == '-')
				return "has a label that starts or ends with '-'";
			labels++;
			if (*c == '\0')
				break;
			label = c + 1;
			digits = true;
			continue;
		}
		if (*c >= 'A' && *c <= 'Z')
			return "has an upper-case letter (write host names in lower case)";
		if (*c == '*')
			return "has a '*' that is not its whole first label";
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-'))
			return "has a character that is not a letter, a digit, '-' or '.'";
		if (*c < '0' || *c > '9')
			digits = false;
	}
	/* "1.2.3.4.5", "999.1.1.1": no top-level label is all digits
	 * (RFC 3696 section 2), so an address cannot pass as a name */
	if (digits)
		return "is not an address and ends in a label of digits only";
	*ret_labels = labels;
	return NULL;
}

const char *na_host_problem(const char *host, enum na_kind *ret_kind, uint8_t addr[16])
{
	uint8_t a[16] = { 0 };
	size_t labels = 0;
	const char *problem;

	if (inet_pton(AF_INET, host, a) == 1) {
		memcpy(addr, a, 16);
		*ret_kind = NA_IPV4;
		return NULL;
	}
	if (strstr(host, "://"))
		return "has a scheme: write the host alone (its ports go in \"ports\")";
	if (strchr(host, ':')) {
		const char *colon = strchr(host, ':');

		if (!strchr(colon + 1, ':') && colon[1])
			return "has a port: write the host alone (its ports go in \"ports\")";
		if (inet_pton(AF_INET6, host, a) != 1)
			return "is not an IPv6 address (write it without brackets or a zone)";
		memcpy(addr, a, 16);
		*ret_kind = NA_IPV6;
		return NULL;
	}
	if (strcmp(host, "*") == 0)
		return "is a bare '*', which admits every host";
	if (strncmp(host, "*.", 2) == 0) {
		problem = na_name_problem(host + 2, &labels);
		if (problem)
			return problem;
		if (labels < 2)
			return "is a '*.' of a top-level domain only, which admits most of the internet";
		*ret_kind = NA_SUFFIX;
		return NULL;
	}
	problem = na_name_problem(host, &labels);
	if (problem)
		return problem;
	*ret_kind = NA_NAME;
	return NULL;
}

/* host ends in ".suffix" with at least one label before it, in any case. */
static bool na_below(const char *host, const char *suffix)
{
	size_t h = strlen(host), s = strlen(suffix);

	return h > s + 1 && host[h - s - 1] == '.' && strcasecmp(host + h - s, suffix) == 0;
}

long na_match(const struct na_rule *rules, size_t n, const char *host, uint16_t port)
{
	uint8_t a4[16] = { 0 }, a6[16] = { 0 };
	bool is4 = inet_pton(AF_INET, host, a4) == 1;
	bool is6 = !is4 && inet_pton(AF_INET6, host, a6) == 1;

	for (size_t i = 0; i < n; i++) {
		const struct na_rule *r = &rules[i];
		bool host_ok = false, port_ok = false;

		switch (r->kind) {
		case NA_NAME: host_ok = !is4 && !is6 && strcasecmp(host, r->host) == 0; break;
		case NA_SUFFIX: host_ok = !is4 && !is6 && na_below(host, r->host + 2); break;
		case NA_IPV4: host_ok = is4 && memcmp(a4, r->addr, 4) == 0; break;
		case NA_IPV6: host_ok = is6 && memcmp(a6, r->addr, 16) == 0; break;
		}
		for (size_t j = 0; j < r->n_ports && !port_ok; j++)
			port_ok = r->ports[j] == port;
		if (host_ok && port_ok)
			return (long)i;
	}
	return -1;
}

/* Where a block's addresses hold an IPv4 address that says where they lead. */
enum na_embed {
	NA_EMBED_NONE,
	NA_EMBED_LAST4,  /* bytes 12..15 (RFC 4291 2.5.5.2, RFC 2765, RFC 6052 /96) */
	NA_EMBED_6TO4,   /* bytes 2..5 (RFC 3056 section 2) */
	NA_EMBED_TEREDO, /* the client, bytes 12..15 inverted, then the server, 4..7 (RFC 4380 section 4) */
};

/* One block of the IANA Special-Purpose Address Registries (IPv4 and IPv6,
 * RFC 6890 as updated), or of a form that embeds an IPv4 address. */
struct na_block {
	bool v4;
	uint8_t prefix[16];
	unsigned bits;
	const char *kind;    /* NULL: globally reachable per the registry */
	enum na_embed embed; /* an embedded IPv4 address of a class is refused as that class first */
};

/* First match wins: a block before any block that holds it. A block the
 * registry marks globally reachable inside one that is not (192.0.0.9/32 and
 * 192.0.0.10/32 in 192.0.0.0/24, PCP, TURN and DNS-SD anycast, AMT, AS112-v6,
 * ORCHIDv2 and DRIP in 2001::/23) is refused with it: no package host lives
 * there, and one class a block is simpler to audit. Listed here so that the
 * registry's entries can be checked off one by one (tests/unit/test_netallow.c);
 * docs/security.md keeps the list. */
static const struct na_block na_blocks[] = {
	{ true, { 0 }, 8, "unspecified", NA_EMBED_NONE },
	{ true, { 10 }, 8, "private", NA_EMBED_NONE },
	{ true, { 100, 64 }, 10, "shared (CGNAT)", NA_EMBED_NONE },
	{ true, { 127 }, 8, "loopback", NA_EMBED_NONE },
	{ true, { 169, 254, 169, 254 }, 32, "cloud metadata", NA_EMBED_NONE },
	{ true, { 169, 254 }, 16, "link-local", NA_EMBED_NONE },
	{ true, { 172, 16 }, 12, "private", NA_EMBED_NONE },
	{ true, { 192, 0, 0 }, 24, "IETF protocol assignment", NA_EMBED_NONE },
	{ true, { 192, 0, 2 }, 24, "documentation", NA_EMBED_NONE },
	{ true, { 192, 31, 196 }, 24, NULL, NA_EMBED_NONE }, /* AS112-v4 */
	{ true, { 192, 52, 193 }, 24, NULL, NA_EMBED_NONE }, /* AMT */
	{ true, { 192, 88, 99 }, 24, "6to4 relay anycast", NA_EMBED_NONE },
	{ true, { 192, 168 }, 16, "private", NA_EMBED_NONE },
	{ true, { 192, 175, 48 }, 24, NULL, NA_EMBED_NONE }, /* direct delegation AS112 */
	{ true, { 198, 18 }, 15, "benchmarking", NA_EMBED_NONE },
	{ true, { 198, 51, 100 }, 24, "documentation", NA_EMBED_NONE },
	{ true, { 203, 0, 113 }, 24, "documentation", NA_EMBED_NONE },
	{ true, { 224 }, 4, "multicast", NA_EMBED_NONE },
	{ true, { 255, 255, 255, 255 }, 32, "broadcast", NA_EMBED_NONE },
	{ true, { 240 }, 4, "reserved", NA_EMBED_NONE },
	{ false, { 0 }, 128, "unspecified", NA_EMBED_NONE },
	{ false, { [15] = 1 }, 128, "loopback", NA_EMBED_NONE },
	{ false, { [10] = 0xff, 0xff }, 96, NULL, NA_EMBED_LAST4 }, /* IPv4-mapped */
	{ false, { [8] = 0xff, 0xff }, 96, "IPv4-translated", NA_EMBED_LAST4 },
	{ false, { 0 }, 96, "reserved", NA_EMBED_NONE },              /* IPv4-compatible, deprecated */
	{ false, { 0, 0x64, 0xff, 0x9b }, 96, NULL, NA_EMBED_LAST4 }, /* NAT64 (RFC 6052) */
	/* RFC 8215: where the IPv4 address sits depends on the operator's
	 * prefix length (RFC 6052 section 2.2), so it is not read: the /48 is
	 * refused whole, whatever it holds */
	{ false, { 0, 0x64, 0xff, 0x9b, 0, 1 }, 48, "NAT64 local-use", NA_EMBED_NONE },
	{ false, { 1 }, 64, "discard-only", NA_EMBED_NONE },
	{ false, { 0x20, 0x01, 0, 0 }, 32, "Teredo", NA_EMBED_TEREDO },
	{ false, { 0x20, 0x01, 0, 2, 0, 0 }, 48, "benchmarking", NA_EMBED_NONE },
	{ false, { 0x20, 0x01 }, 23, "IETF protocol assignment", NA_EMBED_NONE },
	{ false, { 0x20, 0x01, 0x0d, 0xb8 }, 32, "documentation", NA_EMBED_NONE },
	{ false, { 0x20, 0x02 }, 16, NULL, NA_EMBED_6TO4 },
	{ false, { 0x3f, 0xff, 0 }, 20, "documentation", NA_EMBED_NONE },
	{ false, { 0x5f, 0 }, 16, "SRv6 SID", NA_EMBED_NONE },
	{ false, { 0xfc }, 7, "private", NA_EMBED_NONE }, /* unique local (RFC 4193) */
	{ false, { 0xfe, 0x80 }, 10, "link-local", NA_EMBED_NONE },
	{ false, { 0xfe, 0xc0 }, 10, "site-local", NA_EMBED_NONE }, /* deprecated (RFC 3879) */
	{ false, { 0xff }, 8, "multicast", NA_EMBED_NONE },
	/* the rest of IPv6 outside 2000::/3 is not allocated (IANA's IPv6
	 * Address Space): "reserved", after the table */
};

/* a's first bits equal prefix's */
static bool na_in(const uint8_t *a, const uint8_t *prefix, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	return memcmp(a, prefix, whole) == 0 &&
	       (rest == 0 || ((a[whole] ^ prefix[whole]) & (uint8_t)(0xff << (8 - rest))) == 0);
}

/* The class of the IPv4 address a block embeds in a, or NULL. */
static const char *na_embedded_class(enum na_embed embed, const uint8_t *a)
{
	uint8_t client[4];
	const char *kind;

	switch (embed) {
	case NA_EMBED_LAST4: return na_addr_class(true, a + 12);
	case NA_EMBED_6TO4: return na_addr_class(true, a + 2);
	case NA_EMBED_TEREDO:
		for (int i = 0; i < 4; i++)
			client[i] = (uint8_t)~a[12 + i];
		kind = na_addr_class(true, client);
		return kind ? kind : na_addr_class(true, a + 4);
	case NA_EMBED_NONE: break;
	}
	return NULL;
}

const char *na_addr_class(bool v4, const uint8_t *a)
{
	for (size_t i = 0; i < N_ELEMENTS(na_blocks); i++) {
		const struct na_block *b = &na_blocks[i];
		const char *inner;

		if (b->v4 != v4 || !na_in(a, b->prefix, b->bits))
			continue;
		inner = na_embedded_class(b->embed, a);
		return inner ? inner : b->kind;
	}
	if (!v4 && (a[0] & 0xe0) != 0x20)
		return "reserved";
	return NULL;
}

int na_cred_value_check(const char *v, size_t len)
{
	if (len == 0)
		return -ENODATA;
	if (len > NA_CRED_VALUE_MAX)
		return -E2BIG;
	for (size_t i = 0; i < len; i++)
		if (v[i] < 0x20 || v[i] > 0x7e)
			return -EILSEQ;
	return 0;
}
