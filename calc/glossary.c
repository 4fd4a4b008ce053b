/* glossary.c - see glossary.h. */
#include "glossary.h"

#include "jsonfile.h"
#include "lesson.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const ROOT_FIELDS[] = {"terms", NULL};
static const char *const TERM_FIELDS[] = {"term", "aliases", "definition", "see", "lesson", NULL};

/* ------------------------------------------------------------------------
 * Lookup.
 */
static bool glossary_entry_is(const GlossaryEntry *t, const char *word)
{
    if (strcasecmp(t->term, word) == 0)
        return true;
    for (size_t i = 0; i < t->n_aliases; i++)
        if (strcasecmp(t->aliases[i], word) == 0)
            return true;
    return false;
}

const GlossaryEntry *glossary_find(const Glossary *g, const char *word)
{
    for (size_t i = 0; i < g->n; i++)
        if (glossary_entry_is(&g->entries[i], word))
            return &g->entries[i];
    return NULL;
}

bool glossary_knows(const char *word, const void *ctx)
{
    return glossary_find(ctx, word) != NULL;
}

/* Levenshtein distance, ASCII case ignored, of strings up to 63 bytes
 * (longer ones are compared by their first 63). */
static size_t glossary_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    n = n > 63 ? 63 : n;
    m = m > 63 ? 63 : m;
    size_t row[64];
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j];
            size_t cost = (a[i - 1] | 0x20) == (b[j - 1] | 0x20) ? 0 : 1;
            size_t best = diag + cost;
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            row[j] = best;
            diag = up;
        }
    }
    return row[m];
}

/* Whether a name at distance d from the word is near it: one edit, or
 * up to a third of the name's letters; a word nothing like any name
 * ("zzzzzzzzzz") is near none. */
static bool glossary_near(const char *name, size_t d)
{
    return d <= 1 || d * 3 <= strlen(name);
}

/* The distance of the entry's nearest name that is near the word;
 * SIZE_MAX when none is. */
static size_t glossary_entry_distance(const GlossaryEntry *t, const char *word)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i <= t->n_aliases; i++) {
        const char *name = i ? t->aliases[i - 1] : t->term;
        size_t d = glossary_distance(name, word);
        if (glossary_near(name, d) && d < best)
            best = d;
    }
    return best;
}

size_t glossary_nearest(const Glossary *g, const char *word, const GlossaryEntry **out, size_t max)
{
    size_t n = 0, dist[GLOSSARY_TERMS_MAX];
    for (size_t i = 0; i < g->n && max && *word; i++) {
        size_t d = glossary_entry_distance(&g->entries[i], word);
        if (d == SIZE_MAX)
            continue;
        /* Insertion into the sorted list of the best max; ties keep file order. */
        size_t at = n;
        while (at > 0 && dist[at - 1] > d)
            at--;
        if (at == max)
            continue;
        size_t last = n < max ? n : max - 1;
        for (size_t j = last; j > at; j--)
            out[j] = out[j - 1], dist[j] = dist[j - 1];
        out[at] = &g->entries[i];
        dist[at] = d;
        n += n < max;
    }
    return n;
}

/* ------------------------------------------------------------------------
 * Loading.
 */
typedef struct {
    const JsonDoc *d;
    const cJSON *item;
    Glossary *g;
} Loading;

/* A list of strings, each one a term-like word, into out. */
static int glossary_words(const JsonDoc *d, const cJSON *obj, const char *name, char (*out)[GLOSSARY_TERM_MAX],
                          size_t max, size_t *n, Error *e)
{
    const cJSON *arr;
    int count;
    int rc = json_array(d, obj, name, FIELD_OPTIONAL, &arr, &count, e);
    if (rc)
        return rc < 0 ? -1 : 0;
    if ((size_t)count > max)
        return jsondoc_error(d, arr, e, "field '%s': more than %zu entries", name, max);
    *n = 0;
    for (const cJSON *v = arr->child; v; v = v->next) {
        if (!cJSON_IsString(v) || !*v->valuestring)
            return jsondoc_error(d, v, e, "field '%s': expected a non-empty string", name);
        if (strlen(v->valuestring) >= GLOSSARY_TERM_MAX)
            return jsondoc_error(d, v, e, "field '%s': '%s' is longer than %d bytes", name, v->valuestring,
                                 GLOSSARY_TERM_MAX - 1);
        snprintf(out[(*n)++], GLOSSARY_TERM_MAX, "%s", v->valuestring);
    }
    return 0;
}

/* A definition in a lesson's inline syntax: every figure a query that
 * parses and evaluates, every term link a term of this glossary (checked
 * when the whole file is read). */
