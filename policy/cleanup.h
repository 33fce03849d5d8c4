/* cleanup.h - the small helpers every file may use, in the style of systemd
 * and bubblewrap: __attribute__((cleanup)) releases (`_cleanup_free_ char *p =
 * NULL;` frees p at scope exit; steal_ptr() hands ownership on) of memory,
 * fds, FILE, DIR, json_t, the libseccomp context and cap_t, N_ELEMENTS
 * of an array, and TEMP_FAILURE_RETRY for a call that EINTR interrupts. */
#ifndef TURNINIT_CLEANUP_H
#define TURNINIT_CLEANUP_H

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}
static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void cleanup_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}
static inline void cleanup_closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static inline void cleanup_json_decrefp(json_t **j)
{
	json_decref(*j);
}

/* libseccomp's context (scmp_filter_ctx is a void *) and libcap's cap_t, whose
 * releases take a void *: declared here as seccomp.h and sys/capability.h do,
 * so that policy/ includes neither library (an unused static inline is never
 * emitted, so nothing links them either). */
void seccomp_release(void *ctx);
int cap_free(void *obj);
static inline void cleanup_seccomp_releasep(void *p)
{
	if (*(void **)p)
		seccomp_release(*(void **)p);
}
static inline void cleanup_cap_freep(void *p)
{
	if (*(void **)p)
		cap_free(*(void **)p);
}

#define _cleanup_free_ __attribute__((cleanup(cleanup_freep)))
#define _cleanup_close_ __attribute__((cleanup(cleanup_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(cleanup_fclosep)))
#define _cleanup_closedir_ __attribute__((cleanup(cleanup_closedirp)))
#define _cleanup_json_decref_ __attribute__((cleanup(cleanup_json_decrefp)))
#define _cleanup_seccomp_release_ __attribute__((cleanup(cleanup_seccomp_releasep)))
#define _cleanup_cap_free_ __attribute__((cleanup(cleanup_cap_freep)))

/* N_ELEMENTS(a) - the number of elements of the array a (not a pointer). */
#define N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

/* clang-format 14 spreads a statement expression over lines: these stay on one */
/* clang-format off */
/* TEMP_FAILURE_RETRY(expr) - expr again while it fails with EINTR (glibc's and
 * musl's, under _GNU_SOURCE; defined here when a libc lacks it). */
#ifndef TEMP_FAILURE_RETRY
#define TEMP_FAILURE_RETRY(expr) \
	({ long _r; do _r = (long)(expr); while (_r == -1L && errno == EINTR); _r; })
#endif

#define steal_ptr(pp) ({ __typeof__(*(pp)) _p = *(pp); *(pp) = NULL; _p; })
#define steal_fd(fdp) ({ int _fd = *(fdp); *(fdp) = -1; _fd; })
/* clang-format on */

#endif
