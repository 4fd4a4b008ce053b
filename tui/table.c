/* table.c - see table.h. */
#include "table.h"

#include "text.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Text beyond what a Table holds itself: chunks on the heap, newest first. */
struct TableChunk {
    TableChunk *next;
    size_t size, used;
    char text[];
};

#define TABLE_CHUNK 65536

void table_init(Table *t, size_t cols)
{
    t->cols = cols < TABLE_COLS ? cols : TABLE_COLS;
    t->keys = 1;
    t->rows = t->col = t->used = t->more_cap = 0;
    t->lost = false;
    t->more = NULL;
    t->chunks = NULL;
}

void table_free(Table *t)
{
    while (t->chunks) {
        TableChunk *c = t->chunks;
        t->chunks = c->next;
        free(c);
    }
    free(t->more);
    table_init(t, t->cols);
}

int table_check(const Table *t, Error *e)
{
    return t->lost ? error_runtime(e, "out of memory for a table of %zu rows", t->rows) : 0;
}

/* Row r's cells, in the table or past it on the heap. */
static char **table_row_cells(const Table *t, size_t r)
{
    return r < TABLE_ROWS ? (char **)t->cell[r] : t->more[r - TABLE_ROWS];
}

const char *table_at(const Table *t, size_t r, size_t c)
{
    return table_row_cells(t, r)[c];
}

void table_header(Table *t, const char *name, ...)
{
    table_init(t, TABLE_COLS);
    table_row(t);
    va_list ap;
    va_start(ap, name);
    for (; name; name = va_arg(ap, const char *))
        table_cell(t, "%s", name);
    va_end(ap);
    t->cols = t->col;
}

void table_row(Table *t)
{
    t->col = 0;
    if (t->rows >= TABLE_ROWS && t->rows - TABLE_ROWS == t->more_cap) {   // twice the rows past, on the heap
        size_t cap = t->more_cap ? 2 * t->more_cap : TABLE_ROWS;
        char *(*more)[TABLE_COLS] = realloc(t->more, cap * sizeof *more);
        if (!more) {
            t->lost = true;
            t->col = t->cols;           // the row's cells go nowhere
            return;
        }
        t->more = more;
        t->more_cap = cap;
    }
    static char empty[] = "";
    char **row = table_row_cells(t, t->rows++);
    for (size_t c = 0; c < TABLE_COLS; c++)
        row[c] = empty;
}

/* n bytes for a cell's text: in the table while it has room, else in a
 * chunk; NULL when out of memory. */
static char *table_text(Table *t, size_t n)
{
    if (t->used + n <= TABLE_TEXT) {
        t->used += n;
        return t->text + t->used - n;
    }
    TableChunk *c = t->chunks;
    if (!c || c->size - c->used < n) {
        size_t size = n > TABLE_CHUNK ? n : TABLE_CHUNK;
        if (!(c = malloc(sizeof *c + size)))
            return NULL;
        *c = (TableChunk){t->chunks, size, 0};
        t->chunks = c;
    }
    c->used += n;
    return c->text + c->used - n;
}

void table_cell(Table *t, const char *fmt, ...)
{
    if (!t->rows || t->col >= t->cols)
        return;
    char small[256], *raw = small;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int len = vsnprintf(small, sizeof small, fmt, ap);
    if (len >= (int)sizeof small && (raw = malloc((size_t)len + 1)))
        vsnprintf(raw, (size_t)len + 1, fmt, again);
    va_end(again);
    va_end(ap);
    size_t n = raw ? text_escaped_size(raw) : 0;
    char *dst = raw ? table_text(t, n) : NULL;
    if (dst)
        table_row_cells(t, t->rows - 1)[t->col] = text_escape(dst, n, raw, false);
    else
        t->lost = true;
    t->col++;
    if (raw != small)
        free(raw);
}

const char *cell_text(const char *s)
{
    return *s == '!' || *s == '~' || *s == '+' ? s + 1 : s;
}

size_t cell_columns(const char *s)
{
    return text_columns(cell_text(s));
}

/* A column of numbers reads best right-aligned, a column of words left. */
static bool table_numeric_column(const Table *t, size_t c)
{
    for (size_t r = 1; r < t->rows; r++) {
        const char *s = table_at(t, r, c);
        if ((*s == '-' || *s == '+') && s[1] >= '0' && s[1] <= '9')
            s++;
        if (!(*s >= '0' && *s <= '9') && strcmp(s, "-") != 0 && strcmp(s, "never") != 0 && *s)
            return false;
    }
    return true;
}

