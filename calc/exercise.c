/* exercise.c - exercise files, checked on load, and texts with figures. */
#include "exercise.h"

#include "ascii.h"
#include "jsonfile.h"
#include "paths.h"
#include "units.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const KIND_NAMES[EXERCISE_KINDS] = {
    [EXERCISE_NUMBER] = "number", [EXERCISE_CHOICE] = "choice", [EXERCISE_TASK] = "task"};
static const char *const LEVEL_NAMES[EXERCISE_LEVELS] = {
    [LEVEL_RECALL] = "recall", [LEVEL_COMPUTE] = "compute", [LEVEL_DIAGNOSE] = "diagnose", [LEVEL_DECIDE] = "decide"};

/* The lab's screens a task may open. */
static const char *const SCREENS[] = {"calc", "quant", "scenarios", "gpu", "speedup", "niah"};
/* The lesson widget (lessons/FORMAT.md) that takes each screen's settings;
 * NULL for a screen that takes none. */
static const char *const SCREEN_WIDGETS[] = {"calc", "quant", "scenario", "gpu", "speedup", "niah"};

const char *exercise_kind_name(ExerciseKind k)
{
    return k < EXERCISE_KINDS ? KIND_NAMES[k] : "?";
}

const char *exercise_level_name(ExerciseLevel l)
{
    return l < EXERCISE_LEVELS ? LEVEL_NAMES[l] : "?";
}

size_t exercise_screen_count(void)
{
    return sizeof SCREENS / sizeof SCREENS[0];
}

const char *exercise_screen_at(size_t i)
{
    return i < exercise_screen_count() ? SCREENS[i] : NULL;
}

/* ------------------------------------------------------------------------
 * Texts
 */

static int exercise_put(char *out, size_t n, size_t *at, const char *s, size_t len, Error *e)
{
    if (*at + len + 1 > n)
        return error_set(e, "the text is too long once its figures are worked out");
    memcpy(out + *at, s, len);
    *at += len;
    out[*at] = '\0';
    return 0;
}

/* exercise_text, each term link checked against refs (when it has a
 * term_known). */
static int exercise_text_refs(const char *in, char *out, size_t n, const LessonRefs *refs, Error *e)
{
    size_t at = 0;
    out[0] = '\0';
    for (const char *p = in; *p;) {
        if (*p == '`') {
            const char *end = strchr(p + 1, '`');
            if (!end)
                return error_set(e, "a code span is not closed: '%.30s'", p);
            size_t len = (size_t)(end - p - 1);
            if (len && p[1] == '=') {
                char q[QUERY_TEXT_MAX];
                if (len >= sizeof q)
                    return error_set(e, "the figure '%.30s...' is too long", p + 2);
                snprintf(q, sizeof q, "%.*s", (int)(len - 1), p + 2);
                QueryValue v;
                if (query_run(q, &v, e))
                    return error_prefix(e, "figure `=%s`", q);
                if (exercise_put(out, n, &at, v.text, strlen(v.text), e))
                    return -1;
            } else if (exercise_put(out, n, &at, p + 1, len, e)) {
                return -1;
            }
            p = end + 1;
        } else if (*p == '[') {
            /* [text](term:x) or [text](src:x "title"): the text alone */
            const char *close = strchr(p, ']');
            const char *paren = close && close[1] == '(' ? strchr(close, ')') : NULL;
            if (!paren) {
                if (exercise_put(out, n, &at, p, 1, e))
                    return -1;
                p++;
                continue;
            }
            const char *target = close + 2 + (close[2] == '<');     // <term:KV cache>
            if (refs && refs->term_known && strncmp(target, "term:", 5) == 0) {
                char term[128];
                const char *t = target + 5;
                size_t len = (size_t)(paren - t) - (target > close + 2 && paren[-1] == '>');
                snprintf(term, sizeof term, "%.*s", (int)len, t);
                if (!refs->term_known(term, refs->term_ctx))
                    return error_set(e, "unknown term '%s' (kvlab glossary lists them)", term);
            }
            if (exercise_put(out, n, &at, p + 1, (size_t)(close - p - 1), e))
                return -1;
            p = paren + 1;
        } else {
            size_t len = strcspn(p, "`[");
            if (exercise_put(out, n, &at, p, len, e))
                return -1;
            p += len;
        }
    }
    return 0;
}

