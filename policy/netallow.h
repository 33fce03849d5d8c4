/* netallow.h - the rules of the manifest's network.allow (docs/manifest.md,
 * "network"): which hosts, by name, name suffix or address, and which ports a
 * turn's commands may reach. Pure: the rules are checked as written in the
 * signed manifest and matched against a destination as a proxy is asked for it.
 * Sources: RFC 1035 section 2.3.1 and RFC 1123 section 2.1 (a host name's
 * labels), RFC 4291 section 2.2 and inet_pton(3) (address literals). */
#ifndef TURNINIT_NETALLOW_H
#define TURNINIT_NETALLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NA_HOST_MAX 253 /* bytes of a host name (RFC 1035: 255 octets on the wire) */
#define NA_LABEL_MAX 63 /* bytes of one label */
#define NA_PORTS_MAX 16 /* ports of one rule */

enum na_kind {
	NA_NAME,   /* "registry.example.org": that name only */
	NA_SUFFIX, /* "*.pkgs.example.org": any name below it (not the suffix itself) */
	NA_IPV4,   /* "10.89.0.5" */
	NA_IPV6,   /* "fd00::5", without brackets */
};

/* clang-format 14 breaks a #define whose comment runs on over lines: kept as written */
/* clang-format off */
#define NA_CRED_NAME_MAX 64     /* bytes of a credential's name: [A-Za-z0-9_.-], first a
				   letter or a digit (a file name under --credentials) */
/* clang-format on */
#define NA_CRED_USER_MAX 128   /* bytes of a Basic user name: printable ASCII but ':' */
#define NA_CRED_FIELD_MAX 64   /* bytes of a named header: an RFC 9110 token */
#define NA_CRED_VALUE_MAX 4095 /* bytes of a credential's value */

/* How a rule's credential is written into each request the gateway sends
 * (docs/manifest.md, "network.allow[].credential"). */
enum na_present {
	NA_BEARER, /* "Authorization: Bearer VALUE" */
	NA_BASIC,  /* "Authorization: Basic base64(USER:VALUE)" */
	NA_HEADER, /* "FIELD: VALUE" (e.g. PRIVATE-TOKEN) */
};

/* A rule's credential: its name and how it is presented, never its value,
 * which the launcher gives at start (init/sandbox/creds.c). */
struct na_cred {
	char name[NA_CRED_NAME_MAX + 1];
	enum na_present present;
	char user[NA_CRED_USER_MAX + 1];   /* NA_BASIC only, else "" */
	char field[NA_CRED_FIELD_MAX + 1]; /* NA_HEADER only, else "" */
	char *ca;                          /* "ca": an absolute path of a PEM bundle
					      in the image, malloc'd; NULL: the
					      image's default bundle */
};

struct na_rule {
	char *host;           /* as written (lower case); malloc'd */
	struct na_cred *cred; /* "credential", malloc'd; NULL: none */
	enum na_kind kind;
	uint8_t addr[16];             /* NA_IPV4: the first 4 bytes; NA_IPV6: all 16 */
	uint16_t ports[NA_PORTS_MAX]; /* 1..65535, each once */
	size_t n_ports;               /* 1..NA_PORTS_MAX */
};

/* na_host_problem - why host cannot be a rule's host, or NULL when it can;
 * then *ret_kind (and addr, for an address) are set. A name is 1 to
 * NA_HOST_MAX bytes of labels of 1 to NA_LABEL_MAX bytes of [a-z0-9-], no
 * label starting or ending with '-', no trailing dot, not all digits in its
 * last label; a suffix is "*." and a name of at least two labels (a bare "*"
 * and "*.com" are refused: they admit most of the internet). Upper case is
 * refused, not folded: a signed policy says exactly what it means. */
const char *na_host_problem(const char *host, enum na_kind *ret_kind, uint8_t addr[16]);

/* na_match - the index of the first of n rules that admits host (a name in
 * any case, or an address literal as a proxy request gives it) on port, or -1.
 * A name matches an NA_NAME rule equal to it, or an NA_SUFFIX rule it ends in
 * below the suffix ("a.b.example.org" under "*.example.org"); an address
 * matches a rule of the same address. */
long na_match(const struct na_rule *rules, size_t n, const char *host, uint16_t port);

/* na_addr_class - the kind of a resolved address that a name on the list
 * may not lead to unless that address is itself listed (DNS rebinding), or
 * NULL for an address of the internet. Every block of the IANA IPv4 and
 * IPv6 Special-Purpose Address Registries has its class ("loopback",
 * "private", "documentation", "benchmarking", ...: the list is in
 * docs/security.md, "The addresses a listed name may not lead to"), but the
 * few the registry marks globally reachable outside a refused block; IPv6
 * outside 2000::/3 is "reserved". A form that embeds an IPv4 address
 * (IPv4-mapped, IPv4-translated, NAT64 64:ff9b::/96, 6to4, Teredo's client
 * then its server) is first its IPv4 address's class, else its own.
 * addr: 4 bytes (v4 true) or 16. Sources: RFC 6890 and the IANA registries
 * (iana-ipv4-special-registry, iana-ipv6-special-registry), RFC 4291 2.5.5
 * and RFC 6052 (embedded IPv4), RFC 3056 (6to4), RFC 4380 section 4
 * (Teredo), RFC 3879 (site-local), RFC 4193 (unique local). */
const char *na_addr_class(bool v4, const uint8_t *addr);

/* na_cred_value_check - whether v (len bytes, no NUL needed) may be a
 * credential's value, the launcher's file's (init/sandbox/creds.c) and a
 * credential request's (policy/request.c) alike: 1 to NA_CRED_VALUE_MAX
 * bytes of 0x20..0x7e, so that it goes into a request head as it is. 0, or
 * -ENODATA (empty), -E2BIG (longer), -EILSEQ (another byte); the caller says
 * which, never a byte of v. */
int na_cred_value_check(const char *v, size_t len);

#endif
