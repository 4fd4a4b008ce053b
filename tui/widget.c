/* widget.c - see widget.h. */
#include "widget.h"

#include "plotmath.h"

#include <curses.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Text
 */

/* Columns taken by a UTF-8 string, as an int for screen arithmetic. */
static int text_width(const char *s)
{
    return (int)text_columns(s);
}

/* Bytes of s that fit in w columns. */
static size_t fit_bytes(const char *s, int w)
{
    size_t i = 0;
    int cols = 0;
    while (s[i]) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (cols == w)
                break;
            cols++;
        }
        i++;
    }
    return i;
}

static FILE *cut_log;
static const char *cut_context = "";

void widget_cut_log(FILE *log)
{
    cut_log = log;
}

void widget_cut_context(const char *what)
{
    cut_context = what;
}

/* Text on a visible row that loses columns: off the right edge or past w. */
static void report_cut(int y, int x, int w, const char *s)
{
    if (!cut_log || !*s || y < 0 || y >= LINES || (x < COLS && w > 0 && text_width(s) <= w))
        return;
    fprintf(cut_log, "%s: %dx%d row %d col %d width %d: %s\n", cut_context, COLS, LINES, y, x, w, s);
    fflush(cut_log);
}

int put_text(int y, int x, int w, int attr, const char *s)
{
    char safe[2048];
    s = text_escape(safe, sizeof safe, s, false);   // no control byte reaches the terminal
    if (x + w > COLS)
        w = COLS - x;
    report_cut(y, x, w, s);
    if (w <= 0 || y < 0 || y >= LINES || x >= COLS)
        return 0;
    size_t b = fit_bytes(s, w);
    attron(attr);
    mvaddnstr(y, x, s, (int)b);
    attroff(attr);
    int n = text_width(s);
    return n < w ? n : w;
}

void draw_title(Rect r, const char *title)
{
    int n = put_text(r.y, r.x, r.w, crt_attr(ROLE_TITLE), title);
    attron(crt_attr(ROLE_DIM));
    for (int i = n + 1; i < r.w; i++)
        mvaddstr(r.y, r.x + i, crt_glyph(GLYPH_HLINE));
    attroff(crt_attr(ROLE_DIM));
}

int draw_wrapped(Rect r, int attr, const char *text, int skip)
{
    int line = 0;
    const char *p = text;
    while (*p) {
        /* the longest run of words that fits, or a hard cut of a long word */
        const char *end = p, *brk = NULL;
        int cols = 0;
        while (*end && *end != '\n' && cols < r.w) {
            if (*end == ' ')
                brk = end;
            if (((unsigned char)*end & 0xC0) != 0x80)
                cols++;
            end++;
        }
        while (*end && ((unsigned char)*end & 0xC0) == 0x80)
            end++;
        if (*end && *end != '\n' && *end != ' ' && brk)
            end = brk;
        int row = line - skip;
        if (row >= 0 && row < r.h) {
            char buf[512];
            size_t n = (size_t)(end - p) < sizeof buf - 1 ? (size_t)(end - p) : sizeof buf - 1;
            memcpy(buf, p, n);
            buf[n] = '\0';
            put_text(r.y + row, r.x, r.w, attr, buf);
        }
        line++;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == '\n')
            p++;
    }
    return line;
}

/* ------------------------------------------------------------------------
 * Table
 */

static bool numeric(const char *s)
{
    s = cell_text(s);
    if (*s == '-' || *s == '+')
        s++;
    return (*s >= '0' && *s <= '9') || *s == '\0' || strcmp(s, "never") == 0 || *s == '-';
}

/* Column widths (as wide as every row needs) and alignment (right for
 * numbers) of a table. */
static void table_layout(const Table *t, int *width, bool *right)
{
    for (size_t c = 0; c < t->cols; c++) {
        width[c] = 0;
        right[c] = c > 0;
        for (size_t row = 0; row < t->rows; row++) {
            const char *s = t->cell[row][c];
            int w = (int)cell_columns(s);
            if (w > width[c])
                width[c] = w;
            if (row > 0 && !numeric(s))
                right[c] = false;
        }
    }
}

