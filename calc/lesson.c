/* lesson.c - see lesson.h.
 *
 * md4c calls back as it reads (enter/leave block, enter/leave span, text),
 * so the document is built in one pass with no tree to walk: a block is
 * opened when its first text arrives, runs are appended to it, and the
 * fenced blocks of kvlab's own (header, widget, predict) are read when
 * they close. md4c gives no positions, but the text it hands back points
 * into the buffer it was given wherever the text is verbatim, which is
 * where every checked thing lies (code spans, link targets, code-block
 * lines, info strings); other text keeps the last position seen. */
#include "lesson.h"

#include "catalog.h"
#include "paths.h"
#include "query.h"
#include "readfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <md4c.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * Texts: an arena of chunks that never move, so a pointer into it holds
 * until lesson_free.
 */
#define ARENA_CHUNK (64u * 1024u)

struct LessonArena {
    LessonArena *next;
    size_t used, size;
    char data[];
};

static char *lesson_arena_alloc(Lesson *l, size_t n)
{
    LessonArena *a = l->arena;
    if (!a || a->size - a->used < n) {
        size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        LessonArena *c = malloc(sizeof *c + size);
        if (!c)
            return NULL;
        c->next = a, c->used = 0, c->size = size;
        l->arena = a = c;
    }
    char *p = a->data + a->used;
    a->used += n;
    return p;
}

