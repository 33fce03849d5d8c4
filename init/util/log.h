/* log.h - the one logging helper: "turninit: " + message + "\n" on stderr,
 * written with a single write(2) so lines from concurrent processes never
 * interleave; every byte of the message outside printable ASCII (controls,
 * DEL, and all bytes >= 0x80, among them C1 controls and the UTF-8 of U+0085
 * and U+2028) becomes '?', so it stays one line for every reader. Preserves
 * errno. */
#ifndef TURNINIT_LOG_H
#define TURNINIT_LOG_H

void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* log_line_fd - log_line, to fd instead of stderr (a thread of PID 1 whose
 * lines go where the proxy's do: notify.c). */
void log_line_fd(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
