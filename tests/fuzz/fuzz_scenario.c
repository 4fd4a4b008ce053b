/* fuzz_scenario.c - the scenario file loader (scenario_parse), with the
 * models and GPUs of the data directory ($KVLAB_DATA, else ./scenarios),
 * and every figure of every scenario it accepts. */
#include "fuzz.h"

#include "scenario.h"

/* What a loaded scenario promises: its formats, and figures that compute
 * (the loader checked each) to the same result every time. */
static void check_scenario(const Scenario *sc)
{
    FUZZ_CHECK(strcmp(sc->name, "fuzz") == 0, "name '%s'", sc->name);
    FUZZ_CHECK(sc->n_formats >= 1 && sc->n_formats <= SCENARIO_FORMATS_MAX, "%zu formats",
               sc->n_formats);
    FUZZ_CHECK(sc->n_figures <= SCENARIO_FIGURES_MAX, "%zu figures", sc->n_figures);
    FUZZ_CHECK(sc->w.context >= 1 && sc->w.batch >= 1 && sc->w.tp >= 1, "empty workload");
    Error e;
    for (size_t i = 0; i < sc->n_formats; i++) {
        FUZZ_CHECK(sc->formats[i] != NULL, "format %zu missing", i);
        FormatResult r;
        (void)budget_compute(&sc->w, sc->formats[i], &r, &e);
    }
    for (size_t i = 0; i < sc->n_figures; i++) {
        const Figure *f = &sc->figures[i];
        FUZZ_CHECK(f->format && f->metric, "figure %zu without format or metric", i);
        FigureResult a, b;
        FUZZ_CHECK(figure_eval(sc, f, &a, &e) == 0, "figure '%s' loaded but fails: %s", f->label,
                   e.msg);
        FUZZ_CHECK(memchr(a.text, '\0', sizeof a.text) != NULL, "text not terminated");
        FUZZ_CHECK(a.verdict >= FIGURE_AGREES && a.verdict <= FIGURE_NO_SEED, "verdict %d",
                   (int)a.verdict);
        FUZZ_CHECK(figure_eval(sc, f, &b, &e) == 0 && memcmp(&a, &b, sizeof a) == 0,
                   "figure '%s' differs the second time", f->label);
        FUZZ_CHECK(figure_verdict_name(a.verdict) && figure_verdict_id(a.verdict), "no name");
    }
}

FUZZ_TARGET(scenario)
{
    char *text = fuzz_exact(data, size);
    static Scenario sc;
    Error e;
    if (scenario_parse(&sc, "fuzz.json", text, size, fuzz_datadir(), &e))
        fuzz_check_file_error(&e, "fuzz.json", text, size);
    else
        check_scenario(&sc);
    free(text);
    return 0;
}
