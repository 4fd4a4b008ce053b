/* teach.c - see teach.h. */
#include "teach.h"

#include <stdio.h>
#include <string.h>

static struct {
    const TeachSources *src;
    bool loaded;
    Progress progress;
    char path[PROGRESS_PATH_MAX];       // "" where progress has no place (no HOME)
} teach;

void teach_set(const TeachSources *src)
{
    teach.src = src;
}

int teach_load(Error *e)
{
    if (!teach.loaded) {
        teach.loaded = true;
        Error why;
        memset(&teach.progress, 0, sizeof teach.progress);
        if (progress_path(teach.path, sizeof teach.path, &why) ||
            progress_load(&teach.progress, teach.path, PROGRESS_READ, &why)) {
            teach.path[0] = '\0';           // nothing is written over what could not be read
            snprintf(teach.progress.notice, sizeof teach.progress.notice, "progress is not kept: %s", why.msg);
        }
    }
    if (!teach.src)
        return error_set(e, "this kvlab has no lessons");
    if (teach.src->why[0])
        return error_set(e, "%s", teach.src->why);
    return 0;
}

const TeachSources *teach_context(void)
{
    return teach.src && !teach.src->why[0] ? teach.src : NULL;
}

Progress *teach_progress(void)
{
    return &teach.progress;
}

const char *teach_notice(void)
{
    return teach.progress.notice;
}

/* Each change is made to the file under its lock (progress_record*), which
 * also brings in what another kvlab recorded meanwhile. */
int teach_attempt(const char *exercise, bool correct, Error *e)
{
    if (!teach.path[0])
        return error_set(e, "%s", teach.progress.notice);
    return progress_record(&teach.progress, teach.path, exercise, correct, e);
}

int teach_mark_read(const char *lesson, Error *e)
{
    if (!teach.path[0])
        return error_set(e, "%s", teach.progress.notice);
    return progress_record_read(&teach.progress, teach.path, lesson, e);
}
