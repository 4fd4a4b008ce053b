/* cli_lesson.c - `kvlab lesson list|show ID|check FILE`.
 *
 * The lessons are the files NN-slug.md of the lessons directory, in the
 * order of their numbers; each is parsed, checked and evaluated
 * (calc/lesson.h) before anything is printed, so that a lesson with a
 * broken figure prints an error, never a page with a hole in it. */
#include "cli.h"
#include "commands.h"
#include "lessontext.h"

#include "paths.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

enum { O_FILE, O_JSON, O_HELP, O_COUNT };

static const OptSpec OPTS[O_COUNT] = {
    [O_FILE] = {"file", "FILE", "read this lesson file, not the lessons directory's"},
    [O_JSON] = {"json", NULL, "print one JSON object"},
    [O_HELP] = {"help", NULL, "show this help"},
};

static const CmdSpec CMD = {
    .name = "lesson",
    .usage = "usage: kvlab lesson list [--json] [--file FILE]\n"
             "       kvlab lesson show ID|N [--json] [--file FILE]\n"
             "       kvlab lesson check FILE [--json]\n\n"
             "The lessons: list them, read one (by its id or its number N in the list)\n"
             "with its figures worked out by calc and its widgets as their commands\n"
             "print them, or check a lesson file (its references, its figures, and\n"
             "that no number calc computes is typed).\n"
             "show prints within the terminal's width (on a terminal), else $COLUMNS,\n"
             "else 80 columns: tables wider than that have their cells wrapped, and\n"
             "go in parts when they must, each repeating the first column.\n"
             "check exits 1 when a typed number is one calc computes.",
    .opts = OPTS,
    .n_opts = O_COUNT,
    .help_opt = O_HELP,
    .repeat_opt = -1,
    .max_words = 2,
};

#define TYPED_MAX 32

/* Loads, checks and evaluates one lesson. */
static int cli_lesson_load(const char *path, const LessonContext *c, Lesson *l, Error *e)
{
    if (lesson_load(l, path, &c->refs, e))
        return -1;
    if (lesson_eval(l, e)) {
        lesson_free(l);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * list
 */
static int cli_lesson_list(const char *file, bool json)
{
    LessonFiles files;
    LessonContext c;
    Error e;
    if (lessontext_context(&c, &e))
        return cli_error("lesson", &e);
    if (lessontext_files(file, &files, &e)) {
        lessontext_context_done(&c);
        return cli_error("lesson", &e);
    }
    cJSON *root = json ? cJSON_CreateObject() : NULL;
    cJSON *arr = json ? cJSON_AddArrayToObject(root, "lessons") : NULL;
    /* The rows, to print once the columns' widths are known. */
    static char rows[LESSONS_MAX][3][256];
    size_t n_rows = 0, cols[3] = {1, 2, 5};
    int bad = EXIT_OK;
    for (size_t i = 0; i < files.n; i++) {
        Lesson l;
        if (cli_lesson_load(files.path[i], &c, &l, &e)) {
            int code = cli_error("lesson list", &e);        // reported, and the others still listed
            bad = code > bad ? code : bad;
            continue;
        }
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "n", (double)(i + 1));
            cJSON_AddStringToObject(o, "id", l.id);
            cJSON_AddStringToObject(o, "title", l.title);
            cJSON_AddStringToObject(o, "question", l.question);
            cJSON_AddItemToArray(arr, o);
        } else {
            snprintf(rows[n_rows][0], sizeof rows[0][0], "%zu", i + 1);
            snprintf(rows[n_rows][1], sizeof rows[0][1], "%s", l.id);
            snprintf(rows[n_rows][2], sizeof rows[0][2], "%s", l.title);
            for (size_t k = 0; k < 3; k++) {
                size_t w = text_escaped_size(rows[n_rows][k]) - 1;
                cols[k] = w > cols[k] ? w : cols[k];
            }
            n_rows++;
        }
        lesson_free(&l);
    }
    lessontext_context_done(&c);
    if (json)
        return json_emit(root, &e) ? cli_error("lesson list", &e) : bad;
    int width = text_width();
    text_list_row(stdout, (const char *const[]){"n", "id", "title"}, cols, 3, width);
    text_list_rule(stdout, cols[0] + cols[1] + cols[2] + 4, width);
    for (size_t i = 0; i < n_rows; i++)
        text_list_row(stdout, (const char *const[]){rows[i][0], rows[i][1], rows[i][2]}, cols, 3, width);
    return bad;
}

/* ------------------------------------------------------------------------
 * show and check
 */
static const char *const RUN_KINDS[] = {
    [RUN_TEXT] = "text", [RUN_CODE] = "code", [RUN_FIGURE] = "figure",
    [RUN_CITE] = "cite", [RUN_TERM] = "term", [RUN_BREAK] = "break",
};
static const char *const BLOCK_KINDS[] = {
    [BLOCK_HEADING] = "heading", [BLOCK_PARAGRAPH] = "paragraph", [BLOCK_ITEM] = "item",
    [BLOCK_CODE] = "code",       [BLOCK_TABLE_ROW] = "table_row", [BLOCK_RULE] = "rule",
    [BLOCK_WIDGET] = "widget",   [BLOCK_PREDICT] = "predict",
};

