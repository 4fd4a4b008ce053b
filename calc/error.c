/* error.c - see error.h. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 3, 0)))
static int error_of(Error *e, bool runtime, const char *fmt, va_list ap)
{
    if (e) {
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        e->runtime = runtime;
    }
    return -1;
}

int error_set(Error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_of(e, false, fmt, ap);
    va_end(ap);
    return -1;
}

int error_runtime(Error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_of(e, true, fmt, ap);
    va_end(ap);
    return -1;
}

int error_prefix(Error *e, const char *fmt, ...)
{
    if (!e)
        return -1;
    char prefix[ERROR_MSG_MAX / 4], old[ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    /* Keep the end of the old message if the two do not fit together. */
    snprintf(e->msg, sizeof e->msg, "%s: %.*s", prefix,
             (int)(sizeof e->msg - strlen(prefix) - 3), old);
    return -1;
}
