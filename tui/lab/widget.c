/* widget.c - see widget.h. */
#include "widget.h"

#include "plotmath.h"

#include <curses.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * The clip and the cut log
 */

static Rect clip;                       // empty: the whole screen
static FILE *cut_log;
static const char *cut_context = "";

Rect widget_clip(Rect r)
{
    Rect before = clip;
    clip = r;
    return before;
}

/* The clip as screen rows [*top, *bottom) and columns [*left, *right). */
static void widget_clip_box(int *top, int *bottom, int *left, int *right)
{
    bool all = clip.h <= 0 || clip.w <= 0;
    *top = all || clip.y < 0 ? 0 : clip.y;
    *left = all || clip.x < 0 ? 0 : clip.x;
    *bottom = all || clip.y + clip.h > LINES ? LINES : clip.y + clip.h;
    *right = all || clip.x + clip.w > COLS ? COLS : clip.x + clip.w;
}

static bool widget_row_shown(int y)
{
    int top, bottom, left, right;
    widget_clip_box(&top, &bottom, &left, &right);
    return y >= top && y < bottom;
}

/* A one-column glyph at (y, x), where the clip shows it. */
static void widget_put_glyph(int y, int x, int attr, const char *glyph)
{
    int top, bottom, left, right;
    widget_clip_box(&top, &bottom, &left, &right);
    if (y < top || y >= bottom || x < left || x >= right)
        return;
    attron(attr);
    mvaddstr(y, x, glyph);
    attroff(attr);
}

void widget_cut_log(FILE *log)
{
    cut_log = log;
}

void widget_cut_context(const char *what)
{
    cut_context = what;
}

/* One line of the cut log: where, and `what` happened to the text s. */
static void widget_report(int y, int x, int w, const char *what, const char *s)
{
    if (!cut_log)
        return;
    fprintf(cut_log, "%s: %dx%d row %d col %d width %d: %s%s\n", cut_context, COLS, LINES, y, x, w, what, s);
    fflush(cut_log);
}

void widget_lost(Rect r, const char *text)
{
    widget_report(r.y, r.x, r.w, "lost a line: ", text);
}

/* ------------------------------------------------------------------------
 * Text
 */

/* Columns taken by a UTF-8 string, as an int for screen arithmetic. */
static int widget_text_width(const char *s)
{
    return (int)text_columns(s);
}

/* Bytes of s that fit in w columns. */
static size_t widget_fit_bytes(const char *s, int w)
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

int put_text(int y, int x, int w, int attr, const char *s)
{
    char safe[1024];
    if (!text_safe(s)) {                // no control byte reaches the terminal
        text_escape(safe, sizeof safe, s, false);
        widget_report(y, x, w, "unescaped: ", safe);
        s = safe;
    }
    int top, bottom, left, right;
    widget_clip_box(&top, &bottom, &left, &right);
    if (x + w > right)
        w = right - x;
    const int n = widget_text_width(s);
    if (y < top || y >= bottom)         // not in the window: scrolled away, not cut
        return n < w ? n : w > 0 ? w : 0;
    if (*s && (n > w || x >= right))
        widget_report(y, x, w, "", s);
    if (w <= 0 || x >= right)
        return 0;
    attron(attr);
    mvaddnstr(y, x, s, (int)widget_fit_bytes(s, w));
    attroff(attr);
    return n < w ? n : w;
}

void draw_title(Rect r, const char *title)
{
    int n = put_text(r.y, r.x, r.w, crt_attr(ROLE_TITLE), title);
    for (int i = n + 1; i < r.w; i++)
        widget_put_glyph(r.y, r.x + i, crt_attr(ROLE_DIM), crt_glyph(GLYPH_HLINE));
}

/* The line of text that starts at p in w columns: the longest run of
 * words that fits, or a hard cut of a longer word. Returns its end; *next
 * is where the line after it starts (NUL at the end). */
