/* report.c - see report.h. */
#include "report.h"

#include "jsonout.h"
#include "text.h"
#include "units.h"

#include <string.h>

/* ------------------------------------------------------------------------
 * Computing
 */

void report_from_scenario(const Scenario *sc, Report *rp)
{
    memset(rp, 0, sizeof *rp);
    rp->model = sc->model.display;
    rp->gpu = sc->has_gpu ? &sc->gpu : NULL;
    rp->w = sc->w;
    rp->n_formats = sc->n_formats;
    memcpy(rp->formats, sc->formats, sc->n_formats * sizeof sc->formats[0]);
}

int report_compute(const Report *rp, Results *res, Error *e)
{
    for (size_t i = 0; i < rp->n_formats; i++) {
        if (budget_compute(&rp->w, rp->formats[i], &res->r[i], e))
            return -1;
        for (size_t k = 0; k < rp->n_contexts; k++) {
            Workload w = rp->w;
            FormatResult fr;
            w.context = rp->contexts[k];
            if (budget_compute(&w, rp->formats[i], &fr, e))
                return -1;
            res->series[i][k] = fr.speedup;
            res->series_ms[i][k] = fr.step_ms;
        }
    }
    if (rp->n_contexts && !res->r[0].has_step)
        return error_set(e, "--contexts needs weights and a bandwidth (give --gpu, or "
                            "--weights and --bandwidth)");
    res->has_fit = rp->gpu && rp->w.pool;
    if (res->has_fit)
        budget_gpu_fit(&rp->w, rp->gpu->memory, &res->fit);
    return 0;
}

/* A pool size in GB, rounded down to the 10 MB that two decimals show, so
 * that a pool typed as printed fits. */
static const char *report_gb_down(char *buf, size_t n, u128 bytes)
{
    enum { DECIMALS = 2 };
    const u128 shown = GB / 100;            // the last of DECIMALS places: 10 MB
    return units_gb(buf, n, bytes - bytes % shown, DECIMALS);
}

/* What would make the pool and the weights fit one GPU: tensor
 * parallelism, where a degree would; else, where the weights alone fill
 * the GPU, the degree that leaves them room and the pool that fits there;
 * else the pool that fits beside the weights. */
static void report_fit_fix(const GpuFit *f, char *buf, size_t n)
{
    char a[48];
    if (f->tp_fit)
        snprintf(buf, n, "tensor parallelism over %llu GPUs would fit them", (unsigned long long)f->tp_fit);
    else if (!f->room && f->tp_weights)
        snprintf(buf, n, "the weights alone need tensor parallelism over %llu GPUs, which leaves room for a "
                         "pool of at most %s per GPU",
                 (unsigned long long)f->tp_weights, report_gb_down(a, sizeof a, f->tp_weights_room));
    else if (!f->room)
        snprintf(buf, n, "the weights alone need a GPU with more memory");
    else
        snprintf(buf, n, "a pool of at most %s would fit beside the weights (or a GPU with more memory)",
                 report_gb_down(a, sizeof a, f->room));
}

const char *report_fit_warning(const Results *res, char *buf, size_t n)
{
    const GpuFit *f = &res->fit;
    if (!res->has_fit || !f->pool_exceeds)
        return NULL;
    char a[48], b[48], c[48], d[48], fix[192];
    report_fit_fix(f, fix, sizeof fix);
    snprintf(buf, n, "the KV pool (%s) and the weights on one GPU (%s) exceed its %s by %s: "
                     "a what-if; %s",
             units_gb(a, sizeof a, f->pool, 2), units_gb(b, sizeof b, f->weights, 2),
             units_gb(c, sizeof c, f->memory, 2), units_gb(d, sizeof d, f->excess, 2), fix);
    return buf;
}

