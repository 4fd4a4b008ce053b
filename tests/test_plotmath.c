/* test_plotmath.c - the widgets' arithmetic: ticks, scaling, which plot
 * markers hide which, legend rows, partial bars, heat levels, downsampling
 * and time left. */
#include "testutil.h"

#include "tui/lab/plotmath.h"

#include <math.h>
#include <string.h>

/* Relative slack for a tick that lies on lo, hi or a multiple of its step,
 * computed in doubles. */
#define TICK_REL_EPS 1e-9

/* Ticks are evenly spaced by 1, 2 or 5 x 10^k, or are the range's two
 * ends where no such step fits twice; they lie within [lo, hi], and there
 * are between one and max of them; random ranges. */
START_TEST(ticks_nice)
{
    Rng r = {test_seed() ^ 0x71C};
    for (int i = 0; i < 5000; i++) {
        double lo = ((double)(rng_next(&r) >> 11) / 9007199254740992.0 - 0.5) *
                    pow(10, (double)rng_range(&r, 0, 8) - 3);
        double hi = lo + (double)(rng_next(&r) >> 11) / 9007199254740992.0 *
                         pow(10, (double)rng_range(&r, 0, 8) - 3) + 1e-9;
        int max = (int)rng_range(&r, 2, 10);
        double t[TICKS_MAX];
        int n = nice_ticks(lo, hi, max, t);
        ck_assert_int_ge(n, 1);
        ck_assert_int_le(n, max);
        for (int k = 0; k < n; k++)
            ck_assert(t[k] >= lo - TICK_REL_EPS * fabs(hi - lo) && t[k] <= hi + TICK_REL_EPS * fabs(hi - lo));
        bool ends = n == 2 && t[0] == lo && t[1] == hi;
        if (ends) {
            /* no 1, 2 or 5 x 10^k step at least (hi - lo) / (max - 1), the
             * steps that keep to max ticks, has two or more multiples in
             * [lo, hi] (unless they are exactly lo and hi): every such step
             * from 10^-12 to 10^12, tried one by one */
            for (int k = -12; k <= 12; k++)
                for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
                    double step = m * pow(10, k);
                    if (step < (hi - lo) / (max - 1))
                        continue;
                    double first = ceil(lo / step - TICK_REL_EPS), last = floor(hi / step + TICK_REL_EPS);
                    bool exact = last - first == 1 && fabs(first * step - lo) <= TICK_REL_EPS * step &&
                                 fabs(last * step - hi) <= TICK_REL_EPS * step;
                    ck_assert_seeded(last - first + 1 < 2 || exact,
                                     "[%g, %g], %d ticks: step %g fits, yet the ends were given", lo, hi, max,
                                     step);
                }
        }
        if (n >= 2 && !ends) {
            /* ticks far from zero lose digits in t[1] - t[0]: allow for it */
            double step = t[1] - t[0], tol = 1e-6 + 1e-12 * fabs(t[n - 1]) / step;
            double m = step / pow(10, floor(log10(step) + TICK_REL_EPS));
            ck_assert_msg(fabs(m - 1) < tol || fabs(m - 2) < 2 * tol || fabs(m - 5) < 5 * tol ||
                          fabs(m - 10) < 10 * tol, "step %g", step);
            for (int k = 2; k < n; k++)
                ck_assert(fabs(t[k] - t[k - 1] - step) < tol * step);
        }
    }
    double t[TICKS_MAX];
    ck_assert_int_eq(nice_ticks(0, 10, 6, t), 6);
    ck_assert(t[0] == 0 && t[5] == 10);
    ck_assert_int_eq(nice_ticks(31, 39, 5, t), 4);              // 32 .. 38 by 2
    ck_assert(t[0] == 32 && t[3] == 38);
    ck_assert_int_eq(nice_ticks(1001, 1009, 2, t), 2);          // no multiple of 10 between: the ends
    ck_assert(t[0] == 1001 && t[1] == 1009);
}
END_TEST

