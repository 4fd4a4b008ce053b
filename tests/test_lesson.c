/* test_lesson.c - lessons parsed into documents (errors with line and
 * column), their figures, the typed-number rule, the glossary, and
 * `kvlab lesson` / `kvlab glossary`. */
#include "testutil.h"

#include "exercise.h"
#include "glossary.h"
#include "lesson.h"
#include "query.h"
#include "tui/table.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *lessondir(void)
{
    const char *d = getenv("KVLAB_LESSONS");
    return d && *d ? d : "lessons";
}

/* ------------------------------------------------------------------------
 * References for the parser's tests: a small glossary, two exercises, and
 * a widget check that knows `calc` and refuses `--bad`.
 */
static const char *const TERMS[] = {"slots", "GQA", "KV cache", NULL};
static const char *const EXERCISES[] = {"try-1", "kv-size", NULL};

static bool test_in(const char *const *list, const char *w)
{
    for (; *list; list++)
        if (!strcmp(*list, w))
            return true;
    return false;
}
static bool test_term(const char *t, const void *ctx)
{
    (void)ctx;
    return test_in(TERMS, t);
}
static bool test_exercise(const char *id, const void *ctx)
{
    (void)ctx;
    return test_in(EXERCISES, id);
}
static int test_widget(const char *name, const char *options, const void *ctx, Error *e)
{
    (void)ctx;
    if (strcmp(name, "calc") != 0 && strcmp(name, "niah") != 0)
        return LESSON_WIDGET_UNKNOWN;
    return strstr(options, "--bad") ? error_set(e, "unknown option '--bad'") : 0;
}

static const char *const LESSONS[] = {"capacity", NULL};
static bool test_lesson_known(const char *id, const void *ctx)
{
    (void)ctx;
    return test_in(LESSONS, id);
}

static LessonRefs test_refs(void)
{
    return (LessonRefs){.datadir = test_datadir(), .term_known = test_term, .exercise_known = test_exercise,
                        .widget_check = test_widget, .widget_names = "calc"};
}

#define HEADER "```kvlab-lesson\nid: t\ntitle: T\nquestion: Q?\nsource: s1 = a source\n```\n"
#define SUMMARY "\n## Summary\n\n- one\n- two\n- three\n"

/* Parses text; the error message when it fails, NULL when it parses (and
 * evaluates). */
