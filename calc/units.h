/* units.h - sizes, rates and context lengths as people write them.
 *
 * Parsing and printing never touch the C locale: "21.47GB" means the same in
 * every country, and a decimal point is always '.'. Parsed values are exact
 * integers (bytes, bytes per second, tokens); decimal fractions of a unit are
 * converted exactly and only a fraction of a byte is dropped.
 *
 *   size     20GiB, 20 GiB, 21.47GB, 512MiB, 4096 (plain bytes), 1.5TB
 *   rate     3.35TB/s, 3352GB/s, 900 GiB/s (a unit is required)
 *   context  8192, 8k, 128K, 1M (k = 1024 tokens, M = 1048576)
 *
 * Unit prefixes are matched without regard to case (gib = GiB), but a
 * lowercase final b means bits and is refused: 3.35Tb/s is not 3.35TB/s.
 * Numbers may carry an exponent (1e9, 2.5E-3), as JSON writes them, and
 * are read exactly however many zeros they carry (2000e-3GiB is 2 GiB; up
 * to 38 significant digits); only a result that does not fit is refused
 * as an overflow. A fraction of a byte is refused for plain bytes and
 * dropped for larger units (0.1GiB is 107,374,182 bytes). Decimal units
 * (KB, MB, GB, TB) are powers of 1000, binary ones (KiB ... TiB) powers of
 * 1024: the confusion between the two is one of the lab's lessons.
 *
 * Floats (a query, a scale, the lab's outlier scale) are read as C reads
 * them, in the C locale: the nearest float, not an exact value.
 */
#ifndef KVLAB_UNITS_H
#define KVLAB_UNITS_H

#include "checked.h"
#include "error.h"

#include <stdbool.h>
#include <stdint.h>

#define KIB ((u128)1 << 10)
#define MIB ((u128)1 << 20)
#define GIB ((u128)1 << 30)
#define TIB ((u128)1 << 40)
#define KB ((u128)1000u)
#define MB (KB * 1000u)
#define GB (MB * 1000u)
#define TB (GB * 1000u)
/* Contexts: k = 1024 tokens, M = 1024k. */
#define CONTEXT_K 1024u
#define CONTEXT_M (CONTEXT_K * CONTEXT_K)

/* Each returns 0, or -1 with a message naming the text and what was expected. */
int units_parse_size(const char *s, u128 *bytes, Error *e);
int units_parse_rate(const char *s, u128 *bytes_per_s, Error *e);
int units_parse_context(const char *s, uint64_t *tokens, Error *e);
/* Whether s is a plain number of bytes, written without a unit ("20"). */
bool units_size_is_bare(const char *s);
/* A whole number, at least min and at most max ("--batch", "--layers"). */
int units_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *v,
                      Error *e);
/* Splits s at its commas and hands each entry to item (with its index);
 * refuses an empty entry, one too long for a number and more than max. */
int units_split_list(const char *s, size_t max, size_t *n,
                     int (*item)(const char *tok, size_t i, void *ctx, Error *e), void *ctx, Error *e);
/* A comma-separated list of at most max whole numbers, each read by fn
 * (units_parse_context for contexts); an empty entry or a value listed
 * twice is an error. */
int units_parse_u64s(const char *s, uint64_t *out, size_t max, size_t *n,
                     int (*fn)(const char *, uint64_t *, Error *), Error *e);
/* A decimal fraction in (0, 1] ("0.9"), kept exact as a Q. */
int units_parse_fraction(const char *s, Q *q, Error *e);

/* A float in decimal or C hex-float notation, "nan" or "inf", read in the
 * C locale whatever the user's; the whole text (bar surrounding blanks)
 * must be the number. */
bool units_parse_float(const char *s, float *out);
/* units_parse_float for a value kvlab computes with: nan, inf and numbers
 * beyond a float's range (1e39) are refused, each saying so. */
int units_parse_finite(const char *s, float *out, Error *e);

/* "16.000 GiB", "17.180 GB", "3.35 TB/s": fixed decimals, exact rounding. */
const char *units_gib(char *buf, size_t n, u128 bytes, int decimals);
const char *units_gb(char *buf, size_t n, u128 bytes, int decimals);
/* The largest binary unit that keeps the value >= 1: "512 MiB", "1.5 GiB". */
const char *units_size(char *buf, size_t n, u128 bytes);
/* The same in decimal units: "17.18 GB", "512 MB". */
const char *units_size_decimal(char *buf, size_t n, u128 bytes);
/* "3.352 TB/s" or "300 GB/s": decimal units, as vendors quote bandwidth. */
const char *units_rate(char *buf, size_t n, u128 bytes_per_s);
/* A measured rate with three significant digits, in the decimal unit that
 * puts it in [1, 1000): "27.0 MB/s", "433 MB/s", "1.23 TB/s"; "0 B/s" for
 * nothing and "? B/s" for what is not a rate (negative, NaN). */
const char *units_rate_measured(char *buf, size_t n, double bytes_per_s);
/* A context in tokens, grouped, with its "k" form (k = 1024 tokens)
 * beside it where that form is exact and cannot be misread: "131,072
 * (128k)", "8,193", and "128,000" alone (not "125k", which reads as
 * 125,000). */
const char *units_context(char *buf, size_t n, uint64_t tokens);
/* The same context in one word: its "k" form where units_context shows
 * one ("128k"), else the grouped number ("128,000"). */
const char *units_context_short(char *buf, size_t n, uint64_t tokens);

#endif
