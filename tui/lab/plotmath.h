/* plotmath.h - the arithmetic behind the widgets, apart from curses so that
 * it is unit-tested: axis ticks, scaling values to cells, which plot markers
 * hide which, legend rows, partial bars, heat levels, downsampling a matrix
 * to fewer cells, time left. */
#ifndef KVLAB_PLOTMATH_H
#define KVLAB_PLOTMATH_H

#include <stddef.h>
#include <stdint.h>

#define TICKS_MAX 12
#define MARK_SERIES_MAX 32      // series a marker mask can name

/* "Nice" ticks covering [lo, hi]: steps of 1, 2 or 5 x 10^k, at most
 * max_ticks of them; returns the count. */
int nice_ticks(double lo, double hi, int max_ticks, double *ticks);

/* Cell index 0..cells-1 for v on an axis from lo to hi (clamped); with
 * log2, the axis is logarithmic (lo, hi > 0). */
int scale_to_cell(double v, double lo, double hi, int cells, int log2);

/* One plot marker: its series and its cell. */
typedef struct {
    int series;                 // 0 .. MARK_SERIES_MAX - 1
    int col, row;
} PlotMark;

/* Markers drawn in order, each cell showing the last one drawn there: for
 * each of n series (n <= MARK_SERIES_MAX), the cells that show it (shown)
 * and, as a mask (bit k: series k), the series shown in the cells where
 * its markers are hidden (under). A series with shown 0 is nowhere to be
 * seen; its legend names the series of `under`. O(count^2): plots have
 * tens of markers. */
void marker_cover(const PlotMark *m, size_t count, size_t n, size_t *shown, uint32_t *under);

/* Legend entries of widths[i] columns, left to right in rows of at most w
 * columns with gap columns between entries: each entry's column offset and
 * row; returns the number of rows. An entry wider than w has a row of its
 * own. */
int legend_layout(const int *widths, size_t n, int w, int gap, int *col, int *row);

/* A bar of value v out of max over width cells: whole cells and eighths of
 * the next one (0..7). Negative or NaN values give an empty bar. */
void bar_cells(double v, double max, int width, int *full, int *eighths);

/* Heat level 0..steps-1 of v on [lo, hi]. */
int heat_level(double v, double lo, double hi, int steps);

/* The value a cell shows when rows x cols values are drawn in h x w cells:
 * of the block of values under cell (r, c), the one of largest magnitude,
 * so a single outlier stays visible. m is row major. */
float block_value(const float *m, size_t rows, size_t cols, int h, int w, int r, int c);

/* Seconds left at a steady rate, from done of total after elapsed seconds;
 * negative when unknown (nothing done yet). */
double eta_seconds(double done, double total, double elapsed);
/* "0.0040 s", "0.42 s", "4.2 s", "12 s", "3 min 20 s", "1 h 05 min": two
 * significant digits at least; "?" when unknown (negative). */
const char *format_duration(double seconds, char *buf, size_t n);

/* The first line that a window of h lines shows of `lines`, from `first`
 * as asked: not below 0, and not so far that the window runs past the
 * last line into blank ones. */
int scroll_clamp(int first, int lines, int h);

/* Compact numbers for axes: 1024 -> "1k", 131072 -> "128k", 0.25 -> "0.25". */
const char *format_tick(double v, char *buf, size_t n);

#endif
