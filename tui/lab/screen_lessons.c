/* screen_lessons.c - the lessons: the first screen a learner sees. The
 * contents list every lesson with what has been done (read, exercises
 * done) and "start here" at the first unread one; the reader shows a
 * lesson as a document, its figures worked out by calc, its widgets as
 * their figures in place (Enter opens the widget's own screen with the
 * page's settings, Esc comes back), its predictions asked before their
 * answers are shown, its glossary links and its exercises, each of which
 * opens the exercise pane (screen_exercise.c).
 *
 * Lessons, glossary and exercises are read as `kvlab lesson` reads them
 * (teach.h), so a lesson that `kvlab lesson check` refuses is refused
 * here, with the same message. */
#include "screens.h"

#include "exercise_pane.h"
#include "paths.h"
#include "query.h"
#include "teach.h"
#include "tui/lessonwidget.h"
#include "tui/report.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>

#define ITEMS_MAX 256           // the things a page can focus: widgets, predictions, terms, exercises
#define PREDICTS_MAX 16
#define ANSWER_MAX 64
#define WIDGETS_MAX 16

typedef enum { ITEM_WIDGET, ITEM_PREDICT, ITEM_TERM, ITEM_EXERCISE } ItemKind;

typedef struct {
    ItemKind kind;
    size_t index;               // the block (widget), predict, run (term) or exercise of the lesson
    int line;                   // its first line in the document, as last laid out
} Item;

/* A widget's figures as computed when its lesson opened: calc and
 * scenario widgets, the formats table of `kvlab calc` with its options;
 * the others, their screen's own figures laid out small, from a state of
 * that screen set by the widget's options (owned) or, for what only a
 * measurement gives (the GPU lab), the lab's own state of it. */
typedef struct {
    size_t block;
    const ScreenDef *def;       // the screen whose state st is; NULL: none
    void *st;
    bool owned;                 // st is the widget's own (def->destroy frees it)
    bool has_table;
    char why[ERROR_MSG_MAX];    // why there is no table ("" none)
    QuerySetup setup;           // what rp points into
    Report rp;
    Results res;
} WidgetFigures;

typedef struct {
    char why[ERROR_MSG_MAX];    // the lessons could not be read ("" they could)
    size_t n;
    Lesson lesson[TEACH_LESSONS_MAX];
    char bad[TEACH_LESSONS_MAX][ERROR_MSG_MAX];       // a lesson file that did not load: why
    int open;                   // the lesson shown; -1: the contents
    size_t sel;                 // the contents' selected lesson
    int sel_line;               // its line, as last laid out
    /* The open lesson's page. */
    size_t n_items;
    Item items[ITEMS_MAX];
    int focus;                  // the focused item; -1 none
    bool revealed[PREDICTS_MAX];
    char guess[PREDICTS_MAX][ANSWER_MAX];
    size_t n_widgets;
    WidgetFigures widgets[WIDGETS_MAX];
    Table table;                // scratch for drawing a widget's table
    int predict_asked;          // the prediction the prompt answers
    ExercisePane pane;
} Lessons;

/* ------------------------------------------------------------------------
 * Loading
 */

static void *screen_lessons_create(Error *e)
{
    Lessons *s = lab_state_new(sizeof *s, e);
    if (!s)
        return NULL;
    s->open = -1;
    s->focus = -1;
    Error why;
    if (teach_load(&why)) {
        snprintf(s->why, sizeof s->why, "%s", why.msg);
        return s;
    }
    const TeachSources *t = teach_context();
    for (size_t i = 0; i < t->n_lessons; i++) {
        Lesson *l = &s->lesson[s->n];
        if (lesson_load(l, t->lessons[i], t->refs, &why) || lesson_eval(l, &why)) {
            if (l->arena)
                lesson_free(l);
            memset(l, 0, sizeof *l);
            snprintf(s->bad[s->n], sizeof s->bad[0], "%s", why.msg);
        }
        s->n++;
    }
    return s;
}

static void screen_lessons_free_widgets(Lessons *s)
{
    for (size_t i = 0; i < s->n_widgets; i++)
        if (s->widgets[i].owned)
            s->widgets[i].def->destroy(s->widgets[i].st);
    s->n_widgets = 0;
}

