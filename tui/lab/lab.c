/* lab.c - the run loop, the shared parts of the screen, keys, help and
 * export. Screens live in screen_*.c. */
#include "lab.h"

#include "crt.h"
#include "doc.h"
#include "labstate.h"
#include "paths.h"
#include "plotmath.h"
#include "screens.h"
#include "teach.h"
#include "tui/text.h"

#include <curses.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIN_W 80
#define MIN_H 24
#define FIELD_W 34              // the field pane on the left
#define VALUE_W (FIELD_W - 14)  // the widest value shown, right of its label
#define HELP_W 100              // the help box, at most
#define HELP_KEY_W 12           // the help's column of keys
#define POLL_MS 250             // how often the loop wakes with no key, to notice signals

/* ------------------------------------------------------------------------
 * The screens: one row each.
 */

static const ScreenDef *const SCREENS[] = {&SCREEN_LESSONS, &SCREEN_SCENARIOS, &SCREEN_CALC, &SCREEN_QUANT,
                                           &SCREEN_GPU, &SCREEN_NIAH};
#define N_SCREENS (sizeof SCREENS / sizeof SCREENS[0])
_Static_assert(N_SCREENS <= LABSTATE_SCREENS, "a saved lab state holds every screen");

/* A screen's settings (its fields' values), as bytes: to put back. */
typedef struct {
    size_t screen, n;
    unsigned char value[FIELDS_MAX][sizeof(FieldContexts)];      // the largest field value
} Settings;

struct Lab {
    size_t cur;                         // the screen shown
    void *state[N_SCREENS];
    Field fields[FIELDS_MAX];           // the current screen's fields
    size_t n_fields;
    size_t sel[N_SCREENS];              // selected field, per screen
    int scroll[N_SCREENS];              // first line of the view's scrolled part, per screen
    int pane;                           // 0: fields, 1: the view
    bool editing;
    char edit[64];
    const char *prompt;                 // the status line asks for a line after this; NULL: not
    PromptDone prompt_done;
    void *prompt_ctx;
    char answer[PATHS_LEN];             // what is typed there
    Settings origin[N_SCREENS];         // the inputs each screen started with (reset)
    Settings start[N_SCREENS];          // the inputs it was made with: a page's settings apply over them
    bool pinned[N_SCREENS];
    StateInputs pin[N_SCREENS];         // the inputs the pinned figures came from
    char status[256];
    bool status_error;
    /* The box over the screen (the help, an exercise, a glossary entry). */
    bool popup;
    char popup_title[160];
    DocLayout popup_layout;
    void *popup_st;
    PopupKey popup_key;
    int popup_scroll;                   // its first line shown
    size_t back;                        // 1 + the screen Esc goes back to; 0: none
    bool quit;
    int tab_x[N_SCREENS + 1];           // tab boundaries on row 0, for the mouse
    FILE *frame_log;                    // KVLAB_FRAME_LOG: draw times, for benchmarks
    double started;
    bool first_frame_logged;
};

static double lab_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void lab_status(Lab *lab, bool error, const char *fmt, ...)
{
    char raw[sizeof lab->status];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    text_escape(lab->status, sizeof lab->status, raw, false);   // messages quote files and paths
    lab->status_error = error;
}

void *lab_state_new(size_t size, Error *e)
{
    void *st = calloc(1, size);
    if (!st)
        error_set(e, "out of memory");
    return st;
}

static void lab_load_fields(Lab *lab)
{
    const ScreenDef *s = SCREENS[lab->cur];
    lab->n_fields = s->fields(lab->state[lab->cur], lab->fields);
    if (lab->sel[lab->cur] >= lab->n_fields)
        lab->sel[lab->cur] = lab->n_fields ? lab->n_fields - 1 : 0;
}

/* Bytes a field's value takes, to keep a copy of it. */
static size_t lab_value_size(const Field *f)
{
    switch (f->kind) {
    case FK_SIZE:
    case FK_RATE:
        return sizeof(u128);
    case FK_CHOICE:
        return sizeof(int);
    case FK_TOGGLE:
        return sizeof(bool);
    case FK_FLOAT:
        return sizeof(float);
    case FK_CONTEXTS:
        return sizeof(FieldContexts);
    default:
        return sizeof(uint64_t);
    }
}

static void lab_save_settings(const Lab *lab, Settings *st)
{
    st->screen = lab->cur, st->n = lab->n_fields;
    for (size_t i = 0; i < st->n; i++)
        memcpy(st->value[i], lab->fields[i].value, lab_value_size(&lab->fields[i]));
}

/* Recomputes the current screen's figures. After a key that changed
 * settings (a field, or a screen's own key; `before`, else NULL), if the
 * figures cannot be computed with them, the settings before the key come
 * back, with their figures, and the message stays. */
/* Puts the current screen's settings back as st kept them. */
static void lab_restore_settings(Lab *lab, const Settings *st)
{
    for (size_t i = 0; i < st->n && i < lab->n_fields; i++)
        memcpy(lab->fields[i].value, st->value[i], lab_value_size(&lab->fields[i]));
}

static void lab_recompute_or_restore(Lab *lab, const Settings *before)
{
    Error e;
    const ScreenDef *s = SCREENS[lab->cur];
    const int failed = s->recompute(lab->state[lab->cur], &e) != 0;
    if (failed && before && before->screen == lab->cur) {
        lab_restore_settings(lab, before);
        lab_status(lab, true, "%s (kept the previous value)", e.msg);
        Error again;
        s->recompute(lab->state[lab->cur], &again);
    } else if (failed) {
        lab_status(lab, true, "%s", e.msg);
    }
    lab_load_fields(lab);
}

/* Applies a change to the selected field, then asks for the figures
 * (lab_recompute_or_restore puts the old value back if they fail). */
static int lab_change(Lab *lab, int (*apply)(Lab *lab, Field *f, Error *e))
{
    Field *f = &lab->fields[lab->sel[lab->cur]];
    Error e;
    if (apply(lab, f, &e)) {
        lab_status(lab, true, "%s", e.msg);
        return KEY_REDRAW;
    }
    lab->status[0] = '\0';
    if (f->kind == FK_CHOICE)           // another scenario, model ...: new content, from its top
        lab->scroll[lab->cur] = 0;
    return KEY_RECOMPUTE | KEY_REDRAW;
}

/* ------------------------------------------------------------------------
 * The view and its scrolling
 */

/* The view: right of the inputs, or the whole width for a screen
 * without any. */
static Rect lab_view_rect(const Lab *lab)
{
    if (!lab->n_fields)
        return (Rect){1, 1, LINES - 3, COLS - 2};
    return (Rect){1, FIELD_W + 1, LINES - 3, COLS - FIELD_W - 2};
}

/* Lines of the current screen's view. */
static int lab_view_lines(const Lab *lab)
{
    return doc_view_lines(lab_view_rect(lab), SCREENS[lab->cur]->layout, lab->state[lab->cur]);
}

/* Whether the view has more lines than its window: something to scroll. */
static bool lab_view_scrolls(const Lab *lab)
{
    return lab_view_lines(lab) > lab_view_rect(lab).h;
}

