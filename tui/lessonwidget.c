/* lessonwidget.c - see lessonwidget.h. */
#include "lessonwidget.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct LessonWidget {
    const char *name;
    const char *screen;                 // the lab screen it opens
    const char *command;                // the command that shows it; NULL: none runs here
    const char *first;                  // a word before the options ("show"), or NULL
    int words;                          // -1: any options; else exactly this many words
    const char *text;                   // what is printed where no command runs
    LessonWidgetPlace place;            // what the lab's page shows of it
};

static const LessonWidget WIDGETS[] = {
    {"calc", "calc", "calc", NULL, -1, NULL, PLACE_TABLE},
    {"quant", "quant", "quant", NULL, -1, NULL, PLACE_SCREEN},
    {"speedup", "calc", "calc", NULL, -1, NULL, PLACE_SCREEN},
    {"gpu", "gpu", NULL, NULL, 0,
     "The GPU lab measures the decode step of every format on this machine's GPU "
     "(kvlab bench; the lab's GPU screen runs it and shows the slopes).", PLACE_SESSION},
    {"scenario", "scenarios", "scenario", "show", 1, NULL, PLACE_TABLE},
    {"niah", "niah", "niah", NULL, -1, NULL, PLACE_SCREEN},
};

#define N_WIDGETS (sizeof WIDGETS / sizeof WIDGETS[0])

const LessonWidget *lessonwidget_by_name(const char *name)
{
    for (size_t i = 0; i < N_WIDGETS; i++)
        if (strcmp(WIDGETS[i].name, name) == 0)
            return &WIDGETS[i];
    return NULL;
}

const char *lessonwidget_screen(const LessonWidget *w)
{
    return w->screen;
}

LessonWidgetPlace lessonwidget_place(const LessonWidget *w)
{
    return w->place;
}

const char *lessonwidget_runs(const LessonWidget *w)
{
    return w->command;
}

const char *lessonwidget_text(const LessonWidget *w)
{
    return w->text;
}

const char *lessonwidget_names(void)
{
    static char buf[256];
    size_t len = 0;
    for (size_t i = 0; i < N_WIDGETS && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", WIDGETS[i].name,
                                i + 2 < N_WIDGETS ? ", " : i + 2 == N_WIDGETS ? " or " : "");
    return buf;
}

int lessonwidget_argv(const LessonWidget *w, char *copy, char **argv, Error *e)
{
    int n = 0;
    if (w->first)
        argv[n++] = (char *)w->first;
    for (char *s = strtok(copy, " \t\r\n"); s; s = strtok(NULL, " \t\r\n")) {
        if (n == LESSONWIDGET_WORDS_MAX)
            return error_set(e, "more than %d words", LESSONWIDGET_WORDS_MAX);
        argv[n++] = s;
    }
    argv[n] = NULL;
    int given = n - (w->first != NULL);
    if (w->words >= 0 && given != w->words)
        return w->words ? error_set(e, "takes %d word%s, not %d", w->words, w->words == 1 ? "" : "s", given)
                        : error_set(e, "takes no options (got '%s')", argv[n - given]);
    return n;
}

const char *lessonwidget_command(const LessonWidget *w, const char *options, char *buf, size_t n)
{
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", options);
    size_t len = (size_t)snprintf(buf, n, "kvlab %s", w->command ? w->command : "bench");
    if (w->first && len < n)
        len += (size_t)snprintf(buf + len, n - len, " %s", w->first);
    for (char *s = strtok(copy, " \t\r\n"); s && len < n; s = strtok(NULL, " \t\r\n"))
        len += (size_t)snprintf(buf + len, n - len, " %s", s);
    return buf;
}
