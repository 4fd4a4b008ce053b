/* fuzz_glossary.c - the glossary loader (glossary_parse), whose
 * definitions are parsed as lesson text and their figures evaluated. */
#include "fuzz.h"

#include "glossary.h"

FUZZ_TARGET(glossary)
{
    char *text = fuzz_exact(data, size);
    static Glossary g;
    Error e;
    if (glossary_parse(&g, "fuzz.json", text, size, &e)) {
        fuzz_check_file_error(&e, "fuzz.json", text, size);
    } else {
        /* Every term and alias finds its own entry; every see-also a term. */
        for (size_t i = 0; i < g.n; i++) {
            const GlossaryEntry *t = &g.entries[i];
            FUZZ_CHECK(glossary_find(&g, t->term) == t, "term '%s' finds another", t->term);
            for (size_t k = 0; k < t->n_aliases; k++)
                FUZZ_CHECK(glossary_find(&g, t->aliases[k]) == t, "alias '%s'", t->aliases[k]);
            for (size_t k = 0; k < t->n_see; k++)
                FUZZ_CHECK(glossary_find(&g, t->see[k]) != NULL, "see '%s'", t->see[k]);
        }
        glossary_free(&g);
    }
    free(text);
    return 0;
}