/* Moves *first, the first line a window of h lines shows of `lines`, as
 * a scrolling key asks (Up k, Down j: a line; PgUp, PgDn: a page), never
 * past the ends; false for any other key. A page is the window less its
 * two marked rows: the first line the next page shows unmarked is the one
 * after the last that this page showed unmarked. */
static bool lab_scroll_by_key(int *first, int lines, int h, int ch)
{
    static const struct {
        int key, dir;
        bool page;
    } BY[] = {{KEY_UP, -1, false},  {'k', -1, false},      {KEY_DOWN, 1, false},
              {'j', 1, false},      {KEY_PPAGE, -1, true}, {KEY_NPAGE, 1, true}};
    for (size_t i = 0; i < sizeof BY / sizeof BY[0]; i++)
        if (BY[i].key == ch) {
            const int page = h > 2 ? h - 2 : 1;
            *first = scroll_clamp(*first + BY[i].dir * (BY[i].page ? page : 1), lines, h);
            return true;
        }
    return false;
}

/* ------------------------------------------------------------------------
 * Keys: one table, used both to act and to list them in the help.
 */

typedef struct {
    int codes[4];               // 0-terminated
    const char *name;
    const char *what;
    int (*act)(Lab *lab, int ch);
} GlobalKey;

static void lab_help_doc(void *st, Doc *d);

static int lab_act_help(Lab *lab, int ch)
{
    (void)ch;
    lab_popup(lab, "Help: every key", lab_help_doc, lab, NULL);
    return KEY_REDRAW;
}

static int lab_act_quit(Lab *lab, int ch)
{
    (void)ch;
    lab->quit = true;
    return KEY_HANDLED;
}

int lab_measure_key(int ch, bool *show_stored, int (*run)(void *st, Lab *lab), void *st, Lab *lab)
{
    if (ch == 's') {
        *show_stored = !*show_stored;
        return KEY_REDRAW;
    }
    return ch == 'r' ? run(st, lab) : KEY_IGNORED;
}

const BarKey LAB_MEASURE_BAR[LAB_MEASURE_BAR_N] = {
    {"F1", "Help"}, {"Enter", "Edit"}, {"r", "Run"}, {"s", "Stored"}, {"Tab", "Pane"},
    {"R", "Reset"}, {"S", "Save"},     {"e", "Export"}, {"q", "Quit"},
};

static void lab_switch_to(Lab *lab, size_t i)
{
    if (i >= N_SCREENS || i == lab->cur)
        return;
    lab->back = 0;                      // chosen, not opened from a page: Esc stays
    lab->cur = i;
    lab->pane = 0;
    lab->status[0] = '\0';
    lab_load_fields(lab);
}

static int lab_act_screen(Lab *lab, int ch)
{
    lab_switch_to(lab, (size_t)(ch - KEY_F(2)));
    return KEY_REDRAW;
}

static int lab_act_pane(Lab *lab, int ch)
{
    (void)ch;
    if (!lab->pane && !lab_view_scrolls(lab)) {
        lab_status(lab, false, "this screen fits its window: there is nothing to scroll");
        return KEY_REDRAW;
    }
    lab->pane = !lab->pane;
    return KEY_REDRAW;
}

static int lab_act_page(Lab *lab, int ch)
{
    lab_scroll_by_key(&lab->scroll[lab->cur], lab_view_lines(lab), lab_view_rect(lab).h, ch);
    return KEY_REDRAW;
}

static int lab_act_cycle(Lab *lab, int ch)
{
    lab_switch_to(lab, (lab->cur + (ch == ']' ? 1 : N_SCREENS - 1)) % N_SCREENS);
    return KEY_REDRAW;
}

static int lab_act_move(Lab *lab, int ch)
{
    int dir = (ch == KEY_UP || ch == 'k') ? -1 : 1;
    if (lab->pane == 1 || !lab->n_fields) {
        lab_scroll_by_key(&lab->scroll[lab->cur], lab_view_lines(lab), lab_view_rect(lab).h, ch);
        return KEY_REDRAW;
    }
    size_t *sel = &lab->sel[lab->cur];
    if (dir < 0 && *sel > 0)
        (*sel)--;
    else if (dir > 0 && *sel + 1 < lab->n_fields)
        (*sel)++;
    return KEY_REDRAW;
}

static int lab_step_down(Lab *lab, Field *f, Error *e)
{
    (void)lab, (void)e;
    field_step(f, -1);
    return 0;
}

static int lab_step_up(Lab *lab, Field *f, Error *e)
{
    (void)lab, (void)e;
    field_step(f, 1);
    return 0;
}

static int lab_act_step(Lab *lab, int ch)
{
    if (!lab->n_fields)
        return KEY_IGNORED;
    bool down = ch == KEY_LEFT || ch == 'h' || ch == '-';
    return lab_change(lab, down ? lab_step_down : lab_step_up);
}

static int lab_act_edit(Lab *lab, int ch)
{
    if (!lab->n_fields)
        return KEY_IGNORED;
    const Field *f = &lab->fields[lab->sel[lab->cur]];
    if (!field_typeable(f))
        return lab_act_step(lab, '+');          // Enter on a choice moves it on
    lab->editing = true;
    lab->pane = 0;
    lab->edit[0] = '\0';
    if (ch != '\n' && ch != '\r' && ch != KEY_ENTER)
        snprintf(lab->edit, sizeof lab->edit, "%c", ch);
    lab_status(lab, false, "type a value with its unit (8k, 20GiB, 3.35TB/s); Enter keeps it, "
                           "Esc cancels");
    return KEY_REDRAW;
}

static int lab_act_export(Lab *lab, int ch);
static int lab_act_glossary(Lab *lab, int ch);
static int lab_act_reset(Lab *lab, int ch);
static int lab_act_pin(Lab *lab, int ch);
static int lab_act_save(Lab *lab, int ch);

