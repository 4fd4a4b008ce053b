/* readfile.c - a whole regular file into memory (readfile.h). */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int readfile(const char *path, size_t max, const char *kind, char **text, size_t *len, Error *e)
{
    *text = NULL;
    *len = 0;
    /* O_NONBLOCK: a FIFO must not hang the open; it is refused below as
     * not a regular file. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int err = errno;
        error_set(e, "%s: cannot open: %s", path, strerror(err));
        errno = err;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        error_set(e, "%s: not a regular file", path);
        errno = EINVAL;
        return -1;
    }
    if ((unsigned long long)st.st_size > max) {
        close(fd);
        error_set(e, "%s: file is %lld bytes; %s are limited to %zu bytes", path, (long long)st.st_size, kind,
                  max);
        errno = EFBIG;
        return -1;
    }
    size_t want = (size_t)st.st_size, got = 0;
    char *buf = malloc(want + 1);
    if (!buf) {
        close(fd);
        error_runtime(e, "%s: out of memory", path);
        errno = ENOMEM;
        return -1;
    }
    while (got < want) {
        ssize_t r = read(fd, buf + got, want - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != want) {
        free(buf);
        error_runtime(e, "%s: short read (%zu of %zu bytes)", path, got, want);
        errno = EIO;
        return -1;
    }
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return 0;
}