const char *report_baseline(const Report *rp, char *buf, size_t n)
{
    const Format *bf16 = format_bf16(), *same = NULL;
    unsigned d = (unsigned)rp->w.shape.head_dim;
    for (size_t i = 0; i < rp->n_formats && !same; i++)
        if (q_cmp(format_bytes_per_element(rp->formats[i], d), format_bytes_per_element(bf16, d)) == 0)
            same = rp->formats[i];
    if (same == bf16)
        snprintf(buf, n, "speedup is over %s", bf16->id);
    else if (same)
        snprintf(buf, n, "speedup is over %s (as many bytes as BF16)", same->id);
    else
        snprintf(buf, n, "speedup is over BF16 (not in this table)");
    return buf;
}

/* ------------------------------------------------------------------------
 * Text
 */

static void report_header(const Report *rp, const Results *res, FILE *out)
{
    const FormatResult *r0 = &res->r[0];
    const Workload *w = &rp->w;
    const Shape *s = &w->shape;
    char a[64], b[64], c[64];
    text_put(out, rp->model ? rp->model : "model", false);     // names from data files: escaped
    fprintf(out, ": %llu layers, ", (unsigned long long)s->layers);
    if (rp->q_heads_unknown)
        fprintf(out, "query heads not given (MHA or GQA unknown), ");
    else
        fprintf(out, "%llu query heads, ", (unsigned long long)s->q_heads);
    fprintf(out, "%llu KV heads, head dim %llu", (unsigned long long)s->kv_heads,
            (unsigned long long)s->head_dim);
    if (!rp->q_heads_unknown && s->kv_heads == s->q_heads)
        fprintf(out, " (MHA)");
    else if (!rp->q_heads_unknown)
        fprintf(out, " (GQA %llu:1)", (unsigned long long)(s->q_heads / s->kv_heads));
    uint64_t sliding = shape_layers_of_kind(s, ATTN_SLIDING);
    if (sliding)
        fprintf(out, ", %llu sliding-window layers of %llu tokens", (unsigned long long)sliding,
                (unsigned long long)s->window);
    fputc('\n', out);
    if (rp->scenario) {
        char sc[128];
        text_escape(sc, sizeof sc, rp->scenario, false);
        fprintf(out, "scenario %s (kvlab scenario show %s); options given change it\n", sc, sc);
    }
    if (w->mha)
        fprintf(out, "as MHA: %llu KV heads, one per query head\n",
                (unsigned long long)s->q_heads);
    if (w->tp > 1)
        fprintf(out, "tensor parallel over %llu GPUs: %llu KV head(s) per GPU%s; "
                     "every figure below is per GPU\n",
                (unsigned long long)w->tp, (unsigned long long)r0->shape.kv_heads,
                r0->kv_replicas > 1 ? " (replicated)" : "");
    fprintf(out, "context %s tokens x batch %llu: %s elements stored%s\n",
            units_context(a, sizeof a, w->context), (unsigned long long)w->batch,
            u128_str(b, sizeof b, r0->fp.elements, true),
            sliding ? " (sliding-window layers keep only their window)" : "");
    if (rp->gpu) {
        char gd[256], dm[256];
        fprintf(out, "GPU %s: %s on the datasheet, %s = %s in use here, %s\n",
                text_escape(gd, sizeof gd, rp->gpu->display, false),
                text_escape(dm, sizeof dm, rp->gpu->datasheet_memory, false), units_gb(a, sizeof a, rp->gpu->memory, 2),
                units_gib(c, sizeof c, rp->gpu->memory, 2), units_rate(b, sizeof b, rp->gpu->bandwidth));
    }
    if (w->pool)
        fprintf(out, "KV pool %s = %s (%s bytes)\n", units_gib(a, sizeof a, w->pool, 3),
                units_gb(b, sizeof b, w->pool, 3), u128_str(c, sizeof c, w->pool, true));
    if (w->weights)
        fprintf(out, "weights %s = %s%s\n", units_gb(a, sizeof a, w->weights, 2),
                units_gib(b, sizeof b, w->weights, 2), w->tp > 1 ? " (whole model)" : "");
    char warn[512];
    if (report_fit_warning(res, warn, sizeof warn))
        fprintf(out, "warning: %s\n", warn);
    if (w->bandwidth)
        fprintf(out, "bandwidth %s\n", units_rate(a, sizeof a, w->bandwidth));
    if (w->kv.residual)
        fprintf(out, "the most recent %llu tokens of each sequence stay in BF16 (KIVI residual)\n",
                (unsigned long long)w->kv.residual);
    fputc('\n', out);
}