int exercise_choice_index(const Exercise *x, const char *answer)
{
    char a[16];
    size_t k = 0;
    for (const char *p = answer; *p && k + 1 < sizeof a; p++)
        if (!ascii_isspace((unsigned char)*p) && *p != ')' && *p != '.')
            a[k++] = (char)ascii_lower((unsigned char)*p);
    a[k] = '\0';
    if (k == 1 && a[0] >= 'a' && (size_t)(a[0] - 'a') < x->n_choices)
        return a[0] - 'a';
    char *end;
    long i = strtol(a, &end, 10);
    if (k && !*end && i >= 1 && (size_t)i <= x->n_choices)
        return (int)i - 1;
    return -1;
}

int exercise_check(const Exercise *x, const char *answer, ExerciseVerdict *v, Error *e)
{
    memset(v, 0, sizeof *v);
    v->choice = -1;
    if (x->kind == EXERCISE_CHOICE) {
        v->choice = exercise_choice_index(x, answer);
        if (v->choice < 0)
            return error_set(e, "'%s' is not one of the choices: answer a to %c (or 1 to %zu)", answer,
                             'a' + (int)x->n_choices - 1, x->n_choices);
        v->correct = x->choices[v->choice].correct;
        v->seed = x->seed_answer[0] && exercise_choice_index(x, x->seed_answer) == v->choice;
        return 0;
    }
    if (!x->has_query)
        return error_set(e, "%s is a task with nothing to report: do it in the lab (the %s screen)", x->id,
                         x->screen);
    Answer a;
    if (answer_parse(answer, &a, e) || answer_check(&x->query, x->unit, x->tolerance, &a, &v->number, e))
        return -1;
    v->correct = v->number.correct;
    v->seed = x->seed_answer[0] && answer_matches(&a, x->unit, x->seed_answer, x->tolerance);
    return 0;
}

const char *exercise_query_inputs(const Query *q, char *buf, size_t n)
{
    static QuerySetup s;
    const Format *f;
    Error e;
    if (query_workload(q, &s, &f, &e)) {
        snprintf(buf, n, "%s", e.msg);
        return buf;
    }
    char ctx[48], batch[48], tail[256] = "";
    u128_str(ctx, sizeof ctx, s.w.context, true);
    u128_str(batch, sizeof batch, s.w.batch, true);
    if (s.w.pool) {
        char sz[48];
        snprintf(tail, sizeof tail, ", pool %s", units_size(sz, sizeof sz, s.w.pool));
    }
    if (s.has_gpu) {
        size_t k = strlen(tail);
        snprintf(tail + k, sizeof tail - k, ", GPU %s", s.gpu.display);
    }
    snprintf(buf, n, "%s, context %s tokens, batch %s, format %s%s", s.model[0] ? s.model : "a typed shape", ctx,
             batch, f->id, tail);
    return buf;
}

/* ------------------------------------------------------------------------
 * Loading
 */

static const char *const EXERCISE_FIELDS[] = {
    "id", "lesson", "kind", "level", "question", "hint", "source", "answer", "unit", "tolerance", "solution",
    "choices", "screen", "settings", "steps", "report", "seed_answer", "seed_error", NULL,
};
static const char *const CHOICE_FIELDS[] = {"text", "correct", "why", NULL};
/* The fields each kind takes beyond the common ones; any other is refused. */
static const char *const KIND_FIELDS[EXERCISE_KINDS][8] = {
    [EXERCISE_NUMBER] = {"answer", "unit", "tolerance", "solution", "seed_answer", "seed_error", NULL},
    [EXERCISE_CHOICE] = {"choices", "seed_answer", "seed_error", NULL},
    [EXERCISE_TASK] = {"screen", "settings", "steps", "report", "unit", "tolerance", "solution", NULL},
};
static const char *const COMMON_FIELDS[] = {"id", "lesson", "kind", "level", "question", "hint", "source", NULL};

static bool in_list(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (!strcmp(*list, s))
            return true;
    return false;
}

/* The message already in e, placed at item and named after its field. */
int exercise_text(const char *in, char *out, size_t n, Error *e)
{
    return exercise_text_refs(in, out, n, NULL, e);
}

static int at_item(const JsonDoc *d, const cJSON *item, const char *field, Error *e)
{
    char msg[ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", e->msg);
    return jsondoc_error(d, item, e, "field '%s': %s", field, msg);
}

static int pick(const JsonDoc *d, const cJSON *obj, const char *field, const char *const *names, int count,
                int *out, Error *e)
{
    char s[32];
    if (json_string(d, obj, field, FIELD_REQUIRED, s, sizeof s, e))
        return -1;
    for (int i = 0; i < count; i++)
        if (!strcmp(names[i], s)) {
            *out = i;
            return 0;
        }
    char list[128] = "";
    for (int i = 0; i < count; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", names[i]);
    }
    return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(obj, field), e,
                         "field '%s': unknown value '%s'; expected one of %s", field, s, list);
}

