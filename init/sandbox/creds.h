/* creds.h - the values of the manifest's credentials, read at start. */
#ifndef TURNINIT_CREDS_H
#define TURNINIT_CREDS_H

#include <stddef.h>

struct creds {
	char **value;   /* value[i] for network.allow[i]: malloc'd, NUL-ended;
			   NULL when the rule has no credential or it was not given */
	size_t n;
};

#endif
