/* niahreport.h - how a needle-in-a-haystack run's figures are shown: the
 * cells table (the CSV's columns named as kvlab niah --json's fields) and
 * the formats table with the rule's verdicts. Shared by `kvlab niah` and
 * the lab's NIAH screen; in the lab's room, which the command line may use. */
#ifndef KVLAB_NIAHREPORT_H
#define KVLAB_NIAHREPORT_H

#include "error.h"
#include "niah.h"
#include "tui/table.h"

#include <stdbool.h>

/* Every cell: format, simulated, length, depth, trials, accuracy, its 95%
 * interval, the difference to bf16's 95% interval; csv: the JSON's names
 * for the columns and no units. */
int niahreport_cells(const NiahResult *r, bool csv, Table *t, Error *e);
/* Per format over the grid: kernel or simulated, accuracy and interval,
 * the difference's interval, the verdict at `tolerance`. */
int niahreport_formats(const NiahResult *r, double tolerance, Table *t, Error *e);
/* Format f's cells for a narrow window: length, depth, accuracy and its
 * interval in percent, the difference to bf16 and its interval in points. */
int niahreport_cells_narrow(const NiahResult *r, size_t f, Table *t, Error *e);
/* A verdict as niah_format_summary gives it, in words ("no trials" for
 * none). */
const char *niahreport_verdict(int v);
/* Both rules in one word: "rejected" (the sources' rule: even the
 * interval's best end loses more than the tolerance), "accepted" (the
 * whole interval clears it, stats_accepted), else "undecided"; "baseline"
 * and "no trials" as niahreport_verdict. */
const char *niahreport_judgement(int v, double diff_low, unsigned trials, double tolerance);
/* Whether that word is "accepted": not rejected, and the whole interval
 * clears the tolerance over enough trials (stats_accepted). */
bool niahreport_accepted(int v, double diff_low, unsigned trials, double tolerance);
/* A sentence saying what those words mean at `tolerance` (a share). */
const char *niahreport_rules(double tolerance, char *buf, size_t n);

#endif
