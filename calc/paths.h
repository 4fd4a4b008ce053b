/* paths.h - where kvlab finds its files at run time.
 *
 *   installed:   PREFIX/bin/kvlab
 *                PREFIX/share/kvlab/scenarios        (KVLAB_DATADIR under PREFIX)
 *                PREFIX/lib/kvlab/libkvlab_cuda.so   (KVLAB_PLUGINDIR under PREFIX)
 *                PREFIX/share/kvlab/lessons          (KVLAB_LESSONDIR under PREFIX)
 *                PREFIX/share/kvlab/stored           (KVLAB_STOREDDIR under PREFIX)
 *   build tree:  ./kvlab or BUILD/kvlab, the scenarios, lessons and stored
 *                results beside it (BUILD/scenarios, BUILD/lessons link to the
 *                tree's, BUILD/stored to assets/stored), the plugin
 *                beside it
 *
 * Each is looked for beside the running program first, so that a build
 * tree or an installed tree works from any directory and wherever it is
 * moved: a build tree's place first (a program in a build tree uses the
 * tree's data and plugin, even where an installed tree lies above it, as
 * after make install PREFIX=$HOME with the tree in ~/kvlab), then the
 * installed layout's; then under the PREFIX compiled in. An environment
 * variable (KVLAB_DATA, KVLAB_CUDA_PLUGIN, KVLAB_LESSONS, KVLAB_STORED), where set,
 * is the only place. */
#ifndef KVLAB_PATHS_H
#define KVLAB_PATHS_H

#include <stddef.h>

typedef enum {
    PATH_DATA,          // the scenarios directory
    PATH_PLUGIN,        // libkvlab_cuda.so
    PATH_LESSONS,       // the lessons directory (lessons, exercises, glossary)
    PATH_STORED,        // the stored results of GPU runs (calc/stored.h)
    PATH_KINDS
} PathKind;

/* The places looked at, at most: the environment's alone, or two beside
 * the program, the one under PREFIX and dlopen's search. */
#define PATHS_MAX 4
/* The longest place kept: a directory of up to PATH_MAX (4096) bytes, a
 * slash and the longest name beside it; a longer one could not be opened. */
#define PATHS_LEN (4096 + 64)

typedef struct {
    size_t n;
    char path[PATHS_MAX][PATHS_LEN];
} PathList;

/* The places to look for kind, in order. The plugin's last is its bare
 * file name, which dlopen looks for in the library path. */
void paths_candidates(PathKind kind, PathList *out);

/* The environment's place where set, else the first candidate that is
 * there (a directory for the data, a readable file for the plugin), else
 * NULL; the text lives until the next call. */
const char *paths_find(PathKind kind);

/* The place under the PREFIX compiled in (named in errors where nothing
 * was found). */
const char *paths_installed(PathKind kind);

/* Where scenarios/ lives, for the command line and the lab alike:
 * paths_find's place, else the one under PREFIX (named in the errors of
 * whatever looks there). */
const char *paths_datadir(void);
/* Where lessons/ lives, the same way. */
const char *paths_lessondir(void);
/* Where the stored GPU results live, the same way. */
const char *paths_storeddir(void);

#endif
