/* cli_formats.c - `kvlab formats`: the storage format table. */
#include "cli.h"
#include "commands.h"

#include "format.h"
#include "model.h"
#include "units.h"

#include <string.h>

#define HEAD_DIM_DEFAULT 128     // the shipped models' head dimension

enum { O_HEAD_DIM, O_JSON, O_CSV, O_HELP, O_COUNT };

static const OptSpec OPTS[O_COUNT] = {
    [O_HEAD_DIM] = {"head-dim", "D", "head dimension for bytes per element" CLI_DEFAULT(HEAD_DIM_DEFAULT)},
    [O_JSON] = {"json", NULL, "print one JSON object"},
    [O_CSV] = {"csv", NULL, "print the table as CSV"},
    [O_HELP] = {"help", NULL, "show this help"},
};

static const CmdSpec CMD = {
    .name = "formats",
    .usage = "usage: kvlab formats [--head-dim D] [--json | --csv]\n\n"
             "The KV-cache storage formats and their exact byte accounting.",
    .opts = OPTS,
    .n_opts = O_COUNT,
    .help_opt = O_HELP,
    .repeat_opt = -1,
    .max_words = 0,
};

int cmd_formats(int argc, char **argv)
{
    Given g;
    int rc = cli_begin(&CMD, argc, argv, &g);
    if (rc != CLI_GO_ON)
        return rc;
    Error e;
    uint64_t d = HEAD_DIM_DEFAULT;
    if (cli_count(&g, OPTS, O_HEAD_DIM, 1, MODEL_HEAD_DIM_MAX, &d, &e))
        return cli_error("formats", &e);
    const bool *set = g.set;
    if (set[O_JSON]) {
        cJSON *root = cJSON_CreateObject();
        json_add_u128(root, "head_dim", d);
        cJSON *arr = cJSON_AddArrayToObject(root, "formats");
        for (size_t i = 0; i < format_count(); i++) {
            const Format *f = format_at(i);
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "format", f->id);
            cJSON_AddStringToObject(o, "name", f->name);
            json_add_u128(o, "payload_bits", f->payload_bits);
            json_add_u128(o, "group", f->group);
            json_add_u128(o, "group_meta_bytes", f->group_meta_bytes);
            json_add_u128(o, "vector_meta_bytes", f->vector_meta_bytes);
            json_add_u128(o, "tensor_scale_bytes_per_tensor", f->tensor_scale_bytes);
            json_add_u128(o, "vector_bytes", format_vector_bytes(f, (unsigned)d));
            json_add_q(o, "bytes_per_element", format_bytes_per_element(f, (unsigned)d));
            json_add_q(o, "compression", q_make(format_vector_bytes(format_bf16(), (unsigned)d),
                                                format_vector_bytes(f, (unsigned)d)));
            cJSON_AddStringToObject(o, "metadata", f->metadata);
            cJSON_AddStringToObject(o, "note", f->note);
            cJSON_AddItemToArray(arr, o);
        }
        return json_emit(root, &e) ? cli_error("formats", &e) : EXIT_OK;
    }
    Table t;
    table_header(&t, "format", "name", "bits", "B/elem", "vs BF16", "metadata", "per-tensor scale",
                 NULL);
    for (size_t i = 0; i < format_count(); i++) {
        const Format *f = format_at(i);
        char a1[48], a2[48];
        table_row(&t);
        table_cell(&t, "%s", f->id);
        table_cell(&t, "%s", f->name);
        table_cell(&t, "%u", f->payload_bits);
        table_cell(&t, "%s", q_str(a1, sizeof a1, format_bytes_per_element(f, (unsigned)d), 6, true));
        table_cell(&t, "%sx", q_str(a2, sizeof a2, q_make(format_vector_bytes(format_bf16(), (unsigned)d),
                                                          format_vector_bytes(f, (unsigned)d)), 2, false));
        table_cell(&t, "%s", f->metadata);
        table_cell(&t, "%s", f->tensor_scale_bytes ? "FP32 per layer, K and V" : "-");
    }
    if (set[O_CSV]) {
        table_csv(&t, stdout);
        table_free(&t);
        return EXIT_OK;
    }
    printf("bytes per element at head dimension %llu, metadata included\n\n", (unsigned long long)d);
    table_print(&t, stdout);
    table_free(&t);
    printf("\n");
    for (size_t i = 0; i < format_count(); i++)
        printf("%-9s %s\n", format_at(i)->id, format_at(i)->note);
    return EXIT_OK;
}
