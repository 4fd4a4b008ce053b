/* cli_glossary.c - `kvlab glossary [TERM]`: the terms the lab and the
 * lessons use, each with its definition (figures worked out by calc), the
 * terms to see as well and the lesson that teaches it. */
#include "cli.h"
#include "commands.h"
#include "lessontext.h"

#include "paths.h"

#include <string.h>

enum { O_FILE, O_JSON, O_HELP, O_COUNT };

static const OptSpec OPTS[O_COUNT] = {
    [O_FILE] = {"file", "FILE", "read this glossary, not the lessons directory's"},
    [O_JSON] = {"json", NULL, "print one JSON object"},
    [O_HELP] = {"help", NULL, "show this help"},
};

static const CmdSpec CMD = {
    .name = "glossary",
    .usage = "usage: kvlab glossary [TERM] [--json] [--file FILE]\n\n"
             "Every term the lab's screens and the lessons use. Without TERM, the list of\n"
             "terms; with it (or one of its aliases, in any case), its definition. An\n"
             "unknown term exits 2 and names the nearest ones.",
    .opts = OPTS,
    .n_opts = O_COUNT,
    .help_opt = O_HELP,
    .repeat_opt = -1,
    .max_words = 1,
};

#define NEAREST 3

/* The definition as text, its figures evaluated. */
static int cli_glossary_definition(const Glossary *g, const GlossaryEntry *t, char *buf, size_t n, Error *e)
{
    LessonRefs refs = {.term_known = glossary_knows, .term_ctx = g};
    Lesson l;
    if (lesson_parse_text(&l, t->term, t->definition, strlen(t->definition), &refs, e))
        return -1;
    if (lesson_eval(&l, e)) {
        lesson_free(&l);
        return -1;
    }
    /* Paragraphs one after another, a blank line between them. */
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < l.n_blocks && len < n; i++) {
        char para[GLOSSARY_DEFINITION_MAX * 2];
        lessontext_runs(&l, l.blocks[i].run0, l.blocks[i].n_runs, para, sizeof para);
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "\n\n" : "", para);
    }
    lesson_free(&l);
    return 0;
}

static void cli_glossary_list(const Glossary *g, cJSON *arr)
{
    size_t cols[3] = {4, 6, 4};
    for (size_t pass = 0; pass < 2; pass++) {
        if (pass && !arr) {
            text_list_row(stdout, (const char *const[]){"term", "lesson", "also"}, cols, 3, text_width());
            text_list_rule(stdout, cols[0] + cols[1] + cols[2] + 4, text_width());
        }
        for (size_t i = 0; i < g->n; i++) {
            const GlossaryEntry *x = &g->entries[i];
            char also[512] = "";
            size_t len = 0;
            for (size_t k = 0; k < x->n_aliases && len < sizeof also; k++)
                len += (size_t)snprintf(also + len, sizeof also - len, "%s%s", k ? ", " : "", x->aliases[k]);
            if (arr && pass) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "term", x->term);
                cJSON *al = cJSON_AddArrayToObject(o, "aliases");
                for (size_t k = 0; k < x->n_aliases; k++)
                    cJSON_AddItemToArray(al, cJSON_CreateString(x->aliases[k]));
                if (*x->lesson)
                    cJSON_AddStringToObject(o, "lesson", x->lesson);
                cJSON_AddItemToArray(arr, o);
                continue;
            }
            const char *const cells[3] = {x->term, *x->lesson ? x->lesson : "-", len ? also : "-"};
            /* The first pass measures the columns, the second prints. */
            for (size_t k = 0; !pass && k < 3; k++)
                cols[k] = text_escaped_size(cells[k]) - 1 > cols[k] ? text_escaped_size(cells[k]) - 1 : cols[k];
            if (pass && !arr)
                text_list_row(stdout, cells, cols, 3, text_width());
        }
    }
}

