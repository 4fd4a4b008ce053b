/* lab.h - the interactive lab: a run loop over a table of screens.
 *
 * The lab draws what every screen shares (tabs, the field pane on the
 * left, the status line, the function bar, the help) and hands each screen
 * the rest of the window. A screen is a filled-in table of functions:
 * adding one is adding a row to SCREENS in lab.c.
 */
#ifndef KVLAB_LAB_H
#define KVLAB_LAB_H

#include "doc.h"
#include "error.h"
#include "field.h"
#include "widget.h"

#include <stdbool.h>
#include <stdio.h>

#define FIELDS_MAX 24

/* What a key handler did, as flags the run loop acts on. */
enum { KEY_IGNORED = 0, KEY_HANDLED = 1, KEY_REDRAW = 2, KEY_RECOMPUTE = 4 };

typedef struct {
    const char *key;            // "b", "a"
    const char *name;           // a word for it, for a screen's key hint: "bits"
    const char *what;           // for the help screen
} ScreenKey;

/* A command-line option a screen takes from a lesson's widget or an
 * exercise's settings (`kvlab COMMAND`'s own), and the input it sets. */
typedef struct {
    const char *option;         // "--context"; NULL: a word without dashes (a scenario's name)
    const char *label;          // the field it sets
    bool arg;                   // takes a value
    const char *value;          // what the field gets; NULL: the value given
    const char *absent;         // what it gets when the option is not given; NULL: its first value
} ScreenOption;

/* Services a screen may use while it works. */
typedef struct Lab Lab;
typedef struct ScreenDef ScreenDef;
void lab_status(Lab *lab, bool error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Draws a progress bar over the screen and reports whether the user asked
 * to cancel (Esc or q); for long computations inside a key handler. */
bool lab_progress(Lab *lab, const char *label, double done, double total);
/* The keys of a screen that measures on this machine and shows results
 * stored from a GPU run beside them (the GPU lab, the NIAH screen): s
 * shows or hides the stored ones, r runs (`run`); and its function bar,
 * the lab's keys with those two among them. */
int lab_measure_key(int ch, bool *show_stored, int (*run)(void *st, Lab *lab), void *st, Lab *lab);
#define LAB_MEASURE_BAR_N 9
extern const BarKey LAB_MEASURE_BAR[LAB_MEASURE_BAR_N];
/* A screen's state, zeroed, for its create; NULL with the message in e when
 * memory runs out. free() releases it. */
void *lab_state_new(size_t size, Error *e);
/* Asks for a line in the status line (an answer, a file's name) after
 * `label`; Enter hands what was typed to done, Esc cancels. */
typedef void (*PromptDone)(void *ctx, Lab *lab, const char *answer);
void lab_prompt(Lab *lab, const char *label, PromptDone done, void *ctx);
/* A box over the screen that shows a document (an exercise, a glossary
 * entry) under a title: Up, Down, PgUp and PgDn scroll it where it does
 * not fit, `key` (may be NULL) gets the other keys first, and a key it
 * ignores closes the box. */
typedef int (*PopupKey)(void *st, int ch, Lab *lab);
void lab_popup(Lab *lab, const char *title, DocLayout layout, void *st, PopupKey key);
/* Scrolls the view so that its line `line` shows (a focused item). */
void lab_scroll_to(Lab *lab, int line);
/* The glossary's entry for `term` in a box, or a line saying there is none. */
void lab_glossary(Lab *lab, const char *term);
/* Shows the screen `id` (ScreenDef.id) set by `options` (the words of
 * its command line, a widget's settings) over its starting values; Esc
 * comes back to the screen that opened it. An option the screen does
 * not show is named in the status line. */
int lab_open_screen(Lab *lab, const char *id, const char *options, Error *e);
/* A new state of the screen `id` set by `options` as lab_open_screen
 * sets the screen itself, so that a page draws the screen's figures in
 * place (ScreenDef.inline_layout) from the same code: the state, with its
 * screen in *def (whose destroy frees it), or NULL with why in e. */
void *lab_preview(const char *id, const char *options, const ScreenDef **def, Error *e);
/* The lab's own state of the screen `id`, as this session left it (what
 * the GPU lab measured), with its screen in *def; NULL where none has
 * that id. */
void *lab_screen_state(Lab *lab, const char *id, const ScreenDef **def);

struct ScreenDef {
    const char *id;             // how lessons and exercises name it: "calc"
    const char *name;           // tab title
    const char *help;           // what the screen shows, for the help screen
    void *(*create)(Error *e);
    void (*destroy)(void *st);
    /* The editable fields, in order; returns how many. */
    size_t (*fields)(void *st, Field *out);
    /* Recomputes after a field changed; an error is shown in the status line
     * and the previous figures stay. */
    int (*recompute)(void *st, Error *e);
    /* Lays the view out as a document (doc.h): the lab draws it from the
     * line it is scrolled to and, when it has more lines than its window,
     * scrolls it (Tab, then Up and Down; PgUp, PgDn), never past its ends,
     * and marks what lies above and below. */
    DocLayout layout;
    /* Screen keys (may be NULL); returns KEY_* flags. */
    int (*key)(void *st, int ch, Lab *lab);
    const ScreenKey *keys;
    size_t n_keys;
    /* Writes the screen's data as CSV and its chart as SVG. */
    int (*export)(void *st, FILE *csv, FILE *svg, Error *e);
    /* Puts the inputs back where they started (then recompute); NULL: the
     * lab puts back the values they had when the screen was set up.
     * `origin` names where that is, for the status line (NULL: "the
     * values the screen started with"). */
    void (*reset)(void *st);
    const char *origin;
    /* Pins the figures as they are (on) as the baseline the screen shows
     * their change against, or unpins them; -1 with the reason in e when
     * there are no figures to pin. NULL: the screen has nothing to pin. */
    int (*pin)(void *st, bool on, Error *e);
    /* The options of its command that set its inputs (lab_open_screen). */
    const ScreenOption *options;
    size_t n_options;
    /* The table whose column names the glossary key explains when the
     * view is selected (NULL: none, or none shown now). */
    const Table *(*columns)(void *st);
    /* Its own function bar (NULL: the lab's); a screen without fields
     * takes the whole width and its Up and Down scroll it. */
    const BarKey *bar;
    size_t n_bar;
    /* Its figures laid out small, to sit in a lesson's page under the
     * widget that opens it (NULL: none). */
    DocLayout inline_layout;
    /* The text the field `label` gets for an option's value where the two
     * differ (a list of kvlab niah's --format is one of its Formats);
     * NULL: the value as given. */
    const char *(*option_input)(const char *label, const char *value);
    /* The page it shows, which a saved state records (NULL: it shows none):
     * its id into `id` ("" while it shows none), and that page shown again
     * (-1 with why in e where it has no page `id`). */
    void (*page)(void *st, char *id, size_t n);
    int (*open_page)(void *st, const char *id, Lab *lab, Error *e);
};

/* Runs the lab until the user quits or a signal ends it (the terminal
 * restored): 0, or the number of the signal; -1 with the message in e
 * where it cannot start (no screen's data, a saved state `open` (or
 * NULL) that cannot be read or applied, no terminal). A bad saved state
 * is refused before the terminal is touched. */
int lab_run(const char *open, Error *e);

#endif
