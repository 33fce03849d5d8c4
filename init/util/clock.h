/* clock.h - the one clock of turninit: CLOCK_MONOTONIC in milliseconds, for
 * deadlines and elapsed times (never the wall clock: a date change does not
 * end or extend a command). */
#ifndef TURNINIT_CLOCK_H
#define TURNINIT_CLOCK_H

#include <stdint.h>

/* clock_ms - milliseconds of CLOCK_MONOTONIC (since an unspecified point,
 * typically boot); never fails on Linux. */
uint64_t clock_ms(void);

#endif
