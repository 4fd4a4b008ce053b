/* progress.h - what a learner has done: exercises done and attempted,
 * lessons read, kept in $XDG_DATA_HOME/kvlab/progress.json (default
 * ~/.local/share/kvlab/progress.json):
 *
 *   {"version": 1, "exercises": {"try-1": {"done": true, "attempts": 3}},
 *    "lessons": {"why-kv-grows": {"read": true}}}
 *
 * Progress is never silently lost: the file is replaced atomically (a
 * temporary file in the same directory, fsync, rename, fsync of the
 * directory), so a crash leaves the old file or the new one; a file that
 * is not progress (broken JSON, an unknown field) is renamed aside
 * (progress.json.corrupt-YYYYMMDD-HHMMSS) before it is written over, the
 * caller gets a notice to show, and progress starts afresh. A file that
 * cannot be read (permission, not a regular file) is not corrupt, and one
 * of a newer version is not ours to judge: both are left as they are, and
 * nothing is written over them. */
#ifndef KVLAB_PROGRESS_H
#define KVLAB_PROGRESS_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>

#define PROGRESS_VERSION 1
#define PROGRESS_ID_MAX 64
#define PROGRESS_ITEMS_MAX 1024
#define PROGRESS_PATH_MAX 4096

typedef struct {
    char id[PROGRESS_ID_MAX];
    bool done;
    bool read;                  // lessons
    unsigned long attempts;
} ProgressItem;

typedef struct {
    size_t n_exercises, n_lessons;
    ProgressItem exercises[PROGRESS_ITEMS_MAX];
    ProgressItem lessons[PROGRESS_ITEMS_MAX];
    char notice[2 * PROGRESS_PATH_MAX + ERROR_MSG_MAX + 256];  // "" or what became of a corrupt file
    bool newer;                 // the file is of a newer version (left as it is)
} Progress;

/* $XDG_DATA_HOME/kvlab/progress.json, or ~/.local/share/kvlab/...; an
 * error where neither XDG_DATA_HOME nor HOME is an absolute path. */
int progress_path(char *buf, size_t n, Error *e);

/* What a load is for: showing progress (nothing on disk is touched), or
 * updating it (a corrupt file is renamed aside, to be written afresh). */
typedef enum { PROGRESS_READ, PROGRESS_UPDATE } ProgressMode;

/* Reads path into p. A missing file is empty progress. A file that is not
 * progress is, with PROGRESS_UPDATE, renamed aside, and with PROGRESS_READ
 * left where it is; p->notice says which (returns 0, p empty). -1 where
 * the file cannot be read, is of a newer version while updating, or
 * cannot be kept aside: nothing may then be written over it. */
int progress_load(Progress *p, const char *path, ProgressMode mode, Error *e);

/* Writes p to path atomically, making the directory where missing. */
int progress_save(const Progress *p, const char *path, Error *e);
/* progress_save in its two halves: the new text in a temporary file beside
 * path (fsynced; its name in tmp), then the rename over path and the fsync
 * of the directory. A crash between the two leaves path as it was. */
int progress_write_temp(const Progress *p, const char *path, char *tmp, size_t n, Error *e);
int progress_commit(const char *tmp, const char *path, Error *e);

/* The exercise's or lesson's entry, added where missing (NULL when full). */
ProgressItem *progress_exercise(Progress *p, const char *id);
ProgressItem *progress_lesson(Progress *p, const char *id);
/* One more attempt at the exercise, done once right; -1 when the file
 * holds as many entries as it can. */
int progress_attempt(Progress *p, const char *id, bool correct);
/* One attempt recorded in the file at path: under an exclusive lock on its
 * directory (flock), so that checks run at once (the lab and the command
 * line, or several shells) each see the others' attempts; loads
 * (PROGRESS_UPDATE), adds the attempt, saves. p holds what was saved, and
 * its notice. -1 (nothing saved) where the file cannot be had or written. */
int progress_record(Progress *p, const char *path, const char *id, bool correct, Error *e);
/* The lesson marked read in the file at path, in the same way. */
int progress_record_read(Progress *p, const char *path, const char *lesson, Error *e);
/* Deletes the file at path under the same lock, waiting for a record in
 * progress to finish: so a reset that races a check neither loses the
 * check's attempt to a save after it (the reset comes after the save and
 * deletes it too) nor lets that save bring the deleted progress back.
 * 1 deleted, 0 there was none, -1 on an error. */
int progress_reset(const char *path, Error *e);
/* The entry where there is one, else NULL. */
const ProgressItem *progress_find_exercise(const Progress *p, const char *id);
const ProgressItem *progress_find_lesson(const Progress *p, const char *id);

#endif