static void table_row_at(int y, Rect r, const Table *t, size_t row, const int *width, const bool *right)
{
    int x = r.x;
    for (size_t c = 0; c < t->cols && x < r.x + r.w; c++) {
        const char *s = t->cell[row][c];
        int attr = row == 0 ? crt_attr(ROLE_TITLE) : crt_attr(ROLE_NORMAL);
        if (row > 0) {
            if (*s == '!')
                attr = crt_attr(ROLE_BAD);
            else if (*s == '~')
                attr = crt_attr(ROLE_WARN);
            else if (*s == '+')
                attr = crt_attr(ROLE_GOOD);
        }
        s = cell_text(s);
        int pad = width[c] - text_width(s);
        put_text(y, x + (right[c] ? pad : 0), r.x + r.w - x - (right[c] ? pad : 0), attr, s);
        x += width[c] + 2;
    }
}

void draw_table(Rect r, const Table *t, int skip)
{
    int width[TABLE_COLS];
    bool right[TABLE_COLS];
    table_layout(t, width, right);
    for (int line = 0; line < r.h; line++) {
        size_t row = line == 0 ? 0 : (size_t)(line + (skip > 0 ? skip : 0));
        if (row >= t->rows)
            break;
        table_row_at(r.y + line, r, t, row, width, right);
    }
}

void draw_table_lines(Rect r, const Table *t, size_t first)
{
    int width[TABLE_COLS];
    bool right[TABLE_COLS];
    table_layout(t, width, right);
    for (int line = 0; line < r.h && first + (size_t)line < t->rows; line++)
        table_row_at(r.y + line, r, t, first + (size_t)line, width, right);
}

/* ------------------------------------------------------------------------
 * Bars
 */

/* A bar of v out of max in `width` cells from (y, x), in eighths of a
 * cell (bar_cells). */
static void put_bar(int y, int x, double v, double max, int width, int attr)
{
    int full, eighths;
    bar_cells(v, max, width, &full, &eighths);
    attron(attr);
    for (int k = 0; k < full; k++)
        mvaddstr(y, x + k, crt_glyph(GLYPH_BLOCK_8));
    if (eighths)
        mvaddstr(y, x + full, crt_glyph((Glyph)(GLYPH_BLOCK_1 + eighths - 1)));
    attroff(attr);
}

void draw_bars(Rect r, const BarItem *items, size_t n)
{
    draw_bars_from(r, items, n, 0);
}

void draw_bars_from(Rect r, const BarItem *items, size_t n, size_t first)
{
    int label_w = 0, text_w = 0;
    double max = 0;
    for (size_t i = 0; i < n; i++) {
        label_w = text_width(items[i].label) > label_w ? text_width(items[i].label) : label_w;
        if (items[i].text)
            text_w = text_width(items[i].text) > text_w ? text_width(items[i].text) : text_w;
        if (items[i].value > max)
            max = items[i].value;
    }
    /* The labels and numbers are whole; the bars take the columns left,
     * none when there are none (a number that does not fit is a layout
     * bug, reported by put_text). */
    int bar_w = r.w - label_w - text_w - 3;
    if (bar_w < 1)
        bar_w = 0;
    for (size_t i = first; i < n && (int)(i - first) < r.h; i++) {
        int y = r.y + (int)(i - first);
        put_text(y, r.x, label_w < r.w ? label_w : r.w, crt_attr(ROLE_NORMAL), items[i].label);
        put_bar(y, r.x + label_w + 1, items[i].value, max, bar_w,
                crt_attr((ColorRole)(ROLE_SERIES_1 + (int)(i % SERIES_COUNT))));
        int tx = r.x + label_w + 2 + bar_w;
        if (items[i].text && text_w > 0)
            put_text(y, tx, r.x + r.w - tx < text_w ? r.x + r.w - tx : text_w, crt_attr(ROLE_DIM), items[i].text);
    }
}

/* ------------------------------------------------------------------------
 * Line plot
 */

#define PLOT_SERIES_MAX 16
#define LEGEND_TEXT 160

/* Where a plot's parts go in its rectangle: the plotting area, the y axis
 * (its ticks, their column width, its range widened to them) and the
 * legend's rows at the bottom. */
typedef struct {
    Rect p;
    double ticks[TICKS_MAX], ylo, yhi;
    int nt, axis_w, legend_h;
} PlotFrame;