void report_table(const Report *rp, const Results *res, Table *t)
{
    const FormatResult *r0 = &res->r[0];
    table_init(t, TABLE_COLS);            // as many as it gets: t->cols below
    table_row(t);
    table_cell(t, "format");
    table_cell(t, "B/elem");
    table_cell(t, "per seq");
    table_cell(t, "total");
    table_cell(t, "total, decimal");
    table_cell(t, "scale B");
    if (r0->has_slots) {
        table_cell(t, "slots");
        table_cell(t, "paged");
    }
    if (r0->has_step) {
        table_cell(t, "step ms");
        table_cell(t, "speedup");
    }
    if (r0->has_crossover)
        table_cell(t, "KV>weights at");
    t->cols = t->col;
    for (size_t i = 0; i < rp->n_formats; i++) {
        const FormatResult *r = &res->r[i];
        char a[64];
        table_row(t);
        table_cell(t, "%s", r->format->id);
        table_cell(t, "%s", q_str(a, sizeof a, r->bytes_per_element, 6, true));
        table_cell(t, "%s", units_size(a, sizeof a, r->fp.bytes_per_sequence));
        table_cell(t, "%s", units_size(a, sizeof a, r->fp.bytes));
        table_cell(t, "%s", units_size_decimal(a, sizeof a, r->fp.bytes));
        table_cell(t, "%s", u128_str(a, sizeof a, r->fp.tensor_scale_bytes, true));
        if (r->has_slots) {
            table_cell(t, "%s", u128_str(a, sizeof a, r->slots, true));
            table_cell(t, "%s", u128_str(a, sizeof a, r->paged_slots, true));
        }
        if (r->has_step) {
            table_cell(t, "%s", q_str(a, sizeof a, r->step_ms, 2, false));
            table_cell(t, "%sx", q_str(a, sizeof a, r->speedup, 2, false));
        }
        if (r->has_crossover) {
            if (r->crossover_context)
                table_cell(t, "%s", u128_str(a, sizeof a, r->crossover_context, true));
            else
                table_cell(t, "never");
        }
    }
}

static void report_series_table(const Report *rp, const Results *res, Table *t)
{
    table_init(t, 1 + rp->n_contexts);
    table_row(t);
    table_cell(t, "speedup at");
    for (size_t k = 0; k < rp->n_contexts; k++) {
        char a[48];
        table_cell(t, "%s", units_context_short(a, sizeof a, rp->contexts[k]));
    }
    for (size_t i = 0; i < rp->n_formats; i++) {
        table_row(t);
        table_cell(t, "%s", rp->formats[i]->id);
        for (size_t k = 0; k < rp->n_contexts; k++) {
            char a[48];
            table_cell(t, "%sx", q_str(a, sizeof a, res->series[i][k], 2, false));
        }
    }
}

void report_table_fit(Table *t, int width)
{
    static const char *const LEAST_NEEDED[] = {"total, decimal", "KV>weights at", "paged",
                                               "scale B", "per seq", "B/elem", "step ms"};
    for (size_t i = 0; i < sizeof LEAST_NEEDED / sizeof LEAST_NEEDED[0] && table_width(t) > width; i++)
        table_drop_column(t, LEAST_NEEDED[i]);
}

const char *report_figure_text(const Figure *f, const FigureResult *r, char *buf, size_t n)
{
    const char *unit = r->never ? "" : metric_unit(f->metric);
    bool tight = strcmp(unit, "x") == 0 || strcmp(unit, "%") == 0;     // "1.12x", "38%"
    snprintf(buf, n, "%s%s%s", r->text, *unit && !tight ? " " : "", unit);
    return buf;
}

/* CSV for scripts: plain numbers, exact integers, no units or separators;
 * the speedup series, if any, as extra columns. */
