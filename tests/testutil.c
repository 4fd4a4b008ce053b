/* testutil.c - see testutil.h. */
#include "testutil.h"

#include "kv_attn.h"
#include "minifloat.h"
#include "quant.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

const char *test_datadir(void)
{
    return env_or("KVLAB_DATA", "scenarios");
}

const char *test_testdata(void)
{
    return env_or("KVLAB_TESTDATA", "tests/data");
}

const char *test_bin(void)
{
    return env_or("KVLAB_BIN", "./kvlab");
}

bool test_suite_selected(const char *name)
{
    const char *only = getenv("CK_RUN_SUITE");
    return !only || !*only || strcmp(only, name) == 0;
}

Model test_model(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/models/%s.json", test_datadir(), name);
    Model m;
    Error e;
    int rc = model_load(&m, path, &e);
    ck_assert_msg(rc == 0, "loading %s: %s", path, e.msg);
    return m;
}

Shape test_llama8b_shape(void)
{
    Shape s;
    ck_assert_int_eq(shape_init(&s, 32, 32, 8, 128, NULL), 0);
    return s;
}

uint64_t rng_next(Rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t rng_range(Rng *r, uint64_t lo, uint64_t hi)
{
    return lo + rng_next(r) % (hi - lo + 1);
}

float rng_uniform(Rng *r, float spread)
{
    return spread * ((float)(rng_next(r) >> 40) / (float)(1 << 24) * 2 - 1);
}

float group_magnitude(size_t group)
{
    return ldexpf(1.0f, -(int)(((uint32_t)group * 0x9E3779B1u >> 16) % 13));
}

uint64_t test_seed(void)
{
    static uint64_t seed;
    if (!seed) {
        const char *v = getenv("KVLAB_SEED");
        seed = v && *v ? strtoull(v, NULL, 10) : (uint64_t)time(NULL);
        if (!seed)
            seed = 1;
    }
    return seed;
}

const char *u128s(u128 v)
{
    static char buf[4][64];
    static int k;
    k = (k + 1) % 4;
    return u128_str(buf[k], sizeof buf[k], v, false);
}

/* Reads everything from fd into a growing heap buffer. */
static void drain(int fd, char **buf, size_t *len, size_t *cap)
{
    char tmp[4096];
    ssize_t n = read(fd, tmp, sizeof tmp);
    if (n <= 0)
        return;
    if (*len + (size_t)n + 1 > *cap) {
        *cap = (*len + (size_t)n + 1) * 2;
        *buf = realloc(*buf, *cap);
    }
    memcpy(*buf + *len, tmp, (size_t)n);
    *len += (size_t)n;
    (*buf)[*len] = '\0';
}

RunResult run_kvlab(const char *const *argv, const char *stdin_text)
{
    RunResult r = {0};
    int in[2], out[2], err[2];
    ck_assert(pipe(in) == 0 && pipe(out) == 0 && pipe(err) == 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(in[1]);
        close(out[0]);
        close(err[0]);
        const char *args[64] = {test_bin()};
        size_t n = 1;
        for (; argv[n - 1] && n < 63; n++)
            args[n] = argv[n - 1];
        args[n] = NULL;
        execv(test_bin(), (char *const *)args);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    signal(SIGPIPE, SIG_IGN);
    if (stdin_text) {
        size_t left = strlen(stdin_text);
        while (left) {
            ssize_t w = write(in[1], stdin_text, left);
            if (w <= 0)
                break;
            stdin_text += w;
            left -= (size_t)w;
        }
    }
    close(in[1]);
    size_t olen = 0, ocap = 1, elen = 0, ecap = 1;
    r.out = calloc(1, 1);
    r.err = calloc(1, 1);
    struct pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds) {
        if (poll(p, 2, 10000) <= 0)
            break;
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP)))
                continue;
            size_t before = i ? elen : olen;
            if (i)
                drain(p[i].fd, &r.err, &elen, &ecap);
            else
                drain(p[i].fd, &r.out, &olen, &ocap);
            if ((i ? elen : olen) == before) {
                close(p[i].fd);
                p[i].fd = -1;
                open_fds--;
            }
        }
    }
    int st;
    waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return r;
}

void run_free(RunResult *r)
{
    free(r->out);
    free(r->err);
}

static double rel_l2(const float *x, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]))
            return INFINITY;
        num += (x[i] - ref[i]) * (x[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : num > 0 ? INFINITY : 0;
}

double worst_head(const float *x, const double *ref, size_t heads, size_t d)
{
    double worst = 0;
    for (size_t h = 0; h < heads; h++) {
        const double e = rel_l2(x + h * d, ref + h * d, d);
        if (!(e <= worst))                  // NaN too
            worst = e;
    }
    return worst;
}

/* ------------------------------------------------------------------------
 * Quantizer groups and exact halves
 */

/* The groups a granularity makes: returns the group count and fills, for
 * each element, its group index. */
size_t group_ids(const Granularity *g, size_t rows, size_t cols, size_t *id)
{
    size_t n = 0;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            size_t k;
            switch (g->kind) {
            case GRAN_TENSOR: k = 0; break;
            case GRAN_TOKEN: k = r; break;
            case GRAN_CHANNEL: k = c; break;
            case GRAN_GROUP_CHANNELS: k = r * ((cols + g->size - 1) / g->size) + c / g->size; break;
            default: k = c * ((rows + g->size - 1) / g->size) + r / g->size; break;
            }
            id[r * cols + c] = k;
            n = k + 1 > n ? k + 1 : n;
        }
    return n;
}