/* A text field whose figures must all work out. */
static int text_field(const JsonDoc *d, const cJSON *obj, const char *name, FieldNeed need, char *out, size_t n,
                      const LessonRefs *refs, Error *e)
{
    int rc = json_string(d, obj, name, need, out, n, e);
    if (rc)
        return rc;
    if (need == FIELD_REQUIRED && !out[0])
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(obj, name), e, "field '%s' is empty", name);
    static char rendered[4 * EXERCISE_TEXT_MAX];
    if (exercise_text_refs(out, rendered, sizeof rendered, refs, e))
        return at_item(d, cJSON_GetObjectItemCaseSensitive(obj, name), name, e);
    return 0;
}

static bool slug(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
            return false;
    return true;
}

static int load_query(const JsonDoc *d, const cJSON *obj, const char *field, Exercise *x, Error *e)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, field);
    QueryValue v;
    if (query_parse(x->answer, &x->query, e) || query_eval(&x->query, &v, e))
        return at_item(d, item, field, e);
    char unit[16];
    int rc = json_string(d, obj, "unit", FIELD_OPTIONAL, unit, sizeof unit, e);
    if (rc < 0)
        return -1;
    x->unit = rc ? x->query.unit : query_unit_by_name(unit);
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(obj, "unit");
    if (!x->unit)
        return jsondoc_error(d, u, e, "field 'unit': unknown unit '%s'", unit);
    if (query_unit_family(x->unit) != v.family)
        return jsondoc_error(d, u, e, "field 'unit': '%s' is a %s, but the answer is a %s", unit,
                             query_family_name(query_unit_family(x->unit)), query_family_name(v.family));
    x->has_query = true;
    x->tolerance = ANSWER_TOLERANCE_DEFAULT;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "tolerance");
    if (t) {
        if (!cJSON_IsNumber(t) || !(t->valuedouble > 0 && t->valuedouble < 1))
            return jsondoc_error(d, t, e, "field 'tolerance': expected a relative tolerance above 0 and below 1 "
                                          "(0.005 is half a percent)");
        x->tolerance = t->valuedouble;
    }
    return 0;
}

static int load_choices(const JsonDoc *d, const cJSON *obj, Exercise *x, const LessonRefs *refs, Error *e)
{
    const cJSON *arr;
    int n;
    if (json_array(d, obj, "choices", FIELD_REQUIRED, &arr, &n, e))
        return -1;
    if (n < 2 || n > EXERCISE_CHOICES_MAX)
        return jsondoc_error(d, arr, e, "field 'choices': expected 2 to %d choices", EXERCISE_CHOICES_MAX);
    int correct = 0;
    for (const cJSON *c = arr->child; c; c = c->next) {
        Choice *ch = &x->choices[x->n_choices++];
        if (json_object(d, c, "a choice", e) || json_known_fields(d, c, CHOICE_FIELDS, e) ||
            text_field(d, c, "text", FIELD_REQUIRED, ch->text, sizeof ch->text, refs, e) ||
            json_bool(d, c, "correct", FIELD_REQUIRED, &ch->correct, e) ||
            text_field(d, c, "why", FIELD_REQUIRED, ch->why, sizeof ch->why, refs, e))
            return -1;
        correct += ch->correct;
    }
    if (correct != 1)
        return jsondoc_error(d, arr, e, "field 'choices': exactly one choice is correct (%d are)", correct);
    return 0;
}

static int load_steps(const JsonDoc *d, const cJSON *obj, Exercise *x, const LessonRefs *refs, Error *e)
{
    const cJSON *arr;
    int n;
    if (json_array(d, obj, "steps", FIELD_REQUIRED, &arr, &n, e))
        return -1;
    if (n < 1 || n > EXERCISE_STEPS_MAX)
        return jsondoc_error(d, arr, e, "field 'steps': expected 1 to %d steps", EXERCISE_STEPS_MAX);
    for (const cJSON *c = arr->child; c; c = c->next) {
        char *s = x->steps[x->n_steps++];
        static char rendered[4 * 512];
        if (!cJSON_IsString(c) || !c->valuestring[0] || strlen(c->valuestring) >= sizeof x->steps[0])
            return jsondoc_error(d, c, e, "field 'steps': expected a step as text, at most %zu bytes",
                                 sizeof x->steps[0] - 1);
        snprintf(s, sizeof x->steps[0], "%s", c->valuestring);
        if (exercise_text_refs(s, rendered, sizeof rendered, refs, e))
            return at_item(d, c, "steps", e);
    }
    return 0;
}