static const char *widget_wrap_next(const char *p, int w, const char **next)
{
    const char *end = p, *brk = NULL;
    int cols = 0;
    if (w < 1)
        w = 1;
    while (*end && *end != '\n' && cols < w) {
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
    const char *q = end;
    while (*q == ' ')
        q++;
    if (*q == '\n')
        q++;
    *next = q;
    return end;
}

int wrap_lines(const char *text, int w)
{
    int lines = 0;
    for (const char *p = text; *p; lines++)
        widget_wrap_next(p, w, &p);
    return lines;
}

void draw_wrapped(Rect r, int attr, const char *text)
{
    int row = 0;
    for (const char *p = text; *p; row++) {
        const char *start = p, *end = widget_wrap_next(p, r.w, &p);
        char buf[2048];                 // a line of up to 512 columns of 4-byte characters
        size_t n = (size_t)(end - start) < sizeof buf - 1 ? (size_t)(end - start) : sizeof buf - 1;
        memcpy(buf, start, n);
        buf[n] = '\0';
        if (row < r.h)
            put_text(r.y + row, r.x, r.w, attr, buf);
        else
            widget_lost((Rect){r.y + row, r.x, 1, r.w}, buf);
    }
}

/* ------------------------------------------------------------------------
 * Table
 */

static bool widget_numeric(const char *s)
{
    s = cell_text(s);
    if (*s == '-' || *s == '+')
        s++;
    return (*s >= '0' && *s <= '9') || *s == '\0' || strcmp(s, "never") == 0 || *s == '-';
}

/* Column widths (as wide as every row needs) and alignment (right for
 * numbers) of a table. */
static void widget_table_layout(const Table *t, int *width, bool *right)
{
    for (size_t c = 0; c < t->cols; c++) {
        width[c] = 0;
        right[c] = c > 0;
        for (size_t row = 0; row < t->rows; row++) {
            const char *s = t->cell[row][c];
            int w = (int)cell_columns(s);
            if (w > width[c])
                width[c] = w;
            if (row > 0 && !widget_numeric(s))
                right[c] = false;
        }
    }
}

/* The colour role a cell's marker asks for (widget.h). */
static int widget_cell_attr(const char *s, size_t row)
{
    static const struct { char mark; ColorRole role; } MARKS[] = {
        {'!', ROLE_BAD}, {'~', ROLE_WARN}, {'+', ROLE_GOOD}};
    for (size_t i = 0; row > 0 && i < sizeof MARKS / sizeof MARKS[0]; i++)
        if (*s == MARKS[i].mark)
            return crt_attr(MARKS[i].role);
    return crt_attr(row == 0 ? ROLE_TITLE : ROLE_NORMAL);
}

static void widget_table_row_at(int y, Rect r, const Table *t, size_t row, const int *width, const bool *right)
{
    int x = r.x;
    for (size_t c = 0; c < t->cols && x < r.x + r.w; c++) {
        const char *s = cell_text(t->cell[row][c]);
        int pad = right[c] ? width[c] - widget_text_width(s) : 0;
        put_text(y, x + pad, r.x + r.w - x - pad, widget_cell_attr(t->cell[row][c], row), s);
        x += width[c] + 2;
    }
}

void draw_table(Rect r, const Table *t)
{
    int width[TABLE_COLS];
    bool right[TABLE_COLS];
    widget_table_layout(t, width, right);
    for (size_t row = 0; row < t->rows; row++) {
        if ((int)row < r.h)
            widget_table_row_at(r.y + (int)row, r, t, row, width, right);
        else
            widget_report(r.y + (int)row, r.x, r.w, "lost a table row: ", t->cell[row][0]);
    }
}

void draw_table_row(Rect r, const Table *t, size_t row)
{
    int width[TABLE_COLS];
    bool right[TABLE_COLS];
    widget_table_layout(t, width, right);
    if (row < t->rows)
        widget_table_row_at(r.y, r, t, row, width, right);
}

/* ------------------------------------------------------------------------
 * Bars
 */

/* A bar of v out of max in `width` cells from (y, x), in eighths of a
 * cell (bar_cells). */
static void widget_put_bar(int y, int x, double v, double max, int width, int attr)
{
    int full, eighths;
    bar_cells(v, max, width, &full, &eighths);
    for (int k = 0; k < full; k++)
        widget_put_glyph(y, x + k, attr, crt_glyph(GLYPH_BLOCK_8));
    if (eighths)
        widget_put_glyph(y, x + full, attr, crt_glyph((Glyph)(GLYPH_BLOCK_1 + eighths - 1)));
}

void draw_bars(Rect r, const BarItem *items, size_t n)
{
    int label_w = 0, text_w = 0;
    double max = 0;
    for (size_t i = 0; i < n; i++) {
        label_w = widget_text_width(items[i].label) > label_w ? widget_text_width(items[i].label) : label_w;
        if (items[i].text)
            text_w = widget_text_width(items[i].text) > text_w ? widget_text_width(items[i].text) : text_w;
        if (items[i].value > max)
            max = items[i].value;
    }
    /* The labels and numbers are whole; the bars take the columns left,
     * none when there are none (a number that does not fit is a layout
     * bug, reported by put_text). */
    int bar_w = r.w - label_w - text_w - 3;
    if (bar_w < 1)
        bar_w = 0;
    for (size_t i = 0; i < n; i++) {
        int y = r.y + (int)i;
        if ((int)i >= r.h) {
            widget_report(y, r.x, r.w, "lost a bar: ", items[i].label);
            continue;
        }
        put_text(y, r.x, label_w < r.w ? label_w : r.w, crt_attr(ROLE_NORMAL), items[i].label);
        widget_put_bar(y, r.x + label_w + 1, items[i].value, max, bar_w,
                       crt_attr((ColorRole)(ROLE_SERIES_1 + (int)(i % SERIES_COUNT))));
        int tx = r.x + label_w + 2 + bar_w;
        if (items[i].text && text_w > 0)
            put_text(y, tx, r.x + r.w - tx < text_w ? r.x + r.w - tx : text_w, crt_attr(ROLE_DIM), items[i].text);
    }
}

/* ------------------------------------------------------------------------
 * Line plot: its frame and legend settled together (widget_plot_settle),
 * then the axes, the series and the legend.
 */

#define PLOT_SERIES_MAX 16
#define LEGEND_TEXT 160

/* Where a plot's parts go in its rectangle: the plotting area, the axes'
 * ranges, the y axis (its ticks, their column width, its range widened to
 * them) and the legend's rows at the bottom. */
typedef struct {
    Rect p;
    double xlo, xhi, ticks[TICKS_MAX], ylo, yhi;
    int nt, axis_w, legend_h;
} PlotFrame;

/* The legend: each series' entry, its width with the marker and its
 * space, and its place (column, row) in the legend's rows. */
typedef struct {
    char text[PLOT_SERIES_MAX][LEGEND_TEXT];
    int widths[PLOT_SERIES_MAX], col[PLOT_SERIES_MAX], row[PLOT_SERIES_MAX];
} Legend;

static void widget_plot_frame(Rect r, int legend_h, double ylo, double yhi, PlotFrame *f)
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
        int w = widget_text_width(format_tick(f->ticks[i], buf, sizeof buf));
        label_w = w > label_w ? w : label_w;
    }
    f->axis_w = label_w + 2;    // the label, a space, the axis
    f->p = (Rect){r.y + 1, r.x + f->axis_w, ph, r.w - f->axis_w - 1};
}