const TieRange TIES_NORMAL = {-20, 4, 15, 1000};
const TieRange TIES_SUBNORMAL = {-144, -130, 15, 1000};

/* j + 0.5 rounded half to even: j or j + 1, whichever is even (for
 * negative j too). */
static int half_to_even(int j)
{
    return j + (j & 1);
}

void build_ties(Rng *r, const QuantSpec *q, size_t rows, size_t cols, const TieRange *range, float *x,
                float *want)
{
    size_t n = rows * cols, *id = malloc(n * sizeof *id), *seen = calloc(n, sizeof *seen);
    size_t groups = group_ids(&q->gran, rows, cols, id), *size = calloc(groups, sizeof *size);
    int *m = malloc(groups * sizeof *m), *e = malloc(groups * sizeof *e), *base = malloc(groups * sizeof *base);
    const int top = (1 << q->bits) - 1, qmax = (1 << (q->bits - 1)) - 1;
    for (size_t i = 0; i < n; i++)
        size[id[i]]++;
    for (size_t g = 0; g < groups; g++) {
        m[g] = 2 * (int)rng_range(r, 0, (uint64_t)(range->m_max - 1) / 2) + 1;
        e[g] = range->e_lo + (int)rng_range(r, 0, (uint64_t)(range->e_hi - range->e_lo));
        base[g] = q->scheme == SCHEME_INT_MIN ? (int)rng_range(r, 0, 2 * (uint64_t)range->base_max) - range->base_max
                  : q->scheme == SCHEME_INT_ZP ? (int)rng_range(r, 0, (uint64_t)top)  // the zero point
                                               : (int)rng_range(r, 0, 1) * 2 - 1;    // the sign of amax
    }
    for (size_t i = 0; i < n; i++) {
        size_t g = id[i], k = seen[g]++;
        double h = ldexp(1, e[g] - 1);             // s / (2m)
        int units, wunits;                         // x and want, in h
        if (size[g] == 1) {
            units = wunits = 0;                    // alone: its own range, kept exactly
        } else if (q->scheme == SCHEME_INT_MIN) {  // min, max, then min + (j + 0.5) s
            int j = (int)rng_range(r, 0, (uint64_t)top - 1);
            units = k == 0 ? 0 : k == 1 ? 2 * top * m[g] : (2 * j + 1) * m[g];
            wunits = k < 2 ? units : 2 * half_to_even(j) * m[g];
            units += base[g], wunits += base[g];
        } else if (q->scheme == SCHEME_INT_ZP) {   // -z s, (top - z) s, then (j + 0.5) s
            int z = base[g], j = (int)rng_range(r, 0, (uint64_t)top - 1) - z;
            units = k == 0 ? -2 * z * m[g] : k == 1 ? 2 * (top - z) * m[g] : (2 * j + 1) * m[g];
            wunits = k < 2 ? units : 2 * half_to_even(j) * m[g];
        } else {                                   // +-Q s, then (j + 0.5) s
            int j = (int)rng_range(r, 0, 2 * (uint64_t)qmax - 1) - qmax;
            units = k == 0 ? base[g] * 2 * qmax * m[g] : (2 * j + 1) * m[g];
            wunits = k == 0 ? units : 2 * half_to_even(j) * m[g];
        }
        x[i] = (float)(units * h);
        want[i] = (float)(wunits * h);
    }
    free(id), free(seen), free(size), free(m), free(e), free(base);
}

/* ------------------------------------------------------------------------
 * FP8 path C's arithmetic, written out
 */

/* Whether E4M3 rounds x and some value within `window` of it apart. */
static bool e4m3_near_change(double x, double window)
{
    return minifloat_round(&MF_E4M3, (float)(x * (1 + window)), true) !=
           minifloat_round(&MF_E4M3, (float)(x * (1 - window)), true);
}

void attn_fp8_p_f64(const KvCache *c, const float *q, double *out, bool *near, double window)
{
    const KvShape *s = &c->s;
    uint32_t D = s->head_dim, G = s->q_heads / s->kv_heads;
    float k[KV_HEAD_DIM_MAX], v[KV_HEAD_DIM_MAX];
    double *sc = malloc(c->len * sizeof *sc);
    for (uint32_t b = 0; b < s->batch; b++)
        for (uint32_t hq = 0; hq < s->q_heads; hq++) {
            const size_t row = (size_t)b * s->q_heads + hq;
            const float *qh = q + row * D;
            double mx = -INFINITY, sum = 0, *o = out + row * D;
            for (uint32_t t = 0; t < c->len; t++) {
                kv_dequant(c, b, hq / G, t, k, v);
                double dot = 0;
                for (uint32_t d = 0; d < D; d++)
                    dot += (double)qh[d] * k[d];
                sc[t] = dot / sqrt((double)D) / log(2.0);
                mx = fmax(mx, sc[t]);
            }
            const double m2 = ceil(mx);
            memset(o, 0, D * sizeof *o);
            near[row] = false;
            for (uint32_t t = 0; t < c->len; t++) {
                kv_dequant(c, b, hq / G, t, k, v);
                const double p = exp2(sc[t] - m2);
                const double pq = minifloat_round(&MF_E4M3, (float)(256 * p), true) / 256.0;
                near[row] |= e4m3_near_change(256 * p, window);
                sum += p;
                for (uint32_t d = 0; d < D; d++)
                    o[d] += pq * v[d];
            }
            for (uint32_t d = 0; d < D; d++)
                o[d] /= sum;
        }
    free(sc);
}
