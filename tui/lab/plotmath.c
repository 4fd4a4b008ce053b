/* plotmath.c - see plotmath.h. */
#include "plotmath.h"

#include "units.h"

#include <math.h>
#include <stdio.h>

#define S_PER_MIN 60
#define S_PER_H 3600

int nice_ticks(double lo, double hi, int max_ticks, double *ticks)
{
    if (max_ticks < 2)
        max_ticks = 2;
    if (max_ticks > TICKS_MAX)
        max_ticks = TICKS_MAX;
    if (!(hi > lo)) {
        ticks[0] = lo;
        return 1;
    }
    double raw = (hi - lo) / (max_ticks - 1);
    double mag = pow(10, floor(log10(raw)));
    static const double STEPS[] = {1, 2, 5, 10};
    double step = mag * 10;
    for (int i = 0; i < 4; i++)
        if (STEPS[i] * mag >= raw) {
            step = STEPS[i] * mag;
            break;
        }
    int n = 0;
    for (double t = ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9 && n < max_ticks; t += step)
        ticks[n++] = fabs(t) < step * 1e-9 ? 0 : t;
    if (n < 2) {                /* a range too narrow for a round step: label its ends */
        ticks[0] = lo;
        ticks[1] = hi;
        n = 2;
    }
    return n;
}

int scale_to_cell(double v, double lo, double hi, int cells, int log2)
{
    if (cells <= 1)
        return 0;
    double f;
    if (log2) {
        if (v <= 0 || lo <= 0 || hi <= lo)
            return 0;
        f = (log(v) - log(lo)) / (log(hi) - log(lo));
    } else {
        f = hi > lo ? (v - lo) / (hi - lo) : 0;
    }
    if (!(f >= 0))
        f = 0;
    if (f > 1)
        f = 1;
    return (int)lround(f * (cells - 1));
}

void marker_cover(const PlotMark *m, size_t count, size_t n, size_t *shown, uint32_t *under)
{
    for (size_t k = 0; k < n; k++)
        shown[k] = 0, under[k] = 0;
    for (size_t i = 0; i < count; i++) {
        size_t top = i;                 // the last marker drawn in m[i]'s cell
        for (size_t j = i + 1; j < count; j++)
            if (m[j].col == m[i].col && m[j].row == m[i].row)
                top = j;
        const int k = m[i].series, t = m[top].series;
        if (k < 0 || (size_t)k >= n || t < 0 || (size_t)t >= n)
            continue;
        if (top == i)
            shown[k]++;                 // counted once a cell: at its top marker
        else if (t != k)
            under[k] |= (uint32_t)1 << t;
    }
}

int legend_layout(const int *widths, size_t n, int w, int gap, int *col, int *row)
{
    int x = 0, y = 0;
    for (size_t i = 0; i < n; i++) {
        if (x > 0 && x + gap + widths[i] > w)
            x = 0, y++;
        else if (x > 0)
            x += gap;
        col[i] = x;
        row[i] = y;
        x += widths[i];
    }
    return n ? y + 1 : 0;
}

void bar_cells(double v, double max, int width, int *full, int *eighths)
{
    *full = 0;
    *eighths = 0;
    if (!(v > 0) || !(max > 0) || width <= 0)
        return;
    double units = v / max * width * 8;
    if (units > width * 8.0)
        units = width * 8.0;
    long e = lround(units);
    *full = (int)(e / 8);
    *eighths = (int)(e % 8);
}

int heat_level(double v, double lo, double hi, int steps)
{
    if (steps <= 1 || !(hi > lo))
        return steps / 2;
    double f = (v - lo) / (hi - lo);
    if (!(f >= 0))
        f = 0;
    if (f > 1)
        f = 1;
    int k = (int)(f * steps);
    return k >= steps ? steps - 1 : k;
}

float block_value(const float *m, size_t rows, size_t cols, int h, int w, int r, int c)
{
    if (h <= 0 || w <= 0 || !rows || !cols)
        return 0;
    size_t r0 = (size_t)r * rows / (size_t)h, r1 = (size_t)(r + 1) * rows / (size_t)h;
    size_t c0 = (size_t)c * cols / (size_t)w, c1 = (size_t)(c + 1) * cols / (size_t)w;
    if (r1 <= r0)
        r1 = r0 + 1;
    if (c1 <= c0)
        c1 = c0 + 1;
    if (r1 > rows)
        r1 = rows;
    if (c1 > cols)
        c1 = cols;
    float best = m[r0 * cols + c0];
    for (size_t i = r0; i < r1; i++)
        for (size_t j = c0; j < c1; j++)
            if (fabsf(m[i * cols + j]) > fabsf(best))
                best = m[i * cols + j];
    return best;
}

double eta_seconds(double done, double total, double elapsed)
{
    if (!(done > 0) || !(total > done))
        return done >= total && done > 0 ? 0 : -1;
    return elapsed * (total - done) / done;
}

const char *format_duration(double s, char *buf, size_t n)
{
    if (s < 0)
        snprintf(buf, n, "?");
    else if (s < 0.995)                 // a GPU sweep may take well under a second
        snprintf(buf, n, "%#.2g s", s);
    else if (s < 9.95)
        snprintf(buf, n, "%.1f s", s);
    else if (s < S_PER_MIN)
        snprintf(buf, n, "%.0f s", s);
    else if (s < S_PER_H)
        snprintf(buf, n, "%d min %02d s", (int)(s / S_PER_MIN), (int)fmod(s, S_PER_MIN));
    else
        snprintf(buf, n, "%d h %02d min", (int)(s / S_PER_H), (int)fmod(s / S_PER_MIN, S_PER_MIN));
    return buf;
}

const char *format_tick(double v, char *buf, size_t n)
{
    double a = fabs(v);
    if (a >= CONTEXT_K && fmod(a, CONTEXT_K) == 0 && a < CONTEXT_M)
        snprintf(buf, n, "%gk", v / CONTEXT_K);
    else if (a >= CONTEXT_M && fmod(a, CONTEXT_M) == 0)
        snprintf(buf, n, "%gM", v / CONTEXT_M);
    else
        snprintf(buf, n, "%.3g", v);
    return buf;
}

int scroll_clamp(int first, int lines, int h)
{
    int max = lines > h ? lines - h : 0;
    return first < 0 ? 0 : first > max ? max : first;
}
