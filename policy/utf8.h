/* utf8.h - the one UTF-8 decoder of turninit (RFC 3629: no overlong form, no
 * surrogate, nothing past U+10FFFF), for MCP's results and the trusted
 * comments of signatures. */
#ifndef TURNINIT_UTF8_H
#define TURNINIT_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* utf8_decode - the length (1 to 4) of the valid UTF-8 sequence at p, n
 * bytes left (n >= 1), with its code point in *ret_cp when ret_cp is not
 * NULL; 0 when the bytes there are no character (or are cut off by n). */
size_t utf8_decode(const uint8_t *p, size_t n, uint32_t *ret_cp);

#endif