static void plot_frame(Rect r, int legend_h, double ylo, double yhi, PlotFrame *f)
{
    const int ph = r.h - 3 - legend_h;          // less the y label, x axis and x ticks
    f->legend_h = legend_h;
    f->nt = nice_ticks(ylo, yhi, ph / 2 + 1 < 6 ? ph / 2 + 1 : 6, f->ticks);
    if (f->nt >= 2) {   // the axis spans the ticks so that they land on rows
        ylo = fmin(ylo, f->ticks[0]);
        yhi = fmax(yhi, f->ticks[f->nt - 1]);
    }
    f->ylo = ylo, f->yhi = yhi;
    int label_w = 1;    // the widest tick label: numbers are never cut
    for (int i = 0; i < f->nt; i++) {
        char buf[32];
        int w = text_width(format_tick(f->ticks[i], buf, sizeof buf));
        label_w = w > label_w ? w : label_w;
    }
    f->axis_w = label_w + 2;    // the label, a space, the axis
    f->p = (Rect){r.y + 1, r.x + f->axis_w, ph, r.w - f->axis_w - 1};
}

/* Every series' markers in their cells, in drawing order; the count. */
static size_t plot_marks(const PlotFrame *f, const Series *s, size_t n, bool log2x, double xlo,
                         double xhi, PlotMark *m)
{
    size_t c = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < s[k].n; i++)
            m[c++] = (PlotMark){(int)k, scale_to_cell(s[k].x[i], xlo, xhi, f->p.w, log2x),
                                f->p.h - 1 - scale_to_cell(s[k].y[i], f->ylo, f->yhi, f->p.h, 0)};
    return c;
}

static const char *series_mark(size_t k)
{
    return crt_glyph((Glyph)(GLYPH_POINT_1 + (int)(k % SERIES_COUNT)));
}

/* The legend's entries: a series' name, and where none of its markers
 * shows, the series that hide them; widths with the marker and its space. */
static void legend_texts(const Series *s, size_t n, const size_t *shown, const uint32_t *under,
                         char text[][LEGEND_TEXT], int *widths)
{
    for (size_t k = 0; k < n; k++) {
        size_t len = (size_t)snprintf(text[k], LEGEND_TEXT, "%s", s[k].name);
        for (size_t t = 0, named = 0; !shown[k] && t < n; t++)
            if (under[k] >> t & 1 && len < LEGEND_TEXT)
                len += (size_t)snprintf(text[k] + len, LEGEND_TEXT - len, "%s%s %s", named++ ? ", " : " (under ",
                                        series_mark(t), s[t].name);
        if (!shown[k] && under[k] && len < LEGEND_TEXT)
            snprintf(text[k] + len, LEGEND_TEXT - len, ")");
        widths[k] = 2 + text_width(text[k]);
    }
}

/* Dots between a series' points, a straight line in cells. */
static void plot_line(const Rect *p, const PlotMark *m, size_t count)
{
    for (size_t i = 1; i < count; i++) {
        const PlotMark *a = &m[i - 1], *b = &m[i];
        int steps = abs(b->col - a->col) > abs(b->row - a->row) ? abs(b->col - a->col) : abs(b->row - a->row);
        for (int t = 1; t < steps; t++)
            mvaddstr(p->y + a->row + (b->row - a->row) * t / steps, p->x + a->col + (b->col - a->col) * t / steps,
                     crt.utf8 ? "\u00B7" : ".");
    }
}

