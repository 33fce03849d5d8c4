/* test_manifest.c - unit tests of policy/manifest.c (docs/manifest.md).
 *
 * Most refusals are table cases: the good manifest below with one field
 * replaced (or removed), each run as its own named cmocka test so a failure
 * names the case.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "jansson_fail.h"
#include "policy/envfilter.h"
#include "policy/manifest.h"
#include "policy/seccomp_groups.h"
#include "policy/sjson.h"
#include "vectors.h"

#define NOW 1700000000LL          /* 2023-11-14T22:13:20Z */
#define GOOD_EXPIRES 1811808000LL /* 2027-06-01T00:00:00Z */

/* Every field, none at its default. */
static const char good_json[] =
	"{\n"
	"  \"turninit\": 1,\n"
	"  \"expires\": \"2027-06-01T00:00:00Z\",\n"
	"  \"user\": {\"uid\": 1000, \"gid\": 1001},\n"
	"  \"home\": \"/home/agent\",\n"
	"  \"workdir\": \"/work\",\n"
	"  \"shell\": \"/usr/bin/bash\",\n"
	"  \"env\": {\n"
	"    \"set\": {\"PATH\": \"/usr/local/bin:/usr/bin:/bin\", \"LANG\": \"C.UTF-8\",\n"
	"            \"TERM\": \"dumb\", \"LITERAL\": \"${PATH}\", \"EMPTY\": \"\",\n"
	"            \"UNI\": \"h\\u00e9llo \xe2\x9c\x93\"},\n"
	"    \"allow\": [\"TZ\", \"GIT_AUTHOR_NAME\", \"GIT_AUTHOR_EMAIL\", \"LC_*\"]\n"
	"  },\n"
	"  \"limits\": {\"timeout_s\": 30, \"output_bytes\": 1048576, \"nofile\": 256,\n"
	"             \"nproc\": 64, \"fsize_bytes\": 4294967296, \"concurrency\": 2,\n"
	"             \"result_bytes\": 4096},\n"
	"  \"seccomp\": {\"deny\": [\"@default\", \"@clock\", \"ptrace\"], \"allow\": [\"personality\"]},\n"
	"  \"landlock\": {\"writable\": [\"/home/agent\", \"/tmp\", \"/work\"], \"optional\": true,\n"
	"               \"shm\": false},\n"
	"  \"callers\": {\"uids\": [1000, 0, 2000]},\n"
	"  \"network\": {\"allow\": [{\"host\": \"registry.example.org\", \"ports\": [443]},\n"
	"                        {\"host\": \"*.pkgs.example.org\", \"ports\": [443, 80]},\n"
	"                        {\"host\": \"10.89.0.5\", \"ports\": [8443]},\n"
	"                        {\"host\": \"fd00::5\", \"ports\": [22]}],\n"
	"              \"isolation\": \"namespace\"},\n"
	"  \"audit\": {\"required\": true}\n"
	"}\n";

/* Only the required fields. */
static const char minimal_json[] =
	"{\"turninit\":1,\"expires\":\"2027-06-01T00:00:00Z\",\"user\":{\"uid\":1000,\"gid\":1000},"
	"\"home\":\"/home/agent\",\"env\":{\"set\":{\"PATH\":\"/usr/bin:/bin\"}}}";

static bool known_syscall(const char *name)
{
	static const char *const known[] = {
		"ptrace", "personality", "mount", "reboot", "read", "write", "_llseek",
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(name, known[i]) == 0)
			return true;
	return false;
}

static int parse_text(const char *text, size_t len, struct mf_manifest **ret, struct tn_error *err)
{
	return mf_parse((const uint8_t *)text, len, NOW, known_syscall, ret, err);
}

static int parse_str(const char *text, struct mf_manifest **ret, struct tn_error *err)
{
	return parse_text(text, strlen(text), ret, err);
}

/* Expect refusal with code rc and a message containing want. */
static void assert_refused(const char *text, size_t len, int rc, const char *want)
{
	struct tn_error err = { 0 };
	struct mf_manifest *m = NULL;
	int r = parse_text(text, len, &m, &err);

	if (r != rc)
		fail_msg("expected %d, got %d (%s)", rc, r, r < 0 ? err.msg : "accepted");
	assert_null(m);
	assert_int_equal(err.code, -rc);
	if (want && !strstr(err.msg, want))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, want);
	assert_null(strchr(err.msg, '\n'));
	assert_memory_equal(err.msg, "manifest: ", 10);
}

/* The good manifest with the field at dotted path replaced by the JSON text
 * value (NULL: removed), dumped compact. */
static char *good_with(const char *path, const char *value)
{
	json_error_t je;
	json_t *root = json_loads(good_json, 0, &je);
	json_t *obj = root;
	char buf[256], *key, *dot;
	char *out;

	assert_non_null(root);
	snprintf(buf, sizeof(buf), "%s", path);
	key = buf;
	while ((dot = strchr(key, '.'))) {
		*dot = '\0';
		obj = json_object_get(obj, key);
		assert_non_null(obj);
		key = dot + 1;
	}
	if (value) {
		json_t *v = json_loads(value, JSON_DECODE_ANY, &je);

		if (!v)
			fail_msg("bad test value %s: %s", value, je.text);
		assert_int_equal(json_object_set_new(obj, key, v), 0);
	} else {
		assert_int_equal(json_object_del(obj, key), 0);
	}
	out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_non_null(out);
	json_decref(root);
	return out;
}

/* ---- table cases: one field of the good manifest changed ---- */

struct mod_case {
	const char *name; /* test name */
	const char *path;
	const char *value; /* JSON text, NULL: remove the field */
	int rc;            /* 0: accepted */
	const char *want;  /* substring of the message */
};

/* clang-format 14 reads a macro body that starts with '{' as a block: kept as written */
/* clang-format off */
#define BAD(p, v, w) { "refused: " p " = " v, p, v, -EINVAL, w }
#define MISSING(p, w) { "refused: " p " absent", p, NULL, -EINVAL, w }
#define GOOD(p, v) { "accepted: " p " = " v, p, v, 0, NULL }
#define ABSENT(p) { "accepted: " p " absent", p, NULL, 0, NULL }
/* clang-format on */