static void screen_lessons_destroy(void *st)
{
    Lessons *s = st;
    screen_lessons_free_widgets(s);
    for (size_t i = 0; i < s->n; i++)
        if (!s->bad[i][0])
            lesson_free(&s->lesson[i]);
    free(s);
}

static size_t screen_lessons_fields(void *st, Field *f)
{
    (void)st, (void)f;
    return 0;
}

static int screen_lessons_recompute(void *st, Error *e)
{
    (void)st, (void)e;
    return 0;
}

/* ------------------------------------------------------------------------
 * Progress
 */

static bool screen_lessons_read(const Lesson *l)
{
    const Progress *p = teach_progress();
    for (size_t i = 0; i < p->n_lessons; i++)
        if (strcmp(p->lessons[i].id, l->id) == 0)
            return p->lessons[i].read;
    return false;
}

static size_t screen_lessons_done(const Lesson *l)
{
    size_t done = 0;
    for (size_t i = 0; i < l->n_exercises; i++) {
        const ProgressItem *it = progress_find_exercise(teach_progress(), l->exercises[i]);
        done += it && it->done;
    }
    return done;
}

/* The first lesson not read yet; n when all are. */
static size_t screen_lessons_first_unread(const Lessons *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (!s->bad[i][0] && !screen_lessons_read(&s->lesson[i]))
            return i;
    return s->n;
}

/* ------------------------------------------------------------------------
 * Opening a lesson: its focusable items and its widgets' figures
 */

/* The lab screen a widget opens; "" for a name no widget has (a lesson
 * that names one is refused on load). */
static const char *screen_lessons_widget_screen(const char *name)
{
    const LessonWidget *w = lessonwidget_by_name(name);
    return w ? lessonwidget_screen(w) : "";
}

static void screen_lessons_widget_figures(const LessonBlock *b, WidgetFigures *w, Lab *lab)
{
    memset(w, 0, sizeof *w);
    const LessonWidget *lw = lessonwidget_by_name(b->widget);
    const char *screen = screen_lessons_widget_screen(b->widget);
    char copy[1024], *words[QUERY_WORDS_MAX];
    size_t n = 0;
    Error e;
    if (!lw)
        return;
    if (lessonwidget_place(lw) == PLACE_SESSION) {
        w->st = lab_screen_state(lab, screen, &w->def);
        return;
    }
    if (lessonwidget_place(lw) == PLACE_SCREEN) {
        if (!(w->st = lab_preview(screen, b->text, &w->def, &e)))
            snprintf(w->why, sizeof w->why, "%s", e.msg);
        w->owned = w->st != NULL;
        return;
    }
    if (!strcmp(screen, "scenarios"))
        words[n++] = "--scenario";
    snprintf(copy, sizeof copy, "%s", b->text);
    for (char *t = strtok(copy, " \t\r\n"); t && n < QUERY_WORDS_MAX; t = strtok(NULL, " \t\r\n")) {
        if (!strcmp(t, "--contexts")) {         // a series: the screen's plot shows it
            strtok(NULL, " \t\r\n");
            continue;
        }
        if (strncmp(t, "--contexts=", strlen("--contexts=")) != 0)
            words[n++] = t;
    }
    QueryOptions o;
    if (query_options_parse((const char *const *)words, n, &o, &e) || query_setup(&o, &w->setup, &e)) {
        snprintf(w->why, sizeof w->why, "%s", e.msg);
        return;
    }
    w->rp.model = w->setup.model[0] ? w->setup.model : NULL;
    w->rp.scenario = w->setup.scenario[0] ? w->setup.scenario : NULL;
    w->rp.gpu = w->setup.has_gpu ? &w->setup.gpu : NULL;
    w->rp.q_heads_unknown = w->setup.q_heads_unknown;
    w->rp.w = w->setup.w;
    w->rp.n_formats = w->setup.n_formats;
    memcpy(w->rp.formats, w->setup.formats, sizeof w->rp.formats[0] * w->setup.n_formats);
    if (report_compute(&w->rp, &w->res, &e))
        snprintf(w->why, sizeof w->why, "%s", e.msg);
    else
        w->has_table = true;
}

