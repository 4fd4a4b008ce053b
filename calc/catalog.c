/* catalog.c - see catalog.h. */
#include "catalog.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const SUBDIR[] = {"models", "gpus", ""};
static const char *const WHAT[] = {"model", "GPU", "scenario"};

static void kind_dir(const char *datadir, CatalogKind kind, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s", datadir, SUBDIR[kind][0] ? "/" : "", SUBDIR[kind]);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(a, b);
}

int catalog_list(const char *datadir, CatalogKind kind, CatalogList *out, Error *e)
{
    char dir[1024];
    kind_dir(datadir, kind, dir, sizeof dir);
    out->count = 0;
    DIR *dp = opendir(dir);
    if (!dp)
        return error_set(e, "%s: cannot read the %s directory (set KVLAB_DATA to the "
                            "scenarios directory)", dir, WHAT[kind]);
    struct dirent *de;
    int rc = 0;
    while (!rc && (de = readdir(dp))) {
        size_t l = strlen(de->d_name);
        if (l <= 5 || strcmp(de->d_name + l - 5, ".json") != 0 || de->d_name[0] == '.')
            continue;
        /* a file left out of a list would be a model, GPU or scenario that
         * silently is not there: refused instead */
        if (l - 5 >= CATALOG_NAME_MAX)
            rc = error_set(e, "%s/%s: a %s name of %zu bytes; kvlab takes names of up to %d", dir, de->d_name,
                           WHAT[kind], l - 5, CATALOG_NAME_MAX - 1);
        else if (out->count == CATALOG_MAX)
            rc = error_set(e, "%s: more than %d %s files; kvlab lists at most %d", dir, CATALOG_MAX, WHAT[kind],
                           CATALOG_MAX);
        else {
            memcpy(out->names[out->count], de->d_name, l - 5);
            out->names[out->count][l - 5] = '\0';
            out->count++;
        }
    }
    closedir(dp);
    if (rc)
        return rc;
    qsort(out->names, out->count, sizeof out->names[0], cmp_names);
    return 0;
}

int catalog_path(const char *datadir, CatalogKind kind, const char *name, char *out, size_t n,
                 Error *e)
{
    size_t l = strlen(name);
    if (strchr(name, '/') || (l > 5 && strcmp(name + l - 5, ".json") == 0)) {
        snprintf(out, n, "%s", name);
        return 0;
    }
    CatalogList list;
    if (catalog_list(datadir, kind, &list, e))
        return -1;
    for (size_t i = 0; i < list.count; i++)
        if (strcmp(list.names[i], name) == 0) {
            char dir[1024];
            kind_dir(datadir, kind, dir, sizeof dir);
            snprintf(out, n, "%s/%s.json", dir, name);
            return 0;
        }
    char known[1024] = "";
    for (size_t i = 0; i < list.count; i++) {
        size_t k = strlen(known);
        snprintf(known + k, sizeof known - k, "%s%s", i ? ", " : "", list.names[i]);
    }
    return error_set(e, "unknown %s '%s'; known: %s", WHAT[kind], name, known);
}
