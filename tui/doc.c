/* doc.c - see doc.h. */
#include "doc.h"

#include <curses.h>
#include <stdio.h>

void doc_begin(Doc *d, Rect win, int first)
{
    *d = (Doc){win, first, 0, false};
}

void doc_measure(Doc *d, Rect win)
{
    *d = (Doc){win, 0, 0, true};
}

void doc_gap(Doc *d, int n)
{
    d->line += n;
}

/* The window row of document line `line` (outside the window when the
 * line is). */
static int row_of(const Doc *d, int line)
{
    return d->win.y + line - d->first;
}

/* Window rows from document line `line` to the window's bottom, or 0 when
 * measuring. */
static int rows_left(const Doc *d, int line)
{
    return d->measure ? 0 : d->first + d->win.h - line;
}

/* Wrapped text from document line d->line at column x, w wide: lines above
 * the window are skipped, lines below it counted. */
static int wrapped_at(Doc *d, int x, int w, int attr, const char *text)
{
    int skip = d->first > d->line ? d->first - d->line : 0;
    int y = row_of(d, d->line + skip), h = rows_left(d, d->line + skip);
    return draw_wrapped((Rect){y, x, h > 0 ? h : 0, w}, attr, text, skip);
}

void doc_text(Doc *d, int indent, int attr, const char *text)
{
    d->line += wrapped_at(d, d->win.x + indent, d->win.w - indent, attr, text);
}

void doc_title(Doc *d, const char *title)
{
    if ((int)text_columns(title) >= d->win.w) {
        doc_text(d, 0, crt_attr(ROLE_TITLE), title);
        return;
    }
    if (rows_left(d, d->line) > 0 && d->line >= d->first)
        draw_title((Rect){row_of(d, d->line), d->win.x, 1, d->win.w}, title);
    d->line++;
}

void doc_pair(Doc *d, int key_w, int key_attr, const char *key, int attr, const char *text)
{
    if (rows_left(d, d->line) > 0 && d->line >= d->first)
        put_text(row_of(d, d->line), d->win.x, key_w, key_attr, key);
    d->line += wrapped_at(d, d->win.x + key_w + 1, d->win.w - key_w - 1, attr, text);
}

void doc_table(Doc *d, const Table *t)
{
    int skip = d->first > d->line ? d->first - d->line : 0;
    int h = rows_left(d, d->line + skip);
    if (h > 0 && (size_t)skip < t->rows)
        draw_table_lines((Rect){row_of(d, d->line + skip), d->win.x, h, d->win.w}, t, (size_t)skip);
    d->line += (int)t->rows;
}

void doc_table_row(Doc *d, const Table *t, size_t row, int indent)
{
    if (rows_left(d, d->line) > 0 && d->line >= d->first) {
        draw_table_lines((Rect){row_of(d, d->line), d->win.x + indent, 1, d->win.w - indent}, t, row);
    }
    d->line++;
}

bool doc_block(Doc *d, int h, Rect *r, int *skip)
{
    int top = d->line > d->first ? d->line : d->first;
    int bottom = d->line + h < d->first + d->win.h ? d->line + h : d->first + d->win.h;
    *skip = top - d->line;
    d->line += h;
    if (d->measure || bottom <= top)
        return false;
    *r = (Rect){row_of(d, top), d->win.x, bottom - top, d->win.w};
    return true;
}

bool doc_whole(Rect r, int h)
{
    if (r.h >= h)
        return true;
    put_text(r.y + r.h / 2, r.x, r.w, crt_attr(ROLE_DIM), "(scroll to see the whole plot)");
    return false;
}

int doc_room(const Doc *d)
{
    return d->win.h - d->line;
}

void doc_view(Rect r, int first, DocLayout layout, void *st)
{
    Doc d;
    doc_begin(&d, r, first);
    layout(st, &d);
}

int doc_view_lines(Rect r, DocLayout layout, void *st)
{
    Doc d;
    doc_measure(&d, r);
    layout(st, &d);
    return d.line;
}

/* A marker row: the row cleared, then the mark. */
static void mark_row(int y, Rect win, Glyph g, const char *what)
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
        mark_row(win.y, win, GLYPH_MORE_UP, "more above");
    if (first + win.h < lines) {
        char what[80];
        snprintf(what, sizeof what, "more below (%s)", hint);
        mark_row(win.y + win.h - 1, win, GLYPH_MORE_DOWN, what);
    }
}