static void report_csv(const Report *rp, const Results *res, FILE *out)
{
    const FormatResult *r0 = &res->r[0];
    fprintf(out, "format,bytes_per_element,bytes_per_sequence,bytes,gib,gb,tensor_scale_bytes");
    if (r0->has_slots)
        fprintf(out, ",slots,paged_slots");
    if (r0->has_step)
        fprintf(out, ",step_ms,speedup");
    if (r0->has_crossover)
        fprintf(out, ",crossover_context");
    for (size_t k = 0; k < rp->n_contexts; k++)
        fprintf(out, ",speedup_at_%llu", (unsigned long long)rp->contexts[k]);
    fputc('\n', out);
    for (size_t i = 0; i < rp->n_formats; i++) {
        const FormatResult *r = &res->r[i];
        char a[64], b[64], c[64], d[64], f[64], g[64];
        fprintf(out, "%s,%s,%s,%s,%s,%s,%s", r->format->id,
                q_str(a, sizeof a, r->bytes_per_element, 9, true),
                u128_str(b, sizeof b, r->fp.bytes_per_sequence, false),
                u128_str(c, sizeof c, r->fp.bytes, false),
                q_str(d, sizeof d, q_make(r->fp.bytes, GIB), 9, true),
                q_str(f, sizeof f, q_make(r->fp.bytes, GB), 9, true),
                u128_str(g, sizeof g, r->fp.tensor_scale_bytes, false));
        if (r->has_slots)
            fprintf(out, ",%s,%s", u128_str(a, sizeof a, r->slots, false),
                    u128_str(b, sizeof b, r->paged_slots, false));
        if (r->has_step)
            fprintf(out, ",%s,%s", q_str(a, sizeof a, r->step_ms, 6, true),
                    q_str(b, sizeof b, r->speedup, 6, true));
        if (r->has_crossover)
            fprintf(out, ",%s", r->crossover_context ? u128_str(a, sizeof a, r->crossover_context, false) : "");
        for (size_t k = 0; k < rp->n_contexts; k++)
            fprintf(out, ",%s", q_str(a, sizeof a, res->series[i][k], 6, true));
        fputc('\n', out);
    }
}

int report_text(const Report *rp, bool as_csv, FILE *out, Error *e)
{
    static Results res;
    static Table t;
    if (report_compute(rp, &res, e))
        return -1;
    if (as_csv) {
        report_csv(rp, &res, out);
        return 0;
    }
    report_table(rp, &res, &t);
    report_header(rp, &res, out);
    table_print(&t, out);
    fputc('\n', out);
    if (res.r[0].has_slots)
        fprintf(out, "slots: whole sequences in the pool; paged: the same in blocks of %llu "
                     "tokens (the last block of each sequence is partly empty)\n",
                (unsigned long long)rp->w.block_tokens);
    char base[96];
    if (res.r[0].has_step)
        fprintf(out, "step ms: floor of one decode step, (weights + KV read) / bandwidth; %s\n",
                report_baseline(rp, base, sizeof base));
    else if (rp->w.bandwidth || rp->w.weights)
        fprintf(out, "step ms: needs both the weights and a bandwidth (give %s)\n",
                rp->w.bandwidth ? "--weights" : "--bandwidth or --gpu");
    if (!res.r[0].has_slots)
        fprintf(out, "slots: give --pool or --gpu to see how many sequences fit\n");
    fprintf(out, "scale B: per-tensor scales, once per cache; kept with the weights, "
                 "not in the pool\n");
    if (res.r[0].has_crossover)
        fprintf(out, "KV>weights at: the context at which this batch's KV cache holds more "
                     "bytes than the weights\n");
    if (rp->n_contexts) {
        fputc('\n', out);
        report_series_table(rp, &res, &t);
        table_print(&t, out);
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * JSON
 */

static cJSON *report_format_json(const FormatResult *r, const Report *rp, const Results *res, size_t i)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "format", r->format->id);
    json_add_q(o, "bytes_per_element", r->bytes_per_element);
    json_add_u128(o, "bytes", r->fp.bytes);
    json_add_u128(o, "tensor_scale_bytes", r->fp.tensor_scale_bytes);
    json_add_u128(o, "bytes_per_sequence", r->fp.bytes_per_sequence);
    json_add_u128(o, "payload_bytes", r->fp.payload_bytes);
    json_add_q(o, "gib", q_make(r->fp.bytes, GIB));
    json_add_q(o, "gb", q_make(r->fp.bytes, GB));
    if (r->has_slots) {
        json_add_u128(o, "slots", r->slots);
        json_add_u128(o, "paged_slots", r->paged_slots);
        json_add_u128(o, "paged_bytes_per_sequence", r->paged_bytes_per_sequence);
        json_add_u128(o, "tail_waste_bytes", r->paged_bytes_per_sequence - r->fp.bytes_per_sequence);
    }
    if (r->has_step) {
        json_add_u128(o, "bytes_read", r->bytes_read);
        json_add_q(o, "step_ms", r->step_ms);
        json_add_q(o, "speedup", r->speedup);
    }
    if (r->has_crossover) {
        if (r->crossover_context)
            json_add_u128(o, "crossover_context", r->crossover_context);
        else
            cJSON_AddNullToObject(o, "crossover_context");
    }
    if (rp->n_contexts) {
        cJSON *arr = cJSON_AddArrayToObject(o, "series");
        for (size_t k = 0; k < rp->n_contexts; k++) {
            cJSON *p = cJSON_CreateObject();
            json_add_u128(p, "context", rp->contexts[k]);
            json_add_q(p, "step_ms", res->series_ms[i][k]);
            json_add_q(p, "speedup", res->series[i][k]);
            cJSON_AddItemToArray(arr, p);
        }
    }
    return o;
}