/* Scaling puts the ends on the first and last cell, is monotonic, and on a
 * log2 axis doubles map to equal steps. */
START_TEST(scaling)
{
    ck_assert_int_eq(scale_to_cell(0, 0, 10, 11, 0), 0);
    ck_assert_int_eq(scale_to_cell(10, 0, 10, 11, 0), 10);
    ck_assert_int_eq(scale_to_cell(5, 0, 10, 11, 0), 5);
    ck_assert_int_eq(scale_to_cell(-3, 0, 10, 11, 0), 0);
    ck_assert_int_eq(scale_to_cell(1e9, 0, 10, 11, 0), 10);
    ck_assert_int_eq(scale_to_cell(NAN, 0, 10, 11, 0), 0);
    for (int k = 0; k <= 7; k++)
        ck_assert_int_eq(scale_to_cell(1024 << k, 1024, 131072, 29, 1), 4 * k);
    int prev = -1;
    for (double v = 0; v <= 100; v += 0.37) {
        int c = scale_to_cell(v, 0, 100, 57, 0);
        ck_assert(c >= prev);
        prev = c;
    }
}
END_TEST

/* Markers drawn in order show the last one in each cell: a series is shown
 * in the cells whose last marker is its own, and hidden under the series
 * shown in the others it has markers in; against painting a grid marker by
 * marker, on random plots, and where one series covers another entirely. */
START_TEST(markers_hidden)
{
    /* FP8 under INT8 everywhere, BF16 on its own: FP8 nowhere to be seen */
    const PlotMark fixed[] = {{0, 0, 5}, {0, 1, 5}, {1, 0, 2}, {1, 1, 3}, {2, 0, 2}, {2, 1, 3}};
    size_t shown[MARK_SERIES_MAX];
    uint32_t under[MARK_SERIES_MAX];
    marker_cover(fixed, N_OF(fixed), 3, shown, under);
    ck_assert(shown[0] == 2 && shown[1] == 0 && shown[2] == 2);
    ck_assert(under[1] == 1u << 2 && under[0] == 0 && under[2] == 0);
    Rng r = {test_seed() ^ 0x3A7};
    enum { W = 6, H = 4 };
    for (int trial = 0; trial < 2000; trial++) {
        size_t n = (size_t)rng_range(&r, 1, 9), count = (size_t)rng_range(&r, 0, 40);
        PlotMark m[40];
        int top[H][W];                  // the series drawn last in each cell, -1 none
        memset(top, 0xff, sizeof top);
        for (size_t i = 0; i < count; i++) {
            m[i] = (PlotMark){(int)rng_range(&r, 0, n - 1), (int)rng_range(&r, 0, W - 1),
                              (int)rng_range(&r, 0, H - 1)};
            top[m[i].row][m[i].col] = m[i].series;
        }
        marker_cover(m, count, n, shown, under);
        for (size_t k = 0; k < n; k++) {
            size_t cells = 0;
            uint32_t over = 0;
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    cells += top[y][x] == (int)k;
            for (size_t i = 0; i < count; i++)
                if (m[i].series == (int)k && top[m[i].row][m[i].col] != (int)k)
                    over |= 1u << top[m[i].row][m[i].col];
            ck_assert_seeded(shown[k] == cells && under[k] == over, "series %zu: shown %zu of %zu cells", k,
                             shown[k], cells);
        }
    }
}
END_TEST

/* A legend's entries keep their order, row by row, a gap apart; a row
 * never runs past the width unless one entry alone is wider; an entry
 * moves to a new row only when it does not fit on the one before. Random
 * widths. */
