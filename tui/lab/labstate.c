/* labstate.c - see labstate.h. */
#include "labstate.h"

#include "atomicfile.h"
#include "jsonfile.h"
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------
 * Reading
 */

/* "NAME, NAME, ..." of n names, for a message. */
static const char *labstate_list(char *buf, size_t size, const char *const *names, size_t n)
{
    buf[0] = '\0';
    for (size_t i = 0, len = 0; i < n && len < size; i++, len = strlen(buf))
        snprintf(buf + len, size - len, "%s%s", i ? ", " : "", names[i]);
    return buf;
}

static const StateScreenInfo *labstate_screen_named(const StateScreenInfo *info, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(info[i].name, name) == 0)
            return &info[i];
    return NULL;
}

static bool labstate_has_label(const StateScreenInfo *info, const char *label)
{
    for (size_t i = 0; i < info->n; i++)
        if (strcmp(info->labels[i], label) == 0)
            return true;
    return false;
}

/* An object of inputs: each member a label of the screen's, once, its
 * value a string. */
static int labstate_load_inputs(const JsonDoc *d, const cJSON *obj, const StateScreenInfo *info,
                                StateInputs *out, Error *e)
{
    char what[96], list[512];
    snprintf(what, sizeof what, "the %s screen's inputs", info->name);
    if (json_object(d, obj, what, e))
        return -1;
    for (const cJSON *c = obj->child; c; c = c->next)
        if (!labstate_has_label(info, c->string))
            return jsondoc_error_key(d, c, e, "the %s screen has no input '%s'; its inputs: %s", info->name,
                                     c->string, labstate_list(list, sizeof list, info->labels, info->n));
    const char *allowed[FIELDS_MAX + 1];        // every label: now only the repeats are refused
    memcpy(allowed, info->labels, info->n * sizeof *allowed);
    allowed[info->n] = NULL;
    if (json_known_fields(d, obj, allowed, e))
        return -1;
    Error where;
    jsondoc_error(d, obj, &where, "%s", "");
    snprintf(out->where, sizeof out->where, "%s", where.msg);
    out->n = 0;
    for (size_t i = 0; i < info->n; i++) {
        StateInput *in = &out->in[out->n];
        int rc = json_string(d, obj, info->labels[i], FIELD_OPTIONAL, in->value, sizeof in->value, e);
        if (rc < 0)
            return -1;
        if (rc > 0)
            continue;
        jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(obj, info->labels[i]), &where, "%s", "");
        snprintf(in->where, sizeof in->where, "%s", where.msg);
        in->label = info->labels[i];
        out->n++;
    }
    return 0;
}

/* The page a screen shows: {"id": ..., "line": N}; the id's place kept
 * for the message where the lab has no page of that id. */
static int labstate_load_page(const JsonDoc *d, const cJSON *obj, const StateScreenInfo *info,
                              StateScreen *out, Error *e)
{
    static const char *const KEYS[] = {"id", "line", NULL};
    char what[96];
    snprintf(what, sizeof what, "the %s screen's page", info->name);
    if (!info->pages)
        return jsondoc_error_key(d, obj, e, "the %s screen shows no pages", info->name);
    if (json_object(d, obj, what, e) || json_known_fields(d, obj, KEYS, e) ||
        json_string(d, obj, "id", FIELD_REQUIRED, out->page, sizeof out->page, e) ||
        json_uint(d, obj, "line", FIELD_OPTIONAL, 0, INT32_MAX, &out->line, e) < 0)
        return -1;
    Error where;
    jsondoc_error(d, cJSON_GetObjectItemCaseSensitive(obj, "id"), &where, "%s", "");
    snprintf(out->page_where, sizeof out->page_where, "%s", where.msg);
    return 0;
}

static int labstate_load_screen(const JsonDoc *d, const cJSON *obj, const StateScreenInfo *info,
                                StateScreen *out, Error *e)
{
    static const char *const KEYS[] = {"inputs", "pinned", "page", NULL};
    char what[96];
    snprintf(what, sizeof what, "the %s screen", info->name);
    if (json_object(d, obj, what, e) || json_known_fields(d, obj, KEYS, e))
        return -1;
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(obj, "inputs");
    const cJSON *pin = cJSON_GetObjectItemCaseSensitive(obj, "pinned");
    const cJSON *page = cJSON_GetObjectItemCaseSensitive(obj, "page");
    if ((in && labstate_load_inputs(d, in, info, &out->inputs, e)) ||
        (page && labstate_load_page(d, page, info, out, e)))
        return -1;
    if (pin && !info->pins)
        return jsondoc_error_key(d, pin, e, "the %s screen has no figures to pin", info->name);
    out->pinned = pin != NULL;
    return pin ? labstate_load_inputs(d, pin, info, &out->pin, e) : 0;
}

/* The screens' names, for a message. */
static const char *labstate_screen_list(char *buf, size_t size, const StateScreenInfo *info, size_t n)
{
    const char *names[LABSTATE_SCREENS];
    for (size_t i = 0; i < n; i++)
        names[i] = info[i].name;
    return labstate_list(buf, size, names, n);
}