cJSON *report_json(const Report *rp, Error *e)
{
    static Results res;
    if (report_compute(rp, &res, e))
        return NULL;
    const Workload *w = &rp->w;
    const FormatResult *r0 = &res.r[0];
    cJSON *root = cJSON_CreateObject();
    if (rp->model)
        cJSON_AddStringToObject(root, "model", rp->model);
    cJSON *shape = cJSON_AddObjectToObject(root, "shape");
    json_add_u128(shape, "layers", r0->shape.layers);
    if (rp->q_heads_unknown)
        cJSON_AddNullToObject(shape, "q_heads");
    else
        json_add_u128(shape, "q_heads", r0->shape.q_heads);
    json_add_u128(shape, "kv_heads", r0->shape.kv_heads);
    json_add_u128(shape, "head_dim", r0->shape.head_dim);
    json_add_u128(shape, "tp", w->tp ? w->tp : 1);
    json_add_u128(root, "elements", r0->fp.elements);
    json_add_u128(root, "context", w->context);
    json_add_u128(root, "batch", w->batch);
    if (rp->gpu)
        cJSON_AddStringToObject(root, "gpu", rp->gpu->name);
    if (w->pool)
        json_add_u128(root, "pool", w->pool);
    if (w->weights)
        json_add_u128(root, "weights", w->weights);
    if (w->bandwidth)
        json_add_u128(root, "bandwidth", w->bandwidth);
    if (res.has_fit) {
        const GpuFit *f = &res.fit;
        cJSON_AddBoolToObject(root, "pool_exceeds_gpu", f->pool_exceeds);
        cJSON *fit = cJSON_AddObjectToObject(root, "gpu_fit");
        json_add_u128(fit, "gpu_memory", f->memory);
        json_add_u128(fit, "weights_per_gpu", f->weights);
        json_add_u128(fit, "room", f->room);
        json_add_u128(fit, "excess", f->excess);
        if (f->tp_fit)
            json_add_u128(fit, "tp_fit", f->tp_fit);
        else
            cJSON_AddNullToObject(fit, "tp_fit");
    }
    cJSON *arr = cJSON_AddArrayToObject(root, "formats");
    for (size_t i = 0; i < rp->n_formats; i++)
        cJSON_AddItemToArray(arr, report_format_json(&res.r[i], rp, &res, i));
    return root;
}
