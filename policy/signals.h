/* signals.h - the one table of signal names in turninit: the name a result
 * gives a signal that ended a command ("[killed by signal 9 (SIGKILL)]",
 * docs/mcp.md), and the names a `signal` request may carry (docs/protocol.md).
 * Sources: signal(7). */
#ifndef TURNINIT_SIGNALS_H
#define TURNINIT_SIGNALS_H

/* sig_name - "SIGTERM" for SIGTERM; NULL for a signal without a common name
 * (the real-time ones, 32 and up). */
const char *sig_name(int signo);

/* sig_of_request - the signal a request names without its SIG prefix ("TERM"),
 * or 0 when it is not one that a signal request may carry: HUP INT QUIT KILL
 * USR1 USR2 TERM WINCH (SIG_REQUEST_NAMES). */
int sig_of_request(const char *name);
#define SIG_REQUEST_NAMES "HUP INT QUIT KILL USR1 USR2 TERM WINCH"

#endif