START_TEST(legend_rows)
{
    int col[16], row[16];
    const int fixed[] = {6, 10, 6};
    ck_assert_int_eq(legend_layout(fixed, 3, 20, 2, col, row), 2);
    ck_assert(col[0] == 0 && row[0] == 0 && col[1] == 8 && row[1] == 0 && col[2] == 0 && row[2] == 1);
    ck_assert_int_eq(legend_layout(fixed, 0, 20, 2, col, row), 0);
    Rng r = {test_seed() ^ 0x1E6};
    for (int trial = 0; trial < 5000; trial++) {
        int w = (int)rng_range(&r, 5, 120), widths[16];
        size_t n = (size_t)rng_range(&r, 1, 16);
        for (size_t i = 0; i < n; i++)
            widths[i] = (int)rng_range(&r, 3, 40);
        int rows = legend_layout(widths, n, w, 2, col, row);
        ck_assert_int_eq(rows, row[n - 1] + 1);
        for (size_t i = 0; i < n; i++) {
            bool first = i == 0 || row[i] != row[i - 1];
            ck_assert_seeded(first ? col[i] == 0 : col[i] == col[i - 1] + widths[i - 1] + 2,
                             "entry %zu at column %d", i, col[i]);
            ck_assert_seeded(col[i] + widths[i] <= w || col[i] == 0, "entry %zu runs past %d", i, w);
            if (i > 0 && first)
                ck_assert_seeded(row[i] == row[i - 1] + 1 && col[i - 1] + widths[i - 1] + 2 + widths[i] > w,
                                 "entry %zu moved to a new row though it fitted", i);
        }
    }
}
END_TEST

/* Bars: a value's eighths of a cell, never past the width; heat levels
 * cover 0..steps-1 evenly. */
START_TEST(bars_and_heat)
{
    int f, e;
    bar_cells(50, 100, 10, &f, &e);
    ck_assert(f == 5 && e == 0);
    bar_cells(1, 8, 1, &f, &e);
    ck_assert(f == 0 && e == 1);
    bar_cells(1000, 100, 10, &f, &e);
    ck_assert(f == 10 && e == 0);
    bar_cells(-1, 100, 10, &f, &e);
    ck_assert(f == 0 && e == 0);
    Rng r = {test_seed() ^ 0xBA5};
    for (int i = 0; i < 10000; i++) {
        double max = (double)rng_range(&r, 1, 1000000), v = max * (double)rng_range(&r, 0, 1000) / 1000;
        int w = (int)rng_range(&r, 1, 200);
        bar_cells(v, max, w, &f, &e);
        ck_assert(f * 8 + e <= w * 8);
        ck_assert(fabs((f * 8 + e) / 8.0 - v / max * w) <= 1.0 / 16 + 1e-9);
    }
    ck_assert_int_eq(heat_level(-1, -1, 1, 9), 0);
    ck_assert_int_eq(heat_level(1, -1, 1, 9), 8);
    ck_assert_int_eq(heat_level(0, -1, 1, 9), 4);
    ck_assert_int_eq(heat_level(NAN, -1, 1, 9), 0);
}
END_TEST

/* Downsampling keeps the value of largest magnitude in each block, so one
 * outlier in a large matrix stays visible in a small heatmap. */
START_TEST(downsampling)
{
    static float m[100 * 64];
    Rng r = {test_seed() ^ 0xD0};
    for (int i = 0; i < 100 * 64; i++)
        m[i] = (float)((double)rng_range(&r, 0, 2000) / 1000.0 - 1.0);
    m[37 * 64 + 50] = -42;
    int h = 10, w = 8, hits = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float v = block_value(m, 100, 64, h, w, y, x);
            ck_assert(fabsf(v) <= 42);
            hits += v == -42;
        }
    ck_assert_int_eq(hits, 1);
    ck_assert(block_value(m, 100, 64, 10, 8, 3, 6) == -42);    // rows 30-39, cols 48-55
    float one = 7;
    ck_assert(block_value(&one, 1, 1, 5, 5, 4, 4) == 7);       // more cells than values
}
END_TEST

