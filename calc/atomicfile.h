/* atomicfile.h - replacing a file so that a crash leaves the old one or
 * the new one, never a part: the new text goes into a temporary file in
 * the same directory (made where missing), which is synced, then renamed
 * over the file, and the directory is synced so that the rename lasts.
 * The learner's progress and the lab's saved states are written so. */
#ifndef KVLAB_ATOMICFILE_H
#define KVLAB_ATOMICFILE_H

#include "error.h"

#include <stddef.h>

/* The directories above path that are missing, made (mode 0700). */
int atomicfile_make_dirs(const char *path, Error *e);
/* The first half: text and a newline in a temporary file beside path,
 * synced; its name in tmp (n bytes). A crash after it leaves path as it
 * was. */
int atomicfile_write_temp(const char *path, const char *text, char *tmp, size_t n, Error *e);
/* The second half: tmp renamed over path, and the directory synced. */
int atomicfile_commit(const char *tmp, const char *path, Error *e);
/* Both halves. */
int atomicfile_write(const char *path, const char *text, Error *e);

#endif
