/* netpeer.c - see netpeer.h. */
#include "policy/netpeer.h"

#include <errno.h>

/* An entry added at at_ms is old at now_ms: more than NP_TTL_MS ago. A clock
 * read before at_ms (never, from one monotonic clock) leaves it young. */
static bool np_old(uint64_t at_ms, uint64_t now_ms)
{
	return now_ms > at_ms && now_ms - at_ms > NP_TTL_MS;
}

/* The old entries dropped, the others kept in their order. */
static void np_expire(struct np_table *t, uint64_t now_ms)
{
	size_t kept = 0;

	for (size_t i = 0; i < t->n; i++)
		if (!np_old(t->e[i].at_ms, now_ms))
			t->e[kept++] = t->e[i];
	t->n = kept;
}

/* The place of (port, to) in t, or t->n. */
static size_t np_find(const struct np_table *t, uint16_t port, uint16_t to)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->e[i].port == port && t->e[i].to == to)
			break;
	return i;
}

int np_add(struct np_table *t, uint16_t port, uint16_t to, uint64_t now_ms)
{
	size_t i;

	if (port == 0 || to == 0)
		return -EINVAL;
	np_expire(t, now_ms);
	i = np_find(t, port, to);
	if (i < t->n) {
		t->e[i].at_ms = now_ms;
		return 0;
	}
	if (t->n >= NP_MAX)
		return -ENOSPC;
	t->e[t->n++] = (struct np_entry){ .port = port, .to = to, .at_ms = now_ms };
	return 0;
}

bool np_take(struct np_table *t, uint16_t port, uint16_t to, uint64_t now_ms)
{
	size_t i;

	np_expire(t, now_ms);
	i = np_find(t, port, to);
	if (i == t->n)
		return false;
	t->e[i] = t->e[--t->n];
	return true;
}
