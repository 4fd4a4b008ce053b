/* lessonwidget.h - a lesson's widgets on the command line: each checked
 * and printed by running its command (the table is tui/lessonwidget.h's),
 * so that the command's parser is the only one. */
#ifndef KVLAB_CLI_LESSONWIDGET_H
#define KVLAB_CLI_LESSONWIDGET_H

#include "error.h"
#include "tui/lessonwidget.h"

#include <stdio.h>

/* For LessonRefs.widget_check: 0 when the widget's command takes the
 * options, LESSON_WIDGET_UNKNOWN for a name no widget has, -1 with the
 * command's own message when it refuses them. */
int lessonwidget_check(const char *name, const char *options, const void *ctx, Error *e);
/* Prints the widget as text (its command's output) into `to`, a file
 * with a descriptor (the command writes to its stdout), or fills e. */
int lessonwidget_print(const LessonWidget *w, const char *options, FILE *to, Error *e);

#endif
