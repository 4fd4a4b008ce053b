/* test_main.c - runs every suite; the exit status is the failure count. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    Suite *(*const suites[])(void) = {
        suite_checked, suite_units, suite_format, suite_footprint,
        suite_budget,  suite_seeds, suite_loader, suite_cli, suite_minifloat,
        suite_quant,   suite_plotmath, suite_kernels, suite_tui,     suite_gpu,
    };
    printf("kvlab tests, random seed %llu (set KVLAB_SEED to repeat)\n",
           (unsigned long long)test_seed());
    SRunner *sr = srunner_create(suites[0]());
    for (size_t i = 1; i < sizeof suites / sizeof suites[0]; i++)
        srunner_add_suite(sr, suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
