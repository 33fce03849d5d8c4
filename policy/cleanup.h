/* cleanup.h - __attribute__((cleanup)) helpers in the style of systemd and
 * bubblewrap. `_cleanup_free_ char *p = NULL;` frees p at scope exit;
 * steal_ptr() hands ownership on. */
#ifndef TURNINIT_CLEANUP_H
#define TURNINIT_CLEANUP_H

#include <stdlib.h>
#include <unistd.h>
#include <errno.h>

static inline void cleanup_freep(void *p) { free(*(void **)p); }
static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

#define _cleanup_free_ __attribute__((cleanup(cleanup_freep)))
#define _cleanup_close_ __attribute__((cleanup(cleanup_closep)))

#define steal_ptr(pp) ({ __typeof__(*(pp)) _p = *(pp); *(pp) = NULL; _p; })
#define steal_fd(fdp) ({ int _fd = *(fdp); *(fdp) = -1; _fd; })

#endif
