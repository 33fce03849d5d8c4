/* log.h - the one logging helper: "turninit: " + message + "\n" on stderr,
 * written with a single write(2) so lines from concurrent processes never
 * interleave; control characters in the message become '?', so it stays one
 * line. Preserves errno. */
#ifndef TURNINIT_LOG_H
#define TURNINIT_LOG_H

void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
