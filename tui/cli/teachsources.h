/* teachsources.h - the lessons, glossary and exercises as the lab gets
 * them (tui/lab/teach.h): read by the command line's lesson code, with
 * its widget table, once, before the lab starts. */
#ifndef KVLAB_TEACHSOURCES_H
#define KVLAB_TEACHSOURCES_H

#include "tui/lab/teach.h"

/* Fills src; where the lessons cannot be read, src->why says why. What it
 * reads lives until the program ends. */
void teachsources_fill(TeachSources *src);

#endif