static const GlobalKey KEYS[] = {
    {{KEY_F(1), '?', 0}, "F1 ?", "this help", lab_act_help},
    {{KEY_F(2), 0}, "F2", "the Lessons screen", lab_act_screen},
    {{KEY_F(3), 0}, "F3", "the Scenarios screen", lab_act_screen},
    {{KEY_F(4), 0}, "F4", "the Calculator screen", lab_act_screen},
    {{KEY_F(5), 0}, "F5", "the Quantization error screen", lab_act_screen},
    {{KEY_F(6), 0}, "F6", "the GPU lab screen", lab_act_screen},
    {{KEY_F(7), 0}, "F7", "the NIAH screen", lab_act_screen},
    {{'[', ']', 0}, "[ ]", "the previous or next screen", lab_act_cycle},
    {{'\t', KEY_BTAB, 0}, "Tab", "move between the inputs and the view (to scroll it)", lab_act_pane},
    {{KEY_UP, 'k', 0}, "Up k", "previous input, or scroll the view up", lab_act_move},
    {{KEY_DOWN, 'j', 0}, "Down j", "next input, or scroll the view down", lab_act_move},
    {{KEY_PPAGE, KEY_NPAGE, 0}, "PgUp PgDn", "scroll the view a page up or down", lab_act_page},
    {{KEY_LEFT, 'h', '-', 0}, "Left h -", "step the input down (choices: previous)", lab_act_step},
    {{KEY_RIGHT, 'l', '+', '='}, "Right l +", "step the input up (choices: next)", lab_act_step},
    {{'\n', '\r', KEY_ENTER, 0}, "Enter", "type a new value (or next choice); Enter keeps it, "
                                           "Esc cancels, Backspace erases; auto restores a default; "
                                           "Enter with nothing typed changes nothing",
     lab_act_edit},
    {{'0', 0}, "0-9 .", "start typing a value straight away: 8k, 20GiB", lab_act_edit},
    {{'e', 0}, "e", "export this screen: CSV data and an SVG chart", lab_act_export},
    {{'G', 0}, "G", "the glossary's entry for the selected input, or with the view selected (Tab) "
                    "for its table's columns (on the Lessons screen: every term)",
     lab_act_glossary},
    {{'R', 0}, "R", "reset: every input of this screen back to its scenario's (or first) value",
     lab_act_reset},
    {{'P', 0}, "P", "pin the figures as a baseline: the screen then shows how the live figures "
                    "differ from it (more memory, fewer sequences); P again unpins",
     lab_act_pin},
    {{'S', 0}, "S", "save the lab (screen, inputs, pins) to a file: a name, a path, or Enter for a "
                    "dated file in kvlab's data directory; kvlab --open FILE reopens it",
     lab_act_save},
    {{'q', KEY_F(10), 0}, "q F10", "quit", lab_act_quit},
};

#define N_KEYS (sizeof KEYS / sizeof KEYS[0])

static int lab_global_key(Lab *lab, int ch)
{
    if ((ch >= '0' && ch <= '9') || ch == '.') {
        if (lab->n_fields && field_typeable(&lab->fields[lab->sel[lab->cur]]))
            return lab_act_edit(lab, ch);
        return KEY_IGNORED;
    }
    for (size_t i = 0; i < N_KEYS; i++)
        for (size_t k = 0; k < 4 && KEYS[i].codes[k]; k++)
            if (KEYS[i].codes[k] == ch)
                return KEYS[i].act(lab, ch);
    return KEY_IGNORED;
}

static int lab_parse_edit(Lab *lab, Field *f, Error *e)
{
    return field_parse(f, lab->edit, e);
}

static int lab_edit_key(Lab *lab, int ch)
{
    size_t n = strlen(lab->edit);
    if (ch == CRT_ESC) {
        lab->editing = false;
        lab->status[0] = '\0';
    } else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        lab->editing = false;
        if (!n) {                                       // nothing typed: nothing changes
            const Field *f = &lab->fields[lab->sel[lab->cur]];
            char val[80];
            lab_status(lab, false, "nothing typed: %s stays %s", f->label, field_text(f, val, sizeof val));
            return KEY_REDRAW;
        }
        return lab_change(lab, lab_parse_edit);
    } else if (ch == KEY_BACKSPACE || ch == CRT_DEL || ch == CRT_CTRL_H) {
        if (n)
            lab->edit[n - 1] = '\0';
    } else if (ch >= ' ' && ch < CRT_DEL && n + 1 < sizeof lab->edit) {     // printable ASCII
        lab->edit[n] = (char)ch;
        lab->edit[n + 1] = '\0';
    }
    return KEY_REDRAW;
}

static int lab_mouse_key(Lab *lab)
{
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return KEY_IGNORED;
    if (ev.y == 0) {
        for (size_t i = 0; i < N_SCREENS; i++)
            if (ev.x >= lab->tab_x[i] && ev.x < lab->tab_x[i + 1])
                lab_switch_to(lab, i);
        return KEY_REDRAW;
    }
    int row = ev.y - 2;                                 // fields start on row 2
    if (ev.x < FIELD_W && row >= 0 && (size_t)row < lab->n_fields) {
        lab->sel[lab->cur] = (size_t)row;
        lab->pane = 0;
        return KEY_REDRAW;
    }
    return KEY_IGNORED;
}

/* ------------------------------------------------------------------------
 * The prompt in the status line, and the box over the screen
 */

void lab_prompt(Lab *lab, const char *label, PromptDone done, void *ctx)
{
    lab->prompt = label;
    lab->prompt_done = done;
    lab->prompt_ctx = ctx;
    lab->answer[0] = '\0';
    lab->status[0] = '\0';
}

/* A key while the status line asks for a line: Enter hands it over, Esc
 * cancels, Backspace erases, printable characters are typed. */
static int lab_prompt_key(Lab *lab, int ch)
{
    size_t n = strlen(lab->answer);
    if (ch == CRT_ESC) {
        lab->prompt = NULL;
        lab_status(lab, false, "cancelled");
    } else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        lab->prompt = NULL;
        lab->prompt_done(lab->prompt_ctx, lab, lab->answer);
    } else if (ch == KEY_BACKSPACE || ch == CRT_DEL || ch == CRT_CTRL_H) {
        if (n)
            lab->answer[n - 1] = '\0';
    } else if (ch >= ' ' && ch < CRT_DEL && n + 1 < sizeof lab->answer) {
        lab->answer[n] = (char)ch;
        lab->answer[n + 1] = '\0';
    }
    return KEY_REDRAW;
}

/* The status line while it asks: the label, then as much of the end of
 * what is typed as fits, and the cursor. */
static void lab_draw_prompt(Lab *lab, int y, int w)
{
    char line[512 + sizeof lab->answer];
    const size_t len = strlen(lab->answer), used = text_columns(lab->prompt) + 1;
    const size_t room = (size_t)w > used ? (size_t)w - used : 0;
    snprintf(line, sizeof line, "%s%s_", lab->prompt, lab->answer + (len > room ? len - room : 0));
    put_text(y, 1, w, crt_attr(ROLE_EDIT), line);
}

void lab_popup(Lab *lab, const char *title, DocLayout layout, void *st, PopupKey key)
{
    lab->popup = true;
    snprintf(lab->popup_title, sizeof lab->popup_title, "%s", title);
    lab->popup_layout = layout;
    lab->popup_st = st;
    lab->popup_key = key;
    lab->popup_scroll = 0;
}

/* The box, and the window its lines scroll in. */
static Rect lab_popup_box(Rect *win)
{
    int w = COLS - 8 < HELP_W ? COLS - 8 : HELP_W, h = LINES - 4;
    Rect r = {2, (COLS - w) / 2, h, w};
    *win = (Rect){r.y + 2, r.x + 2, r.h - 2, r.w - 4};
    return r;
}

static int lab_popup_lines(Lab *lab)
{
    Rect win;
    lab_popup_box(&win);
    return doc_view_lines(win, lab->popup_layout, lab->popup_st);
}

