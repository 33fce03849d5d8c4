/* lineframe.c - see lineframe.h. */
#include "policy/lineframe.h"

#include <string.h>

enum lf_kind lf_next(struct lf_frame *f, const char *buf, size_t len, size_t *pos, const char **ret_at,
		     size_t *ret_len)
{
	while (*pos < len) {
		const char *at = buf + *pos, *nl = memchr(at, '\n', len - *pos);
		size_t n = nl ? (size_t)(nl - at) : len - *pos;

		if (!nl && n <= f->max && !f->discarding)
			return LF_MORE;
		*pos = nl ? *pos + n + 1 : len;
		if (f->discarding) {
			/* the rest of a long line, up to its newline */
			f->discarding = !nl;
			continue;
		}
		*ret_at = at;
		*ret_len = n;
		if (n <= f->max)
			return LF_LINE;
		f->discarding = !nl;
		return LF_LONG;
	}
	return LF_MORE;
}
