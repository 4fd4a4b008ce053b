/* test_build.c - the build, the install and the documentation, through the
 * scripts in tests/build/: the Makefile's promises (make -n and -p, which
 * change nothing), make install and uninstall into a scratch directory, an
 * installed tree moved elsewhere, the man page against --help, the bash
 * completion, and the source tree's layout. A script prints nothing when
 * its check holds and says what is wrong on stderr when not. */
#include "testutil.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* This runner's path: BUILD/tests/run_tests. */
static const char *runner(void)
{
    static char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ck_assert(n > 0);
    self[n] = '\0';
    return self;
}

/* Runs `tests/build/SCRIPT CASE`; the test fails unless it exits 0. */
static void check(const char *script, const char *what)
{
    setenv("KVLAB_RUNNER", runner(), 1);     // for the checks that run a suite
    char cmd[256];
    snprintf(cmd, sizeof cmd, "tests/build/%s %s", script, what);
    int status = system(cmd);
    ck_assert_msg(status == 0, "%s failed (status %d; what it said is on stderr)", cmd, status);
}

/* Wherever nvcc is found, make, make run and make test build the CUDA plugin. */
START_TEST(plugin_with_every_target)
{
    check("makefile.sh", "plugin_targets");
}
END_TEST

/* With an nvcc that takes some of the plugin's GPU architectures, the
 * plugin is built for those; with one that takes none or cannot build it,
 * make (run, test) goes on without it, saying why in one line, and make
 * plugin fails, saying why (a stand-in nvcc plays each). */
START_TEST(plugin_where_nvcc_can)
{
    check("makefile.sh", "plugin_optional");
}
END_TEST

/* The plugin is rebuilt after a change to a header its C or CUDA code
 * includes (calc/minifloat.h, kernels/kv_attn.h, kernels/kv_cuda.h). */
START_TEST(plugin_tracks_headers)
{
    check("makefile.sh", "plugin_headers");
}
END_TEST

/* Every object of the build, C or CUDA, has a dependency file that make
 * reads: a change to the headers rebuilds each one. */
START_TEST(objects_track_headers)
{
    check("makefile.sh", "objects_track_headers");
}
END_TEST

/* CFLAGS, CPPFLAGS, LDFLAGS, LDLIBS and PREFIX given to make join the
 * build's own flags, never replace them, and rebuild what they change:
 * PREFIX calc/paths.c alone, without making a directory anew. */
START_TEST(flags_join_and_rebuild)
{
    check("makefile.sh", "flags");
}
END_TEST

/* make clean removes the build whatever BUILD is, build-asan and the copies
 * at the top of the tree, and refuses a BUILD that holds the tree. */
START_TEST(clean_removes_every_build)
{
    check("makefile.sh", "clean");
}
END_TEST

/* Every target that names no file is .PHONY and listed by make help. */
START_TEST(phony_targets)
{
    check("makefile.sh", "phony");
}
END_TEST

/* make test-gpu fails with one line saying why where no GPU can be used;
 * the runner of make test skips the GPU suite there, saying so once. */
START_TEST(test_gpu_needs_a_gpu)
{
    check("makefile.sh", "test_gpu");
}
END_TEST

/* The tests run the kvlab and the plugin of the build they belong to
 * (beside BUILD/tests/run_tests), never a copy elsewhere. */
START_TEST(tests_use_their_build)
{
    char self[PATH_MAX], build[PATH_MAX], bin[PATH_MAX], plugin_dir[PATH_MAX];
    snprintf(self, sizeof self, "%s", runner());
    ck_assert(realpath(dirname(dirname(self)), build) != NULL);
    ck_assert_msg(realpath(test_bin(), bin) != NULL, "%s", test_bin());
    ck_assert_str_eq(bin, strcat(strcpy(self, build), "/kvlab"));
    const char *plugin = getenv("KVLAB_CUDA_PLUGIN");
    ck_assert(plugin != NULL);
    snprintf(self, sizeof self, "%s", plugin);
    ck_assert_str_eq(basename(self), "libkvlab_cuda.so");
    snprintf(self, sizeof self, "%s", plugin);
    ck_assert_msg(realpath(dirname(self), plugin_dir) != NULL, "%s", plugin);
    ck_assert_str_eq(plugin_dir, build);
}
END_TEST

