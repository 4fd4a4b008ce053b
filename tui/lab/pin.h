/* pin.h - the pinned baseline: a screen's figures kept when the user pins
 * them, and the live figures' change against them, so that a demo can say
 * "this much more memory, this many fewer sequences" as the inputs move.
 *
 * A pin copies the Results it is given, and names what they were computed
 * for in words of its own: the Report it came with points into the
 * screen's state, which moves on. */
#ifndef KVLAB_PIN_H
#define KVLAB_PIN_H

#include "doc.h"
#include "tui/report.h"

#include <stdbool.h>

typedef struct {
    bool on;
    size_t n_formats;
    Results res;                // (n_formats) as pinned; formats matched by id
    char what[200];             // "Llama 3.1 8B, 8,192 (8k) tokens x 16"
    Table table;                // the changes, as last laid out
} Pin;

/* Pins rp's figures (res); `what` says what they are. */
void pin_set(Pin *p, const Report *rp, const Results *res, const char *what);
void pin_clear(Pin *p);
/* The change of each format's figures from the pin to res, a row per
 * format in both: the cache in total (its size and per cent), the
 * sequences the pool holds and the step floor (per cent), where both have
 * them. Each change is coloured by whether it is good for serving. */
void pin_table(const Pin *p, const Report *rp, const Results *res, Table *t);
/* What is pinned and the changes (pin_table, fitted to the window's
 * width: the per cents go before anything is cut); nothing when off. */
void pin_layout(Pin *p, const Report *rp, const Results *res, Doc *d);

#endif