static void screen_lessons_add(Lessons *s, ItemKind kind, size_t index)
{
    if (s->n_items < ITEMS_MAX)
        s->items[s->n_items++] = (Item){kind, index, 0};
}

static void screen_lessons_open(Lessons *s, size_t i, Lab *lab)
{
    const Lesson *l = &s->lesson[i];
    s->open = (int)i;
    s->sel = i;
    screen_lessons_free_widgets(s);
    s->n_items = 0;
    s->focus = -1;
    memset(s->revealed, 0, sizeof s->revealed);
    for (size_t b = 0; b < l->n_blocks; b++) {
        const LessonBlock *bl = &l->blocks[b];
        if (bl->kind == BLOCK_WIDGET) {
            screen_lessons_add(s, ITEM_WIDGET, b);
            if (s->n_widgets < WIDGETS_MAX) {
                screen_lessons_widget_figures(bl, &s->widgets[s->n_widgets], lab);
                s->widgets[s->n_widgets++].block = b;
            }
        } else if (bl->kind == BLOCK_PREDICT && bl->predict < PREDICTS_MAX) {
            screen_lessons_add(s, ITEM_PREDICT, (size_t)bl->predict);
        } else {
            for (size_t r = bl->run0; r < bl->run0 + bl->n_runs; r++)
                if (l->runs[r].kind == RUN_TERM)
                    screen_lessons_add(s, ITEM_TERM, r);
        }
    }
    for (size_t x = 0; x < l->n_exercises; x++)
        screen_lessons_add(s, ITEM_EXERCISE, x);
    const ProgressItem *it = progress_find_lesson(teach_progress(), l->id);
    Error e;
    if ((!it || !it->read) && teach_mark_read(l->id, &e))
        lab_status(lab, true, "progress not saved: %s", e.msg);
}

/* ------------------------------------------------------------------------
 * The contents
 */

static void screen_lessons_contents(Lessons *s, Doc *d)
{
    doc_title(d, "Lessons");
    if (s->why[0]) {
        doc_text(d, 0, crt_attr(ROLE_WARN), "The lessons cannot be read:");
        doc_text(d, 0, crt_attr(ROLE_WARN), s->why);
        doc_text(d, 0, crt_attr(ROLE_DIM), "The other screens (F3 to F6) work without them.");
        return;
    }
    size_t read = 0, done = 0, total = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!s->bad[i][0]) {
            read += screen_lessons_read(&s->lesson[i]);
            done += screen_lessons_done(&s->lesson[i]);
            total += s->lesson[i].n_exercises;
        }
    char line[1024];
    snprintf(line, sizeof line, "%zu of %zu lessons read, %zu of %zu exercises done. Up and Down "
             "choose, Enter opens.", read, s->n, done, total);
    doc_text(d, 0, crt_attr(ROLE_DIM), line);
    const size_t start = screen_lessons_first_unread(s);
    for (size_t i = 0; i < s->n; i++) {
        const bool on = i == s->sel;
        if (on)
            s->sel_line = d->line;
        if (s->bad[i][0]) {
            snprintf(line, sizeof line, "%2zu. cannot be read: %s", i + 1, s->bad[i]);
            doc_text(d, 0, crt_attr(on ? ROLE_FIELD_ON : ROLE_BAD), line);
            continue;
        }
        const Lesson *l = &s->lesson[i];
        snprintf(line, sizeof line, "%2zu. %s", i + 1, l->title);
        doc_text(d, 0, crt_attr(on ? ROLE_FIELD_ON : ROLE_NORMAL), line);
        snprintf(line, sizeof line, "%s, exercises %zu/%zu done%s", screen_lessons_read(l) ? "read" : "not read",
                 screen_lessons_done(l), l->n_exercises, i == start ? "  <- start here" : "");
        doc_text(d, 4, crt_attr(i == start ? ROLE_GOOD : ROLE_DIM), line);
    }
}

/* ------------------------------------------------------------------------
 * The reader
 */

