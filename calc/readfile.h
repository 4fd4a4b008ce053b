/* readfile.h - a whole regular file into memory, refused before it is read
 * when it is not a regular file (a FIFO must not hang the open, a directory
 * is not data) or is larger than the caller's limit. The data files
 * (jsonfile.h) and the lessons (lesson.h) are read so. */
#ifndef KVLAB_READFILE_H
#define KVLAB_READFILE_H

#include "error.h"

#include <stddef.h>

/* The file's bytes in *text (NUL-terminated, to free), its length in *len.
 * `kind` names what the limit is for in the refusal: "data files are
 * limited to 1048576 bytes". On an error errno says which, for a caller
 * that tells them apart: the open's own (ENOENT: no such file), EINVAL not
 * a regular file, EFBIG over the limit, ENOMEM, EIO a read that stopped
 * short. */
int readfile(const char *path, size_t max, const char *kind, char **text, size_t *len, Error *e);

#endif
