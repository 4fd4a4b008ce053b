/* lessontext.c - see lessontext.h. */
#include "lessontext.h"

#include "lessonwidget.h"
#include "paths.h"
#include "tui/table.h"
#include "tui/text.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_BYTES 8192

/* ------------------------------------------------------------------------
 * References.
 */
const char *lessontext_glossary_path(char *buf, size_t n)
{
    snprintf(buf, n, "%s/glossary.json", paths_lessondir());
    return buf;
}

static bool lessontext_exercise_known(const char *id, const void *ctx)
{
    return exercise_find(ctx, id) != NULL;
}

/* The refs every lesson text is checked against: the glossary g, the
 * shipped lessons, the scenarios and the widgets (exercises: the caller's). */
static LessonRefs lessontext_refs(const Glossary *g)
{
    return (LessonRefs){
        .datadir = paths_datadir(),
        .term_known = glossary_knows,
        .term_ctx = g,
        .lesson_known = lesson_shipped,
        .widget_check = lessonwidget_check,
        .widget_names = lessonwidget_names(),
    };
}

int lessontext_context(LessonContext *c, Error *e)
{
    memset(c, 0, sizeof *c);
    char path[PATHS_LEN + 32];
    if (glossary_load(&c->glossary, lessontext_glossary_path(path, sizeof path), e))
        return -1;
    c->refs = lessontext_refs(&c->glossary);
    c->exercises.refs = &c->refs;
    if (exercise_load_dir(&c->exercises, exercise_dir(path, sizeof path), e)) {
        glossary_free(&c->glossary);
        return -1;
    }
    c->refs.exercise_known = lessontext_exercise_known;
    c->refs.exercise_ctx = &c->exercises;
    return 0;
}

int lessontext_exercises(ExerciseSet *set, const char *file, Error *e)
{
    Glossary g;
    char path[PATHS_LEN + 32];
    if (glossary_load(&g, lessontext_glossary_path(path, sizeof path), e))
        return -1;
    LessonRefs refs = lessontext_refs(&g);
    set->refs = &refs;
    int rc = exercise_load_dir(set, exercise_dir(path, sizeof path), e) ||
             (file && exercise_load_file(set, file, NULL, 0, e));
    set->refs = NULL;
    glossary_free(&g);
    return rc ? -1 : 0;
}

void lessontext_context_done(LessonContext *c)
{
    glossary_free(&c->glossary);
    exercise_set_free(&c->exercises);
}

/* ------------------------------------------------------------------------
 * The lesson files.
 */
static int lessontext_name_cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* The lesson files: NN-slug.md in the lessons directory, by name. */
int lessontext_files(const char *file, LessonFiles *out, Error *e)
{
    out->n = 0;
    if (file) {
        snprintf(out->path[out->n++], sizeof out->path[0], "%s", file);
        return 0;
    }
    const char *dir = paths_lessondir();
    DIR *d = opendir(dir);
    if (!d)
        return error_set(e, "%s: cannot read the lessons directory (set KVLAB_LESSONS to another)", dir);
    static char names[LESSONS_MAX][256];
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        const char *s = de->d_name;
        size_t len = strlen(s);
        if (len < 7 || !isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[1]) || s[2] != '-' ||
            strcmp(s + len - 3, ".md") != 0 || len >= sizeof names[0])
            continue;
        if (n == LESSONS_MAX) {
            closedir(d);
            return error_set(e, "%s: more than %d lessons", dir, LESSONS_MAX);
        }
        snprintf(names[n++], sizeof names[0], "%s", s);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], lessontext_name_cmp);
    for (size_t i = 0; i < n; i++) {
        if (strlen(dir) + strlen(names[i]) + 2 > sizeof out->path[0])
            return error_set(e, "%s/%s: the path is too long", dir, names[i]);
        snprintf(out->path[out->n++], sizeof out->path[0], "%.4159s/%.255s", dir, names[i]);
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Runs and wrapping.
 */
static size_t lessontext_put(char *buf, size_t size, size_t len, const char *s)
{
    if (len < size)
        len += (size_t)snprintf(buf + len, size - len, "%s", s);
    return len;
}

const char *lessontext_runs(const Lesson *l, size_t run0, size_t n, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = run0; i < run0 + n; i++) {
        const LessonRun *r = &l->runs[i];
        switch (r->kind) {
        case RUN_FIGURE:
            len = lessontext_put(buf, size, len, l->figures[r->figure].text);
            break;
        case RUN_CITE:
            len = lessontext_put(buf, size, len, r->text);
            len = lessontext_put(buf, size, len, " [");
            len = lessontext_put(buf, size, len, r->target);
            len = lessontext_put(buf, size, len, "]");
            break;
        case RUN_CODE:
            len = lessontext_put(buf, size, len, "`");
            len = lessontext_put(buf, size, len, r->text);
            len = lessontext_put(buf, size, len, "`");
            break;
        case RUN_BREAK:
            len = lessontext_put(buf, size, len, "\n");
            break;
        default:
            len = lessontext_put(buf, size, len, r->text);
        }
    }
    return buf;
}