static void lab_draw_popup(Lab *lab)
{
    Rect win, r = lab_popup_box(&win);
    int lines = lab_popup_lines(lab);
    attron(crt_attr(ROLE_NORMAL));
    for (int y = r.y; y < r.y + r.h; y++)
        mvhline(y, r.x, ' ', r.w);
    attroff(crt_attr(ROLE_NORMAL));
    char title[256];
    snprintf(title, sizeof title, "%s (%s)", lab->popup_title,
             lines > win.h ? "Up, Down, PgUp, PgDn scroll; other keys close"
                           : lab->popup_key ? "Esc closes" : "any key closes this");
    draw_title((Rect){r.y, r.x + 1, 1, r.w - 2}, title);
    doc_view(win, lab->popup_scroll, lines, lab->popup_layout, lab->popup_st);
    doc_marks(win, lab->popup_scroll, lines, "Down");
}

/* A key while the box is open: the arrows and pages scroll it when it
 * does not fit, its own keys act, and any other key closes it. */
static int lab_popup_handle(Lab *lab, int ch)
{
    Rect win;
    lab_popup_box(&win);
    int lines = lab_popup_lines(lab);
    if (lines > win.h && lab_scroll_by_key(&lab->popup_scroll, lines, win.h, ch))
        return KEY_REDRAW;
    int flags = lab->popup_key ? lab->popup_key(lab->popup_st, ch, lab) : KEY_IGNORED;
    if (flags != KEY_IGNORED)
        return flags | KEY_REDRAW;
    lab->popup = false;
    lab->popup_scroll = 0;
    return KEY_REDRAW;
}

/* ------------------------------------------------------------------------
 * For lessons: a screen opened with a page's settings, scrolling to a
 * focused item, the glossary
 */

void lab_scroll_to(Lab *lab, int line)
{
    const int h = lab_view_rect(lab).h, first = lab->scroll[lab->cur];
    if (line <= first)                          // clear of the mark that says more lies above
        lab->scroll[lab->cur] = line > 0 ? line - 1 : 0;
    else if (line >= first + h - 2)             // and of the one below
        lab->scroll[lab->cur] = line - h / 3;
    lab->scroll[lab->cur] = scroll_clamp(lab->scroll[lab->cur], lab_view_lines(lab), h);
}

static size_t lab_screen_by_id(const char *id)
{
    for (size_t i = 0; i < N_SCREENS; i++)
        if (SCREENS[i]->id && strcmp(SCREENS[i]->id, id) == 0)
            return i;
    return N_SCREENS;
}

static const ScreenOption *lab_option(const ScreenDef *def, const char *name)
{
    for (size_t i = 0; i < def->n_options; i++)
        if (name ? def->options[i].option && strcmp(def->options[i].option, name) == 0 : !def->options[i].option)
            return &def->options[i];
    return NULL;
}

static StateInput *lab_input_of(StateInputs *in, const char *label)
{
    for (size_t k = 0; k < in->n; k++)
        if (strcmp(in->in[k].label, label) == 0)
            return &in->in[k];
    return NULL;
}

/* Sets the input `label` to value, added where it is not there yet. */
static int lab_set_input(StateInputs *in, const char *label, const char *value, Error *e)
{
    StateInput *v = lab_input_of(in, label);
    if (!v && in->n == FIELDS_MAX)
        return error_set(e, "more than %d inputs", FIELDS_MAX);
    if (!v)
        v = &in->in[in->n++];
    v->label = label;
    v->where[0] = '\0';
    snprintf(v->value, sizeof v->value, "%s", value);
    return 0;
}

/* The inputs that a command line's words set on screen def, as a saved
 * state holds them; the options it has no input for, named in `ignored`. */
static int lab_options_inputs(const ScreenDef *def, const char *options, StateInputs *in, char *ignored,
                              size_t n, Error *e)
{
    char copy[1024], *words[64];
    size_t nw = 0;
    snprintf(copy, sizeof copy, "%s", options);
    for (char *t = strtok(copy, " \t\r\n"); t && nw < sizeof words / sizeof words[0]; t = strtok(NULL, " \t\r\n"))
        words[nw++] = t;
    in->n = 0;
    ignored[0] = '\0';
    for (size_t i = 0; i < nw; i++) {
        char *name = words[i], *value = NULL, *eq = strchr(name, '=');
        const bool dashed = strncmp(name, "--", 2) == 0;
        if (dashed && eq)
            *eq = '\0', value = eq + 1;
        const ScreenOption *o = lab_option(def, dashed ? name : NULL);
        if (o && o->arg && !value) {
            if (i + 1 == nw)
                return error_set(e, "%s needs a value", name);
            value = words[++i];
        } else if (!o && dashed && !value && i + 1 < nw && strncmp(words[i + 1], "--", 2) != 0) {
            i++;                                    // its value goes with it
        }
        if (!o) {
            size_t len = strlen(ignored);
            if (!strstr(ignored, name))
                snprintf(ignored + len, n - len, "%s%s", len ? " " : "", name);
            continue;
        }
        StateInput *had = dashed && o->arg && !o->value ? lab_input_of(in, o->label) : NULL;
        if (had) {                                  // repeated (kvlab niah's --format): the list of its values
            size_t len = strlen(had->value);
            if (len + 1 + strlen(value) >= sizeof had->value)
                return error_set(e, "%s: the list is too long", name);
            snprintf(had->value + len, sizeof had->value - len, ",%s", value);
        } else if (lab_set_input(in, o->label, o->value ? o->value : dashed ? value : name, e)) {
            return -1;
        }
    }
    for (size_t i = 0; def->option_input && i < in->n; i++) {
        const char *v = def->option_input(in->in[i].label, in->in[i].value);
        if (v != in->in[i].value)
            snprintf(in->in[i].value, sizeof in->in[i].value, "%s", v);
    }
    for (size_t i = 0; i < def->n_options; i++)     // what the command takes where it is not given
        if (def->options[i].absent && !lab_input_of(in, def->options[i].label) &&
            lab_set_input(in, def->options[i].label, def->options[i].absent, e))
            return -1;
    return 0;
}

static int lab_apply(Lab *lab, const StateInputs *in, Error *e);
static int lab_apply_to(const ScreenDef *s, void *st, const StateInputs *in, Error *e);

/* The screen a widget or exercise names: the calculator has no scenario
 * input, so a calc widget that starts from a scenario shows it where
 * scenarios are, with its figures. N_SCREENS where none has the id. */
static size_t lab_widget_screen(const char *id, const char *options)
{
    size_t to = lab_screen_by_id(id);
    if (to < N_SCREENS && !strcmp(id, "calc") && strstr(options, "--scenario"))
        to = lab_screen_by_id("scenarios");
    return to;
}

void *lab_preview(const char *id, const char *options, const ScreenDef **def, Error *e)
{
    const size_t i = lab_widget_screen(id, options);
    if (i == N_SCREENS) {
        error_set(e, "no screen '%s'", id);
        return NULL;
    }
    static StateInputs in;
    char ignored[256];
    void *st;
    if (lab_options_inputs(SCREENS[i], options, &in, ignored, sizeof ignored, e) || !(st = SCREENS[i]->create(e)))
        return NULL;
    Error why;
    if (SCREENS[i]->recompute(st, &why) || lab_apply_to(SCREENS[i], st, &in, &why)) {
        SCREENS[i]->destroy(st);
        error_set(e, "%s", why.msg);
        return NULL;
    }
    *def = SCREENS[i];
    return st;
}