int labstate_load(LabState *ls, const char *path, const StateScreenInfo *info, size_t n, Error *e)
{
    static const char *const KEYS[] = {"version", "screen", "screens", NULL};
    JsonDoc d;
    if (jsondoc_load(&d, path, e))
        return -1;
    int rc = -1;
    uint64_t version;
    char shown[64], list[256];
    const cJSON *screens;
    const StateScreenInfo *cur;
    if (json_object(&d, d.root, "a saved lab state", e) || json_known_fields(&d, d.root, KEYS, e) ||
        json_uint(&d, d.root, "version", FIELD_REQUIRED, LABSTATE_VERSION, LABSTATE_VERSION, &version, e) ||
        json_string(&d, d.root, "screen", FIELD_REQUIRED, shown, sizeof shown, e))
        goto done;
    if (!(cur = labstate_screen_named(info, n, shown))) {
        jsondoc_error(&d, cJSON_GetObjectItemCaseSensitive(d.root, "screen"), e,
                      "field 'screen': no screen '%s'; the screens: %s", shown,
                      labstate_screen_list(list, sizeof list, info, n));
        goto done;
    }
    ls->screen = (size_t)(cur - info);
    screens = cJSON_GetObjectItemCaseSensitive(d.root, "screens");
    if (screens && json_object(&d, screens, "field 'screens'", e))
        goto done;
    for (const cJSON *s = screens ? screens->child : NULL; s; s = s->next) {
        const StateScreenInfo *i = labstate_screen_named(info, n, s->string);
        if (!i) {
            jsondoc_error_key(&d, s, e, "no screen '%s'; the screens: %s", s->string,
                              labstate_screen_list(list, sizeof list, info, n));
            goto done;
        }
        for (const cJSON *o = screens->child; o != s; o = o->next)
            if (strcmp(o->string, s->string) == 0) {
                jsondoc_error_key(&d, s, e, "screen '%s' appears twice", s->string);
                goto done;
            }
        if (labstate_load_screen(&d, s, i, &ls->s[i - info], e))
            goto done;
    }
    rc = 0;
done:
    jsondoc_done(&d);
    return rc;
}

/* ------------------------------------------------------------------------
 * Writing
 */

static cJSON *labstate_inputs_json(const StateInputs *in)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; o && i < in->n; i++)
        if (!cJSON_AddStringToObject(o, in->in[i].label, in->in[i].value)) {
            cJSON_Delete(o);
            return NULL;
        }
    return o;
}

/* The state as JSON; NULL when memory runs out. Each object is added to
 * its parent as soon as it is made, so that one delete frees them all. */
static cJSON *labstate_json(const LabState *ls, const StateScreenInfo *info, size_t n)
{
    cJSON *root = cJSON_CreateObject(), *all = NULL;
    bool ok = root && cJSON_AddNumberToObject(root, "version", LABSTATE_VERSION) &&
              cJSON_AddStringToObject(root, "screen", info[ls->screen].name) &&
              (all = cJSON_AddObjectToObject(root, "screens"));
    for (size_t i = 0; ok && i < n; i++) {
        cJSON *s = cJSON_AddObjectToObject(all, info[i].name);
        cJSON *page = NULL;
        ok = s && cJSON_AddItemToObject(s, "inputs", labstate_inputs_json(&ls->s[i].inputs)) &&
             (!ls->s[i].pinned || cJSON_AddItemToObject(s, "pinned", labstate_inputs_json(&ls->s[i].pin))) &&
             (!ls->s[i].page[0] ||
              ((page = cJSON_AddObjectToObject(s, "page")) && cJSON_AddStringToObject(page, "id", ls->s[i].page) &&
               cJSON_AddNumberToObject(page, "line", (double)ls->s[i].line)));
    }
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

int labstate_save(const LabState *ls, const char *path, const StateScreenInfo *info, size_t n, Error *e)
{
    cJSON *root = labstate_json(ls, info, n);
    char *text = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text)
        return error_runtime(e, "out of memory");
    int rc = atomicfile_write(path, text, e);
    cJSON_free(text);
    return rc;
}

/* ------------------------------------------------------------------------
 * Where files go
 */

int labstate_path(const char *typed, char *out, size_t n, Error *e)
{
    if (strchr(typed, '/')) {
        if ((size_t)snprintf(out, n, "%s", typed) >= n)
            return error_set(e, "the path is too long");
        return 0;
    }
    char dir[PROGRESS_PATH_MAX];        // kvlab's own: where the progress file is
    if (progress_path(dir, sizeof dir, e))
        return error_prefix(e, "type a path with a '/'");
    *strrchr(dir, '/') = '\0';
    char name[128];
    if (!*typed) {
        time_t t = time(NULL);
        strftime(name, sizeof name, "lab-%Y%m%d-%H%M%S.json", localtime(&t));
    } else {
        snprintf(name, sizeof name, "%s%s", typed, strchr(typed, '.') ? "" : ".json");
    }
    if ((size_t)snprintf(out, n, "%s/%s", dir, name) >= n)
        return error_set(e, "the path is too long");
    return 0;
}
