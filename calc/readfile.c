/* readfile.c - a whole regular file into memory (readfile.h). */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int readfile_open(const char *path, int *fd, unsigned long long *size, Error *e)
{
    /* O_NONBLOCK: a FIFO must not hang the open; it is refused below as
     * not a regular file. */
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (*fd < 0)
        return error_set(e, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(*fd);
        *fd = -1;
        return error_set(e, "%s: not a regular file", path);
    }
    *size = (unsigned long long)st.st_size;
    return 0;
}

size_t readfile_at(int fd, unsigned long long off, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

int readfile(const char *path, size_t max, const char *kind, char **text, size_t *len, Error *e)
{
    *text = NULL;
    *len = 0;
    int fd;
    unsigned long long size;
    if (readfile_open(path, &fd, &size, e))
        return -1;
    if (size > max) {
        close(fd);
        return error_set(e, "%s: file is %llu bytes; %s are limited to %zu bytes", path, size, kind, max);
    }
    size_t want = (size_t)size;
    char *buf = malloc(want + 1);
    if (!buf) {
        close(fd);
        return error_runtime(e, "%s: out of memory", path);
    }
    size_t got = readfile_at(fd, 0, buf, want);
    close(fd);
    if (got != want) {
        free(buf);
        return error_runtime(e, "%s: short read (%zu of %zu bytes)", path, got, want);
    }
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return 0;
}