void *lab_screen_state(Lab *lab, const char *id, const ScreenDef **def)
{
    const size_t i = lab_screen_by_id(id);
    if (i == N_SCREENS)
        return NULL;
    *def = SCREENS[i];
    return lab->state[i];
}

int lab_open_screen(Lab *lab, const char *id, const char *options, Error *e)
{
    const size_t to = lab_widget_screen(id, options);
    if (to == N_SCREENS)
        return error_set(e, "no screen '%s'", id);
    static StateInputs in;
    char ignored[256];
    if (lab_options_inputs(SCREENS[to], options, &in, ignored, sizeof ignored, e))
        return -1;
    const size_t from = lab->cur;
    const ScreenDef *s = SCREENS[to];
    Error why;
    lab->cur = to;
    lab_load_fields(lab);
    if (s->reset)
        s->reset(lab->state[to]);
    else                        // not another page's settings: as a preview of the page has it
        lab_restore_settings(lab, &lab->start[to]);
    if (s->recompute(lab->state[to], &why) || lab_apply(lab, &in, &why)) {
        lab->cur = from;
        lab_load_fields(lab);
        return error_set(e, "%s", why.msg);
    }
    lab_save_settings(lab, &lab->origin[to]);          // R comes back to the page's settings
    lab->scroll[to] = 0;
    lab->pane = 0;
    lab->back = from + 1;
    if (ignored[0])
        lab_status(lab, false, "the page's settings, but for %s; Esc: back to the page", ignored);
    else
        lab_status(lab, false, "the page's settings; Esc goes back to the page");
    return 0;
}

static const GlossaryEntry *lab_glossary_entry(const Glossary *g, const char *label);

/* The entry the glossary box shows. */
static void lab_glossary_doc(void *st, Doc *d)
{
    const GlossaryEntry *g = st;
    char text[GLOSSARY_DEFINITION_MAX * 2], line[1024];
    Error e;
    doc_text(d, 0, crt_attr(ROLE_NORMAL), exercise_text(g->definition, text, sizeof text, &e) ? e.msg : text);
    size_t len = 0;
    line[0] = '\0';
    for (size_t i = 0; i < g->n_aliases && len < sizeof line; i++, len = strlen(line))
        snprintf(line + len, sizeof line - len, "%s%s", i ? ", " : "also written: ", g->aliases[i]);
    if (len)
        doc_text(d, 0, crt_attr(ROLE_DIM), line);
    len = 0;
    line[0] = '\0';
    for (size_t i = 0; i < g->n_see && len < sizeof line; i++, len = strlen(line))
        snprintf(line + len, sizeof line - len, "%s%s", i ? ", " : "see also: ", g->see[i]);
    if (len)
        doc_text(d, 0, crt_attr(ROLE_DIM), line);
    if (g->lesson[0]) {
        snprintf(line, sizeof line, "taught in the lesson %s (F2)", g->lesson);
        doc_text(d, 0, crt_attr(ROLE_DIM), line);
    }
}

void lab_glossary(Lab *lab, const char *term)
{
    Error e;
    if (teach_load(&e)) {
        lab_status(lab, true, "no glossary: %s", e.msg);
        return;
    }
    const GlossaryEntry *ge = lab_glossary_entry(teach_context()->glossary, term);
    if (!ge) {
        lab_status(lab, false, "the glossary has no entry for '%s'", term);
        return;
    }
    char title[GLOSSARY_TERM_MAX + 16];
    snprintf(title, sizeof title, "Glossary: %s", ge->term);
    lab_popup(lab, title, lab_glossary_doc, (void *)ge, NULL);
}

/* Every term of the glossary, for the Lessons screen's G. */
static void lab_glossary_all_doc(void *st, Doc *d)
{
    const Glossary *g = st;
    char text[GLOSSARY_DEFINITION_MAX * 2];
    Error e;
    for (size_t i = 0; i < g->n; i++)
        doc_pair(d, HELP_KEY_W + 6, crt_attr(ROLE_FIELD), g->entries[i].term, crt_attr(ROLE_NORMAL),
                 exercise_text(g->entries[i].definition, text, sizeof text, &e) ? e.msg : text);
}

/* The entry of a label: its own, else its last word's ("KIVI residual":
 * "residual"); NULL when neither has one. */
static const GlossaryEntry *lab_glossary_entry(const Glossary *g, const char *label)
{
    const GlossaryEntry *ge = glossary_find(g, label);
    const char *last = strrchr(label, ' ');
    return ge || !last ? ge : glossary_find(g, last + 1);
}

/* The columns of the view's table, each with its entry. */
static struct {
    size_t n;
    const GlossaryEntry *entry[TABLE_COLS];
    char missing[256];          // the columns without one
} lab_columns;

static void lab_columns_doc(void *st, Doc *d)
{
    (void)st;
    char text[GLOSSARY_DEFINITION_MAX * 2];
    Error e;
    for (size_t i = 0; i < lab_columns.n; i++)
        doc_pair(d, HELP_KEY_W + 4, crt_attr(ROLE_FIELD), lab_columns.entry[i]->term, crt_attr(ROLE_NORMAL),
                 exercise_text(lab_columns.entry[i]->definition, text, sizeof text, &e) ? e.msg : text);
    if (lab_columns.missing[0])
        doc_text(d, 0, crt_attr(ROLE_DIM), lab_columns.missing);
}

/* The glossary of the columns of the view's table, in a box. */
static void lab_glossary_columns(Lab *lab, const Table *t)
{
    const Glossary *g = teach_context()->glossary;
    lab_columns.n = 0;
    lab_columns.missing[0] = '\0';
    for (size_t c = 0; c < t->cols; c++) {
        const char *name = cell_text(table_at(t, 0, c));
        const GlossaryEntry *ge = lab_glossary_entry(g, name);
        size_t len = strlen(lab_columns.missing);
        if (ge)
            lab_columns.entry[lab_columns.n++] = ge;
        else
            snprintf(lab_columns.missing + len, sizeof lab_columns.missing - len, "%s%s",
                     len ? ", " : "plain words, no entry: ", name);
    }
    lab_popup(lab, "Glossary: the columns", lab_columns_doc, NULL, NULL);
}

static int lab_act_glossary(Lab *lab, int ch)
{
    (void)ch;
    Error e;
    const ScreenDef *s = SCREENS[lab->cur];
    const Table *t = s->columns && lab->pane == 1 ? s->columns(lab->state[lab->cur]) : NULL;
    if (lab->n_fields && lab->pane == 0)
        lab_glossary(lab, lab->fields[lab->sel[lab->cur]].label);
    else if (teach_load(&e))
        lab_status(lab, true, "no glossary: %s", e.msg);
    else if (t && t->rows)
        lab_glossary_columns(lab, t);
    else
        lab_popup(lab, "Glossary", lab_glossary_all_doc, (void *)teach_context()->glossary, NULL);
    return KEY_REDRAW;
}

/* ------------------------------------------------------------------------
 * For demos: reset, the pinned baseline, saving and opening the lab
 */

