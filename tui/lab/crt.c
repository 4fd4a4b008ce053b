/* crt.c - see crt.h. Modelled on htop's CRT.c. */
#include "crt.h"

#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

Crt crt;
volatile sig_atomic_t crt_quit_signal;
static bool active;

/* ------------------------------------------------------------------------
 * Colour roles: one row a role; 256-colour, 8-colour and monochrome forms.
 */

typedef struct {
    short fg256, bg256;
    short fg8, bg8;
    int attr;           // added in every mode; the only styling in monochrome
    int mono;           // extra styling in monochrome
} RoleStyle;

static const RoleStyle ROLES[ROLE_COUNT] = {
    [ROLE_NORMAL] = {-1, -1, -1, -1, 0, 0},
    [ROLE_TITLE] = {75, -1, COLOR_CYAN, -1, A_BOLD, 0},
    [ROLE_TAB] = {250, 237, COLOR_WHITE, COLOR_BLUE, 0, A_REVERSE},
    [ROLE_TAB_ON] = {16, 75, COLOR_BLACK, COLOR_CYAN, A_BOLD, A_REVERSE},
    [ROLE_FIELD] = {229, -1, COLOR_YELLOW, -1, 0, A_BOLD},
    [ROLE_FIELD_ON] = {16, 229, COLOR_BLACK, COLOR_YELLOW, A_BOLD, A_REVERSE},
    [ROLE_EDIT] = {16, 214, COLOR_BLACK, COLOR_YELLOW, A_BOLD, A_REVERSE | A_UNDERLINE},
    [ROLE_DIM] = {244, -1, COLOR_WHITE, -1, 0, A_DIM},
    [ROLE_GOOD] = {114, -1, COLOR_GREEN, -1, 0, 0},
    [ROLE_BAD] = {203, -1, COLOR_RED, -1, A_BOLD, A_BOLD},
    [ROLE_WARN] = {214, -1, COLOR_YELLOW, -1, 0, A_UNDERLINE},
    [ROLE_KEY] = {16, 75, COLOR_BLACK, COLOR_CYAN, A_BOLD, A_BOLD},
    [ROLE_BAR] = {250, 236, COLOR_WHITE, COLOR_BLUE, 0, A_REVERSE},
    [ROLE_SERIES_1] = {75, -1, COLOR_CYAN, -1, 0, 0},
    [ROLE_SERIES_2] = {214, -1, COLOR_YELLOW, -1, 0, 0},
    [ROLE_SERIES_3] = {114, -1, COLOR_GREEN, -1, 0, 0},
    [ROLE_SERIES_4] = {203, -1, COLOR_RED, -1, 0, 0},
    [ROLE_SERIES_5] = {177, -1, COLOR_MAGENTA, -1, 0, 0},
    [ROLE_SERIES_6] = {252, -1, COLOR_WHITE, -1, 0, 0},
    [ROLE_SERIES_7] = {43, -1, COLOR_CYAN, -1, A_BOLD, 0},
    [ROLE_SERIES_8] = {229, -1, COLOR_YELLOW, -1, A_BOLD, 0},
    [ROLE_SERIES_9] = {147, -1, COLOR_BLUE, -1, A_BOLD, 0},
    /* a diverging ramp: blue, white, red */
    [ROLE_HEAT_0 + 0] = {17, 17, COLOR_BLUE, COLOR_BLUE, 0, 0},
    [ROLE_HEAT_0 + 1] = {25, 25, COLOR_BLUE, COLOR_BLUE, 0, 0},
    [ROLE_HEAT_0 + 2] = {68, 68, COLOR_CYAN, COLOR_CYAN, 0, 0},
    [ROLE_HEAT_0 + 3] = {153, 153, COLOR_CYAN, COLOR_CYAN, 0, 0},
    [ROLE_HEAT_0 + 4] = {255, 255, COLOR_WHITE, COLOR_WHITE, 0, 0},
    [ROLE_HEAT_0 + 5] = {223, 223, COLOR_YELLOW, COLOR_YELLOW, 0, 0},
    [ROLE_HEAT_0 + 6] = {209, 209, COLOR_YELLOW, COLOR_YELLOW, 0, 0},
    [ROLE_HEAT_0 + 7] = {196, 196, COLOR_RED, COLOR_RED, 0, 0},
    [ROLE_HEAT_0 + 8] = {88, 88, COLOR_RED, COLOR_RED, 0, 0},
};

int crt_attr(ColorRole role)
{
    const RoleStyle *r = &ROLES[role];
    if (crt.depth == COLORS_NONE)
        return r->attr | r->mono;
    return COLOR_PAIR(role + 1) | r->attr;
}

