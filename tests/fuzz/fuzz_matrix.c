/* fuzz_matrix.c - the `kvlab quant --matrix` reader (kvmatrix_parse). */
#include "fuzz.h"

#include "kvmatrix.h"

#include <math.h>

FUZZ_TARGET(matrix)
{
    char *text = fuzz_exact(data, size);
    KvMatrix m;
    Error e;
    if (kvmatrix_parse(&m, "fuzz.json", text, size, &e)) {
        fuzz_check_file_error(&e, "fuzz.json", text, size);
        FUZZ_CHECK(!m.k && !m.v && !m.q, "a failed read left memory allocated");
    } else {
        /* Every element of every array is read, so ASan sees a short one. */
        FUZZ_CHECK(m.tokens >= 1 && m.d >= 1, "%zu x %zu", m.tokens, m.d);
        for (size_t i = 0; i < m.tokens * m.d; i++) {
            FUZZ_CHECK(isfinite(m.k[i]) && isfinite(m.v[i]), "element %zu not finite", i);
            FUZZ_CHECK(m.has_values || memcmp(&m.v[i], &m.k[i], sizeof m.v[i]) == 0,
                       "V is not K without values");
        }
        for (size_t i = 0; i < m.d; i++)
            FUZZ_CHECK(isfinite(m.q[i]) && (m.has_query || m.q[i] == 0), "query %zu", i);
        kvmatrix_free(&m);
    }
    free(text);
    return 0;
}
