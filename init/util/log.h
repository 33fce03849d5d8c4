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

/* log_errno - log_line, then ": " and strerror(errnum) appended, as
 * err_errno (policy/error.h) fills a tn_error: the one place a log line
 * renders an errno. errnum's sign is ignored, so both errno and a -errno
 * return fit: `log_errno(errno, "poll")` gives "turninit: poll: Interrupted
 * system call". Preserves errno. */
void log_errno(int errnum, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
