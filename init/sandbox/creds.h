/* creds.h - the values of the manifest's credentials (docs/manifest.md,
 * "network.allow[].credential"), read from the launcher's files before any
 * command starts, then put out of every command's reach; the proxy alone
 * keeps them. Sources: open(2) O_NOFOLLOW, mount(2), tmpfs(5). */
#ifndef TURNINIT_CREDS_H
#define TURNINIT_CREDS_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/error.h"
#include "policy/manifest.h"
#include "policy/netallow.h"

#define CREDS_DEFAULT_DIR "/run/secrets" /* podman run --secret's place */
#define CREDS_DEFAULT_CA "/etc/ssl/certs/ca-certificates.crt"
#define CREDS_FILE_MAX (NA_CRED_VALUE_MAX + 1) /* bytes of a value's file: the value and a line break */

struct creds {
	char **value; /* value[i] for network.allow[i]: malloc'd, NUL-ended; NULL when
			 the rule has no credential or its file is absent */
	size_t n;     /* the manifest's n_allow */
};

/* creds_load - read DIR/NAME for each credential n names, into *ret. A file is
 * opened O_RDONLY|O_NOFOLLOW|O_CLOEXEC|O_NONBLOCK (a FIFO cannot hold the
 * start), must be a regular file of at most CREDS_FILE_MAX bytes; one
 * trailing "\n" or "\r\n" is removed, and the value must then be 1 to
 * CREDS_FILE_MAX - 1 bytes of 0x20..0x7e. An absent file (ENOENT) leaves the
 * value NULL (creds_missing says so). Each credential's CA bundle ("ca", else
 * CREDS_DEFAULT_CA) must open as a regular file. Rules without a credential
 * read nothing; with none, *ret is empty and DIR is not looked at.
 * Errors: -EINVAL (a file not regular, too long, empty, or with a byte
 * outside 0x20..0x7e), -errno of open(2), read(2) or fstat(2); the message
 * names network.allow[i].credential, the credential and the file, never a
 * byte of the value. Nothing is kept on an error (what was read is wiped). */
int creds_load(const struct mf_network *n, const char *dir, struct creds *ret, struct tn_error *err);

/* creds_any - whether c holds any value. */
bool creds_any(const struct creds *c);

/* creds_given - whether DIR/NAME of credential name opens as a start would
 * open it (its links followed only below DIR), for verify's "given" or "not
 * given"; nothing is read. */
bool creds_given(const char *dir, const char *name);

/* creds_hide - mount an empty read-only tmpfs over dir (nosuid, nodev,
 * noexec), so that no command, which shares turninit's mount namespace,
 * reads a value's file; nothing when dir does not exist. Needs
 * CAP_SYS_ADMIN. Errors: -errno of mount(2) or stat(2), with a message
 * naming dir. */
int creds_hide(const char *dir, struct tn_error *err);

/* creds_wipe - sodium_memzero every value, free them and the array; c empty
 * after. */
void creds_wipe(struct creds *c);

#endif