static int glossary_definition_check(const JsonDoc *d, const cJSON *obj, const GlossaryEntry *t,
                                     const Glossary *g, Error *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "definition");
    LessonRefs refs = {.term_known = glossary_knows, .term_ctx = g};
    Lesson l;
    int rc = lesson_parse_text(&l, "definition", t->definition, strlen(t->definition), &refs, e) ||
             lesson_eval(&l, e);
    /* Paragraphs only: a heading, list, code or widget is not shown. */
    for (size_t i = 0; !rc && i < l.n_blocks; i++)
        if (l.blocks[i].kind != BLOCK_PARAGRAPH)
            rc = lesson_error(&l, l.blocks[i].pos, e, "a definition is paragraphs of text: no headings, lists, "
                                                      "quotes, tables, code or widgets");
    if (rc) {
        char msg[ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", e->msg);
        lesson_free(&l);
        return jsondoc_error(d, v, e, "term '%s': %s", t->term, msg);
    }
    lesson_free(&l);
    return 0;
}

static int glossary_term(const JsonDoc *d, const cJSON *obj, GlossaryEntry *t, Error *e)
{
    if (json_object(d, obj, "a term", e) || json_known_fields(d, obj, TERM_FIELDS, e) ||
        json_string(d, obj, "term", FIELD_REQUIRED, t->term, sizeof t->term, e) ||
        json_string(d, obj, "definition", FIELD_REQUIRED, t->definition, sizeof t->definition, e) ||
        json_string(d, obj, "lesson", FIELD_OPTIONAL, t->lesson, sizeof t->lesson, e) < 0 ||
        glossary_words(d, obj, "aliases", t->aliases, GLOSSARY_ALIASES_MAX, &t->n_aliases, e) ||
        glossary_words(d, obj, "see", t->see, GLOSSARY_SEE_MAX, &t->n_see, e))
        return -1;
    if (!*t->term)
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(obj, "term"), e, "field 'term': empty");
    if (!*t->definition)
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(obj, "definition"), e,
                             "field 'definition': empty");
    if (*t->lesson && !lesson_shipped(t->lesson, NULL))
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(obj, "lesson"), e,
                             "field 'lesson': unknown lesson '%s' (kvlab lesson list)", t->lesson);
    return 0;
}

/* A word (term or alias) that another entry already has. */
static int glossary_unique(const JsonDoc *d, const cJSON *obj, const Glossary *g, const GlossaryEntry *t,
                           Error *e)
{
    const char *words[1 + GLOSSARY_ALIASES_MAX];
    size_t n = 0;
    words[n++] = t->term;
    for (size_t i = 0; i < t->n_aliases; i++)
        words[n++] = t->aliases[i];
    for (size_t i = 0; i < n; i++) {
        const GlossaryEntry *other = glossary_find(g, words[i]);
        if (other)
            return jsondoc_error(d, obj, e, "'%s' is already %s", words[i],
                                 strcasecmp(other->term, words[i]) == 0 ? "a term" : "an alias of another term");
        for (size_t j = 0; j < i; j++)
            if (strcasecmp(words[j], words[i]) == 0)
                return jsondoc_error(d, obj, e, "'%s' is given twice in term '%s'", words[i], t->term);
    }
    return 0;
}

static int glossary_from_doc(void *out, JsonDoc *d, const void *ctx, Error *e)
{
    (void)ctx;
    Glossary *g = out;
    const cJSON *arr;
    int count;
    int rc = json_object(d, d->root, "a glossary", e) || json_known_fields(d, d->root, ROOT_FIELDS, e) ||
             json_array(d, d->root, "terms", FIELD_REQUIRED, &arr, &count, e);
    if (!rc && count > GLOSSARY_TERMS_MAX)
        rc = jsondoc_error(d, arr, e, "more than %d terms", GLOSSARY_TERMS_MAX);
    if (!rc && !(g->entries = calloc(count ? (size_t)count : 1, sizeof *g->entries)))
        rc = error_runtime(e, "%s: out of memory", d->path);
    for (const cJSON *v = rc ? NULL : arr->child; v && !rc; v = v->next) {
        GlossaryEntry *t = &g->entries[g->n];
        rc = glossary_term(d, v, t, e) || glossary_unique(d, v, g, t, e);
        g->n += !rc;
    }
    /* See-also names and definitions' term links need the whole list. */
    size_t i = 0;
    for (const cJSON *v = rc ? NULL : arr->child; v && !rc; v = v->next, i++) {
        const GlossaryEntry *t = &g->entries[i];
        for (size_t j = 0; j < t->n_see && !rc; j++)
            if (!glossary_find(g, t->see[j]))
                rc = jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(v, "see"), e,
                                   "term '%s': see '%s', which is not a term", t->term, t->see[j]);
        if (!rc)
            rc = glossary_definition_check(d, v, t, g, e);
    }
    jsondoc_done(d);
    if (rc)
        glossary_free(g);
    return rc ? -1 : 0;
}

int glossary_load(Glossary *g, const char *path, Error *e)
{
    return jsondoc_read(g, sizeof *g, glossary_from_doc, NULL, path, NULL, 0, e);
}

int glossary_parse(Glossary *g, const char *name, const char *text, size_t len, Error *e)
{
    return jsondoc_read(g, sizeof *g, glossary_from_doc, NULL, name, text, len, e);
}

void glossary_free(Glossary *g)
{
    free(g->entries);
    g->entries = NULL;
    g->n = 0;
}
