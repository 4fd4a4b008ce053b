/* error.h - errors as values.
 *
 * Library code never prints and never exits: a function that can fail takes
 * an Error * and returns -1 after filling in a one-line message that names
 * what was wrong. The caller decides where the message goes and which exit
 * code it becomes.
 */
#ifndef KVLAB_ERROR_H
#define KVLAB_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

#define ERROR_MSG_MAX 512

typedef struct {
    char msg[ERROR_MSG_MAX];    // one line, no trailing newline
} Error;

/* Formats the message into e (when e is not NULL) and returns -1, so that a
 * failing path can read `return error_set(e, "...", ...);`. */
int error_set(Error *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Puts "prefix: " in front of the message already in e; returns -1. */
int error_prefix(Error *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif
