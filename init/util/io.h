/* io.h - the whole-buffer writes of turninit: a blocking fd or socket takes
 * every byte, or says why not. (The non-blocking writes of serve's
 * connections, which wait with a deadline or queue, are serve_conn.c's.) */
#ifndef TURNINIT_IO_H
#define TURNINIT_IO_H

#include <stddef.h>

/* io_write_all - write(2) all len bytes of buf to fd, again after EINTR and
 * after a short write. 0, or -errno of the write that failed (-EIO when a
 * write took nothing); on an error, part of buf may have been written. */
int io_write_all(int fd, const void *buf, size_t len);

/* io_send_all - the same with send(2) and MSG_NOSIGNAL, for a socket whose
 * peer may be gone (-EPIPE, never SIGPIPE). */
int io_send_all(int fd, const void *buf, size_t len);

#endif
