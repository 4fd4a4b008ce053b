/* svg.h - the lab's charts as SVG files, for slides and handouts. Each
 * function takes the same data as the widget that draws it on screen
 * (widget.h) and writes a complete standalone SVG document. */
#ifndef KVLAB_SVG_H
#define KVLAB_SVG_H

#include "widget.h"

#include <stdio.h>

void svg_plot(FILE *f, const char *title, const Series *s, size_t n, bool log2x, const char *xlabel,
              const char *ylabel);
void svg_bars(FILE *f, const char *title, const BarItem *items, size_t n);
void svg_heatmap(FILE *f, const char *title, const float *m, size_t rows, size_t cols, double lo,
                 double hi);

#endif