/* The item of this kind and index, or -1. */
static int screen_lessons_item(const Lessons *s, ItemKind kind, size_t index)
{
    for (size_t i = 0; i < s->n_items; i++)
        if (s->items[i].kind == kind && s->items[i].index == index)
            return (int)i;
    return -1;
}

static bool screen_lessons_focused(const Lessons *s, ItemKind kind, size_t index)
{
    return s->focus >= 0 && s->items[s->focus].kind == kind && s->items[s->focus].index == index;
}

/* Notes the line where an item starts, for scrolling to it. */
static void screen_lessons_mark(Lessons *s, const Doc *d, ItemKind kind, size_t index)
{
    int i = screen_lessons_item(s, kind, index);
    if (i >= 0)
        s->items[i].line = d->line;
}

/* The runs of a block as one text: figures as calc works them out, the
 * focused glossary link between marks. */
static const char *screen_lessons_runs(Lessons *s, const Lesson *l, size_t run0, size_t n, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = run0; i < run0 + n && len < size; i++) {
        const LessonRun *r = &l->runs[i];
        const char *t = r->kind == RUN_FIGURE ? l->figures[r->figure].text : r->kind == RUN_BREAK ? "\n" : r->text;
        const bool on = r->kind == RUN_TERM && screen_lessons_focused(s, ITEM_TERM, i);
        const bool cite = r->kind == RUN_CITE;      // the source's id after it, as kvlab lesson shows it
        len += (size_t)snprintf(buf + len, size - len, "%s%s%s%s%s%s", on ? "[" : "", t, on ? "]" : "",
                                cite ? " [" : "", cite ? r->target : "", cite ? "]" : "");
    }
    return buf;
}

static void screen_lessons_widget(Lessons *s, const Lesson *l, size_t b, Doc *d)
{
    const LessonBlock *bl = &l->blocks[b];
    const bool on = screen_lessons_focused(s, ITEM_WIDGET, b);
    char cmd[1024], line[1200];
    screen_lessons_mark(s, d, ITEM_WIDGET, b);
    const LessonWidget *w = lessonwidget_by_name(bl->widget);
    snprintf(line, sizeof line, "%s %s", on ? ">" : " ", w ? lessonwidget_command(w, bl->text, cmd, sizeof cmd) : bl->widget);
    doc_text(d, 0, crt_attr(on ? ROLE_FIELD_ON : ROLE_TITLE), line);
    for (size_t i = 0; i < s->n_widgets; i++) {
        const WidgetFigures *f = &s->widgets[i];
        if (f->block != b)
            continue;
        if (f->st && f->def->inline_layout) {
            Doc in = doc_beside(d, 2, d->win.w - 2);
            f->def->inline_layout(f->st, &in);
            doc_below(d, &in, &in);
        } else if (f->has_table) {
            report_table(&f->rp, &f->res, &s->table);
            report_table_fit(&s->table, d->win.w - 2);
            Doc in = doc_beside(d, 2, d->win.w - 2);
            doc_table(&in, &s->table);
            doc_below(d, &in, &in);
        } else if (f->why[0]) {
            doc_text(d, 2, crt_attr(ROLE_WARN), f->why);
        }
    }
    snprintf(line, sizeof line, "%s opens the %s screen with these settings; Esc comes back",
             on ? "Enter" : "Tab to it, then Enter,", screen_lessons_widget_screen(bl->widget));
    doc_text(d, 2, crt_attr(ROLE_DIM), line);
}

static void screen_lessons_predict(Lessons *s, const Lesson *l, size_t p, Doc *d)
{
    const LessonPredict *pr = &l->predicts[p];
    const bool on = screen_lessons_focused(s, ITEM_PREDICT, p);
    char line[2048];
    screen_lessons_mark(s, d, ITEM_PREDICT, p);
    snprintf(line, sizeof line, "%s Predict: %s", on ? ">" : " ", pr->question);
    doc_text(d, 0, crt_attr(on ? ROLE_FIELD_ON : ROLE_TITLE), line);
    for (size_t i = 0; i < pr->n_choices; i++) {
        snprintf(line, sizeof line, "%c) %s", (int)('a' + i), pr->choices[i]);
        doc_text(d, 4, crt_attr(ROLE_NORMAL), line);
    }
    if (!s->revealed[p]) {
        doc_text(d, 2, crt_attr(ROLE_DIM), on ? "Enter: give your prediction; the answer shows after it"
                                              : "Tab to it, then Enter: predict before the answer shows");
        return;
    }
    snprintf(line, sizeof line, "You said: %s", s->guess[p]);
    doc_text(d, 2, crt_attr(ROLE_NORMAL), line);
    snprintf(line, sizeof line, "calc: %s", l->figures[pr->answer].text);
    doc_text(d, 2, crt_attr(ROLE_GOOD), line);
    if (pr->n_runs)
        doc_text(d, 2, crt_attr(ROLE_NORMAL), screen_lessons_runs(s, l, pr->run0, pr->n_runs, line, sizeof line));
}

/* A run of table rows from block i on, as one table; the block after it. */
static size_t screen_lessons_table(Lessons *s, const Lesson *l, size_t i, Doc *d)
{
    size_t j = i, cols = 0;
    for (; j < l->n_blocks && l->blocks[j].kind == BLOCK_TABLE_ROW; j++)
        cols = (size_t)l->blocks[j].n_cells > cols ? (size_t)l->blocks[j].n_cells : cols;
    table_init(&s->table, cols > TABLE_COLS ? TABLE_COLS : cols);
    for (size_t k = i; k < j; k++) {
        const LessonBlock *b = &l->blocks[k];
        table_row(&s->table);
        for (size_t c = 0; c < s->table.cols; c++) {
            size_t r0 = b->run0, n = 0;
            char cell[1024];
            while (r0 < b->run0 + b->n_runs && (size_t)l->runs[r0].cell < c)
                r0++;
            while (r0 + n < b->run0 + b->n_runs && (size_t)l->runs[r0 + n].cell == c)
                n++;
            table_cell(&s->table, "%s", screen_lessons_runs(s, l, r0, n, cell, sizeof cell));
        }
    }
    if (table_width(&s->table) <= d->win.w) {
        doc_table(d, &s->table);
        return j;
    }
    /* too wide for the window: a row a paragraph, each cell after its
     * column's name, wrapped rather than cut */
    for (size_t r = 1; r < s->table.rows; r++) {
        char row[4096];
        size_t len = (size_t)snprintf(row, sizeof row, "%s", table_at(&s->table, r, 0));
        for (size_t c = 1; c < s->table.cols && len < sizeof row; c++)
            len += (size_t)snprintf(row + len, sizeof row - len, "%s %s: %s", c == 1 ? ":" : ";",
                                    table_at(&s->table, 0, c), table_at(&s->table, r, c));
        doc_text(d, 2, crt_attr(ROLE_NORMAL), row);
    }
    return j;
}

static void screen_lessons_block(Lessons *s, const Lesson *l, size_t i, Doc *d)
{
    const LessonBlock *b = &l->blocks[i];
    char text[8192], mark[16] = "";
    const int indent = 2 * b->quote + (b->depth > 0 ? 3 * (b->depth - 1) : 0);
    for (size_t r = b->run0; r < b->run0 + b->n_runs; r++)
        if (l->runs[r].kind == RUN_TERM)
            screen_lessons_mark(s, d, ITEM_TERM, r);
    switch (b->kind) {
    case BLOCK_HEADING:
        doc_text(d, 0, crt_attr(ROLE_TITLE), screen_lessons_runs(s, l, b->run0, b->n_runs, text, sizeof text));
        break;
    case BLOCK_CODE:
        doc_text(d, indent + 4, crt_attr(ROLE_DIM), b->text);
        break;
    case BLOCK_RULE:
        doc_text(d, indent, crt_attr(ROLE_DIM), "----");
        break;
    case BLOCK_WIDGET:
        screen_lessons_widget(s, l, i, d);
        break;
    case BLOCK_PREDICT:
        screen_lessons_predict(s, l, (size_t)b->predict, d);
        break;
    case BLOCK_ITEM:
        if (b->ordered)
            snprintf(mark, sizeof mark, "%u. ", b->number);
        else
            snprintf(mark, sizeof mark, "- ");
        /* fall through */
    default: {
        char line[sizeof text + sizeof mark];
        snprintf(line, sizeof line, "%s%s", mark, screen_lessons_runs(s, l, b->run0, b->n_runs, text, sizeof text));
        doc_text(d, indent, crt_attr(ROLE_NORMAL), line);
    }
    }
}

static void screen_lessons_exercises(Lessons *s, const Lesson *l, Doc *d)
{
    if (!l->n_exercises)
        return;
    doc_gap(d, 1);
    doc_text(d, 0, crt_attr(ROLE_TITLE), "Exercises (Tab to one, then Enter)");
    for (size_t i = 0; i < l->n_exercises; i++) {
        const Exercise *x = exercise_find(teach_context()->exercises, l->exercises[i]);
        const ProgressItem *it = progress_find_exercise(teach_progress(), l->exercises[i]);
        const bool on = screen_lessons_focused(s, ITEM_EXERCISE, i);
        char q[EXERCISE_TEXT_MAX], line[EXERCISE_TEXT_MAX + 128];
        Error e;
        if (!x || exercise_text(x->question, q, sizeof q, &e))
            snprintf(q, sizeof q, "%s", x ? e.msg : "no such exercise");
        screen_lessons_mark(s, d, ITEM_EXERCISE, i);
        snprintf(line, sizeof line, "%s %s %s: %s", on ? ">" : " ", it && it->done ? "[done]" : "[    ]",
                 l->exercises[i], q);
        doc_text(d, 0, crt_attr(on ? ROLE_FIELD_ON : ROLE_NORMAL), line);
    }
}

static void screen_lessons_page(Lessons *s, Doc *d)
{
    const Lesson *l = &s->lesson[s->open];
    char line[1024];
    snprintf(line, sizeof line, "%d/%zu %s", s->open + 1, s->n, l->title);
    doc_title(d, line);
    doc_text(d, 0, crt_attr(ROLE_DIM), l->question);
    for (size_t i = 0; i < l->n_blocks;) {
        const LessonBlock *b = &l->blocks[i];
        const bool tight = b->kind == BLOCK_ITEM && i > 0 && l->blocks[i - 1].kind == BLOCK_ITEM;
        if (!tight)
            doc_gap(d, 1);
        if (b->kind == BLOCK_TABLE_ROW) {
            i = screen_lessons_table(s, l, i, d);
            continue;
        }
        screen_lessons_block(s, l, i, d);
        i++;
    }
    screen_lessons_exercises(s, l, d);
    if (l->n_sources) {
        doc_gap(d, 1);
        doc_text(d, 0, crt_attr(ROLE_TITLE), "Sources");
        for (size_t i = 0; i < l->n_sources; i++) {
            snprintf(line, sizeof line, "[%s] %s", l->sources[i].id, l->sources[i].description);
            doc_text(d, 2, crt_attr(ROLE_DIM), line);
        }
    }
    doc_gap(d, 1);
    snprintf(line, sizeof line, "%s%s%sEsc: the contents", s->open + 1 < (int)s->n ? "n: the next lesson; " : "",
             s->open > 0 ? "p: the previous one; " : "", "");
    doc_text(d, 0, crt_attr(ROLE_DIM), line);
}

static void screen_lessons_layout(void *st, Doc *d)
{
    Lessons *s = st;
    if (s->open < 0)
        screen_lessons_contents(s, d);
    else
        screen_lessons_page(s, d);
}

/* ------------------------------------------------------------------------
 * Keys
 */

/* The prompt's answer to a prediction: kept, and the answer revealed. */
static void screen_lessons_predicted(void *ctx, Lab *lab, const char *answer)
{
    Lessons *s = ctx;
    const int p = s->predict_asked;
    if (!answer[0]) {
        lab_status(lab, false, "nothing predicted: the answer stays hidden");
        return;
    }
    snprintf(s->guess[p], sizeof s->guess[p], "%s", answer);
    s->revealed[p] = true;
    lab_status(lab, false, "revealed: calc's answer is under your prediction");
}

