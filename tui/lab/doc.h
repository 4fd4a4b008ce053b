/* doc.h - a view laid out as a document: lines one under another
 * (wrapped text, tables, blocks such as a plot) in a window that shows
 * some of them, from line `first` on.
 *
 * Laying out counts every line and draws what it lays out clipped to the
 * window (widget_clip), so the one function that draws a screen also
 * measures it: measured (doc_view_lines) it draws nothing and ends with
 * the number of lines, which is how far the view can scroll. The lab
 * clamps the first line (scroll_clamp) and marks where more lies above or
 * below (doc_marks). Texts are escaped (text_escape) before they are
 * measured, so that what is measured is what is drawn.
 */
#ifndef KVLAB_DOC_H
#define KVLAB_DOC_H

#include "tui/text.h"
#include "widget.h"

#include <stdbool.h>

typedef struct {
    Rect win;           // the window
    int first;          // the document's line at the window's top
    int line;           // the next line to lay out; the total at the end
    int lines;          // drawing: the document's lines (where the marks are)
    bool measure;       // count the lines, draw nothing
} Doc;

/* Lays out as into win, only counting (a part of a view, to size another). */
void doc_measure(Doc *d, Rect win);
/* n blank lines. */
void doc_gap(Doc *d, int n);
/* Text wrapped to the window's width less `indent` columns; a newline in
 * it starts a line. */
void doc_text(Doc *d, int indent, int attr, const char *text);
/* A title and a rule after it, on one line when it fits, else wrapped. */
void doc_title(Doc *d, const char *title);
/* `key` in a column key_w wide, `text` wrapped beside it. */
void doc_pair(Doc *d, int key_w, int key_attr, const char *key, int attr, const char *text);
/* A table, one line per row, its header first. */
void doc_table(Doc *d, const Table *t);
/* One row of a table (0: the header) in the whole table's columns. */
void doc_table_row(Doc *d, const Table *t, size_t row, int indent);
/* Bars under a title, a line each, scaled together; `none` on the line
 * under the title when there are none. */
void doc_bars(Doc *d, const char *title, const BarItem *items, size_t n, const char *none);
/* A block of h lines that draws itself: true, with *r its place on the
 * screen (rows of it outside the window are clipped), when any of it is in
 * the window. */
bool doc_block(Doc *d, int h, Rect *r);
/* Whether a block that is shown whole or not at all (a plot), at r, lies
 * in the window clear of the marks that cover its first and last rows
 * where more lies above or below; where it does not, its first row in
 * the window says to scroll. */
bool doc_whole(const Doc *d, Rect r);
/* Lines of the window below the current line before any scrolling. */
int doc_room(const Doc *d);
/* Lines for a block that fills the window down to its end with `after`
 * lines still to follow it: where that leaves it fewer than `least`, the
 * view scrolls, and it fills the window down to the row that says more
 * lies below; `least` at the least. */
int doc_fill(const Doc *d, int after, int least);
/* A document beside others in the columns [x, x + w) of d's window, from
 * d's current line, laid out on its own; then doc_below. */
Doc doc_beside(const Doc *d, int x, int w);
/* d goes on below the taller of two documents laid out beside each other. */
void doc_below(Doc *d, const Doc *a, const Doc *b);

/* A view that lays itself out as a document: drawn into r from line
 * `first` (the view's lines, doc_view_lines, say where the marks go), or
 * measured (its lines). */
typedef void (*DocLayout)(void *st, Doc *d);
void doc_view(Rect r, int first, int lines, DocLayout layout, void *st);
int doc_view_lines(Rect r, DocLayout layout, void *st);

/* Marks on the window's first and last rows (they cover the lines there)
 * where more lines lie above or below: "▲ more above", "▼ more below
 * (hint)". Nothing when all of them fit. */
void doc_marks(Rect win, int first, int lines, const char *hint);

#endif
