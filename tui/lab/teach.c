/* teach.c - see teach.h. */
#include "teach.h"

#include <string.h>

static struct {
    bool tried;
    int rc;
    Error why;
    LessonContext ctx;
    Progress progress;
    char path[PROGRESS_PATH_MAX];       // "" where progress has no place (no HOME)
} teach;

int teach_load(Error *e)
{
    if (!teach.tried) {
        teach.tried = true;
        teach.rc = lessontext_context(&teach.ctx, &teach.why);
        Error why;
        memset(&teach.progress, 0, sizeof teach.progress);
        if (progress_path(teach.path, sizeof teach.path, &why) ||
            progress_load(&teach.progress, teach.path, &why)) {
            teach.path[0] = '\0';           // nothing is written over what could not be read
            snprintf(teach.progress.notice, sizeof teach.progress.notice, "progress is not kept: %s", why.msg);
        }
    }
    if (teach.rc && e)
        *e = teach.why;
    return teach.rc;
}

const LessonContext *teach_context(void)
{
    return teach.tried && !teach.rc ? &teach.ctx : NULL;
}

Progress *teach_progress(void)
{
    return &teach.progress;
}

const char *teach_notice(void)
{
    return teach.progress.notice;
}

int teach_save(Error *e)
{
    if (!teach.path[0])
        return error_set(e, "%s", teach.progress.notice);
    return progress_save(&teach.progress, teach.path, e);
}

void teach_done(void)
{
    if (teach.tried && !teach.rc)
        lessontext_context_done(&teach.ctx);
    teach.tried = false;
}
