/* teachsources.c - see teachsources.h. */
#include "teachsources.h"

#include "lessontext.h"
#include "lessonwidget.h"

#include <stdio.h>

static const char *teachsources_widget_screen(const char *name)
{
    const LessonWidget *w = lessonwidget_by_name(name);
    return w ? lessonwidget_screen(w) : NULL;
}

static const char *teachsources_widget_command(const char *name, const char *options, char *buf, size_t n)
{
    const LessonWidget *w = lessonwidget_by_name(name);
    if (!w) {
        snprintf(buf, n, "%s", name);
        return buf;
    }
    return lessonwidget_command(w, options, buf, n);
}

void teachsources_fill(TeachSources *src)
{
    static LessonContext ctx;
    static LessonFiles files;
    Error e;
    *src = (TeachSources){.widget_screen = teachsources_widget_screen,
                          .widget_command = teachsources_widget_command};
    if (lessontext_context(&ctx, &e)) {
        snprintf(src->why, sizeof src->why, "%s", e.msg);
        return;
    }
    if (lessontext_files(NULL, &files, &e)) {
        snprintf(src->why, sizeof src->why, "%s", e.msg);
        lessontext_context_done(&ctx);
        return;
    }
    src->glossary = &ctx.glossary;
    src->exercises = &ctx.exercises;
    src->refs = &ctx.refs;
    for (size_t i = 0; i < files.n && i < TEACH_LESSONS_MAX; i++)
        src->lessons[src->n_lessons++] = files.path[i];
}
