/* exit_codes.h - the exit statuses of turninit, the table of docs/exit-codes.md
 * and of `turninit --help` (init/util/cli.c), in one place. A command's own status
 * 0..255 passes through unchanged; these are the ones turninit gives. */
#ifndef TURNINIT_EXIT_CODES_H
#define TURNINIT_EXIT_CODES_H

#define EXIT_TIMED_OUT 124   /* ran past its timeout and was ended (timeout(1)'s code) */
#define EXIT_REFUSED 125     /* refused or failed before the command started */
#define EXIT_CANNOT_EXEC 126 /* the shell exists but could not be executed (bash's 126) */
#define EXIT_NOT_FOUND 127   /* the shell was not found (bash's 127) */
#define EXIT_SIGNAL_BASE 128 /* 128 + N: killed by signal N */

#endif
