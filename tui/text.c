/* text.c - see text.h. */
#include "text.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The bytes and characters escaping looks at. */
enum {
    ASCII_ESC = 0x1B,       // the escape that starts a terminal's control sequences
    ASCII_SPACE = 0x20,     // the first printable ASCII character: below it, C0 controls
    ASCII_DEL = 0x7F,
    UTF8_C1_LEAD = 0xC2,    // U+0080 to U+009F, the C1 controls, are 0xC2 0x80 to 0xC2 0x9F
    UTF8_C1_END = 0xA0,
};

/* The longest escape of one character ("\u009b") and its NUL. */
#define ESCAPE_MAX 8

/* ------------------------------------------------------------------------
 * Characters
 */

/* Whether byte b continues a UTF-8 character (10xxxxxx) rather than starts one. */
static bool text_utf8_continues(unsigned char b)
{
    return (b & 0xC0) == 0x80;
}

/* The length of the UTF-8 character at s, or 0 when s does not start one
 * (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF,
 * or a sequence cut short). */
static size_t text_utf8_length(const unsigned char *s)
{
    /* Well-formed UTF-8 (Unicode's table 3-7): a lead byte's range, the
     * range of the byte after it, and the length of the character. */
    static const struct { unsigned char lo, hi, lo2, hi2; size_t len; } LEAD[] = {
        {0xC2, 0xDF, 0x80, 0xBF, 2}, {0xE0, 0xE0, 0xA0, 0xBF, 3}, {0xE1, 0xEC, 0x80, 0xBF, 3},
        {0xED, 0xED, 0x80, 0x9F, 3}, {0xEE, 0xEF, 0x80, 0xBF, 3}, {0xF0, 0xF0, 0x90, 0xBF, 4},
        {0xF1, 0xF3, 0x80, 0xBF, 4}, {0xF4, 0xF4, 0x80, 0x8F, 4},
    };
    if (s[0] < 0x80)        // ASCII
        return 1;
    for (size_t i = 0; i < sizeof LEAD / sizeof LEAD[0]; i++) {
        if (s[0] < LEAD[i].lo || s[0] > LEAD[i].hi)
            continue;
        if (s[1] < LEAD[i].lo2 || s[1] > LEAD[i].hi2)
            return 0;
        for (size_t k = 2; k < LEAD[i].len; k++)
            if (!text_utf8_continues(s[k]))
                return 0;
        return LEAD[i].len;
    }
    return 0;
}

/* Whether the character at p, len bytes long, is a C1 control. */
static bool text_is_c1(const unsigned char *p, size_t len)
{
    return len == 2 && p[0] == UTF8_C1_LEAD && p[1] < UTF8_C1_END;
}

/* ------------------------------------------------------------------------
 * Text for a terminal
 */

/* The next character of *s as it may be shown: itself, or an escape for a
 * control character (C0, DEL, C1) or a byte that is not UTF-8. Writes it
 * to out (at most ESCAPE_MAX bytes, its NUL included), advances *s and
 * returns its length. */
static size_t text_escape_next(const char **s, char out[ESCAPE_MAX], bool keep_newlines)
{
    static const char NAMED[][3] = {['\n'] = "\\n", ['\r'] = "\\r", ['\t'] = "\\t", [ASCII_ESC] = "\\e"};
    const unsigned char *p = (const unsigned char *)*s;
    size_t len = text_utf8_length(p);
    if (len == 1 && p[0] >= ASCII_SPACE && p[0] != ASCII_DEL) {
        out[0] = (char)p[0];
        out[1] = '\0';
    } else if (len == 1 && p[0] == '\n' && keep_newlines) {
        strcpy(out, "\n");
    } else if (len == 1 && p[0] < sizeof NAMED / sizeof NAMED[0] && NAMED[p[0]][0]) {
        strcpy(out, NAMED[p[0]]);
    } else if (text_is_c1(p, len)) {
        snprintf(out, ESCAPE_MAX, "\\u%04x", p[1]);
    } else if (len == 0 || len == 1) {
        snprintf(out, ESCAPE_MAX, "\\x%02x", p[0]);
        len = 1;
    } else {
        memcpy(out, p, len);
        out[len] = '\0';
    }
    *s += len;
    return strlen(out);
}

char *text_escape(char *dst, size_t n, const char *src, bool keep_newlines)
{
    size_t used = 0;
    char one[ESCAPE_MAX];
    while (*src && n) {
        size_t k = text_escape_next(&src, one, keep_newlines);
        if (used + k >= n)
            break;
        memcpy(dst + used, one, k);
        used += k;
    }
    if (n)
        dst[used] = '\0';
    return dst;
}