void draw_plot(Rect r, const Series *s, size_t n, bool log2x, const char *xlabel,
               const char *ylabel)
{
    if (n > PLOT_SERIES_MAX)
        n = PLOT_SERIES_MAX;
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += s[k].n;
    if (!total)
        return;
    if (r.h < 8 || r.w < 30) {
        draw_wrapped(r, crt_attr(ROLE_DIM), "(a larger window shows the plot)", 0);
        return;
    }
    PlotMark *m = malloc(total * sizeof *m);
    if (!m)
        return;
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < s[k].n; i++) {
            xlo = fmin(xlo, s[k].x[i]), xhi = fmax(xhi, s[k].x[i]);
            ylo = fmin(ylo, s[k].y[i]), yhi = fmax(yhi, s[k].y[i]);
        }
    if (!(yhi > ylo)) {
        yhi = ylo + 1;
        ylo -= 1;
    }
    /* The legend says which series hide one another, which takes rows from
     * the plot, which moves the markers: settle the two together. */
    static char text[PLOT_SERIES_MAX][LEGEND_TEXT];
    int widths[PLOT_SERIES_MAX], col[PLOT_SERIES_MAX], row[PLOT_SERIES_MAX];
    size_t shown[PLOT_SERIES_MAX];
    uint32_t under[PLOT_SERIES_MAX] = {0};
    for (size_t k = 0; k < n; k++)
        shown[k] = 1;
    legend_texts(s, n, shown, under, text, widths);
    PlotFrame f;
    int legend_h = legend_layout(widths, n, r.w, 2, col, row);
    for (int pass = 0; pass < 4; pass++) {
        plot_frame(r, legend_h, ylo, yhi, &f);
        if (f.p.h < 2)
            break;
        marker_cover(m, plot_marks(&f, s, n, log2x, xlo, xhi, m), n, shown, under);
        legend_texts(s, n, shown, under, text, widths);
        int rows = legend_layout(widths, n, r.w, 2, col, row);
        if (rows <= legend_h)
            break;
        legend_h = rows;
    }
    if (f.p.h < 2 || f.p.w < 8) {
        free(m);
        draw_wrapped(r, crt_attr(ROLE_DIM), "(a larger window shows the plot)", 0);
        return;
    }
    const Rect p = f.p;
    put_text(r.y, r.x, r.w, crt_attr(ROLE_DIM), ylabel);
    attron(crt_attr(ROLE_DIM));
    for (int y = 0; y < p.h; y++)
        mvaddstr(p.y + y, p.x - 1, crt_glyph(GLYPH_VLINE));
    for (int x = 0; x < p.w; x++)
        mvaddstr(p.y + p.h, p.x + x, crt_glyph(GLYPH_HLINE));
    mvaddstr(p.y + p.h, p.x - 1, crt_glyph(GLYPH_CORNER));
    attroff(crt_attr(ROLE_DIM));
    char buf[32];
    for (int i = 0; i < f.nt; i++) {   // right-aligned against the axis
        int y = p.y + p.h - 1 - scale_to_cell(f.ticks[i], f.ylo, f.yhi, p.h, 0);
        int w = text_width(format_tick(f.ticks[i], buf, sizeof buf));
        put_text(y, p.x - 2 - w, w, crt_attr(ROLE_DIM), buf);
    }
    /* x ticks: the first series' x values, as many as fit */
    int last_end = -100;
    for (size_t i = 0; i < s[0].n; i++) {
        int c = scale_to_cell(s[0].x[i], xlo, xhi, p.w, log2x);
        format_tick(s[0].x[i], buf, sizeof buf);
        int start = p.x + c - text_width(buf) / 2;
        if (start + text_width(buf) > r.x + r.w)
            start = r.x + r.w - text_width(buf);
        if (start > last_end + 1) {
            put_text(p.y + p.h + 1, start, text_width(buf), crt_attr(ROLE_DIM), buf);
            last_end = start + text_width(buf);
        }
    }
    /* the axis name goes at the right end of the y label's line */
    put_text(r.y, r.x + r.w - text_width(xlabel) - 2, text_width(xlabel) + 2, crt_attr(ROLE_DIM), xlabel);
    /* every line first, then every marker: no line hides a marker */
    size_t count = plot_marks(&f, s, n, log2x, xlo, xhi, m);
    for (size_t k = 0, at = 0; k < n; at += s[k].n, k++) {
        int attr = crt_attr((ColorRole)(ROLE_SERIES_1 + (int)(k % SERIES_COUNT)));
        attron(attr);
        plot_line(&p, m + at, s[k].n);
        attroff(attr);
    }
    for (size_t i = 0; i < count; i++) {
        int attr = crt_attr((ColorRole)(ROLE_SERIES_1 + m[i].series % SERIES_COUNT));
        attron(attr);
        mvaddstr(p.y + m[i].row, p.x + m[i].col, series_mark((size_t)m[i].series));
        attroff(attr);
    }
    free(m);
    for (size_t k = 0; k < n; k++) {
        int ly = r.y + r.h - f.legend_h + row[k], lx = r.x + col[k];
        int attr = crt_attr((ColorRole)(ROLE_SERIES_1 + (int)(k % SERIES_COUNT)));
        attron(attr);
        mvaddstr(ly, lx, series_mark(k));
        attroff(attr);
        put_text(ly, lx + 2, widths[k] - 2, crt_attr(ROLE_NORMAL), text[k]);
    }
}

/* ------------------------------------------------------------------------
 * Heatmap
 */

