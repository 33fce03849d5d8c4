/* utf8.c - see utf8.h. */
#include "policy/utf8.h"

size_t utf8_decode(const uint8_t *p, size_t n, uint32_t *ret_cp)
{
	uint8_t c = p[0];
	size_t len;
	uint32_t cp;

	if (c < 0x80) {
		if (ret_cp)
			*ret_cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	if (ret_cp)
		*ret_cp = cp;
	return len;
}
