/* fuzz_stored.c - the stored GPU results' loader (stored_parse). */
#include "fuzz.h"

#include "format.h"
#include "stored.h"

#include <math.h>

FUZZ_TARGET(stored)
{
    char *text = fuzz_exact(data, size);
    static StoredRun r, again;
    Error e;
    int rc = stored_parse(&r, "fuzz.json", text, size, &e);
    if (rc) {
        fuzz_check_file_error(&e, "fuzz.json", text, size);
    } else {
        FUZZ_CHECK(strcmp(r.name, "fuzz") == 0, "name '%s'", r.name);
        FUZZ_CHECK(r.n_formats >= 1 && r.n_formats <= STORED_FORMATS_MAX, "%zu formats", r.n_formats);
        FUZZ_CHECK(r.copy_gbps > 0 && isfinite(r.copy_gbps), "copy rate %g", r.copy_gbps);
        for (size_t i = 0; i < r.n_formats; i++) {
            const StoredSeries *s = &r.formats[i];
            FUZZ_CHECK(format_by_id(s->format) != NULL, "format '%s'", s->format);
            FUZZ_CHECK(s->n == r.formats[0].n && s->n <= STORED_POINTS_MAX, "%zu points", s->n);
            FUZZ_CHECK(s->slope > 0 && isfinite(s->slope), "slope %g", s->slope);
            for (size_t k = 0; k < s->n; k++) {
                FUZZ_CHECK(s->points[k].context == r.formats[0].points[k].context, "contexts differ");
                FUZZ_CHECK(!k || s->points[k].context > s->points[k - 1].context, "contexts do not rise");
                FUZZ_CHECK(s->points[k].ms > 0 && s->points[k].gbps > 0, "a point not above 0");
            }
        }
    }
    FUZZ_CHECK(stored_parse(&again, "fuzz.json", text, size, &e) == rc &&
                   (rc || memcmp(&r, &again, sizeof r) == 0),
               "a second read differs");
    free(text);
    return 0;
}
