/* catalog.h - the named data files under a data directory:
 *
 *   DATADIR/models/NAME.json   model shapes
 *   DATADIR/gpus/NAME.json     GPUs
 *   DATADIR/NAME.json          walk-through scenarios
 *
 * A name containing '/' or ending in ".json" is taken as a path instead. */
#ifndef KVLAB_CATALOG_H
#define KVLAB_CATALOG_H

#include "error.h"

#include <stddef.h>

#define CATALOG_MAX 128
#define CATALOG_NAME_MAX 64

typedef enum { CATALOG_MODELS, CATALOG_GPUS, CATALOG_SCENARIOS } CatalogKind;

typedef struct {
    size_t count;
    char names[CATALOG_MAX][CATALOG_NAME_MAX];   // sorted
} CatalogList;

int catalog_list(const char *datadir, CatalogKind kind, CatalogList *out, Error *e);
/* The file for name; an unknown name is an error that lists the known ones. */
int catalog_path(const char *datadir, CatalogKind kind, const char *name, char *out, size_t n,
                 Error *e);

#endif