static const struct mod_case mod_cases[] = {
	/* each required field missing */
	MISSING("turninit", "manifest: turninit: required"),
	MISSING("expires", "manifest: expires: required"),
	MISSING("user", "manifest: user: required"),
	MISSING("user.uid", "manifest: user.uid: required"),
	MISSING("user.gid", "manifest: user.gid: required"),
	MISSING("home", "manifest: home: required"),
	MISSING("env", "manifest: env: required"),
	MISSING("env.set.PATH", "manifest: env.set: PATH is required"),
	MISSING("env.set", "manifest: env.set: PATH is required"),

	/* wrong types */
	BAD("turninit", "\"1\"", "turninit: expected the integer 1, got a string"),
	BAD("turninit", "1.0", "turninit: expected the integer 1, got a real number"),
	BAD("turninit", "true", "got a boolean"),
	BAD("turninit", "null", "got null"),
	BAD("expires", "1811808000", "expires: expected a string, got an integer"),
	BAD("user", "1000", "user: expected an object, got an integer"),
	BAD("user", "[1000, 1000]", "user: expected an object, got an array"),
	BAD("user.uid", "\"1000\"", "user.uid: expected an integer in 1..4294967294, got a string"),
	BAD("user.uid", "1000.0", "user.uid: expected an integer in 1..4294967294, got a real number"),
	BAD("user.uid", "true", "user.uid: expected an integer"),
	BAD("user.uid", "null", "user.uid: expected an integer"),
	BAD("user.gid", "\"1000\"", "user.gid: expected an integer"),
	BAD("home", "1", "home: expected a string, got an integer"),
	BAD("workdir", "[]", "workdir: expected a string, got an array"),
	BAD("shell", "{}", "shell: expected a string, got an object"),
	BAD("env", "[]", "env: expected an object, got an array"),
	BAD("env.set", "[]", "env.set: expected an object, got an array"),
	BAD("env.set.LANG", "1", "env.set.LANG: expected a string, got an integer"),
	BAD("env.set.LANG", "null", "env.set.LANG: expected a string, got null"),
	BAD("env.allow", "{}", "env.allow: expected an array, got an object"),
	BAD("env.allow", "\"TZ\"", "env.allow: expected an array, got a string"),
	BAD("env.allow", "[\"TZ\", 1]", "env.allow[1]: expected a string, got an integer"),
	BAD("limits", "[]", "limits: expected an object, got an array"),
	BAD("limits.timeout_s", "\"600\"", "limits.timeout_s: expected an integer in 1..86400, got a string"),
	BAD("limits.timeout_s", "600.5",
	    "limits.timeout_s: expected an integer in 1..86400, got a real number"),
	BAD("limits.timeout_s", "1e3", "got a real number"),
	BAD("limits.timeout_s", "true", "got a boolean"),
	BAD("limits.output_bytes", "\"1\"", "limits.output_bytes: expected an integer in 1..1073741824"),
	BAD("limits.nofile", "1024.0", "limits.nofile: expected an integer in 16..1048576"),
	BAD("limits.nproc", "false", "limits.nproc: expected an integer in 1..1048576"),
	BAD("limits.fsize_bytes", "[1]", "limits.fsize_bytes: expected an integer in 1..4611686018427387904"),
	BAD("limits.concurrency", "{}", "limits.concurrency: expected an integer in 1..256"),
	BAD("limits.result_bytes", "\"30000\"",
	    "limits.result_bytes: expected an integer in 256..16777216, got a string"),
	BAD("limits.result_bytes", "256.0",
	    "limits.result_bytes: expected an integer in 256..16777216, got a real number"),
	BAD("seccomp", "[]", "seccomp: expected an object, got an array"),
	BAD("seccomp.deny", "\"@default\"", "seccomp.deny: expected an array, got a string"),
	BAD("seccomp.deny", "[\"@default\", 1]", "seccomp.deny[1]: expected a string, got an integer"),
	BAD("seccomp.allow", "{}", "seccomp.allow: expected an array, got an object"),
	BAD("seccomp.allow", "[null]", "seccomp.allow[0]: expected a string, got null"),
	BAD("expires", "null", "expires: expected a string, got null"),
	BAD("landlock", "\"/tmp\"", "landlock: expected an object, got a string"),
	BAD("landlock.writable", "\"/tmp\"", "landlock.writable: expected an array, got a string"),
	BAD("landlock.writable", "[1]", "landlock.writable[0]: expected a string, got an integer"),
	BAD("landlock.optional", "\"true\"", "landlock.optional: expected a boolean, got a string"),
	BAD("landlock.optional", "1", "landlock.optional: expected a boolean, got an integer"),
	BAD("landlock.shm", "\"false\"", "landlock.shm: expected a boolean, got a string"),
	BAD("landlock.writable", "[\"/\"]",
	    "landlock.writable[0]: \"/\" makes /dev/shm writable, and landlock.shm is false"),
	BAD("landlock.writable", "[\"/tmp\", \"/dev\"]",
	    "landlock.writable[1]: \"/dev\" makes /dev/shm writable"),
	GOOD("landlock.writable", "[\"/dev/shmx\", \"/dev/shm/sub\"]"),
	BAD("landlock.writable", "[\"/tmp\", \"/proc\"]",
	    "landlock.writable[1]: \"/proc\" is in /proc, which commands may not write (they could lower their oom_score_adj)"),
	BAD("landlock.writable", "[\"/proc/self\"]", "landlock.writable[0]: \"/proc/self\" is in /proc"),
	GOOD("landlock.writable", "[\"/procx\"]"),
	BAD("callers", "[1000]", "callers: expected an object, got an array"),
	BAD("network", "true", "network: expected an object, got a boolean"),
	BAD("network.allow", "{}", "network.allow: expected an array, got an object"),
	BAD("network.allow", "[\"a.example\"]",
	    "network.allow[0]: expected an object {\"host\", \"ports\"}, got a string"),
	BAD("network.allow", "[{\"ports\": [443]}]", "network.allow[0].host: required"),
	BAD("network.allow", "[{\"host\": \"a.example\"}]", "network.allow[0].ports: required"),
	BAD("network.allow", "[{\"host\": \"a.example\", \"ports\": [443], \"proto\": \"tcp\"}]",
	    "network.allow[0].proto: unknown key"),
	BAD("network.allow", "[{\"host\": \"*\", \"ports\": [443]}]",
	    "\"*\" is a bare '*', which admits every host"),
	BAD("network.allow", "[{\"host\": \"*.com\", \"ports\": [443]}]",
	    "a '*.' of a top-level domain only"),
	BAD("network.allow", "[{\"host\": \"a.*.example\", \"ports\": [443]}]",
	    "has a '*' that is not its whole first label"),
	BAD("network.allow", "[{\"host\": \"a..example\", \"ports\": [443]}]", "has an empty label"),
	BAD("network.allow", "[{\"host\": \".example\", \"ports\": [443]}]", "has an empty label"),
	BAD("network.allow", "[{\"host\": \"\", \"ports\": [443]}]", "\"\" is empty"),
	BAD("network.allow", "[{\"host\": \"a.example.\", \"ports\": [443]}]", "ends in a dot"),
	BAD("network.allow", "[{\"host\": \"-a.example\", \"ports\": [443]}]", "starts or ends with '-'"),
	BAD("network.allow", "[{\"host\": \"A.example\", \"ports\": [443]}]",
	    "write host names in lower case"),
	BAD("network.allow", "[{\"host\": \"a_b.example\", \"ports\": [443]}]", "not a letter, a digit"),
	BAD("network.allow", "[{\"host\": \"a b\", \"ports\": [443]}]", "not a letter, a digit"),
	BAD("network.allow", "[{\"host\": \"999.1.1.1\", \"ports\": [443]}]",
	    "ends in a label of digits only"),
	BAD("network.allow", "[{\"host\": \"[fd00::5]\", \"ports\": [443]}]",
	    "is not an IPv6 address (write it without brackets"),
	BAD("network.allow", "[{\"host\": \"a.example:443\", \"ports\": [443]}]",
	    "has a port: write the host alone (its ports go in \"ports\")"),
	BAD("network.allow", "[{\"host\": \"https://a.example\", \"ports\": [443]}]",
	    "has a scheme: write the host alone"),
	BAD("network.allow", "[{\"host\": \"fe80::1%eth0\", \"ports\": [443]}]", "is not an IPv6 address"),
	BAD("network.allow",
	    "[{\"host\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example\", \"ports\": [443]}]",
	    "has a label longer than 63 bytes"),
	BAD("network.allow", "[{\"host\": \"a.example\", \"ports\": []}]",
	    "network.allow[0].ports: expected an array of 1 to 16 ports"),
	BAD("network.allow", "[{\"host\": \"a.example\", \"ports\": 443}]",
	    "network.allow[0].ports: expected an array of 1 to 16 ports"),
	BAD("network.allow", "[{\"host\": \"a.example\", \"ports\": [0]}]",
	    "network.allow[0].ports[0]: 0 is out of range 1..65535"),
	BAD("network.allow", "[{\"host\": \"a.example\", \"ports\": [65536]}]",
	    "network.allow[0].ports[0]: 65536 is out of range 1..65535"),
	BAD("network.allow", "[{\"host\": \"a.example\", \"ports\": [\"443\"]}]",
	    "network.allow[0].ports[0]: expected an integer"),
	BAD("network.allow", "[{\"host\": \"a.example\", \"ports\": [443, 443]}]",
	    "network.allow[0].ports[1]: 443 is listed twice"),
	BAD("network.allow",
	    "[{\"host\": \"a.example\", \"ports\": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}]",
	    "expected an array of 1 to 16 ports"),
	BAD("network.allow",
	    "[{\"host\": \"a.example\", \"ports\": [80]}, {\"host\": \"a.example\", \"ports\": [443]}]",
	    "network.allow[1].host: \"a.example\" is listed twice (list its ports in one entry)"),
	/* network.allow[].credential */
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\", \"scope\": \"x\"}}]",
	    "network.allow[0].credential.scope: unknown key"),
	BAD("network.allow", "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": \"git\"}]",
	    "network.allow[0].credential: expected an object"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"as\": \"bearer\"}}]",
	    "network.allow[0].credential.name: required"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": 1, \"as\": \"bearer\"}}]",
	    "network.allow[0].credential.name: expected a string, got an integer"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\"}}]",
	    "network.allow[0].credential.as: required"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": true}}]",
	    "network.allow[0].credential.as: expected a string, got a boolean"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"\", \"as\": \"bearer\"}}]",
	    "network.allow[0].credential.name: \"\" is not 1 to 64 of [A-Za-z0-9_.-]"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"../etc/shadow\", \"as\": \"bearer\"}}]",
	    "network.allow[0].credential.name: \"../etc/shadow\" is not 1 to 64"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \".git\", \"as\": \"bearer\"}}]",
	    "network.allow[0].credential.name: \".git\" is not"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"-git\", \"as\": \"bearer\"}}]",
	    "network.allow[0].credential.name: \"-git\" is not"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"a/b\", \"as\": \"bearer\"}}]",
	    "network.allow[0].credential.name: \"a/b\" is not"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\", \"as\": \"bearer\"}}]",
	    "network.allow[0].credential.name: "),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"digest\"}}]",
	    "network.allow[0].credential.as: \"digest\" is not \"bearer\", \"basic\" or \"header\""),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"Bearer\"}}]",
	    "network.allow[0].credential.as: \"Bearer\" is not"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"pypi\", \"as\": \"basic\"}}]",
	    "network.allow[0].credential.user: required"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\", \"user\": \"me\"}}]",
	    "network.allow[0].credential.user: given, but only"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"header\", \"field\": \"X-Token\", \"user\": \"me\"}}]",
	    "network.allow[0].credential.user: given, but only"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"pypi\", \"as\": \"basic\", \"user\": \"a:b\"}}]",
	    "network.allow[0].credential.user: \"a:b\" is not 1 to 128 bytes of printable ASCII"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"pypi\", \"as\": \"basic\", \"user\": \"\"}}]",
	    "network.allow[0].credential.user: \"\" is not"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"pypi\", \"as\": \"basic\", \"user\": \"a\\tb\"}}]",
	    "network.allow[0].credential.user: "),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"pypi\", \"as\": \"basic\", \"user\": \"uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu\"}}]",
	    "network.allow[0].credential.user: "),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"pypi\", \"as\": \"basic\", \"user\": 1}}]",
	    "network.allow[0].credential.user: expected a string"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"gitlab\", \"as\": \"header\"}}]",
	    "network.allow[0].credential.field: required"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\", \"field\": \"X-Token\"}}]",
	    "network.allow[0].credential.field: given, but only"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"gitlab\", \"as\": \"header\", \"field\": \"X Token\"}}]",
	    "network.allow[0].credential.field: \"X Token\" is not a header field name"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"gitlab\", \"as\": \"header\", \"field\": \"X-Token:\"}}]",
	    "network.allow[0].credential.field: \"X-Token:\" is not a header field name"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"gitlab\", \"as\": \"header\", \"field\": \"\"}}]",
	    "network.allow[0].credential.field: \"\" is not a header field name"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"gitlab\", \"as\": \"header\", \"field\": \"authorization\"}}]",
	    "network.allow[0].credential.field: \"authorization\" is written by \"as\": \"bearer\" or \"basic\""),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"gitlab\", \"as\": \"header\", \"field\": \"Proxy-Authorization\"}}]",
	    "network.allow[0].credential.field: \"Proxy-Authorization\" frames, routes"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"gitlab\", \"as\": \"header\", \"field\": \"host\"}}]",
	    "network.allow[0].credential.field: \"host\" frames"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"gitlab\", \"as\": \"header\", \"field\": \"Content-Length\"}}]",
	    "network.allow[0].credential.field: \"Content-Length\" frames"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"gitlab\", \"as\": \"header\", \"field\": \"Transfer-Encoding\"}}]",
	    "network.allow[0].credential.field: \"Transfer-Encoding\" frames"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"gitlab\", \"as\": \"header\", \"field\": \"Cookie\"}}]",
	    "network.allow[0].credential.field: \"Cookie\" frames"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"gitlab\", \"as\": \"header\", \"field\": \"Connection\"}}]",
	    "network.allow[0].credential.field: \"Connection\" frames"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"gitlab\", \"as\": \"header\", \"field\": \"upgrade\"}}]",
	    "network.allow[0].credential.field: \"upgrade\" frames"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"gitlab\", \"as\": \"header\", \"field\": \"TE\"}}]",
	    "network.allow[0].credential.field: \"TE\" frames"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\", \"ca\": \"etc/ca.pem\"}}]",
	    "network.allow[0].credential.ca: \"etc/ca.pem\" is not absolute"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\", \"ca\": \"/etc/../ca.pem\"}}]",
	    "network.allow[0].credential.ca: \"/etc/../ca.pem\" has a \".\" or \"..\" component"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\", \"ca\": 1}}]",
	    "network.allow[0].credential.ca: expected a string"),
	/* a CA bundle where commands may write (/tmp, by default) */
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\", \"ca\": \"/tmp/ca.pem\"}}]",
	    "network.allow[0].credential.ca: /tmp/ca.pem is under /tmp, where commands may write"),
	BAD("network.allow",
	    "[{\"host\": \"*.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\"}}]",
	    "network.allow[0].credential: \"*.example.test\": a credential goes to one named host, never a wildcard"),
	BAD("network.allow",
	    "[{\"host\": \"10.89.0.5\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\"}}]",
	    "network.allow[0].credential: \"10.89.0.5\": a credential needs a host name, which its certificate names"),
	BAD("network.allow",
	    "[{\"host\": \"fd00::5\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\"}}]",
	    "network.allow[0].credential: \"fd00::5\": a credential needs a host name"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [443, 8443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\"}}]",
	    "network.allow[0].credential: the gateway speaks TLS to the one port listed; port 80 is plain HTTP"),
	BAD("network.allow",
	    "[{\"host\": \"git.example.test\", \"ports\": [80], \"credential\": {\"name\": \"git\", \"as\": \"bearer\"}}]",
	    "network.allow[0].credential: the gateway speaks TLS to the one port listed; port 80 is plain HTTP"),
	GOOD("network.allow",
	     "[{\"host\": \"git.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\"}}, {\"host\": \"git2.example.test\", \"ports\": [8443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\", \"ca\": \"/etc/ssl/internal-ca.pem\"}}]"),
	GOOD("network.allow",
	     "[{\"host\": \"pypi.example.test\", \"ports\": [443], \"credential\": {\"name\": \"pypi\", \"as\": \"basic\", \"user\": \"__token__\"}}]"),
	GOOD("network.allow",
	     "[{\"host\": \"gitlab.example.test\", \"ports\": [443], \"credential\": {\"name\": \"GitLab_1.x-y\", \"as\": \"header\", \"field\": \"PRIVATE-TOKEN\"}}]"),
	GOOD("network.allow",
	     "[{\"host\": \"a.example.test\", \"ports\": [443], \"credential\": {\"name\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\", \"as\": \"basic\", \"user\": \"uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu\"}}]"),
	BAD("network.isolation", "\"landlock\"",
	    "network.isolation: \"landlock\" is neither \"namespace\" nor \"seccomp-notify\""),
	BAD("network.isolation", "true", "network.isolation: expected a string, got a boolean"),
	BAD("network.dns", "[]", "network.dns: unknown key"),
	GOOD("network", "{}"),
	GOOD("network.allow", "[]"),
	GOOD("network.allow", "[{\"host\": \"xn--bcher-kva.example\", \"ports\": [1, 65535]}]"),
	GOOD("network.allow", "[{\"host\": \"localhost\", \"ports\": [8080]}]"),
	GOOD("network.allow", "[{\"host\": \"::1\", \"ports\": [8080]}]"),
	BAD("audit", "true", "audit: expected an object, got a boolean"),
	BAD("audit.required", "\"yes\"", "audit.required: expected a boolean, got a string"),
	BAD("audit.required", "1", "audit.required: expected a boolean, got an integer"),
	BAD("audit.log", "\"/var/log/a\"", "manifest: audit.log: unknown key"),
	BAD("callers.uids", "1000", "callers.uids: expected an array, got an integer"),
	BAD("callers.uids", "[\"1000\"]",
	    "callers.uids[0]: expected an integer in 0..4294967294, got a string"),
	BAD("callers.uids", "[1000, 1.5]", "callers.uids[1]: expected an integer"),

	/* out of range, below and above; the limits themselves are accepted */
	BAD("turninit", "0", "turninit: unsupported version 0"),
	BAD("turninit", "2", "turninit: unsupported version 2 (this turninit reads 1)"),
	BAD("user.uid", "0", "user.uid: 0 (root) is refused: commands never run as root"),
	BAD("user.gid", "0", "user.gid: 0 (root) is refused"),
	BAD("user.uid", "-1", "user.uid: -1 is out of range 1..4294967294"),
	BAD("user.uid", "4294967295", "user.uid: 4294967295 is out of range 1..4294967294"),
	BAD("user.gid", "4294967295", "user.gid: 4294967295 is out of range"),
	BAD("user.uid", "99999999999", "out of range"),
	GOOD("user.uid", "1"),
	/* user.uid_range and gid_range: the ids turninit is started as (non-root mode) */
	BAD("user", "{\"uid_range\":[1000,2000]}", "user.gid_range: required with user.uid_range"),
	BAD("user", "{\"gid_range\":[0,0]}", "user.uid_range: required with user.gid_range"),
	BAD("user", "{\"uid_range\":[0,10],\"gid_range\":[0,0]}",
	    "user.uid_range[0]: 0 (root) is refused: commands never run as root"),
	BAD("user", "{\"uid_range\":[5,4],\"gid_range\":[0,0]}", "user.uid_range: [5, 4] is empty"),
	BAD("user", "{\"uid_range\":[1],\"gid_range\":[0,0]}",
	    "user.uid_range: expected [LOW, HIGH], got another number of items"),
	BAD("user", "{\"uid_range\":1000,\"gid_range\":[0,0]}",
	    "user.uid_range: expected [LOW, HIGH], got an integer"),
	BAD("user", "{\"uid_range\":[1,2],\"gid_range\":[0,4294967295]}",
	    "user.gid_range[1]: 4294967295 is out of range 0..4294967294"),
	BAD("user", "{\"uid_range\":[1,2],\"gid_range\":[-1,0]}", "user.gid_range[0]: -1 is out of range"),
	BAD("user", "{\"uid\":1000,\"gid\":1000,\"uid_range\":[1,2],\"gid_range\":[0,0]}",
	    "user: give uid and gid, or uid_range and gid_range, not both"),
	BAD("user", "{\"gid\":1000,\"uid_range\":[1,2],\"gid_range\":[0,0]}", "not both"),
	GOOD("user", "{\"uid_range\":[1000680000,1000689999],\"gid_range\":[0,0]}"),
	GOOD("user", "{\"uid_range\":[1,4294967294],\"gid_range\":[0,4294967294]}"),
	GOOD("user.uid", "4294967294"),
	GOOD("user.gid", "1"),
	GOOD("user.gid", "4294967294"),
	BAD("limits.timeout_s", "0", "limits.timeout_s: 0 is out of range 1..86400"),
	BAD("limits.timeout_s", "86401", "limits.timeout_s: 86401 is out of range 1..86400"),
	BAD("limits.timeout_s", "-5", "limits.timeout_s: -5 is out of range"),
	GOOD("limits.timeout_s", "1"),
	GOOD("limits.timeout_s", "86400"),
	BAD("limits.output_bytes", "0", "limits.output_bytes: 0 is out of range 1..1073741824"),
	BAD("limits.output_bytes", "1073741825", "limits.output_bytes: 1073741825 is out of range"),
	GOOD("limits.output_bytes", "1"),
	GOOD("limits.output_bytes", "1073741824"),
	BAD("limits.nofile", "15", "limits.nofile: 15 is out of range 16..1048576"),
	BAD("limits.nofile", "1048577", "limits.nofile: 1048577 is out of range"),
	GOOD("limits.nofile", "16"),
	GOOD("limits.nofile", "1048576"),
	BAD("limits.nproc", "0", "limits.nproc: 0 is out of range 1..1048576"),
	BAD("limits.nproc", "1048577", "limits.nproc: 1048577 is out of range"),
	GOOD("limits.nproc", "1"),
	GOOD("limits.nproc", "1048576"),
	BAD("limits.fsize_bytes", "0", "limits.fsize_bytes: 0 is out of range 1..4611686018427387904"),
	BAD("limits.fsize_bytes", "4611686018427387905",
	    "limits.fsize_bytes: 4611686018427387905 is out of range"),
	GOOD("limits.fsize_bytes", "1"),
	GOOD("limits.fsize_bytes", "4611686018427387904"),
	BAD("limits.concurrency", "0", "limits.concurrency: 0 is out of range 1..256"),
	BAD("limits.concurrency", "257", "limits.concurrency: 257 is out of range"),
	GOOD("limits.concurrency", "1"),
	GOOD("limits.concurrency", "256"),
	BAD("limits.result_bytes", "255", "limits.result_bytes: 255 is out of range 256..16777216"),
	BAD("limits.result_bytes", "16777217", "limits.result_bytes: 16777217 is out of range"),
	BAD("limits.result_bytes", "0", "limits.result_bytes: 0 is out of range"),
	GOOD("limits.result_bytes", "256"),
	GOOD("limits.result_bytes", "16777216"),
	BAD("callers.uids", "[-1]", "callers.uids[0]: -1 is out of range 0..4294967294"),
	BAD("callers.uids", "[4294967295]", "callers.uids[0]: 4294967295 is out of range"),
	BAD("callers.uids", "[5, 5]", "callers.uids[1]: 5 is listed twice"),
	GOOD("callers.uids", "[0, 4294967294]"),
	GOOD("callers.uids", "[]"),

	/* unknown keys, top level and nested */
	BAD("foo", "1", "manifest: foo: unknown key"),
	BAD("Home", "\"/x\"", "manifest: Home: unknown key"),
	BAD("user.name", "\"agent\"", "manifest: user.name: unknown key"),
	BAD("env.unset", "[]", "manifest: env.unset: unknown key"),
	BAD("limits.nofiles", "1024", "manifest: limits.nofiles: unknown key"),
	BAD("seccomp.kill", "[]", "manifest: seccomp.kill: unknown key"),
	BAD("landlock.readonly", "[]", "manifest: landlock.readonly: unknown key"),
	BAD("callers.gids", "[]", "manifest: callers.gids: unknown key"),
	{ "refused: a key holding a newline", "bad\nkey", "1", -EINVAL,
	  "manifest: bad\\x0akey: unknown key" },

	/* paths: absolute and normalised */
	BAD("home", "\"home/agent\"", "home: \"home/agent\" is not absolute"),
	BAD("home", "\"\"", "home: \"\" is empty"),
	BAD("home", "\"/home//agent\"", "contains \"//\""),
	BAD("home", "\"//home\"", "contains \"//\""),
	BAD("home", "\"/home/./agent\"", "has a \".\" or \"..\" component"),
	BAD("home", "\"/home/../etc\"", "has a \".\" or \"..\" component"),
	BAD("home", "\"/home/agent/.\"", "has a \".\" or \"..\" component"),
	BAD("home", "\"/..\"", "has a \".\" or \"..\" component"),
	BAD("home", "\"/home/agent/\"", "ends in '/'"),
	BAD("home", "\"/\"", "home: \"/\" may not be \"/\""),
	GOOD("home", "\"/home/.agent\""),
	GOOD("home", "\"/home/a..b\""),
	BAD("workdir", "\"work\"", "workdir: \"work\" is not absolute"),
	BAD("workdir", "\"/work/\"", "workdir: \"/work/\" ends in '/'"),
	GOOD("workdir", "\"/\""),
	BAD("shell", "\"bash\"", "shell: \"bash\" is not absolute"),
	BAD("shell", "\"/\"", "shell: \"/\" may not be \"/\""),
	BAD("landlock.writable", "[\"/tmp\", \"tmp\"]", "landlock.writable[1]: \"tmp\" is not absolute"),
	BAD("landlock.writable", "[\"/tmp/\"]", "landlock.writable[0]: \"/tmp/\" ends in '/'"),
	BAD("landlock.writable", "[\"/tmp\", \"/tmp\"]", "landlock.writable[1]: \"/tmp\" is listed twice"),
	GOOD("landlock.writable", "[]"),

	/* env rules */
	BAD("env.set.LD_PRELOAD", "\"/x.so\"", "manifest: env.set: \"LD_PRELOAD\" is never admitted"),
	BAD("env.set.BASH_ENV", "\"/x\"", "env.set: \"BASH_ENV\" is never admitted"),
	BAD("env.set.BASH_FUNC_ls%%", "\"() { :; }\"", "env.set: \"BASH_FUNC_ls%%\" is not a valid name"),
	BAD("env.set.BASH_FUNC_x", "\"1\"", "env.set: \"BASH_FUNC_x\" is never admitted"),
	BAD("env.set.TURNINIT_MANIFEST", "\"x\"", "env.set: \"TURNINIT_MANIFEST\" is never admitted"),
	BAD("env.set.ENV", "\"x\"", "never admitted"),
	BAD("env.set.SHELLOPTS", "\"xtrace\"", "never admitted"),
	BAD("env.set.PS4", "\"x\"", "never admitted"),
	BAD("env.set.HOME", "\"/root\"", "env.set: \"HOME\" is always set from home"),
	BAD("env.set.1X", "\"x\"", "env.set: \"1X\" is not a valid name"),
	BAD("env.set.A-B", "\"x\"", "env.set: \"A-B\" is not a valid name"),
	BAD("env.set.", "\"x\"", "env.set: \"\" is not a valid name"),
	BAD("env.set.PATH", "\"bin:/usr/bin\"", "manifest: env.set.PATH: entry 1 \"bin\" is not absolute"),
	BAD("env.set.PATH", "\":/bin\"", "env.set.PATH: entry 1 is empty"),
	BAD("env.set.PATH", "\"/bin:\"", "env.set.PATH: entry 2 is empty"),
	BAD("env.set.PATH", "\"/bin::/usr/bin\"", "env.set.PATH: entry 2 is empty"),
	BAD("env.set.PATH", "\"\"", "env.set.PATH: entry 1 is empty"),
	BAD("env.set.TZ", "\"UTC\"", "manifest: env: TZ is both in set and allow"),
	BAD("env.allow", "[\"TZ\", \"A\", \"B\", \"LD_PRELOAD\"]",
	    "manifest: env.allow[3]: \"LD_PRELOAD\" is never admitted"),
	BAD("env.allow", "[\"LD_*\"]", "env.allow[0]: \"LD_*\" matches only never-admitted names"),
	BAD("env.allow", "[\"BASH_FUNC_*\"]",
	    "env.allow[0]: \"BASH_FUNC_*\" matches only never-admitted names"),
	BAD("env.allow", "[\"TURNINIT_*\"]", "matches only never-admitted names"),
	BAD("env.allow", "[\"BASH_ENV\"]", "env.allow[0]: \"BASH_ENV\" is never admitted"),
	BAD("env.allow", "[\"HOME\"]", "env.allow[0]: \"HOME\" is always set from home"),
	BAD("env.allow", "[\"*\"]", "env.allow[0]: \"*\" would admit every name"),
	BAD("env.allow", "[\"\"]", "env.allow[0]: empty pattern"),
	BAD("env.allow", "[\"A*B\"]", "env.allow[0]: \"A*B\" is not a valid pattern"),
	BAD("env.allow", "[\"TZ\", \"TZ\"]", "env.allow[1]: \"TZ\" is listed twice"),
	BAD("env.allow", "[\"PATH\"]", "env: PATH is both in set and allow"),
	GOOD("env.allow", "[\"B*\", \"L*\", \"LANGUAGE\"]"),
	GOOD("env.allow", "[\"LANG*\"]"), /* a prefix may cover a set name: set wins */
	GOOD("env.allow", "[]"),
	GOOD("env.set.LITERAL", "\"$(id) `id` ${HOME}\""),
	GOOD("env.set.NL", "\"a\\nb\""),

	/* seccomp names */
	BAD("seccomp.deny", "[\"@nope\"]", "manifest: seccomp.deny[0]: unknown group \"@nope\""),
	BAD("seccomp.deny", "[\"@default\", \"read\", \"fooo\"]",
	    "manifest: seccomp.deny[2]: unknown syscall \"fooo\""),
	BAD("seccomp.deny", "[\"Ptrace\"]", "seccomp.deny[0]: unknown syscall \"Ptrace\""),
	BAD("seccomp.deny", "[\"\"]", "seccomp.deny[0]: unknown syscall \"\""),
	BAD("seccomp.deny", "[\"@\"]", "seccomp.deny[0]: unknown group \"@\""),
	BAD("seccomp.allow", "[\"@nope\"]", "seccomp.allow[0]: unknown group"),
	BAD("seccomp.allow", "[\"nosuch\"]", "seccomp.allow[0]: unknown syscall \"nosuch\""),
	BAD("seccomp.deny", "[\"ptrace\", \"ptrace\"]", "seccomp.deny[1]: \"ptrace\" is listed twice"),
	BAD("seccomp.allow", "[\"ptrace\"]", "seccomp.allow[0]: \"ptrace\" is also in seccomp.deny"),
	BAD("seccomp.allow", "[\"@clock\"]", "seccomp.allow[0]: \"@clock\" is also in seccomp.deny"),
	BAD("seccomp.allow", "[\"@debug\"]",
	    "seccomp.allow[0]: \"@debug\" takes out \"ptrace\", which seccomp.deny names"),
	GOOD("seccomp.deny", "[]"),
	GOOD("seccomp.deny", "[\"@mount\", \"_llseek\"]"),
	GOOD("seccomp.allow", "[\"@mount\"]"), /* allow subtracts; not the same string */

	/* optional fields absent: defaults */
	ABSENT("workdir"),
	ABSENT("shell"),
	ABSENT("env.allow"),
	ABSENT("limits"),
	ABSENT("limits.nofile"),
	ABSENT("limits.result_bytes"),
	ABSENT("seccomp"),
	ABSENT("seccomp.deny"),
	ABSENT("seccomp.allow"),
	ABSENT("landlock"),
	ABSENT("landlock.writable"),
	ABSENT("landlock.optional"),
	ABSENT("landlock.shm"),
	ABSENT("callers"),
	ABSENT("callers.uids"),
	ABSENT("network"),
	ABSENT("network.allow"),
	ABSENT("network.isolation"),
	ABSENT("audit"),
	ABSENT("audit.required"),
	GOOD("limits", "{}"),
	GOOD("seccomp", "{}"),
	GOOD("landlock", "{}"),
	GOOD("callers", "{}"),
	GOOD("audit", "{}"),
	GOOD("audit.required", "false"),
};

