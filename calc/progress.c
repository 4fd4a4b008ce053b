/* progress.c - the learner's progress file, replaced atomically. */
#include "progress.h"

#include "atomicfile.h"
#include "jsonfile.h"
#include "readfile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int progress_path(char *buf, size_t n, Error *e)
{
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    int len;
    if (xdg && xdg[0] == '/')
        len = snprintf(buf, n, "%s/kvlab/progress.json", xdg);
    else if (home && home[0] == '/')
        len = snprintf(buf, n, "%s/.local/share/kvlab/progress.json", home);
    else
        return error_set(e, "no place for the progress file: set XDG_DATA_HOME or HOME to an absolute path");
    if (len < 0 || (size_t)len >= n)
        return error_set(e, "the progress file's path is too long");
    return 0;
}

static ProgressItem *progress_item(ProgressItem *items, size_t *n, const char *id)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(items[i].id, id))
            return &items[i];
    if (*n == PROGRESS_ITEMS_MAX || strlen(id) >= PROGRESS_ID_MAX)
        return NULL;
    ProgressItem *it = &items[(*n)++];
    memset(it, 0, sizeof *it);
    snprintf(it->id, sizeof it->id, "%s", id);
    return it;
}

ProgressItem *progress_exercise(Progress *p, const char *id)
{
    return progress_item(p->exercises, &p->n_exercises, id);
}

ProgressItem *progress_lesson(Progress *p, const char *id)
{
    return progress_item(p->lessons, &p->n_lessons, id);
}

int progress_attempt(Progress *p, const char *id, bool correct)
{
    ProgressItem *it = progress_exercise(p, id);
    if (!it)
        return -1;
    it->attempts++;
    it->done |= correct;
    return 0;
}

static const ProgressItem *progress_find(const ProgressItem *items, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(items[i].id, id))
            return &items[i];
    return NULL;
}

const ProgressItem *progress_find_exercise(const Progress *p, const char *id)
{
    return progress_find(p->exercises, p->n_exercises, id);
}

const ProgressItem *progress_find_lesson(const Progress *p, const char *id)
{
    return progress_find(p->lessons, p->n_lessons, id);
}

/* ------------------------------------------------------------------------
 * Reading
 */

static int read_items(const JsonDoc *d, const cJSON *root, const char *name, bool lessons, Progress *p, Error *e)
{
    static const char *const EXERCISE_KEYS[] = {"done", "attempts", NULL};
    static const char *const LESSON_KEYS[] = {"read", NULL};
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, name);
    if (!obj)
        return 0;
    if (json_object(d, obj, name, e))
        return -1;
    for (const cJSON *c = obj->child; c; c = c->next) {
        ProgressItem *it = lessons ? progress_lesson(p, c->string) : progress_exercise(p, c->string);
        uint64_t attempts = 0;
        if (!it)
            return jsondoc_error_key(d, c, e, "too many entries, or an id too long");
        if (json_object(d, c, "an entry", e) ||
            json_known_fields(d, c, lessons ? LESSON_KEYS : EXERCISE_KEYS, e) ||
            json_bool(d, c, lessons ? "read" : "done", FIELD_OPTIONAL, lessons ? &it->read : &it->done, e) < 0 ||
            (!lessons && json_uint(d, c, "attempts", FIELD_OPTIONAL, 0, UINT32_MAX, &attempts, e) < 0))
            return -1;
        it->attempts = (unsigned long)attempts;
    }
    return 0;
}

static int from_doc(void *out, JsonDoc *d, const void *ctx, Error *e)
{
    (void)ctx;
    Progress *p = out;
    static const char *const ROOT_KEYS[] = {"version", "exercises", "lessons", NULL};
    uint64_t version = 0;
    int rc = json_object(d, d->root, "the progress file", e) ||
                     json_uint(d, d->root, "version", FIELD_REQUIRED, 1, UINT32_MAX, &version, e)
                 ? -1
                 : 0;
    if (!rc && version > PROGRESS_VERSION) {
        p->newer = true;        // not ours to read, nor to call corrupt
        rc = error_runtime(e, "%s is progress of version %llu, written by a newer kvlab (this one reads version %d)",
                           d->path, (unsigned long long)version, PROGRESS_VERSION);
    }
    if (!rc && (json_known_fields(d, d->root, ROOT_KEYS, e) || read_items(d, d->root, "exercises", false, p, e) ||
                read_items(d, d->root, "lessons", true, p, e)))
        rc = -1;
    jsondoc_done(d);
    return rc;
}

/* Renames the file that is not progress aside under a name that says when. */
static int keep_aside(Progress *p, const char *path, const Error *why, Error *e)
{
    char aside[PROGRESS_PATH_MAX + 64], stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(aside, sizeof aside, "%s.corrupt-%s", path, stamp);
    for (int k = 1; access(aside, F_OK) == 0 && k < 100; k++)
        snprintf(aside, sizeof aside, "%s.corrupt-%s-%d", path, stamp, k);
    if (rename(path, aside))
        return error_runtime(e, "%s cannot be read (%s) nor kept aside as %s: %s; it is left as it is and "
                                "nothing is saved",
                             path, why->msg, aside, strerror(errno));
    snprintf(p->notice, sizeof p->notice,
             "the progress file could not be read (%s); it is kept as %s and progress starts afresh", why->msg,
             aside);
    return 0;
}

