/* checked.c - see checked.h. */
#include "checked.h"

#include <string.h>

bool u128_add_ok(u128 a, u128 b, u128 *r)
{
    u128 s;
    if (__builtin_add_overflow(a, b, &s))
        return false;
    *r = s;
    return true;
}

bool u128_mul_ok(u128 a, u128 b, u128 *r)
{
    u128 p;
    if (__builtin_mul_overflow(a, b, &p))
        return false;
    *r = p;
    return true;
}

u128 checked_mul(Checked *c, u128 a, u128 b)
{
    u128 r;
    if (c->overflow || !u128_mul_ok(a, b, &r)) {
        c->overflow = true;
        return 0;
    }
    return r;
}

u128 checked_add(Checked *c, u128 a, u128 b)
{
    u128 r;
    if (c->overflow || !u128_add_ok(a, b, &r)) {
        c->overflow = true;
        return 0;
    }
    return r;
}

Q q_make(u128 num, u128 den)
{
    return (Q){num, den ? den : 1};
}

double q_to_double(Q q)
{
    /* Integer part and remainder separately, so a huge numerator over a huge
     * denominator keeps its precision. */
    u128 i = q.num / q.den, r = q.num % q.den;
    return (double)i + (double)r / (double)q.den;
}

int q_cmp(Q a, Q b)
{
    /* Compare integer parts, then the remainders as fractions, recursively
     * by continued-fraction steps; exact without any multiplication. */
    for (;;) {
        u128 ia = a.num / a.den, ib = b.num / b.den;
        if (ia != ib)
            return ia < ib ? -1 : 1;
        u128 ra = a.num % a.den, rb = b.num % b.den;
        if (ra == 0 || rb == 0)
            return (ra == 0) == (rb == 0) ? 0 : (ra == 0 ? -1 : 1);
        /* ra/a.den vs rb/b.den  <=>  b.den/rb vs a.den/ra (reversed). */
        Q na = {b.den, rb}, nb = {a.den, ra};
        a = na;
        b = nb;
    }
}

const char *u128_str(char *buf, size_t n, u128 v, bool grouped)
{
    char tmp[64];
    int len = 0, digits = 0;
    do {
        if (grouped && digits && digits % 3 == 0)
            tmp[len++] = ',';
        tmp[len++] = (char)('0' + (int)(v % 10));
        v /= 10;
        digits++;
    } while (v);
    if ((size_t)len + 1 > n) {
        if (n)
            buf[0] = '\0';
        return buf;
    }
    for (int i = 0; i < len; i++)
        buf[i] = tmp[len - 1 - i];
    buf[len] = '\0';
    return buf;
}

const char *q_str(char *buf, size_t n, Q q, int decimals, bool trim)
{
    if (decimals < 0)
        decimals = 0;
    if (decimals > Q_DECIMALS_MAX)
        decimals = Q_DECIMALS_MAX;
    /* Keep remainder x 10 from overflowing: a denominator this large only
     * comes from absurd inputs, and halving both sides loses < 2^-120. */
    while (q.den > U128_MAX / 10) {
        q.num >>= 1;
        q.den >>= 1;
    }
    u128 ip = q.num / q.den, r = q.num % q.den;
    char frac[Q_DECIMALS_MAX];
    for (int i = 0; i < decimals; i++) {
        r *= 10;
        frac[i] = (char)('0' + (int)(r / q.den));
        r %= q.den;
    }
    /* Round half up: carry from the last digit into the integer part. */
    if (r >= q.den - r) {
        int i = decimals - 1;
        while (i >= 0 && frac[i] == '9')
            frac[i--] = '0';
        if (i >= 0)
            frac[i]++;
        else
            ip++;
    }
    char ibuf[64];
    u128_str(ibuf, sizeof ibuf, ip, false);
    int flen = decimals;
    if (trim)
        while (flen > 0 && frac[flen - 1] == '0')
            flen--;
    size_t need = strlen(ibuf) + (flen ? 1 + (size_t)flen : 0) + 1;
    if (need > n) {
        if (n)
            buf[0] = '\0';
        return buf;
    }
    strcpy(buf, ibuf);
    if (flen) {
        size_t l = strlen(buf);
        buf[l] = '.';
        memcpy(buf + l + 1, frac, (size_t)flen);
        buf[l + 1 + (size_t)flen] = '\0';
    }
    return buf;
}