static int screen_lessons_act(Lessons *s, Lab *lab)
{
    const Lesson *l = &s->lesson[s->open];
    if (s->focus < 0) {
        lab_status(lab, false, "Tab moves to the next widget, prediction, glossary term or exercise");
        return KEY_REDRAW;
    }
    const Item *it = &s->items[s->focus];
    Error e;
    switch (it->kind) {
    case ITEM_WIDGET: {
        const LessonBlock *b = &l->blocks[it->index];
        if (lab_open_screen(lab, screen_lessons_widget_screen(b->widget), b->text, &e))
            lab_status(lab, true, "cannot open the widget: %s", e.msg);
        return KEY_RECOMPUTE | KEY_REDRAW;
    }
    case ITEM_PREDICT:
        s->predict_asked = (int)it->index;
        lab_prompt(lab, l->predicts[it->index].n_choices ? "your prediction (a letter, or in words): "
                                                         : "your prediction (a number with its unit): ",
                   screen_lessons_predicted, s);
        return KEY_REDRAW;
    case ITEM_TERM:
        lab_glossary(lab, l->runs[it->index].target);
        return KEY_REDRAW;
    case ITEM_EXERCISE: {
        const Exercise *x = exercise_find(teach_context()->exercises, l->exercises[it->index]);
        if (!x)
            lab_status(lab, true, "no exercise '%s'", l->exercises[it->index]);
        else
            exercise_pane_open(&s->pane, x, lab);
        return KEY_REDRAW;
    }
    }
    return KEY_REDRAW;
}

/* The contents scrolled to show the selected lesson (its title and the
 * line under it), from their top where it fits. Scrolling lays the
 * contents out, which notes where the selected lesson is. */
static void screen_lessons_show_sel(const Lessons *s, Lab *lab)
{
    lab_scroll_to(lab, 0);
    lab_scroll_to(lab, s->sel_line + 1);
    lab_scroll_to(lab, s->sel_line);
}

/* What Enter does to the focused item, in the status line. */
static void screen_lessons_say_focus(const Lessons *s, Lab *lab)
{
    const Lesson *l = &s->lesson[s->open];
    const Item *it = &s->items[s->focus];
    switch (it->kind) {
    case ITEM_WIDGET: {
        lab_status(lab, false, "Enter opens the %s screen with the page's settings",
                   screen_lessons_widget_screen(l->blocks[it->index].widget));
        break;
    }
    case ITEM_PREDICT:
        lab_status(lab, false, "Enter: your prediction, then the answer");
        break;
    case ITEM_TERM:
        lab_status(lab, false, "Enter shows the glossary's entry for '%s'", l->runs[it->index].target);
        break;
    case ITEM_EXERCISE:
        lab_status(lab, false, "Enter opens the exercise %s", l->exercises[it->index]);
        break;
    }
}

static int screen_lessons_reader_key(Lessons *s, int ch, Lab *lab)
{
    if (ch == '\t' || ch == KEY_BTAB) {
        if (!s->n_items) {
            lab_status(lab, false, "this lesson has no widgets, predictions, terms or exercises to go to");
            return KEY_REDRAW;
        }
        const int n = (int)s->n_items;
        s->focus = ch == '\t' ? (s->focus + 1) % n : (s->focus <= 0 ? n - 1 : s->focus - 1);
        lab_scroll_to(lab, s->items[s->focus].line);
        screen_lessons_say_focus(s, lab);
        return KEY_REDRAW;
    }
    if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
        return screen_lessons_act(s, lab);
    if ((ch == 'n' && s->open + 1 < (int)s->n) || (ch == 'p' && s->open > 0)) {
        int to = s->open + (ch == 'n' ? 1 : -1);
        if (s->bad[to][0]) {
            lab_status(lab, true, "lesson %d cannot be read: %s", to + 1, s->bad[to]);
            return KEY_REDRAW;
        }
        screen_lessons_open(s, (size_t)to, lab);
        lab_scroll_to(lab, 0);
        return KEY_REDRAW;
    }
    if (ch == CRT_ESC || ch == KEY_BACKSPACE) {
        s->open = -1;
        screen_lessons_show_sel(s, lab);
        return KEY_REDRAW;
    }
    return KEY_IGNORED;
}

