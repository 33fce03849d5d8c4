/* faulty.c - a program valgrind must catch (tests/integration/valgrind.sh,
 * harness-catches-errors): it reads uninitialised memory and leaks. Built by
 * make helpers with gcc -O0 -g, not for the product. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	int *p = malloc(64);

	if (p && p[3] == 7)
		puts("seven");
	p = NULL;
	return 0;
}
