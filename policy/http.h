/* http.h - what every parser of HTTP in turninit shares: the proxy's request
 * head (proxyreq.c), the credential gateway's heads (gwhttp.c), and the
 * manifest's credential field names (manifest.c). Pure.
 * Sources: RFC 9110 section 5.6.2 (tokens). */
#ifndef TURNINIT_HTTP_H
#define TURNINIT_HTTP_H

#include <stdbool.h>
#include <stddef.h>

/* http_token - whether s[0..n) is a token (RFC 9110 section 5.6.2): one or
 * more tchar, the letters, digits and !#$%&'*+-.^_`|~. A NUL is no tchar. */
bool http_token(const char *s, size_t n);

#endif
