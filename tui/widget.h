/* widget.h - drawing functions for the lab's screens.
 *
 * Each widget draws from the data it is given into a rectangle of the
 * screen and keeps no state: the screens own their data, the widgets only
 * draw it (nvtop's plot.c is the model). Sizes come from the rectangle, so
 * a resize needs nothing but a redraw.
 */
#ifndef KVLAB_WIDGET_H
#define KVLAB_WIDGET_H

#include "cli.h"
#include "crt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
    int y, x, h, w;
} Rect;

/* Text clipped to width w at (y, x); returns columns written. Text that
 * does not fit is cut, and reported to the cut log when one is set.
 * Control characters are drawn escaped (text_escape), never sent. */
int put_text(int y, int x, int w, int attr, const char *s);
/* Where put_text reports every text it had to cut, one line each with the
 * window size, position, width and the whole text (KVLAB_CUT_LOG, so the
 * screen tests can check that nothing meaningful is lost); NULL: nowhere. */
void widget_cut_log(FILE *log);
/* What is being drawn (a screen's name, "help"), the first word of each
 * line of the cut log. */
void widget_cut_context(const char *what);
/* A boxed title line: "title ────". */
void draw_title(Rect r, const char *title);
/* Words wrapped into r starting at line `skip`; returns the total line count. */
int draw_wrapped(Rect r, int attr, const char *text, int skip);

/* A Table (cli.h) in r: its header, then its rows from the `skip`-th after
 * it (0: all), in columns as wide as every row needs, so that they stay
 * put as the rows scroll; cells whose text starts with '!' are drawn in
 * ROLE_BAD, '~' in ROLE_WARN, '+' in ROLE_GOOD (the marker is not shown). */
void draw_table(Rect r, const Table *t, int skip);
/* Rows first, first + 1, ... of a table (0 is the header) on the lines of
 * r, in the columns draw_table gives the whole table. */
void draw_table_lines(Rect r, const Table *t, size_t first);

typedef struct {
    const char *label;
    double value;
    const char *text;           // shown after the bar
} BarItem;

/* Horizontal bars scaled to the largest value, eighths of a cell. */
void draw_bars(Rect r, const BarItem *items, size_t n);
/* The same from items[first] on, in the scale and columns of all n. */
void draw_bars_from(Rect r, const BarItem *items, size_t n, size_t first);

typedef struct {
    const char *name;
    const double *x, *y;
    size_t n;
} Series;

/* A line plot with axes, ticks and a legend; x on a log2 axis when log2x. */
void draw_plot(Rect r, const Series *s, size_t n, bool log2x, const char *xlabel,
               const char *ylabel);

/* A heatmap of a rows x cols matrix on [lo, hi] (diverging around the middle),
 * downsampled to the rectangle; a colour scale with its ends labelled
 * underneath. In monochrome the cells are density characters. */
void draw_heatmap(Rect r, const char *title, const float *m, size_t rows, size_t cols, double lo,
                  double hi);

/* A progress bar with the share done and the time left; "Esc cancels". */
void draw_progress(Rect r, const char *label, double done, double total, double elapsed);

typedef struct {
    const char *key;            // "F1", "q"
    const char *label;          // "Help"
} BarKey;

/* The function bar on one line. */
void draw_function_bar(int y, int w, const BarKey *keys, size_t n);

#endif
