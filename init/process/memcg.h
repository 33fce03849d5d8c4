/* memcg.h - what the container's memory cgroup says of the OOM killer
 * (docs/design.md, "Memory"). Sources: the kernel's
 * Documentation/admin-guide/cgroup-v2.rst (memory.events: oom_kill) and
 * cgroup-v1/memory.rst (memory.oom_control: oom_kill, since Linux 4.13). */
#ifndef TURNINIT_MEMCG_H
#define TURNINIT_MEMCG_H

/* memcg_oom_kills - how many processes the OOM killer has killed in the
 * memory cgroup mounted at /sys/fs/cgroup, as a runtime mounts a container's
 * own: the oom_kill line of memory.events (cgroup v2; subtree included), else
 * of memory/memory.oom_control (v1). Returns the count (>= 0), or -1 when
 * neither can be read (no cgroup file system there, an older kernel, a
 * runtime that mounts none): a caller then cannot tell an OOM kill. */
long memcg_oom_kills(void);

#endif