static int lab_act_reset(Lab *lab, int ch)
{
    (void)ch;
    const ScreenDef *s = SCREENS[lab->cur];
    if (s->reset)
        s->reset(lab->state[lab->cur]);
    else
        lab_restore_settings(lab, &lab->origin[lab->cur]);
    lab->scroll[lab->cur] = 0;
    lab_status(lab, false, "every input is back to %s", s->origin ? s->origin : "its first value");
    return KEY_RECOMPUTE | KEY_REDRAW;
}

/* The current screen's inputs as text (field_save_text). */
static void lab_capture(const Lab *lab, StateInputs *out)
{
    out->n = lab->n_fields;
    for (size_t i = 0; i < lab->n_fields; i++) {
        out->in[i].label = lab->fields[i].label;
        field_save_text(&lab->fields[i], out->in[i].value, sizeof out->in[i].value);
    }
}

static int lab_act_pin(Lab *lab, int ch)
{
    (void)ch;
    const ScreenDef *s = SCREENS[lab->cur];
    const bool on = !lab->pinned[lab->cur];
    Error e;
    if (!s->pin) {
        lab_status(lab, false, "the %s screen has no figures to pin", s->name);
    } else if (s->pin(lab->state[lab->cur], on, &e)) {
        lab_status(lab, true, "nothing pinned: %s", e.msg);
    } else {
        lab->pinned[lab->cur] = on;
        if (on)
            lab_capture(lab, &lab->pin[lab->cur]);
        lab_status(lab, false, on ? "pinned: change the inputs to see the figures move from these (P unpins)"
                                  : "unpinned");
    }
    return KEY_REDRAW;
}

/* What a saved state may name: each screen, whether it pins, its inputs. */
static void lab_state_info(Lab *lab, StateScreenInfo *info)
{
    for (size_t i = 0; i < N_SCREENS; i++) {
        Field f[FIELDS_MAX];
        info[i].name = SCREENS[i]->name;
        info[i].pins = SCREENS[i]->pin != NULL;
        info[i].pages = SCREENS[i]->page != NULL;
        info[i].n = SCREENS[i]->fields(lab->state[i], f);
        for (size_t k = 0; k < info[i].n; k++)
            info[i].labels[k] = f[k].label;
    }
}

static void lab_save(Lab *lab)
{
    static LabState ls;
    StateScreenInfo info[N_SCREENS];
    char path[PATHS_LEN];
    Error e;
    memset(&ls, 0, sizeof ls);
    lab_state_info(lab, info);
    const size_t cur = lab->cur;
    for (size_t i = 0; i < N_SCREENS; i++) {
        lab->cur = i;
        lab_load_fields(lab);
        lab_capture(lab, &ls.s[i].inputs);
        ls.s[i].pinned = lab->pinned[i];
        ls.s[i].pin = lab->pin[i];
        if (SCREENS[i]->page) {         // the page shown (a lesson) and where it is scrolled to
            SCREENS[i]->page(lab->state[i], ls.s[i].page, sizeof ls.s[i].page);
            ls.s[i].line = (uint64_t)lab->scroll[i];
        }
    }
    lab->cur = ls.screen = cur;
    lab_load_fields(lab);
    if (labstate_path(lab->answer, path, sizeof path, &e) || labstate_save(&ls, path, info, N_SCREENS, &e))
        lab_status(lab, true, "not saved: %s", e.msg);
    else
        lab_status(lab, false, "saved %s", path);
}

/* The prompt's answer: where to save. */
static void lab_save_done(void *ctx, Lab *lab, const char *answer)
{
    (void)ctx, (void)answer;
    lab_save(lab);
}

#define SAVE_PROMPT "save as (a name or path; Enter alone: a dated file; Esc: cancel): "

static int lab_act_save(Lab *lab, int ch)
{
    (void)ch;
    lab_prompt(lab, SAVE_PROMPT, lab_save_done, NULL);
    return KEY_REDRAW;
}

/* The inputs of screen s's state st from a saved state (or a widget's
 * options), each applied as the user would type it: after a choice (a scenario, a model) the
 * screen recomputes, so that the inputs after it apply to what it chose. */
static int lab_apply_to(const ScreenDef *s, void *st, const StateInputs *in, Error *e)
{
    Field f[FIELDS_MAX];
    Error why;
    for (size_t i = 0, n = s->fields(st, f); i < n; i++) {
        const StateInput *v = NULL;
        for (size_t k = 0; k < in->n && !v; k++)
            v = strcmp(in->in[k].label, f[i].label) == 0 ? &in->in[k] : NULL;
        if (!v)
            continue;
        if (field_load(&f[i], v->value, &why) || (f[i].kind == FK_CHOICE && s->recompute(st, &why)))
            return error_set(e, "%s%s", v->where, why.msg);
        n = s->fields(st, f);
    }
    if (s->recompute(st, &why))
        return error_set(e, "%s%s", in->where, why.msg);
    return 0;
}

static int lab_apply(Lab *lab, const StateInputs *in, Error *e)
{
    const int rc = lab_apply_to(SCREENS[lab->cur], lab->state[lab->cur], in, e);
    lab_load_fields(lab);
    return rc;
}

/* The lab as a saved state has it: each screen's pinned figures from
 * their inputs, then its inputs and the page it shows, scrolled as it
 * was, then the screen it shows. */
static int lab_open(Lab *lab, const char *path, Error *e)
{
    static LabState ls;
    StateScreenInfo info[N_SCREENS];
    memset(&ls, 0, sizeof ls);
    lab_state_info(lab, info);
    if (labstate_load(&ls, path, info, N_SCREENS, e))
        return -1;
    for (size_t i = 0; i < N_SCREENS; i++) {
        const StateScreen *st = &ls.s[i];
        Error why;
        lab->cur = i;
        lab_load_fields(lab);
        if (st->pinned) {
            if (lab_apply(lab, &st->pin, e))
                return -1;
            if (SCREENS[i]->pin(lab->state[i], true, &why))
                return error_set(e, "%snothing to pin: %s", st->pin.where, why.msg);
            lab->pinned[i] = true;
            lab_capture(lab, &lab->pin[i]);
        }
        if (lab_apply(lab, &st->inputs, e))
            return -1;
        if (st->page[0] && SCREENS[i]->open_page(lab->state[i], st->page, lab, &why))
            return error_set(e, "%s%s", st->page_where, why.msg);
        lab->scroll[i] = (int)st->line;         // clamped to the page where it is drawn
    }
    lab->cur = ls.screen;
    lab_load_fields(lab);
    return 0;
}

/* ------------------------------------------------------------------------
 * Export
 */