/* ------------------------------------------------------------------------
 * Glyphs: UTF-8 and ASCII forms of each.
 */

static const char *const GLYPHS[GLYPH_COUNT][2] = {
    [GLYPH_BLOCK_1 + 0] = {"\u258F", " "}, [GLYPH_BLOCK_1 + 1] = {"\u258E", " "},
    [GLYPH_BLOCK_1 + 2] = {"\u258D", " "}, [GLYPH_BLOCK_1 + 3] = {"\u258C", "-"},
    [GLYPH_BLOCK_1 + 4] = {"\u258B", "-"}, [GLYPH_BLOCK_1 + 5] = {"\u258A", "-"},
    [GLYPH_BLOCK_1 + 6] = {"\u2589", "#"}, [GLYPH_BLOCK_1 + 7] = {"\u2588", "#"},
    [GLYPH_HLINE] = {"\u2500", "-"},       [GLYPH_VLINE] = {"\u2502", "|"},
    [GLYPH_CORNER] = {"\u2514", "+"},      [GLYPH_TICK_X] = {"\u252C", "+"},
    [GLYPH_TICK_Y] = {"\u2524", "+"},
    [GLYPH_SHADE_0 + 0] = {" ", " "},      [GLYPH_SHADE_0 + 1] = {"\u00B7", "."},
    [GLYPH_SHADE_0 + 2] = {":", ":"},      [GLYPH_SHADE_0 + 3] = {"-", "-"},
    [GLYPH_SHADE_0 + 4] = {"=", "="},      [GLYPH_SHADE_0 + 5] = {"+", "+"},
    [GLYPH_SHADE_0 + 6] = {"\u2592", "*"}, [GLYPH_SHADE_0 + 7] = {"\u2593", "#"},
    [GLYPH_SHADE_0 + 8] = {"\u2588", "@"},
    [GLYPH_POINT_1 + 0] = {"\u25CF", "*"}, [GLYPH_POINT_1 + 1] = {"\u25A0", "o"},
    [GLYPH_POINT_1 + 2] = {"\u25B2", "+"}, [GLYPH_POINT_1 + 3] = {"\u25C6", "x"},
    [GLYPH_POINT_1 + 4] = {"\u25BC", "#"}, [GLYPH_POINT_1 + 5] = {"\u2605", "%"},
    [GLYPH_POINT_1 + 6] = {"\u25CB", "@"}, [GLYPH_POINT_1 + 7] = {"\u25A1", "="},
    [GLYPH_POINT_1 + 8] = {"\u25B3", "~"},
    [GLYPH_HOLLOW_1 + 0] = {"\u25CB", "a"}, [GLYPH_HOLLOW_1 + 1] = {"\u25A1", "b"},
    [GLYPH_HOLLOW_1 + 2] = {"\u25B3", "c"}, [GLYPH_HOLLOW_1 + 3] = {"\u25C7", "d"},
    [GLYPH_HOLLOW_1 + 4] = {"\u25BD", "e"}, [GLYPH_HOLLOW_1 + 5] = {"\u2606", "f"},
    [GLYPH_HOLLOW_1 + 6] = {"\u25CE", "g"}, [GLYPH_HOLLOW_1 + 7] = {"\u25AD", "h"},
    [GLYPH_HOLLOW_1 + 8] = {"\u25B7", "i"},
    [GLYPH_MORE_UP] = {"\u25B2", "^"},    [GLYPH_MORE_DOWN] = {"\u25BC", "v"},
};

const char *crt_glyph(Glyph g)
{
    return GLYPHS[g][crt.utf8 ? 0 : 1];
}

/* ------------------------------------------------------------------------
 * Signals: every signal that would end the process only sets a flag, and
 * the run loop quits as q does, so the terminal is restored and the exit
 * status still names the signal; a crash restores the terminal and then
 * dies as it would have. Stops are ncurses': Ctrl-Z (SIGTSTP) leaves the
 * terminal as it found it and takes it back on resume. SIGSTOP cannot be
 * caught: on the SIGCONT that follows, the loop takes the terminal back
 * (crt_resumed), since a shell restores its own modes while a job is
 * stopped.
 */

static volatile sig_atomic_t resumed;

/* Signals whose default ends the process: the lab quits on them. */
static const int QUIT[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2,
                           SIGPOLL, SIGPROF, SIGVTALRM, SIGXCPU, SIGXFSZ};
/* Signals of a fault: restore the terminal, then die of them. */
static const int CRASH[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP};

static void crt_on_quit(int sig)
{
    crt_quit_signal = sig;
}

static void crt_on_continue(int sig)
{
    (void)sig;
    resumed = 1;
}

static void crt_on_crash(int sig)
{
    if (active) {
        endwin();
        active = false;
    }
    static const char msg[] = "kvlab: the lab crashed; the terminal has been restored\n";
    ssize_t unused = write(2, msg, sizeof msg - 1);
    (void)unused;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Only where the signal does what it does by default: one ignored from
 * the start (nohup's SIGHUP) stays ignored, and a profiler's stays its. */
static void crt_catch_signal(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;            // no SA_RESTART: a quit wakes getch at once
    if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
        sigaction(sig, &sa, NULL);
}

/* Before newterm, which then leaves these alone and installs its own
 * handlers only for SIGTSTP and SIGWINCH. */
static void crt_install_signals(void)
{
    for (size_t i = 0; i < sizeof QUIT / sizeof QUIT[0]; i++)
        crt_catch_signal(QUIT[i], crt_on_quit, 0);
    for (size_t i = 0; i < sizeof CRASH / sizeof CRASH[0]; i++)
        crt_catch_signal(CRASH[i], crt_on_crash, SA_RESETHAND);
    crt_catch_signal(SIGCONT, crt_on_continue, SA_RESTART);
}

int crt_getkey(void)
{
    int ch = getch();
    if (ch != CRT_ESC)
        return ch;
    const int delay = wgetdelay(stdscr);
    timeout(0);                             // the rest of a sequence is there already, or none is
    int next = getch();
    if (next == '[' || next == 'O') {       // CSI or SS3: parameters, intermediates, then the final byte
        int c = getch();
        while (next == '[' && c >= 0x20 && c <= 0x3F)
            c = getch();
        next = ch = ERR;
    }
    timeout(delay);
    if (next != ERR)
        ungetch(next);
    return ch;
}

bool crt_resumed(void)
{
    if (!resumed || !active)
        return false;
    resumed = 0;
    reset_prog_mode();              // the modes newterm set, which a shell may have undone
    clearok(curscr, TRUE);          // and whatever it printed meanwhile is drawn over
    return true;
}

/* ------------------------------------------------------------------------
 * Start and stop
 */

int crt_usable(Error *e)
{
    const char *term = getenv("TERM");
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return error_set(e, "the lab needs an interactive terminal; the command-line tools "
                            "work anywhere (kvlab calc, kvlab quant, kvlab --help)");
    if (!term || !*term || strcmp(term, "dumb") == 0)
        return error_set(e, "the lab needs a terminal that can move the cursor (TERM is %s); "
                            "the command-line tools work anywhere (kvlab calc, kvlab --help)",
                         term && *term ? term : "not set");
    return 0;
}

static void crt_at_exit_restore(void)
{
    crt_done();
}

int crt_init(Error *e)
{
    if (crt_usable(e))
        return -1;
    /* Characters follow the user's locale; numbers never do (LC_NUMERIC
     * stays "C", so printf's decimal point is always '.'). */
    setlocale(LC_CTYPE, "");
    const char *cs = nl_langinfo(CODESET);
    const char *ascii = getenv("KVLAB_ASCII");
    crt.utf8 = cs && strcmp(cs, "UTF-8") == 0 && !(ascii && *ascii);
    crt_install_signals();
    if (!newterm(NULL, stdout, stdin))
        return error_set(e, "cannot start the terminal (TERM=%s); the command-line tools work "
                            "anywhere (kvlab calc, kvlab --help)", getenv("TERM"));
    active = true;
    atexit(crt_at_exit_restore);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(CRT_ESC_DELAY_MS);
    const char *nc = getenv("NO_COLOR");
    crt.depth = COLORS_NONE;
    if (!(nc && *nc) && has_colors()) {
        start_color();
        use_default_colors();
        crt.depth = COLORS >= 256 ? COLORS_256 : COLORS_8;
        for (int r = 0; r < ROLE_COUNT; r++) {
            const RoleStyle *s = &ROLES[r];
            if (crt.depth == COLORS_256)
                init_pair((short)(r + 1), s->fg256, s->bg256);
            else
                init_pair((short)(r + 1), s->fg8, s->bg8);
        }
    }
    crt.mouse = mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED, NULL) != 0;
    mouseinterval(0);
    return 0;
}

void crt_done(void)
{
    if (!active)
        return;
    active = false;
    curs_set(1);
    endwin();
    fflush(stdout);
}
