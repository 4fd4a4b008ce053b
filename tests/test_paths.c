/* test_paths.c - where kvlab looks for its data and its plugin (paths.h):
 * the environment's place alone where it is set; else beside the program,
 * the build tree's before the installed layout's, then under PREFIX. The
 * whole of it, installed and moved, is checked by the build suite. */
#include "testutil.h"

#include "paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The directory of the running program. */
static void exe_dir(char *out, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", out, n - 1);
    ck_assert(len > 0);
    out[len] = '\0';
    *strrchr(out, '/') = '\0';
}

/* Checks that the places for kind are, in order, each of `beside`
 * (relative to the program's directory) and then each of `last`. */
static void assert_places(PathKind kind, const char *const *beside, size_t n_beside,
                          const char *const *last, size_t n_last)
{
    char dir[PATH_MAX], want[PATHS_LEN];
    exe_dir(dir, sizeof dir);
    PathList l;
    paths_candidates(kind, &l);
    ck_assert_uint_eq(l.n, n_beside + n_last);
    for (size_t i = 0; i < n_beside; i++) {
        snprintf(want, sizeof want, "%s/%s", dir, beside[i]);
        ck_assert_str_eq(l.path[i], want);
    }
    for (size_t i = 0; i < n_last; i++)
        ck_assert_str_eq(l.path[n_beside + i], last[i]);
}

/* Without KVLAB_DATA, the data is looked for beside the program (a
 * build's scenarios/, then an installed tree's share/kvlab), then under
 * the compiled-in PREFIX: a build tree with an installed tree above it
 * (~/kvlab after make install PREFIX=$HOME) uses its own. */
START_TEST(data_places)
{
    unsetenv("KVLAB_DATA");
    static const char *const BESIDE[] = {"scenarios", "../" KVLAB_DATADIR};
    static const char *const LAST[] = {KVLAB_PREFIX "/" KVLAB_DATADIR};
    assert_places(PATH_DATA, BESIDE, N_OF(BESIDE), LAST, N_OF(LAST));
}
END_TEST

/* Without KVLAB_LESSONS, the lessons are looked for as the data is:
 * beside the program (a build's lessons/, then an installed tree's
 * share/kvlab/lessons), then under the compiled-in PREFIX. */
START_TEST(lesson_places)
{
    unsetenv("KVLAB_LESSONS");
    static const char *const BESIDE[] = {"lessons", "../" KVLAB_LESSONDIR};
    static const char *const LAST[] = {KVLAB_PREFIX "/" KVLAB_LESSONDIR};
    assert_places(PATH_LESSONS, BESIDE, N_OF(BESIDE), LAST, N_OF(LAST));
}
END_TEST

/* Without KVLAB_STORED, the stored GPU results are looked for as the
 * data is: beside the program (a build's stored/, linked to assets/stored,
 * then an installed tree's share/kvlab/stored), then under the
 * compiled-in PREFIX. */
START_TEST(stored_places)
{
    unsetenv("KVLAB_STORED");
    static const char *const BESIDE[] = {"stored", "../" KVLAB_STOREDDIR};
    static const char *const LAST[] = {KVLAB_PREFIX "/" KVLAB_STOREDDIR};
    assert_places(PATH_STORED, BESIDE, N_OF(BESIDE), LAST, N_OF(LAST));
}
END_TEST

/* Without KVLAB_CUDA_PLUGIN, the plugin is looked for beside the program
 * (the build's own, then an installed tree's lib/kvlab), then under the
 * compiled-in PREFIX, then on the library path. */
START_TEST(plugin_places)
{
    unsetenv("KVLAB_CUDA_PLUGIN");
    static const char *const BESIDE[] = {"libkvlab_cuda.so",
                                         "../" KVLAB_PLUGINDIR "/libkvlab_cuda.so"};
    static const char *const LAST[] = {KVLAB_PREFIX "/" KVLAB_PLUGINDIR "/libkvlab_cuda.so",
                                       "libkvlab_cuda.so"};
    assert_places(PATH_PLUGIN, BESIDE, N_OF(BESIDE), LAST, N_OF(LAST));
}
END_TEST

/* KVLAB_DATA, KVLAB_CUDA_PLUGIN, KVLAB_LESSONS and KVLAB_STORED, where set, are the only place looked
 * at, whether or not anything is there (the errors then name it). */
START_TEST(environment_overrides)
{
    static const struct {
        const char *var;
        PathKind kind;
    } VARS[] = {{"KVLAB_DATA", PATH_DATA}, {"KVLAB_CUDA_PLUGIN", PATH_PLUGIN},
                 {"KVLAB_LESSONS", PATH_LESSONS}, {"KVLAB_STORED", PATH_STORED}};
    Rng r = {test_seed()};
    for (size_t i = 0; i < N_OF(VARS); i++) {
        char place[64];
        snprintf(place, sizeof place, "/nonexistent-%llx/x", (unsigned long long)rng_next(&r));
        setenv(VARS[i].var, place, 1);
        PathList l;
        paths_candidates(VARS[i].kind, &l);
        ck_assert_uint_eq(l.n, 1);
        ck_assert_str_eq(l.path[0], place);
        ck_assert_str_eq(paths_find(VARS[i].kind), place);
        unsetenv(VARS[i].var);
    }
}
END_TEST

Suite *suite_paths(void)
{
    Suite *s = suite_create("paths");
    TCase *t = tcase_create("places");
    tcase_add_test(t, data_places);
    tcase_add_test(t, plugin_places);
    tcase_add_test(t, lesson_places);
    tcase_add_test(t, stored_places);
    tcase_add_test(t, environment_overrides);
    suite_add_tcase(s, t);
    return s;
}