/* A task's settings, checked as its screen's widget checks its options. */
static int load_settings(const JsonDoc *d, const cJSON *obj, const Exercise *x, int screen, const LessonRefs *refs,
                         Error *e)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, "settings");
    if (!refs || !refs->widget_check || !item)
        return 0;
    const char *widget = SCREEN_WIDGETS[screen];
    if (!widget)
        return x->settings[0] ? jsondoc_error(d, item, e, "field 'settings': the %s screen takes no settings",
                                              x->screen)
                              : 0;
    if (refs->widget_check(widget, x->settings, refs->widget_ctx, e))
        return at_item(d, item, "settings", e);
    return 0;
}

/* A seed's answer and its error: the error is there exactly when the
 * seed's answer is not the query's value. */
static int load_seed(const JsonDoc *d, const cJSON *obj, Exercise *x, Error *e)
{
    if (json_string(d, obj, "seed_answer", FIELD_OPTIONAL, x->seed_answer, sizeof x->seed_answer, e) < 0 ||
        json_string(d, obj, "seed_error", FIELD_OPTIONAL, x->seed_error, sizeof x->seed_error, e) < 0)
        return -1;
    const cJSON *sa = cJSON_GetObjectItemCaseSensitive(obj, "seed_answer");
    if (x->seed_error[0] && !x->seed_answer[0])
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(obj, "seed_error"), e,
                             "field 'seed_error' explains a 'seed_answer', which is missing");
    if (!x->seed_answer[0])
        return 0;
    bool right;
    if (x->kind == EXERCISE_CHOICE) {
        int i = exercise_choice_index(x, x->seed_answer);
        if (i < 0)
            return jsondoc_error(d, sa, e, "field 'seed_answer': '%s' is not one of the choices (a, b, ...)",
                                 x->seed_answer);
        right = x->choices[i].correct;
    } else {
        Answer a;
        AnswerVerdict v;
        if (answer_parse(x->seed_answer, &a, e) || answer_check(&x->query, x->unit, x->tolerance, &a, &v, e))
            return at_item(d, sa, "seed_answer", e);
        right = v.correct;
    }
    if (!right && !x->seed_error[0])
        return jsondoc_error(d, sa, e, "field 'seed_answer': the seed's answer is wrong; say why in 'seed_error'");
    if (right && x->seed_error[0])
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(obj, "seed_error"), e,
                             "field 'seed_error': the seed's answer is right; drop the error");
    return 0;
}