static int lab_act_export(Lab *lab, int ch)
{
    (void)ch;
    const ScreenDef *s = SCREENS[lab->cur];
    if (!s->export) {
        lab_status(lab, false, "the %s screen has nothing to export", s->name);
        return KEY_REDRAW;
    }
    char stamp[32], csv[96], svg[96], name[32];
    time_t t = time(NULL);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&t));
    size_t k = 0;
    for (const char *p = s->name; *p && k + 1 < sizeof name; p++)
        name[k++] = *p == ' ' ? '-' : (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    name[k] = '\0';
    snprintf(csv, sizeof csv, "kvlab-%s-%s.csv", name, stamp);
    snprintf(svg, sizeof svg, "kvlab-%s-%s.svg", name, stamp);
    FILE *fc = fopen(csv, "w"), *fs = fopen(svg, "w");
    Error e;
    int rc = (!fc || !fs) ? error_set(&e, "cannot write %s in this directory", !fc ? csv : svg)
                          : s->export(lab->state[lab->cur], fc, fs, &e);
    if (fc && fclose(fc) != 0 && !rc)
        rc = error_set(&e, "cannot write %s", csv);
    if (fs && fclose(fs) != 0 && !rc)
        rc = error_set(&e, "cannot write %s", svg);
    if (rc) {
        remove(csv);
        remove(svg);
        lab_status(lab, true, "export failed: %s", e.msg);
    } else {
        lab_status(lab, false, "wrote %s and %s", csv, svg);
    }
    return KEY_REDRAW;
}

/* ------------------------------------------------------------------------
 * Drawing
 */

/* Tab i's text: " F2 Lessons "; compact, where the full tabs and their
 * gaps do not fit the width, the name's first word only. */
static void lab_tab_text(size_t i, bool compact, char *tab, size_t n)
{
    const char *name = SCREENS[i]->name;
    int len = compact && strchr(name, ' ') ? (int)(strchr(name, ' ') - name) : (int)strlen(name);
    snprintf(tab, n, " F%zu %.*s ", i + 2, len, name);
}

static void lab_draw_tabs(Lab *lab)
{
    attron(crt_attr(ROLE_TAB));
    mvhline(0, 0, ' ', COLS);
    attroff(crt_attr(ROLE_TAB));
    int full = 0;
    char tab[96];
    for (size_t i = 0; i < N_SCREENS; i++) {
        lab_tab_text(i, false, tab, sizeof tab);
        full += (int)strlen(tab) + 1;           // the names are ASCII
    }
    const bool compact = full - 1 > COLS;
    int x = 0;
    for (size_t i = 0; i < N_SCREENS; i++) {
        lab_tab_text(i, compact, tab, sizeof tab);
        lab->tab_x[i] = x;
        x += put_text(0, x, COLS - x, crt_attr(i == lab->cur ? ROLE_TAB_ON : ROLE_TAB), tab);
        x += !compact;
    }
    lab->tab_x[N_SCREENS] = x;
    const char *me = "kvlab " KVLAB_VERSION " ";
    if ((int)strlen(me) < COLS - x)
        put_text(0, COLS - (int)strlen(me), (int)strlen(me), crt_attr(ROLE_TAB), me);
}

static void lab_draw_fields(Lab *lab, int h)
{
    if (!lab->n_fields)                 // the view takes the whole width
        return;
    draw_title((Rect){1, 0, 1, FIELD_W - 1}, lab->pane == 0 ? "Inputs" : "Inputs (Tab: back)");
    for (size_t i = 0; i < lab->n_fields; i++) {
        const Field *f = &lab->fields[i];
        int y = 2 + (int)i;
        if ((int)i >= h - 1) {
            widget_lost((Rect){y, 0, 1, FIELD_W - 1}, f->label);
            continue;
        }
        bool on = i == lab->sel[lab->cur] && lab->pane == 0;
        char val[80];
        if (on && lab->editing)
            snprintf(val, sizeof val, "%s_", lab->edit);
        else
            field_text(f, val, sizeof val);
        int attr = on ? crt_attr(lab->editing ? ROLE_EDIT : ROLE_FIELD_ON) : crt_attr(ROLE_NORMAL);
        if (on) {
            attron(attr);
            mvhline(y, 0, ' ', FIELD_W - 1);
            attroff(attr);
        }
        put_text(y, 1, FIELD_W - 2, attr, f->label);
        int vw = (int)text_columns(val) < VALUE_W ? (int)text_columns(val) : VALUE_W;
        put_text(y, FIELD_W - 2 - vw, vw, on ? attr : crt_attr(ROLE_FIELD), val);
    }
    attron(crt_attr(ROLE_DIM));
    for (int y = 1; y < LINES - 2; y++)
        mvaddstr(y, FIELD_W - 1, crt_glyph(GLYPH_VLINE));
    attroff(crt_attr(ROLE_DIM));
}

/* The help's lines (st is the Lab): every key, the mouse, the screen's
 * keys and what the screen shows. */
static void lab_help_doc(void *st, Doc *d)
{
    const Lab *lab = st;
    const ScreenDef *s = SCREENS[lab->cur];
    for (size_t i = 0; i < N_KEYS; i++)
        doc_pair(d, HELP_KEY_W, crt_attr(ROLE_FIELD), KEYS[i].name, crt_attr(ROLE_NORMAL), KEYS[i].what);
    doc_text(d, 0, crt_attr(ROLE_DIM), "mouse: click a tab or an input");
    doc_gap(d, 1);
    for (size_t i = 0; i < s->n_keys; i++)
        doc_pair(d, HELP_KEY_W, crt_attr(ROLE_FIELD), s->keys[i].key, crt_attr(ROLE_NORMAL), s->keys[i].what);
    if (s->n_keys)
        doc_gap(d, 1);
    doc_text(d, 0, crt_attr(ROLE_DIM), s->help);
}

/* The function bar: the screen's own keys or the lab's, and at its right
 * end, where the view scrolls, how far down it shows: "31/48 lines". */
static void lab_draw_function_bar_keys(Lab *lab)
{
    static const BarKey BAR[] = {
        {"F1", "Help"}, {"Enter", "Edit"}, {"+-", "Step"}, {"Tab", "Pane"}, {"R", "Reset"},
        {"P", "Pin"},   {"S", "Save"},     {"e", "Export"}, {"q", "Quit"},
    };
    const ScreenDef *s = SCREENS[lab->cur];
    draw_function_bar(LINES - 1, COLS, s->bar ? s->bar : BAR, s->bar ? s->n_bar : sizeof BAR / sizeof BAR[0]);
    const int lines = lab_view_lines(lab), h = lab_view_rect(lab).h;
    if (lines <= h)
        return;
    char where[48];
    const int first = lab->scroll[lab->cur], last = first + h < lines ? first + h : lines;
    snprintf(where, sizeof where, " %d/%d lines", last, lines);
    put_text(LINES - 1, COLS - (int)strlen(where), (int)strlen(where), crt_attr(ROLE_BAR), where);
}