static int cli_glossary_entry(const Glossary *g, const GlossaryEntry *x, bool json, Error *e)
{
    char def[GLOSSARY_DEFINITION_MAX * 4];
    if (cli_glossary_definition(g, x, def, sizeof def, e))
        return -1;
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "term", x->term);
        cJSON *al = cJSON_AddArrayToObject(o, "aliases");
        for (size_t k = 0; k < x->n_aliases; k++)
            cJSON_AddItemToArray(al, cJSON_CreateString(x->aliases[k]));
        cJSON_AddStringToObject(o, "definition", def);
        cJSON *see = cJSON_AddArrayToObject(o, "see");
        for (size_t k = 0; k < x->n_see; k++)
            cJSON_AddItemToArray(see, cJSON_CreateString(x->see[k]));
        if (*x->lesson)
            cJSON_AddStringToObject(o, "lesson", x->lesson);
        return json_emit(o, e);
    }
    int width = text_width();
    text_put(stdout, x->term, false);
    for (size_t k = 0; k < x->n_aliases; k++) {
        fputs(k ? ", " : " (also ", stdout);
        text_put(stdout, x->aliases[k], false);
    }
    fputs(x->n_aliases ? ")\n\n" : "\n\n", stdout);
    text_wrap(stdout, "", "", def, width);
    if (x->n_see) {
        char see[512] = "";
        size_t len = 0;
        for (size_t k = 0; k < x->n_see && len < sizeof see; k++)
            len += (size_t)snprintf(see + len, sizeof see - len, "%s%s", k ? ", " : "", x->see[k]);
        fputc('\n', stdout);
        text_wrap(stdout, "See also: ", "          ", see, width);
    }
    if (*x->lesson) {
        fputs("Lesson: ", stdout);
        text_put(stdout, x->lesson, false);
        fputs(" (kvlab lesson show ", stdout);
        text_put(stdout, x->lesson, false);
        fputs(")\n", stdout);
    }
    return 0;
}

int cmd_glossary(int argc, char **argv)
{
    Given g;
    int rc = cli_begin(&CMD, argc, argv, &g);
    if (rc != CLI_GO_ON)
        return rc;
    Error e;
    Glossary gl;
    char path[PATHS_LEN + 32];
    if (glossary_load(&gl, g.set[O_FILE] ? g.val[O_FILE] : lessontext_glossary_path(path, sizeof path), &e))
        return cli_error("glossary", &e);
    if (!g.n_words) {
        cJSON *root = g.set[O_JSON] ? cJSON_CreateObject() : NULL;
        cli_glossary_list(&gl, root ? cJSON_AddArrayToObject(root, "terms") : NULL);
        glossary_free(&gl);
        return root && json_emit(root, &e) ? cli_error("glossary", &e) : EXIT_OK;
    }
    const GlossaryEntry *x = glossary_find(&gl, g.words[0]);
    if (!x) {
        const GlossaryEntry *near[NEAREST];
        size_t n = glossary_nearest(&gl, g.words[0], near, NEAREST);
        size_t len = (size_t)snprintf(e.msg, sizeof e.msg, *g.words[0] ? "unknown term '%s'" : "an empty term%s",
                                      g.words[0]);
        for (size_t i = 0; i < n && len < sizeof e.msg; i++)
            len += (size_t)snprintf(e.msg + len, sizeof e.msg - len, "%s%s", i ? ", " : "; nearest: ",
                                    near[i]->term);
        if (len < sizeof e.msg)
            snprintf(e.msg + len, sizeof e.msg - len, "%s(kvlab glossary lists them all)",
                     n ? " " : "; no term is near it ");
        e.runtime = false;
        glossary_free(&gl);
        return cli_error("glossary", &e);
    }
    rc = cli_glossary_entry(&gl, x, g.set[O_JSON], &e);
    glossary_free(&gl);
    return rc ? cli_error("glossary", &e) : EXIT_OK;
}