/* Every series' markers in their cells, in drawing order; the count. */
static size_t widget_plot_marks(const PlotFrame *f, const Series *s, size_t n, bool log2x, PlotMark *m)
{
    size_t c = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < s[k].n; i++)
            m[c++] = (PlotMark){(int)k, scale_to_cell(s[k].x[i], f->xlo, f->xhi, f->p.w, log2x),
                                f->p.h - 1 - scale_to_cell(s[k].y[i], f->ylo, f->yhi, f->p.h, 0)};
    return c;
}

/* The first of the markers the plot being drawn uses: GLYPH_HOLLOW_1
 * while draw_plot_elsewhere draws, else GLYPH_POINT_1. */
static Glyph widget_marks = GLYPH_POINT_1;

static const char *widget_series_mark(size_t k)
{
    return crt_glyph((Glyph)(widget_marks + (int)(k % SERIES_COUNT)));
}

static int widget_series_attr(size_t k)
{
    return crt_attr((ColorRole)(ROLE_SERIES_1 + (int)(k % SERIES_COUNT)));
}

/* A series' legend entry: its name, and where none of its markers shows,
 * the series that hide them, by marker and name, or (short) by marker. */
static void widget_legend_entry(const Series *s, size_t n, size_t k, const size_t *shown, const uint32_t *under,
                                bool shortly, char *text)
{
    size_t len = (size_t)snprintf(text, LEGEND_TEXT, "%s", s[k].name);
    for (size_t t = 0, named = 0; !shown[k] && t < n; t++)
        if (under[k] >> t & 1 && len < LEGEND_TEXT)
            len += (size_t)snprintf(text + len, LEGEND_TEXT - len, "%s%s%s%s", named++ ? (shortly ? " " : ", ") : " (under ",
                                    widget_series_mark(t), shortly ? "" : " ", shortly ? "" : s[t].name);
    if (!shown[k] && under[k] && len < LEGEND_TEXT)
        snprintf(text + len, LEGEND_TEXT - len, ")");
}

