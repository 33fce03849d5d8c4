/* plat.h - what turninit asks the platform at start to know which layers it
 * offers: uname(2) and PR_GET_SECUREBITS for policy/platform.c's decision
 * (gVisor or not), and a self-test of SO_PEERCRED, which listen and call
 * trust. Sources: uname(2), prctl(2), unix(7) SO_PEERCRED. */
#ifndef TURNINIT_PLAT_H
#define TURNINIT_PLAT_H

#include <stdbool.h>
#include <sys/utsname.h>

#include "policy/error.h"
#include "policy/platform.h"

/* plat_facts - the facts of pf_facts as this platform answers them now:
 * uname(2) into *buf (ret's strings point there; NULL if uname failed) and
 * the errno of prctl(PR_GET_SECUREBITS) (0 when it answered). Never fails. */
void plat_facts(struct pf_facts *ret, struct utsname *buf);

/* plat_is_gvisor - pf_is_gvisor of plat_facts. */
bool plat_is_gvisor(void);

/* plat_subreaper_works - whether PR_SET_CHILD_SUBREAPER takes (prctl(2)),
 * asked in a forked child that exits at once and is reaped here. False under
 * Debian's runsc (EINVAL): a keeper is then no subreaper, and what a command
 * leaves running is reparented to PID 1 and lives until the turn ends. */
bool plat_subreaper_works(void);

/* plat_peercred_check - that SO_PEERCRED names the peer, on both ends of a
 * unix stream connection, as listen's peer check and call's server check
 * need: a listening socket (an abstract name, so no path), a child that
 * connects, each end reading SO_PEERCRED: the listener must see the child's
 * pid, the child its parent's. A connection from any other process (the
 * name is visible to the network namespace, a pod's containers included)
 * is closed and passed over. gVisor before 2023 (runsc 0.0~20221219)
 * answers each end with its own credentials. Bounded: 2 s in all, the
 * child killed then. who names the caller in the message ("listen",
 * "call", "mcp"). The child is reaped here.
 * Errors: -ENOTSUP (SO_PEERCRED does not name the peer: the message says so,
 * and names gVisor when plat_is_gvisor), or the -errno of the step that
 * failed (socket, bind, fork, ...); err filled. */
int plat_peercred_check(const char *who, struct tn_error *err);

#endif
