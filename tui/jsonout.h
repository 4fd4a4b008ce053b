/* jsonout.h - the JSON the commands print with --json (report.c's and
 * theirs): integers are written exactly (as raw text), fractions as
 * doubles, and the text printed so that a terminal can take it
 * (text_put_json). */
#ifndef KVLAB_JSONOUT_H
#define KVLAB_JSONOUT_H

#include "checked.h"
#include "error.h"

#include <cjson/cJSON.h>

void json_add_u128(cJSON *obj, const char *name, u128 v);
void json_add_q(cJSON *obj, const char *name, Q q);
/* Prints the object on stdout with a newline and frees it; -1 with a
 * run-time error where it cannot be printed (out of memory). */
int json_emit(cJSON *root, Error *e);

#endif