static cJSON *cli_lesson_runs_json(const Lesson *l, size_t run0, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = run0; i < run0 + n; i++) {
        const LessonRun *r = &l->runs[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kind", RUN_KINDS[r->kind]);
        cJSON_AddStringToObject(o, "text", r->kind == RUN_FIGURE ? l->figures[r->figure].text : r->text);
        if (r->kind == RUN_FIGURE) {
            cJSON_AddStringToObject(o, "query", r->text);
            cJSON_AddNumberToObject(o, "value", l->figures[r->figure].value);
        }
        if (r->target)
            cJSON_AddStringToObject(o, r->kind == RUN_CITE ? "source" : "term", r->target);
        if (r->title && *r->title)
            cJSON_AddStringToObject(o, "title", r->title);
        if (r->style & RUN_EMPH)
            cJSON_AddBoolToObject(o, "emphasis", true);
        if (r->style & RUN_STRONG)
            cJSON_AddBoolToObject(o, "strong", true);
        if (r->cell)
            cJSON_AddNumberToObject(o, "cell", r->cell);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *cli_lesson_json(const Lesson *l)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "id", l->id);
    cJSON_AddStringToObject(root, "title", l->title);
    cJSON_AddStringToObject(root, "question", l->question);
    if (*l->scenario)
        cJSON_AddStringToObject(root, "scenario", l->scenario);
    cJSON *ex = cJSON_AddArrayToObject(root, "exercises");
    for (size_t i = 0; i < l->n_exercises; i++)
        cJSON_AddItemToArray(ex, cJSON_CreateString(l->exercises[i]));
    cJSON *src = cJSON_AddArrayToObject(root, "sources");
    for (size_t i = 0; i < l->n_sources; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", l->sources[i].id);
        cJSON_AddStringToObject(o, "description", l->sources[i].description);
        cJSON_AddItemToArray(src, o);
    }
    cJSON *blocks = cJSON_AddArrayToObject(root, "blocks");
    for (size_t i = 0; i < l->n_blocks; i++) {
        const LessonBlock *b = &l->blocks[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kind", BLOCK_KINDS[b->kind]);
        cJSON_AddNumberToObject(o, "line", b->pos.line);
        if (b->kind == BLOCK_HEADING)
            cJSON_AddNumberToObject(o, "level", b->level);
        if (b->depth)
            cJSON_AddNumberToObject(o, "depth", b->depth);
        if (b->quote)
            cJSON_AddNumberToObject(o, "quote", b->quote);
        if (b->kind == BLOCK_ITEM && b->ordered)
            cJSON_AddNumberToObject(o, "number", b->number);
        if (b->kind == BLOCK_TABLE_ROW && b->header)
            cJSON_AddBoolToObject(o, "header", true);
        if (b->kind == BLOCK_CODE)
            cJSON_AddStringToObject(o, "info", b->info);
        if (b->kind == BLOCK_WIDGET)
            cJSON_AddStringToObject(o, "widget", b->widget);
        if (b->text)
            cJSON_AddStringToObject(o, "text", b->text);
        if (b->kind == BLOCK_PREDICT) {
            const LessonPredict *p = &l->predicts[b->predict];
            const LessonFigure *f = &l->figures[p->answer];
            cJSON_AddStringToObject(o, "question", p->question);
            cJSON *ch = cJSON_AddArrayToObject(o, "choices");
            for (size_t k = 0; k < p->n_choices; k++)
                cJSON_AddItemToArray(ch, cJSON_CreateString(p->choices[k]));
            if (p->correct >= 0)
                cJSON_AddStringToObject(o, "correct", (char[]){(char)('a' + p->correct), '\0'});
            cJSON_AddStringToObject(o, "answer_query", f->query);
            cJSON_AddStringToObject(o, "answer", f->text);
            cJSON_AddNumberToObject(o, "answer_value", f->value);
            cJSON_AddItemToObject(o, "explain", cli_lesson_runs_json(l, p->run0, p->n_runs));
        } else if (b->n_runs) {
            cJSON_AddItemToObject(o, "runs", cli_lesson_runs_json(l, b->run0, b->n_runs));
        }
        cJSON_AddItemToArray(blocks, o);
    }
    return root;
}

/* The lesson whose id is `id`, or whose number in kvlab lesson list is
 * `id` (all digits), from the files. */
static int cli_lesson_find(const char *id, const char *file, const LessonContext *c, Lesson *l, Error *e)
{
    LessonFiles files;
    if (lessontext_files(file, &files, e))
        return -1;
    if (*id && strspn(id, "0123456789") == strlen(id)) {
        unsigned long n = strtoul(id, NULL, 10);
        if (n < 1 || n > files.n || strlen(id) > 4)
            return error_set(e, "no lesson number %s; the lessons are numbered 1 to %zu (kvlab lesson list)", id,
                             files.n);
        return cli_lesson_load(files.path[n - 1], c, l, e);
    }
    char known[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < files.n; i++) {
        if (cli_lesson_load(files.path[i], c, l, e))
            return -1;
        if (strcmp(l->id, id) == 0)
            return 0;
        if (len < sizeof known)
            len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", len ? ", " : "", l->id);
        lesson_free(l);
    }
    return error_set(e, "unknown lesson '%s'; the lessons are: %s (kvlab lesson list)", id,
                     *known ? known : "none");
}

static int cli_lesson_show(const char *id, const char *file, bool json)
{
    LessonContext c;
    Lesson l;
    Error e;
    if (lessontext_context(&c, &e))
        return cli_error("lesson show", &e);
    int rc = cli_lesson_find(id, file, &c, &l, &e);
    lessontext_context_done(&c);
    if (rc)
        return cli_error("lesson show", &e);
    if (json)
        rc = json_emit(cli_lesson_json(&l), &e);
    else
        rc = lessontext_print(&l, stdout, text_width(), &e);
    lesson_free(&l);
    return rc ? cli_error("lesson show", &e) : EXIT_OK;
}

static int cli_lesson_check(const char *path, bool json)
{
    LessonContext c;
    Lesson l;
    Error e;
    if (lessontext_context(&c, &e))
        return cli_error("lesson check", &e);
    int rc = cli_lesson_load(path, &c, &l, &e);
    lessontext_context_done(&c);
    if (rc)
        return cli_error("lesson check", &e);
    TypedNumber typed[TYPED_MAX];
    int n = lesson_typed_numbers(&l, typed, TYPED_MAX, &e);
    if (n < 0) {
        lesson_free(&l);
        return cli_error("lesson check", &e);
    }
    size_t shown = (size_t)n < TYPED_MAX ? (size_t)n : TYPED_MAX;
    if (json) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "lesson", l.id);
        cJSON_AddNumberToObject(root, "figures", (double)l.n_figures);
        cJSON *arr = cJSON_AddArrayToObject(root, "typed_numbers");
        for (size_t i = 0; i < shown; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "number", typed[i].number);
            cJSON_AddNumberToObject(o, "line", typed[i].pos.line);
            cJSON_AddNumberToObject(o, "column", typed[i].pos.col);
            cJSON_AddStringToObject(o, "figure", typed[i].figure);
            cJSON_AddItemToArray(arr, o);
        }
        cJSON_AddBoolToObject(root, "ok", n == 0);
        rc = json_emit(root, &e);
    } else {
        for (size_t i = 0; i < shown; i++) {
            text_put(stdout, l.path, false);
            printf(":%d:%d: typed number %s is a figure calc computes (", typed[i].pos.line, typed[i].pos.col,
                   typed[i].number);
            text_put(stdout, typed[i].figure, false);
            printf("): write it as `=%s`\n", typed[i].figure);
        }
        text_put(stdout, l.id, false);
        printf(": %zu %s, %zu %s, %d typed %s calc computes\n", l.n_blocks, l.n_blocks == 1 ? "block" : "blocks",
               l.n_figures, l.n_figures == 1 ? "figure" : "figures", n,
               n == 1 ? "number" : "numbers");
    }
    lesson_free(&l);
    if (rc)
        return cli_error("lesson check", &e);
    return n ? EXIT_NO : EXIT_OK;
}

