/* jsonfile.h - reading JSON data files defensively, with positions.
 *
 * Scenario, model and GPU files are data a user may edit, so every way a file
 * can be wrong ends in one error line of the form
 *
 *   scenarios/models/x.json:3:15: field 'layers': expected a whole number >= 1
 *
 * and never in a crash. The file is read whole into a NUL-terminated buffer
 * of its exact length (at most JSON_FILE_MAX bytes), nesting is capped before
 * cJSON sees it, and cJSON must consume the whole buffer. cJSON keeps no
 * positions, so after a successful parse the text is walked once more in
 * step with the tree to record where every value starts.
 */
#ifndef KVLAB_JSONFILE_H
#define KVLAB_JSONFILE_H

#include "checked.h"
#include "error.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_FILE_MAX (1u << 20)   // 1 MiB: far above any real data file
#define JSON_DEPTH_MAX 32          // our schemas nest 3 deep

typedef struct {
    const cJSON *item;
    size_t offset;              // byte offset of the value in text
    size_t key_offset;          // byte offset of its key, for object members
} JsonPos;

typedef struct {
    char path[512];             // as given, for messages
    char *text;                 // (len + 1) bytes, NUL-terminated
    size_t len;
    cJSON *root;
    JsonPos *pos;               // (npos) positions, sorted by item for lookup
    size_t npos;
} JsonDoc;

/* Reads and parses path; on failure nothing is left allocated. */
int jsondoc_load(JsonDoc *d, const char *path, Error *e);
/* The same from a buffer already in memory (tests, fuzzing); name is used in
 * messages. */
int jsondoc_parse(JsonDoc *d, const char *name, const char *text, size_t len, Error *e);
void jsondoc_done(JsonDoc *d);

/* What every loader does: zeroes out (size bytes), opens the data file at
 * path, or, where text is not NULL, its len bytes already in memory (path
 * then names it in messages), and hands the document to from, which reads
 * out (with ctx, the loader's own) and frees the document. */
typedef int (*JsonFromDoc)(void *out, JsonDoc *d, const void *ctx, Error *e);
int jsondoc_read(void *out, size_t size, JsonFromDoc from, const void *ctx, const char *path, const char *text,
                 size_t len, Error *e);

/* "path:line:col: " prefix for an error about item, then the message. */
int jsondoc_error(const JsonDoc *d, const cJSON *item, Error *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same, pointing at the member's key rather than its value. */
int jsondoc_error_key(const JsonDoc *d, const cJSON *item, Error *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A data file's "name" must be its file name without ".json", so that the
 * name a user types and the name the file claims cannot drift apart. */
int jsondoc_check_name(const JsonDoc *d, const char *name, Error *e);

/* ------------------------------------------------------------------------
 * Numbers, read from their text rather than from cJSON's double, so that
 * every valid JSON number, however many digits it is written with, has its
 * exact value (json_size and the other typed fields read numbers so too).
 */

/* True and *out when v is a number whose value is a whole number from min to
 * max (32, 32.0, 3.2e1; not 32.0000000000000001). */
bool json_number_whole(const JsonDoc *d, const cJSON *v, uint64_t min, uint64_t max,
                       uint64_t *out);
/* True and *out when v is a number within float range: the float nearest to
 * its exact value, rounded once (1e-50 is 0). */
bool json_number_float(const JsonDoc *d, const cJSON *v, float *out);
/* The same as a double: the double nearest to its exact value, rounded
 * once; false where it is out of range. */
bool json_number_double(const JsonDoc *d, const cJSON *v, double *out);

/* ------------------------------------------------------------------------
 * Typed fields of an object. Each returns 0 and fills *out, 1 when an
 * optional field is absent (out untouched), or -1 with a positioned message
 * naming the field and what it should have been.
 */
typedef enum { FIELD_OPTIONAL, FIELD_REQUIRED } FieldNeed;

int json_object(const JsonDoc *d, const cJSON *v, const char *what, Error *e);
/* Refuses members whose names are not in allowed (NULL-terminated): a
 * misspelt field is reported, not silently ignored. */
int json_known_fields(const JsonDoc *d, const cJSON *obj, const char *const *allowed, Error *e);

int json_string(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
                char *out, size_t n, Error *e);
int json_uint(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
              uint64_t min, uint64_t max, uint64_t *out, Error *e);
int json_bool(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
              bool *out, Error *e);
/* A measured quantity: a number above 0 (a time, a rate, a slope). */
int json_positive(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need, double *out, Error *e);
/* Sizes and rates as strings with units ("20GiB", "3.35TB/s") or bare
 * integers of bytes; contexts as strings ("8k") or integers. */
int json_size(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
              u128 *out, Error *e);
int json_rate(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
              u128 *out, Error *e);
int json_context(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
                 uint64_t *out, Error *e);
int json_fraction(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
                  Q *out, Error *e);
/* An array member; *out is the array, *count its length. */
int json_array(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need,
               const cJSON **out, int *count, Error *e);

#endif