static const char *test_parse(const char *text, Lesson *l, Error *e)
{
    LessonRefs refs = test_refs();
    if (lesson_parse(l, "t.md", text, strlen(text), &refs, e))
        return e->msg;
    if (lesson_eval(l, e)) {
        lesson_free(l);
        return e->msg;
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * Errors
 */

/* A malformed lesson is refused with the file, the line and the column of
 * what is wrong, and a message naming it. */
START_TEST(parse_errors)
{
    static const struct {
        const char *text;
        const char *where;          // "t.md:L:C: "
        const char *says;
    } BAD[] = {
        {"# A title\n", "t.md:1:1: ", "begins with its ```kvlab-lesson header"},
        {"```kvlab-lesson\nid: t\ntitle: T\nquestion: Q?\ncolour: red\n```\n" SUMMARY, "t.md:5:1: ",
         "unknown header key 'colour'"},
        {"```kvlab-lesson\ntitle: T\nquestion: Q?\n```\n" SUMMARY, "t.md:1:1: ", "the header has no 'id'"},
        {"```kvlab-lesson\nid: t\nquestion: Q?\n```\n" SUMMARY, "t.md:1:1: ", "the header has no 'title'"},
        {"```kvlab-lesson\nid: t\ntitle: T\n```\n" SUMMARY, "t.md:1:1: ", "the header has no 'question'"},
        {"```kvlab-lesson\nid: Not A Slug\ntitle: T\nquestion: Q\n```\n" SUMMARY, "t.md:2:5: ", "not a slug"},
        {"```kvlab-lesson\nid: t\nid: u\ntitle: T\nquestion: Q\n```\n" SUMMARY, "t.md:3:1: ", "given twice"},
        {"```kvlab-lesson\nid: t\ntitle: T\nquestion: Q\nscenario: no-such\n```\n" SUMMARY, "t.md:5:11: ",
         "no-such"},
        {"```kvlab-lesson\nid: t\ntitle: T\nquestion: Q\nexercises: try-1, nope\n```\n" SUMMARY, "t.md:5:19: ",
         "unknown exercise 'nope'"},
        {"```kvlab-lesson\nid: t\ntitle: T\nquestion: Q\nsource: s1\n```\n" SUMMARY, "t.md:5:9: ",
         "ID = description"},
        {HEADER "\nSee [10.48 GB](src:s2 \"x\").\n" SUMMARY, "t.md:8:20: ", "unknown source 's2'"},
        {HEADER "\nA [slot](term:slotz) is.\n" SUMMARY, "t.md:8:15: ", "unknown term 'slotz'"},
        {HEADER "\nA [KV cache](term:KV cache) is.\n" SUMMARY, "t.md:8:1: ", "not a link"},
        {HEADER "\nA [link](http://example.com).\n" SUMMARY, "t.md:8:10: ", "src:ID"},
        {HEADER "\nIt is `=no_such_metric --model llama-3.1-8b` big.\n" SUMMARY, "t.md:8:9: ", "no_such_metric"},
        {HEADER "\nIt is `=slots --model llama-3.1-8b` slots.\n" SUMMARY, "t.md:8:9: ", "slots"},
        {HEADER "\nIt is `=gib --model no-such-model` big.\n" SUMMARY, "t.md:8:9: ", "no-such-model"},
        {HEADER "\n```kvlab nosuch\n--x\n```\n" SUMMARY, "t.md:8:1: ", "unknown widget 'nosuch'"},
        {HEADER "\n```kvlab calc\n--model llama-3.1-8b --bad\n```\n" SUMMARY, "t.md:9:1: ",
         "widget calc: unknown option '--bad'"},
        {HEADER "\n```kvlab-quiz\nx\n```\n" SUMMARY, "t.md:8:1: ", "unknown block 'kvlab-quiz'"},
        {HEADER "\n```kvlab-predict\nquestion: How many?\n```\n" SUMMARY, "t.md:8:1: ", "missing answer"},
        {HEADER "\n```kvlab-predict\nquestion: How many?\nanswer: gib --model llama-3.1-8b\nhint: x\n```\n" SUMMARY,
         "t.md:11:1: ", "unknown predict key 'hint'"},
        {HEADER "\n```kvlab-predict\nquestion: How many?\nanswer: nope --model llama-3.1-8b\n```\n" SUMMARY,
         "t.md:10:9: ", "nope"},
        {HEADER "\nText.\n", "t.md:9:1: ", "'## Summary'"},
        {HEADER "\n## Summary\n\n- one\n- two\n", "t.md:", "three to five"},
        {HEADER SUMMARY "- four\n- five\n- six\n", "t.md:8:4: ", "has 6 bullet lines"},
        {HEADER SUMMARY "\nMore text.\n", "t.md:8:4: ", "nothing but its list after it"},
        {HEADER "\nText.\n\n" HEADER SUMMARY, "t.md:10:1: ", "comes once, first"},
        {HEADER "\n![img](x.png)\n" SUMMARY, "t.md:", "images"},
        {HEADER "\n```kvlab-predict\nquestion: Q?\nanswer: gib --model llama-3.1-8b\nchoices: a | b\n```\n" SUMMARY,
         "t.md:8:1: ", "names the right one: 'correct: b'"},
        {HEADER "\n```kvlab-predict\nquestion: Q?\nanswer: gib --model llama-3.1-8b\nchoices: a | b\ncorrect: c\n```\n"
                SUMMARY, "t.md:12:10: ", "there is no choice c)"},
        {HEADER "\n```kvlab-predict\nquestion: Q?\nanswer: gib --model llama-3.1-8b\ncorrect: a\n```\n" SUMMARY,
         "t.md:11:10: ", "without choices"},
        {HEADER "\n```kvlab-predict\nquestion: Q?\nanswer: gib --model llama-3.1-8b\nchoices: a | b\ncorrect: B)\n```\n"
                SUMMARY, "t.md:12:10: ", "'B)' is not a choice's letter"},
        {HEADER "\nText.\n\n    indented code\n" SUMMARY, "t.md:10:5: ", "indented code"},
        {HEADER "\n- item\n\n        indented in an item\n" SUMMARY, "t.md:10:9: ", "indented code"},
        {HEADER "\nText \xFF\xFE bad.\n" SUMMARY, "t.md:8:6: ", "byte 0xFF is not UTF-8"},
        {HEADER "\nText \xED\xA0\x80 a surrogate.\n" SUMMARY, "t.md:8:6: ", "byte 0xED is not UTF-8"},
        {HEADER "\nText \xC0\xAF overlong.\n" SUMMARY, "t.md:8:6: ", "byte 0xC0 is not UTF-8"},
        {"```kvlab-lesson\nid: a b\ntitle: T\nquestion: Q\n```\n" SUMMARY, "t.md:2:5: ",
         "lower-case letters, digits, '-', '_', '.'"},
        {"```kvlab-lesson\nid: t\ntitle: T\nquestion: Q\nsource: A B = x\n```\n" SUMMARY, "t.md:5:9: ",
         "lower-case letters, digits, '-', '_', '.'"},
    };
    for (size_t i = 0; i < N_OF(BAD); i++) {
        Lesson l;
        Error e;
        const char *msg = test_parse(BAD[i].text, &l, &e);
        ck_assert_msg(msg, "case %zu parsed: %s", i, BAD[i].text);
        ck_assert_msg(!strncmp(msg, BAD[i].where, strlen(BAD[i].where)), "case %zu: '%s' is not at %s", i, msg,
                      BAD[i].where);
        ck_assert_msg(strstr(msg, BAD[i].says), "case %zu: '%s' does not say '%s'", i, msg, BAD[i].says);
    }
}
END_TEST

/* A NUL byte is refused at its place, not shown as U+FFFD: at a random
 * place in the prose, on its line and column. */
START_TEST(parse_nul_refused)
{
    Rng r = {test_seed()};
    for (int round = 0; round < 20; round++) {
        char text[512];
        int col = (int)rng_range(&r, 1, 40);
        int len = snprintf(text, sizeof text, "%s\n%*sx%s", HEADER, col - 1, "", SUMMARY);
        size_t at = strlen(HEADER) + 1 + (size_t)col - 1;
        text[at] = '\0';
        LessonRefs refs = test_refs();
        Lesson l;
        Error e;
        int rc = lesson_parse(&l, "t.md", text, (size_t)len, &refs, &e);
        char want[64];
        snprintf(want, sizeof want, "t.md:8:%d: a NUL byte", col);
        ck_assert_seeded(rc && !strncmp(e.msg, want, strlen(want)), "'%s', not '%s'", rc ? e.msg : "parsed", want);
    }
}
END_TEST

/* A lesson file is a regular file named NN-ID.md after the id it holds;
 * a directory or a file of another lesson's name is refused, exit 2. */
START_TEST(load_file_checks)
{
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/kvlab-lesson-%d", P_tmpdir, (int)getpid());
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    LessonRefs refs = test_refs();
    Lesson l;
    Error e;
    snprintf(path, sizeof path, "%s/01-t.md", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    ck_assert_int_ne(lesson_load(&l, path, &refs, &e), 0);
    ck_assert_msg(strstr(e.msg, "not a regular file") && !e.runtime, "%s", e.msg);
    rmdir(path);
    static const struct {
        const char *name;
        bool ok;
    } NAMES[] = {{"01-t.md", true}, {"01-u.md", false}, {"12-tt.md", false}, {"t.md", true}};
    for (size_t i = 0; i < N_OF(NAMES); i++) {
        snprintf(path, sizeof path, "%s/%s", dir, NAMES[i].name);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(HEADER "\nText.\n" SUMMARY, f);
        fclose(f);
        int rc = lesson_load(&l, path, &refs, &e);
        ck_assert_msg(NAMES[i].ok ? rc == 0 : rc && strstr(e.msg, "id 't' is not the file's name"), "%s: %s",
                      NAMES[i].name, rc ? e.msg : "loaded");
        if (!rc)
            lesson_free(&l);
        unlink(path);
    }
    rmdir(dir);
}
END_TEST

/* An unknown term at a random place is reported at that place: its line
 * and the column of its target, whatever text comes before it. */
START_TEST(parse_error_random_place)
{
    Rng r = {test_seed()};
    for (int round = 0; round < 50; round++) {
        char body[4096] = "";
        size_t len = 0;
        int lines = (int)rng_range(&r, 0, 6), words = (int)rng_range(&r, 0, 8);
        for (int i = 0; i < lines; i++)
            len += (size_t)snprintf(body + len, sizeof body - len, "Line %d of prose.\n\n", i);
        for (int i = 0; i < words; i++)
            len += (size_t)snprintf(body + len, sizeof body - len, "w%d ", i);
        size_t col = 1, at = len;
        while (at > 0 && body[at - 1] != '\n')
            at--, col++;
        len += (size_t)snprintf(body + len, sizeof body - len, "[x](term:nope%d)\n", round);
        char text[8192];
        snprintf(text, sizeof text, "%s\n%s%s", HEADER, body, SUMMARY);
        Lesson l;
        Error e;
        const char *msg = test_parse(text, &l, &e);
        char want[64];
        snprintf(want, sizeof want, "t.md:%d:%zu: unknown term 'nope%d'", 8 + 2 * lines, col + 9, round);
        ck_assert_seeded(msg && !strncmp(msg, want, strlen(want)), "'%s', not '%s'", msg ? msg : "parsed", want);
    }
}
END_TEST

/* ------------------------------------------------------------------------
 * The document
 */

/* Blocks, runs, figures, citations, terms, widgets and predicts come out
 * as the text has them, in order. */
START_TEST(document_shape)
{
    static const char TEXT[] =
        HEADER "\n# Heading\n\nSome *emph* and **strong**, `code`, a figure `=bytes_per_element --model llama-3.1-8b"
               " --format int4`, [slots](term:slots) and [3.56x](src:s1 \"the claim\").\n\n"
               "- item one\n  - nested\n1. first\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
               "```kvlab calc\n--model llama-3.1-8b\n```\n\n"
               "```kvlab-predict\nquestion: How big?\nanswer: gib:GiB --model llama-3.1-8b --batch 16\n"
               "choices: small | large\ncorrect: b\nexplain: It is `=gib:GiB --model llama-3.1-8b --batch 16`.\n```\n"
               "\n```sh\nkvlab calc\n```\n" SUMMARY;
    Lesson l;
    Error e;
    const char *msg = test_parse(TEXT, &l, &e);
    ck_assert_msg(!msg, "%s", msg);
    ck_assert_str_eq(l.id, "t");
    ck_assert_str_eq(l.title, "T");
    ck_assert_uint_eq(l.n_sources, 1);
    static const BlockKind KINDS[] = {BLOCK_HEADING,   BLOCK_PARAGRAPH, BLOCK_ITEM,      BLOCK_ITEM,
                                      BLOCK_ITEM,      BLOCK_PARAGRAPH, BLOCK_TABLE_ROW, BLOCK_TABLE_ROW,
                                      BLOCK_WIDGET,    BLOCK_PREDICT,   BLOCK_CODE,      BLOCK_HEADING,
                                      BLOCK_ITEM,      BLOCK_ITEM,      BLOCK_ITEM};
    ck_assert_uint_eq(l.n_blocks, N_OF(KINDS));
    for (size_t i = 0; i < N_OF(KINDS); i++)
        ck_assert_msg(l.blocks[i].kind == KINDS[i], "block %zu is %d, not %d", i, l.blocks[i].kind, KINDS[i]);
    ck_assert_int_eq(l.blocks[0].level, 1);
    ck_assert_int_eq(l.blocks[3].depth, 2);
    ck_assert(l.blocks[4].ordered && l.blocks[4].number == 1);
    ck_assert_int_eq(l.blocks[5].quote, 1);
    ck_assert(l.blocks[6].header && !l.blocks[7].header && l.blocks[7].n_cells == 2);
    ck_assert_str_eq(l.blocks[8].widget, "calc");
    ck_assert_str_eq(l.blocks[8].text, "--model llama-3.1-8b\n");
    ck_assert_str_eq(l.blocks[10].info, "sh");
    /* The paragraph's runs. */
    const LessonBlock *p = &l.blocks[1];
    int kinds[8] = {0}, styles = 0;
    for (size_t i = p->run0; i < p->run0 + p->n_runs; i++) {
        kinds[l.runs[i].kind]++;
        styles |= (int)l.runs[i].style;
        if (l.runs[i].kind == RUN_CITE) {
            ck_assert_str_eq(l.runs[i].text, "3.56x");
            ck_assert_str_eq(l.runs[i].target, "s1");
            ck_assert_str_eq(l.runs[i].title, "the claim");
        }
        if (l.runs[i].kind == RUN_TERM)
            ck_assert_str_eq(l.runs[i].target, "slots");
        if (l.runs[i].kind == RUN_FIGURE)
            ck_assert_str_eq(l.figures[l.runs[i].figure].text, "0.625 B");
    }
    ck_assert(kinds[RUN_CODE] == 1 && kinds[RUN_FIGURE] == 1 && kinds[RUN_CITE] == 1 && kinds[RUN_TERM] == 1);
    ck_assert_int_eq(styles, RUN_EMPH | RUN_STRONG);
    /* The predict. */
    const LessonPredict *pr = &l.predicts[l.blocks[9].predict];
    ck_assert_str_eq(pr->question, "How big?");
    ck_assert_uint_eq(pr->n_choices, 2);
    ck_assert_str_eq(pr->choices[1], "large");
    ck_assert_int_eq(pr->correct, 1);
    ck_assert_str_eq(l.figures[pr->answer].text, "16 GiB");
    ck_assert_uint_ge(pr->n_runs, 2);
    lesson_free(&l);
}
END_TEST

/* Every figure of a lesson of random queries evaluates to what the query
 * gives alone, and its position points at its query in the text. */
START_TEST(figures_random)
{
    static const char *const MODELS[] = {"llama-3.1-8b", "llama-3.1-70b", "mistral-7b-v0.1", "gemma-2-9b"};
    static const char *const METRICS[] = {"gib", "gb:GB:2", "bytes_per_sequence:MiB:1", "bytes_per_element",
                                          "compression", "elements"};
    Rng r = {test_seed()};
    char text[16384], queries[8][256];
    size_t len = (size_t)snprintf(text, sizeof text, "%s\n", HEADER);
    for (int i = 0; i < 8; i++) {
        snprintf(queries[i], sizeof queries[i], "%s --model %s --context %llu --batch %llu --format %s",
                 METRICS[rng_range(&r, 0, N_OF(METRICS) - 1)], MODELS[rng_range(&r, 0, N_OF(MODELS) - 1)],
                 (unsigned long long)rng_range(&r, 1, 200000), (unsigned long long)rng_range(&r, 1, 64),
                 format_at(rng_range(&r, 0, format_count() - 1))->id);
        len += (size_t)snprintf(text + len, sizeof text - len, "%sline %d: `=%s` here.\n\n",
                                rng_range(&r, 0, 1) ? "- " : "", i, queries[i]);
    }
    snprintf(text + len, sizeof text - len, "%s", SUMMARY);
    Lesson l;
    Error e;
    const char *msg = test_parse(text, &l, &e);
    ck_assert_seeded(!msg, "%s", msg);
    ck_assert_uint_eq(l.n_figures, 8);
    for (size_t i = 0; i < 8; i++) {
        QueryValue v;
        ck_assert_seeded(query_run(queries[i], &v, &e) == 0, "%s: %s", queries[i], e.msg);
        ck_assert_seeded(!strcmp(l.figures[i].text, v.text), "%s: %s, not %s", queries[i], l.figures[i].text,
                         v.text);
        /* line:col points at the query's first byte. */
        const char *s = text;
        for (int k = 1; k < l.figures[i].pos.line; k++)
            s = strchr(s, '\n') + 1;
        ck_assert_seeded(!strncmp(s + l.figures[i].pos.col - 1, queries[i], strlen(queries[i])),
                         "figure %zu at %d:%d", i, l.figures[i].pos.line, l.figures[i].pos.col);
    }
    lesson_free(&l);
}
END_TEST

/* ------------------------------------------------------------------------
 * The typed-number rule
 */
static int typed_in(const char *body, TypedNumber *t, size_t max)
{
    char text[8192];
    snprintf(text, sizeof text,
             "```kvlab-lesson\nid: t\ntitle: T\nquestion: Q?\nsource: s1 = a source\n```\n\n"
             "The cache is `=gb_per_sequence:GB:2 --model llama-3.1-70b --context 128000 --format bf16`.\n\n%s\n" SUMMARY,
             body);
    Lesson l;
    Error e;
    const char *msg = test_parse(text, &l, &e);
    ck_assert_msg(!msg, "%s", msg);
    int n = lesson_typed_numbers(&l, t, max, &e);
    ck_assert_msg(n >= 0, "%s", e.msg);
    lesson_free(&l);
    return n;
}

/* A number typed in prose that calc computes for the lesson's inputs, at
 * its printed precision, is flagged with its place and the query that
 * gives it; one in a unit of the same family too. */
START_TEST(typed_numbers_flagged)
{
    static const struct {
        const char *body, *number;
        int line, col;
    } FLAGGED[] = {
        {"That is 41.94 GB.", "41.94", 10, 9},
        {"Or 39.06 GiB.", "39.06", 10, 4},
        {"- About 42 GB in all.", "42", 10, 9},
        {"It takes 327,680 bytes a token.", "327,680", 10, 10},
        {"FP8 halves it: (20.97 GB).", "20.97", 10, 17},
    };
    for (size_t i = 0; i < N_OF(FLAGGED); i++) {
        TypedNumber t[4];
        int n = typed_in(FLAGGED[i].body, t, 4);
        ck_assert_msg(n >= 1, "'%s' not flagged", FLAGGED[i].body);
        ck_assert_str_eq(t[0].number, FLAGGED[i].number);
        ck_assert_msg(t[0].pos.line == FLAGGED[i].line && t[0].pos.col == FLAGGED[i].col, "'%s' at %d:%d",
                      FLAGGED[i].body, t[0].pos.line, t[0].pos.col);
        QueryValue v;
        Error e;
        ck_assert_msg(query_run(t[0].figure, &v, &e) == 0, "%s: %s", t[0].figure, e.msg);
        ck_assert_msg(!strcmp(v.number, FLAGGED[i].number) || strstr(v.text, FLAGGED[i].number), "%s gives %s",
                      t[0].figure, v.text);
    }
}
END_TEST

/* A number written to slip past the rule is still one: a unit glued on or
 * hyphenated, a tilde or emphasis around it, an exponent; and a unit word
 * after a number picks the figure of that unit for the query to write. */
START_TEST(typed_numbers_evasions)
{
    static const struct {
        const char *body, *number, *unit;
        int col;
    } FLAGGED[] = {
        {"That is 41.94GB.", "41.94GB", ":GB", 9},
        {"That is ~41.94 GB.", "41.94", ":GB", 10},
        {"That is 41.94-GB.", "41.94-GB", ":GB", 9},
        {"That is *41.94* GB.", "41.94", ":GB", 10},
        {"That is 4.194e10 B.", "4.194e10", ":B", 9},
        {"One sequence: 41.94 GB, or 39.06 GiB.", "41.94", ":GB", 15},
        {"Or 39.06 GiB, not 41.94 GB.", "39.06", ":GiB", 4},
        {"It is 39 GiB.", "39", ":GiB", 7},
    };
    for (size_t i = 0; i < N_OF(FLAGGED); i++) {
        TypedNumber t[4];
        int n = typed_in(FLAGGED[i].body, t, 4);
        ck_assert_msg(n >= 1, "'%s' not flagged", FLAGGED[i].body);
        ck_assert_str_eq(t[0].number, FLAGGED[i].number);
        ck_assert_msg(t[0].pos.line == 10 && t[0].pos.col == FLAGGED[i].col, "'%s' at %d:%d", FLAGGED[i].body,
                      t[0].pos.line, t[0].pos.col);
        ck_assert_msg(strstr(t[0].figure, FLAGGED[i].unit), "'%s': %s is not in %s", FLAGGED[i].body, t[0].figure,
                      FLAGGED[i].unit);
    }
    /* The second of two equal numbers in a paragraph is reported at its own place. */
    TypedNumber t[4];
    ck_assert_int_eq(typed_in("It is 41.94 GB, and 41.94 GB again.", t, 4), 2);
    ck_assert_int_eq(t[1].pos.col, 21);
    /* A model's name is not a size: 70B is no figure in bytes. */
    ck_assert_int_eq(typed_in("Llama-3.1-70B and 2B and 70B.", t, 4), 0);
}
END_TEST

/* Inputs named with their unit word, years, seeds' numbers, names with
 * digits, citations and code are not typed figures. */
START_TEST(typed_numbers_exempt)
{
    static const char *const EXEMPT[] = {
        "At 128,000 tokens and 128000 tokens.",
        "It has 80 layers, 8 KV heads and head dimension 128.",
        "It has 64 query heads.",
        "INT4 stores 4 bits in groups of 32.",
        "Published in 2024 by seed 003.",
        "Llama-3.1-70B, E4M3, 8k, 2^30 and 10^9 are names.",
        "The seed says [41.94 GB](src:s1 \"quoted\").",
        "Run `kvlab calc --context 128000` and see it in code: `41.94`.",
    };
    for (size_t i = 0; i < N_OF(EXEMPT); i++) {
        TypedNumber t[4];
        int n = typed_in(EXEMPT[i], t, 4);
        ck_assert_msg(n == 0, "'%s': %s flagged (%s)", EXEMPT[i], n ? t[0].number : "", n ? t[0].figure : "");
    }
}
END_TEST

/* A random figure of a random model, typed at the precision the lesson's
 * own query shows (in MiB, so with more than one significant digit), is
 * flagged. */
START_TEST(typed_numbers_random)
{
    static const char *const MODELS[] = {"llama-3.1-8b", "llama-3.1-70b", "mistral-7b-v0.1", "gemma-2-9b"};
    Rng r = {test_seed()};
    for (int round = 0; round < 4; round++) {
        char q[256];
        snprintf(q, sizeof q, "bytes:MiB:2 --model %s --context %llu --format %s",
                 MODELS[rng_range(&r, 0, N_OF(MODELS) - 1)], (unsigned long long)rng_range(&r, 1024, 131072),
                 format_at(rng_range(&r, 0, format_count() - 1))->id);
        QueryValue v;
        Error e;
        ck_assert_seeded(query_run(q, &v, &e) == 0, "%s: %s", q, e.msg);
        char text[4096];
        snprintf(text, sizeof text, HEADER "\nIt is `=%s`, that is %s MiB.\n" SUMMARY, q, v.number);
        Lesson l;
        const char *msg = test_parse(text, &l, &e);
        ck_assert_seeded(!msg, "%s", msg);
        TypedNumber t[4];
        int n = lesson_typed_numbers(&l, t, 4, &e);
        ck_assert_seeded(n >= 1, "%s typed beside `=%s` is not flagged", v.number, q);
        lesson_free(&l);
    }
}
END_TEST

/* ------------------------------------------------------------------------
 * The shipped lessons
 */
typedef struct {
    Glossary g;
    ExerciseSet x;
    LessonRefs refs;
} Shipped;

static bool shipped_exercise(const char *id, const void *ctx)
{
    return exercise_find(ctx, id) != NULL;
}

static void shipped_open(Shipped *s)
{
    Error e;
    char path[1024];
    snprintf(path, sizeof path, "%s/glossary.json", lessondir());
    ck_assert_msg(glossary_load(&s->g, path, &e) == 0, "%s", e.msg);
    snprintf(path, sizeof path, "%s/exercises", lessondir());
    memset(&s->x, 0, sizeof s->x);
    ck_assert_msg(exercise_load_dir(&s->x, path, &e) == 0, "%s", e.msg);
    s->refs = (LessonRefs){.datadir = test_datadir(), .term_known = glossary_knows, .term_ctx = &s->g,
                           .exercise_known = shipped_exercise, .exercise_ctx = &s->x};
}

static void shipped_close(Shipped *s)
{
    glossary_free(&s->g);
    exercise_set_free(&s->x);
}

/* The shipped lessons' file names (NN-slug.md), sorted; returns how many. */
static size_t shipped_lessons(char names[][256], size_t max)
{
    DIR *d = opendir(lessondir());
    ck_assert_msg(d != NULL, "cannot open %s", lessondir());
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d)) && n < max;) {
        size_t len = strlen(de->d_name);
        if (len > 6 && de->d_name[2] == '-' && !strcmp(de->d_name + len - 3, ".md"))
            snprintf(names[n++], 256, "%s", de->d_name);
    }
    closedir(d);
    qsort(names, n, 256, (int (*)(const void *, const void *))strcmp);
    return n;
}