int progress_load(Progress *p, const char *path, ProgressMode mode, Error *e)
{
    memset(p, 0, sizeof *p);
    /* The file is opened and read once: what is judged is what was read. */
    char *text;
    size_t len;
    Error why;
    if (readfile(path, JSON_FILE_MAX, "progress files", &text, &len, &why)) {
        if (errno == ENOENT)
            return 0;           // no progress yet
        if (errno != EFBIG)     // no permission, not a regular file, a failed read: not corruption
            return error_runtime(e, "%s cannot be read: %s", path,
                                 errno == EINVAL ? "not a regular file" : strerror(errno));
    } else {
        int rc = jsondoc_read(p, sizeof *p, from_doc, NULL, path, text, len, &why);
        free(text);
        if (!rc)
            return 0;
    }
    if (why.runtime && !p->newer)
        return error_runtime(e, "%s", why.msg);     // a failed read, not a corrupt file
    bool newer = p->newer;
    memset(p, 0, sizeof *p);
    if (newer && mode == PROGRESS_UPDATE)
        return error_runtime(e, "%s; it is left as it is", why.msg);
    if (newer || mode == PROGRESS_READ) {
        snprintf(p->notice, sizeof p->notice, "%s%s%s; it is left as it is", newer ? "" : "the progress file could not be read as progress (",
                 why.msg, newer ? "" : ")");
        return 0;
    }
    return keep_aside(p, path, &why, e);
}

/* ------------------------------------------------------------------------
 * Writing
 */

static char *progress_json(const Progress *p)
{
    cJSON *root = cJSON_CreateObject(), *ex = NULL, *le = NULL;
    if (!root || !cJSON_AddNumberToObject(root, "version", PROGRESS_VERSION) ||
        !(ex = cJSON_AddObjectToObject(root, "exercises")) || !(le = cJSON_AddObjectToObject(root, "lessons"))) {
        cJSON_Delete(root);
        return NULL;
    }
    bool ok = true;
    for (size_t i = 0; i < p->n_exercises && ok; i++) {
        cJSON *o = cJSON_AddObjectToObject(ex, p->exercises[i].id);
        ok = o && cJSON_AddBoolToObject(o, "done", p->exercises[i].done) &&
             cJSON_AddNumberToObject(o, "attempts", (double)p->exercises[i].attempts);
    }
    for (size_t i = 0; i < p->n_lessons && ok; i++) {
        cJSON *o = cJSON_AddObjectToObject(le, p->lessons[i].id);
        ok = o && cJSON_AddBoolToObject(o, "read", p->lessons[i].read);
    }
    char *s = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    return s;
}

int progress_write_temp(const Progress *p, const char *path, char *tmp, size_t n, Error *e)
{
    char *text = progress_json(p);
    if (!text)
        return error_runtime(e, "out of memory writing the progress");
    int rc = atomicfile_write_temp(path, text, tmp, n, e);
    cJSON_free(text);
    return rc;
}

int progress_commit(const char *tmp, const char *path, Error *e)
{
    return atomicfile_commit(tmp, path, e);
}

int progress_save(const Progress *p, const char *path, Error *e)
{
    char tmp[PROGRESS_PATH_MAX + 16];
    return progress_write_temp(p, path, tmp, sizeof tmp, e) || progress_commit(tmp, path, e) ? -1 : 0;
}

/* The directory of path, open and locked exclusively; -1 on an error. The
 * lock goes with the descriptor's close. */
static int lock_dir(const char *path, Error *e)
{
    char dir[PROGRESS_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return error_runtime(e, "cannot open %s to lock it: %s", dir, strerror(errno));
    while (flock(fd, LOCK_EX)) {
        if (errno == EINTR)
            continue;
        int err = errno;
        close(fd);
        return error_runtime(e, "cannot lock %s: %s", dir, strerror(err));
    }
    return fd;
}

/* Loads the file at path under the lock on its directory, applies the
 * change, and saves: the one way the file is updated in place. */
static int progress_update(Progress *p, const char *path, int (*change)(Progress *, const void *),
                           const void *arg, Error *e)
{
    if (atomicfile_make_dirs(path, e))
        return -1;
    int lock = lock_dir(path, e);
    if (lock < 0)
        return -1;
    int rc = progress_load(p, path, PROGRESS_UPDATE, e);
    if (!rc && change(p, arg))
        rc = error_runtime(e, "the progress file holds all the entries it can");
    if (!rc)
        rc = progress_save(p, path, e);
    close(lock);
    return rc;
}

typedef struct {
    const char *id;
    bool correct;
} Attempt;

static int progress_change_attempt(Progress *p, const void *arg)
{
    const Attempt *a = arg;
    return progress_attempt(p, a->id, a->correct);
}

static int progress_change_read(Progress *p, const void *arg)
{
    ProgressItem *it = progress_lesson(p, arg);
    if (!it)
        return -1;
    it->read = true;
    return 0;
}

int progress_record(Progress *p, const char *path, const char *id, bool correct, Error *e)
{
    Attempt a = {id, correct};
    return progress_update(p, path, progress_change_attempt, &a, e);
}

int progress_record_read(Progress *p, const char *path, const char *lesson, Error *e)
{
    return progress_update(p, path, progress_change_read, lesson, e);
}

int progress_reset(const char *path, Error *e)
{
    int lock = lock_dir(path, e);
    if (lock < 0)
        return access(path, F_OK) && errno == ENOENT ? 0 : -1;     // no directory: no progress
    int rc = 1;
    if (unlink(path))
        rc = errno == ENOENT ? 0 : error_runtime(e, "cannot delete %s: %s", path, strerror(errno));
    close(lock);
    return rc;
}