static int load_exercise(const JsonDoc *d, const cJSON *c, const ExerciseSet *set, size_t first, Exercise *x,
                         Error *e)
{
    const LessonRefs *refs = set->refs;
    memset(x, 0, sizeof *x);
    snprintf(x->file, sizeof x->file, "%s", d->path);
    int kind, level;
    if (json_object(d, c, "an exercise", e) || json_known_fields(d, c, EXERCISE_FIELDS, e) ||
        json_string(d, c, "id", FIELD_REQUIRED, x->id, sizeof x->id, e))
        return -1;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
    if (!slug(x->id))
        return jsondoc_error(d, id, e, "field 'id': '%s' is not a slug (a-z, 0-9 and -)", x->id);
    if (pick(d, c, "kind", KIND_NAMES, EXERCISE_KINDS, &kind, e) ||
        pick(d, c, "level", LEVEL_NAMES, EXERCISE_LEVELS, &level, e) ||
        json_string(d, c, "lesson", FIELD_REQUIRED, x->lesson, sizeof x->lesson, e) ||
        text_field(d, c, "question", FIELD_REQUIRED, x->question, sizeof x->question, refs, e) ||
        text_field(d, c, "hint", FIELD_REQUIRED, x->hint, sizeof x->hint, refs, e) ||
        json_string(d, c, "source", FIELD_OPTIONAL, x->source, sizeof x->source, e) < 0)
        return -1;
    x->kind = (ExerciseKind)kind;
    x->level = (ExerciseLevel)level;
    if (!slug(x->lesson))
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(c, "lesson"), e,
                             "field 'lesson': '%s' is not a lesson id", x->lesson);
    if (refs && refs->lesson_known && !refs->lesson_known(x->lesson, refs->lesson_ctx))
        return jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(c, "lesson"), e,
                             "field 'lesson': unknown lesson '%s' (kvlab lesson list)", x->lesson);
    for (size_t i = 0; i < first; i++)
        if (!strcmp(set->ex[i].id, x->id))
            return jsondoc_error(d, id, e, "field 'id': '%s' is already the id of an exercise in %s", x->id,
                                 set->ex[i].file);
    for (const cJSON *f = c->child; f; f = f->next)
        if (!in_list(COMMON_FIELDS, f->string) && !in_list(KIND_FIELDS[kind], f->string))
            return jsondoc_error_key(d, f, e, "field '%s' is not one a %s exercise takes", f->string,
                                     KIND_NAMES[kind]);
    switch (x->kind) {
    case EXERCISE_NUMBER:
        if (json_string(d, c, "answer", FIELD_REQUIRED, x->answer, sizeof x->answer, e) ||
            load_query(d, c, "answer", x, e) ||
            text_field(d, c, "solution", FIELD_REQUIRED, x->solution, sizeof x->solution, refs, e))
            return -1;
        break;
    case EXERCISE_CHOICE:
        if (load_choices(d, c, x, set->refs, e))
            return -1;
        break;
    case EXERCISE_TASK: {
        int screen;
        if (pick(d, c, "screen", SCREENS, (int)exercise_screen_count(), &screen, e) ||
            json_string(d, c, "settings", FIELD_OPTIONAL, x->settings, sizeof x->settings, e) < 0 ||
            load_steps(d, c, x, set->refs, e))
            return -1;
        snprintf(x->screen, sizeof x->screen, "%s", SCREENS[screen]);
        if (load_settings(d, c, x, screen, refs, e))
            return -1;
        int rc = json_string(d, c, "report", FIELD_OPTIONAL, x->answer, sizeof x->answer, e);
        if (rc < 0 || (rc == 0 && load_query(d, c, "report", x, e)) ||
            text_field(d, c, "solution", FIELD_OPTIONAL, x->solution, sizeof x->solution, refs, e) < 0)
            return -1;
        break;
    }
    default:
        break;
    }
    return load_seed(d, c, x, e);
}

typedef struct {
    ExerciseSet *set;
} LoadCtx;

/* A "\u0000" escape would cut a text short where cJSON reads it; it is
 * refused at its place, as a raw NUL byte is. */
static int no_nul_escape(const JsonDoc *d, Error *e)
{
    for (const char *p = d->text; (p = strstr(p, "u0000")); p++) {
        size_t slashes = 0;
        while (p - slashes > d->text && p[-1 - (ptrdiff_t)slashes] == '\\')
            slashes++;
        if (slashes % 2 == 0)
            continue;
        int line = 1, col = 1;
        for (const char *q = d->text; q < p - 1; q++)
            *q == '\n' ? (line++, col = 1) : col++;
        return error_set(e, "%s:%d:%d: a \\u0000 escape (a NUL) in a text", d->path, line, col);
    }
    return 0;
}

static int from_doc(void *out, JsonDoc *d, const void *ctx, Error *e)
{
    (void)out;
    ExerciseSet *set = ((const LoadCtx *)ctx)->set;
    static const char *const ROOT_FIELDS[] = {"exercises", NULL};
    const cJSON *arr;
    int n;
    int rc = no_nul_escape(d, e) || json_object(d, d->root, "the exercise file", e) ||
                     json_known_fields(d, d->root, ROOT_FIELDS, e) ||
                     json_array(d, d->root, "exercises", FIELD_REQUIRED, &arr, &n, e)
                 ? -1
                 : 0;
    size_t first = set->n;
    if (!rc && n) {
        Exercise *grown = realloc(set->ex, (first + (size_t)n) * sizeof *grown);
        if (!grown)
            rc = error_runtime(e, "out of memory loading %s", d->path);
        else
            set->ex = grown;
        for (const cJSON *c = rc ? NULL : arr->child; c; c = c->next) {
            if (load_exercise(d, c, set, set->n, &set->ex[set->n], e)) {
                rc = -1;
                break;
            }
            set->n++;
        }
    }
    if (rc)
        set->n = first;
    jsondoc_done(d);
    return rc;
}