int cmd_lesson(int argc, char **argv)
{
    Given g;
    int rc = cli_begin(&CMD, argc, argv, &g);
    if (rc != CLI_GO_ON)
        return rc;
    Error e;
    const char *verb = g.words[0] ? g.words[0] : "";
    const char *file = g.set[O_FILE] ? g.val[O_FILE] : NULL;
    if (strcmp(verb, "list") == 0 && g.n_words == 1)
        return cli_lesson_list(file, g.set[O_JSON]);
    if (strcmp(verb, "show") == 0 && g.n_words == 2)
        return cli_lesson_show(g.words[1], file, g.set[O_JSON]);
    if (strcmp(verb, "check") == 0 && g.n_words == 2 && !file)
        return cli_lesson_check(g.words[1], g.set[O_JSON]);
    if (strcmp(verb, "check") == 0 && file)
        error_set(&e, "check takes the FILE as its word, not --file");
    else if (strcmp(verb, "list") == 0)
        error_set(&e, "list takes no argument (got '%s')", g.words[1]);
    else if (strcmp(verb, "show") == 0)
        error_set(&e, "show needs a lesson ID (kvlab lesson list)");
    else if (strcmp(verb, "check") == 0)
        error_set(&e, "check needs a lesson FILE");
    else if (!*verb)
        error_set(&e, "expected list, show ID or check FILE");
    else
        error_set(&e, "unknown action '%s'; expected list, show ID or check FILE", verb);
    return cli_error("lesson", &e);
}