/* make install puts kvlab, the plugin where built, the data, the man page
 * and the completion under DESTDIR/PREFIX and nothing else; make uninstall
 * removes exactly those and kvlab's own directories, never a shared one
 * that was there before (bin, share/man/man1). */
START_TEST(install_and_uninstall)
{
    check("install.sh", "install");
}
END_TEST

/* An installed tree moved elsewhere finds its data and its plugin from /,
 * and its completion lists the data it finds. */
START_TEST(installed_tree_moves)
{
    check("install.sh", "moved");
}
END_TEST

/* A kvlab run from the build tree uses the tree's data and plugin, also
 * where an installed tree lies above the tree. */
START_TEST(build_tree_uses_its_own)
{
    check("install.sh", "tree");
}
END_TEST

/* kvlab --help and the man page list the same commands, and each
 * command's options in the man page are what make man writes from its
 * --help: names, value names and defaults, kept in one place. */
START_TEST(man_page_matches_help)
{
    check("manpage.sh", "options");
}
END_TEST

/* The man page renders without a warning (groff -ww). */
START_TEST(man_page_renders)
{
    check("manpage.sh", "render");
}
END_TEST

/* Every environment variable the program reads is documented in the man
 * page, and every one documented is read. */
START_TEST(man_page_environment)
{
    check("manpage.sh", "environment");
}
END_TEST

/* Bash completes kvlab's commands, each command's options, and the model,
 * GPU, scenario and format names, taken from kvlab at completion time. */
START_TEST(bash_completion)
{
    check("completion.sh", "");
}
END_TEST

/* Each room of the source includes only what its layer may use: calc/
 * nothing outside it, kernels/ calc/, tui/'s shared root calc/, the lab
 * (tui/lab/) nothing of the command line (tui/cli/). */
START_TEST(rooms_include_their_layers)
{
    check("layout.sh", "rooms");
}
END_TEST

/* Every static function of tui/ is named after its file
 * (screen_calc_layout in screen_calc.c), so a stack trace names it. */
START_TEST(statics_named_after_their_file)
{
    check("layout.sh", "statics");
}
END_TEST

/* ck_ is the Check library's prefix alone: kvlab's own code names nothing
 * ck_ or Ck. */
START_TEST(ck_is_check_alone)
{
    check("layout.sh", "ck");
}
END_TEST

Suite *suite_build(void)
{
    Suite *s = suite_create("build");
    TCase *t = tcase_create("make");
    tcase_set_timeout(t, 180);
    const char *nvcc = getenv("KVLAB_NVCC");
    if (nvcc && *nvcc) {
        tcase_add_test(t, plugin_with_every_target);
        tcase_add_test(t, plugin_tracks_headers);
    } else if (test_suite_selected("build")) {
        printf("build: the CUDA plugin's checks skipped: the Makefile found no nvcc\n");
    }
    tcase_add_test(t, plugin_where_nvcc_can);
    tcase_add_test(t, objects_track_headers);
    tcase_add_test(t, flags_join_and_rebuild);
    tcase_add_test(t, clean_removes_every_build);
    tcase_add_test(t, phony_targets);
    tcase_add_test(t, test_gpu_needs_a_gpu);
    tcase_add_test(t, tests_use_their_build);
    tcase_add_test(t, install_and_uninstall);
    tcase_add_test(t, installed_tree_moves);
    tcase_add_test(t, build_tree_uses_its_own);
    tcase_add_test(t, man_page_matches_help);
    tcase_add_test(t, man_page_renders);
    tcase_add_test(t, man_page_environment);
    tcase_add_test(t, bash_completion);
    tcase_add_test(t, rooms_include_their_layers);
    tcase_add_test(t, statics_named_after_their_file);
    tcase_add_test(t, ck_is_check_alone);
    suite_add_tcase(s, t);
    return s;
}