/* The legend's entries, each as long as the plot's width w lets it be,
 * and their widths with the marker and its space. */
static void widget_legend_texts(const Series *s, size_t n, const size_t *shown, const uint32_t *under, int w,
                                Legend *l)
{
    for (size_t k = 0; k < n; k++) {
        widget_legend_entry(s, n, k, shown, under, false, l->text[k]);
        if (2 + widget_text_width(l->text[k]) > w)
            widget_legend_entry(s, n, k, shown, under, true, l->text[k]);
        l->widths[k] = 2 + widget_text_width(l->text[k]);
    }
}

/* The frame, the markers (m, their count returned) and the legend,
 * settled together: the legend says which series hide one another, which
 * takes rows from the plot, which moves the markers. Each round that needs
 * more legend rows takes them from the plot, so it ends: settled, or with
 * fewer than two rows left to plot (f->p.h < 2). */
static size_t widget_plot_settle(Rect r, const Series *s, size_t n, bool log2x, PlotFrame *f, PlotMark *m,
                                 Legend *l)
{
    size_t shown[PLOT_SERIES_MAX], count = 0;
    uint32_t under[PLOT_SERIES_MAX] = {0};
    for (size_t k = 0; k < n; k++)
        shown[k] = 1;
    widget_legend_texts(s, n, shown, under, r.w, l);
    int legend_h = legend_layout(l->widths, n, r.w, 2, l->col, l->row);
    const double ylo = f->ylo, yhi = f->yhi;
    for (;;) {
        widget_plot_frame(r, legend_h, ylo, yhi, f);
        if (f->p.h < 2)
            return 0;
        count = widget_plot_marks(f, s, n, log2x, m);
        marker_cover(m, count, n, shown, under);
        widget_legend_texts(s, n, shown, under, r.w, l);
        int rows = legend_layout(l->widths, n, r.w, 2, l->col, l->row);
        if (rows <= legend_h)
            return count;
        legend_h = rows;
    }
}

/* The y label and the x axis' name on the plot's first line, the axes and
 * their ticks (y: right-aligned against the axis; x: the first series' x
 * values, as many as fit). */
static void widget_plot_axes(Rect r, const PlotFrame *f, const Series *s0, bool log2x, const char *xlabel,
                             const char *ylabel)
{
    const Rect p = f->p;
    const int dim = crt_attr(ROLE_DIM);
    put_text(r.y, r.x, r.w, dim, ylabel);
    put_text(r.y, r.x + r.w - widget_text_width(xlabel) - 2, widget_text_width(xlabel) + 2, dim, xlabel);
    for (int y = 0; y < p.h; y++)
        widget_put_glyph(p.y + y, p.x - 1, dim, crt_glyph(GLYPH_VLINE));
    for (int x = 0; x < p.w; x++)
        widget_put_glyph(p.y + p.h, p.x + x, dim, crt_glyph(GLYPH_HLINE));
    widget_put_glyph(p.y + p.h, p.x - 1, dim, crt_glyph(GLYPH_CORNER));
    char buf[32];
    for (int i = 0; i < f->nt; i++) {
        int y = p.y + p.h - 1 - scale_to_cell(f->ticks[i], f->ylo, f->yhi, p.h, 0);
        int w = widget_text_width(format_tick(f->ticks[i], buf, sizeof buf));
        put_text(y, p.x - 2 - w, w, dim, buf);
    }
    int last_end = -100;
    for (size_t i = 0; i < s0->n; i++) {
        int c = scale_to_cell(s0->x[i], f->xlo, f->xhi, p.w, log2x);
        int w = widget_text_width(format_tick(s0->x[i], buf, sizeof buf)), start = p.x + c - w / 2;
        if (start + w > r.x + r.w)
            start = r.x + r.w - w;
        if (start > last_end + 1) {
            put_text(p.y + p.h + 1, start, w, dim, buf);
            last_end = start + w;
        }
    }
}

