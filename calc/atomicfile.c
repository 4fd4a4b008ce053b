/* atomicfile.c - see atomicfile.h. */
#include "atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ATOMICFILE_PATH_MAX 4096

int atomicfile_make_dirs(const char *path, Error *e)
{
    char dir[ATOMICFILE_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0700) && errno != EEXIST)
            return error_runtime(e, "cannot make %s: %s", dir, strerror(errno));
        *p = '/';
    }
    if (mkdir(dir, 0700) && errno != EEXIST)
        return error_runtime(e, "cannot make %s: %s", dir, strerror(errno));
    return 0;
}

int atomicfile_write_temp(const char *path, const char *text, char *tmp, size_t n, Error *e)
{
    if (atomicfile_make_dirs(path, e))
        return -1;
    if ((size_t)snprintf(tmp, n, "%s.tmp-XXXXXX", path) >= n)
        return error_set(e, "%s: the path is too long", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return error_runtime(e, "cannot write beside %s: %s", path, strerror(errno));
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    int err = done < len ? (errno ? errno : EIO) : 0;
    if (!err && (write(fd, "\n", 1) != 1 || fsync(fd)))
        err = errno ? errno : EIO;
    if (close(fd) && !err)
        err = errno;
    if (err) {
        unlink(tmp);
        return error_runtime(e, "cannot write %s: %s", tmp, strerror(err));
    }
    return 0;
}

int atomicfile_commit(const char *tmp, const char *path, Error *e)
{
    if (rename(tmp, path)) {
        int err = errno;
        unlink(tmp);
        return error_runtime(e, "cannot replace %s: %s", path, strerror(err));
    }
    char dir[ATOMICFILE_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';         // a file in the root directory
    else if (slash)
        *slash = '\0';
    int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY);
    if (fd < 0 || fsync(fd)) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return error_runtime(e, "cannot sync the directory of %s: %s", path, strerror(err));
    }
    close(fd);
    return 0;
}

int atomicfile_write(const char *path, const char *text, Error *e)
{
    char tmp[ATOMICFILE_PATH_MAX + 16];
    return atomicfile_write_temp(path, text, tmp, sizeof tmp, e) || atomicfile_commit(tmp, path, e) ? -1 : 0;
}
