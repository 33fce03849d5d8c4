/* lineframe.h - the one line framer: a byte stream cut into newline-ended
 * lines with a bound, for every reader of lines (serve's connections, turninit
 * call, the MCP bridge, audit-verify). Pure: the caller reads, keeps the
 * buffer and decides what a line past the bound means to it.
 * Sources: JSON Lines (docs/protocol.md, "Transport"), docs/audit.md. */
#ifndef TURNINIT_LINEFRAME_H
#define TURNINIT_LINEFRAME_H

#include <stdbool.h>
#include <stddef.h>

struct lf_frame {
	size_t max;      /* bytes of a line, its newline excluded */
	bool discarding; /* the rest of a line past max is dropped up to its newline */
};

enum lf_kind {
	LF_MORE, /* no whole line: read more (buf[*pos, len) kept, or dropped) */
	LF_LINE, /* a line of at most max bytes (0 too), newline excluded */
	LF_LONG, /* a line past max: said once, its rest dropped */
};

/* lf_next - the next frame of buf[*pos, len): LF_LINE, *ret_at and *ret_len
 * the line, *pos past its newline; LF_LONG once for each line longer than
 * f->max, when its newline comes or as soon as more than f->max bytes wait
 * without one (*ret_at, *ret_len: those bytes; the rest of the line is
 * dropped, f->discarding); LF_MORE when no whole line waits, *pos at the
 * bytes to keep (len when they are the dropped rest of a long line). Lines
 * are never joined or split: the caller moves buf[*pos, len) to its start and
 * reads on. To look ahead, call it on a copy of f and of *pos. */
enum lf_kind lf_next(struct lf_frame *f, const char *buf, size_t len, size_t *pos, const char **ret_at,
		     size_t *ret_len);

#endif