/* Dots between a series' points, a straight line in cells. */
static void widget_plot_line(const Rect *p, const PlotMark *m, size_t count, int attr)
{
    for (size_t i = 1; i < count; i++) {
        const PlotMark *a = &m[i - 1], *b = &m[i];
        int steps = abs(b->col - a->col) > abs(b->row - a->row) ? abs(b->col - a->col) : abs(b->row - a->row);
        for (int t = 1; t < steps; t++)
            widget_put_glyph(p->y + a->row + (b->row - a->row) * t / steps,
                             p->x + a->col + (b->col - a->col) * t / steps, attr, crt.utf8 ? "\u00B7" : ".");
    }
}

/* Every line first, then every marker: no line hides a marker. */
static void widget_plot_series(const PlotFrame *f, const Series *s, size_t n, const PlotMark *m, size_t count)
{
    for (size_t k = 0, at = 0; k < n; at += s[k].n, k++)
        widget_plot_line(&f->p, m + at, s[k].n, widget_series_attr(k));
    for (size_t i = 0; i < count; i++)
        widget_put_glyph(f->p.y + m[i].row, f->p.x + m[i].col, widget_series_attr((size_t)m[i].series),
                         widget_series_mark((size_t)m[i].series));
}

static void widget_plot_legend(Rect r, const PlotFrame *f, size_t n, const Legend *l)
{
    for (size_t k = 0; k < n; k++) {
        int ly = r.y + r.h - f->legend_h + l->row[k], lx = r.x + l->col[k];
        widget_put_glyph(ly, lx, widget_series_attr(k), widget_series_mark(k));
        put_text(ly, lx + 2, l->widths[k] - 2, crt_attr(ROLE_NORMAL), l->text[k]);
    }
}

void draw_plot(Rect r, const Series *s, size_t n, bool log2x, const char *xlabel,
               const char *ylabel)
{
    static const char *const SMALL = "(a larger window shows the plot)";
    if (n > PLOT_SERIES_MAX)
        n = PLOT_SERIES_MAX;
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += s[k].n;
    if (!total)
        return;
    if (r.h < PLOT_MIN_ROWS || r.w < PLOT_MIN_COLS) {
        draw_wrapped(r, crt_attr(ROLE_DIM), SMALL);
        return;
    }
    PlotMark *m = malloc(total * sizeof *m);
    if (!m)
        return;
    PlotFrame f = {.xlo = INFINITY, .xhi = -INFINITY, .ylo = INFINITY, .yhi = -INFINITY};
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < s[k].n; i++) {
            f.xlo = fmin(f.xlo, s[k].x[i]), f.xhi = fmax(f.xhi, s[k].x[i]);
            f.ylo = fmin(f.ylo, s[k].y[i]), f.yhi = fmax(f.yhi, s[k].y[i]);
        }
    if (!(f.yhi > f.ylo)) {
        f.yhi = f.ylo + 1;
        f.ylo -= 1;
    }
    Legend l;
    size_t count = widget_plot_settle(r, s, n, log2x, &f, m, &l);
    if (f.p.h < 2 || f.p.w < 8) {
        free(m);
        draw_wrapped(r, crt_attr(ROLE_DIM), SMALL);
        return;
    }
    widget_plot_axes(r, &f, &s[0], log2x, xlabel, ylabel);
    widget_plot_series(&f, s, n, m, count);
    widget_plot_legend(r, &f, n, &l);
    free(m);
}