/* Every shipped lesson parses with every reference resolved, every figure
 * evaluates, and no typed number in it is one calc computes. */
START_TEST(shipped_lessons_check)
{
    Shipped s;
    shipped_open(&s);
    static char names[64][256];
    size_t n = shipped_lessons(names, 64);
    ck_assert_uint_ge(n, 1);
    for (size_t i = 0; i < n; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%.1000s/%.255s", lessondir(), names[i]);
        Lesson l;
        Error e;
        ck_assert_msg(lesson_load(&l, path, &s.refs, &e) == 0, "%s", e.msg);
        ck_assert_msg(lesson_eval(&l, &e) == 0, "%s", e.msg);
        for (size_t k = 0; k < l.n_figures; k++)
            ck_assert_msg(l.figures[k].evaluated && *l.figures[k].text, "%s: figure %zu", path, k);
        /* The file's slug is its id. */
        ck_assert_msg(!strncmp(names[i] + 3, l.id, strlen(l.id)) && !strcmp(names[i] + 3 + strlen(l.id), ".md"),
                      "%s holds lesson '%s'", names[i], l.id);
        TypedNumber t[8];
        int typed = lesson_typed_numbers(&l, t, 8, &e);
        ck_assert_msg(typed == 0, "%s:%d:%d: typed number %s is %s", path, typed > 0 ? t[0].pos.line : 0,
                      typed > 0 ? t[0].pos.col : 0, typed > 0 ? t[0].number : e.msg, typed > 0 ? t[0].figure : "");
        lesson_free(&l);
    }
    shipped_close(&s);
}
END_TEST

