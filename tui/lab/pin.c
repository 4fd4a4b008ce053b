/* pin.c - see pin.h. */
#include "pin.h"

#include "units.h"

#include <stdio.h>
#include <string.h>

#define PERCENT 100.0

void pin_set(Pin *p, const Report *rp, const Results *res, const char *what)
{
    p->on = true;
    p->n_formats = rp->n_formats;
    p->res = *res;
    snprintf(p->what, sizeof p->what, "%s", what);
}

void pin_clear(Pin *p)
{
    p->on = false;
}

/* The cell marker (widget.h) for a change: good for serving, bad, or none
 * when nothing changed. `more_is_good`: whether a rise is good. */
static const char *pin_mark(int sign, bool more_is_good)
{
    if (!sign)
        return "";
    return (sign > 0) == more_is_good ? "+" : "!";
}

/* "+12.5 GiB", "-512 MiB", "0 B". */
static void pin_size_cell(Table *t, u128 was, u128 now, bool more_is_good)
{
    char a[48];
    const int sign = now > was ? 1 : now < was ? -1 : 0;
    units_size(a, sizeof a, sign > 0 ? now - was : was - now);
    table_cell(t, "%s%s%s", pin_mark(sign, more_is_good), sign > 0 ? "+" : sign < 0 ? "-" : "", sign ? a : "0");
}

/* "+38%", "-12%"; "-" where the pinned figure was 0. */
static void pin_percent_cell(Table *t, double was, double now, bool more_is_good)
{
    const int sign = now > was ? 1 : now < was ? -1 : 0;
    if (was == 0) {
        table_cell(t, "%s", sign ? "-" : "0%");
        return;
    }
    table_cell(t, "%s%+.0f%%", pin_mark(sign, more_is_good), (now - was) / was * PERCENT);
}

/* "+4", "-3", "0". */
static void pin_count_cell(Table *t, u128 was, u128 now)
{
    char a[48];
    const int sign = now > was ? 1 : now < was ? -1 : 0;
    u128_str(a, sizeof a, sign > 0 ? now - was : was - now, true);
    table_cell(t, "%s%s%s", pin_mark(sign, true), sign > 0 ? "+" : sign < 0 ? "-" : "", a);
}

static const FormatResult *pin_find(const Pin *p, const Format *f)
{
    for (size_t i = 0; i < p->n_formats; i++)
        if (strcmp(p->res.r[i].format->id, f->id) == 0)
            return &p->res.r[i];
    return NULL;
}

void pin_table(const Pin *p, const Report *rp, const Results *res, Table *t)
{
    const bool slots = res->r[0].has_slots && p->res.r[0].has_slots;
    const bool step = res->r[0].has_step && p->res.r[0].has_step;
    table_init(t, 3 + slots + step);
    table_row(t);
    table_cell(t, "format");
    table_cell(t, "KV total");
    table_cell(t, "KV %%");
    if (slots)
        table_cell(t, "slots");
    if (step)
        table_cell(t, "step %%");
    for (size_t i = 0; i < rp->n_formats; i++) {
        const FormatResult *now = &res->r[i], *was = pin_find(p, now->format);
        if (!was)
            continue;
        table_row(t);
        table_cell(t, "%s", now->format->id);
        pin_size_cell(t, was->fp.bytes, now->fp.bytes, false);
        pin_percent_cell(t, (double)was->fp.bytes, (double)now->fp.bytes, false);
        if (slots)
            pin_count_cell(t, was->slots, now->slots);
        if (step)
            pin_percent_cell(t, q_to_double(was->step_ms), q_to_double(now->step_ms), false);
    }
}

void pin_layout(Pin *p, const Report *rp, const Results *res, Doc *d)
{
    if (!p->on)
        return;
    char line[300];
    snprintf(line, sizeof line, "Change from the pin (P unpins): %s", p->what);
    doc_text(d, 0, crt_attr(ROLE_TITLE), line);
    pin_table(p, rp, res, &p->table);
    if (p->table.rows < 2) {
        doc_text(d, 0, crt_attr(ROLE_DIM), "none of these formats is in the pinned figures");
        return;
    }
    static const char *const DROP[] = {"step %", "KV %"};     // the per cents go first
    for (size_t i = 0; i < sizeof DROP / sizeof DROP[0] && table_width(&p->table) > d->win.w; i++)
        table_drop_column(&p->table, DROP[i]);
    doc_table(d, &p->table);
}
