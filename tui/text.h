/* text.h - text that reaches a terminal, from the command line and the lab
 * alike.
 *
 * Arguments and data files may hold control characters (a newline in a
 * title, ESC sequences that retitle the window or move the cursor). Every
 * message, table cell, text output and string the lab draws goes through
 * this one escaping: C0 and C1 control characters and DEL become visible
 * escapes (\n, \t, \r, \e, \x07, \u009b), as do bytes that are not UTF-8
 * (\xff); everything else is kept. keep_newlines keeps '\n' in text of
 * several lines (a scenario's story). JSON output escapes the same
 * characters its own way (text_put_json).
 */
#ifndef KVLAB_TEXT_H
#define KVLAB_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Into dst (n bytes, NUL included), cut at a character or escape boundary
 * when it does not fit; returns dst. */
char *text_escape(char *dst, size_t n, const char *src, bool keep_newlines);
/* The same, written to out whatever its length. */
void text_put(FILE *out, const char *s, bool keep_newlines);
/* Whether s is as text_escape leaves it (no newline kept): nothing in it
 * to escape. */
bool text_safe(const char *s);
/* The bytes text_escape writes for s (no newline kept), its NUL included. */
size_t text_escaped_size(const char *s);

/* A macro's value as a string literal, for a help text that quotes a
 * constant: "(default " TEXT_OF(KVGEN_TOKENS_DEFAULT) ")" is "(default 256)". */
#define TEXT_OF_(x) #x
#define TEXT_OF(x) TEXT_OF_(x)

/* Terminal columns of a UTF-8 string (every glyph kvlab uses is one
 * column wide). */
size_t text_columns(const char *s);

/* JSON text as cJSON prints it, to out with a newline, with DEL, the C1
 * controls and bytes that are not UTF-8 escaped as JSON escapes them
 * (\u007f, \u009b, \ufffd). */
void text_put_json(FILE *out, const char *json);

/* The width text is wrapped to: the terminal's where stdout is one, else
 * $COLUMNS, else 80. */
int text_width(void);
/* text wrapped at spaces to width columns, escaped as text_put does, the
 * first line after `first`, the others after `rest` (both counted in the
 * width); a '\n' in text is a line break. */
void text_wrap(FILE *out, const char *first, const char *rest, const char *text, int width);

/* A row of a list that fits the width: the cells but the last padded to
 * their columns' widths (cols) and two spaces, the last cell wrapped
 * under its own column. */
void text_list_row(FILE *out, const char *const *cells, const size_t *cols, size_t n, int width);
/* The rule under a list's head: columns dashes, at most width. */
void text_list_rule(FILE *out, size_t columns, int width);

#endif