static const char *lesson_strndup(Lesson *l, const char *s, size_t n)
{
    char *p = lesson_arena_alloc(l, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

/* ------------------------------------------------------------------------
 * Growing arrays.
 */
static int lesson_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, c * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

/* A text being gathered from several callbacks, with where each piece came
 * from: seg[i] says that bytes from buf offset at[i] on came from source
 * offset src[i] (SIZE_MAX: not from the source). */
#define ACC_SEGS 64
typedef struct {
    char *buf;
    size_t len, cap;
    size_t n_seg;
    size_t at[ACC_SEGS], src[ACC_SEGS];
} Acc;

/* ------------------------------------------------------------------------
 * The parser's state.
 */
#define LIST_DEPTH_MAX 16

typedef struct {
    Lesson *l;
    const LessonRefs *refs;
    const char *src;            // the text being parsed (the lesson, or a fragment of it)
    size_t src_len;
    size_t src_base;            // where src begins in the lesson
    const char *lesson_text;    // the whole lesson, for positions
    size_t lesson_len;
    size_t last;                // the last lesson offset seen
    Error *e;
    int failed;
    size_t cap_blocks, cap_runs, cap_figures, cap_predicts;
    bool header_seen, fragment;
    int cur;                    // the block runs go to; -1 none
    int quote, depth;
    bool ordered[LIST_DEPTH_MAX];
    unsigned number[LIST_DEPTH_MAX];
    bool item_pending;          // an item opened and no block of it yet
    unsigned style;
    int cell;
    bool in_row_header;
    /* A code span, a link or a code block being gathered. */
    enum { GATHER_NONE, GATHER_CODE_SPAN, GATHER_LINK, GATHER_CODE_BLOCK } gather;
    Acc acc;
    RunKind link_kind;
    const char *link_target;
    size_t link_at;             // lesson offset of the link's target
    size_t block_at;            // lesson offset of the code block's fence
    char info[128];
    /* Predicts' explanations, parsed after the document. */
    size_t n_explains;
    struct {
        int predict;
        const char *text;       // a copy of the value (len bytes), which began at lesson offset at
        size_t at, len;
    } explains[64];
    bool in_summary;
    int summary_items;
    LessonPos summary_pos;
} P;

static LessonPos lesson_pos_of(const char *text, size_t len, size_t off)
{
    LessonPos p = {1, 1};
    for (size_t i = 0; i < off && i < len; i++)
        if (text[i] == '\n')
            p.line++, p.col = 1;
        else
            p.col++;
    return p;
}

/* The lesson offset of ptr when it points into the text parsed. */
static bool lesson_offset(const P *p, const char *ptr, size_t *off)
{
    if (ptr < p->src || ptr > p->src + p->src_len)
        return false;
    *off = p->src_base + (size_t)(ptr - p->src);
    if (*off > p->lesson_len)               // a fragment copied out of the lesson, past its end
        *off = p->lesson_len;
    return true;
}

static LessonPos lesson_pos_at(const P *p, size_t off)
{
    return lesson_pos_of(p->lesson_text, p->lesson_len, off);
}

int lesson_error(const Lesson *l, LessonPos pos, Error *e, const char *fmt, ...)
{
    char msg[ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return error_set(e, "%s:%d:%d: %s", l->path, pos.line, pos.col, msg);
}

__attribute__((format(printf, 3, 4)))
static int lesson_fail(P *p, size_t off, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    char msg[ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->failed = 1;
    return lesson_error(p->l, lesson_pos_at(p, off), p->e, "%s", msg);
}

/* A failure whose message is already in p->e (from calc), put at off. */
static int lesson_fail_e(P *p, size_t off)
{
    char msg[ERROR_MSG_MAX];
    memcpy(msg, p->e->msg, sizeof msg);
    return lesson_fail(p, off, "%s", msg);
}

static int lesson_oom(P *p)
{
    p->failed = 1;
    return error_runtime(p->e, "%s: out of memory", p->l->path);
}

/* ------------------------------------------------------------------------
 * Gathering text.
 */
static void acc_reset(Acc *a)
{
    a->len = 0;
    a->n_seg = 0;
}

static int acc_add(P *p, Acc *a, const char *text, size_t n)
{
    size_t off;
    bool from_src = lesson_offset(p, text, &off);
    if (from_src)
        p->last = off;
    if (a->n_seg < ACC_SEGS) {
        a->at[a->n_seg] = a->len;
        a->src[a->n_seg++] = from_src ? off : SIZE_MAX;
    }
    if (a->len + n + 1 > a->cap) {
        size_t c = (a->len + n + 1) * 2;
        char *b = realloc(a->buf, c);
        if (!b)
            return lesson_oom(p);
        a->buf = b, a->cap = c;
    }
    memcpy(a->buf + a->len, text, n);
    a->len += n;
    a->buf[a->len] = '\0';
    return 0;
}

/* The lesson offset of byte k of the gathered text: its piece's start plus
 * k's place in it, or the last offset seen where the piece was not in the
 * source. */
static size_t acc_offset(const P *p, const Acc *a, size_t k)
{
    size_t off = p->last;
    for (size_t i = 0; i < a->n_seg && a->at[i] <= k; i++)
        off = a->src[i] == SIZE_MAX ? off : a->src[i] + (k - a->at[i]);
    return off < p->lesson_len ? off : p->lesson_len;
}

/* ------------------------------------------------------------------------
 * Blocks and runs.
 */
static int lesson_block_open(P *p, BlockKind kind, size_t off)
{
    Lesson *l = p->l;
    if (lesson_grow((void **)&l->blocks, &p->cap_blocks, l->n_blocks, sizeof *l->blocks))
        return lesson_oom(p);
    LessonBlock *b = &l->blocks[l->n_blocks];
    *b = (LessonBlock){.kind = kind, .depth = p->depth, .quote = p->quote, .run0 = l->n_runs,
                       .info = "", .predict = -1, .pos = lesson_pos_at(p, off)};
    if (kind == BLOCK_ITEM && p->depth > 0) {
        b->ordered = p->ordered[p->depth - 1];
        b->number = p->number[p->depth - 1]++;
    }
    p->item_pending = false;
    p->cur = (int)l->n_blocks++;
    return 0;
}

/* The block text goes to: the open one, or the item waiting for its first
 * text (a tight list's items have no paragraph). */
static int lesson_block_for_text(P *p, size_t off)
{
    if (p->cur >= 0)
        return 0;
    return lesson_block_open(p, p->item_pending ? BLOCK_ITEM : BLOCK_PARAGRAPH, off);
}

static LessonRun *lesson_run_add(P *p, RunKind kind, const char *text, size_t n, size_t off)
{
    Lesson *l = p->l;
    if (lesson_grow((void **)&l->runs, &p->cap_runs, l->n_runs, sizeof *l->runs)) {
        lesson_oom(p);
        return NULL;
    }
    const char *t = lesson_strndup(l, text, n);
    if (!t) {
        lesson_oom(p);
        return NULL;
    }
    LessonRun *r = &l->runs[l->n_runs++];
    *r = (LessonRun){.kind = kind, .style = p->style, .cell = p->cell, .text = t, .figure = -1,
                     .pos = lesson_pos_at(p, off), .offset = off};
    if (p->cur >= 0 && !l->blocks[p->cur].n_runs++)
        l->blocks[p->cur].pos = r->pos;     // md4c gives a block no place: its first text's
    return r;
}

/* Prose: joined to the run before when that is prose of the same style. */
static int lesson_text(P *p, const char *text, size_t n, size_t off)
{
    if (lesson_block_for_text(p, off))
        return -1;
    Lesson *l = p->l;
    LessonBlock *b = &l->blocks[p->cur];
    LessonRun *last = b->n_runs ? &l->runs[l->n_runs - 1] : NULL;
    if (last && last->kind == RUN_TEXT && last->style == p->style && last->cell == p->cell) {
        size_t old = strlen(last->text);
        char *t = lesson_arena_alloc(l, old + n + 1);
        if (!t)
            return lesson_oom(p);
        memcpy(t, last->text, old);
        memcpy(t + old, text, n);
        t[old + n] = '\0';
        last->text = t;
        return 0;
    }
    return lesson_run_add(p, RUN_TEXT, text, n, off) ? 0 : -1;
}

/* ------------------------------------------------------------------------
 * Figures: a query, checked when read, evaluated by lesson_eval.
 */
static int lesson_figure_add(P *p, const char *query, size_t n, size_t off)
{
    Lesson *l = p->l;
    while (n && (*query == ' ' || *query == '\t'))
        query++, n--, off++;
    const char *q = lesson_strndup(l, query, n);
    if (!q)
        return lesson_oom(p);
    Query parsed;
    if (query_parse(q, &parsed, p->e))
        return lesson_fail_e(p, off);
    if (lesson_grow((void **)&l->figures, &p->cap_figures, l->n_figures, sizeof *l->figures))
        return lesson_oom(p);
    l->figures[l->n_figures] = (LessonFigure){.query = q, .pos = lesson_pos_at(p, off)};
    return (int)l->n_figures++;
}

int lesson_eval(Lesson *l, Error *e)
{
    for (size_t i = 0; i < l->n_figures; i++) {
        LessonFigure *f = &l->figures[i];
        Query q;
        QueryValue v;
        if (query_parse(f->query, &q, e) || query_eval(&q, &v, e))
            return lesson_error(l, f->pos, e, "=%s: %s", f->query, e->msg);
        f->value = v.value;
        snprintf(f->text, sizeof f->text, "%s", v.text);
        f->evaluated = true;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Spans.
 */
static const struct {
    const char *prefix;
    RunKind kind;
} LINKS[] = {
    {"src:", RUN_CITE},
    {"term:", RUN_TERM},
};

static int lesson_link_enter(P *p, const MD_SPAN_A_DETAIL *d)
{
    size_t off = p->last;
    lesson_offset(p, d->href.text, &off);
    for (size_t i = 0; i < sizeof LINKS / sizeof LINKS[0]; i++) {
        size_t n = strlen(LINKS[i].prefix);
        if (d->href.size > n && strncmp(d->href.text, LINKS[i].prefix, n) == 0) {
            p->link_kind = LINKS[i].kind;
            p->link_target = lesson_strndup(p->l, d->href.text + n, d->href.size - n);
            const char *title = lesson_strndup(p->l, d->title.text ? d->title.text : "", d->title.size);
            if (!p->link_target || !title)
                return lesson_oom(p);
            p->link_at = off + n;
            p->gather = GATHER_LINK;
            acc_reset(&p->acc);
            /* The title rides in info until the run is made. */
            snprintf(p->info, sizeof p->info, "%s", title);
            return 0;
        }
    }
    return lesson_fail(p, off, "a link in a lesson is a citation (src:ID) or a glossary term (term:TERM), "
                               "not '%.*s'", (int)(d->href.size > 60 ? 60 : d->href.size), d->href.text);
}

static int lesson_link_leave(P *p)
{
    Lesson *l = p->l;
    const char *target = p->link_target;
    p->gather = GATHER_NONE;
    if (p->link_kind == RUN_CITE && !lesson_source(l, target))
        return lesson_fail(p, p->link_at, "unknown source '%s': the header's source lines name the sources",
                           target);
    if (p->link_kind == RUN_TERM && p->refs && p->refs->term_known &&
        !p->refs->term_known(target, p->refs->term_ctx))
        return lesson_fail(p, p->link_at, "unknown term '%s': not in the glossary", target);
    if (!p->acc.len)
        return lesson_fail(p, p->link_at, "a link with no text");
    if (lesson_block_for_text(p, acc_offset(p, &p->acc, 0)))
        return -1;
    LessonRun *r = lesson_run_add(p, p->link_kind, p->acc.buf, p->acc.len, acc_offset(p, &p->acc, 0));
    if (!r)
        return -1;
    r->target = target;
    r->title = lesson_strndup(l, p->info, strlen(p->info));
    return r->title ? 0 : lesson_oom(p);
}

static int lesson_code_span_leave(P *p)
{
    p->gather = GATHER_NONE;
    size_t off = acc_offset(p, &p->acc, 0);
    if (lesson_block_for_text(p, off))
        return -1;
    if (p->acc.len && p->acc.buf[0] == '=') {
        int fig = lesson_figure_add(p, p->acc.buf + 1, p->acc.len - 1, acc_offset(p, &p->acc, 1));
        if (fig < 0)
            return -1;
        LessonRun *r = lesson_run_add(p, RUN_FIGURE, p->l->figures[fig].query,
                                      strlen(p->l->figures[fig].query), off);
        if (!r)
            return -1;
        r->figure = fig;
        return 0;
    }
    return lesson_run_add(p, RUN_CODE, p->acc.buf, p->acc.len, off) ? 0 : -1;
}

static int lesson_enter_span(MD_SPANTYPE type, void *detail, void *ud)
{
    P *p = ud;
    if (p->failed)
        return -1;
    if (p->gather == GATHER_LINK && type != MD_SPAN_EM && type != MD_SPAN_STRONG)
        return lesson_fail(p, p->last, "a citation's or term's text is plain text");
    switch (type) {
    case MD_SPAN_EM:
        p->style |= RUN_EMPH;
        return 0;
    case MD_SPAN_STRONG:
        p->style |= RUN_STRONG;
        return 0;
    case MD_SPAN_CODE:
        p->gather = GATHER_CODE_SPAN;
        acc_reset(&p->acc);
        return 0;
    case MD_SPAN_A:
        return lesson_link_enter(p, detail);
    default:
        return lesson_fail(p, p->last, "images, raw HTML and other spans have no place in a lesson");
    }
}

static int lesson_leave_span(MD_SPANTYPE type, void *detail, void *ud)
{
    (void)detail;
    P *p = ud;
    if (p->failed)
        return -1;
    switch (type) {
    case MD_SPAN_EM:
        p->style &= ~RUN_EMPH;
        return 0;
    case MD_SPAN_STRONG:
        p->style &= ~RUN_STRONG;
        return 0;
    case MD_SPAN_CODE:
        return lesson_code_span_leave(p);
    case MD_SPAN_A:
        return lesson_link_leave(p);
    default:
        return 0;
    }
}

/* ------------------------------------------------------------------------
 * Text.
 */
static int lesson_on_text(MD_TEXTTYPE type, const MD_CHAR *text, MD_SIZE size, void *ud)
{
    P *p = ud;
    if (p->failed)
        return -1;
    if (p->gather != GATHER_NONE) {
        /* A line break inside a code span or link text is a space. */
        if (type == MD_TEXT_SOFTBR || (type == MD_TEXT_BR && p->gather != GATHER_CODE_BLOCK))
            return acc_add(p, &p->acc, " ", 1);
        if (type == MD_TEXT_NULLCHAR)
            return acc_add(p, &p->acc, "\xEF\xBF\xBD", 3);
        return acc_add(p, &p->acc, text, size);
    }
    size_t off = p->last;
    if (lesson_offset(p, text, &off))
        p->last = off;
    switch (type) {
    case MD_TEXT_SOFTBR:
        return lesson_text(p, " ", 1, off);
    case MD_TEXT_BR:
        if (lesson_block_for_text(p, off))
            return -1;
        return lesson_run_add(p, RUN_BREAK, "", 0, off) ? 0 : -1;
    case MD_TEXT_NULLCHAR:
        return lesson_text(p, "\xEF\xBF\xBD", 3, off);
    default:
        return lesson_text(p, text, size, off);
    }
}

/* ------------------------------------------------------------------------
 * kvlab's fenced blocks: `key: value` lines.
 */

/* Calls fn for each non-blank line of the gathered block: its key, value
 * and their lesson offsets. */
typedef int (*KeyFn)(P *p, const char *key, const char *val, size_t key_at, size_t val_at, void *ctx);

static int lesson_key_lines(P *p, const char *what, KeyFn fn, void *ctx)
{
    char *s = p->acc.buf ? p->acc.buf : "";
    size_t len = p->acc.len;
    for (size_t i = 0; i < len;) {
        size_t end = i;
        while (end < len && s[end] != '\n')
            end++;
        size_t a = i;
        while (a < end && (s[a] == ' ' || s[a] == '\t'))
            a++;
        if (a < end) {
            char *colon = memchr(s + a, ':', end - a);
            if (!colon)
                return lesson_fail(p, acc_offset(p, &p->acc, a), "a %s line is 'key: value'", what);
            size_t k_end = (size_t)(colon - s);
            while (k_end > a && (s[k_end - 1] == ' ' || s[k_end - 1] == '\t'))
                k_end--;
            size_t v = (size_t)(colon - s) + 1;
            while (v < end && (s[v] == ' ' || s[v] == '\t'))
                v++;
            size_t v_end = end;
            while (v_end > v && (s[v_end - 1] == ' ' || s[v_end - 1] == '\t' || s[v_end - 1] == '\r'))
                v_end--;
            char key[64], val[1024];
            snprintf(key, sizeof key, "%.*s", (int)(k_end - a), s + a);
            if (v_end - v >= sizeof val)
                return lesson_fail(p, acc_offset(p, &p->acc, v), "the value of '%s' is longer than %zu bytes",
                                   key, sizeof val - 1);
            memcpy(val, s + v, v_end - v);
            val[v_end - v] = '\0';
            if (fn(p, key, val, acc_offset(p, &p->acc, a), acc_offset(p, &p->acc, v), ctx))
                return -1;
        }
        i = end + 1;
    }
    return 0;
}

#define SLUG_CHARS "lower-case letters, digits, '-', '_', '.'"

static bool lesson_slug(const char *s)
{
    if (!*s || strlen(s) >= LESSON_ID_MAX)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
            return false;
    return true;
}

/* Splits value at sep into trimmed items; fn gets each with its offset. */
static int lesson_split(P *p, const char *val, size_t at, char sep,
                        int (*fn)(P *p, const char *item, size_t at, void *ctx), void *ctx)
{
    const char *s = val;
    for (;;) {
        const char *end = strchr(s, sep);
        if (!end)
            end = s + strlen(s);
        const char *a = s, *b = end;
        while (a < b && *a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        char item[1024];
        snprintf(item, sizeof item, "%.*s", (int)(b - a), a);
        if (fn(p, item, at + (size_t)(a - val), ctx))
            return -1;
        if (!*end)
            return 0;
        s = end + 1;
    }
}

/* The header. */
typedef struct {
    bool seen[8];
} HeaderSeen;

static int lesson_header_exercise(P *p, const char *item, size_t at, void *ctx)
{
    (void)ctx;
    Lesson *l = p->l;
    if (!lesson_slug(item))
        return lesson_fail(p, at, "exercises: '%s' is not an exercise id", item);
    if (p->refs && p->refs->exercise_known && !p->refs->exercise_known(item, p->refs->exercise_ctx))
        return lesson_fail(p, at, "exercises: unknown exercise '%s'", item);
    for (size_t i = 0; i < l->n_exercises; i++)
        if (strcmp(l->exercises[i], item) == 0)
            return lesson_fail(p, at, "exercises: '%s' is listed twice", item);
    if (l->n_exercises == LESSON_EXERCISES_MAX)
        return lesson_fail(p, at, "exercises: more than %d", LESSON_EXERCISES_MAX);
    snprintf(l->exercises[l->n_exercises++], LESSON_ID_MAX, "%s", item);
    return 0;
}

static int lesson_header_source(P *p, const char *val, size_t at)
{
    Lesson *l = p->l;
    const char *eq = strchr(val, '=');
    if (!eq)
        return lesson_fail(p, at, "source: 'ID = description'");
    const char *b = eq;
    while (b > val && b[-1] == ' ')
        b--;
    char id[LESSON_ID_MAX];
    if ((size_t)(b - val) >= sizeof id)
        return lesson_fail(p, at, "source: an id longer than %d bytes", LESSON_ID_MAX - 1);
    memcpy(id, val, (size_t)(b - val));
    id[b - val] = '\0';
    if (!lesson_slug(id))
        return lesson_fail(p, at, "source: '%s' is not an id (" SLUG_CHARS ")", id);
    if (lesson_source(l, id))
        return lesson_fail(p, at, "source: '%s' is given twice", id);
    const char *d = eq + 1;
    while (*d == ' ')
        d++;
    if (!*d)
        return lesson_fail(p, at, "source: '%s' has no description", id);
    if (l->n_sources == LESSON_SOURCES_MAX)
        return lesson_fail(p, at, "source: more than %d", LESSON_SOURCES_MAX);
    LessonSource *s = &l->sources[l->n_sources];
    memcpy(s->id, id, sizeof id);
    if (!(s->description = lesson_strndup(l, d, strlen(d))))
        return lesson_oom(p);
    l->n_sources++;
    return 0;
}

enum { H_ID, H_TITLE, H_QUESTION, H_SCENARIO, H_EXERCISES, H_SOURCE, H_KEYS };
static const char *const HEADER_KEYS[H_KEYS] = {"id", "title", "question", "scenario", "exercises", "source"};

static int lesson_header_key(P *p, const char *key, const char *val, size_t key_at, size_t at, void *ctx)
{
    HeaderSeen *seen = ctx;
    Lesson *l = p->l;
    int k = 0;
    while (k < H_KEYS && strcmp(key, HEADER_KEYS[k]) != 0)
        k++;
    if (k == H_KEYS)
        return lesson_fail(p, key_at, "unknown header key '%s'; expected id, title, question, scenario, "
                                      "exercises or source", key);
    if (seen->seen[k] && k != H_SOURCE)
        return lesson_fail(p, key_at, "'%s' is given twice", key);
    seen->seen[k] = true;
    if (!*val)
        return lesson_fail(p, at, "'%s' is empty", key);
    switch (k) {
    case H_ID:
        if (!lesson_slug(val))
            return lesson_fail(p, at, "id: '%s' is not a slug (" SLUG_CHARS ")", val);
        snprintf(l->id, sizeof l->id, "%s", val);
        return 0;
    case H_TITLE:
        return (l->title = lesson_strndup(l, val, strlen(val))) ? 0 : lesson_oom(p);
    case H_QUESTION:
        return (l->question = lesson_strndup(l, val, strlen(val))) ? 0 : lesson_oom(p);
    case H_SCENARIO: {
        char path[1024];
        if (p->refs && p->refs->datadir &&
            catalog_path(p->refs->datadir, CATALOG_SCENARIOS, val, path, sizeof path, p->e))
            return lesson_fail_e(p, at);
        if (!lesson_slug(val))
            return lesson_fail(p, at, "scenario: '%s' is not a scenario name", val);
        snprintf(l->scenario, sizeof l->scenario, "%s", val);
        return 0;
    }
    case H_EXERCISES:
        return lesson_split(p, val, at, ',', lesson_header_exercise, NULL);
    default:
        return lesson_header_source(p, val, at);
    }
}

static int lesson_header(P *p)
{
    HeaderSeen seen = {{false}};
    if (lesson_key_lines(p, "header", lesson_header_key, &seen))
        return -1;
    static const int NEEDED[] = {H_ID, H_TITLE, H_QUESTION};
    for (size_t i = 0; i < sizeof NEEDED / sizeof NEEDED[0]; i++)
        if (!seen.seen[NEEDED[i]])
            return lesson_fail(p, p->block_at, "the header has no '%s'", HEADER_KEYS[NEEDED[i]]);
    p->header_seen = true;
    return 0;
}

/* A predict block. */
typedef struct {
    LessonPredict pr;
    bool question, answer, choices, explain, correct;
    const char *explain_text;
    size_t explain_at;
    char correct_letter;
    size_t correct_at;
} PredictRead;

static int lesson_predict_choice(P *p, const char *item, size_t at, void *ctx)
{
    PredictRead *r = ctx;
    if (!*item)
        return lesson_fail(p, at, "choices: an empty choice");
    if (r->pr.n_choices == LESSON_CHOICES_MAX)
        return lesson_fail(p, at, "choices: more than %d", LESSON_CHOICES_MAX);
    if (!(r->pr.choices[r->pr.n_choices++] = lesson_strndup(p->l, item, strlen(item))))
        return lesson_oom(p);
    return 0;
}

static int lesson_predict_key(P *p, const char *key, const char *val, size_t key_at, size_t at, void *ctx)
{
    PredictRead *r = ctx;
    static const char *const KEYS[] = {"question", "answer", "choices", "correct", "explain"};
    bool *seen[] = {&r->question, &r->answer, &r->choices, &r->correct, &r->explain};
    size_t k = 0;
    while (k < 5 && strcmp(key, KEYS[k]) != 0)
        k++;
    if (k == 5)
        return lesson_fail(p, key_at, "unknown predict key '%s'; expected question, answer, choices, correct "
                                      "or explain", key);
    if (*seen[k])
        return lesson_fail(p, key_at, "'%s' is given twice", key);
    *seen[k] = true;
    if (!*val)
        return lesson_fail(p, at, "'%s' is empty", key);
    switch (k) {
    case 0:
        return (r->pr.question = lesson_strndup(p->l, val, strlen(val))) ? 0 : lesson_oom(p);
    case 1: {
        int fig = lesson_figure_add(p, val, strlen(val), at);
        if (fig < 0)
            return -1;
        r->pr.answer = fig;
        return 0;
    }
    case 2:
        return lesson_split(p, val, at, '|', lesson_predict_choice, r);
    case 3:
        if (strlen(val) != 1 || *val < 'a' || *val >= 'a' + LESSON_CHOICES_MAX)
            return lesson_fail(p, at, "correct: '%s' is not a choice's letter (a, b, c ...)", val);
        r->correct_letter = *val;
        r->correct_at = at;
        return 0;
    default:
        r->explain_at = at;
        return (r->explain_text = lesson_strndup(p->l, val, strlen(val))) ? 0 : lesson_oom(p);
    }
}

static int lesson_predict(P *p)
{
    Lesson *l = p->l;
    PredictRead r = {.pr = {.answer = -1, .pos = lesson_pos_at(p, p->block_at)}};
    if (lesson_key_lines(p, "predict", lesson_predict_key, &r))
        return -1;
    if (!r.question || !r.answer)
        return lesson_fail(p, p->block_at, "a predict block needs a question and an answer (missing %s)",
                           r.question ? "answer" : "question");
    if (r.choices && r.pr.n_choices < 2)
        return lesson_fail(p, p->block_at, "choices: at least two, separated by '|'");
    /* The reveal names the right choice, so a block with choices says
     * which one it is. */
    if (r.choices && !r.correct)
        return lesson_fail(p, p->block_at, "a predict block with choices names the right one: 'correct: b'");
    if (r.correct && !r.choices)
        return lesson_fail(p, r.correct_at, "correct: a predict block without choices has no choice to name");
    if (r.correct && (size_t)(r.correct_letter - 'a') >= r.pr.n_choices)
        return lesson_fail(p, r.correct_at, "correct: there is no choice %c) (the choices are a to %c)",
                           r.correct_letter, (int)('a' + r.pr.n_choices - 1));
    r.pr.correct = r.correct ? r.correct_letter - 'a' : -1;
    if (lesson_grow((void **)&l->predicts, &p->cap_predicts, l->n_predicts, sizeof *l->predicts))
        return lesson_oom(p);
    if (lesson_block_open(p, BLOCK_PREDICT, p->block_at))
        return -1;
    l->blocks[p->cur].predict = (int)l->n_predicts;
    if (r.explain) {
        if (p->n_explains == sizeof p->explains / sizeof p->explains[0])
            return lesson_fail(p, p->block_at, "more predict blocks than a lesson can hold");
        p->explains[p->n_explains].predict = (int)l->n_predicts;
        p->explains[p->n_explains].text = r.explain_text;
        p->explains[p->n_explains].at = r.explain_at;
        p->explains[p->n_explains++].len = strlen(r.explain_text);
    }
    l->predicts[l->n_predicts++] = r.pr;
    p->cur = -1;
    return 0;
}

static int lesson_widget(P *p, const char *name)
{
    Lesson *l = p->l;
    size_t name_at = p->block_at;
    const char *options = lesson_strndup(l, p->acc.buf ? p->acc.buf : "", p->acc.len);
    const char *w = lesson_strndup(l, name, strlen(name));
    if (!options || !w)
        return lesson_oom(p);
    if (!*name)
        return lesson_fail(p, name_at, "```kvlab needs a widget name: ```kvlab calc");
    if (p->refs && p->refs->widget_check) {
        int rc = p->refs->widget_check(name, options, p->refs->widget_ctx, p->e);
        if (rc == LESSON_WIDGET_UNKNOWN)
            return lesson_fail(p, name_at, "unknown widget '%s'; expected %s", name,
                               p->refs->widget_names ? p->refs->widget_names : "a widget's name");
        if (rc)
            return lesson_fail(p, p->acc.len ? acc_offset(p, &p->acc, 0) : name_at, "widget %s: %s", name,
                               p->e->msg);
    }
    if (lesson_block_open(p, BLOCK_WIDGET, name_at))
        return -1;
    l->blocks[p->cur].widget = w;
    l->blocks[p->cur].text = options;
    p->cur = -1;
    return 0;
}

/* A fenced block closes: kvlab's own, or code to show. */
static int lesson_code_block(P *p)
{
    p->gather = GATHER_NONE;
    const char *info = p->info;
    if (strcmp(info, "kvlab-lesson") == 0) {
        if (p->fragment || p->header_seen || p->l->n_blocks)
            return lesson_fail(p, p->block_at, "the ```kvlab-lesson header comes once, first");
        return lesson_header(p);
    }
    if (!p->header_seen && !p->fragment)
        return lesson_fail(p, p->block_at, "a lesson begins with its ```kvlab-lesson header block");
    if (strcmp(info, "kvlab-predict") == 0)
        return lesson_predict(p);
    if (strcmp(info, "kvlab") == 0 || strncmp(info, "kvlab ", 6) == 0) {
        const char *name = info + 5;
        while (*name == ' ')
            name++;
        return lesson_widget(p, name);
    }
    if (strncmp(info, "kvlab", 5) == 0)
        return lesson_fail(p, p->block_at, "unknown block '%s'; expected kvlab-lesson, kvlab-predict or "
                                           "kvlab WIDGET", info);
    if (lesson_block_open(p, BLOCK_CODE, p->block_at))
        return -1;
    LessonBlock *b = &p->l->blocks[p->cur];
    b->info = lesson_strndup(p->l, info, strlen(info));
    b->text = lesson_strndup(p->l, p->acc.buf ? p->acc.buf : "", p->acc.len);
    p->cur = -1;
    return b->info && b->text ? 0 : lesson_oom(p);
}

/* Where a fenced block's fence lies: the first fence after the last
 * offset seen (md4c gives the info string's place only when it has one). */
static size_t lesson_fence_at(const P *p, const MD_BLOCK_CODE_DETAIL *d)
{
    size_t off;
    if (d->info.size && lesson_offset(p, d->info.text, &off)) {
        while (off > 0 && p->lesson_text[off - 1] != '\n')
            off--;
        while (off < p->lesson_len && (p->lesson_text[off] == ' ' || p->lesson_text[off] == '>'))
            off++;
        return off;
    }
    for (off = p->last; off + 3 <= p->lesson_len; off++)
        if ((off == 0 || p->lesson_text[off - 1] == '\n' || p->lesson_text[off - 1] == ' ') &&
            (memcmp(p->lesson_text + off, "```", 3) == 0 || memcmp(p->lesson_text + off, "~~~", 3) == 0))
            return off;
    return p->last;
}

/* Where an indented code block begins: the first text of the first line
 * after the last offset seen that is indented four columns or a tab. */
static size_t lesson_indented_at(const P *p)
{
    const char *t = p->lesson_text;
    for (size_t off = p->last; off < p->lesson_len; off++) {
        if (off && t[off - 1] != '\n')
            continue;
        size_t i = off;
        while (i < p->lesson_len && i - off < 4 && t[i] == ' ')
            i++;
        if (i < p->lesson_len && (i - off == 4 || t[i] == '\t') && t[i] != '\n') {
            while (i < p->lesson_len && (t[i] == ' ' || t[i] == '\t'))
                i++;
            return i;
        }
    }
    return p->last;
}

/* ------------------------------------------------------------------------
 * Blocks.
 */
static void lesson_block_close(P *p);

static int lesson_enter_block(MD_BLOCKTYPE type, void *detail, void *ud)
{
    P *p = ud;
    if (p->failed)
        return -1;
    if (!p->header_seen && !p->fragment && type != MD_BLOCK_DOC && type != MD_BLOCK_CODE)
        return lesson_fail(p, p->last, "a lesson begins with its ```kvlab-lesson header block");
    /* A block that begins inside an open one (a nested list in a tight
     * item) ends the open one's text; a table's cells stay in their row. */
    if (type != MD_BLOCK_TH && type != MD_BLOCK_TD)
        lesson_block_close(p);
    switch (type) {
    case MD_BLOCK_QUOTE:
        p->quote++;
        return 0;
    case MD_BLOCK_UL:
    case MD_BLOCK_OL:
        if (p->depth == LIST_DEPTH_MAX)
            return lesson_fail(p, p->last, "lists nested more than %d deep", LIST_DEPTH_MAX);
        p->ordered[p->depth] = type == MD_BLOCK_OL;
        p->number[p->depth] = type == MD_BLOCK_OL ? ((MD_BLOCK_OL_DETAIL *)detail)->start : 0;
        p->depth++;
        return 0;
    case MD_BLOCK_LI:
        p->item_pending = true;
        return 0;
    case MD_BLOCK_HR:
        if (lesson_block_open(p, BLOCK_RULE, p->last))
            return -1;
        p->cur = -1;
        return 0;
    case MD_BLOCK_H:
        if (lesson_block_open(p, BLOCK_HEADING, p->last))
            return -1;
        p->l->blocks[p->cur].level = (int)((MD_BLOCK_H_DETAIL *)detail)->level;
        return 0;
    case MD_BLOCK_P:
        return lesson_block_open(p, p->item_pending ? BLOCK_ITEM : BLOCK_PARAGRAPH, p->last);
    case MD_BLOCK_CODE: {
        const MD_BLOCK_CODE_DETAIL *d = detail;
        if (!d->fence_char)
            return lesson_fail(p, lesson_indented_at(p), "indented code: a lesson's code is fenced with ``` (or the "
                                           "line is indented four spaces by mistake)");
        p->block_at = lesson_fence_at(p, d);
        snprintf(p->info, sizeof p->info, "%.*s", (int)d->info.size, d->info.text ? d->info.text : "");
        p->gather = GATHER_CODE_BLOCK;
        acc_reset(&p->acc);
        return 0;
    }
    case MD_BLOCK_TR:
        if (lesson_block_open(p, BLOCK_TABLE_ROW, p->last))
            return -1;
        p->l->blocks[p->cur].header = p->in_row_header;
        p->cell = -1;
        return 0;
    case MD_BLOCK_THEAD:
        p->in_row_header = true;
        return 0;
    case MD_BLOCK_TBODY:
        p->in_row_header = false;
        return 0;
    case MD_BLOCK_TH:
    case MD_BLOCK_TD:
        p->cell++;
        if (p->cur >= 0)
            p->l->blocks[p->cur].n_cells = p->cell + 1;
        return 0;
    case MD_BLOCK_HTML:
        return lesson_fail(p, p->last, "raw HTML has no place in a lesson");
    default:
        return 0;
    }
}

/* The summary: a level-2 heading "Summary", then three to five items, and
 * nothing after them but the list. */
static void lesson_summary_track(P *p, const LessonBlock *b)
{
    if (b->kind == BLOCK_HEADING) {
        const LessonRun *r = b->n_runs ? &p->l->runs[b->run0] : NULL;
        p->in_summary = b->level == 2 && b->n_runs == 1 && r->kind == RUN_TEXT && strcmp(r->text, "Summary") == 0;
        p->summary_pos = b->pos;
        p->summary_items = p->in_summary ? 0 : -1;
    } else if (p->in_summary && b->kind == BLOCK_ITEM && b->depth == 1) {
        p->summary_items++;
    } else if (p->in_summary && b->depth == 0) {
        p->summary_items = -2;          // something after the list
    }
}

static void lesson_block_close(P *p)
{
    if (p->cur >= 0)
        lesson_summary_track(p, &p->l->blocks[p->cur]);
    p->cur = -1;
}

static int lesson_leave_block(MD_BLOCKTYPE type, void *detail, void *ud)
{
    (void)detail;
    P *p = ud;
    if (p->failed)
        return -1;
    switch (type) {
    case MD_BLOCK_QUOTE:
        p->quote--;
        return 0;
    case MD_BLOCK_UL:
    case MD_BLOCK_OL:
        p->depth--;
        return 0;
    case MD_BLOCK_CODE:
        return lesson_code_block(p);
    case MD_BLOCK_TH:
    case MD_BLOCK_TD:
    case MD_BLOCK_THEAD:
    case MD_BLOCK_TBODY:
    case MD_BLOCK_TABLE:
        return 0;
    case MD_BLOCK_LI:
        p->item_pending = false;
        /* fall through */
    case MD_BLOCK_P:
    case MD_BLOCK_H:
    case MD_BLOCK_TR:
        lesson_block_close(p);
        return 0;
    default:
        return 0;
    }
}

/* ------------------------------------------------------------------------
 * Parsing.
 */
/* Indented code blocks are read as code, so that one is refused rather
 * than shown as a paragraph (lesson_enter_block). */
static const unsigned MD_FLAGS = MD_FLAG_TABLES | MD_FLAG_NOHTML;

static int lesson_md(P *p, const char *text, size_t len, size_t base)
{
    MD_PARSER parser = {
        .abi_version = 0,
        .flags = MD_FLAGS,
        .enter_block = lesson_enter_block,
        .leave_block = lesson_leave_block,
        .enter_span = lesson_enter_span,
        .leave_span = lesson_leave_span,
        .text = lesson_on_text,
    };
    p->src = text;
    p->src_len = len;
    p->src_base = base;
    int rc = md_parse(text, (MD_SIZE)len, &parser, p);
    if (rc && !p->failed)
        return lesson_fail(p, p->last, "md4c could not parse the text (out of memory?)");
    return rc ? -1 : 0;
}

/* Each predict's explanation, as runs of its own after the blocks' (the
 * paragraph md4c makes of it is dropped by the caller). */
static int lesson_explains(P *p)
{
    bool in_summary = p->in_summary;
    int items = p->summary_items;
    for (size_t i = 0; i < p->n_explains; i++) {
        LessonPredict *pr = &p->l->predicts[p->explains[i].predict];
        size_t at = p->explains[i].at;
        pr->run0 = p->l->n_runs;
        p->cur = -1;
        p->fragment = true;
        if (lesson_md(p, p->explains[i].text, p->explains[i].len, at))
            return -1;
        pr->n_runs = p->l->n_runs - pr->run0;
    }
    p->in_summary = in_summary;
    p->summary_items = items;
    return 0;
}

/* A copy of the text, for what looks at it again (the typed-number rule). */
static int lesson_keep_source(P *p)
{
    p->l->source = lesson_strndup(p->l, p->lesson_text, p->lesson_len);
    p->l->source_len = p->lesson_len;
    return p->l->source ? 0 : lesson_oom(p);
}

/* The length of the UTF-8 sequence at s (n bytes left), 0 when it is not
 * one: no overlong forms, surrogates or code points past U+10FFFF. */
static size_t lesson_utf8_len(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (!len || s[0] > 0xF4 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0) || (s[0] == 0xF0 && s[1] < 0x90) ||
        (s[0] == 0xF4 && s[1] >= 0x90))
        return 0;
    return len;
}

/* A lesson is UTF-8 text: a NUL byte or a byte that is not UTF-8 is
 * refused at its place (md4c would show one as U+FFFD, silently). */
static int lesson_check_bytes(P *p)
{
    const unsigned char *s = (const unsigned char *)p->lesson_text;
    for (size_t i = 0; i < p->lesson_len;) {
        if (!s[i])
            return lesson_fail(p, i, "a NUL byte in a text file");
        size_t n = lesson_utf8_len(s + i, p->lesson_len - i);
        if (!n)
            return lesson_fail(p, i, "byte 0x%02X is not UTF-8 text", s[i]);
        i += n;
    }
    return 0;
}

static void lesson_init(Lesson *l, const char *path)
{
    memset(l, 0, sizeof *l);
    snprintf(l->path, sizeof l->path, "%s", path);
    l->title = l->question = l->source = "";
}

int lesson_parse(Lesson *l, const char *path, const char *text, size_t len, const LessonRefs *refs, Error *e)
{
    lesson_init(l, path);
    if (len > LESSON_FILE_MAX)
        return error_set(e, "%s: larger than %u bytes", path, LESSON_FILE_MAX);
    P p = {.l = l, .refs = refs, .lesson_text = text, .lesson_len = len, .e = e, .cur = -1};
    int rc = lesson_check_bytes(&p) || lesson_keep_source(&p) || lesson_md(&p, text, len, 0);
    if (!rc && !p.header_seen)
        rc = lesson_fail(&p, 0, "a lesson begins with its ```kvlab-lesson header block");
    if (!rc) {
        size_t blocks = l->n_blocks;
        rc = lesson_explains(&p);
        l->n_blocks = blocks;           // the explanations' paragraphs are not the document's
    }
    for (size_t i = 0; !rc && i < l->n_runs; i++)
        if (l->runs[i].kind == RUN_TEXT && (strstr(l->runs[i].text, "](src:") || strstr(l->runs[i].text, "](term:")))
            rc = lesson_error(l, l->runs[i].pos, e, "a citation or term link that is not a link: a target "
                                                    "with spaces is written <term:KV cache>");
    if (!rc && p.summary_items < 3)
        rc = p.summary_items == -2
                 ? lesson_error(l, p.summary_pos, e, "the Summary ends the lesson: nothing but its list after it")
                 : lesson_fail(&p, len, "a lesson ends with a '## Summary' heading and three to five bullet lines");
    if (!rc && p.summary_items > 5)
        rc = lesson_error(l, p.summary_pos, e, "the Summary has %d bullet lines; three to five",
                          p.summary_items);
    free(p.acc.buf);
    if (rc)
        lesson_free(l);
    return rc;
}

int lesson_parse_text(Lesson *l, const char *path, const char *text, size_t len, const LessonRefs *refs,
                      Error *e)
{
    lesson_init(l, path);
    if (len > LESSON_FILE_MAX)
        return error_set(e, "%s: larger than %u bytes", path, LESSON_FILE_MAX);
    P p = {.l = l, .refs = refs, .lesson_text = text, .lesson_len = len, .e = e, .cur = -1, .fragment = true};
    int rc = lesson_check_bytes(&p) || lesson_keep_source(&p) || lesson_md(&p, text, len, 0);
    free(p.acc.buf);
    if (rc)
        lesson_free(l);
    return rc;
}

/* Whether the file's name, NN-SLUG.md, names another lesson than id; a
 * file named otherwise is checked as it is (kvlab lesson check FILE). */
static bool lesson_name_differs(const char *path, const char *id, const char **name)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    *name = base;
    if (n < 7 || base[0] < '0' || base[0] > '9' || base[1] < '0' || base[1] > '9' || base[2] != '-' ||
        strcmp(base + n - 3, ".md") != 0)
        return false;
    return n - 6 != strlen(id) || strncmp(base + 3, id, n - 6) != 0;
}

int lesson_load(Lesson *l, const char *path, const LessonRefs *refs, Error *e)
{
    lesson_init(l, path);
    char *buf;
    size_t n;
    if (readfile(path, LESSON_FILE_MAX, "lessons", &buf, &n, e))
        return -1;
    int rc = lesson_parse(l, path, buf, n, refs, e);
    free(buf);
    const char *name;
    if (!rc && lesson_name_differs(path, l->id, &name)) {
        rc = error_set(e, "%s:1:1: id '%s' is not the file's name: lesson '%s' lives in NN-%s.md", path, l->id,
                       l->id, l->id);
        lesson_free(l);
    }
    return rc;
}

void lesson_free(Lesson *l)
{
    free(l->blocks);
    free(l->runs);
    free(l->figures);
    free(l->predicts);
    for (LessonArena *a = l->arena, *next; a; a = next) {
        next = a->next;
        free(a);
    }
    char path[sizeof l->path];
    memcpy(path, l->path, sizeof path);
    lesson_init(l, path);
}

bool lesson_shipped(const char *id, const void *ctx)
{
    const char *dir = ctx ? ctx : paths_lessondir();
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    for (struct dirent *de; !found && (de = readdir(d));) {
        const char *s = de->d_name;
        found = s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] == '-' &&
                strncmp(s + 3, id, strlen(id)) == 0 && strcmp(s + 3 + strlen(id), ".md") == 0;
    }
    closedir(d);
    return found && *id;
}

const LessonSource *lesson_source(const Lesson *l, const char *id)
{
    for (size_t i = 0; i < l->n_sources; i++)
        if (strcmp(l->sources[i].id, id) == 0)
            return &l->sources[i];
    return NULL;
}
