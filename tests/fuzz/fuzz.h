/* fuzz.h - what the fuzz harnesses share.
 *
 * Each tests/fuzz/fuzz_NAME.c holds one harness, FUZZ_TARGET(NAME) { ... },
 * which takes one input and returns 0. Built by `make fuzz` with clang and
 * -DFUZZ_LIBFUZZER, it is libFuzzer's LLVMFuzzerTestOneInput; built with the
 * normal compiler (`make test`), it registers itself with the replay program
 * (replay.c), which runs every file of tests/fuzz/corpus/NAME/ and
 * tests/fuzz/crashes/NAME/ through it.
 *
 * A harness feeds the input to one entry point and then checks what the
 * code promises for it (FUZZ_CHECK aborts on a broken invariant, so the
 * fuzzer saves the input as a crash). Crashes, sanitizer reports and leaks
 * are bugs too.
 */
#ifndef KVLAB_FUZZ_H
#define KVLAB_FUZZ_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*FuzzFn)(const uint8_t *data, size_t size);

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#define FUZZ_TARGET(name) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
#else
/* The replay program's list of harnesses, filled in before main runs. */
void fuzz_register(const char *name, FuzzFn fn);
#define FUZZ_TARGET(name)                                                                          \
    static int fuzz_##name(const uint8_t *data, size_t size);                                     \
    __attribute__((constructor)) static void fuzz_register_##name(void)                           \
    {                                                                                              \
        fuzz_register(#name, fuzz_##name);                                                         \
    }                                                                                              \
    static int fuzz_##name(const uint8_t *data, size_t size)
#endif

/* Aborts with the rule that was broken and where. */
#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant broken: %s: ", __FILE__, __LINE__, #cond);          \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The input in a heap buffer of exactly its length, no NUL after it, so
 * that AddressSanitizer reports any read past its end. */
static inline char *fuzz_exact(const uint8_t *data, size_t size)
{
    char *p = malloc(size ? size : 1);
    FUZZ_CHECK(p != NULL, "out of memory");
    if (size)
        memcpy(p, data, size);
    return p;
}

/* The input as a command-line argument: up to its first NUL, in a heap
 * buffer of exactly that length plus the NUL. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t n = nul ? (size_t)(nul - data) : size;
    char *p = malloc(n + 1);
    FUZZ_CHECK(p != NULL, "out of memory");
    memcpy(p, data, n);
    p[n] = '\0';
    return p;
}

/* A data file loader's failure: a message that starts with the file's name,
 * and where it gives a line and column, ones that lie within the text. */
static inline void fuzz_check_file_error(const Error *e, const char *name, const char *text,
                                         size_t len)
{
    size_t n = strlen(name);
    FUZZ_CHECK(memchr(e->msg, '\0', sizeof e->msg) != NULL, "message not terminated");
    FUZZ_CHECK(strncmp(e->msg, name, n) == 0 && e->msg[n] == ':', "'%s'", e->msg);
    unsigned long line, col;
    if (sscanf(e->msg + n, ":%lu:%lu:", &line, &col) != 2)
        return;
    unsigned long lines = 1, cols = 1, at = 1;     // the last line's length, in bytes
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n')
            lines++, at = 1;
        else
            at++;
        if (at > cols)
            cols = at;
    }
    FUZZ_CHECK(line >= 1 && line <= lines && col >= 1 && col <= cols + 1,
               "position %lu:%lu outside %lu lines of at most %lu columns: '%s'", line, col, lines,
               cols, e->msg);
}

/* The data directory the scenario harness reads models and GPUs from. */
static inline const char *fuzz_datadir(void)
{
    const char *d = getenv("KVLAB_DATA");
    return d && *d ? d : "scenarios";
}

#endif
