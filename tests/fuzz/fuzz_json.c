/* fuzz_json.c - the JSON document reader under every loader
 * (jsondoc_parse): the position it records for each value, which every
 * error message and every exact number (jsonfile.h) is read from. */
#include "fuzz.h"

#include "jsonfile.h"

#include <math.h>

/* The first character at each value's position is the one its type starts
 * with, a member's key starts with its quote, and a number's text there is
 * the number cJSON read. */
static void check_item(const JsonDoc *d, const cJSON *item)
{
    size_t n = 0;
    for (size_t i = 0; i < d->npos; i++)
        if (d->pos[i].item == item) {
            const JsonPos *p = &d->pos[i];
            n++;
            FUZZ_CHECK(p->offset < d->len, "position %zu past the end", p->offset);
            char c = d->text[p->offset];
            if (cJSON_IsObject(item))
                FUZZ_CHECK(c == '{', "object at '%c'", c);
            else if (cJSON_IsArray(item))
                FUZZ_CHECK(c == '[', "array at '%c'", c);
            else if (cJSON_IsString(item))
                FUZZ_CHECK(c == '"', "string at '%c'", c);
            else if (cJSON_IsTrue(item) || cJSON_IsFalse(item) || cJSON_IsNull(item))
                FUZZ_CHECK(c == (cJSON_IsTrue(item) ? 't' : cJSON_IsFalse(item) ? 'f' : 'n'),
                           "literal at '%c'", c);
            if (cJSON_IsNumber(item)) {
                /* The nearest float, which cJSON's double may miss by a
                 * rounding: within one float step of it (normal range). */
                float f;
                double v = item->valuedouble, a = fabs(v);
                bool in_range = json_number_float(d, item, &f);
                FUZZ_CHECK(c == '-' || (c >= '0' && c <= '9'), "number at '%c'", c);
                FUZZ_CHECK(a > 3.40e38 || in_range, "%g refused as beyond float range", v);
                FUZZ_CHECK(a < 3.41e38 || !in_range, "%g read as a float", v);
                FUZZ_CHECK(!in_range || a < 0x1p-126 || fabs(f - v) <= a * 0x1p-23,
                           "number read as %.9g, cJSON read %.17g", (double)f, v);
                /* A whole number is the one cJSON's double rounds. */
                uint64_t u;
                FUZZ_CHECK(!json_number_whole(d, item, 0, UINT64_MAX, &u) ||
                               fabs((double)u - v) <= a * 0x1p-52,
                           "whole number read as %llu, cJSON read %.17g", (unsigned long long)u, v);
            }
            if (item->string)
                FUZZ_CHECK(p->key_offset < p->offset && d->text[p->key_offset] == '"',
                           "key at %zu", p->key_offset);
        }
    FUZZ_CHECK(n == 1, "%zu positions for one value", n);
    for (const cJSON *c = item->child; c; c = c->next)
        check_item(d, c);
}

FUZZ_TARGET(json)
{
    char *text = fuzz_exact(data, size);
    JsonDoc d;
    Error e;
    if (jsondoc_parse(&d, "fuzz.json", text, size, &e)) {
        fuzz_check_file_error(&e, "fuzz.json", text, size);
    } else {
        FUZZ_CHECK(d.len == size && memcmp(d.text, text, size) == 0 && d.text[size] == '\0',
                   "text not kept as given");
        check_item(&d, d.root);
        jsondoc_done(&d);
    }
    free(text);
    return 0;
}
