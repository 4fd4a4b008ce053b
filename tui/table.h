/* table.h - aligned text tables, for the command line and the lab alike.
 *
 * Add cells row by row, then print. A table holds any number of rows and
 * cells of any length. What the lab's tables need (at
 * most TABLE_ROWS rows and TABLE_TEXT bytes of text: the formats, a
 * scenario's figures with their longest labels escaped) it keeps in itself,
 * so that a table in a screen's state or a static, rebuilt again and again,
 * allocates nothing, and a copy of it (made to drop a column from) is a
 * table of its own that reads the same text. Beyond that it grows on the
 * heap, which table_free gives back: the command line's tables, whose rows
 * come from the data, end with it. The lab reads its cells as t->cell;
 * rows past TABLE_ROWS are read with table_at.
 */
#ifndef KVLAB_TABLE_H
#define KVLAB_TABLE_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TABLE_COLS 16
#define TABLE_ROWS 64
#define TABLE_TEXT 65536
/* A buffer for one cell's text, formatted before table_cell (a figure's
 * value): cells themselves have no limit. */
#define TABLE_CELL 80

typedef struct TableChunk TableChunk;

typedef struct {
    size_t cols, rows;
    size_t keys;                        // the leading columns every part of a table printed in
                                        // parts repeats (table_init: 1, the first)
    size_t col;                         // next cell of the current row
    bool lost;                          // a row or cell could not be stored: out of memory
    char *cell[TABLE_ROWS][TABLE_COLS]; // the first TABLE_ROWS rows: each cell's text
    char *(*more)[TABLE_COLS];          // (more_cap, cols) the rows past them, on the heap
    size_t more_cap;
    size_t used;                        // bytes of `text` taken
    char text[TABLE_TEXT];              // the cells' text, while it fits
    TableChunk *chunks;                 // the text beyond, on the heap
} Table;

/* Starts t empty, whatever its memory held (a table that grew onto the
 * heap is table_free'd first). */
void table_init(Table *t, size_t cols);
/* table_init with a header row: the column names, then NULL; as many
 * columns as names. */
void table_header(Table *t, const char *name, ...) __attribute__((sentinel));
/* Starts a row; then table_cell per column. */
void table_row(Table *t);
/* The cell's text goes through text_escape. */
void table_cell(Table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Cell (r, c)'s text, for every row. */
const char *table_at(const Table *t, size_t r, size_t c);
/* Numeric columns right-aligned, words left-aligned, a rule under row 0;
 * as wide as the cells need, or laid out to the width table_print_limit
 * set. */
void table_print(const Table *t, FILE *out);
/* The same within width columns (0: no limit): a table wider than that has
 * its cells wrapped at spaces, every column at least as wide as its widest
 * word and a numeric column as its widest number (a number is never cut),
 * and rows of more than one line are set apart by a blank line. */
void table_print_width(const Table *t, FILE *out, int width);
/* The width table_print lays every table out to from now on, for a
 * command whose output goes into a page of that width; 0 (the start):
 * none. */
void table_print_limit(int width);
void table_csv(const Table *t, FILE *out);
/* 0, or -1 with a run-time error when a row or cell could not be stored
 * (out of memory): for a command to check before it prints. */
int table_check(const Table *t, Error *e);
/* Gives back what t took from the heap; t is then empty. */
void table_free(Table *t);
/* A lab table cell without its leading colour marker ('!', '~', '+',
 * tui/lab/widget.h), which is not shown. */
const char *cell_text(const char *s);
/* Columns of a lab table cell as shown. */
size_t cell_columns(const char *s);

/* Columns a table needs in the lab: cell_columns, two spaces between. */
int table_width(const Table *t);
/* Removes the column whose header is `name`; false if there is none. */
bool table_drop_column(Table *t, const char *name);

#endif
