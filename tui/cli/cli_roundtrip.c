/* cli_roundtrip.c - `kvlab roundtrip FORMAT [--saturate]`: floats on stdin,
 * each round-tripped through an 8- or 4-bit format, one per line on stdout.
 * Input is decimal or C hex-float ("0x1.8p3"), "nan", "inf"; parsing uses
 * the C locale whatever the user's is. */
#include "cli.h"
#include "commands.h"

#include "minifloat.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { O_SATURATE, O_HELP, O_COUNT };

static const OptSpec OPTS[O_COUNT] = {
    [O_SATURATE] = {"saturate", NULL, "clamp overflow to the largest finite value"},
    [O_HELP] = {"help", NULL, "show this help"},
};

static const CmdSpec CMD = {
    .name = "roundtrip",
    .usage = "usage: kvlab roundtrip e4m3|e5m2|e2m1 [--saturate] < floats\n\n"
             "Encodes each float on stdin (one per line, decimal or hex-float) in\n"
             "the format (e4m3, e5m2 or e2m1), decodes it, and prints the result.\n"
             "Without --saturate, E4M3FN overflow is nan and E5M2 overflow inf;\n"
             "E2M1 always clamps to +-6. A number beyond a float's range (1e39) is\n"
             "read as an infinity, which every format rounds as it would the number.",
    .opts = OPTS,
    .n_opts = O_COUNT,
    .help_opt = O_HELP,
    .repeat_opt = -1,
    .max_words = 1,
};

static void cli_roundtrip_print_float(float v)
{
    if (isnan(v))
        puts("nan");
    else if (isinf(v))
        puts(v < 0 ? "-inf" : "inf");
    else
        printf("%.9g\n", (double)v);
}

/* One line of input (n bytes, its newline included) round-tripped to
 * stdout; EXIT_USAGE with the line named when it is not one number. */
static int cli_roundtrip_line(const Minifloat *f, bool saturate, char *line, size_t n, unsigned long no,
                              Error *e)
{
    if (n && line[n - 1] == '\n')
        n--;
    if (n && line[n - 1] == '\r')           // a line ended CRLF
        n--;
    const char *nul = memchr(line, '\0', n);
    if (nul)
        return error_set(e, "line %lu: a NUL byte at column %zu", no, (size_t)(nul - line) + 1), EXIT_USAGE;
    line[n] = '\0';
    float x;
    if (!units_parse_float(line, &x))
        return error_set(e, "line %lu: '%.40s' is not a number", no, line), EXIT_USAGE;
    cli_roundtrip_print_float(minifloat_round(f, x, saturate));
    return EXIT_OK;
}

int cmd_roundtrip(int argc, char **argv)
{
    Given g;
    int rc = cli_begin(&CMD, argc, argv, &g);
    if (rc != CLI_GO_ON)
        return rc;
    Error e;
    const Minifloat *f = g.n_words ? minifloat_by_id(g.words[0]) : NULL;
    if (!f) {
        if (g.n_words)
            error_set(&e, "unknown format '%s'; expected e4m3, e5m2 or e2m1", g.words[0]);
        else
            error_set(&e, "expected a FORMAT: e4m3, e5m2 or e2m1");
        return cli_error("roundtrip", &e);
    }
    char *line = NULL;
    size_t cap = 0;
    unsigned long no = 0;
    ssize_t got;
    rc = EXIT_OK;
    errno = 0;
    while (rc == EXIT_OK && (got = getline(&line, &cap, stdin)) != -1) {
        no++;
        rc = cli_roundtrip_line(f, g.set[O_SATURATE], line, (size_t)got, no, &e);
    }
    if (rc == EXIT_OK && ferror(stdin)) {   // not the end of the input: it could not be read
        error_set(&e, "cannot read line %lu of the input: %s", no + 1, errno ? strerror(errno) : "read error");
        rc = EXIT_USAGE;
    }
    free(line);
    fflush(stdout);                         // the lines before a bad one, then the error
    return rc == EXIT_OK ? rc : cli_fail("roundtrip", rc, &e);    // main checks stdout's errors
}
