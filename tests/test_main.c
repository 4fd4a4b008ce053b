/* test_main.c - runs every suite; exits EXIT_FAILURE when a test failed (or
 * one that passed wrote to stderr), EXIT_SUCCESS otherwise.
 *
 * The GPU suite runs only where a GPU can be used. Elsewhere `make test`
 * says once that it skips it, and `make test-gpu` (KVLAB_NEED_GPU=1),
 * which is there to run it, fails with one line saying why.
 *
 * A run that passes prints nothing that looks like a failure: what the
 * tests write to stderr (a screen dump, a script's complaint) is set aside
 * and shown after the results if a test failed; written by tests that all
 * passed, it fails the run. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Points stderr, which the forked tests inherit, at a scratch file; the
 * real one is kept in *saved. NULL (stderr left as it is) without forks,
 * where a crash would lose the file, or without a scratch file. */
static FILE *stderr_aside(int *saved)
{
    const char *fork_mode = getenv("CK_FORK");
    FILE *f = fork_mode && !strcmp(fork_mode, "no") ? NULL : tmpfile();
    fflush(stderr);
    if (!f || (*saved = dup(STDERR_FILENO)) < 0 || dup2(fileno(f), STDERR_FILENO) < 0) {
        if (f)
            fclose(f);
        return NULL;
    }
    return f;
}

/* Puts stderr back and shows what was set aside; returns whether it must
 * fail the run (something was written, and no test failed). */
static bool stderr_back(FILE *f, int saved, int failed)
{
    if (!f)
        return false;
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(f);
    char buf[4096];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (!total && !failed)
            fprintf(stderr, "kvlab tests: tests that passed wrote to stderr:\n");
        fwrite(buf, 1, n, stderr);
        total += n;
    }
    fclose(f);
    return total && !failed;
}

int main(void)
{
    Suite *(*const suites[])(void) = {
        suite_checked, suite_units, suite_format, suite_footprint,
        suite_budget,  suite_seeds, suite_loader, suite_cli, suite_minifloat,
        suite_quant,   suite_plotmath, suite_kernels, suite_tui, suite_paths, suite_build,
        suite_query, suite_exercise, suite_lesson, suite_kvtensors, suite_stats, suite_niah,
        suite_stored,
    };
    char why[512] = "";
    bool gpu = test_suite_selected("gpu") && gpu_usable(why, sizeof why);
    const char *need = getenv("KVLAB_NEED_GPU");
    if (!gpu && need && *need) {
        fprintf(stderr, "kvlab tests: the GPU suite cannot run: %s\n",
                *why ? why : "CK_RUN_SUITE leaves it out");
        return EXIT_FAILURE;
    }
    printf("kvlab tests, random seed %llu (set KVLAB_SEED to repeat)\n",
           (unsigned long long)test_seed());
    if (!gpu && *why)
        printf("gpu suite skipped: %s\n", why);
    SRunner *sr = srunner_create(suites[0]());
    for (size_t i = 1; i < sizeof suites / sizeof suites[0]; i++)
        srunner_add_suite(sr, suites[i]());
    if (gpu)
        srunner_add_suite(sr, suite_gpu());
    fflush(stdout);
    int saved = -1;
    FILE *aside = stderr_aside(&saved);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    bool noisy = stderr_back(aside, saved, failed);
    return failed || noisy ? EXIT_FAILURE : EXIT_SUCCESS;
}
