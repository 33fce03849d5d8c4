/* netallow.c - see netallow.h. */
#include "netallow.h"

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

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
		case NA_NAME:
			host_ok = !is4 && !is6 && strcasecmp(host, r->host) == 0;
			break;
		case NA_SUFFIX:
			host_ok = !is4 && !is6 && na_below(host, r->host + 2);
			break;
		case NA_IPV4:
			host_ok = is4 && memcmp(a4, r->addr, 4) == 0;
			break;
		case NA_IPV6:
			host_ok = is6 && memcmp(a6, r->addr, 16) == 0;
			break;
		}
		for (size_t j = 0; j < r->n_ports && !port_ok; j++)
			port_ok = r->ports[j] == port;
		if (host_ok && port_ok)
			return (long)i;
	}
	return -1;
}

const char *na_addr_class(bool v4, const uint8_t *a)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t zero[16] = { 0 };

	if (!v4) {
		if (memcmp(a, mapped, 12) == 0)
			return na_addr_class(true, a + 12);
		/* 64:ff9b::/96 (RFC 6052): NAT64 reaches the IPv4 address it holds */
		if (memcmp(a, (const uint8_t[12]){ 0, 0x64, 0xff, 0x9b }, 12) == 0)
			return na_addr_class(true, a + 12);
		if (memcmp(a, zero, 12) == 0) {
			if (memcmp(a + 12, zero, 3) == 0 && a[15] <= 1)
				return a[15] == 1 ? "loopback" : "unspecified";
			return "reserved";   /* IPv4-compatible, deprecated (RFC 4291 2.5.5.1) */
		}
		if ((a[0] & 0xfe) == 0xfc)
			return "private";
		if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
			return "link-local";
		if (a[0] == 0xff)
			return "multicast";
		/* fd00:ec2::254, AWS's metadata service over IPv6, is in fc00::/7 */
		return NULL;
	}
	if (a[0] == 127)
		return "loopback";
	if (a[0] == 169 && a[1] == 254)
		return a[2] == 169 && a[3] == 254 ? "cloud metadata" : "link-local";
	if (a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) || (a[0] == 192 && a[1] == 168))
		return "private";
	if (a[0] == 100 && (a[1] & 0xc0) == 64)
		return "shared (CGNAT)";
	if (a[0] == 0)
		return "unspecified";
	if (a[0] >= 224)
		return a[0] < 240 ? "multicast" : "reserved";
	return NULL;
}
