/* field.h - an editable number or choice on a screen.
 *
 * A field points at a value the screen owns and knows how to show it, parse
 * what the user types (with the units of calc/units.h: "8k", "20GiB",
 * "3.35TB/s") and step it with + and -. */
#ifndef KVLAB_FIELD_H
#define KVLAB_FIELD_H

#include "checked.h"
#include "error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    FK_CONTEXT,         // uint64_t tokens; steps double and halve
    FK_COUNT,           // uint64_t; steps by `step`
    FK_POW2,            // uint64_t; steps double and halve (tensor parallel, groups)
    FK_SIZE,            // u128 bytes; steps by `step` bytes; 0 shows `zero`
    FK_RATE,            // u128 bytes/s; steps by `step`
    FK_CHOICE,          // int index into choices
    FK_TOGGLE,          // bool
    FK_FLOAT,           // float; steps by 10% of itself
    FK_CONTEXTS,        // FieldContexts, each from min to max tokens; no steps; empty shows `zero`
} FieldKind;

/* A list of contexts ("1k,8k,32k"), as `kvlab calc --contexts` reads it. */
#define FIELD_CONTEXTS_MAX 16
typedef struct {
    uint64_t tokens[FIELD_CONTEXTS_MAX];
    size_t n;
} FieldContexts;

typedef struct {
    const char *label;
    FieldKind kind;
    void *value;
    uint64_t min, max;          // counts, contexts and choice bounds
    u128 step;                  // sizes, rates and counts
    const char *const *choices; // FK_CHOICE
    const char *zero;           // what 0 means for a size, rate or float ("from GPU", "dynamic")
} Field;

/* The value as text: "8,192 (8k)", "20 GiB", "3.352 TB/s", "fp8". */
const char *field_text(const Field *f, char *buf, size_t n);
/* Parses typed text into the value; the value is untouched on error, and
 * the message begins with the field's label. A size or rate with a `zero`
 * takes "auto" (or that text) back to 0; a float with one, that text. */
int field_parse(const Field *f, const char *text, Error *e);
/* One step up (dir > 0) or down; choices wrap around. */
void field_step(const Field *f, int dir);
/* The value as text that field_load reads back to the same value, for a
 * saved lab state: exact bytes ("21474836480 B"), plain token counts, a
 * float's shortest exact digits, a choice's name, "on" or "off". */
const char *field_save_text(const Field *f, char *buf, size_t n);
/* Reads field_save_text's form (or anything field_parse takes, and for a
 * choice its name, for a toggle on or off) into the value; untouched on
 * error. */
int field_load(const Field *f, const char *text, Error *e);
/* Whether typing a digit starts editing this field. */
bool field_typeable(const Field *f);

#endif
