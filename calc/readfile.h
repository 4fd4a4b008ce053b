/* readfile.h - a whole regular file into memory, refused before it is read
 * when it is not a regular file (a FIFO must not hang the open, a directory
 * is not data) or is larger than the caller's limit. The data files
 * (jsonfile.h) and the lessons (lesson.h) are read so; the tensor files
 * (kvtensors.h), too large to read whole, are opened so. */
#ifndef KVLAB_READFILE_H
#define KVLAB_READFILE_H

#include "error.h"

#include <stddef.h>

/* The file's bytes in *text (NUL-terminated, to free), its length in *len.
 * `kind` names what the limit is for in the refusal: "data files are
 * limited to 1048576 bytes". */
int readfile(const char *path, size_t max, const char *kind, char **text, size_t *len, Error *e);

/* The same refusals for a file read in parts (kvtensors.h): *fd open for
 * reading (to close) and *size its length in bytes. */
int readfile_open(const char *path, int *fd, unsigned long long *size, Error *e);
/* Up to n bytes of fd from offset off into buf, through interruptions and
 * partial reads; the count read, less than n only at the end of the file
 * or on an error. */
size_t readfile_at(int fd, unsigned long long off, void *buf, size_t n);

#endif
