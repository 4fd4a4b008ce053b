/* field.c - see field.h. */
#include "field.h"

#include "tui/text.h"
#include "units.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A list of contexts joined by commas, each as `one` writes it; `zero` when
 * empty. */
static const char *field_contexts_text(const Field *f, char *buf, size_t n,
                                       const char *(*one)(char *, size_t, uint64_t))
{
    const FieldContexts *l = f->value;
    size_t len = 0;
    buf[0] = '\0';
    if (!l->n)
        snprintf(buf, n, "%s", f->zero ? f->zero : "");
    for (size_t i = 0; i < l->n && len < n; i++) {
        char a[64];
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "", one(a, sizeof a, l->tokens[i]));
    }
    return buf;
}

/* A token count as plain digits, which reads back exactly. */
static const char *field_tokens(char *buf, size_t n, uint64_t tokens)
{
    snprintf(buf, n, "%llu", (unsigned long long)tokens);
    return buf;
}

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
        if (!*(float *)f->value && f->zero)
            snprintf(buf, n, "%s", f->zero);
        else
            snprintf(buf, n, "%g", (double)*(float *)f->value);
        return buf;
    case FK_CONTEXTS:
        return field_contexts_text(f, buf, n, units_context_short);
    }
    return buf;
}

/* A size or rate as text that reads back exactly: as the lab shows it
 * ("20 GiB", "16.06 GB", "3.352 TB/s") where that is exact, else in bytes;
 * "auto" for 0, which field_parse takes back to the default. */
static const char *field_save_bytes(const Field *f, char *buf, size_t n)
{
    const u128 v = *(u128 *)f->value;
    const bool size = f->kind == FK_SIZE;
    char a[48];
    if (!v) {
        snprintf(buf, n, "auto");
        return buf;
    }
    const char *shown[] = {size ? units_size(a, sizeof a, v) : units_rate(a, sizeof a, v), NULL};
    char b[48];
    if (size)
        shown[1] = units_size_decimal(b, sizeof b, v);
    for (size_t i = 0; i < 2 && shown[i]; i++) {
        u128 back;
        Error e;
        if ((size ? units_parse_size(shown[i], &back, &e) : units_parse_rate(shown[i], &back, &e)) == 0 &&
            back == v) {
            snprintf(buf, n, "%s", shown[i]);
            return buf;
        }
    }
    snprintf(buf, n, "%s %s", u128_str(a, sizeof a, v, false), size ? "B" : "B/s");
    return buf;
}

const char *field_save_text(const Field *f, char *buf, size_t n)
{
    switch (f->kind) {
    case FK_CONTEXT:
    case FK_COUNT:
    case FK_POW2:
        snprintf(buf, n, "%llu", (unsigned long long)*(uint64_t *)f->value);
        return buf;
    case FK_SIZE:
    case FK_RATE:
        return field_save_bytes(f, buf, n);
    case FK_CHOICE:
        snprintf(buf, n, "%s", f->choices[*(int *)f->value]);
        return buf;
    case FK_FLOAT: {
        const float x = *(float *)f->value;      // the fewest digits that read back as x (9 always do)
        for (int digits = FLT_DIG; digits <= FLT_DECIMAL_DIG; digits++) {
            snprintf(buf, n, "%.*g", digits, (double)x);
            float back;
            if (units_parse_float(buf, &back) && back == x)
                break;
        }
        return buf;
    }
    case FK_CONTEXTS:
        if (!((const FieldContexts *)f->value)->n) {
            snprintf(buf, n, "auto");
            return buf;
        }
        return field_contexts_text(f, buf, n, field_tokens);
    case FK_TOGGLE:
        break;
    }
    return field_text(f, buf, n);
}

int field_load(const Field *f, const char *text, Error *e)
{
    if (f->kind == FK_TOGGLE) {
        if (strcmp(text, "on") && strcmp(text, "off"))
            return error_set(e, "%s: '%s' is neither on nor off", f->label, text);
        *(bool *)f->value = strcmp(text, "on") == 0;
        return 0;
    }
    if (f->kind != FK_CHOICE)
        return field_parse(f, text, e);
    for (uint64_t i = 0; i < f->max; i++)
        if (strcmp(text, f->choices[i]) == 0) {
            *(int *)f->value = (int)i;
            return 0;
        }
    error_set(e, "%s: no choice '%s'; expected one of", f->label, text);
    size_t len = strlen(e->msg);
    for (uint64_t i = 0; i < f->max && len < sizeof e->msg; i++)
        len += (size_t)snprintf(e->msg + len, sizeof e->msg - len, " %s", f->choices[i]);
    return -1;
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
    if (f->kind == FK_FLOAT && f->zero && strcmp(text, f->zero) == 0) {
        *(float *)f->value = 0;
        return 0;
    }
    if (f->kind == FK_CONTEXTS && (strcmp(text, "auto") == 0 || (f->zero && strcmp(text, f->zero) == 0))) {
        ((FieldContexts *)f->value)->n = 0;
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
    case FK_CONTEXTS: {
        FieldContexts l;
        if (units_parse_u64s(text, l.tokens, FIELD_CONTEXTS_MAX, &l.n, units_parse_context, e))
            return -1;
        for (size_t i = 0; i < l.n; i++)
            if (l.tokens[i] < f->min || l.tokens[i] > f->max)
                return error_set(e, "each from %llu to %llu tokens", (unsigned long long)f->min,
                                 (unsigned long long)f->max);
        *(FieldContexts *)f->value = l;
        return 0;
    }
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
    case FK_CONTEXTS:           // a list has no next value: it is typed
        break;
    }
}