/* An exercise's typed number is found in the text it is in, at its column,
 * with its answer's query as an input. */
START_TEST(exercise_typed_found)
{
    static const char FILE_TEXT[] =
        "{\"exercises\": [{\"id\": \"x-1\", \"lesson\": \"l\", \"kind\": \"number\", \"level\": \"compute\",\n"
        "  \"question\": \"How many sequences fit? NVFP4 fits 71.\", \"hint\": \"FP8 fits 40 sequences.\",\n"
        "  \"answer\": \"slots --scenario pool-20gib --format fp8_e4m3\", \"solution\": \"It is 71 and 40.\"}]}";
    ExerciseSet set = {0};
    Error e;
    ck_assert_msg(exercise_load_file(&set, "x.json", FILE_TEXT, strlen(FILE_TEXT), &e) == 0, "%s", e.msg);
    TypedNumber t[8];
    int n = exercise_typed_numbers(&set.ex[0], t, 8, &e);
    ck_assert_msg(n == 4, "%d typed numbers", n);
    ck_assert(!strcmp(t[0].where, "question") && !strcmp(t[0].number, "71") && t[0].pos.col == 36);
    ck_assert(!strcmp(t[1].where, "hint") && !strcmp(t[1].number, "40") && t[1].pos.col == 10);
    ck_assert(!strcmp(t[2].where, "solution") && !strcmp(t[3].where, "solution"));
    exercise_set_free(&set);
}
END_TEST

/* No shipped exercise types, in its question, hint, solution or choices, a
 * number calc computes for its answer or its figures; nor does a glossary
 * definition for its figures. */
START_TEST(shipped_exercises_typed)
{
    Shipped s;
    shipped_open(&s);
    static char found[65536];
    found[0] = 0;
    size_t len = 0;
    for (size_t i = 0; i < s.x.n; i++) {
        const Exercise *x = &s.x.ex[i];
        TypedNumber t[8];
        Error e;
        int typed = exercise_typed_numbers(x, t, 8, &e);
        ck_assert_msg(typed >= 0, "%s: %s", x->id, e.msg);
        for (int k = 0; k < typed && k < 8 && len < sizeof found; k++)
            len += (size_t)snprintf(found + len, sizeof found - len, "\n%s, %s: %s is `=%s`", x->id, t[k].where,
                                    t[k].number, t[k].figure);
    }
    for (size_t i = 0; i < s.g.n; i++) {
        RuleText text = {s.g.entries[i].term, s.g.entries[i].definition};
        TypedNumber t[8];
        Error e;
        int typed = text_typed_numbers(&text, 1, NULL, 0, t, 8, &e);
        ck_assert_msg(typed >= 0, "%s: %s", text.name, e.msg);
        for (int k = 0; k < typed && k < 8 && len < sizeof found; k++)
            len += (size_t)snprintf(found + len, sizeof found - len, "\nglossary %s: %s is `=%s`", t[k].where,
                                    t[k].number, t[k].figure);
    }
    if (getenv("KVLAB_TYPED_ALL"))
        fprintf(stderr, "%s\n", found);
    ck_assert_msg(!len, "typed numbers calc computes:%.1500s", found);
    shipped_close(&s);
}
END_TEST

/* The rule reads an exercise file as it is shipped: a figure typed into
 * its hint or solution is flagged, in whatever unit it is typed, while
 * its inputs (layers, heads, tokens, BF16's 2 bytes) are not. */
START_TEST(exercise_file_typed_flagged)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/exercise_typed.json", test_testdata());
    ExerciseSet set = {0};
    Error e;
    ck_assert_msg(exercise_load_file(&set, path, NULL, 0, &e) == 0, "%s", e.msg);
    TypedNumber t[8];
    int n = exercise_typed_numbers(&set.ex[0], t, 8, &e);
    static const struct {
        const char *where, *number;
    } WANT[] = {{"hint", "327,680"}, {"solution", "42"}, {"solution", "41.94"}, {"solution", "39.06"}};
    ck_assert_msg(n == (int)N_OF(WANT), "%d typed numbers", n);
    for (size_t i = 0; i < N_OF(WANT); i++)
        ck_assert_msg(!strcmp(t[i].where, WANT[i].where) && !strcmp(t[i].number, WANT[i].number), "%zu: %s %s is %s", i,
                      t[i].where, t[i].number, t[i].figure);
    exercise_set_free(&set);
}
END_TEST

/* A number that is one of the inputs, in any unit it is written in, is
 * not a figure; nor is one of a single significant digit, which stands
 * for too wide a range to tell which figure it would be; the same figure
 * written to two digits or more is flagged. */
START_TEST(typed_numbers_inputs_and_precision)
{
    static const char FIGURE[] = "`=slots --model llama-3.1-8b --gpu h100-sxm --pool 60GB --context 32k --format bf16`";
    static const struct {
        const char *body, *number;       // number NULL: nothing flagged
    } CASES[] = {
        {"The pool is 60 GB, that is 55.88 GiB, beside 16 GB of weights.", NULL},
        {"The GPU reads 3,352 GB/s.", NULL},
        {"A context of 32,768, a KiB of 1,024 B, a GiB of 1,073,741,824 B.", NULL},
        {"BF16 takes 2 bytes, K and V make 2, about 4 GB a sequence.", NULL},
        {"It holds 13 sequences.", "13"},
        {"About 4.3 GB a sequence.", "4.3"},
        {"One sequence is 4.29 GB.", "4.29"},
    };
    for (size_t i = 0; i < N_OF(CASES); i++) {
        char text[4096];
        snprintf(text, sizeof text, HEADER "\nIt holds %s.\n\n%s\n" SUMMARY, FIGURE, CASES[i].body);
        Lesson l;
        Error e;
        const char *msg = test_parse(text, &l, &e);
        ck_assert_msg(!msg, "%s", msg);
        TypedNumber t[4];
        int n = lesson_typed_numbers(&l, t, 4, &e);
        if (CASES[i].number)
            ck_assert_msg(n == 1 && !strcmp(t[0].number, CASES[i].number), "'%s': %d flagged", CASES[i].body, n);
        else
            ck_assert_msg(n == 0, "'%s': %s flagged (%s)", CASES[i].body, n ? t[0].number : "", n ? t[0].figure : "");
        lesson_free(&l);
    }
}
END_TEST

/* ------------------------------------------------------------------------
 * The glossary
 */

