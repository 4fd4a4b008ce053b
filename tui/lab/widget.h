/* widget.h - drawing functions for the lab's screens.
 *
 * Each widget draws from the data it is given into a rectangle of the
 * screen and keeps no state: the screens own their data, the widgets only
 * draw it (nvtop's plot.c is the model). Sizes come from the rectangle, so
 * a resize needs nothing but a redraw.
 *
 * Drawing goes only inside the clip (widget_clip): a document's window
 * (doc.h) clips what it lays out, so a widget is drawn in its whole
 * rectangle and the rows of it above or below the window are simply not
 * there; they scroll into view. What a widget cannot fit into its own
 * rectangle is lost, and it says so in the cut log: a text cut short, a
 * wrapped line, table row, bar or field with no row left for it.
 *
 * Text reaches the widgets escaped (text_escape, tui/text.h) where it enters
 * the lab: the documents' texts (doc.h), the status line, the fields'
 * choices and the table cells, so that what is measured is what is drawn.
 */
#ifndef KVLAB_WIDGET_H
#define KVLAB_WIDGET_H

#include "crt.h"
#include "tui/table.h"
#include "tui/text.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
    int y, x, h, w;
} Rect;

/* Limits drawing to r (the whole screen when r is empty: h or w 0);
 * returns the clip it replaces. */
Rect widget_clip(Rect r);

/* Text clipped to width w at (y, x); returns the columns it takes there.
 * Text that does not fit is cut, and reported to the cut log when one is
 * set. A control character that reaches it unescaped is drawn escaped all
 * the same, never sent, and reported too: the layout measured other text. */
int put_text(int y, int x, int w, int attr, const char *s);
/* Where the widgets report every text they had to cut and every line they
 * lost, one line each with the window size, position, width and the whole
 * text (KVLAB_CUT_LOG, so the screen tests can check that nothing
 * meaningful is lost); NULL: nowhere. */
void widget_cut_log(FILE *log);
/* What is being drawn (a screen's name, "Help"), the first word of each
 * line of the cut log. */
void widget_cut_context(const char *what);
/* Reports a line of text that had no row left to it at r (a widget's own,
 * such as the lab's field pane). */
void widget_lost(Rect r, const char *text);
/* A boxed title line: "title ────". */
void draw_title(Rect r, const char *title);
/* Lines that `text` takes wrapped to w columns. */
int wrap_lines(const char *text, int w);
/* Words wrapped into r (the lines past its last row are lost). */
void draw_wrapped(Rect r, int attr, const char *text);

/* A Table (tui/table.h) in r: its header, then its rows (those past r's last
 * row are lost), in columns as wide as every row needs; cells whose text
 * starts with '!' are drawn in ROLE_BAD, '~' in ROLE_WARN, '+' in
 * ROLE_GOOD (the marker is not shown). */
void draw_table(Rect r, const Table *t);
/* Row `row` of a table (0 is the header) on r's first line, in the
 * columns draw_table gives the whole table. */
void draw_table_row(Rect r, const Table *t, size_t row);

typedef struct {
    const char *label;
    double value;
    const char *text;           // shown after the bar
} BarItem;

/* Horizontal bars scaled to the largest value, eighths of a cell, a line
 * each (those past r's last row are lost). */
void draw_bars(Rect r, const BarItem *items, size_t n);

typedef struct {
    const char *name;
    const double *x, *y;
    size_t n;
} Series;

#define PLOT_MIN_ROWS 12        // a plot's rows at the least: its axes, legend and a few
#define PLOT_MIN_COLS 30        // and its columns

/* A line plot with axes, ticks and a legend; x on a log2 axis when log2x.
 * Smaller than PLOT_MIN_ROWS x PLOT_MIN_COLS, a note in its place. */
void draw_plot(Rect r, const Series *s, size_t n, bool log2x, const char *xlabel,
               const char *ylabel);

/* draw_plot for figures measured on another machine (stored): hollow
 * markers, in the plot and its legend, so that they are never taken for
 * this machine's. */
void draw_plot_elsewhere(Rect r, const Series *s, size_t n, bool log2x, const char *xlabel,
                         const char *ylabel);

/* A heatmap of a rows x cols matrix on [lo, hi] (diverging around the middle),
 * downsampled to the rectangle; a colour scale with its ends labelled
 * underneath. In monochrome the cells are density characters. */
void draw_heatmap(Rect r, const char *title, const float *m, size_t rows, size_t cols, double lo,
                  double hi);

#define PROGRESS_ROWS 3         // the label, the share done and time left, the bar

/* A progress box of PROGRESS_ROWS: what is being done, then the share
 * done, the time left and "Esc cancels", then the bar. */
void draw_progress(Rect r, const char *label, double done, double total, double elapsed);

typedef struct {
    const char *key;            // "F1", "q"
    const char *label;          // "Help"
} BarKey;

/* The function bar on one line. */
void draw_function_bar(int y, int w, const BarKey *keys, size_t n);

#endif
