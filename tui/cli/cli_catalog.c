/* cli_catalog.c - `kvlab models` and `kvlab gpus`: the names that --model
 * and --gpu take, each with what it is, read from the data directory (so
 * that a list never drifts from the files; shell completion uses it). */
#include "cli.h"
#include "commands.h"

#include "catalog.h"
#include "gpu.h"
#include "model.h"
#include "paths.h"

#include <stdio.h>
#include <string.h>

enum { O_JSON, O_HELP, O_COUNT };

static const OptSpec OPTS[O_COUNT] = {
    [O_JSON] = {"json", NULL, "print one JSON object"},
    [O_HELP] = {"help", NULL, "show this help"},
};

/* What one data file says it is. */
typedef struct {
    char display[96];
    char source[512];
} Entry;

static int cli_catalog_entry(Entry *out, const char *display, const char *source)
{
    snprintf(out->display, sizeof out->display, "%s", display);
    snprintf(out->source, sizeof out->source, "%s", source);
    return 0;
}

static int cli_catalog_read_model(const char *path, Entry *out, Error *e)
{
    static Model m;
    return model_load(&m, path, e) ? -1 : cli_catalog_entry(out, m.display, m.source);
}

static int cli_catalog_read_gpu(const char *path, Entry *out, Error *e)
{
    static Gpu g;
    return gpu_load(&g, path, e) ? -1 : cli_catalog_entry(out, g.display, g.source);
}

/* One row per listing command. */
typedef struct {
    CmdSpec cmd;
    CatalogKind kind;
    const char *column;         // the table's heading for what it is
    int (*read)(const char *path, Entry *out, Error *e);
} Listing;

static const Listing MODELS = {
    .cmd = {.name = "models",
            .usage = "usage: kvlab models [--json]\n\n"
                     "The models --model takes (kvlab calc, kvlab bench), from the data directory.",
            .opts = OPTS, .n_opts = O_COUNT, .help_opt = O_HELP, .repeat_opt = -1},
    .kind = CATALOG_MODELS,
    .column = "model",
    .read = cli_catalog_read_model,
};

static const Listing GPUS = {
    .cmd = {.name = "gpus",
            .usage = "usage: kvlab gpus [--json]\n\n"
                     "The GPUs --gpu takes (kvlab calc), from the data directory.",
            .opts = OPTS, .n_opts = O_COUNT, .help_opt = O_HELP, .repeat_opt = -1},
    .kind = CATALOG_GPUS,
    .column = "GPU",
    .read = cli_catalog_read_gpu,
};

/* A file that does not load is reported and skipped; the others still
 * list, and the exit status says one was bad. */
static int cli_catalog_list(const Listing *l, int argc, char **argv)
{
    const char *cmd = l->cmd.name;
    Given g;
    int rc = cli_begin(&l->cmd, argc, argv, &g);
    if (rc != CLI_GO_ON)
        return rc;
    CatalogList names;
    Error e;
    if (catalog_list(paths_datadir(), l->kind, &names, &e))
        return cli_error(cmd, &e);
    cJSON *root = g.set[O_JSON] ? cJSON_CreateObject() : NULL;
    cJSON *arr = root ? cJSON_AddArrayToObject(root, cmd) : NULL;
    Table t;
    table_header(&t, "name", l->column, NULL);
    int bad = EXIT_OK;              // the worst code of a file that did not load
    for (size_t i = 0; i < names.count; i++) {
        char path[1024];
        Entry en;
        if (catalog_path(paths_datadir(), l->kind, names.names[i], path, sizeof path, &e) ||
            l->read(path, &en, &e)) {
            int code = cli_error(cmd, &e);
            bad = code > bad ? code : bad;
            continue;
        }
        if (root) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", names.names[i]);
            cJSON_AddStringToObject(o, "display", en.display);
            cJSON_AddStringToObject(o, "source", en.source);
            cJSON_AddItemToArray(arr, o);
        } else {
            table_row(&t);
            table_cell(&t, "%s", names.names[i]);
            table_cell(&t, "%s", en.display);
        }
    }
    rc = root ? json_emit(root, &e) : table_check(&t, &e) ? -1 : (table_print(&t, stdout), 0);
    table_free(&t);
    return rc ? cli_error(cmd, &e) : bad;
}

int cmd_models(int argc, char **argv)
{
    return cli_catalog_list(&MODELS, argc, argv);
}

int cmd_gpus(int argc, char **argv)
{
    return cli_catalog_list(&GPUS, argc, argv);
}