/* A malformed glossary is refused with its line and column. */
START_TEST(glossary_errors)
{
    static const struct {
        const char *text, *where, *says;
    } BAD[] = {
        {"{\"terms\": [}", "g.json:1:12: ", ""},
        {"{\"words\": []}", "g.json:1:2: ", "words"},
        {"{\"terms\": [{\"term\": \"a\", \"definition\": \"x\", \"colour\": 1}]}", "g.json:1:", "colour"},
        {"{\"terms\": [{\"term\": \"a\"}]}", "g.json:1:", "definition"},
        {"{\"terms\": [{\"term\": \"a\", \"definition\": \"x\"},\n {\"term\": \"A\", \"definition\": \"y\"}]}",
         "g.json:2:2: ", "'A' is already a term"},
        {"{\"terms\": [{\"term\": \"a\", \"aliases\": [\"b\"], \"definition\": \"x\"},\n"
         " {\"term\": \"c\", \"aliases\": [\"b\"], \"definition\": \"y\"}]}",
         "g.json:2:2: ", "'b' is already an alias"},
        {"{\"terms\": [{\"term\": \"a\", \"definition\": \"x\", \"see\": [\"zz\"]}]}", "g.json:1:", "see 'zz'"},
        {"{\"terms\": [{\"term\": \"a\",\n \"definition\": \"It is `=nope --model x`.\"}]}", "g.json:2:16: ",
         "nope"},
        {"{\"terms\": [{\"term\": \"a\", \"definition\": \"A [b](term:b).\"}]}", "g.json:1:", "unknown term 'b'"},
        {"{\"terms\": [{\"term\": \"\", \"definition\": \"x\"}]}", "g.json:1:", "empty"},
        {"{\"terms\": [{\"term\": \"a\", \"aliases\": [1], \"definition\": \"x\"}]}", "g.json:1:", "aliases"},
        {"{\"terms\": [{\"term\": \"a\", \"definition\": \"x\",\n \"lesson\": \"nope\"}]}", "g.json:2:12: ",
         "unknown lesson 'nope'"},
        {"{\"terms\": [{\"term\": \"a\", \"definition\": \"# A heading\"}]}", "g.json:1:", "paragraphs of text"},
        {"{\"terms\": [{\"term\": \"a\", \"definition\": \"x\\n\\n- a list\"}]}", "g.json:1:", "paragraphs of text"},
        {"{\"terms\": [{\"term\": \"a\", \"definition\": \"x\\n\\n```kvlab calc\\n--colour\\n```\"}]}", "g.json:1:",
         "paragraphs of text"},
    };
    for (size_t i = 0; i < N_OF(BAD); i++) {
        Glossary g;
        Error e;
        ck_assert_msg(glossary_parse(&g, "g.json", BAD[i].text, strlen(BAD[i].text), &e) != 0, "case %zu loaded",
                      i);
        ck_assert_msg(!strncmp(e.msg, BAD[i].where, strlen(BAD[i].where)) && strstr(e.msg, BAD[i].says),
                      "case %zu: '%s' (want %s... %s)", i, e.msg, BAD[i].where, BAD[i].says);
    }
}
END_TEST

/* An exercise file loaded with refs has its lessons, term links and task
 * settings checked as a lesson's are (settings by the widget of the task's
 * screen), and a \u0000 escape is refused even without refs, each at its
 * line and column. */
#define EX_OPEN "{\"exercises\": [{\"id\": \"x-1\", \"kind\": \"task\", \"level\": \"recall\", \"hint\": \"h\",\n"
START_TEST(exercise_refs_checked)
{
    static const struct {
        const char *text, *where, *says;
    } BAD[] = {
        {EX_OPEN " \"lesson\": \"nope\", \"question\": \"q\", \"screen\": \"calc\", \"steps\": [\"s\"]}]}", "x.json:2:12: ",
         "unknown lesson 'nope'"},
        {EX_OPEN " \"lesson\": \"capacity\", \"question\": \"A [slot](term:slotz)\", \"screen\": \"calc\", "
                 "\"steps\": [\"s\"]}]}", "x.json:2:36: ", "unknown term 'slotz'"},
        {EX_OPEN " \"lesson\": \"capacity\", \"question\": \"q\", \"screen\": \"calc\", \"steps\": [\"[KV](<term:KVV>)\"]}]}",
         "x.json:2:", "unknown term 'KVV'"},
        {EX_OPEN " \"lesson\": \"capacity\", \"question\": \"q\", \"screen\": \"calc\", \"steps\": [\"s\"],\n"
                 " \"settings\": \"--model llama-3.1-8b --bad\"}]}", "x.json:3:14: ", "settings': unknown option '--bad'"},
        {EX_OPEN " \"lesson\": \"capacity\", \"question\": \"q\", \"screen\": \"niah\", \"steps\": [\"s\"],\n"
                 " \"settings\": \"--trials 5 --bad\"}]}", "x.json:3:14: ", "settings': unknown option '--bad'"},
        {EX_OPEN " \"lesson\": \"capacity\", \"question\": \"a\\u0000b\", \"screen\": \"calc\", \"steps\": [\"s\"]}]}",
         "x.json:2:38: ", "\\u0000"},
    };
    LessonRefs refs = test_refs();
    refs.lesson_known = test_lesson_known;
    for (size_t i = 0; i < N_OF(BAD); i++) {
        ExerciseSet set = {.refs = &refs};
        Error e;
        ck_assert_msg(exercise_load_file(&set, "x.json", BAD[i].text, strlen(BAD[i].text), &e) != 0,
                      "case %zu loaded", i);
        ck_assert_msg(!strncmp(e.msg, BAD[i].where, strlen(BAD[i].where)) && strstr(e.msg, BAD[i].says),
                      "case %zu: '%s' (want %s... %s)", i, e.msg, BAD[i].where, BAD[i].says);
        exercise_set_free(&set);
    }
    /* The same file with a known lesson, term and settings loads. */
    static const char OK[] = EX_OPEN " \"lesson\": \"capacity\", \"question\": \"A [slot](term:slots)\", "
                                     "\"screen\": \"calc\", \"steps\": [\"s\"], \"settings\": \"--model llama-3.1-8b\"}]}";
    ExerciseSet set = {.refs = &refs};
    Error e;
    ck_assert_msg(exercise_load_file(&set, "x.json", OK, strlen(OK), &e) == 0, "%s", e.msg);
    exercise_set_free(&set);
}
END_TEST

/* Terms are found by name or alias in any case; the nearest terms to a
 * misspelt one come first, for random misspellings of real terms. */
START_TEST(glossary_lookup)
{
    Shipped s;
    shipped_open(&s);
    ck_assert_ptr_nonnull(glossary_find(&s.g, "SLOTS"));
    ck_assert_str_eq(glossary_find(&s.g, "B/elem")->term, "bytes per element");
    ck_assert_ptr_null(glossary_find(&s.g, "no such term"));
    Rng r = {test_seed()};
    for (int round = 0; round < 20; round++) {
        const GlossaryEntry *t = &s.g.entries[rng_range(&r, 0, s.g.n - 1)];
        char typo[GLOSSARY_TERM_MAX];
        snprintf(typo, sizeof typo, "%s", t->term);
        size_t at = rng_range(&r, 0, strlen(typo) - 1);
        typo[at] = typo[at] == 'q' ? 'z' : 'q';         // one letter changed
        const GlossaryEntry *near[3];
        size_t n = glossary_nearest(&s.g, typo, near, 3);
        bool found = false;
        for (size_t k = 0; k < n; k++)
            found |= near[k] == t;
        ck_assert_seeded(found || glossary_find(&s.g, typo), "'%s' (from '%s') does not find it", typo, t->term);
    }
    /* Nothing is near a word of random letters that shares none with it: a
     * run of one letter, twelve long, is no term's third away. */
    for (int round = 0; round < 20; round++) {
        char far[13];
        memset(far, (int)('j' + rng_range(&r, 0, 2)), 12);
        far[12] = '\0';
        const GlossaryEntry *near[3];
        ck_assert_seeded(glossary_nearest(&s.g, far, near, 3) == 0, "'%s' is near '%s'", far, near[0]->term);
    }
    shipped_close(&s);
}
END_TEST

/* Every term's lesson is a shipped lesson. */
START_TEST(glossary_lessons_exist)
{
    Shipped s;
    shipped_open(&s);
    static char names[64][256];
    size_t n = shipped_lessons(names, 64);
    for (size_t i = 0; i < s.g.n; i++) {
        const char *id = s.g.entries[i].lesson;
        if (!*id)
            continue;
        bool found = false;
        for (size_t k = 0; k < n && !found; k++)
            found = !strncmp(names[k] + 3, id, strlen(id)) && !strcmp(names[k] + 3 + strlen(id), ".md");
        ck_assert_msg(found, "term '%s': lesson '%s' is not shipped", s.g.entries[i].term, id);
    }
    shipped_close(&s);
}
END_TEST

/* ------------------------------------------------------------------------
 * Every label the lab shows has a glossary entry or is a plain word.
 *
 * The labels are collected from the sources that draw them: the fields of
 * every screen (`(Field){"Label"`), the headers of every table
 * (`table_header(t, "a", "b", NULL)`), the formats table's column names
 * (report.c's `table_cell(t, "name")`), the quantization errors' names
 * (`{"K error", offsetof`), and the formats' and schemes' names and their
 * parts (fp8_e4m3: fp8, e4m3).
 */