void draw_plot_elsewhere(Rect r, const Series *s, size_t n, bool log2x, const char *xlabel,
                         const char *ylabel)
{
    widget_marks = GLYPH_HOLLOW_1;
    draw_plot(r, s, n, log2x, xlabel, ylabel);
    widget_marks = GLYPH_POINT_1;
}

/* ------------------------------------------------------------------------
 * Heatmap
 */

static void widget_heat_cell(int y, int x, int level)
{
    if (crt.depth == COLORS_NONE)
        widget_put_glyph(y, x, crt_attr(ROLE_NORMAL), crt_glyph((Glyph)(GLYPH_SHADE_0 + level)));
    else
        widget_put_glyph(y, x, crt_attr((ColorRole)(ROLE_HEAT_0 + level)), " ");
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
    int cw = (size_t)w >= cols * 2 ? 2 : 1;        // two columns per value when it fits
    w = (int)((size_t)w / (size_t)cw < cols ? (size_t)w / (size_t)cw : cols);
    /* Colour shows sign and size on a diverging ramp; density characters
     * cannot show sign, so in monochrome they show the magnitude, 0 blank. */
    bool mono = crt.depth == COLORS_NONE;
    double top = fmax(fabs(lo), fabs(hi));
    for (int y = 0; y < h; y++) {
        if (!widget_row_shown(r.y + 1 + y))
            continue;
        for (int x = 0; x < w; x++) {
            float v = block_value(m, rows, cols, h, w, y, x);
            int level = mono ? heat_level(fabs(v), 0, top, HEAT_STEPS) : heat_level(v, lo, hi, HEAT_STEPS);
            for (int k = 0; k < cw; k++)
                widget_heat_cell(r.y + 1 + y, r.x + x * cw + k, level);
        }
    }
    /* the scale: its two ends whole, the ramp between them in the columns
     * left (every level where they fit, else evenly chosen ones, at least
     * the two ends); where no ramp fits, "lo..hi", or shorter, the range
     * as "±hi" (symmetric) or "<=top" (magnitudes) */
    int sy = r.y + 1 + h;
    char a[32], b[32];
    snprintf(a, sizeof a, mono ? "|v| 0" : "%.3g", lo);
    snprintf(b, sizeof b, "%.3g", mono ? top : hi);
    int ramp = r.w - widget_text_width(a) - widget_text_width(b) - 2;
    if (ramp > HEAT_STEPS)
        ramp = HEAT_STEPS;
    if (ramp < 2) {
        char both[72];
        snprintf(both, sizeof both, "%s..%s", a, b);
        if (widget_text_width(both) > r.w && (mono || lo == -hi))
            snprintf(both, sizeof both, "%s%s", mono ? (crt.utf8 ? "\u2264" : "<=") : (crt.utf8 ? "\u00B1" : "+-"), b);
        put_text(sy, r.x, r.w, crt_attr(ROLE_DIM), both);
        return;
    }
    int n = put_text(sy, r.x, r.w, crt_attr(ROLE_DIM), a);
    for (int k = 0; k < ramp; k++)
        widget_heat_cell(sy, r.x + n + 1 + k, (k * (HEAT_STEPS - 1) + (ramp - 1) / 2) / (ramp - 1));
    put_text(sy, r.x + n + 2 + ramp, widget_text_width(b), crt_attr(ROLE_DIM), b);
}

/* ------------------------------------------------------------------------
 * Progress and the function bar
 */

void draw_progress(Rect r, const char *label, double done, double total, double elapsed)
{
    char eta[32], line[96];
    format_duration(eta_seconds(done, total, elapsed), eta, sizeof eta);
    snprintf(line, sizeof line, "%3.0f%%  %s left  (Esc cancels)", total > 0 ? 100 * done / total : 0, eta);
    put_text(r.y, r.x, r.w, crt_attr(ROLE_NORMAL), label);
    put_text(r.y + 1, r.x, r.w, crt_attr(ROLE_NORMAL), line);
    widget_put_bar(r.y + 2, r.x, done, total, r.w, crt_attr(ROLE_SERIES_1));
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