/* Writes the first `cols` columns' bytes of s escaped. */
/* ------------------------------------------------------------------------
 * Blocks.
 */
static void lessontext_prefix(const LessonBlock *b, bool first, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int q = 0; q < b->quote; q++)
        len = lessontext_put(buf, n, len, "> ");
    for (int d = 1; d < b->depth; d++)
        len = lessontext_put(buf, n, len, "   ");
    if (b->depth > 0) {
        char mark[16];
        if (b->kind != BLOCK_ITEM || !first)
            snprintf(mark, sizeof mark, "%s", "   ");
        else if (b->ordered)
            snprintf(mark, sizeof mark, "%u. ", b->number);
        else
            snprintf(mark, sizeof mark, "%s", "-  ");
        lessontext_put(buf, n, len, mark);
    }
}

/* A run of table rows from block i on, as one aligned table laid out to
 * the width; returns the block after it. */
static size_t lessontext_table(const Lesson *l, size_t i, FILE *out, int width)
{
    Table t;
    int cols = 0;
    size_t j = i;
    for (; j < l->n_blocks && l->blocks[j].kind == BLOCK_TABLE_ROW; j++)
        cols = l->blocks[j].n_cells > cols ? l->blocks[j].n_cells : cols;
    table_init(&t, (size_t)(cols > TABLE_COLS ? TABLE_COLS : cols));
    for (size_t k = i; k < j; k++) {
        const LessonBlock *b = &l->blocks[k];
        table_row(&t);
        for (int c = 0; c < cols && c < TABLE_COLS; c++) {
            char cell[1024];
            size_t r0 = b->run0, n = 0;
            while (r0 < b->run0 + b->n_runs && l->runs[r0].cell < c)
                r0++;
            while (r0 + n < b->run0 + b->n_runs && l->runs[r0 + n].cell == c)
                n++;
            table_cell(&t, "%s", lessontext_runs(l, r0, n, cell, sizeof cell));
        }
    }
    table_print_width(&t, out, width);
    table_free(&t);
    return j;
}

static int lessontext_predict(const Lesson *l, const LessonPredict *p, FILE *out, int width)
{
    char buf[LINE_MAX_BYTES];
    text_wrap(out, "Predict: ", "         ", p->question, width);
    for (size_t i = 0; i < p->n_choices; i++) {
        char mark[16];
        snprintf(mark, sizeof mark, "  %c) ", (int)('a' + i));
        text_wrap(out, mark, "     ", p->choices[i], width);
    }
    const LessonFigure *f = &l->figures[p->answer];
    if (p->correct >= 0)
        snprintf(buf, sizeof buf, "%c) %s: %s (%s)", (int)('a' + p->correct), p->choices[p->correct], f->text,
                 f->query);
    else
        snprintf(buf, sizeof buf, "%s (%s)", f->text, f->query);
    text_wrap(out, "Answer: ", "        ", buf, width);
    if (p->n_runs)
        text_wrap(out, "        ", "        ", lessontext_runs(l, p->run0, p->n_runs, buf, sizeof buf),
                        width);
    return 0;
}