static const char *const PLAIN_WORDS[] = {
    "Keys", "Timed runs", "ratio", "published", "as set", "Seed", "n", "none", "generated", "worked 4x4", "never",
    "you",
    NULL,
};

static void label_check(const Glossary *g, const char *label, const char *where)
{
    ck_assert_msg(glossary_find(g, label) || test_in(PLAIN_WORDS, label),
                  "%s: the label '%s' has no glossary entry (lessons/glossary.json) and is not a plain word",
                  where, label);
}

/* The string literals from p up to the end of the call (a ')' outside
 * quotes), each checked. */
static void label_literals(const Glossary *g, const char *p, const char *where)
{
    while (*p && *p != ')' && *p != ';') {
        if (*p == '"') {
            const char *end = strchr(p + 1, '"');
            char label[128];
            snprintf(label, sizeof label, "%.*s", (int)(end - p - 1), p + 1);
            label_check(g, label, where);
            p = end + 1;
        } else {
            p++;
        }
    }
}

static char *label_read(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

START_TEST(glossary_covers_labels)
{
    Shipped s;
    shipped_open(&s);
    static const char *const FILES[] = {"tui/report.c", "tui/lab/screen_calc.c", "tui/lab/screen_quant.c",
                                        "tui/lab/screen_gpu.c", "tui/lab/screen_scenarios.c"};
    size_t found = 0;
    for (size_t i = 0; i < N_OF(FILES); i++) {
        const char *text = label_read(FILES[i]);
        static const char *const OPENERS[] = {"(Field){", "table_header(", "table_cell(t, \"", "{\""};
        for (size_t k = 0; k < N_OF(OPENERS); k++)
            for (const char *p = strstr(text, OPENERS[k]); p; p = strstr(p + 1, OPENERS[k])) {
                const char *q = p + strlen(OPENERS[k]);
                if (k == 0 && *q == '"') {                      // the field's label only
                    const char *end = strchr(q + 1, '"');
                    char label[128];
                    snprintf(label, sizeof label, "%.*s", (int)(end - q - 1), q + 1);
                    label_check(&s.g, label, FILES[i]);
                    found++;
                } else if (k == 1) {
                    label_literals(&s.g, strchr(q, ','), FILES[i]);
                    found++;
                } else if (k == 2 && strstr(FILES[i], "report.c")) {
                    const char *end = strchr(q, '"');
                    if (end[1] == ')') {                        // a fixed header cell, not a format
                        char label[128];
                        snprintf(label, sizeof label, "%.*s", (int)(end - q), q);
                        label_check(&s.g, label, FILES[i]);
                        found++;
                    }
                } else if (k == 3) {
                    const char *end = strchr(q, '"');
                    if (end && !strncmp(end, "\", offsetof(", 12)) {   // an error metric's name
                        char label[128];
                        snprintf(label, sizeof label, "%.*s", (int)(end - q), q);
                        label_check(&s.g, label, FILES[i]);
                        found++;
                    }
                }
            }
    }
    ck_assert_uint_ge(found, 30);           // the collection itself still finds the labels
    for (size_t i = 0; i < format_count(); i++) {
        char id[64];
        snprintf(id, sizeof id, "%s", format_at(i)->id);
        label_check(&s.g, id, "calc/format.c");
        for (char *part = strtok(id, "_"); part; part = strtok(NULL, "_"))
            label_check(&s.g, part, "calc/format.c");
    }
    static const char *const SCHEMES_AND_MORE[] = {"int-min", "int-zp", "int-sym", "fp8", "nvfp4", "mxfp4",
                                                   "KIVI",    "tensor", "token",   "channel", "group", "tgroup",
                                                   "RoPE",    "pre",    "post",    "Hadamard", "GQA", "MHA",
                                                   "E2M1",    "block scale", "tensor scale", "residual",
                                                   "crossover", "step floor", "softmax TV", "scale B", "paged",
                                                   "slots"};
    for (size_t i = 0; i < N_OF(SCHEMES_AND_MORE); i++)
        label_check(&s.g, SCHEMES_AND_MORE[i], "the issue's list");
    shipped_close(&s);
}
END_TEST

/* ------------------------------------------------------------------------
 * The commands
 */

/* Writes text to a fresh file in the test's directory; returns its path. */
static const char *test_file(const char *name, const char *text)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s-%d", P_tmpdir, name, (int)getpid());
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* `kvlab lesson` lists, shows and checks lessons with the contract's exit
 * codes: 0 done, 1 a typed figure found, 2 bad usage, an unknown id or a
 * malformed file (with its line and column). */
START_TEST(cli_lesson)
{
    RunResult r = run_kvlab((const char *[]){"lesson", "list", NULL}, NULL);
    ck_assert_msg(r.status == 0 && strstr(r.out, "why-kv-grows"), "%d %s", r.status, r.err);
    run_free(&r);
    r = run_kvlab((const char *[]){"lesson", "show", "why-kv-grows", NULL}, NULL);
    ck_assert_msg(r.status == 0 && strstr(r.out, "41.94 GB") && strstr(r.out, "Summary") && !*r.err, "%d %s",
                  r.status, r.err);
    run_free(&r);
    /* A predict's reveal names its right choice before the figure. */
    r = run_kvlab((const char *[]){"lesson", "show", "execution-paths", NULL}, NULL);
    ck_assert_msg(r.status == 0 && strstr(r.out, "Answer: c) neither: they are the same: "), "%d %s", r.status, r.err);
    run_free(&r);
    r = run_kvlab((const char *[]){"lesson", "show", "why-kv-grows", "--json", NULL}, NULL);
    cJSON *j = cJSON_Parse(r.out);
    ck_assert_msg(r.status == 0 && j && cJSON_GetObjectItem(j, "blocks"), "%d %s", r.status, r.err);
    cJSON_Delete(j);
    run_free(&r);
    /* A lesson is shown by its number in the list as by its id; a number
     * no lesson has is refused. */
    r = run_kvlab((const char *[]){"lesson", "show", "1", NULL}, NULL);
    ck_assert_msg(r.status == 0 && strstr(r.out, "41.94 GB"), "%d %s", r.status, r.err);
    run_free(&r);
    r = run_kvlab((const char *[]){"lesson", "show", "99", NULL}, NULL);
    ck_assert_msg(r.status == 2 && strstr(r.err, "no lesson number 99; the lessons are numbered 1 to"), "%d %s",
                  r.status, r.err);
    run_free(&r);
    r = run_kvlab((const char *[]){"lesson", "show", "no-such-lesson", NULL}, NULL);
    ck_assert_msg(r.status == 2 && strstr(r.err, "unknown lesson 'no-such-lesson'"), "%d %s", r.status, r.err);
    run_free(&r);
    r = run_kvlab((const char *[]){"lesson", "shw", NULL}, NULL);
    ck_assert_int_eq(r.status, 2);
    run_free(&r);

    const char *typed = test_file("typed.md", HEADER "\nOne sequence: `=gib:GiB --model llama-3.1-8b --context 10000`, "
                                                     "that is 1.22 GiB.\n" SUMMARY);
    r = run_kvlab((const char *[]){"lesson", "check", typed, NULL}, NULL);
    ck_assert_msg(r.status == 1 && strstr(r.out, ":8:") && strstr(r.out, "typed number 1.22"), "%d %s %s", r.status,
                  r.out, r.err);
    /* One figure is "1 figure", in the singular. */
    ck_assert_msg(strstr(r.out, ", 1 figure, 1 typed number calc computes"), "%s", r.out);
    run_free(&r);
    unlink(typed);
    /* A niah widget is shown as kvlab niah prints its grid: lesson 11's
     * runs 2-bit keys per token and per channel, and the rule rejects
     * the one per token. */
    r = run_kvlab((const char *[]){"lesson", "show", "validating", NULL}, NULL);
    ck_assert_msg(r.status == 0 && strstr(r.out, "[niah widget] kvlab niah --lengths 1k,4k") &&
                      strstr(r.out, "Per format over the grid") && strstr(r.out, "int2-k-token    simulated") &&
                      strstr(r.out, "rejected"),
                  "%d %s %s", r.status, r.out, r.err);
    run_free(&r);
    /* Checking a niah widget checks kvlab niah's options and runs no grid:
     * this one, run, would want 40 GB and hours; checked, it passes, and a
     * bad option in it is named. */
    const char *huge = test_file("huge.md", HEADER "\n```kvlab niah\n--lengths 16m --trials 10000 --format int4\n```\n"
                                                  SUMMARY);
    r = run_kvlab((const char *[]){"lesson", "check", huge, NULL}, NULL);
    ck_assert_msg(r.status == 0, "%d %s %s", r.status, r.out, r.err);
    run_free(&r);
    const char *bad = test_file("bad.md", HEADER "\n```kvlab niah\n--lengths 1k --trials 0\n```\n" SUMMARY);
    r = run_kvlab((const char *[]){"lesson", "check", bad, NULL}, NULL);
    ck_assert_msg(r.status == 2 && strstr(r.err, ":9:1: widget niah: --trials"), "%d %s", r.status, r.err);
    run_free(&r);
    const char *widget = test_file("widget.md", HEADER "\n```kvlab quant\n--bits 99\n```\n" SUMMARY);
    r = run_kvlab((const char *[]){"lesson", "check", widget, NULL}, NULL);
    ck_assert_msg(r.status == 2 && strstr(r.err, ":9:1: widget quant: --bits"), "%d %s", r.status, r.err);
    run_free(&r);
    unlink(widget);
    const char *unknown = test_file("unknown.md", HEADER "\n```kvlab clock\n```\n" SUMMARY);
    r = run_kvlab((const char *[]){"lesson", "check", unknown, NULL}, NULL);
    ck_assert_msg(r.status == 2 && strstr(r.err, ":8:1: unknown widget 'clock'; expected calc"), "%d %s",
                  r.status, r.err);
    run_free(&r);
    unlink(unknown);
}
END_TEST

/* Every shipped lesson renders as text without an error, its prose lines
 * within the width asked for. */
START_TEST(cli_lessons_render)
{
    static char names[64][256];
    size_t n = shipped_lessons(names, 64);
    for (size_t i = 0; i < n; i++) {
        char id[256];
        snprintf(id, sizeof id, "%.*s", (int)(strlen(names[i]) - 6), names[i] + 3);
        setenv("COLUMNS", "80", 1);
        RunResult r = run_kvlab((const char *[]){"lesson", "show", id, NULL}, NULL);
        unsetenv("COLUMNS");
        ck_assert_msg(r.status == 0 && !*r.err, "%s: %d %s", id, r.status, r.err);
        ck_assert_msg(strstr(r.out, "Summary"), "%s: no summary", id);
        run_free(&r);
    }
}
END_TEST

/* A figure's text ends in its unit; the unit written again after it
 * ("122,533 tokens tokens") is found in TEXT, its white space collapsed
 * first so that a repeat split over a wrapped line is found too.
 * Returns the unit repeated, or NULL. */
static const char *unit_repeated(const char *text)
{
    static const char *const UNITS[] = {"tokens", "B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB",
                                        "s", "ms", "us"};
    size_t n = strlen(text);
    char *flat = malloc(n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        bool space = text[i] == ' ' || text[i] == '\n' || text[i] == '\t';
        if (!space)
            flat[m++] = text[i];
        else if (m > 0 && flat[m - 1] != ' ')
            flat[m++] = ' ';
    }
    flat[m] = 0;
    const char *found = NULL;
    for (size_t u = 0; u < sizeof UNITS / sizeof *UNITS && !found; u++) {
        char pat[32];
        size_t len = (size_t)snprintf(pat, sizeof pat, " %s %s", UNITS[u], UNITS[u]);
        for (const char *p = strstr(flat, pat); p && !found; p = strstr(p + 1, pat)) {
            char after = p[len];
            if (p > flat && p[-1] >= '0' && p[-1] <= '9' && !isalnum((unsigned char)after))
                found = UNITS[u];
        }
    }
    free(flat);
    return found;
}

/* No shipped lesson, and no shipped exercise's question or solution, writes
 * a figure's unit again after the figure, which already shows it. */
START_TEST(shipped_units_not_repeated)
{
    ck_assert_ptr_null(unit_repeated("at 122,533 tokens; 41.94 GB or 39.06 GiB"));
    ck_assert_str_eq(unit_repeated("at 122,533 tokens\n    tokens each"), "tokens");
    ck_assert_str_eq(unit_repeated("takes 41.94 GB GB."), "GB");
    static char names[64][256];
    size_t n = shipped_lessons(names, 64);
    for (size_t i = 0; i < n; i++) {
        char id[256];
        snprintf(id, sizeof id, "%.*s", (int)(strlen(names[i]) - 6), names[i] + 3);
        RunResult r = run_kvlab((const char *[]){"lesson", "show", id, NULL}, NULL);
        ck_assert_msg(r.status == 0, "%s: %d %s", id, r.status, r.err);
        const char *unit = unit_repeated(r.out);
        ck_assert_msg(!unit, "lesson %s: a figure followed by '%s' again", id, unit);
        run_free(&r);
    }
    Shipped s;
    shipped_open(&s);
    for (size_t i = 0; i < s.x.n; i++) {
        const char *id = s.x.ex[i].id;
        RunResult r = run_kvlab((const char *[]){"exercise", "show", id, "--solution", NULL}, NULL);
        ck_assert_msg(r.status == 0, "%s: %d %s", id, r.status, r.err);
        const char *unit = unit_repeated(r.out);
        ck_assert_msg(!unit, "exercise %s: a figure followed by '%s' again", id, unit);
        run_free(&r);
    }
    shipped_close(&s);
}
END_TEST

/* The longest line of text, in columns (UTF-8 characters); 0 for none. */
static size_t widest_line(const char *text, const char **where)
{
    size_t best = 0, cols = 0;
    const char *line = text;
    *where = text;
    for (const char *p = text;; p++) {
        if (*p == '\n' || !*p) {
            if (cols > best)
                best = cols, *where = line;
            if (!*p)
                return best;
            cols = 0;
            line = p + 1;
        } else {
            cols += ((unsigned char)*p & 0xC0) != 0x80;
        }
    }
}

/* A table too wide for its width goes in parts, each of which repeats its
 * key columns (Table.keys) in front of its own: every part's header line
 * starts with them, and every row of every part names its cell. */
START_TEST(table_parts_repeat_keys)
{
    Table t;
    table_header(&t, "format", "length", "depth", "alpha", "beta", "gamma", "delta", "epsilon", NULL);
    t.keys = 3;
    for (int r = 0; r < 4; r++) {
        table_row(&t);
        table_cell(&t, "fmt%d", r);
        table_cell(&t, "%d", 1024 << r);
        table_cell(&t, "0.%d", r);
        for (int c = 0; c < 5; c++)
            table_cell(&t, "%s", "0.123456789012");
    }
    char *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&out, &size);
    table_print_width(&t, f, 60);
    fclose(f);
    size_t parts = 0;
    for (const char *p = out; (p = strstr(p, "format")); p++) {
        ck_assert_msg(!strncmp(p, "format  length  depth", 21), "a part without its keys:\n%s", out);
        parts++;
    }
    ck_assert_msg(parts >= 2, "one part only:\n%s", out);
    for (int r = 0; r < 4; r++) {
        char key[16];
        snprintf(key, sizeof key, "fmt%d ", r);
        size_t seen = 0;
        for (const char *p = out; (p = strstr(p, key)); p++)
            seen += strtol(p + strlen(key), NULL, 10) == 1024 << r;     // its length beside it
        ck_assert_msg(seen == parts, "row %d keyed in %zu of %zu parts:\n%s", r, seen, parts, out);
    }
    free(out);
    table_free(&t);
}
END_TEST

