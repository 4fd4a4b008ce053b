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

void table_print(const Table *t, FILE *out)
{
    size_t width[TABLE_COLS] = {0};
    bool right[TABLE_COLS] = {0};
    for (size_t c = 0; c < t->cols; c++)
        right[c] = c > 0 && table_numeric_column(t, c);
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < t->cols; c++) {
            size_t w = text_columns(table_at(t, r, c));
            if (w > width[c])
                width[c] = w;
        }
    for (size_t r = 0; r < t->rows; r++) {
        size_t blanks = 0;                      // written before the next text, so none trail
        for (size_t c = 0; c < t->cols; c++) {
            const char *s = table_at(t, r, c);
            size_t pad = width[c] - text_columns(s);
            blanks += (c ? 2 : 0) + (right[c] ? pad : 0);
            if (*s) {
                fprintf(out, "%*s%s", (int)blanks, "", s);
                blanks = 0;
            }
            blanks += right[c] ? 0 : pad;
        }
        fputc('\n', out);
        if (r == 0) {
            size_t total = 0;
            for (size_t c = 0; c < t->cols; c++)
                total += width[c] + (c ? 2 : 0);
            for (size_t k = 0; k < total; k++)
                fputc('-', out);
            fputc('\n', out);
        }
    }
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