static void test_mod_case(void **state)
{
	const struct mod_case *c = *state;
	struct tn_error err = { 0 };
	struct mf_manifest *m = NULL;
	char *text = good_with(c->path, c->value);
	int rc = c->rc;
	const char *want = c->want;
	int r;

	r = parse_str(text, &m, &err);
	if (r != rc)
		fail_msg("%s: expected %d, got %d (%s)", text, rc, r, r < 0 ? err.msg : "accepted");
	if (rc < 0) {
		assert_null(m);
		if (want && !strstr(err.msg, want))
			fail_msg("message \"%s\" lacks \"%s\"", err.msg, want);
		assert_null(strchr(err.msg, '\n'));
	} else {
		assert_non_null(m);
	}
	mf_free(m);
	free(text);
}

/* ---- the good manifest, every value ---- */

static void test_good_all_fields(void **state)
{
	struct tn_error err = { 0 };
	struct mf_manifest *m = NULL;

	(void)state;
	if (parse_str(good_json, &m, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(m->version, 1);
	assert_int_equal(m->expires, GOOD_EXPIRES);
	assert_int_equal(m->uid, 1000);
	assert_int_equal(m->gid, 1001);
	assert_string_equal(m->home, "/home/agent");
	assert_string_equal(m->workdir, "/work");
	assert_string_equal(m->shell, "/usr/bin/bash");

	assert_int_equal(m->env.n_set, 6);
	assert_string_equal(m->env.set[0].name, "PATH");
	assert_string_equal(m->env.set[0].value, "/usr/local/bin:/usr/bin:/bin");
	assert_string_equal(m->env.set[1].name, "LANG");
	assert_string_equal(m->env.set[1].value, "C.UTF-8");
	assert_string_equal(m->env.set[2].name, "TERM");
	assert_string_equal(m->env.set[2].value, "dumb");
	assert_string_equal(m->env.set[3].name, "LITERAL");
	assert_string_equal(m->env.set[3].value, "${PATH}");
	assert_string_equal(m->env.set[4].name, "EMPTY");
	assert_string_equal(m->env.set[4].value, "");
	assert_string_equal(m->env.set[5].name, "UNI");
	assert_string_equal(m->env.set[5].value, "h\xc3\xa9llo \xe2\x9c\x93");

	assert_int_equal(m->env.n_allow, 4);
	assert_string_equal(m->env.allow[0], "TZ");
	assert_string_equal(m->env.allow[1], "GIT_AUTHOR_NAME");
	assert_string_equal(m->env.allow[2], "GIT_AUTHOR_EMAIL");
	assert_string_equal(m->env.allow[3], "LC_*");

	assert_int_equal(m->limits.timeout_s, 30);
	assert_int_equal(m->limits.output_bytes, 1048576);
	assert_int_equal(m->limits.nofile, 256);
	assert_int_equal(m->limits.nproc, 64);
	assert_int_equal(m->limits.fsize_bytes, 4294967296ULL);
	assert_int_equal(m->limits.concurrency, 2);
	assert_int_equal(m->limits.result_bytes, 4096);

	assert_int_equal(m->seccomp.n_deny, 3);
	assert_string_equal(m->seccomp.deny[0], "@default");
	assert_string_equal(m->seccomp.deny[1], "@clock");
	assert_string_equal(m->seccomp.deny[2], "ptrace");
	assert_int_equal(m->seccomp.n_allow, 1);
	assert_string_equal(m->seccomp.allow[0], "personality");

	assert_int_equal(m->landlock.n_writable, 3);
	assert_string_equal(m->landlock.writable[0], "/home/agent");
	assert_string_equal(m->landlock.writable[1], "/tmp");
	assert_string_equal(m->landlock.writable[2], "/work");
	assert_true(m->landlock.optional);
	assert_true(m->landlock.no_shm);

	assert_int_equal(m->n_caller_uids, 3);
	assert_int_equal(m->caller_uids[0], 1000);
	assert_int_equal(m->caller_uids[1], 0);
	assert_int_equal(m->caller_uids[2], 2000);
	assert_true(m->network.filtered);
	assert_int_equal(m->network.n_allow, 4);
	assert_string_equal(m->network.allow[0].host, "registry.example.org");
	assert_int_equal(m->network.allow[0].kind, NA_NAME);
	assert_int_equal(m->network.allow[0].n_ports, 1);
	assert_int_equal(m->network.allow[0].ports[0], 443);
	assert_int_equal(m->network.allow[1].kind, NA_SUFFIX);
	assert_int_equal(m->network.allow[1].n_ports, 2);
	assert_int_equal(m->network.allow[1].ports[1], 80);
	assert_int_equal(m->network.allow[2].kind, NA_IPV4);
	assert_memory_equal(m->network.allow[2].addr, ((uint8_t[]){ 10, 89, 0, 5 }), 4);
	assert_int_equal(m->network.allow[3].kind, NA_IPV6);
	assert_int_equal(m->network.allow[3].addr[0], 0xfd);
	assert_int_equal(m->network.allow[3].addr[15], 5);
	assert_true(m->audit_required);
	mf_free(m);
}

static void test_defaults(void **state)
{
	struct tn_error err = { 0 };
	struct mf_manifest *m = NULL;

	(void)state;
	if (parse_str(minimal_json, &m, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(m->workdir, "/home/agent");
	assert_string_equal(m->shell, "/bin/bash");
	assert_int_equal(m->env.n_set, 1);
	assert_int_equal(m->env.n_allow, 0);
	assert_int_equal(m->limits.timeout_s, 600);
	assert_int_equal(m->limits.output_bytes, 16777216);
	assert_int_equal(m->limits.nofile, 1024);
	assert_int_equal(m->limits.nproc, 512);
	assert_int_equal(m->limits.fsize_bytes, 1073741824);
	assert_int_equal(m->limits.concurrency, 8);
	assert_int_equal(m->limits.result_bytes, 30000);
	assert_false(m->network.filtered);
	assert_int_equal(m->network.n_allow, 0);
	assert_int_equal(m->seccomp.n_deny, 1);
	assert_string_equal(m->seccomp.deny[0], "@default");
	assert_int_equal(m->seccomp.n_allow, 0);
	/* {home, workdir, /tmp} with workdir == home: deduplicated */
	assert_int_equal(m->landlock.n_writable, 2);
	assert_string_equal(m->landlock.writable[0], "/home/agent");
	assert_string_equal(m->landlock.writable[1], "/tmp");
	assert_false(m->landlock.optional);
	assert_int_equal(m->n_caller_uids, 1);
	assert_int_equal(m->caller_uids[0], 1000);
	assert_false(m->audit_required);
	mf_free(m);
}

static void test_default_landlock_with_workdir(void **state)
{
	char *text = good_with("landlock.writable", NULL);
	struct mf_manifest *m = NULL;

	(void)state;
	assert_int_equal(parse_str(text, &m, NULL), 0);
	assert_int_equal(m->landlock.n_writable, 3);
	assert_string_equal(m->landlock.writable[0], "/home/agent");
	assert_string_equal(m->landlock.writable[1], "/work");
	assert_string_equal(m->landlock.writable[2], "/tmp");
	assert_true(m->landlock.optional);
	mf_free(m);
	free(text);
}

/* callers.uids defaults to user.uid (not gid: the good manifest has 1000/1001) */
static void test_default_callers(void **state)
{
	char *text = good_with("callers", NULL);
	struct mf_manifest *m = NULL;

	(void)state;
	assert_int_equal(parse_str(text, &m, NULL), 0);
	assert_int_equal(m->n_caller_uids, 1);
	assert_int_equal(m->caller_uids[0], 1000);
	mf_free(m);
	free(text);
}

/* mf_user_start: who the commands are, from how turninit was started. */
static const char range_json[] = "{\"turninit\":1,\"expires\":\"2027-06-01T00:00:00Z\","
				 "\"user\":{\"uid_range\":[1000680000,1000689999],\"gid_range\":[0,0]},"
				 "\"home\":\"/home/agent\",\"env\":{\"set\":{\"PATH\":\"/usr/bin:/bin\"}}}";

static void assert_start_refused(const char *text, bool nonroot, uint32_t uid, uint32_t gid, const char *want)
{
	struct mf_manifest *m = NULL;
	struct tn_error err = { 0 };

	assert_int_equal(parse_str(text, &m, NULL), 0);
	assert_int_equal(mf_user_start(m, nonroot, uid, gid, &err), -EPERM);
	assert_int_equal(err.code, EPERM);
	if (strcmp(err.msg, want) != 0)
		fail_msg("message \"%s\", want \"%s\"", err.msg, want);
	mf_free(m);
}

static void test_user_start_fixed(void **state)
{
	struct mf_manifest *m = NULL;
	char *json;

	(void)state;
	assert_int_equal(parse_str(minimal_json, &m, NULL), 0);
	assert_false(m->as_started);
	/* privileged: the manifest's ids whoever turninit is */
	assert_int_equal(mf_user_start(m, false, 0, 0, NULL), 0);
	/* non-root: they must be turninit's own */
	assert_int_equal(mf_user_start(m, true, 1000, 1000, NULL), 0);
	assert_int_equal(m->uid, 1000);
	assert_int_equal(m->gid, 1000);
	json = mf_to_json(m);
	assert_non_null(strstr(json, "\"user\":{\"uid\":1000,\"gid\":1000}"));
	free(json);
	mf_free(m);
	assert_start_refused(minimal_json, true, 1001, 1000,
			     "user: turninit runs unprivileged as 1001:1000, so commands run as 1001:1000, but the manifest names user.uid 1000, user.gid 1000: start it as 1000:1000 (Kubernetes: runAsUser, runAsGroup), or seal user.uid_range and user.gid_range");
	assert_start_refused(minimal_json, true, 1000, 0,
			     "user: turninit runs unprivileged as 1000:0, so commands run as 1000:0, but the manifest names user.uid 1000, user.gid 1000: start it as 1000:1000 (Kubernetes: runAsUser, runAsGroup), or seal user.uid_range and user.gid_range");
}

static void test_user_start_range(void **state)
{
	struct mf_manifest *m = NULL, *again = NULL;
	char *json;

	(void)state;
	assert_int_equal(parse_str(range_json, &m, NULL), 0);
	assert_true(m->as_started);
	assert_int_equal(m->n_caller_uids, 0);
	/* unresolved, it renders as sealed, and parses back */
	json = mf_to_json(m);
	assert_non_null(strstr(json, "\"user\":{\"uid_range\":[1000680000,1000689999],\"gid_range\":[0,0]}"));
	assert_int_equal(parse_str(json, &again, NULL), 0);
	assert_true(again->as_started);
	mf_free(again);
	free(json);
	assert_int_equal(mf_user_start(m, true, 1000680123, 0, NULL), 0);
	assert_int_equal(m->uid, 1000680123);
	assert_int_equal(m->gid, 0);
	assert_int_equal(m->n_caller_uids, 1);
	assert_int_equal(m->caller_uids[0], 1000680123);
	/* resolved, it still renders as sealed: a fixed gid 0 would not parse
	 * back (the bridge parses what info sends) */
	json = mf_to_json(m);
	assert_non_null(strstr(json, "\"user\":{\"uid_range\":[1000680000,1000689999],\"gid_range\":[0,0]}"));
	assert_int_equal(parse_str(json, &again, NULL), 0);
	mf_free(again);
	free(json);
	mf_free(m);
	/* the ends of the ranges are inside */
	assert_int_equal(parse_str(range_json, &m, NULL), 0);
	assert_int_equal(mf_user_start(m, true, 1000689999, 0, NULL), 0);
	mf_free(m);
	assert_start_refused(range_json, false, 0, 0,
			     "user.uid_range: commands run as the uid turninit is started as, but it started privileged (uid 0): start it as an unprivileged uid in [1000680000, 1000689999] with no capability in any set");
	assert_start_refused(range_json, true, 1000679999, 0,
			     "user.uid_range: turninit runs as uid 1000679999, outside [1000680000, 1000689999]");
	assert_start_refused(range_json, true, 1000690000, 0,
			     "user.uid_range: turninit runs as uid 1000690000, outside [1000680000, 1000689999]");
	assert_start_refused(range_json, true, 1000680000, 1,
			     "user.gid_range: turninit runs as gid 1, outside [0, 0]");
}

/* callers.uids given with a range stays as given */
static void test_user_start_range_callers(void **state)
{
	static const char text[] =
		"{\"turninit\":1,\"expires\":\"2027-06-01T00:00:00Z\","
		"\"user\":{\"uid_range\":[1000,2000],\"gid_range\":[1000,2000]},\"callers\":{\"uids\":[3000]},"
		"\"home\":\"/home/agent\",\"env\":{\"set\":{\"PATH\":\"/usr/bin:/bin\"}}}";
	struct mf_manifest *m = NULL;

	(void)state;
	assert_int_equal(parse_str(text, &m, NULL), 0);
	assert_int_equal(mf_user_start(m, true, 1500, 1500, NULL), 0);
	assert_int_equal(m->n_caller_uids, 1);
	assert_int_equal(m->caller_uids[0], 3000);
	mf_free(m);
}

/* An empty env object is allowed by the header, but PATH must be set. */
static void test_env_empty_object(void **state)
{
	static const char text[] =
		"{\"turninit\":1,\"expires\":\"2027-06-01T00:00:00Z\",\"user\":{\"uid\":1,\"gid\":1},"
		"\"home\":\"/h\",\"env\":{}}";

	(void)state;
	assert_refused(text, strlen(text), -EINVAL, "manifest: env.set: PATH is required");
}

/* ---- raw-text refusals ---- */

static void test_duplicate_keys(void **state)
{
	static const char top[] =
		"{\"turninit\":1,\"home\":\"/a\",\"expires\":\"2027-06-01T00:00:00Z\",\"home\":\"/b\"}";
	static const char nested[] = "{\"turninit\":1,\"limits\":{\"nofile\":64,\"nofile\":1048576}}";
	static const char env_set[] = "{\"turninit\":1,\"env\":{\"set\":{\"PATH\":\"/bin\",\"PATH\":\".\"}}}";

	(void)state;
	assert_refused(top, strlen(top), -EBADMSG, "manifest: duplicate key \"home\"");
	assert_refused(nested, strlen(nested), -EBADMSG, "manifest: duplicate key \"nofile\" (line 1");
	assert_refused(env_set, strlen(env_set), -EBADMSG, "duplicate key \"PATH\"");
}

static void test_size_limit(void **state)
{
	static char buf[MF_MAX_BYTES + 2];
	size_t n = strlen(minimal_json);
	struct mf_manifest *m = NULL;
	struct tn_error err = { 0 };

	(void)state;
	memcpy(buf, minimal_json, n);
	memset(buf + n, ' ', MF_MAX_BYTES + 1 - n);
	buf[MF_MAX_BYTES + 1] = '\0';

	/* exactly 65536 bytes: accepted */
	if (parse_text(buf, MF_MAX_BYTES, &m, &err) != 0)
		fail_msg("%s", err.msg);
	mf_free(m);
	/* one more: refused */
	assert_refused(buf, MF_MAX_BYTES + 1, -E2BIG, "manifest: 65537 bytes, more than the limit of 65536");
	/* before parsing: garbage that large is E2BIG, not EBADMSG */
	memset(buf, 'x', MF_MAX_BYTES + 1);
	assert_refused(buf, MF_MAX_BYTES + 1, -E2BIG, NULL);
	assert_refused(buf, SIZE_MAX, -E2BIG, NULL);
}

static void test_invalid_utf8(void **state)
{
	static const char *const cases[] = {
		"{\"turninit\":1,\"home\":\"/h\xff\"}",
		"{\"turninit\":1,\"home\":\"/h\xc0\xaf\"}",     /* overlong '/' */
		"{\"turninit\":1,\"home\":\"/h\xed\xa0\x80\"}", /* UTF-16 surrogate */
		"{\"turninit\":1,\"home\":\"/h\xe2\x82\"}",     /* truncated */
		"{\"turninit\":1,\"h\xfe\":1}",                 /* in a key */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_refused(cases[i], strlen(cases[i]), -EBADMSG, "manifest: not valid UTF-8");
}

static void test_nul(void **state)
{
	static const char escaped[] = "{\"turninit\":1,\"env\":{\"set\":{\"PATH\":\"/bin\\u0000:.\"}}}";
	static const char key[] = "{\"turninit\":1,\"a\\u0000b\":1}";
	static const char raw[] = "{\"turninit\":1}\0";

	(void)state;
	assert_refused(escaped, strlen(escaped), -EBADMSG, "manifest: not valid JSON");
	assert_refused(key, strlen(key), -EBADMSG, "manifest: not valid JSON");
	assert_refused(raw, sizeof(raw) - 1, -EBADMSG, "manifest: not valid JSON");
}

static void test_not_an_object(void **state)
{
	static const char *const cases[] = { "[]", "[1]", "1", "\"x\"", "null", "true" };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_refused(cases[i], strlen(cases[i]), -EINVAL, "manifest: expected a JSON object");
}

static void test_not_json(void **state)
{
	static const char *const cases[] = {
		"{\"turninit\":1} x", "{\"turninit\":1}{}", "{\"turninit\":1",
		"{'turninit':1}",     "{\"turninit\":01}",  "{\"turninit\":1,}",
		"{\"turninit\":NaN}", "\xef\xbb\xbf{}",     "   ",
		"// c\n{}",
	};
	struct mf_manifest *m = (struct mf_manifest *)&m; /* must stay untouched */
	struct tn_error err = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_refused(cases[i], strlen(cases[i]), -EBADMSG, "manifest: ");
	assert_refused("{\"turninit\":1} x", 16, -EBADMSG, "not valid JSON: end of file expected");
	assert_refused("", 0, -EBADMSG, "manifest: empty");
	assert_int_equal(mf_parse(NULL, 0, NOW, NULL, &m, &err), -EBADMSG);
	assert_ptr_equal(m, (struct mf_manifest *)&m);
}

/* Valid JSON, but no field takes such a number: a schema refusal. */
static void test_huge_numbers(void **state)
{
	static const char big[] = "{\"turninit\":99999999999999999999999}";
	static const char real[] = "{\"turninit\":1e999}";

	(void)state;
	assert_refused(big, strlen(big), -EINVAL, "manifest: number out of range");
	assert_refused(real, strlen(real), -EINVAL, "manifest: number out of range");
}

static void test_version_first(void **state)
{
	/* a newer format gets the version message, not "unknown key" */
	static const char v2[] = "{\"turninit\":2,\"newfield\":{}}";

	(void)state;
	assert_refused(v2, strlen(v2), -EINVAL, "manifest: turninit: unsupported version 2");
}

static void test_list_limits(void **state)
{
	static const char *const paths[] = { "env.allow", "seccomp.deny", "landlock.writable",
					     "callers.uids" };
	char value[8192];

	(void)state;
	for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
		for (int count = MF_MAX_LIST; count <= MF_MAX_LIST + 1; count++) {
			size_t k = 0;
			struct mf_manifest *m = NULL;
			struct tn_error err = { 0 };
			char *text;
			int r;

			k += (size_t)snprintf(value + k, sizeof(value) - k, "[");
			for (int i = 0; i < count; i++) {
				const char *sep = i ? "," : "";

				if (p == 0)
					k += (size_t)snprintf(value + k, sizeof(value) - k, "%s\"V%d\"", sep,
							      i);
				else if (p == 1)
					k += (size_t)snprintf(value + k, sizeof(value) - k, "%s\"%s\"", sep,
							      i == 0 ? "ptrace" :
							      i == 1 ? "@mount" :
								       "@clock");
				else if (p == 2)
					k += (size_t)snprintf(value + k, sizeof(value) - k, "%s\"/d%d\"", sep,
							      i);
				else
					k += (size_t)snprintf(value + k, sizeof(value) - k, "%s%d", sep, i);
			}
			snprintf(value + k, sizeof(value) - k, "]");
			text = good_with(paths[p], value);
			r = parse_str(text, &m, &err);
			if (count > MF_MAX_LIST) {
				assert_int_equal(r, -EINVAL);
				assert_non_null(strstr(err.msg, "257 entries, at most 256 allowed"));
			} else if (p != 1) {
				/* (seccomp.deny has duplicates past 3: the count check is what matters) */
				if (r != 0)
					fail_msg("%s with %d entries: %s", paths[p], count, err.msg);
			}
			mf_free(m);
			free(text);
		}
	}
}

static void test_env_set_limit(void **state)
{
	char value[8192];

	(void)state;
	for (int count = MF_MAX_LIST; count <= MF_MAX_LIST + 1; count++) {
		size_t k = 0;
		struct mf_manifest *m = NULL;
		struct tn_error err = { 0 };
		char *text;
		int r;

		k += (size_t)snprintf(value + k, sizeof(value) - k, "{\"PATH\":\"/bin\"");
		for (int i = 1; i < count; i++)
			k += (size_t)snprintf(value + k, sizeof(value) - k, ",\"V%d\":\"x\"", i);
		snprintf(value + k, sizeof(value) - k, "}");
		text = good_with("env.set", value);
		r = parse_str(text, &m, &err);
		if (count > MF_MAX_LIST) {
			assert_int_equal(r, -EINVAL);
			assert_non_null(strstr(err.msg, "env.set: 257 entries, at most 256 allowed"));
		} else if (r != 0) {
			fail_msg("%s", err.msg);
		}
		mf_free(m);
		free(text);
	}
}

static void test_path_length(void **state)
{
	char path[MF_PATH_MAX + 8], value[MF_PATH_MAX + 16];
	struct mf_manifest *m = NULL;
	struct tn_error err = { 0 };
	char *text;

	(void)state;
	/* 4095 bytes: accepted */
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[MF_PATH_MAX - 1] = '\0';
	snprintf(value, sizeof(value), "\"%s\"", path);
	text = good_with("workdir", value);
	if (parse_str(text, &m, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(strlen(m->workdir), MF_PATH_MAX - 1);
	mf_free(m);
	m = NULL;
	free(text);
	/* 4096 bytes: refused */
	path[MF_PATH_MAX - 1] = 'a';
	path[MF_PATH_MAX] = '\0';
	snprintf(value, sizeof(value), "\"%s\"", path);
	text = good_with("workdir", value);
	assert_int_equal(parse_str(text, &m, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is longer than 4095 bytes"));
	assert_null(m);
	free(text);
}

/* ---- expiry and time ---- */

static void test_expired(void **state)
{
	char *text = good_with("expires", "\"2020-01-01T00:00:00Z\"");
	struct mf_manifest *m = NULL;
	struct tn_error err = { 0 };

	(void)state;
	assert_refused(text, strlen(text), -EKEYEXPIRED, NULL);
	assert_int_equal(parse_str(text, &m, &err), -EKEYEXPIRED);
	assert_string_equal(err.msg, "manifest: expired at 2020-01-01T00:00:00Z");
	free(text);

	/* "after now": now == expires is expired, one second before is not */
	assert_int_equal(mf_parse((const uint8_t *)good_json, strlen(good_json), GOOD_EXPIRES, NULL, &m,
				  &err),
			 -EKEYEXPIRED);
	assert_int_equal(mf_parse((const uint8_t *)good_json, strlen(good_json), GOOD_EXPIRES - 1, NULL, &m,
				  &err),
			 0);
	mf_free(m);
}

static void test_bad_time_format(void **state)
{
	/* clang-format 14 would put each entry of this table on a line of its own: kept as written */
	/* clang-format off */
	static const char *const cases[] = {
		"2027-06-01", "2027-06-01T00:00:00", "2027-06-01t00:00:00Z", "2027-06-01T00:00:00z",
		"2027-06-01 00:00:00Z", "2027-06-01T00:00:00+00:00", "2027-06-01T00:00:00.5Z",
		"2027-6-01T00:00:00Z", "27-06-01T00:00:00Z", "2027-13-01T00:00:00Z",
		"2027-00-01T00:00:00Z", "2027-06-00T00:00:00Z", "2027-06-31T00:00:00Z",
		"2027-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2027-06-01T24:00:00Z",
		"2027-06-01T00:60:00Z", "2027-06-01T00:00:60Z", " 2027-06-01T00:00:00Z",
		"2027-06-01T00:00:00Z ", "+027-06-01T00:00:00Z", "2027-06-01T0a:00:00Z", "",
	};
	/* clang-format on */
	int64_t t;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char value[80], *text;

		if (sj_time_parse(cases[i], &t) != -EINVAL)
			fail_msg("time \"%s\" accepted", cases[i]);
		snprintf(value, sizeof(value), "\"%s\"", cases[i]);
		text = good_with("expires", value);
		assert_refused(text, strlen(text), -EINVAL,
			       "manifest: expires: expected a UTC time \"YYYY-MM-DDTHH:MM:SSZ\"");
		free(text);
	}
	assert_int_equal(sj_time_parse(NULL, &t), -EINVAL);
}

static void test_parse_time(void **state)
{
	static const struct {
		const char *s;
		int64_t t;
	} cases[] = {
		{ "1970-01-01T00:00:00Z", 0 },
		{ "1969-12-31T23:59:59Z", -1 },
		{ "2000-02-29T12:34:56Z", 951827696 },
		{ "2024-02-29T00:00:00Z", 1709164800 },
		{ "2038-01-19T03:14:08Z", 2147483648LL },
		{ "2027-06-01T00:00:00Z", GOOD_EXPIRES },
		{ "9999-12-31T23:59:59Z", 253402300799LL },
		{ "0000-01-01T00:00:00Z", -62167219200LL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t t = 0;

		assert_int_equal(sj_time_parse(cases[i].s, &t), 0);
		if (t != cases[i].t)
			fail_msg("%s: %lld, expected %lld", cases[i].s, (long long)t, (long long)cases[i].t);
	}
}

/* ---- rendering ---- */

static void assert_same(const struct mf_manifest *a, const struct mf_manifest *b)
{
	assert_int_equal(a->version, b->version);
	assert_int_equal(a->expires, b->expires);
	assert_int_equal(a->uid, b->uid);
	assert_int_equal(a->gid, b->gid);
	assert_string_equal(a->home, b->home);
	assert_string_equal(a->workdir, b->workdir);
	assert_string_equal(a->shell, b->shell);
	assert_int_equal(a->env.n_set, b->env.n_set);
	for (size_t i = 0; i < a->env.n_set; i++) {
		assert_string_equal(a->env.set[i].name, b->env.set[i].name);
		assert_string_equal(a->env.set[i].value, b->env.set[i].value);
	}
	assert_int_equal(a->env.n_allow, b->env.n_allow);
	for (size_t i = 0; i < a->env.n_allow; i++)
		assert_string_equal(a->env.allow[i], b->env.allow[i]);
	assert_memory_equal(&a->limits, &b->limits, sizeof(a->limits));
	assert_int_equal(a->seccomp.n_deny, b->seccomp.n_deny);
	for (size_t i = 0; i < a->seccomp.n_deny; i++)
		assert_string_equal(a->seccomp.deny[i], b->seccomp.deny[i]);
	assert_int_equal(a->seccomp.n_allow, b->seccomp.n_allow);
	for (size_t i = 0; i < a->seccomp.n_allow; i++)
		assert_string_equal(a->seccomp.allow[i], b->seccomp.allow[i]);
	assert_int_equal(a->landlock.n_writable, b->landlock.n_writable);
	for (size_t i = 0; i < a->landlock.n_writable; i++)
		assert_string_equal(a->landlock.writable[i], b->landlock.writable[i]);
	assert_int_equal(a->landlock.optional, b->landlock.optional);
	assert_int_equal(a->landlock.no_shm, b->landlock.no_shm);
	assert_int_equal(a->audit_required, b->audit_required);
	assert_int_equal(a->network.filtered, b->network.filtered);
	assert_int_equal(a->network.n_allow, b->network.n_allow);
	for (size_t i = 0; i < a->network.n_allow; i++) {
		assert_string_equal(a->network.allow[i].host, b->network.allow[i].host);
		assert_int_equal(a->network.allow[i].kind, b->network.allow[i].kind);
		assert_memory_equal(a->network.allow[i].addr, b->network.allow[i].addr, 16);
		assert_int_equal(a->network.allow[i].n_ports, b->network.allow[i].n_ports);
		assert_memory_equal(a->network.allow[i].ports, b->network.allow[i].ports,
				    sizeof(a->network.allow[i].ports));
		assert_int_equal(!a->network.allow[i].cred, !b->network.allow[i].cred);
		if (a->network.allow[i].cred) {
			const struct na_cred *x = a->network.allow[i].cred, *y = b->network.allow[i].cred;

			assert_string_equal(x->name, y->name);
			assert_int_equal(x->present, y->present);
			assert_string_equal(x->user, y->user);
			assert_string_equal(x->field, y->field);
			assert_int_equal(!x->ca, !y->ca);
			if (x->ca)
				assert_string_equal(x->ca, y->ca);
		}
	}
	assert_int_equal(a->n_caller_uids, b->n_caller_uids);
	for (size_t i = 0; i < a->n_caller_uids; i++)
		assert_int_equal(a->caller_uids[i], b->caller_uids[i]);
}

static void round_trip(const char *text)
{
	struct mf_manifest *a = NULL, *b = NULL;
	struct tn_error err = { 0 };
	char *json, *json2;

	if (parse_str(text, &a, &err) != 0)
		fail_msg("%s", err.msg);
	json = mf_to_json(a);
	assert_non_null(json);
	if (parse_str(json, &b, &err) != 0)
		fail_msg("%s: %s", json, err.msg);
	assert_same(a, b);
	json2 = mf_to_json(b);
	assert_non_null(json2);
	assert_string_equal(json, json2);
	mf_free(a);
	mf_free(b);
	free(json);
	free(json2);
}

static void test_round_trip(void **state)
{
	(void)state;
	round_trip(good_json);
	round_trip(minimal_json);
}

/* network.allow[].credential: each way of presenting it parsed, rendered as
 * written (name, as, then user, field, ca when given), and parsed back; two
 * rules may share a credential. */
static void test_credentials(void **state)
{
	static const char rules[] =
		"[{\"host\": \"git.example.test\", \"ports\": [443],"
		"  \"credential\": {\"as\": \"bearer\", \"name\": \"git\"}},"
		" {\"host\": \"pypi.example.test\", \"ports\": [8443],"
		"  \"credential\": {\"name\": \"pypi\", \"as\": \"basic\", \"user\": \"__token__\","
		"                   \"ca\": \"/etc/ssl/internal-ca.pem\"}},"
		" {\"host\": \"gitlab.example.test\", \"ports\": [443],"
		"  \"credential\": {\"name\": \"gitlab\", \"as\": \"header\", \"field\": \"PRIVATE-TOKEN\"}},"
		" {\"host\": \"git2.example.test\", \"ports\": [443],"
		"  \"credential\": {\"name\": \"git\", \"as\": \"bearer\"}},"
		" {\"host\": \"*.example.org\", \"ports\": [443, 80]}]";
	char *text = good_with("network.allow", rules), *json;
	struct mf_manifest *m = NULL;
	struct tn_error err = { 0 };
	const struct na_rule *r;

	(void)state;
	if (parse_str(text, &m, &err) != 0)
		fail_msg("%s", err.msg);
	r = m->network.allow;
	assert_int_equal(m->network.n_allow, 5);
	assert_string_equal(r[0].cred->name, "git");
	assert_int_equal(r[0].cred->present, NA_BEARER);
	assert_string_equal(r[0].cred->user, "");
	assert_null(r[0].cred->ca);
	assert_string_equal(r[1].cred->name, "pypi");
	assert_int_equal(r[1].cred->present, NA_BASIC);
	assert_string_equal(r[1].cred->user, "__token__");
	assert_string_equal(r[1].cred->ca, "/etc/ssl/internal-ca.pem");
	assert_int_equal(r[2].cred->present, NA_HEADER);
	assert_string_equal(r[2].cred->field, "PRIVATE-TOKEN");
	assert_string_equal(r[3].cred->name, "git");
	assert_null(r[4].cred);
	json = mf_to_json(m);
	assert_non_null(json);
	assert_non_null(strstr(json, "{\"host\":\"git.example.test\",\"ports\":[443],"
				     "\"credential\":{\"name\":\"git\",\"as\":\"bearer\"}}"));
	assert_non_null(strstr(json, "\"credential\":{\"name\":\"pypi\",\"as\":\"basic\","
				     "\"user\":\"__token__\",\"ca\":\"/etc/ssl/internal-ca.pem\"}"));
	assert_non_null(strstr(json, "\"credential\":{\"name\":\"gitlab\",\"as\":\"header\","
				     "\"field\":\"PRIVATE-TOKEN\"}"));
	assert_non_null(strstr(json, "{\"host\":\"*.example.org\",\"ports\":[443,80]}"));
	round_trip(text);
	free(json);
	free(text);
	mf_free(m);
}

/* Each refusal of a credential is one line that names
 * network.allow[i].credential (docs/hostile-input.md, "Credentials"): the
 * hostile classes, at the second rule, so that the index is the rule's. */
static void test_credential_refusals(void **state)
{
	static const struct {
		const char *rule, *want;
	} cases[] = {
		{ "{\"host\": \"*.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\"}}",
		  "network.allow[1].credential: \"*.example.test\": a credential goes to one named host, never a wildcard" },
		{ "{\"host\": \"10.89.0.5\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\"}}",
		  "network.allow[1].credential: \"10.89.0.5\": a credential needs a host name, which its certificate names" },
		{ "{\"host\": \"b.example.test\", \"ports\": [80], \"credential\": {\"name\": \"git\", \"as\": \"bearer\"}}",
		  "network.allow[1].credential: the gateway speaks TLS to the one port listed; port 80 is plain HTTP" },
		{ "{\"host\": \"b.example.test\", \"ports\": [443, 8443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\"}}",
		  "network.allow[1].credential: the gateway speaks TLS to the one port listed" },
		{ "{\"host\": \"b.example.test\", \"ports\": [443], \"credential\": {\"name\": \"../../etc/shadow\", \"as\": \"bearer\"}}",
		  "network.allow[1].credential.name: \"../../etc/shadow\" is not 1 to 64 of [A-Za-z0-9_.-], the first a letter or a digit (it is a file name)" },
		{ "{\"host\": \"b.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"header\", \"field\": \"Authorization\"}}",
		  "network.allow[1].credential.field: \"Authorization\" is written by \"as\": \"bearer\" or \"basic\": use one of those" },
		{ "{\"host\": \"b.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"header\", \"field\": \"X-A\\r\\nX-B\"}}",
		  "network.allow[1].credential.field: \"X-A\\x0d\\x0aX-B\" is not a header field name" },
		{ "{\"host\": \"b.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"basic\", \"user\": \"a:b\"}}",
		  "network.allow[1].credential.user: \"a:b\" is not 1 to 128 bytes of printable ASCII without ':'" },
		{ "{\"host\": \"b.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\", \"value\": \"x\"}}",
		  "network.allow[1].credential.value: unknown key" },
		{ "{\"host\": \"b.example.test\", \"ports\": [443], \"credential\": {\"name\": \"git\", \"as\": \"bearer\", \"ca\": \"/etc/ssl/../../x.pem\"}}",
		  "network.allow[1].credential.ca: \"/etc/ssl/../../x.pem\" has a \".\" or \"..\" component" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char rules[1024], *text;

		snprintf(rules, sizeof(rules), "[{\"host\": \"a.example.test\", \"ports\": [443]}, %s]",
			 cases[i].rule);
		text = good_with("network.allow", rules);
		assert_refused(text, strlen(text), -EINVAL, cases[i].want);
		free(text);
	}
}

/* The effective policy: defaults filled in, keys in schema order, compact. */
static void test_to_json_exact(void **state)
{
	static const char expected[] =
		"{\"turninit\":1,\"expires\":\"2027-06-01T00:00:00Z\","
		"\"user\":{\"uid\":1000,\"gid\":1000},"
		"\"home\":\"/home/agent\",\"workdir\":\"/home/agent\",\"shell\":\"/bin/bash\","
		"\"env\":{\"set\":{\"PATH\":\"/usr/bin:/bin\"},\"allow\":[]},"
		"\"limits\":{\"timeout_s\":600,\"output_bytes\":16777216,\"nofile\":1024,"
		"\"nproc\":512,\"fsize_bytes\":1073741824,\"concurrency\":8,\"result_bytes\":30000},"
		"\"seccomp\":{\"deny\":[\"@default\"],\"allow\":[]},"
		"\"landlock\":{\"writable\":[\"/home/agent\",\"/tmp\"],\"optional\":false,\"shm\":true},"
		"\"callers\":{\"uids\":[1000]},"
		"\"audit\":{\"required\":false}}";
	struct mf_manifest *m = NULL;
	char *json;

	(void)state;
	assert_int_equal(parse_str(minimal_json, &m, NULL), 0);
	json = mf_to_json(m);
	assert_non_null(json);
	assert_string_equal(json, expected);
	free(json);
	mf_free(m);
	assert_null(mf_to_json(NULL));
}

/* Values are bytes: env.set keeps file order and odd values come back intact. */
static void test_to_json_env_order(void **state)
{
	struct mf_manifest *m = NULL;
	char *json;

	(void)state;
	assert_int_equal(parse_str(good_json, &m, NULL), 0);
	json = mf_to_json(m);
	assert_non_null(json);
	assert_non_null(strstr(json,
			       "\"set\":{\"PATH\":\"/usr/local/bin:/usr/bin:/bin\",\"LANG\":\"C.UTF-8\","
			       "\"TERM\":\"dumb\",\"LITERAL\":\"${PATH}\",\"EMPTY\":\"\","
			       "\"UNI\":\"h\xc3\xa9llo \xe2\x9c\x93\"}"));
	free(json);
	mf_free(m);
}

static void test_syscall_callback(void **state)
{
	static const char text[] =
		"{\"turninit\":1,\"expires\":\"2027-06-01T00:00:00Z\",\"user\":{\"uid\":1,\"gid\":1},"
		"\"home\":\"/h\",\"env\":{\"set\":{\"PATH\":\"/bin\"}},"
		"\"seccomp\":{\"deny\":[\"not_a_syscall\"]}}";
	struct mf_manifest *m = NULL;
	struct tn_error err = { 0 };

	(void)state;
	/* NULL callback: every well-formed name is accepted */
	assert_int_equal(mf_parse((const uint8_t *)text, strlen(text), NOW, NULL, &m, &err), 0);
	mf_free(m);
	m = NULL;
	assert_int_equal(mf_parse((const uint8_t *)text, strlen(text), NOW, known_syscall, &m, &err),
			 -EINVAL);
	assert_string_equal(err.msg, "manifest: seccomp.deny[0]: unknown syscall \"not_a_syscall\"");
	assert_null(m);

	/* without a callback a name must still look like a syscall name */
	{
		static const char *const bad[] = { "Ptrace", "", "mount;reboot", "a b", "p\xc3\xa9" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char value[64], *t;

			snprintf(value, sizeof(value), "[\"%s\"]", bad[i]);
			t = good_with("seccomp.deny", value);
			assert_int_equal(mf_parse((const uint8_t *)t, strlen(t), NOW, NULL, &m, &err),
					 -EINVAL);
			assert_non_null(strstr(err.msg, "seccomp.deny[0]: unknown syscall"));
			free(t);
		}
	}
}

static void test_null_err(void **state)
{
	struct mf_manifest *m = NULL;

	(void)state;
	assert_int_equal(mf_parse((const uint8_t *)"[]", 2, NOW, NULL, &m, NULL), -EINVAL);
	assert_int_equal(mf_parse((const uint8_t *)"{", 1, NOW, NULL, &m, NULL), -EBADMSG);
	assert_int_equal(mf_parse((const uint8_t *)good_json, strlen(good_json), NOW, NULL, NULL, NULL),
			 -EINVAL);
	assert_null(m);
	mf_free(NULL);
}

/* ---- jansson under allocation failure ---- */

/* jansson's lexer drops a byte when an allocation fails and carries on, so a
 * parse under memory pressure could differ from the signed bytes. Each
 * allocation jansson makes fails once in turn: every outcome must be -ENOMEM
 * or the very same manifest. */
static void test_jansson_oom(void **state)
{
	struct mf_manifest *want = NULL;
	long n_enomem = 0;

	(void)state;
	assert_int_equal(parse_str(good_json, &want, NULL), 0);
	json_set_alloc_funcs(jf_malloc, free);
	for (jf_fail_at = 1;; jf_fail_at++) {
		struct mf_manifest *m = NULL;
		struct tn_error err = { 0 };
		int r;

		jf_count = 0;
		r = parse_str(good_json, &m, &err);
		if (r == -ENOMEM) {
			n_enomem++;
			assert_null(m);
			continue;
		}
		if (r != 0) {
			json_set_alloc_funcs(malloc, free);
			fail_msg("allocation %ld failed: %d %s", jf_fail_at, r, err.msg);
		}
		assert_same(m, want);
		mf_free(m);
		if (jf_count < jf_fail_at)
			break; /* no allocation left to fail */
	}
	json_set_alloc_funcs(malloc, free);
	assert_true(n_enomem > 10);
	mf_free(want);
}

/* ---- committed files: the test vector and the JSON Schema ---- */

static void test_vector_good_json(void **state)
{
	struct mf_manifest *m = NULL;
	struct tn_error err = { 0 };
	size_t len = 0;
	char *text = vectors_read("good.json", &len);

	(void)state;
	assert_non_null(text);
	if (parse_text(text, len, &m, &err) != 0)
		fail_msg("tests/vectors/good.json: %s", err.msg);
	assert_int_equal(m->uid, 1000);
	mf_free(m);
	free(text);
}

static json_t *schema_at(json_t *schema, const char *const *keys)
{
	json_t *v = schema;

	for (; *keys; keys++) {
		v = json_object_get(v, *keys);
		if (!v)
			fail_msg("schema: no %s", *keys);
	}
	return v;
}

#define SCHEMA(...) schema_at(schema, (const char *const[]){ __VA_ARGS__, NULL })

/* Range of an integer field: min and max accepted, one beyond refused. */
static void check_range(const char *path, json_t *field)
{
	json_int_t min = json_integer_value(json_object_get(field, "minimum"));
	json_int_t max = json_integer_value(json_object_get(field, "maximum"));
	json_int_t probe[4] = { min, max, min - 1, max + 1 };

	assert_true(json_is_integer(json_object_get(field, "minimum")));
	assert_true(json_is_integer(json_object_get(field, "maximum")));
	for (int i = 0; i < 4; i++) {
		struct mf_manifest *m = NULL;
		char value[32], *text;
		int r;

		snprintf(value, sizeof(value), "%lld", (long long)probe[i]);
		text = good_with(path, value);
		r = parse_str(text, &m, NULL);
		if ((r == 0) != (i < 2))
			fail_msg("schema says %s in %lld..%lld, parser %s %s", path, (long long)min,
				 (long long)max, r == 0 ? "accepts" : "refuses", value);
		mf_free(m);
		free(text);
	}
}

/* policy/manifest.schema.json says what the parser does. (More of it is
 * checked against the parser with a JSON Schema validator; see docs.) */
static void test_schema_matches_code(void **state)
{
	static const char *const limit_keys[] = {
		"timeout_s", "output_bytes", "nofile", "nproc", "fsize_bytes", "concurrency", "result_bytes",
	};
	static const char *const top_keys[] = {
		"turninit", "expires", "user",     "home",    "workdir", "shell", "env",
		"limits",   "seccomp", "landlock", "callers", "network", "audit",
	};
	size_t len = 0, i;
	char *text = vectors_read("../../policy/manifest.schema.json", &len);
	json_t *schema, *v, *groups, *never;
	struct mf_manifest *m = NULL;
	char *json, expected_pattern[256];
	json_error_t je;
	const char *key;
	size_t k = 0;

	(void)state;
	assert_non_null(text);
	schema = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!schema)
		fail_msg("manifest.schema.json: %s (line %d)", je.text, je.line);
	free(text);
	assert_string_equal(json_string_value(SCHEMA("$schema")),
			    "https://json-schema.org/draft/2020-12/schema");

	/* top-level keys: the same set, in the order mf_to_json writes them */
	assert_int_equal(json_object_size(SCHEMA("properties")), sizeof(top_keys) / sizeof(top_keys[0]));
	i = 0;
	json_object_foreach(SCHEMA("properties"), key, v)
		assert_string_equal(key, top_keys[i++]);
	assert_int_equal(parse_str(good_json, &m, NULL), 0);
	json = mf_to_json(m);
	mf_free(m);
	{
		json_t *rendered = json_loads(json, 0, &je);

		assert_non_null(rendered);
		i = 0;
		json_object_foreach(rendered, key, v)
			assert_string_equal(key, top_keys[i++]);
		assert_int_equal(i, sizeof(top_keys) / sizeof(top_keys[0]));
		json_decref(rendered);
	}
	free(json);

	/* ranges */
	for (i = 0; i < sizeof(limit_keys) / sizeof(limit_keys[0]); i++) {
		char path[64];

		snprintf(path, sizeof(path), "limits.%s", limit_keys[i]);
		check_range(path, SCHEMA("properties", "limits", "properties", limit_keys[i]));
	}
	check_range("user.uid", SCHEMA("$defs", "id"));
	check_range("user.gid", SCHEMA("$defs", "id"));

	/* the group enum is the table of policy/seccomp_groups.c, in order */
	groups = json_object_get(json_array_get(SCHEMA("$defs", "seccomp_list", "items", "anyOf"), 0),
				 "enum");
	assert_non_null(groups);
	assert_int_equal(json_array_size(groups), scg_n_groups);
	for (i = 0; i < scg_n_groups; i++)
		assert_string_equal(json_string_value(json_array_get(groups, i)), scg_groups[i].name);

	/* never-admitted: exact names as an enum, prefixes as one pattern */
	never = SCHEMA("$defs", "never_admitted", "anyOf");
	v = json_object_get(json_array_get(never, 0), "enum");
	k = (size_t)snprintf(expected_pattern, sizeof(expected_pattern), "^(");
	{
		size_t n_exact = 0, n_prefix = 0;
		const char *prefixes[16];

		for (const char *const *e = envf_never_table; *e; e++) {
			size_t n = strlen(*e);

			if ((*e)[n - 1] == '*') {
				assert_true(n_prefix < 16);
				prefixes[n_prefix++] = *e;
			} else {
				bool found = false;

				for (i = 0; i < json_array_size(v); i++)
					found |= strcmp(json_string_value(json_array_get(v, i)), *e) == 0;
				if (!found)
					fail_msg("schema: never_admitted lacks %s", *e);
				n_exact++;
			}
		}
		assert_int_equal(json_array_size(v), n_exact);
		/* sorted, so the pattern has one spelling */
		for (size_t a = 0; a < n_prefix; a++)
			for (size_t b = a + 1; b < n_prefix; b++)
				if (strcmp(prefixes[b], prefixes[a]) < 0) {
					const char *t = prefixes[a];

					prefixes[a] = prefixes[b];
					prefixes[b] = t;
				}
		for (size_t a = 0; a < n_prefix; a++)
			k += (size_t)snprintf(expected_pattern + k, sizeof(expected_pattern) - k, "%s%.*s",
					      a ? "|" : "", (int)(strlen(prefixes[a]) - 1), prefixes[a]);
		snprintf(expected_pattern + k, sizeof(expected_pattern) - k, ")");
	}
	assert_string_equal(json_string_value(json_object_get(json_array_get(never, 1), "pattern")),
			    expected_pattern);
	json_decref(schema);
}

#define N_MOD (sizeof(mod_cases) / sizeof(mod_cases[0]))

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_good_all_fields),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_default_landlock_with_workdir),
		cmocka_unit_test(test_default_callers),
		cmocka_unit_test(test_user_start_fixed),
		cmocka_unit_test(test_user_start_range),
		cmocka_unit_test(test_user_start_range_callers),
		cmocka_unit_test(test_env_empty_object),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_size_limit),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_not_an_object),
		cmocka_unit_test(test_not_json),
		cmocka_unit_test(test_huge_numbers),
		cmocka_unit_test(test_version_first),
		cmocka_unit_test(test_list_limits),
		cmocka_unit_test(test_env_set_limit),
		cmocka_unit_test(test_path_length),
		cmocka_unit_test(test_expired),
		cmocka_unit_test(test_bad_time_format),
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_credential_refusals),
		cmocka_unit_test(test_to_json_exact),
		cmocka_unit_test(test_to_json_env_order),
		cmocka_unit_test(test_syscall_callback),
		cmocka_unit_test(test_null_err),
		cmocka_unit_test(test_jansson_oom),
		cmocka_unit_test(test_vector_good_json),
		cmocka_unit_test(test_schema_matches_code),
	};
	const size_t n_fixed = sizeof(fixed) / sizeof(fixed[0]);
	struct CMUnitTest tests[sizeof(fixed) / sizeof(fixed[0]) + N_MOD];

	memcpy(tests, fixed, sizeof(fixed));
	for (size_t i = 0; i < N_MOD; i++)
		tests[n_fixed + i] = (struct CMUnitTest){
			.name = mod_cases[i].name,
			.test_func = test_mod_case,
			.initial_state = (void *)&mod_cases[i],
		};
	return _cmocka_run_group_tests("manifest", tests, n_fixed + N_MOD, NULL, NULL);
}
