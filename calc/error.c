/* error.c - see error.h. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int error_set(Error *e, const char *fmt, ...)
{
    if (!e)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->runtime = false;
    return -1;
}

int error_runtime(Error *e, const char *fmt, ...)
{
    if (!e)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->runtime = true;
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
