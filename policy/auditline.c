/* auditline.c - see auditline.h and docs/audit.md. */
#include "policy/auditline.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

int aline_encode(const json_t *ev, const uint8_t prev[ALINE_HASH_BYTES], char **ret_line, size_t *ret_len)
{
	char hex[2 * ALINE_HASH_BYTES + 1];
	json_t *event = json_object_get(ev, "event");
	json_t *line;
	char *s, *t;
	size_t n;

	if (!json_is_string(event) || json_object_get(ev, "prev"))
		return -EINVAL;
	/* "event" first, "prev" second, then the event's own fields: the
	 * update keeps "event" where it is */
	sodium_bin2hex(hex, sizeof(hex), prev, ALINE_HASH_BYTES);
	line = json_pack("{s:O, s:s}", "event", event, "prev", hex);
	if (!line || json_object_update(line, (json_t *)ev) != 0) {
		json_decref(line);
		return -ENOMEM;
	}
	s = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	json_decref(line);
	if (!s)
		return -ENOMEM;
	n = strlen(s);
	/* room for the newline and a NUL after it */
	t = realloc(s, n + 2);
	if (!t) {
		free(s);
		return -ENOMEM;
	}
	s = t;
	s[n++] = '\n';
	s[n] = '\0';
	*ret_line = s;
	*ret_len = n;
	return 0;
}

void aline_digest(const char *line, size_t len, bool newline, uint8_t ret[ALINE_HASH_BYTES])
{
	crypto_generichash_state h;

	crypto_generichash_init(&h, NULL, 0, ALINE_HASH_BYTES);
	crypto_generichash_update(&h, (const uint8_t *)line, len);
	if (newline)
		crypto_generichash_update(&h, (const uint8_t *)"\n", 1);
	crypto_generichash_final(&h, ret, ALINE_HASH_BYTES);
}

void aline_first_link(const char turn[static ALINE_TURN_HEX], uint8_t ret[ALINE_HASH_BYTES])
{
	crypto_generichash(ret, ALINE_HASH_BYTES, (const uint8_t *)turn, ALINE_TURN_HEX, NULL, 0);
}

bool aline_in_order(const char *line, size_t len, const char *event)
{
	static const char head[] = "{\"event\":\"", mid[] = "\",\"prev\":\"";
	size_t hl = sizeof(head) - 1, ml = sizeof(mid) - 1, el;

	if (!event)
		return false;
	el = strlen(event);
	return len > hl + el + ml && memcmp(line, head, hl) == 0 && memcmp(line + hl, event, el) == 0 &&
	       memcmp(line + hl + el, mid, ml) == 0;
}
