/* test_signals.c - the one table of signal names (policy/signals.c): each
 * name a signal request may carry is the signal's own name without "SIG",
 * and nothing else is taken. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "policy/signals.h"

static void request_names_round_trip(void **state)
{
	char names[] = SIG_REQUEST_NAMES;
	int n = 0;

	(void)state;
	for (char *save = NULL, *w = strtok_r(names, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		int sig = sig_of_request(w);
		char full[16];

		assert_true(sig > 0);
		snprintf(full, sizeof(full), "SIG%s", w);
		assert_string_equal(sig_name(sig), full);
		n++;
	}
	assert_int_equal(n, 8);
	assert_int_equal(sig_of_request("TERM"), SIGTERM);
	assert_int_equal(sig_of_request("WINCH"), SIGWINCH);
}

static void others_refused(void **state)
{
	(void)state;
	/* named in results, never sent by a request */
	assert_string_equal(sig_name(SIGSEGV), "SIGSEGV");
	assert_int_equal(sig_of_request("SEGV"), 0);
	assert_int_equal(sig_of_request("SIGTERM"), 0);
	assert_int_equal(sig_of_request("term"), 0);
	assert_int_equal(sig_of_request(""), 0);
	assert_null(sig_name(34));
	assert_null(sig_name(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_names_round_trip),
		cmocka_unit_test(others_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
