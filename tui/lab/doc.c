/* doc.c - see doc.h. */
#include "doc.h"

#include <curses.h>
#include <stdio.h>

#define TEXT_MAX 8192           // a story of 1,024 bytes, each escaped to at most 6

void doc_measure(Doc *d, Rect win)
{
    *d = (Doc){win, 0, 0, 0, true};
}

void doc_gap(Doc *d, int n)
{
    d->line += n;
}

bool doc_block(Doc *d, int h, Rect *r)
{
    const int line = d->line;
    d->line += h;
    if (d->measure || line + h <= d->first || line >= d->first + d->win.h)
        return false;
    *r = (Rect){d->win.y + line - d->first, d->win.x, h, d->win.w};
    return true;
}

/* Text wrapped from column `indent`, already escaped. */
static void doc_wrapped(Doc *d, int indent, int attr, const char *text)
{
    const int w = d->win.w - indent, n = wrap_lines(text, w);
    Rect r;
    if (doc_block(d, n, &r))
        draw_wrapped((Rect){r.y, r.x + indent, n, w}, attr, text);
}

void doc_text(Doc *d, int indent, int attr, const char *text)
{
    char buf[TEXT_MAX];
    doc_wrapped(d, indent, attr, text_escape(buf, sizeof buf, text, true));
}

void doc_title(Doc *d, const char *title)
{
    char buf[TEXT_MAX];
    text_escape(buf, sizeof buf, title, false);
    Rect r;
    if ((int)text_columns(buf) >= d->win.w)
        doc_wrapped(d, 0, crt_attr(ROLE_TITLE), buf);
    else if (doc_block(d, 1, &r))
        draw_title(r, buf);
}

void doc_pair(Doc *d, int key_w, int key_attr, const char *key, int attr, const char *text)
{
    char k[256], buf[TEXT_MAX];
    text_escape(k, sizeof k, key, false);
    text_escape(buf, sizeof buf, text, true);
    const int w = d->win.w - key_w - 1, n = wrap_lines(buf, w);
    Rect r;
    if (doc_block(d, n > 1 ? n : 1, &r)) {
        put_text(r.y, r.x, key_w, key_attr, k);
        draw_wrapped((Rect){r.y, r.x + key_w + 1, n, w}, attr, buf);
    }
}

void doc_table(Doc *d, const Table *t)
{
    Rect r;
    if (doc_block(d, (int)t->rows, &r))
        draw_table(r, t);
}

void doc_table_row(Doc *d, const Table *t, size_t row, int indent)
{
    Rect r;
    if (doc_block(d, 1, &r))
        draw_table_row((Rect){r.y, r.x + indent, 1, r.w - indent}, t, row);
}

void doc_bars(Doc *d, const char *title, const BarItem *items, size_t n, const char *none)
{
    Rect r;
    if (!doc_block(d, 1 + (n ? (int)n : 1), &r))
        return;
    draw_title((Rect){r.y, r.x, 1, r.w}, title);
    if (n)
        draw_bars((Rect){r.y + 1, r.x, (int)n, r.w}, items, n);
    else
        put_text(r.y + 1, r.x, r.w, crt_attr(ROLE_DIM), none);
}

bool doc_whole(const Doc *d, Rect r)
{
    const int top = d->win.y + (d->first > 0 ? 1 : 0);
    const int bottom = d->win.y + d->win.h - (d->first + d->win.h < d->lines ? 1 : 0);
    if (r.y >= top && r.y + r.h <= bottom)
        return true;
    const int y = r.y > top ? r.y : top;
    if (y < r.y + r.h && y < bottom)
        put_text(y, r.x, r.w, crt_attr(ROLE_DIM), "(scroll to see the whole plot)");
    return false;
}

int doc_room(const Doc *d)
{
    return d->win.h - d->line;
}

int doc_fill(const Doc *d, int after, int least)
{
    const int room = doc_room(d);
    if (room - after >= least)
        return room - after;
    return room - 1 > least ? room - 1 : least;
}

Doc doc_beside(const Doc *d, int x, int w)
{
    Doc c = *d;
    c.win.x += x;
    c.win.w = w;
    return c;
}

void doc_below(Doc *d, const Doc *a, const Doc *b)
{
    d->line = a->line > b->line ? a->line : b->line;
}

void doc_view(Rect r, int first, int lines, DocLayout layout, void *st)
{
    if (r.h <= 0 || r.w <= 0)           // no window (an empty clip is the whole screen)
        return;
    Doc d = {r, first, 0, lines, false};
    Rect screen = widget_clip(r);
    layout(st, &d);
    widget_clip(screen);
}

int doc_view_lines(Rect r, DocLayout layout, void *st)
{
    Doc d;
    doc_measure(&d, r);
    layout(st, &d);
    return d.line;
}

/* A marker row: the row cleared, then the mark. */
static void doc_mark_row(int y, Rect win, Glyph g, const char *what)
{
    char text[96];
    snprintf(text, sizeof text, "%s %s", crt_glyph(g), what);
    attron(crt_attr(ROLE_NORMAL));
    mvhline(y, win.x, ' ', win.w);
    attroff(crt_attr(ROLE_NORMAL));
    put_text(y, win.x, win.w, crt_attr(ROLE_KEY), text);
}

void doc_marks(Rect win, int first, int lines, const char *hint)
{
    if (lines <= win.h || win.h < 1)
        return;
    if (first > 0)
        doc_mark_row(win.y, win, GLYPH_MORE_UP, "more above");
    if (first + win.h < lines) {
        char what[80];
        snprintf(what, sizeof what, "more below (%s)", hint);
        doc_mark_row(win.y + win.h - 1, win, GLYPH_MORE_DOWN, what);
    }
}
