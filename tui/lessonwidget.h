/* lessonwidget.h - the widgets a lesson embeds (```kvlab NAME blocks):
 * one table (lessonwidget.c) of each widget's name, the lab screen it
 * opens, and the command whose options it takes, so that a widget's
 * settings are exactly a command line a learner can run. The command line
 * runs the command to check and print a widget (tui/cli/lessonwidget.h);
 * the lab opens the screen with the same settings. */
#ifndef KVLAB_TUI_LESSONWIDGET_H
#define KVLAB_TUI_LESSONWIDGET_H

#include "error.h"

#include <stddef.h>

typedef struct LessonWidget LessonWidget;

/* The longest list of words a widget's options make. */
#define LESSONWIDGET_WORDS_MAX 40

const LessonWidget *lessonwidget_by_name(const char *name);
/* The lab screen the widget opens ("calc", "quant", "scenarios", "gpu", "niah"). */
const char *lessonwidget_screen(const LessonWidget *w);
/* What a lesson's page in the lab shows in place of the widget: calc's
 * formats table for its options; its screen's figures laid out small
 * (ScreenDef.inline_layout) for its options; or that screen's figures as
 * this session left them (what the GPU lab measured). */
typedef enum { PLACE_TABLE, PLACE_SCREEN, PLACE_SESSION } LessonWidgetPlace;
LessonWidgetPlace lessonwidget_place(const LessonWidget *w);
/* "calc, quant, speedup, gpu, scenario or niah", for messages. */
const char *lessonwidget_names(void);
/* The command line the widget's options make: "kvlab calc --scenario pool-20gib". */
const char *lessonwidget_command(const LessonWidget *w, const char *options, char *buf, size_t n);
/* The command that shows the widget ("calc"), or NULL where none runs
 * here; then lessonwidget_text says what measures it. */
const char *lessonwidget_runs(const LessonWidget *w);
const char *lessonwidget_text(const LessonWidget *w);
/* The command's arguments for the options: its own first word where it has
 * one ("show"), then the options split at white space, into argv (room for
 * LESSONWIDGET_WORDS_MAX + 2, NULL after the last) with copy (a copy of
 * options) holding the words; returns their count, or -1 where the widget
 * takes another number of words. */
int lessonwidget_argv(const LessonWidget *w, char *copy, char **argv, Error *e);

#endif
