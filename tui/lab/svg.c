/* svg.c - see svg.h. */
#include "svg.h"

#include "plotmath.h"

#include <math.h>

static const char *const PALETTE[] = {"#4aa3df", "#f0a030", "#6cc070", "#e05050", "#b070d0",
                                      "#909090", "#30b0a0", "#d0c040", "#8090e0"};
#define N_PALETTE (sizeof PALETTE / sizeof PALETTE[0])

/* Text with &, < and > escaped. */
static void svg_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else
            fputc(*s, f);
    }
}

static void svg_begin(FILE *f, int w, int h, const char *title)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"%d\" y=\"20\" font-size=\"15\" font-weight=\"bold\">",
            w, h, w, h, 10);
    svg_escaped(f, title);
    fputs("</text>\n", f);
}

void svg_plot(FILE *f, const char *title, const Series *s, size_t n, bool log2x, const char *xlabel,
              const char *ylabel)
{
    const int W = 720, H = 420, L = 70, R = 20, T = 40, B = 80;
    svg_begin(f, W, H, title);
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < s[k].n; i++) {
            xlo = fmin(xlo, s[k].x[i]), xhi = fmax(xhi, s[k].x[i]);
            ylo = fmin(ylo, s[k].y[i]), yhi = fmax(yhi, s[k].y[i]);
        }
    if (!(yhi > ylo))
        yhi = ylo + 1;
    double ticks[TICKS_MAX];
    int nt = nice_ticks(ylo, yhi, 6, ticks);
    if (nt >= 2)
        ylo = fmin(ylo, ticks[0]), yhi = fmax(yhi, ticks[nt - 1]);
    int pw = W - L - R, ph = H - T - B;
    fprintf(f, "<g stroke=\"#444\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
               "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/></g>\n",
            L, T, L, T + ph, L, T + ph, L + pw, T + ph);
    char buf[32];
    for (int i = 0; i < nt; i++) {
        double y = T + ph - (ticks[i] - ylo) / (yhi - ylo) * ph;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                L, y, L + pw, y, L - 6, y + 4, format_tick(ticks[i], buf, sizeof buf));
    }
    for (size_t i = 0; n && i < s[0].n; i++) {
        double x = L + scale_to_cell(s[0].x[i], xlo, xhi, pw + 1, log2x);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, T + ph + 16,
                format_tick(s[0].x[i], buf, sizeof buf));
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", L + pw / 2, T + ph + 34);
    svg_escaped(f, xlabel);
    fprintf(f, "</text>\n<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" "
               "text-anchor=\"middle\">", T + ph / 2, T + ph / 2);
    svg_escaped(f, ylabel);
    fputs("</text>\n", f);
    for (size_t k = 0; k < n; k++) {
        const char *c = PALETTE[k % N_PALETTE];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c);
        for (size_t i = 0; i < s[k].n; i++)
            fprintf(f, "%.1f,%.1f ", L + (double)scale_to_cell(s[k].x[i], xlo, xhi, pw + 1, log2x),
                    T + ph - (s[k].y[i] - ylo) / (yhi - ylo) * ph);
        fputs("\"/>\n", f);
        int lx = L + (int)(k % 4) * (pw / 4), ly = H - 24 + (int)(k / 4) * 14;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                   "<text x=\"%d\" y=\"%d\">", lx, ly - 9, c, lx + 14, ly);
        svg_escaped(f, s[k].name);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
}

void svg_bars(FILE *f, const char *title, const BarItem *items, size_t n)
{
    const int W = 720, row = 24, T = 40, L = 160, R = 160;
    int H = T + (int)n * row + 20;
    svg_begin(f, W, H, title);
    double max = 0;
    for (size_t i = 0; i < n; i++)
        max = fmax(max, items[i].value);
    for (size_t i = 0; i < n; i++) {
        int y = T + (int)i * row;
        double w = max > 0 && items[i].value > 0 ? items[i].value / max * (W - L - R) : 0;
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", L - 8, y + 15);
        svg_escaped(f, items[i].label);
        fprintf(f, "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>",
                L, y + 3, w, row - 6, PALETTE[i % N_PALETTE]);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\">", L + w + 6, y + 15);
        svg_escaped(f, items[i].text ? items[i].text : "");
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
}

/* The same diverging ramp as the screen: blue, white, red. */
static const char *const HEAT_RGB[HEAT_STEPS] = {"#08306b", "#2171b5", "#6baed6", "#c6dbef",
                                                 "#f7f7f7", "#fddbc7", "#f4a582", "#d6604d",
                                                 "#67001f"};

void svg_heatmap(FILE *f, const char *title, const float *m, size_t rows, size_t cols, double lo,
                 double hi)
{
    int cell = cols > 64 || rows > 64 ? 4 : 8;
    int W = (int)cols * cell + 40, H = (int)rows * cell + 90;
    if (W < 360)
        W = 360;
    svg_begin(f, W, H, title);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            fprintf(f, "<rect x=\"%zu\" y=\"%zu\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n",
                    20 + c * (size_t)cell, 34 + r * (size_t)cell, cell, cell,
                    HEAT_RGB[heat_level(m[r * cols + c], lo, hi, HEAT_STEPS)]);
    int y = 34 + (int)rows * cell + 20;
    fprintf(f, "<text x=\"20\" y=\"%d\">%.3g</text>\n", y + 12, lo);
    for (int k = 0; k < HEAT_STEPS; k++)
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"16\" height=\"14\" fill=\"%s\"/>\n",
                70 + k * 16, y, HEAT_RGB[k]);
    fprintf(f, "<text x=\"%d\" y=\"%d\">%.3g</text>\n", 80 + HEAT_STEPS * 16, y + 12, hi);
    fputs("</svg>\n", f);
}