/* The width table_print lays tables out to; 0: as wide as they need. */
static int table_limit;

void table_print_limit(int width)
{
    table_limit = width > 0 ? width : 0;
}

/* Columns of the n bytes at s (UTF-8: one per character). */
static size_t table_cols(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* The widest word of s, in columns. */
static size_t table_widest_word(const char *s)
{
    size_t widest = 0;
    while (*s) {
        size_t n = strcspn(s, " ");
        size_t w = table_cols(s, n);
        widest = w > widest ? w : widest;
        s += n + strspn(s + n, " ");
    }
    return widest;
}

/* The next line of a cell wrapped to width columns, from *s on: as many
 * whole words as fit (a word wider than the column alone on its line, cut
 * at the width); *s moves past it. Its bytes in *n. */
static const char *table_next_line(const char **s, size_t width, size_t *n)
{
    size_t whole = strlen(*s);
    if (table_cols(*s, whole) <= width) {       // the rest fits as it is, blanks and all
        const char *a = *s;
        *n = whole;
        *s += whole;
        return a;
    }
    const char *a = *s + strspn(*s, " ");
    size_t len = 0;
    while (a[len]) {
        size_t word = strcspn(a + len, " ");
        size_t end = len + word;
        if (len && table_cols(a, end) > width)
            break;
        len = end;
        if (table_cols(a, len) > width) {          // one word too wide: cut it
            len = 0;
            for (size_t cols = 0; a[len] && cols < width; cols++)
                do
                    len++;
                while (((unsigned char)a[len] & 0xC0) == 0x80);
            break;
        }
        size_t blanks = strspn(a + len, " ");
        if (!a[len + blanks])
            break;
        len += blanks;
    }
    while (len && a[len - 1] == ' ')
        len--;
    *n = len;
    *s = a + len;
    return a;
}

/* The columns' widths (of the n columns col[]) within limit (0: none):
 * each column as wide as its widest cell where that fits; else every
 * column at least its least width (least[]) and the room left given out,
 * first to make whole the columns that lack least (so that one long column
 * wraps rather than several short ones), then a column at a time to the
 * one that lacks the most. */
static void table_widths(const size_t *need, const size_t *least, size_t n, int limit, size_t *width)
{
    size_t total = 0, used = 0;
    for (size_t k = 0; k < n; k++)
        total += need[k] + (k ? 2 : 0), used += least[k] + (k ? 2 : 0);
    memcpy(width, !limit || total <= (size_t)limit ? need : least, n * sizeof *width);
    if (!limit || total <= (size_t)limit)
        return;
    for (bool grew = true; grew;) {
        size_t fit = n;
        for (size_t k = 0; k < n; k++)
            if (need[k] > width[k] && (fit == n || need[k] - width[k] < need[fit] - width[fit]))
                fit = k;
        grew = fit < n && used + need[fit] - width[fit] <= (size_t)limit;
        if (grew)
            used += need[fit] - width[fit], width[fit] = need[fit];
    }
    while (used < (size_t)limit) {
        size_t most = n;
        for (size_t k = 0; k < n; k++)
            if (need[k] > width[k] && (most == n || need[k] - width[k] > need[most] - width[most]))
                most = k;
        if (most == n)
            break;
        width[most]++, used++;
    }
}

/* The columns col[0 .. n) of t as one table within limit. */
static void table_print_part(const Table *t, FILE *out, const size_t *col, size_t n, const size_t *need,
                             const size_t *least, const size_t *words, const bool *right, int limit)
{
    size_t width[TABLE_COLS], nd[TABLE_COLS], ls[TABLE_COLS], sum = 0;
    for (size_t k = 0; k < n; k++)
        nd[k] = need[col[k]], ls[k] = least[col[k]], sum += ls[k] + (k ? 2 : 0);
    if (limit && sum > (size_t)limit)   // no room for whole numbers: wrap them too
        for (size_t k = 0; k < n; k++)
            ls[k] = words[col[k]];
    table_widths(nd, ls, n, limit, width);
    /* Rows that take more than one line are set apart by a blank line. */
    bool wrapped = false;
    for (size_t r = 1; r < t->rows && !wrapped; r++)
        for (size_t k = 0; k < n; k++)
            wrapped |= text_columns(table_at(t, r, col[k])) > width[k];
    for (size_t r = 0; r < t->rows; r++) {
        const char *rest[TABLE_COLS];
        bool more = true;
        for (size_t k = 0; k < n; k++)
            rest[k] = table_at(t, r, col[k]);
        if (wrapped && r > 1)
            fputc('\n', out);
        while (more) {
            size_t blanks = 0;                  // written before the next text, so none trail
            more = false;
            for (size_t k = 0; k < n; k++) {
                size_t len;
                const char *s = table_next_line(&rest[k], width[k], &len);
                size_t pad = width[k] - table_cols(s, len);
                bool r_align = right[col[k]];
                blanks += (k ? 2 : 0) + (r_align ? pad : 0);
                if (len) {
                    fprintf(out, "%*s%.*s", (int)blanks, "", (int)len, s);
                    blanks = 0;
                }
                blanks += r_align ? 0 : pad;
                more |= *(rest[k] + strspn(rest[k], " ")) != '\0';
            }
            fputc('\n', out);
        }
        if (r == 0) {
            size_t total = 0;
            for (size_t k = 0; k < n; k++)
                total += width[k] + (k ? 2 : 0);
            for (size_t i = 0; i < total; i++)
                fputc('-', out);
            fputc('\n', out);
        }
    }
}

void table_print(const Table *t, FILE *out)
{
    table_print_width(t, out, table_limit);
}

void table_print_width(const Table *t, FILE *out, int limit)
{
    /* need: a column's widest cell; words: its widest word; least: words,
     * or for a column of numbers its widest cell, so that a number stays
     * on one line with its unit while there is room for that (cells wrap
     * between words, and never cut a number). */
    size_t need[TABLE_COLS] = {0}, least[TABLE_COLS] = {0}, words[TABLE_COLS] = {0};
    bool right[TABLE_COLS] = {0};
    for (size_t c = 0; c < t->cols; c++) {
        right[c] = c > 0 && table_numeric_column(t, c);
        for (size_t r = 0; r < t->rows; r++) {
            const char *s = table_at(t, r, c);
            size_t n = text_columns(s), w = table_widest_word(s), l = right[c] && r > 0 ? n : w;
            need[c] = n > need[c] ? n : need[c];
            words[c] = w > words[c] ? w : words[c];
            least[c] = l > least[c] ? l : least[c];
        }
    }
    /* A table too wide even with its cells wrapped goes in parts, each as
     * many columns as fit beside the key columns (t->keys, at least the
     * first), which every part repeats. */
    const size_t keys = t->keys < 1 ? 1 : t->keys < t->cols ? t->keys : t->cols;
    size_t col[TABLE_COLS] = {0}, n = 0, used = 0, key_used;
    for (; n < keys; n++)
        col[n] = n, used += least[n] + (n ? 2 : 0);
    key_used = used;
    for (size_t c = keys; c < t->cols; c++) {
        if (limit && n > keys && used + 2 + least[c] > (size_t)limit) {
            table_print_part(t, out, col, n, need, least, words, right, limit);
            fputc('\n', out);
            n = keys, used = key_used;
        }
        col[n++] = c, used += 2 + least[c];
    }
    if (t->cols)
        table_print_part(t, out, col, n, need, least, words, right, limit);
}

int table_width(const Table *t)
{
    int total = 0;
    for (size_t c = 0; c < t->cols; c++) {
        size_t w = 0;
        for (size_t r = 0; r < t->rows; r++)
            if (cell_columns(table_at(t, r, c)) > w)
                w = cell_columns(table_at(t, r, c));
        total += (int)w + (c ? 2 : 0);
    }
    return total;
}

bool table_drop_column(Table *t, const char *name)
{
    for (size_t c = 0; c < t->cols; c++)
        if (t->rows && strcmp(table_at(t, 0, c), name) == 0) {
            for (size_t r = 0; r < t->rows; r++) {
                char **row = table_row_cells(t, r);
                memmove(&row[c], &row[c + 1], (t->cols - c - 1) * sizeof row[c]);
            }
            t->cols--;
            return true;
        }
    return false;
}

void table_csv(const Table *t, FILE *out)
{
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < t->cols; c++) {
            const char *s = table_at(t, r, c);
            bool quote = strpbrk(s, ",\"\n") != NULL;
            if (quote) {
                fputc('"', out);
                for (; *s; s++) {
                    if (*s == '"')
                        fputc('"', out);
                    fputc(*s, out);
                }
                fputc('"', out);
            } else {
                fputs(s, out);
            }
            fputc(c + 1 < t->cols ? ',' : '\n', out);
        }
}
