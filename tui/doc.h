/* doc.h - a view laid out as a document: lines one under another
 * (wrapped text, tables, blocks such as a plot) in a window that shows
 * some of them, from line `first` on.
 *
 * Laying out counts every line and draws only those inside the window, so
 * the one function that draws a screen also measures it: begun with
 * doc_measure it draws nothing and ends with the number of lines, which is
 * how far the view can scroll. The lab clamps the first line
 * (scroll_clamp) and marks where more lies above or below (doc_marks).
 */
#ifndef KVLAB_DOC_H
#define KVLAB_DOC_H

#include "cli.h"
#include "widget.h"

#include <stdbool.h>

typedef struct {
    Rect win;           // the window
    int first;          // the document's line at the window's top
    int line;           // the next line to lay out; the total at the end
    bool measure;       // count the lines, draw nothing
} Doc;

/* Lays out into win from line `first`, drawing. */
void doc_begin(Doc *d, Rect win, int first);
/* Lays out as into win, only counting. */
void doc_measure(Doc *d, Rect win);
/* n blank lines. */
void doc_gap(Doc *d, int n);
/* Text wrapped to the window's width less `indent` columns. */
void doc_text(Doc *d, int indent, int attr, const char *text);
/* A title and a rule after it, on one line when it fits, else wrapped. */
void doc_title(Doc *d, const char *title);
/* `key` in a column key_w wide, `text` wrapped beside it. */
void doc_pair(Doc *d, int key_w, int key_attr, const char *key, int attr, const char *text);
/* A table, a line a row, its header first. */
void doc_table(Doc *d, const Table *t);
/* One row of a table (0: the header) in the whole table's columns. */
void doc_table_row(Doc *d, const Table *t, size_t row, int indent);
/* A block of h lines that draws itself (a plot, bars): true, with *r the
 * part of it inside the window (maybe fewer than h lines) and *skip its
 * lines above the window, when any of it is there. */
bool doc_block(Doc *d, int h, Rect *r, int *skip);
/* Whether a block that cannot be shown in part (a plot) is whole in r,
 * the part of its h lines in the window; where it is not, a line in r says
 * to scroll. */
bool doc_whole(Rect r, int h);
/* Lines of the window below the current line before any scrolling: room
 * for a block that fills the rest of the view when it fits. */
int doc_room(const Doc *d);

/* A view that lays itself out as a document: drawn into r from line
 * `first`, or measured (its lines). */
typedef void (*DocLayout)(void *st, Doc *d);
void doc_view(Rect r, int first, DocLayout layout, void *st);
int doc_view_lines(Rect r, DocLayout layout, void *st);

/* Marks on the window's first and last rows (they cover the lines there)
 * where more lines lie above or below: "▲ more above", "▼ more below
 * (hint)". Nothing when all of them fit. */
void doc_marks(Rect win, int first, int lines, const char *hint);

#endif
