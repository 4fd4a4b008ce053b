/* fuzz_lists.c - the comma-separated number lists of the command line
 * (tui/cli/cli.c: cli_parse_floats for `quant --query`, cli_parse_u64s with
 * the item parsers of `--contexts`, `bench --batch` and `calc
 * --bf16-layers`): a list is read as its entries, each read alone, or
 * refused naming the option. */
#include "fuzz.h"

#include "tui/cli/cli.h"
#include "units.h"

#define LIST_MAX 16

static size_t entries(const char *s)
{
    size_t n = 1;
    for (; (s = strchr(s, ',')); s++)
        n++;
    return n;
}

/* The i-th entry of s, alone. */
static const char *entry(const char *s, size_t i, char *buf, size_t n)
{
    for (; i; i--)
        s = strchr(s, ',') + 1;
    size_t len = strcspn(s, ",");
    snprintf(buf, n, "%.*s", (int)len, s);
    return buf;
}

FUZZ_TARGET(lists)
{
    char *s = fuzz_string(data, size), one[512];
    float f[LIST_MAX];
    uint64_t u[LIST_MAX];
    size_t n;
    Error e;
    if (cli_parse_floats(s, f, LIST_MAX, &n, &e) == 0) {
        FUZZ_CHECK(n >= 1 && n <= LIST_MAX && n == entries(s), "%zu floats from '%s'", n, s);
        for (size_t i = 0; i < n; i++) {
            float x;
            FUZZ_CHECK(units_parse_float(entry(s, i, one, sizeof one), &x) &&
                           memcmp(&x, &f[i], sizeof x) == 0,
                       "entry %zu of '%s'", i, s);
        }
    }
    static const struct {
        const char *opt, *prefix;
        int (*item)(const char *, uint64_t *, Error *);
    } U64S[] = {
        {"contexts", "--contexts: ", units_parse_context},
        {"batch", "--batch: ", cli_parse_batch},
        {"bf16-layers", "--bf16-layers: ", cli_parse_layer},
    };
    for (size_t k = 0; k < sizeof U64S / sizeof U64S[0]; k++) {
        if (cli_parse_u64s(U64S[k].opt, s, u, LIST_MAX, &n, U64S[k].item, &e) == 0) {
            FUZZ_CHECK(n >= 1 && n <= LIST_MAX && n == entries(s), "%zu %s from '%s'", n, U64S[k].opt, s);
            for (size_t i = 0; i < n; i++) {
                uint64_t x;
                FUZZ_CHECK(U64S[k].item(entry(s, i, one, sizeof one), &x, &e) == 0 && x == u[i],
                           "--%s: entry %zu of '%s'", U64S[k].opt, i, s);
            }
        } else {
            FUZZ_CHECK(strncmp(e.msg, U64S[k].prefix, strlen(U64S[k].prefix)) == 0, "'%s'", e.msg);
        }
    }
    free(s);
    return 0;
}
