/* error.h - errors as values.
 *
 * Library code never prints and never exits: a function that can fail takes
 * an Error * and returns -1 after filling in a one-line message that names
 * what was wrong, and whether the input was wrong (the default) or the
 * machine failed (error_runtime: out of memory, a read that stopped short).
 * The caller decides where the message goes and which exit code it
 * becomes.
 */
#ifndef KVLAB_ERROR_H
#define KVLAB_ERROR_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ERROR_MSG_MAX 512

typedef struct {
    char msg[ERROR_MSG_MAX];    // one line, no trailing newline
    bool runtime;               // the machine failed, not the input
} Error;

/* Formats the message into e (when e is not NULL), an error in the input,
 * and returns -1, so that a failing path can read `return error_set(e,
 * "...", ...);`. */
int error_set(Error *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* error_set for a failure of the machine's: out of memory, a read that
 * stopped short. */
int error_runtime(Error *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Puts "prefix: " in front of the message already in e (of either kind);
 * returns -1. */
int error_prefix(Error *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif
