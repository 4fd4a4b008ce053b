/* crt.h - the only owner of the terminal.
 *
 * Starts and stops curses, decides between 256 colours, 8 colours and
 * monochrome (NO_COLOR, a non-empty value, means monochrome), between UTF-8
 * glyphs and ASCII, and restores the terminal before anything else is
 * printed: on a normal exit, on every signal that ends the process
 * (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, ...), on a crash, and while
 * the lab is stopped (Ctrl-Z); it takes the terminal back on resume.
 * Colours are named by role; no drawing code names a hue.
 */
#ifndef KVLAB_CRT_H
#define KVLAB_CRT_H

#include "error.h"

#include <signal.h>
#include <stdbool.h>

typedef enum {
    ROLE_NORMAL,
    ROLE_TITLE,         // screen titles, headers
    ROLE_TAB,           // screen tabs, not selected
    ROLE_TAB_ON,        // the selected screen's tab
    ROLE_FIELD,         // an editable value
    ROLE_FIELD_ON,      // the selected field
    ROLE_EDIT,          // a field being edited
    ROLE_DIM,           // notes, units, axes
    ROLE_GOOD,          // agrees, kept
    ROLE_BAD,           // disagrees, lost, errors
    ROLE_WARN,          // the seed is wrong
    ROLE_KEY,           // key names in the function bar
    ROLE_BAR,           // the function bar itself
    ROLE_SERIES_1, ROLE_SERIES_2, ROLE_SERIES_3, ROLE_SERIES_4, ROLE_SERIES_5,
    ROLE_SERIES_6, ROLE_SERIES_7, ROLE_SERIES_8, ROLE_SERIES_9,
    ROLE_HEAT_0,        // heat ramp, 9 steps: cold ... hot
    ROLE_HEAT_8 = ROLE_HEAT_0 + 8,
    ROLE_COUNT
} ColorRole;

#define SERIES_COUNT 9
#define HEAT_STEPS 9

typedef enum {
    GLYPH_BLOCK_1,      // left eighths of a cell: 1/8 ... 8/8
    GLYPH_BLOCK_8 = GLYPH_BLOCK_1 + 7,
    GLYPH_HLINE, GLYPH_VLINE, GLYPH_CORNER, GLYPH_TICK_X, GLYPH_TICK_Y,
    GLYPH_SHADE_0,      // heat in monochrome: 9 steps of density
    GLYPH_SHADE_8 = GLYPH_SHADE_0 + 8,
    GLYPH_POINT_1,      // plot markers, one per series
    GLYPH_POINT_9 = GLYPH_POINT_1 + 8,
    GLYPH_HOLLOW_1,     // plot markers of figures measured elsewhere, one per series
    GLYPH_HOLLOW_9 = GLYPH_HOLLOW_1 + 8,
    GLYPH_MORE_UP, GLYPH_MORE_DOWN,     // a scrolled view has more above, below
    GLYPH_COUNT
} Glyph;

typedef enum { COLORS_NONE, COLORS_8, COLORS_256 } ColorDepth;

typedef struct {
    ColorDepth depth;
    bool utf8;
    bool mouse;
} Crt;

/* Keys that reach the lab as characters, not as curses' KEY_ codes. */
enum {
    CRT_CTRL_H = 8,         // backspace, on some terminals
    CRT_ESC = 27,           // Esc alone, once CRT_ESC_DELAY_MS pass with nothing after it
    CRT_DEL = 127,          // backspace, on most terminals
};
/* How long an Esc waits for the rest of an escape sequence (an arrow key's):
 * short, so that Esc alone answers at once. */
#define CRT_ESC_DELAY_MS 25

extern Crt crt;
extern volatile sig_atomic_t crt_quit_signal;   // the signal that asks the lab to quit, or 0

/* Checks that there is an interactive terminal to own; the message says why
 * not and points at the command-line tools. */
int crt_usable(Error *e);
int crt_init(Error *e);
void crt_done(void);
/* After a stop that ncurses did not see (SIGSTOP), once the process
 * continues: puts the terminal back in the lab's modes, marks the screen
 * for a full redraw and returns true; false otherwise. The run loop calls
 * it and redraws. */
bool crt_resumed(void);
/* The next key, as getch gives it (ERR where none came in the timeout),
 * but an escape sequence curses does not know (a key the terminal's
 * description leaves out, "\033[1~" for Home under a terminal that
 * describes another) is read whole and given as ERR, never as Esc and
 * the characters after it ('[' changes screens). Esc alone is CRT_ESC; Esc
 * and a character at once (Alt and it) is CRT_ESC, the character next. */
int crt_getkey(void);
/* The attribute (colour pair and style) for a role. */
int crt_attr(ColorRole role);
const char *crt_glyph(Glyph g);

#endif