/* A column whose cells begin with digits reads as numbers (right-aligned),
 * yet its cells still wrap between words to fit: "16 element 16 per-tensor"
 * is words, and before the rule held, such a column kept its whole width
 * and the table overran (seed 1796185315 of table_fits_width). */
START_TEST(table_number_led_words_wrap)
{
    static Table t;
    table_init(&t, 2);
    table_row(&t);
    table_cell(&t, "a FP8 bytes a");
    table_cell(&t, "FP8 per of scale metadata FP8");
    table_row(&t);
    table_cell(&t, "a E4M3 16 of");
    table_cell(&t, "16 element 16 per-tensor E4M3");
    char *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&out, &size);
    table_print_width(&t, f, 34);
    fclose(f);
    const char *w;
    ck_assert_msg(widest_line(out, &w) <= 34, "wider than 34:\n%s", out);
    ck_assert_msg(strstr(out, "per-tensor") && strstr(out, "metadata"), "a word lost:\n%s", out);
    free(out);
    table_free(&t);
}
END_TEST

/* A random table of words and numbers printed within a random width fits
 * it (its cells wrapped, the columns in parts where they must be), and
 * every word and number of every cell is in it whole. */
START_TEST(table_fits_width)
{
    static const char *const WORDS[] = {"a", "bytes", "per", "element", "metadata", "scale", "FP8", "E4M3",
                                        "per-tensor", "group", "of", "16"};
    Rng r = {test_seed()};
    for (int round = 0; round < 50; round++) {
        size_t cols = rng_range(&r, 1, 12), rows = rng_range(&r, 1, 8);
        int width = (int)rng_range(&r, 30, 120);
        static Table t;
        table_init(&t, cols);
        static char cells[8][12][128];
        for (size_t i = 0; i < rows; i++) {
            table_row(&t);
            for (size_t c = 0; c < cols; c++) {
                char *cell = cells[i][c];
                size_t len = 0;
                if (c > 0 && i > 0 && c % 2)    // a number column: one number, up to 12 digits
                    len += (size_t)snprintf(cell, 128, "%llu", (unsigned long long)rng_range(&r, 0, 999999999999ull));
                else
                    for (size_t k = 0, n = rng_range(&r, 1, 6); k < n; k++)
                        len += (size_t)snprintf(cell + len, 128 - len, "%s%s", k ? " " : "",
                                                WORDS[rng_range(&r, 0, N_OF(WORDS) - 1)]);
                table_cell(&t, "%s", cell);
            }
        }
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);
        table_print_width(&t, f, width);
        fclose(f);
        const char *w;
        size_t widest = widest_line(out, &w);
        ck_assert_seeded(widest <= (size_t)width, "%zu columns in %d: %.100s", widest, width, w);
        for (size_t i = 0; i < rows; i++)
            for (size_t c = 0; c < cols; c++) {
                char *text = strdup(cells[i][c]);
                ck_assert_ptr_nonnull(text);
                for (char *save, *word = strtok_r(text, " ", &save); word; word = strtok_r(NULL, " ", &save))
                    ck_assert_seeded(strstr(out, word), "cell (%zu, %zu) word '%s' is not shown:\n%s", i, c, word, out);
                free(text);
            }
        free(out);
        table_free(&t);
    }
}
END_TEST

