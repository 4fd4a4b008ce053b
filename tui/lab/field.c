/* field.c - see field.h. */
#include "field.h"

#include "tui/text.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *field_text(const Field *f, char *buf, size_t n)
{
    switch (f->kind) {
    case FK_CONTEXT:
        return units_context(buf, n, *(uint64_t *)f->value);
    case FK_COUNT:
    case FK_POW2:
        snprintf(buf, n, "%llu", (unsigned long long)*(uint64_t *)f->value);
        return buf;
    case FK_SIZE:
        if (!*(u128 *)f->value && f->zero)
            snprintf(buf, n, "%s", f->zero);
        else
            units_size(buf, n, *(u128 *)f->value);
        return buf;
    case FK_RATE:
        if (!*(u128 *)f->value && f->zero)
            snprintf(buf, n, "%s", f->zero);
        else
            units_rate(buf, n, *(u128 *)f->value);
        return buf;
    case FK_CHOICE:             // names of files: escaped, as all text the lab draws
        return text_escape(buf, n, f->choices[*(int *)f->value], false);
    case FK_TOGGLE:
        snprintf(buf, n, "%s", *(bool *)f->value ? "on" : "off");
        return buf;
    case FK_FLOAT:
        snprintf(buf, n, "%g", (double)*(float *)f->value);
        return buf;
    }
    return buf;
}

bool field_typeable(const Field *f)
{
    return f->kind != FK_CHOICE && f->kind != FK_TOGGLE;
}

/* field_parse without the label in front of its message. */
static int field_parse_value(const Field *f, const char *text, Error *e)
{
    uint64_t u;
    u128 b;
    float x;
    /* a size or rate with a default (from the GPU, the model's) takes it back */
    if ((f->kind == FK_SIZE || f->kind == FK_RATE) && f->zero &&
        (strcmp(text, "auto") == 0 || strcmp(text, f->zero) == 0)) {
        *(u128 *)f->value = 0;
        return 0;
    }
    switch (f->kind) {
    case FK_CONTEXT:
        if (units_parse_context(text, &u, e))
            return -1;
        if (u < f->min || u > f->max)
            return error_set(e, "from %llu to %llu tokens", (unsigned long long)f->min,
                             (unsigned long long)f->max);
        *(uint64_t *)f->value = u;
        return 0;
    case FK_COUNT:
    case FK_POW2:
        if (units_parse_count(text, f->min, f->max, &u, e))
            return -1;
        *(uint64_t *)f->value = u;
        return 0;
    case FK_SIZE:
        if (units_parse_size(text, &b, e))
            return -1;
        *(u128 *)f->value = b;
        return 0;
    case FK_RATE:
        if (units_parse_rate(text, &b, e))
            return -1;
        *(u128 *)f->value = b;
        return 0;
    case FK_FLOAT:
        if (!units_parse_float(text, &x) || !isfinite(x) || x < (float)f->min || x > (float)f->max)
            return error_set(e, "expected a number from %llu to %llu", (unsigned long long)f->min,
                             (unsigned long long)f->max);
        *(float *)f->value = x;
        return 0;
    default:
        return error_set(e, "choose with + and -");
    }
}

int field_parse(const Field *f, const char *text, Error *e)
{
    if (field_parse_value(f, text, e))
        return error_prefix(e, "%s", f->label);
    return 0;
}

void field_step(const Field *f, int dir)
{
    uint64_t *u = f->value;
    u128 *b = f->value;
    switch (f->kind) {
    case FK_CONTEXT:
    case FK_POW2:
        if (dir > 0 && *u <= f->max / 2)
            *u *= 2;
        else if (dir < 0 && *u / 2 >= f->min && *u >= 2)
            *u /= 2;
        break;
    case FK_COUNT: {
        uint64_t s = f->step ? (uint64_t)f->step : 1;
        if (dir > 0 && *u + s <= f->max)
            *u += s;
        else if (dir < 0 && *u >= f->min + s)
            *u -= s;
        break;
    }
    case FK_SIZE:
    case FK_RATE:
        if (dir > 0)
            *b += f->step;
        else if (*b > f->step)
            *b -= f->step;
        break;
    case FK_CHOICE: {
        int *i = f->value, n = (int)f->max;
        *i = (*i + (dir > 0 ? 1 : n - 1)) % n;
        break;
    }
    case FK_TOGGLE:
        *(bool *)f->value = !*(bool *)f->value;
        break;
    case FK_FLOAT: {
        float *x = f->value;
        float nx = dir > 0 ? *x * 1.25f : *x / 1.25f;
        if (nx >= (float)f->min && nx <= (float)f->max)
            *x = nx;
        break;
    }
    }
}