/* The digits of s from its first that is not 0. */
static int significant_digits(const char *s)
{
    int n = 0;
    bool started = false;
    for (; *s; s++)
        if (*s >= '0' && *s <= '9') {
            started = started || *s != '0';
            n += started;
        }
    return n;
}

/* Time left is the elapsed time scaled by the work left (negative before
 * any progress); durations print compactly with two significant digits at
 * least (a GPU sweep under a second is not "0 s", nor 4 ms "0.00 s"); tick
 * labels print compactly. */
START_TEST(time_left)
{
    char b[32];
    ck_assert_double_eq(eta_seconds(25, 100, 10), 30);
    ck_assert(eta_seconds(0, 100, 10) < 0);
    ck_assert_double_eq(eta_seconds(100, 100, 10), 0);
    ck_assert_str_eq(format_duration(0.42, b, sizeof b), "0.42 s");
    ck_assert_str_eq(format_duration(0.004, b, sizeof b), "0.0040 s");
    ck_assert_str_eq(format_duration(4.24, b, sizeof b), "4.2 s");
    ck_assert_str_eq(format_duration(12.4, b, sizeof b), "12 s");
    ck_assert_str_eq(format_duration(200, b, sizeof b), "3 min 20 s");
    ck_assert_str_eq(format_duration(3900, b, sizeof b), "1 h 05 min");
    ck_assert_str_eq(format_duration(-1, b, sizeof b), "?");
    /* two significant digits at least, whatever the duration */
    Rng g = {test_seed() ^ 0xD0E};
    for (int i = 0; i < 10000; i++) {
        double sec = pow(10, -4 + 9 * (double)rng_range(&g, 0, 1u << 30) / (1u << 30));
        ck_assert_seeded(significant_digits(format_duration(sec, b, sizeof b)) >= 2, "%g s: '%s'", sec, b);
    }
    ck_assert_str_eq(format_tick(131072, b, sizeof b), "128k");
    ck_assert_str_eq(format_tick(1048576, b, sizeof b), "1M");
    ck_assert_str_eq(format_tick(0.25, b, sizeof b), "0.25");
}
END_TEST

/* A scrolled window never starts above the first line nor runs past the
 * last into blank lines; when everything fits it starts at the top. */
START_TEST(scrolling_clamped)
{
    ck_assert_int_eq(scroll_clamp(5, 30, 20), 5);
    ck_assert_int_eq(scroll_clamp(15, 30, 20), 10);
    ck_assert_int_eq(scroll_clamp(-1, 30, 20), 0);
    ck_assert_int_eq(scroll_clamp(7, 12, 20), 0);
    Rng g = {test_seed() ^ 0x5C0};
    for (int i = 0; i < 100000; i++) {
        int lines = (int)rng_range(&g, 0, 500), h = (int)rng_range(&g, 1, 100);
        int first = (int)rng_range(&g, 0, 1000) - 500, c = scroll_clamp(first, lines, h);
        ck_assert_seeded(c >= 0 && (c == 0 || c + h <= lines), "%d of %d in %d: %d", first, lines, h, c);
        ck_assert_seeded(c == first || first < 0 || first + h > lines, "%d of %d in %d: %d", first, lines, h, c);
        if (lines <= h)
            ck_assert_seeded(c == 0, "%d lines fit %d", lines, h);
        else if (first + h > lines)
            ck_assert_seeded(c + h == lines, "%d of %d in %d: %d", first, lines, h, c);
    }
}
END_TEST

Suite *suite_plotmath(void)
{
    Suite *s = suite_create("plotmath");
    TCase *t = tcase_create("widgets");
    tcase_add_test(t, ticks_nice);
    tcase_add_test(t, scaling);
    tcase_add_test(t, markers_hidden);
    tcase_add_test(t, legend_rows);
    tcase_add_test(t, bars_and_heat);
    tcase_add_test(t, downsampling);
    tcase_add_test(t, time_left);
    tcase_add_test(t, scrolling_clamped);
    suite_add_tcase(s, t);
    return s;
}