bool text_safe(const char *s)
{
    char one[ESCAPE_MAX];
    while (*s) {
        const char *at = s;
        size_t k = text_escape_next(&s, one, false);
        if (k != (size_t)(s - at) || memcmp(one, at, k) != 0)
            return false;
    }
    return true;
}

void text_put(FILE *out, const char *s, bool keep_newlines)
{
    char one[ESCAPE_MAX];
    while (*s) {
        text_escape_next(&s, one, keep_newlines);
        fputs(one, out);
    }
}

size_t text_escaped_size(const char *s)
{
    size_t n = 1;
    char one[ESCAPE_MAX];
    while (*s)
        n += text_escape_next(&s, one, false);
    return n;
}

size_t text_columns(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += !text_utf8_continues((unsigned char)*s);
    return w;
}

/* ------------------------------------------------------------------------
 * JSON for a terminal
 */

/* JSON text as cJSON printed it, with what a terminal must not get raw
 * escaped too (cJSON escapes only the C0 controls): DEL and the C1 controls
 * (U+0080 to U+009F) as \u007f ... \u009f, the same characters; a byte that
 * is not UTF-8 as \ufffd, the replacement character, as JSON text must be
 * UTF-8. Outside its strings JSON is ASCII, so every such byte is in one. */
void text_put_json(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t len = text_utf8_length(p);
        if (len == 1 && *p == ASCII_DEL)
            fputs("\\u007f", out);
        else if (text_is_c1(p, len))
            fprintf(out, "\\u%04x", p[1]);
        else if (len == 0)
            fputs("\\ufffd", out);
        else
            fwrite(p, 1, len, out);
        p += len ? len : 1;
    }
    fputc('\n', out);
}

/* ------------------------------------------------------------------------
 * Wrapping.
 */
#define TEXT_LINE_MAX 8192

int text_width(void)
{
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    const char *c = getenv("COLUMNS");
    int w = c ? atoi(c) : 0;
    return w >= 20 && w <= 1000 ? w : 80;
}

static void text_put_bytes(FILE *out, const char *s, size_t n)
{
    char tmp[TEXT_LINE_MAX];
    snprintf(tmp, sizeof tmp, "%.*s", (int)n, s);
    text_put(out, tmp, false);
}

/* Columns of the n bytes at s (UTF-8: one per character). */
static size_t text_cols(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

void text_wrap(FILE *out, const char *first, const char *rest, const char *text, int width)
{
    const char *prefix = first;
    const char *s = text;
    for (;;) {
        /* One hard line at a time. */
        const char *nl = strchr(s, '\n');
        size_t hard = nl ? (size_t)(nl - s) : strlen(s);
        const char *p = s, *end = s + hard;
        do {
            size_t room = (size_t)width > text_columns(prefix) + 10 ? (size_t)width - text_columns(prefix) : 10;
            while (p < end && *p == ' ')
                p++;
            const char *cut = p, *q = p;
            while (q < end) {
                const char *w = q;
                while (w < end && *w != ' ')
                    w++;
                if (text_cols(p, (size_t)(w - p)) > room && cut > p)
                    break;
                cut = w;
                q = w;
                while (q < end && *q == ' ')
                    q++;
            }
            fputs(prefix, out);
            text_put_bytes(out, p, (size_t)(cut - p));
            fputc('\n', out);
            prefix = rest;
            p = cut;
            while (p < end && *p == ' ')
                p++;
        } while (p < end);
        if (!nl)
            return;
        s = nl + 1;
    }
}


void text_list_row(FILE *out, const char *const *cells, const size_t *cols, size_t n, int width)
{
    char prefix[TEXT_LINE_MAX], rest[TEXT_LINE_MAX];
    size_t len = 0;
    prefix[0] = '\0';
    for (size_t i = 0; i + 1 < n && len < sizeof prefix; i++) {
        char cell[TEXT_LINE_MAX];
        text_escape(cell, sizeof cell, cells[i], false);
        size_t c = text_columns(cell);
        int pad = (int)(cols[i] + 2 - (c < cols[i] ? c : cols[i]));
        len += (size_t)snprintf(prefix + len, sizeof prefix - len, "%s%*s", cell, pad, "");
    }
    size_t indent = text_columns(prefix);
    snprintf(rest, sizeof rest, "%*s", (int)(indent < sizeof rest ? indent : 0), "");
    text_wrap(out, prefix, rest, n ? cells[n - 1] : "", width);
}

void text_list_rule(FILE *out, size_t columns, int width)
{
    for (size_t i = 0; i < columns && i < (size_t)width; i++)
        fputc('-', out);
    fputc('\n', out);
}
