/* glossary.h - lessons/glossary.json: the terms the lab's screens and the
 * lessons use, each with its aliases, a definition (which may hold live
 * figures, `=query` code spans, as a lesson's prose does), the terms to
 * see as well and the lesson that teaches it.
 *
 *   {"terms": [{"term": "slots", "aliases": ["slot"], "definition": "...",
 *               "see": ["paged"], "lesson": "why-kv-grows"}]}
 *
 * Loaded with calc/jsonfile: a malformed file, an unknown field, a term or
 * alias given twice, a `see` naming no term, or a definition whose figure
 * is not a query is refused with its file, line and column. */
#ifndef KVLAB_GLOSSARY_H
#define KVLAB_GLOSSARY_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>

#define GLOSSARY_TERM_MAX 48
#define GLOSSARY_ALIASES_MAX 8
#define GLOSSARY_SEE_MAX 8
#define GLOSSARY_DEFINITION_MAX 1024
#define GLOSSARY_TERMS_MAX 256

typedef struct {
    char term[GLOSSARY_TERM_MAX];
    size_t n_aliases;
    char aliases[GLOSSARY_ALIASES_MAX][GLOSSARY_TERM_MAX];
    char definition[GLOSSARY_DEFINITION_MAX];
    size_t n_see;
    char see[GLOSSARY_SEE_MAX][GLOSSARY_TERM_MAX];
    char lesson[64];            // the lesson id that teaches it; "" when none
} GlossaryEntry;

typedef struct {
    size_t n;
    GlossaryEntry *entries;     // (n), in the file's order
} Glossary;

int glossary_load(Glossary *g, const char *path, Error *e);
/* The same from len bytes in memory; name stands for the file in messages. */
int glossary_parse(Glossary *g, const char *name, const char *text, size_t len, Error *e);
void glossary_free(Glossary *g);

/* The entry whose term or alias is `word`, ignoring ASCII case; NULL when none. */
const GlossaryEntry *glossary_find(const Glossary *g, const char *word);
/* For LessonRefs.term_known: ctx is the Glossary. */
bool glossary_knows(const char *word, const void *ctx);
/* The terms near `word` (by edit distance over terms and aliases: one
 * edit, or up to a third of the name's letters), nearest first, at most
 * max of them; returns how many (none for a word near no term). */
size_t glossary_nearest(const Glossary *g, const char *word, const GlossaryEntry **out, size_t max);

#endif