static int lessontext_widget(const LessonBlock *b, FILE *out, int width, Error *e)
{
    const LessonWidget *w = lessonwidget_by_name(b->widget);
    if (!w)
        return error_set(e, "unknown widget '%s'", b->widget);
    char cmd[1024], head[64];
    snprintf(head, sizeof head, "[%s widget] ", b->widget);
    text_wrap(out, head, "    ", lessonwidget_command(w, b->text, cmd, sizeof cmd), width);
    /* The command lays its tables out to the width; a line of its prose
     * still wider is wrapped, further in on the lines after. */
    FILE *text = tmpfile();
    if (!text)
        return error_runtime(e, "cannot set the widget's output aside");
    table_print_limit(width);
    int rc = lessonwidget_print(w, b->text, text, e);
    table_print_limit(0);
    rewind(text);
    char line[LINE_MAX_BYTES];
    while (!rc && fgets(line, sizeof line, text)) {
        line[strcspn(line, "\n")] = '\0';
        if (text_columns(line) <= (size_t)width)
            fprintf(out, "%s\n", line);
        else
            text_wrap(out, "", "    ", line, width);
    }
    fclose(text);
    return rc;
}

static void lessontext_heading(const LessonBlock *b, const char *text, FILE *out, int width)
{
    text_wrap(out, "", "", text, width);
    size_t n = text_columns(text);
    n = n > (size_t)width ? (size_t)width : n;
    for (size_t i = 0; i < n; i++)
        fputc(b->level == 1 ? '=' : '-', out);
    fputc('\n', out);
}

int lessontext_print(const Lesson *l, FILE *out, int width, Error *e)
{
    char buf[LINE_MAX_BYTES];
    lessontext_heading(&(LessonBlock){.level = 1}, l->title, out, width);
    text_wrap(out, "", "", l->question, width);
    for (size_t i = 0; i < l->n_blocks;) {
        const LessonBlock *b = &l->blocks[i];
        char first[64], rest[64];
        lessontext_prefix(b, true, first, sizeof first);
        lessontext_prefix(b, false, rest, sizeof rest);
        bool tight = b->kind == BLOCK_ITEM && i > 0 && l->blocks[i - 1].kind == BLOCK_ITEM;
        if (!tight)
            fputc('\n', out);
        switch (b->kind) {
        case BLOCK_HEADING:
            lessontext_heading(b, lessontext_runs(l, b->run0, b->n_runs, buf, sizeof buf), out, width);
            break;
        case BLOCK_TABLE_ROW:
            i = lessontext_table(l, i, out, width);
            continue;
        case BLOCK_RULE:
            text_wrap(out, rest, rest, "----", width);
            break;
        case BLOCK_CODE:
            for (const char *s = b->text; *s;) {
                size_t n = strcspn(s, "\n");
                /* A line too long for the width goes on, further in, on the next. */
                char code[LINE_MAX_BYTES];
                snprintf(code, sizeof code, "%.*s", (int)n, s);
                text_wrap(out, "    ", "        ", code, width);
                s += n + (s[n] == '\n');
            }
            break;
        case BLOCK_WIDGET:
            if (lessontext_widget(b, out, width, e))
                return lesson_error(l, b->pos, e, "widget %s: %s", b->widget, e->msg);
            break;
        case BLOCK_PREDICT:
            lessontext_predict(l, &l->predicts[b->predict], out, width);
            break;
        default:
            text_wrap(out, first, rest, lessontext_runs(l, b->run0, b->n_runs, buf, sizeof buf), width);
        }
        i++;
    }
    if (l->n_exercises) {
        size_t len = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < l->n_exercises; i++)
            len = lessontext_put(buf, sizeof buf, len, i ? ", " : ""), len = lessontext_put(buf, sizeof buf, len, l->exercises[i]);
        fputc('\n', out);
        text_wrap(out, "Exercises: ", "           ", buf, width);
        fputs("(kvlab exercise show ID; kvlab exercise check ID ANSWER)\n", out);
    }
    if (l->n_sources) {
        fputs("\nSources\n", out);
        for (size_t i = 0; i < l->n_sources; i++) {
            snprintf(buf, sizeof buf, "[%s] %s", l->sources[i].id, l->sources[i].description);
            text_wrap(out, "- ", "  ", buf, width);
        }
    }
    return 0;
}
