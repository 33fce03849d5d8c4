/* signals.c - see signals.h. */
#include "policy/signals.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "policy/cleanup.h"

static const struct {
	int signo;
	const char *name;
	bool request; /* a signal request may name it */
} sig_table[] = {
	{ SIGHUP, "SIGHUP", true },     { SIGINT, "SIGINT", true },    { SIGQUIT, "SIGQUIT", true },
	{ SIGILL, "SIGILL", false },    { SIGTRAP, "SIGTRAP", false }, { SIGABRT, "SIGABRT", false },
	{ SIGBUS, "SIGBUS", false },    { SIGFPE, "SIGFPE", false },   { SIGKILL, "SIGKILL", true },
	{ SIGUSR1, "SIGUSR1", true },   { SIGSEGV, "SIGSEGV", false }, { SIGUSR2, "SIGUSR2", true },
	{ SIGPIPE, "SIGPIPE", false },  { SIGALRM, "SIGALRM", false }, { SIGTERM, "SIGTERM", true },
	{ SIGXCPU, "SIGXCPU", false },  { SIGXFSZ, "SIGXFSZ", false }, { SIGSYS, "SIGSYS", false },
	{ SIGWINCH, "SIGWINCH", true },
};

const char *sig_name(int signo)
{
	for (size_t i = 0; i < N_ELEMENTS(sig_table); i++)
		if (sig_table[i].signo == signo)
			return sig_table[i].name;
	return NULL;
}

int sig_of_request(const char *name)
{
	for (size_t i = 0; i < N_ELEMENTS(sig_table); i++)
		if (sig_table[i].request && strcmp(name, sig_table[i].name + 3) == 0)
			return sig_table[i].signo;
	return 0;
}