static int screen_lessons_key(void *st, int ch, Lab *lab)
{
    Lessons *s = st;
    if (s->open >= 0)
        return screen_lessons_reader_key(s, ch, lab);
    if (!s->n)
        return KEY_IGNORED;
    if (ch == KEY_UP || ch == 'k' || ch == KEY_DOWN || ch == 'j') {
        const bool up = ch == KEY_UP || ch == 'k';
        if (up && s->sel > 0)
            s->sel--;
        else if (!up && s->sel + 1 < s->n)
            s->sel++;
        screen_lessons_show_sel(s, lab);
        return KEY_REDRAW;
    }
    if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        if (s->bad[s->sel][0]) {
            lab_status(lab, true, "lesson %zu cannot be read: %s", s->sel + 1, s->bad[s->sel]);
            return KEY_REDRAW;
        }
        screen_lessons_open(s, s->sel, lab);
        lab_scroll_to(lab, 0);
        return KEY_REDRAW;
    }
    return KEY_IGNORED;
}

/* The lesson open, for a saved lab state; "" on the contents. */
static void screen_lessons_page_id(void *st, char *id, size_t n)
{
    const Lessons *s = st;
    snprintf(id, n, "%s", s->open >= 0 ? s->lesson[s->open].id : "");
}

/* Opens the lesson `id` (a saved lab state's), as Enter on the contents does. */
static int screen_lessons_open_page(void *st, const char *id, Lab *lab, Error *e)
{
    Lessons *s = st;
    char list[1024] = "";
    for (size_t i = 0, len = 0; i < s->n && len < sizeof list; i++, len = strlen(list)) {
        if (s->bad[i][0])
            continue;
        if (!strcmp(s->lesson[i].id, id)) {
            screen_lessons_open(s, i, lab);
            return 0;
        }
        snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", s->lesson[i].id);
    }
    if (s->why[0])
        return error_set(e, "no lesson '%s': %s", id, s->why);
    return error_set(e, "no lesson '%s'; the lessons: %s", id, list);
}

static const ScreenKey KEYS[] = {
    {"Up Down", "choose", "the contents: choose a lesson; a lesson: scroll it"},
    {"Enter", "open", "open the lesson; in a lesson, act on the focused item: open a widget's screen, "
                      "predict, show a glossary entry, do an exercise"},
    {"Tab", "next", "the next widget, prediction, glossary term or exercise of the page (Shift-Tab: "
                    "the previous)"},
    {"n p", "lesson", "the next or previous lesson"},
    {"Esc", "contents", "back to the contents (from a widget's screen: back to the page)"},
};

static const BarKey BAR[] = {
    {"F1", "Help"}, {"Enter", "Open"}, {"Tab", "Next"}, {"n p", "Lesson"},
    {"Esc", "Back"}, {"G", "Glossary"},   {"q", "Quit"},
};

const ScreenDef SCREEN_LESSONS = {
    .id = "lessons",
    .name = "Lessons",
    .help = "The lessons, in the order to read them: the contents say which you have read and how "
            "many of each lesson's exercises you have done, and where to start. A lesson's figures "
            "are worked out by calc as you read them; its widgets show their figures in place and "
            "open their own screen with the page's settings (Esc comes back); a prediction asks "
            "before it shows the answer; a glossary term shows its entry; an exercise opens the "
            "exercise pane, which checks your answer and names the likely mistake. Progress is kept "
            "in $XDG_DATA_HOME/kvlab/progress.json.",
    .create = screen_lessons_create,
    .destroy = screen_lessons_destroy,
    .fields = screen_lessons_fields,
    .recompute = screen_lessons_recompute,
    .layout = screen_lessons_layout,
    .key = screen_lessons_key,
    .keys = KEYS,
    .n_keys = sizeof KEYS / sizeof KEYS[0],
    .bar = BAR,
    .n_bar = sizeof BAR / sizeof BAR[0],
    .page = screen_lessons_page_id,
    .open_page = screen_lessons_open_page,
};
