/* ascii.h - character tests that ignore the user's locale.
 *
 * <ctype.h> and strcasecmp follow LC_CTYPE (a Turkish locale lower-cases 'I'
 * differently); names, units and JSON keys here are plain ASCII. */
#ifndef KVLAB_ASCII_H
#define KVLAB_ASCII_H

#include <stdbool.h>

static inline int ascii_lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

static inline bool ascii_isspace(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static inline bool ascii_ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (ascii_lower((unsigned char)*a) != ascii_lower((unsigned char)*b))
            return false;
    return *a == *b;
}

#endif
