/* niahreport.c - see niahreport.h. */
#include "niahreport.h"

#include "stats.h"

#include <math.h>
#include <stdio.h>

int niahreport_cells(const NiahResult *r, bool csv, Table *t, Error *e)
{
    static const char *const HEAD[][2] = {
        {"format", "format"}, {"simulated", "simulated"}, {"length", "length"},   {"depth", "depth"},
        {"trials", "trials"}, {"accuracy", "accuracy"},   {"ci_low", "95% CI"}, {"ci_high", ""},
        {"diff_low", "diff to bf16, 95% CI"}, {"diff_high", ""},
    };
    const NiahGrid *g = &r->g;
    table_init(t, TABLE_COLS);
    t->keys = 4;            // a part of the table without them could not say which cell a row is
    table_row(t);
    for (size_t k = 0; k < sizeof HEAD / sizeof HEAD[0]; k++)
        table_cell(t, "%s", HEAD[k][!csv]);
    t->cols = t->col;
    for (size_t f = 0; f < g->n_formats; f++)
        for (size_t l = 0; l < g->n_lengths; l++)
            for (size_t d = 0; d < g->n_depths; d++) {
                NiahCell c;
                if (niah_cell(r, f, l, d, &c, e))
                    return -1;
                table_row(t);
                table_cell(t, "%s", g->formats[f]->id);
                table_cell(t, "%s", g->formats[f]->simulated ? "yes" : "no");
                table_cell(t, "%u", g->lengths[l]);
                table_cell(t, "%g", g->depths[d]);
                table_cell(t, "%u", c.trials);
                table_cell(t, "%.4f", c.accuracy);
                table_cell(t, "%.4f", c.ci_low);
                table_cell(t, "%.4f", c.ci_high);
                table_cell(t, "%.4f", c.diff_low);
                table_cell(t, "%.4f", c.diff_high);
            }
    return 0;
}

const char *niahreport_verdict(int v)
{
    return v < 0 ? "no trials" : verdict_word((Verdict)v);
}

bool niahreport_accepted(int v, double diff_low, unsigned trials, double tolerance)
{
    return v == VERDICT_NOT_REJECTED && stats_accepted(diff_low, trials, tolerance);
}

const char *niahreport_judgement(int v, double diff_low, unsigned trials, double tolerance)
{
    if (v != VERDICT_NOT_REJECTED)
        return niahreport_verdict(v);
    return niahreport_accepted(v, diff_low, trials, tolerance) ? "accepted" : "undecided";
}

const char *niahreport_rules(double tolerance, char *buf, size_t n)
{
    snprintf(buf, n, "at a tolerance of %g points: rejected where even the interval's best end loses more (the "
                     "sources' rule); accepted where its worst end loses no more (the whole interval clears it) "
                     "over at least %.0f trials (with none lost in fewer, the loss could still exceed it); "
                     "undecided where neither, which more trials settle",
             100 * tolerance, tolerance > 0 ? ceil(STATS_RULE_OF_THREE / tolerance) : INFINITY);
    return buf;
}

int niahreport_formats(const NiahResult *r, double tolerance, Table *t, Error *e)
{
    const NiahGrid *g = &r->g;
    table_init(t, TABLE_COLS);
    table_header(t, "format", "run on", "accuracy", "95% CI", "diff to bf16", "verdict", NULL);
    for (size_t f = 0; f < g->n_formats; f++) {
        NiahCell c;
        int v;
        if (niah_format_summary(r, f, tolerance, &c, &v, e))
            return -1;
        table_row(t);
        table_cell(t, "%s", g->formats[f]->id);
        table_cell(t, "%s", g->formats[f]->simulated ? "simulated" : "kernel");
        table_cell(t, "%.3f", c.accuracy);
        table_cell(t, "[%.3f, %.3f]", c.ci_low, c.ci_high);
        table_cell(t, "[%+.3f, %+.3f]", f ? c.diff_low : 0, f ? c.diff_high : 0);
        table_cell(t, "%s", niahreport_judgement(v, c.diff_low, c.trials, tolerance));
    }
    return 0;
}

int niahreport_cells_narrow(const NiahResult *r, size_t f, Table *t, Error *e)
{
    const NiahGrid *g = &r->g;
    table_init(t, TABLE_COLS);
    table_header(t, "length", "depth", "%", "95% CI", "diff", "95% CI", NULL);
    for (size_t l = 0; l < g->n_lengths; l++)
        for (size_t d = 0; d < g->n_depths; d++) {
            NiahCell c, base;
            if (niah_cell(r, f, l, d, &c, e) || niah_cell(r, 0, l, d, &base, e))
                return -1;
            table_row(t);
            table_cell(t, "%u", g->lengths[l]);
            table_cell(t, "%g", g->depths[d]);
            if (!c.trials) {
                table_cell(t, "-");
                continue;
            }
            table_cell(t, "%.0f", 100 * c.accuracy);
            table_cell(t, "%.0f-%.0f", 100 * c.ci_low, 100 * c.ci_high);
            table_cell(t, "%+.0f", 100 * (c.accuracy - base.accuracy));
            table_cell(t, "%+.0f..%+.0f", f ? 100 * c.diff_low : 0, f ? 100 * c.diff_high : 0);
        }
    return 0;
}