static void lab_draw_all(Lab *lab)
{
    erase();
    if (COLS < MIN_W || LINES < MIN_H) {
        widget_cut_context("too small");
        char msg[128];
        snprintf(msg, sizeof msg, "make the window larger: %dx%d needed, %dx%d now (q quits)",
                 MIN_W, MIN_H, COLS, LINES);
        int w = (int)strlen(msg) < COLS ? (int)strlen(msg) : COLS;
        put_text(LINES / 2, (COLS - w) / 2 > 0 ? (COLS - w) / 2 : 0, COLS, crt_attr(ROLE_WARN), msg);
        return;
    }
    widget_cut_context(SCREENS[lab->cur]->name);
    lab_draw_tabs(lab);
    lab_draw_fields(lab, LINES - 3);
    const ScreenDef *s = SCREENS[lab->cur];
    const Rect win = lab_view_rect(lab);
    const int lines = lab_view_lines(lab), first = lab->scroll[lab->cur];
    doc_view(win, first, lines, s->layout, lab->state[lab->cur]);
    doc_marks(win, first, lines, lab->pane || !lab->n_fields ? "Down" : "Tab, Down");
    if (lab->prompt)
        lab_draw_prompt(lab, LINES - 2, COLS - 2);
    else
        put_text(LINES - 2, 1, COLS - 2, crt_attr(lab->status_error ? ROLE_BAD : ROLE_DIM), lab->status);
    lab_draw_function_bar_keys(lab);
    if (lab->popup) {
        widget_cut_context(lab->popup_title);
        lab_draw_popup(lab);
    }
}

bool lab_progress(Lab *lab, const char *label, double done, double total)
{
    static double t0;
    if (done == 0)
        t0 = lab_now_s();
    crt_resumed();                  // drawn in full below
    lab_draw_all(lab);
    int w = COLS - 20 > 20 ? COLS - 20 : COLS;
    Rect r = {LINES / 2 - 1, (COLS - w) / 2, PROGRESS_ROWS, w};
    attron(crt_attr(ROLE_NORMAL));
    for (int y = r.y - 1; y <= r.y + r.h; y++)         // the box with a margin round it
        mvhline(y, r.x - 1, ' ', r.w + 2);
    attroff(crt_attr(ROLE_NORMAL));
    draw_progress(r, label, done, total, lab_now_s() - t0);
    refresh();
    nodelay(stdscr, TRUE);
    int ch = crt_getkey();
    nodelay(stdscr, FALSE);
    return ch == CRT_ESC || ch == 'q' || crt_quit_signal;
}

static void lab_log_frame(Lab *lab, double t0, int ch)
{
    if (!lab->frame_log)
        return;
    double t = lab_now_s();
    if (!lab->first_frame_logged) {
        fprintf(lab->frame_log, "first_frame_ms %.3f\n", (t - lab->started) * 1e3);
        lab->first_frame_logged = true;
    } else {
        fprintf(lab->frame_log, "frame_ms %.3f key %d size %dx%d\n", (t - t0) * 1e3, ch, COLS, LINES);
    }
    fflush(lab->frame_log);
}

/* ------------------------------------------------------------------------
 * The run loop
 */

/* After any event (a key, new figures, a resize): the view's first line
 * in range, so that it never runs past the end, and the inputs selected
 * where the view fits. */
static void lab_settle_view(Lab *lab)
{
    const int lines = lab_view_lines(lab), h = lab_view_rect(lab).h;
    lab->scroll[lab->cur] = scroll_clamp(lab->scroll[lab->cur], lines, h);
    if (lines <= h)
        lab->pane = 0;
    Rect box;
    lab_popup_box(&box);
    lab->popup_scroll = lab->popup ? scroll_clamp(lab->popup_scroll, lab_popup_lines(lab), box.h) : 0;
}

static int lab_handle(Lab *lab, int ch)
{
    if (ch == KEY_RESIZE)
        return KEY_REDRAW;
    if (lab->prompt)                    // over a box too: an exercise's answer
        return lab_prompt_key(lab, ch);
    if (lab->popup)
        return lab_popup_handle(lab, ch);       // q too only closes it
    if (COLS < MIN_W || LINES < MIN_H)
        return ch == 'q' || ch == KEY_F(10) ? lab_act_quit(lab, ch) : KEY_IGNORED;
    if (lab->editing)
        return lab_edit_key(lab, ch);
    if (ch == KEY_MOUSE)
        return lab_mouse_key(lab);
    const ScreenDef *s = SCREENS[lab->cur];
    int flags = s->key ? s->key(lab->state[lab->cur], ch, lab) : KEY_IGNORED;
    if (flags == KEY_IGNORED && ch == CRT_ESC && lab->back) {    // back to the page that opened it
        lab_switch_to(lab, lab->back - 1);
        return KEY_REDRAW;
    }
    if (flags == KEY_IGNORED)
        flags = lab_global_key(lab, ch);
    return flags;
}

int lab_run(const char *open, Error *e)
{
    static Lab lab;
    double started = lab_now_s();
    int rc = -1;
    size_t made = 0;                // screens created, to destroy
    FILE *cut_log = NULL;           // KVLAB_CUT_LOG
    memset(&lab, 0, sizeof lab);
    lab.started = started;
    for (; made < N_SCREENS; made++)
        if (!(lab.state[made] = SCREENS[made]->create(e)))
            goto done;
    for (size_t i = 0; i < N_SCREENS; i++) {
        lab.cur = i;
        lab_recompute_or_restore(&lab, NULL);
        lab_save_settings(&lab, &lab.origin[i]);
        lab.start[i] = lab.origin[i];
    }
    lab.cur = 0;
    lab_load_fields(&lab);
    if (open && lab_open(&lab, open, e))       // before the terminal is touched
        goto done;
    const char *log = getenv("KVLAB_FRAME_LOG");
    if (log && *log)
        lab.frame_log = fopen(log, "a");
    const char *cuts = getenv("KVLAB_CUT_LOG");
    if (cuts && *cuts)
        widget_cut_log(cut_log = fopen(cuts, "a"));
    if (crt_init(e))
        goto done;
    if (teach_notice()[0])
        lab_status(&lab, true, "%s", teach_notice());
    else if (open)
        lab_status(&lab, false, "opened %s; F1 or ? lists every key", open);
    else
        lab_status(&lab, false, "F1 or ? lists every key; F2-F%zu (or [ and ]) change screens; q quits",
                   N_SCREENS + 1);
    lab_settle_view(&lab);
    lab_draw_all(&lab);
    refresh();
    lab_log_frame(&lab, started, 0);
    timeout(POLL_MS);
    while (!lab.quit && !crt_quit_signal) {
        int ch = crt_getkey();
        if (crt_resumed()) {        // continued after SIGSTOP: the terminal back, all redrawn
            lab_draw_all(&lab);
            refresh();
        }
        if (ch == ERR)
            continue;
        double t0 = lab_now_s();
        Settings before;
        lab_save_settings(&lab, &before);
        int flags = lab_handle(&lab, ch);
        if (flags & KEY_RECOMPUTE)
            lab_recompute_or_restore(&lab, &before);
        if (flags) {                // KEY_RESIZE too: lab_handle asks for a redraw
            lab_settle_view(&lab);
            lab_draw_all(&lab);
            refresh();
        }
        lab_log_frame(&lab, t0, ch);
    }
    crt_done();
    rc = crt_quit_signal;
done:
    for (size_t i = 0; i < made; i++)
        SCREENS[i]->destroy(lab.state[i]);
    if (lab.frame_log)
        fclose(lab.frame_log);
    widget_cut_log(NULL);
    if (cut_log)
        fclose(cut_log);
    return rc;
}
