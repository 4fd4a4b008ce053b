/* paths.c - see paths.h. */
#include "paths.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if !defined(KVLAB_PREFIX) || !defined(KVLAB_DATADIR) || !defined(KVLAB_PLUGINDIR) || !defined(KVLAB_LESSONDIR) || \
    !defined(KVLAB_STOREDDIR)
#error "the Makefile's PATHS_CPPFLAGS define KVLAB_PREFIX, KVLAB_DATADIR, KVLAB_PLUGINDIR, KVLAB_LESSONDIR and KVLAB_STOREDDIR"
#endif

#define PLUGIN_FILE "libkvlab_cuda.so"

/* For each kind, its places in order: the environment's, those beside the
 * program (relative to its directory: a build's, where BUILD/scenarios
 * links to the tree's, then the installed layout), the one under PREFIX,
 * and a bare name for dlopen's search. */
static const struct {
    const char *env;
    const char *beside[2];
    const char *installed;      // under PREFIX
    const char *search;         // NULL: none
    bool dir;                   // a directory, else a readable file
} WHERE[PATH_KINDS] = {
    [PATH_DATA] = {"KVLAB_DATA", {"scenarios", "../" KVLAB_DATADIR},
                   KVLAB_PREFIX "/" KVLAB_DATADIR, NULL, true},
    [PATH_PLUGIN] = {"KVLAB_CUDA_PLUGIN", {PLUGIN_FILE, "../" KVLAB_PLUGINDIR "/" PLUGIN_FILE},
                     KVLAB_PREFIX "/" KVLAB_PLUGINDIR "/" PLUGIN_FILE, PLUGIN_FILE, false},
    [PATH_LESSONS] = {"KVLAB_LESSONS", {"lessons", "../" KVLAB_LESSONDIR},
                      KVLAB_PREFIX "/" KVLAB_LESSONDIR, NULL, true},
    [PATH_STORED] = {"KVLAB_STORED", {"stored", "../" KVLAB_STOREDDIR},
                     KVLAB_PREFIX "/" KVLAB_STOREDDIR, NULL, true},
};

static const char *env_place(PathKind kind)
{
    const char *env = getenv(WHERE[kind].env);
    return env && *env ? env : NULL;
}

static void add(PathList *l, const char *a, const char *b)
{
    if (l->n < PATHS_MAX)
        snprintf(l->path[l->n++], PATHS_LEN, "%s%s%s", a, b ? "/" : "", b ? b : "");
}

void paths_candidates(PathKind kind, PathList *out)
{
    out->n = 0;
    if (env_place(kind)) {              // the user's word is final
        add(out, env_place(kind), NULL);
        return;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = '\0';
        for (size_t i = 0; i < sizeof WHERE[kind].beside / sizeof WHERE[kind].beside[0]; i++)
            add(out, exe, WHERE[kind].beside[i]);
    }
    add(out, WHERE[kind].installed, NULL);
    if (WHERE[kind].search)
        add(out, WHERE[kind].search, NULL);
}

const char *paths_installed(PathKind kind)
{
    return WHERE[kind].installed;
}

static bool there(PathKind kind, const char *p)
{
    struct stat st;
    if (!strchr(p, '/'))                // a name for dlopen to search: not here to see
        return false;
    return WHERE[kind].dir ? stat(p, &st) == 0 && S_ISDIR(st.st_mode) : access(p, R_OK) == 0;
}

const char *paths_find(PathKind kind)
{
    static PathList found[PATH_KINDS];  // one per kind: each call writes the same again
    PathList *l = &found[kind];
    paths_candidates(kind, l);
    if (env_place(kind))
        return l->path[0];
    for (size_t i = 0; i < l->n; i++) {
        char real[PATH_MAX];
        if (!there(kind, l->path[i]))
            continue;
        if (realpath(l->path[i], real) && strlen(real) < PATHS_LEN)
            strcpy(l->path[i], real);   // "/opt/kvlab/share/...", not ".../bin/../share/..."
        return l->path[i];
    }
    return NULL;
}

const char *paths_datadir(void)
{
    const char *dir = paths_find(PATH_DATA);
    return dir ? dir : paths_installed(PATH_DATA);     // not there: named in the errors
}

const char *paths_lessondir(void)
{
    const char *dir = paths_find(PATH_LESSONS);
    return dir ? dir : paths_installed(PATH_LESSONS);
}

const char *paths_storeddir(void)
{
    const char *dir = paths_find(PATH_STORED);
    return dir ? dir : paths_installed(PATH_STORED);
}