/* Every word of every table cell of the lesson in file `name` (its
 * figures worked out) is in out, the lesson as `lesson show` prints it:
 * a table laid out to the width loses no cell and cuts no number. */
static void lesson_cells_shown(const Shipped *s, const char *name, const char *out)
{
    size_t size = strlen(lessondir()) + strlen(name) + 2;
    char *path = malloc(size);
    ck_assert_ptr_nonnull(path);
    snprintf(path, size, "%s/%s", lessondir(), name);
    Lesson l;
    Error e;
    ck_assert_msg(lesson_load(&l, path, &s->refs, &e) == 0 && lesson_eval(&l, &e) == 0, "%s", e.msg);
    for (size_t b = 0; b < l.n_blocks; b++) {
        const LessonBlock *blk = &l.blocks[b];
        for (size_t i = blk->run0; blk->kind == BLOCK_TABLE_ROW && i < blk->run0 + blk->n_runs; i++) {
            const LessonRun *run = &l.runs[i];
            char *text = strdup(run->kind == RUN_FIGURE ? l.figures[run->figure].text : run->text);
            ck_assert_ptr_nonnull(text);
            for (char *save, *word = strtok_r(text, " ", &save); word; word = strtok_r(NULL, " ", &save))
                ck_assert_msg(strstr(out, word), "%s: the table's cell word '%s' is not shown", name, word);
            free(text);
        }
    }
    lesson_free(&l);
    free(path);
}

/* The teaching commands' own text fits an 80-column terminal: the lesson
 * and glossary lists, every lesson as `lesson show` prints it (its tables
 * and its widgets' output laid out to the width, every cell shown), the
 * help, and every exercise shown with its solution and checked with a
 * random wrong answer. */
START_TEST(cli_text_fits_80)
{
    setenv("COLUMNS", "80", 1);
    char home[] = "/tmp/kvlab-lesson-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(home));
    setenv("XDG_DATA_HOME", home, 1);
    static const char *const CMDS[][5] = {
        {"lesson", "list"}, {"glossary"}, {"lesson", "--help"}, {"glossary", "--help"}, {"exercise", "--help"},
    };
    for (size_t i = 0; i < N_OF(CMDS); i++) {
        RunResult r = run_kvlab((const char *[]){CMDS[i][0], CMDS[i][1], CMDS[i][2], NULL}, NULL);
        const char *w;
        size_t cols = widest_line(r.out, &w);
        ck_assert_msg(r.status == 0 && cols <= 80, "%s %s: %zu columns: %.100s", CMDS[i][0],
                      CMDS[i][1] ? CMDS[i][1] : "", cols, w);
        run_free(&r);
    }
    Shipped s;
    shipped_open(&s);
    char names[64][256];
    size_t n_lessons = shipped_lessons(names, 64);
    for (size_t n = 1; n <= n_lessons; n++) {
        char id[24];
        snprintf(id, sizeof id, "%zu", n);
        RunResult r = run_kvlab((const char *[]){"lesson", "show", id, NULL}, NULL);
        const char *w;
        size_t cols = widest_line(r.out, &w);
        ck_assert_msg(r.status == 0 && cols <= 80, "lesson %zu: %zu columns: %.100s", n, cols, w);
        lesson_cells_shown(&s, names[n - 1], r.out);
        run_free(&r);
    }
    Rng rng = {test_seed()};
    for (size_t i = 0; i < s.x.n; i++) {
        const Exercise *x = &s.x.ex[i];
        char answer[32];
        snprintf(answer, sizeof answer, "%s", x->kind == EXERCISE_CHOICE ? "a" : "");
        if (x->kind != EXERCISE_CHOICE)
            snprintf(answer, sizeof answer, "%.3g", (double)rng_range(&rng, 1, 100000) / 100.0);
        RunResult r = run_kvlab((const char *[]){"exercise", "show", x->id, "--solution", NULL}, NULL);
        const char *w;
        size_t cols = widest_line(r.out, &w);
        ck_assert_seeded(cols <= 80, "exercise show %s: %zu columns: %.100s", x->id, cols, w);
        run_free(&r);
        r = run_kvlab((const char *[]){"exercise", "check", x->id, answer, "--solution", NULL}, NULL);
        cols = widest_line(r.out, &w);
        ck_assert_seeded(cols <= 80, "exercise check %s %s: %zu columns: %.100s", x->id, answer, cols, w);
        run_free(&r);
    }
    shipped_close(&s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
    ck_assert_int_eq(system(cmd), 0);
    unsetenv("XDG_DATA_HOME");
    unsetenv("COLUMNS");
}
END_TEST

/* `kvlab glossary` lists the terms, shows one by any alias, and refuses an
 * unknown one with exit 2 and the nearest terms. */
START_TEST(cli_glossary)
{
    RunResult r = run_kvlab((const char *[]){"glossary", NULL}, NULL);
    ck_assert_msg(r.status == 0 && strstr(r.out, "slots") && strstr(r.out, "softmax TV"), "%d %s", r.status,
                  r.err);
    run_free(&r);
    r = run_kvlab((const char *[]){"glossary", "b/ELEM", NULL}, NULL);
    ck_assert_msg(r.status == 0 && strstr(r.out, "bytes per element") && strstr(r.out, "0.625 B"), "%d %s",
                  r.status, r.err);
    run_free(&r);
    r = run_kvlab((const char *[]){"glossary", "slots", "--json", NULL}, NULL);
    cJSON *j = cJSON_Parse(r.out);
    ck_assert_msg(r.status == 0 && j && cJSON_GetObjectItem(j, "definition"), "%d %s", r.status, r.err);
    cJSON_Delete(j);
    run_free(&r);
    r = run_kvlab((const char *[]){"glossary", "slotz", NULL}, NULL);
    ck_assert_msg(r.status == 2 && strstr(r.err, "unknown term 'slotz'; nearest: slots"), "%d %s", r.status,
                  r.err);
    run_free(&r);
    /* A word near no term, or no word, is suggested nothing. */
    static const char *const FAR[] = {"zzzzzzzzzz", "", "qqqqqqqqqqqqqqqqqqqqqqqqq"};
    for (size_t i = 0; i < N_OF(FAR); i++) {
        r = run_kvlab((const char *[]){"glossary", FAR[i], NULL}, NULL);
        const char *says = i == 1 ? "an empty term" : "no term is near";
        ck_assert_msg(r.status == 2 && !strstr(r.err, "nearest") && strstr(r.err, says), "'%s': %d %s", FAR[i],
                      r.status, r.err);
        run_free(&r);
    }
    r = run_kvlab((const char *[]){"glossary", "a", "b", NULL}, NULL);
    ck_assert_int_eq(r.status, 2);
    run_free(&r);
}
END_TEST

Suite *suite_lesson(void)
{
    Suite *s = suite_create("lesson");
    TCase *t = tcase_create("parse");
    tcase_add_test(t, parse_errors);
    tcase_add_test(t, parse_error_random_place);
    tcase_add_test(t, parse_nul_refused);
    tcase_add_test(t, load_file_checks);
    tcase_add_test(t, document_shape);
    tcase_add_test(t, figures_random);
    suite_add_tcase(s, t);
    t = tcase_create("typed");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, typed_numbers_flagged);
    tcase_add_test(t, typed_numbers_exempt);
    tcase_add_test(t, typed_numbers_evasions);
    tcase_add_test(t, typed_numbers_random);
    tcase_add_test(t, shipped_lessons_check);
    tcase_add_test(t, exercise_typed_found);
    tcase_add_test(t, shipped_exercises_typed);
    tcase_add_test(t, exercise_file_typed_flagged);
    tcase_add_test(t, typed_numbers_inputs_and_precision);
    suite_add_tcase(s, t);
    t = tcase_create("glossary");
    tcase_add_test(t, glossary_errors);
    tcase_add_test(t, exercise_refs_checked);
    tcase_add_test(t, glossary_lookup);
    tcase_add_test(t, glossary_lessons_exist);
    tcase_add_test(t, glossary_covers_labels);
    suite_add_tcase(s, t);
    t = tcase_create("cli");
    /* Each test runs kvlab once per shipped lesson or exercise: some
     * ninety runs, minutes under the sanitizers on a busy machine. */
    tcase_set_timeout(t, 300);
    tcase_add_test(t, cli_lesson);
    tcase_add_test(t, cli_lessons_render);
    tcase_add_test(t, shipped_units_not_repeated);
    tcase_add_test(t, cli_glossary);
    suite_add_tcase(s, t);
    t = tcase_create("width");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, cli_text_fits_80);
    tcase_add_test(t, table_fits_width);
    tcase_add_test(t, table_number_led_words_wrap);
    tcase_add_test(t, table_parts_repeat_keys);
    suite_add_tcase(s, t);
    return s;
}
