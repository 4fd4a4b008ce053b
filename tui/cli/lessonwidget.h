/* lessonwidget.h - the widgets a lesson embeds (```kvlab NAME blocks):
 * one table (lessonwidget.c) of each widget's name, the lab screen it
 * opens, and the command whose options it takes, checked and shown by
 * that command's own code, so that a widget's settings are exactly a
 * command line a learner can run. */
#ifndef KVLAB_LESSONWIDGET_H
#define KVLAB_LESSONWIDGET_H

#include "error.h"

#include <stdio.h>

typedef struct LessonWidget LessonWidget;

const LessonWidget *lessonwidget_by_name(const char *name);
/* The lab screen the widget opens ("calc", "quant", "scenarios", "gpu"). */
const char *lessonwidget_screen(const LessonWidget *w);
/* "calc, quant, speedup, gpu or scenario", for messages. */
const char *lessonwidget_names(void);
/* The command line the widget's options make: "kvlab calc --scenario pool-20gib". */
const char *lessonwidget_command(const LessonWidget *w, const char *options, char *buf, size_t n);

/* For LessonRefs.widget_check: 0 when the widget's command takes the
 * options, LESSON_WIDGET_UNKNOWN for a name no widget has, -1 with the
 * command's own message when it refuses them. */
int lessonwidget_check(const char *name, const char *options, const void *ctx, Error *e);
/* Prints the widget as text (its command's output) to stdout, or fills e. */
int lessonwidget_print(const LessonWidget *w, const char *options, Error *e);

#endif