int exercise_load_file(ExerciseSet *set, const char *path, const char *text, size_t len, Error *e)
{
    LoadCtx ctx = {set};
    char none;
    return jsondoc_read(&none, 0, from_doc, &ctx, path, text, len, e);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int exercise_load_dir(ExerciseSet *set, const char *dir, Error *e)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return error_set(e, "%s: cannot open the exercises directory", dir);
    static char names[EXERCISE_FILES_MAX][256];
    char *sorted[EXERCISE_FILES_MAX];
    size_t n = 0;
    for (struct dirent *de; (de = readdir(dp));) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] == '.' || l < 6 || l >= sizeof names[0] || strcmp(de->d_name + l - 5, ".json"))
            continue;
        if (n == EXERCISE_FILES_MAX) {
            closedir(dp);
            return error_set(e, "%s: more than %d exercise files", dir, EXERCISE_FILES_MAX);
        }
        snprintf(names[n], sizeof names[n], "%s", de->d_name);
        sorted[n] = names[n];
        n++;
    }
    closedir(dp);
    qsort(sorted, n, sizeof sorted[0], by_name);
    for (size_t i = 0; i < n; i++) {
        char path[4096 + 256];
        snprintf(path, sizeof path, "%s/%s", dir, sorted[i]);
        if (exercise_load_file(set, path, NULL, 0, e))
            return -1;
    }
    return 0;
}

void exercise_set_free(ExerciseSet *set)
{
    free(set->ex);
    set->ex = NULL;
    set->n = 0;
}

const Exercise *exercise_find(const ExerciseSet *set, const char *id)
{
    for (size_t i = 0; i < set->n; i++)
        if (!strcmp(set->ex[i].id, id))
            return &set->ex[i];
    return NULL;
}

const char *exercise_dir(char *buf, size_t n)
{
    snprintf(buf, n, "%s/exercises", paths_lessondir());
    return buf;
}

/* "elements" and the calc options of settings, less every --format and
 * every option that is the widget's own (--contexts), with their values,
 * into buf (which holds "elements" on entry). */
static const char *settings_calc_options(const char *settings, char *buf, size_t n)
{
    char words[512];
    snprintf(words, sizeof words, "%s", settings);
    size_t len = strlen(buf);
    bool skip = false;
    for (char *save, *w = strtok_r(words, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
        bool option = !strncmp(w, "--", 2);
        if (skip && !option) {
            skip = false;               // the value of an option left out
            continue;
        }
        skip = false;
        if (option && (!strncmp(w, "--format", 8) || query_option_by_name(w + 2) < 0)) {
            skip = !strchr(w, '=');
            continue;
        }
        len += (size_t)snprintf(buf + len, len < n ? n - len : 0, " %s", w);
    }
    return buf;
}

int exercise_typed_numbers(const Exercise *x, TypedNumber *out, size_t max, Error *e)
{
    static char names[EXERCISE_CHOICES_MAX + EXERCISE_STEPS_MAX][2][24];
    RuleText texts[4 + 2 * EXERCISE_CHOICES_MAX + EXERCISE_STEPS_MAX] = {
        {"question", x->question}, {"hint", x->hint}, {"solution", x->solution}, {"seed_error", x->seed_error}};
    size_t n = 4;
    for (size_t i = 0; i < x->n_choices; i++) {
        snprintf(names[i][0], sizeof names[i][0], "choice %c", (int)('a' + i));
        snprintf(names[i][1], sizeof names[i][1], "choice %c's why", (int)('a' + i));
        texts[n++] = (RuleText){names[i][0], x->choices[i].text};
        texts[n++] = (RuleText){names[i][1], x->choices[i].why};
    }
    for (size_t i = 0; i < x->n_steps; i++) {
        snprintf(names[EXERCISE_CHOICES_MAX + i][0], sizeof names[0][0], "step %zu", i + 1);
        texts[n++] = (RuleText){names[EXERCISE_CHOICES_MAX + i][0], x->steps[i]};
    }
    /* The inputs: the answer's query, and a task's settings where they are
     * calc's options (a calc or speedup screen's), without their formats. */
    const char *queries[2];
    size_t n_queries = 0;
    if (x->has_query)
        queries[n_queries++] = x->answer;
    char settings[QUERY_TEXT_MAX] = "elements";
    Query q;
    QueryValue v;
    Error ignored;
    if (x->kind == EXERCISE_TASK && !query_parse(settings_calc_options(x->settings, settings, sizeof settings), &q,
                                                 &ignored) &&
        !query_eval(&q, &v, &ignored))
        queries[n_queries++] = settings;
    return text_typed_numbers(texts, n, queries, n_queries, out, max, e);
}