static void heat_cell(int y, int x, int level)
{
    if (crt.depth == COLORS_NONE) {
        mvaddstr(y, x, crt_glyph((Glyph)(GLYPH_SHADE_0 + level)));
    } else {
        attron(crt_attr((ColorRole)(ROLE_HEAT_0 + level)));
        mvaddstr(y, x, " ");
        attroff(crt_attr((ColorRole)(ROLE_HEAT_0 + level)));
    }
}

void draw_heatmap(Rect r, const char *title, const float *m, size_t rows, size_t cols, double lo,
                  double hi)
{
    if (r.h < 4 || r.w < 8)
        return;
    put_text(r.y, r.x, r.w, crt_attr(ROLE_TITLE), title);
    int h = r.h - 2, w = r.w;
    if ((size_t)h > rows)
        h = (int)rows;
    int cw = (size_t)w >= cols * 2 ? 2 : 1;        // two columns a value when it fits
    w = (int)((size_t)w / (size_t)cw < cols ? (size_t)w / (size_t)cw : cols);
    /* Colour shows sign and size on a diverging ramp; density characters
     * cannot show sign, so in monochrome they show the magnitude, 0 blank. */
    bool mono = crt.depth == COLORS_NONE;
    double top = fmax(fabs(lo), fabs(hi));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float v = block_value(m, rows, cols, h, w, y, x);
            int level = mono ? heat_level(fabs(v), 0, top, HEAT_STEPS) : heat_level(v, lo, hi, HEAT_STEPS);
            for (int k = 0; k < cw; k++)
                heat_cell(r.y + 1 + y, r.x + x * cw + k, level);
        }
    /* the scale: its two ends whole, the ramp between them in the columns
     * left (every level where they fit, else evenly chosen ones, at least
     * the two ends); where no ramp fits, "lo..hi", or shorter, the range
     * as "±hi" (symmetric) or "<=top" (magnitudes) */
    int sy = r.y + 1 + h;
    char a[32], b[32];
    snprintf(a, sizeof a, mono ? "|v| 0" : "%.3g", lo);
    snprintf(b, sizeof b, "%.3g", mono ? top : hi);
    int ramp = r.w - text_width(a) - text_width(b) - 2;
    if (ramp > HEAT_STEPS)
        ramp = HEAT_STEPS;
    if (ramp < 2) {
        char both[72];
        snprintf(both, sizeof both, "%s..%s", a, b);
        if (text_width(both) > r.w && (mono || lo == -hi))
            snprintf(both, sizeof both, "%s%s", mono ? (crt.utf8 ? "\u2264" : "<=") : (crt.utf8 ? "\u00B1" : "+-"), b);
        put_text(sy, r.x, r.w, crt_attr(ROLE_DIM), both);
        return;
    }
    int n = put_text(sy, r.x, r.w, crt_attr(ROLE_DIM), a);
    for (int k = 0; k < ramp; k++)
        heat_cell(sy, r.x + n + 1 + k, (k * (HEAT_STEPS - 1) + (ramp - 1) / 2) / (ramp - 1));
    put_text(sy, r.x + n + 2 + ramp, text_width(b), crt_attr(ROLE_DIM), b);
}

/* ------------------------------------------------------------------------
 * Progress and the function bar
 */

void draw_progress(Rect r, const char *label, double done, double total, double elapsed)
{
    char eta[32], line[160];
    double left = eta_seconds(done, total, elapsed);
    format_duration(left, eta, sizeof eta);
    snprintf(line, sizeof line, "%s  %3.0f%%  %s left  (Esc cancels)", label,
             total > 0 ? 100 * done / total : 0, eta);
    put_text(r.y, r.x, r.w, crt_attr(ROLE_NORMAL), line);
    put_bar(r.y + 1, r.x, done, total, r.w, crt_attr(ROLE_SERIES_1));
}

void draw_function_bar(int y, int w, const BarKey *keys, size_t n)
{
    attron(crt_attr(ROLE_BAR));
    mvhline(y, 0, ' ', w);
    attroff(crt_attr(ROLE_BAR));
    int x = 0;
    for (size_t i = 0; i < n && x < w; i++) {
        x += put_text(y, x, w - x, crt_attr(ROLE_KEY), keys[i].key);
        x += put_text(y, x, w - x, crt_attr(ROLE_BAR), keys[i].label);
        x += 1;
    }
}
