/* teachsources.c - see teachsources.h. */
#include "teachsources.h"

#include "lessontext.h"

#include <stdio.h>
#include <string.h>

void teachsources_fill(TeachSources *src)
{
    static LessonContext ctx;
    static LessonFiles files;
    Error e;
    memset(src, 0, sizeof *src);
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
