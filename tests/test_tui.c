/* test_tui.c - the interactive lab driven through tmux: every screen opens
 * and shows its key figures (the same as kvlab calc), editing a field moves
 * the figures, resizes down to 30x8 and back keep it alive, q and Ctrl-C
 * leave the terminal restored, NO_COLOR draws no colour, export writes its
 * files, and without a terminal kvlab says so and exits 2. */
#include "testutil.h"

#include "catalog.h"
#include "exercise.h"
#include "glossary.h"
#include "lesson.h"
#include "query.h"
#include "gpu.h"
#include "scenario.h"
#include "stats.h"
#include "stored.h"
#include "units.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static char sock[64];

/* A field's line in the input pane as the lab draws it: the label, then
 * the value ending 31 columns from the label's start. */
static const char *field_line(const char *label, const char *value)
{
    static char buf[2][96];
    static int k;
    k = !k;
    snprintf(buf[k], sizeof buf[k], "%s%*s", label, (int)(31 - strlen(label)), value);
    return buf[k];
}

/* Runs a shell command; its output NUL-terminated in out (at most n - 1
 * bytes), or drained when out is NULL. Returns pclose's status. */
static int shell(const char *cmd, char *out, size_t n)
{
    FILE *p = popen(cmd, "r");
    ck_assert(p != NULL);
    size_t got = out ? fread(out, 1, n - 1, p) : 0;
    if (out)
        out[got] = '\0';
    else
        while (fgetc(p) != EOF) {
        }
    return pclose(p);
}

/* Runs a tmux command on the test's own server; its stdout in out. */
__attribute__((format(printf, 3, 4)))
static int tmux(char *out, size_t n, const char *fmt, ...)
{
    char args[2048], cmd[2300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "tmux -L %s %s 2>/dev/null", sock, args);
    return shell(cmd, out, n);
}

/* Starts kvlab in a w x h window; `env` is prepended to the command and
 * `args` follow it. */
static void start_args(int w, int h, const char *env, const char *args)
{
    /* a new server each time: a name used again could reach one that
     * kill-server has not finished taking down */
    static unsigned starts;
    snprintf(sock, sizeof sock, "kvlab-test-%d-%ld-%u", getpid(), (long)time(NULL), starts++);
    char dir[1024];
    ck_assert(getcwd(dir, sizeof dir) != NULL);
    tmux(NULL, 0, "new-session -d -x %d -y %d -s lab \"cd '%s' && env TERM=xterm-256color "
                  "KVLAB_DATA='%s' %s '%s' %s; echo EXIT:\\$?; sleep 20\"",
         w, h, dir, test_datadir(), env, test_bin(), args);
}

static void start(int w, int h, const char *env)
{
    start_args(w, h, env, "");
}

static void stop(void)
{
    tmux(NULL, 0, "kill-server");
}

static void screen(char *buf, size_t n, bool escapes)
{
    tmux(buf, n, "capture-pane -p %s -t lab", escapes ? "-e" : "");
}

/* Waits up to `seconds` for text to appear on the screen; when it does
 * not, the test fails and prints the screen it saw (a passing test prints
 * nothing). */
static void wait_for_s(const char *text, int seconds)
{
    static char buf[65536];
    for (int i = 0; i < seconds * 20; i++) {
        screen(buf, sizeof buf, false);
        if (strstr(buf, text))
            return;
        usleep(50000);
    }
    fprintf(stderr, "waited for '%s'; the screen was:\n%s\n", text, buf);
    ck_abort_msg("'%s' did not appear within %d s (the screen it saw is on stderr)", text,
                 seconds);
}

static void wait_for(const char *text)
{
    wait_for_s(text, 5);
}

static void keys(const char *k)
{
    tmux(NULL, 0, "send-keys -t lab %s", k);
}

/* Sends keys and waits for `want` to appear on the screen. */
static void press(const char *k, const char *want)
{
    keys(k);
    wait_for(want);
}

/* From the first screen, the Lessons, to the Scenarios, showing `first`. */
static void open_scenarios(const char *first)
{
    wait_for("F2 Lessons");
    press("F3", first);
}

/* Starts the lab in a w x h window and waits for its Scenarios screen. */
static void open_lab(int w, int h, const char *env)
{
    start(w, h, env);
    open_scenarios("A 20 GiB KV pool");
}

/* q leaves with exit status 0; the tmux server goes with it. */
static void quit_lab(void)
{
    press("q", "EXIT:0");
    stop();
}

/* The number in the table row that starts with `fmt`, column `col`
 * (0 = first number after the name). */
static double row_number(const char *fmt, int col)
{
    static char buf[65536];
    screen(buf, sizeof buf, false);
    char key[64];
    snprintf(key, sizeof key, " %s ", fmt);
    const char *p = strstr(buf, key);
    ck_assert_msg(p != NULL, "no row %s in:\n%s", fmt, buf);
    p += strlen(key);
    double v = 0;
    for (int i = 0; i <= col; i++) {
        char word[64];
        int used;
        ck_assert(sscanf(p, " %63s%n", word, &used) == 1);
        p += used;
        if (!strcmp(word, "GiB") || !strcmp(word, "MiB") || !strcmp(word, "GB")) {
            i--;
            continue;
        }
        char *end;
        v = strtod(word, &end);
    }
    return v;
}

/* The screen as it is now. */
static const char *dump(void)
{
    static char buf[65536];
    screen(buf, sizeof buf, false);
    return buf;
}

/* The view's text (right of the input pane) as one line: the rows'
 * words joined by single spaces, so that a phrase wrapped over rows is
 * found whole. */
static const char *view_text(void)
{
    static char out[65536];
    const char *p = dump();
    size_t n = 0;
    while (*p) {
        const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
        const char *bar = strstr(p, "\u2502");           // the input pane's right edge
        if (bar && bar < end) {
            const char *q = bar + strlen("\u2502");
            while (q < end && *q == ' ')
                q++;
            const char *e = end;
            while (e > q && e[-1] == ' ')
                e--;
            if (e > q && n + (size_t)(e - q) + 2 < sizeof out) {
                if (n)
                    out[n++] = ' ';
                memcpy(out + n, q, (size_t)(e - q));
                n += (size_t)(e - q);
            }
        }
        p = nl ? nl + 1 : end;
    }
    out[n] = '\0';
    return out;
}

/* Fails with `what` unless cond, printing the screen (too long for a
 * Check message) on stderr first. */
#define assert_screen(cond, ...)                                                                     \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            fprintf(stderr, "%s\n", dump());                                                         \
            ck_abort_msg(__VA_ARGS__);                                                               \
        }                                                                                            \
    } while (0)

/* A lab with a cut log (KVLAB_CUT_LOG): opened at w x h with `env`
 * (showing `first`), then, once the test has driven it and quit, the texts that the drawing
 * of `what` (a screen's name, "Help") had to cut or lost. */
typedef struct {
    char log[32];
} CutLog;

/* Starts the lab at w x h with `env` and `args` and a new cut log. */
static void start_cut_log(CutLog *c, int w, int h, const char *env, const char *args)
{
    snprintf(c->log, sizeof c->log, "/tmp/kvlab-cuts-XXXXXX");
    int fd = mkstemp(c->log);
    ck_assert(fd >= 0);
    close(fd);
    char all[512];
    snprintf(all, sizeof all, "%s KVLAB_CUT_LOG=%s", env, c->log);
    start_args(w, h, all, args);
}

static void open_cut_log(CutLog *c, int w, int h, const char *env, const char *first)
{
    start_cut_log(c, w, h, env, "");
    open_scenarios(first);
}

/* Fails naming every line of the cut log that `what` wrote; removes it. */
static void assert_no_cuts(CutLog *c, const char *what)
{
    static char cuts[65536];
    size_t n = 0, len = strlen(what);
    FILE *f = fopen(c->log, "r");
    ck_assert(f != NULL);
    char line[1024];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, what, len) && line[len] == ':' && n + strlen(line) < sizeof cuts)
            n += (size_t)sprintf(cuts + n, "%s", line);
    fclose(f);
    unlink(c->log);
    ck_assert_msg(n == 0, "%s cut or lost:\n%.3000s", what, cuts);
}

/* Opens the lab at w x h with a cut log, sends `k` and waits for `want`,
 * quits, and fails naming every text that the drawing of `what` had to
 * cut or lost. */
static void assert_uncut(int w, int h, const char *k, const char *want, const char *what)
{
    CutLog c;
    open_cut_log(&c, w, h, "", "A 20 GiB KV pool");
    press(k, want);
    quit_lab();
    assert_no_cuts(&c, what);
}

/* Waits until the screen differs from `before` (a key took effect). */
static void wait_changed(const char *before)
{
    for (int i = 0; i < 100; i++) {
        if (strcmp(before, dump()) != 0)
            return;
        usleep(50000);
    }
    ck_abort_msg("the screen did not change:\n%.4000s", before);
}

/* Scrolls the current screen's view from its top to its end a line at a
 * time, and fails naming each of `parts` (NULL-terminated) that never
 * showed in it. At every position where whole[0] shows, each of `whole`
 * (NULL-terminated, or NULL) shows too: a plot is drawn whole or not at
 * all. Leaves the inputs pane selected. */
static void assert_reachable(const char *const *parts, const char *const *whole)
{
    static char before[65536];
    bool seen[32] = {false}, scrolled = false;
    while (strstr(dump(), "more above"))
        keys("PPage");
    for (;;) {
        const char *v = view_text();
        for (size_t i = 0; parts[i]; i++)
            seen[i] = seen[i] || strstr(v, parts[i]);
        for (size_t i = 0; whole && whole[0] && strstr(v, whole[0]) && whole[i]; i++)
            assert_screen(strstr(v, whole[i]), "'%s' shows without '%s'", whole[0], whole[i]);
        if (!strstr(dump(), "more below"))
            break;
        if (!scrolled)
            press("Tab", "Inputs (Tab: back)");
        scrolled = true;
        snprintf(before, sizeof before, "%s", dump());
        keys("Down");
        wait_changed(before);
    }
    if (scrolled)
        keys("Tab");
    for (size_t i = 0; parts[i]; i++)
        ck_assert_msg(seen[i], "'%s' never showed", parts[i]);
}

/* `kvlab ARGS`'s JSON output, parsed; the test fails where it exits
 * with an error. cJSON_Delete frees it. */
static cJSON *cli_json(const char *const *argv)
{
    RunResult r = run_kvlab(argv, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    cJSON *j = cJSON_Parse(r.out);
    run_free(&r);
    ck_assert(j != NULL);
    return j;
}

/* The CLI's figure for the same inputs, from kvlab calc --json. */
static double cli_figure(const char *const *argv, const char *fmt, const char *field)
{
    cJSON *j = cli_json(argv);
    double v = -1;
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(j, "formats"))
        if (!strcmp(cJSON_GetObjectItem(f, "format")->valuestring, fmt))
            v = cJSON_GetObjectItem(f, field)->valuedouble;
    cJSON_Delete(j);
    return v;
}

/* An escape sequence the terminal's description does not know (Home as
 * another terminal sends it, ESC [ 1 ~) is read whole and ignored: its
 * '[' does not change the screen nor its digit type a value; ] after it
 * goes from the Lessons to the Scenarios. (Esc alone: the tests that go
 * back with it.) */
START_TEST(unknown_escape_sequence_ignored)
{
    start(80, 24, "");
    wait_for("F2 Lessons");
    keys("-H 1b 5b 31 7e");
    press("]", "A 20 GiB KV pool");
    assert_screen(!strstr(dump(), "Needle in a haystack"), "the sequence's '[' changed the screen");
    quit_lab();
}
END_TEST

/* Each screen opens with its figures; the calculator's are kvlab calc's. */
START_TEST(screens_open)
{
    open_lab(200, 60, "");
    wait_for("seed is wrong");
    wait_for("3.55x");
    press("F4", "Sequences the pool holds");
    double slots = row_number("fp8_e4m3", 5), step = row_number("fp8_e4m3", 7);
    const char *argv[] = {"calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "8k",
                          "--batch", "16", "--json", NULL};
    ck_assert_double_eq(slots, cli_figure(argv, "fp8_e4m3", "slots"));
    ck_assert_double_eq_tol(step, cli_figure(argv, "fp8_e4m3", "step_ms"), 0.006);
    press("F5", "max score err");
    wait_for("score errors");
    press("F1", "Help: every key");
    wait_for("Hadamard: rotation on or off");
    keys("x");
    quit_lab();
}
END_TEST

/* Typing a context into the calculator changes the figures, as kvlab calc
 * computes them; a bad value is refused in the status line and the
 * context stays as it was. */
START_TEST(editing_changes_figures)
{
    open_lab(200, 60, "");
    press("F4", "Sequences the pool holds");
    keys("Down Down");              // Model, GPU, Context
    press("3 2 k Enter", "32,768 (32k) tokens x 16");
    const char *argv[] = {"calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "32k",
                          "--batch", "16", "--json", NULL};
    ck_assert_double_eq(row_number("bf16", 5), cli_figure(argv, "bf16", "slots"));
    /* the refusal, not the text being typed: "context 'banana' is not ..." */
    press("Enter b a n a n a Enter", "'banana' is not");
    wait_for("32,768 (32k) tokens x 16");
    press("Down +", "tokens x 17");  // Batch 16 -> 17
    quit_lab();
}
END_TEST

/* Shrinking to 30x8 shows a notice instead of garbage; growing back
 * restores the screen; the lab is alive throughout. */
START_TEST(resizes_survive)
{
    open_lab(120, 40, "");
    static const int SIZES[][2] = {{30, 8}, {80, 24}, {31, 9}, {200, 60}, {30, 8}, {120, 40}};
    for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++) {
        tmux(NULL, 0, "resize-window -t lab -x %d -y %d", SIZES[i][0], SIZES[i][1]);
        wait_for(SIZES[i][0] < 80 ? "larger" : "Inputs");
        keys(i % 2 ? "F5" : "F4");
    }
    quit_lab();
}
END_TEST

/* q exits 0 and Ctrl-C exits 130, each with the terminal restored: the
 * alternate screen is off and the cursor is visible again. */
START_TEST(quit_restores_terminal)
{
    static const struct { const char *keys, *exit; } T[] = {{"q", "EXIT:0"}, {"C-c", "EXIT:130"}};
    for (size_t i = 0; i < 2; i++) {
        open_lab(100, 30, "");
        char flag[64];
        tmux(flag, sizeof flag, "display -p -t lab '#{alternate_on}'");
        ck_assert_str_eq(flag, "1\n");
        press(T[i].keys, T[i].exit);
        tmux(flag, sizeof flag, "display -p -t lab '#{alternate_on} #{cursor_flag}'");
        ck_assert_str_eq(flag, "0 1\n");
        stop();
    }
}
END_TEST

/* The parent of pid and whether it is kvlab, from /proc/PID/stat
 * ("pid (comm) state ppid ..."); 0 when pid is gone. */
static pid_t parent_of(pid_t pid, bool *kvlab)
{
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *close = strrchr(stat, ')');
    long ppid = 0;
    if (!close || sscanf(close + 1, " %*c %ld", &ppid) != 1)
        return 0;
    *kvlab = strstr(stat, " (kvlab) ") != NULL;
    return (pid_t)ppid;
}

/* The lab's own process: the kvlab under the pane's first process (a
 * shell, perhaps under timeout), found in /proc (no pgrep needed); fails
 * the test when there is none. */
static pid_t lab_pid(void)
{
    char out[64];
    tmux(out, sizeof out, "display -p -t lab '#{pane_pid}'");
    pid_t pane = (pid_t)atol(out), found = 0;
    DIR *d = opendir("/proc");
    ck_assert(d != NULL);
    for (struct dirent *de; !found && (de = readdir(d));) {
        pid_t pid = (pid_t)atol(de->d_name);
        bool kvlab = false;
        pid_t up = pid > 0 ? parent_of(pid, &kvlab) : 0;
        for (int depth = 0; kvlab && up > 1 && depth < 4 && !found; depth++) {
            bool ignored;
            found = up == pane ? pid : 0;
            up = parent_of(up, &ignored);
        }
    }
    closedir(d);
    ck_assert_msg(found > 0, "no kvlab under the pane's process %ld", (long)pane);
    return found;
}

/* Whether the pane's terminal echoes and reads whole lines, as a shell
 * leaves it; the lab turns both off. */
static bool tty_cooked(void)
{
    char tty[64];
    tmux(tty, sizeof tty, "display -p -t lab '#{pane_tty}'");
    tty[strcspn(tty, "\n")] = '\0';
    int fd = open(tty, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    ck_assert_msg(fd >= 0, "cannot open the pane's terminal %s", tty);
    struct termios tio;
    ck_assert(tcgetattr(fd, &tio) == 0);
    close(fd);
    return (tio.c_lflag & ECHO) && (tio.c_lflag & ICANON);
}

/* Waits up to 5 s for the terminal to be in the lab's modes (cooked
 * false) or a shell's (true). */
static bool wait_tty(bool cooked)
{
    for (int i = 0; i < 100; i++) {
        if (tty_cooked() == cooked)
            return true;
        usleep(50000);
    }
    return false;
}

/* The terminal as the lab found it: main screen, cursor shown, no mouse
 * tracking, echo and line input on. */
static void assert_restored(const char *after)
{
    char flags[64];
    tmux(flags, sizeof flags, "display -p -t lab '#{alternate_on} #{cursor_flag} #{mouse_any_flag}'");
    ck_assert_msg(!strcmp(flags, "0 1 0\n"), "after %s: alternate screen, cursor, mouse %s", after, flags);
    ck_assert_msg(tty_cooked(), "after %s: echo or line input left off", after);
}

/* Every signal that would end the process ends the lab as q does, the
 * terminal restored (assert_restored) and the exit status 128 + the
 * signal: Ctrl-\ (SIGQUIT), and SIGTERM, SIGHUP, SIGPIPE, SIGUSR1 and
 * SIGALRM sent to it. */
START_TEST(signals_restore_terminal)
{
    static const int SIGS[] = {SIGQUIT, SIGTERM, SIGHUP, SIGPIPE, SIGUSR1, SIGALRM};
    for (size_t i = 0; i < N_OF(SIGS); i++) {
        open_lab(100, 30, "");
        ck_assert(!tty_cooked());
        if (SIGS[i] == SIGQUIT)
            keys("C-\\\\");
        else
            ck_assert_int_eq(kill(lab_pid(), SIGS[i]), 0);
        char want[32];
        snprintf(want, sizeof want, "EXIT:%d", 128 + SIGS[i]);
        wait_for(want);
        assert_restored(strsignal(SIGS[i]));
        stop();
    }
}
END_TEST

/* Stopped from a job-control shell, the lab gives the terminal back; on
 * fg it takes it again and redraws: after Ctrl-Z (SIGTSTP, which ncurses
 * handles) and after SIGSTOP, which nothing can catch and after which the
 * shell has put back its own modes. */
START_TEST(stop_and_continue)
{
    static unsigned starts;
    snprintf(sock, sizeof sock, "kvlab-test-job-%d-%ld-%u", getpid(), (long)time(NULL), starts++);
    /* the shell ends by itself should the test stop midway (a stopped lab then gets its SIGHUP) */
    tmux(NULL, 0, "new-session -d -x 100 -y 30 -s lab \"env TERM=xterm-256color KVLAB_DATA='%s' "
                  "PS1='$ ' timeout --foreground 100 bash --norc --noediting -i\"", test_datadir());
    tmux(NULL, 0, "send-keys -t lab \"'%s'\" Enter", test_bin());
    open_scenarios("A 20 GiB KV pool");
    press("C-z", "Stopped");
    assert_restored("Ctrl-Z");
    keys("fg Enter");
    ck_assert_msg(wait_tty(false), "fg after Ctrl-Z: the lab's modes are not back");
    wait_for("A 20 GiB KV pool");
    ck_assert_int_eq(kill(lab_pid(), SIGSTOP), 0);
    wait_for("Stopped");
    keys("fg Enter");
    ck_assert_msg(wait_tty(false), "fg after SIGSTOP: the terminal is left in the shell's modes");
    char buf[8192];
    for (int i = 0; i < 100; i++) {             // redrawn over what the shell printed
        screen(buf, sizeof buf, false);
        if (!strstr(buf, "Stopped"))
            break;
        usleep(50000);
    }
    ck_assert_msg(!strstr(buf, "Stopped") && strstr(buf, "A 20 GiB KV pool"), "not redrawn:\n%s", buf);
    keys("q");
    ck_assert(wait_tty(true));
    assert_restored("q");
    keys("'echo EXIT:$?' Enter");
    wait_for("EXIT:0");
    stop();
}
END_TEST

/* Text from a data file is drawn with its control characters escaped,
 * never sent: a scenario whose title holds an OSC sequence (which would
 * retitle the window) and a newline, C1 CSI in its source and ESC [2J in
 * its story shows them as \e, \x07, \n, \u009b. The escapes are what the
 * layout measures: a story of many control characters wraps at 80x24
 * without a cut, and a figure's label and note show escaped. */
START_TEST(control_characters_escaped)
{
    char dir[] = "/tmp/kvlab-control-XXXXXX", cmd[3000];
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "ln -s '%s/models' '%s/gpus' %s/ && cp '%s/scenario_control.json' %s/",
             test_datadir(), test_datadir(), dir, test_testdata(), dir);
    ck_assert_int_eq(system(cmd), 0);
    char path[1024];
    snprintf(path, sizeof path, "%s/scenario_bells.json", dir);
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    fprintf(f, "{\"name\": \"scenario_bells\", \"title\": \"Bells\", \"source\": \"tests\", \"story\": \"");
    for (int i = 0; i < 24; i++)            // 7 columns a word as read, 16 as drawn
        fprintf(f, "\\u0007\\u0007\\u0007bell%d ", i % 10);
    fprintf(f, "end of the story.\", \"model\": \"llama-3.1-8b\", \"context\": \"8k\", \"batch\": 16, "
               "\"pool\": \"20GiB\", \"figures\": [{\"label\": \"BF16\\u001b[31m slots\", \"format\": \"bf16\", "
               "\"metric\": \"slots\", \"seed\": \"21\", \"seed_error\": \"a\\rb\"}]}\n");
    fclose(f);
    char env[128];
    snprintf(env, sizeof env, "KVLAB_DATA=%s", dir);
    CutLog c;
    open_cut_log(&c, 80, 24, env, "Bells");
    assert_reachable((const char *const[]){"\\x07\\x07\\x07bell0", "end of the story.", "BF16\\e[31m slots",
                                           "a\\rb", NULL}, NULL);
    quit_lab();
    assert_no_cuts(&c, "Scenarios");
    start(120, 40, env);
    open_scenarios("Bells");
    press("+", "\\e]0;retitled\\x07A title\\nwith a second line");
    wait_for("tests \\u009b2J");
    wait_for("A story\\e[2Jthat clears the screen.");
    char title[256];
    tmux(title, sizeof title, "display -p -t lab '#{pane_title}'");
    ck_assert_msg(!strstr(title, "retitled"), "the window was retitled: %s", title);
    quit_lab();
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Whether a screen dump has a colour escape: an SGR sequence with a
 * foreground or background parameter (30-37, 38, 40-47, 48, 90-97,
 * 100-107); bold, dim, underline and reverse are not colour. */
static bool has_colour(const char *s)
{
    for (const char *p = strstr(s, "\033["); p; p = strstr(p + 1, "\033[")) {
        const char *q = p + 2;
        while (*q >= '0' && *q <= '9') {
            int v = (int)strtol(q, (char **)&q, 10);
            if ((v >= 30 && v <= 38) || (v >= 40 && v <= 48) || (v >= 90 && v <= 97) ||
                (v >= 100 && v <= 107))
                return true;
            if (*q == ';')
                q++;
        }
    }
    return false;
}

/* NO_COLOR: no colour escapes at all; without it, colours are drawn (so
 * the check can tell). */
START_TEST(no_color)
{
    static char buf[65536];
    for (int nc = 0; nc < 2; nc++) {
        open_lab(120, 40, nc ? "NO_COLOR=1" : "");
        press("F5", "score errors");
        screen(buf, sizeof buf, true);
        bool colour = has_colour(buf);
        ck_assert_msg(colour == !nc, "NO_COLOR=%d, colour escapes %s", nc, colour ? "found" : "absent");
        quit_lab();
    }
}
END_TEST

/* e writes the screen's CSV and SVG into the working directory and names
 * them in the status line. */
START_TEST(export_files)
{
    char dir[] = "/tmp/kvlab-export-XXXXXX", cwd[1024];
    ck_assert(mkdtemp(dir) != NULL);
    ck_assert(getcwd(cwd, sizeof cwd) != NULL);
    ck_assert_int_eq(chdir(dir), 0);
    open_lab(200, 60, "");
    press("F4", "Sequences the pool holds");
    press("e", "wrote kvlab-calculator-");
    press("F3 e", "wrote kvlab-scenarios-");
    quit_lab();
    char cmd[1200];
    static char out[65536];                     // the CSV, its series included, and the SVG
    snprintf(cmd, sizeof cmd, "cat %s/kvlab-calculator-*.csv %s/kvlab-calculator-*.svg", dir, dir);
    shell(cmd, out, sizeof out);
    ck_assert(strncmp(out, "format,bytes_per_sequence", 25) == 0 && strstr(out, "\nfp8_e4m3,"));
    ck_assert(strstr(out, "<svg") && strstr(out, "<polyline") && strstr(out, "</svg>"));
    /* the scenarios CSV: six fields a line, numbers with commas quoted */
    snprintf(cmd, sizeof cmd, "cat %s/kvlab-scenarios-*.csv", dir);
    shell(cmd, out, sizeof out);
    ck_assert_msg(strstr(out, "\"elements, K and V\",bf16,elements,\"8,589,934,592\",\"8,589,934,592\",agrees"),
                  "%s", out);
    ck_assert_int_eq(chdir(cwd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Without a terminal: one line pointing at the command-line tools, exit 2. */
START_TEST(no_terminal)
{
    RunResult r = run_kvlab((const char *const[]){NULL}, "");
    ck_assert_int_eq(r.status, 2);
    ck_assert(strstr(r.err, "interactive terminal") && strstr(r.err, "kvlab calc"));
    run_free(&r);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "script -qec 'env TERM=dumb %s' /dev/null > /dev/null 2>&1", test_bin());
    int st = system(cmd);
    ck_assert_int_eq(WEXITSTATUS(st), 2);
}
END_TEST

/* The quantization screen's figures are kvlab quant's, whose default keys
 * it shares; a value that leaves no figures is kept and the reason shown in
 * their place; 80x24 shows every screen's key figures. */
START_TEST(figures_match_and_edits_hold)
{
    static char buf[65536];
    open_lab(200, 60, "");
    press("F5", "max score err");
    double tok = row_number("K error", 1);          // keys per token
    RunResult r = run_kvlab((const char *const[]){"quant", "--json", NULL}, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    cJSON *j = cJSON_Parse(r.out);
    const cJSON *run;
    double want = -1;
    cJSON_ArrayForEach(run, cJSON_GetObjectItem(j, "runs"))
        if (!strcmp(cJSON_GetObjectItem(run, "granularity")->valuestring, "token"))
            want = 100 * cJSON_GetObjectItem(run, "rel_fro_error")->valuedouble;
    cJSON_Delete(j);
    run_free(&r);
    ck_assert_msg(fabs(tok - want) < 0.05 * want, "screen %g%%, kvlab quant %g%%", tok, want);
    press("F4", "Sequences the pool holds");
    keys("Down Down Down Down Down Down Down Down");    // Tensor parallel
    press("3 Enter", "does not divide the 32 query heads");
    screen(buf, sizeof buf, false);
    ck_assert(strstr(buf, "Tensor parallel               3") != NULL);
    quit_lab();
    open_lab(80, 24, "");
    wait_for("8,589,934,592   8,589,934,592");     /* narrow: the values under the label */
    press("F4", "slots");
    press("F5", "K error");
    quit_lab();
}
END_TEST

/* The CPU fallback of the GPU lab, for the screen tests on any machine. */
#define NO_PLUGIN "KVLAB_CUDA_PLUGIN=/nonexistent/libkvlab_cuda.so"
/* F6 set to a short CPU sweep: contexts 1k and 2k, three timed runs each. */
#define SHORT_SWEEP "F6 Down Down 2 k Enter Down 3 Enter"

/* A GPU lab sweep on the CPU reference takes seconds, longer under ASan. */
static void wait_sweep(void)
{
    wait_for_s("sweep done", 40);
}

/* The number in column `col` (0 = the first after the name) of the GPU
 * lab's slopes table, in the row of `fmt`: the row that also holds a
 * published figure or a "-" in its place; NaN where the cell is "-". */
static double slope_number(const char *fmt, int col)
{
    const char *p = dump();
    for (const char *line = p; *line;) {
        const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
        char row[1024];
        snprintf(row, sizeof row, "%.*s", (int)(end - line), line);
        char *at = strstr(row, fmt);
        if (at && at[strlen(fmt)] == ' ' && (strstr(row, "e-0") || strstr(row, " - "))) {
            char *q = at + strlen(fmt), word[64];
            int used;
            for (int i = 0; i <= col; i++) {
                ck_assert(sscanf(q, " %63s%n", word, &used) == 1);
                q += used;
            }
            return strcmp(word, "-") ? strtod(word, NULL) : NAN;
        }
        line = nl ? nl + 1 : end;
    }
    ck_abort_msg("no slopes row for %s:\n%s", fmt, p);
    return NAN;
}

/* The GPU lab: without a GPU it says why and measures the CPU reference,
 * with a progress bar, then shows the slopes next to the published ones. */
START_TEST(gpu_lab_screen)
{
    open_lab(160, 45, "KVLAB_CUDA_PLUGIN=/nonexistent/libkvlab_cuda.so");
    press("F6", "Press r");
    /* a longest context of 2k and 3 timed runs keep the CPU sweep short,
     * under ASan too */
    press("Down Down 2 k Enter Down 3 Enter r", "CPU reference");
    wait_sweep();
    wait_for("published");
    wait_for("4.37e-05");
    /* a batch typed after the sweep does not blank its slopes: the model's
     * slope of bf16 is the number it was (a CPU's may come out negative) */
    double before = slope_number("bf16", 1);
    press("Up Up 3 Enter", "Batch                         3");
    double model = slope_number("bf16", 1);
    assert_screen(isfinite(model) && model == before, "bf16's slope after a batch change: %g, not %g", model,
                  before);
    quit_lab();
}
END_TEST

/* ------------------------------------------------------------------------
 * The Quantization error and GPU lab screens
 */

/* The parts of the Quantization error screen: its table, the key hint,
 * the five heatmaps and the score errors, whose token numbers are named. */
static const char *const QUANT_PARTS[] = {"max score err", "keys:", "keys K", "quantized", "error",
                                          "per token", "per channel", "score errors", NULL};

/* The Quantization error screen cuts nothing and loses nothing at 80x24 and
 * 120x40, with the settings that make its texts longest: KIVI keys after
 * RoPE with a Hadamard rotation, the worked example, the mean over seeds;
 * every part of it can be scrolled to. */
START_TEST(quant_screen_uncut)
{
    static const char *const KEYS[][2] = {
        {"F5", "K error"},
        {"F5 f f f f f f r r H", "KIVI"},
        {"F5 w", "worked"},
        {"F5 b b b b g g g", "8-bit"},
        {"F5 a", "averaged seeds"},
    };
    static const int SIZES[][2] = {{80, 24}, {120, 40}};
    for (size_t i = 0; i < N_OF(SIZES); i++) {
        for (size_t k = 0; k < N_OF(KEYS); k++)
            assert_uncut(SIZES[i][0], SIZES[i][1], KEYS[k][0], KEYS[k][1], "Quantization error");
        CutLog c;
        open_cut_log(&c, SIZES[i][0], SIZES[i][1], "", "A 20 GiB KV pool");
        press("F5", "max score err");
        assert_reachable(QUANT_PARTS, NULL);
        /* at the end, the score errors' columns are named under their title */
        char rows[65536];
        snprintf(rows, sizeof rows, "%s", dump());
        const char *title = strstr(rows, "score errors"), *next = title ? strchr(title, '\n') : NULL;
        const char *eol = next ? strchr(next + 1, '\n') : NULL;
        assert_screen(eol && strstr(next, "token") && strstr(next, "token") < eol && strstr(next, "error") &&
                          strstr(next, "error") < eol,
                      "the score errors' columns are not named");
        quit_lab();
        assert_no_cuts(&c, "Quantization error");
    }
}
END_TEST

/* The Quantization error screen says, as kvlab quant does, that values
 * are exact where only keys are quantized, and gives V's error where KIVI
 * quantizes them. */
START_TEST(quant_screen_values)
{
    open_lab(120, 40, "");
    press("F5", "keys: int-min 4-bit per token; values: exact; no RoPE");
    ck_assert(row_number("V error", 0) == 0);
    wait_for("V error        exact   exact  exact");
    press("f f f f f f", "values: KIVI per token");
    ck_assert(row_number("V error", 0) > 0);
    quit_lab();
}
END_TEST

/* The GPU lab's parts after a sweep: the device, the plot (its y label
 * and legend), the bandwidths and the slopes. */
static const char *const GPU_PARTS[] = {"CPU reference", "ms per step, one layer", "bandwidth at", "published",
                                        "4.37e-05", NULL};
/* The plot whole or not at all: its y label with every legend entry. */
static const char *const GPU_PLOT[] = {"ms per step, one layer", "\u25CF bf16", "\u25A0 fp8_e4m3", "\u25B2 int8",
                                       "\u25C6 int4", "\u25BC nvfp4", "\u2605 mxfp4", NULL};

/* The GPU lab cuts nothing and loses nothing at 80x24 and 120x40: before a
 * sweep (the reason there is no GPU, the invitation to press r), during one
 * with the default settings (whose progress line is the longest: a time
 * left in minutes and Esc to cancel), and after one, where every part can
 * be scrolled to and the plot shows whole or not at all, also with the
 * longer header of a cancelled sweep after it. */
START_TEST(gpu_screen_uncut)
{
    static const int SIZES[][2] = {{80, 24}, {120, 40}};
    for (size_t i = 0; i < N_OF(SIZES); i++) {
        CutLog c;
        open_cut_log(&c, SIZES[i][0], SIZES[i][1], NO_PLUGIN, "A 20 GiB KV pool");
        press("F6", "Press r");
        keys(SHORT_SWEEP " r");
        wait_sweep();
        assert_reachable(GPU_PARTS, GPU_PLOT);
        press("5 0 Enter r", "left");           // a slower sweep: 50 timed runs a point
        keys("Escape");                         // read between two points
        wait_for_s("cancelled", 30);
        assert_reachable(GPU_PARTS, GPU_PLOT);
        /* taller windows move the plot's last row onto the marker's row */
        for (int h = SIZES[i][1] + 1; h <= SIZES[i][1] + 4; h++) {
            tmux(NULL, 0, "resize-window -t lab -x %d -y %d", SIZES[i][0], h);
            wait_for("cancelled");
            usleep(200000);
            assert_reachable((const char *const[]){"CPU reference", NULL}, GPU_PLOT);
        }
        quit_lab();
        assert_no_cuts(&c, "GPU lab");
        open_cut_log(&c, SIZES[i][0], SIZES[i][1], NO_PLUGIN, "A 20 GiB KV pool");
        press("F6", "Press r");
        keys("r");
        wait_for_s("point 3 of 18", 40);        // a time left from points measured
        keys("Escape");
        wait_for_s("cancelled", 30);
        quit_lab();
        assert_no_cuts(&c, "GPU lab");
    }
}
END_TEST

/* The stored GPU runs' file the lab finds beside the build's kvlab. */
#define STORED_FILE "assets/stored/nvidia-h200.json"

/* The NIAH screen's parts after a run: the backend, a heatmap's format and
 * verdict, the formats' and cells' tables, the stored GPU run's section. */
static const char *const NIAH_PARTS[] = {"CPU reference", "int2-k-channel", "simulated,", "Per format",
                                         "Every cell", "95% CI", "not this machine", NULL};
/* F7 set to a short grid: lengths 256 and 1k, 4 trials a cell, closeness
 * 0.9 (a float field takes a value between its bounds). */
#define SHORT_NIAH "F7 Down 2 5 6 , 1 k Enter Down 4 Enter Down 0 . 9 Enter"

/* The NIAH screen cuts nothing and loses nothing at 80x24 and 120x40:
 * before a run, after one (every part reachable), and during one of the
 * default grid (its progress and time left), which Esc cancels. */
START_TEST(niah_screen_uncut)
{
    static const int SIZES[][2] = {{80, 24}, {120, 40}};
    for (size_t i = 0; i < N_OF(SIZES); i++) {
        CutLog c;
        open_cut_log(&c, SIZES[i][0], SIZES[i][1], NO_PLUGIN, "A 20 GiB KV pool");
        press("F7", "Press r");
        press(SHORT_NIAH, "0.9");
        keys("r");
        wait_for_s("NIAH run done", 60);
        assert_reachable(NIAH_PARTS, NULL);
        quit_lab();
        assert_no_cuts(&c, "NIAH");
        open_cut_log(&c, SIZES[i][0], SIZES[i][1], NO_PLUGIN, "A 20 GiB KV pool");
        press("F7", "Press r");
        keys("r");
        wait_for_s("left", 30);
        keys("Escape");
        wait_for_s("cancelled", 30);
        quit_lab();
        assert_no_cuts(&c, "NIAH");
    }
}
END_TEST

/* Without a GPU the NIAH screen shows the grid stored from the H200 run in
 * a section titled with the GPU and the NIAH run's date, before a run and
 * after one: what ran it, and each format's accuracy and verdict as the
 * file has them (not rejected: accepted or undecided by the interval at
 * the file's tolerance); s hides the section. Nothing is cut at 80x24 and 120x40. */
START_TEST(niah_screen_stored)
{
    StoredRun r;
    Error e;
    ck_assert_msg(stored_load(&r, STORED_FILE, &e) == 0, "%s", e.msg);
    ck_assert_msg(stored_niah_check(&r, &e) == 0, "%s", e.msg);
    const NiahFigures *n = &r.niah;
    char title[256], verdicts[NIAH_FIG_FORMATS_MAX][2][96];
    snprintf(title, sizeof title, "Measured on %s, %s, not this machine", n->device, n->measured);
    const char *parts[4 + 2 * NIAH_FIG_FORMATS_MAX] = {title, n->command};
    size_t k = 2;
    for (size_t f = 0; f < n->n_formats; f++) {
        /* the verdict line's start (its accuracy) and end (diff_high and
         * the verdict), either side of where a narrow view wraps it */
        snprintf(verdicts[f][0], sizeof verdicts[f][0], "%s%s: %.1f%%", n->formats[f].id,
                 n->formats[f].simulated ? " (simulated)" : "", 100 * n->formats[f].all.accuracy);
        const NiahFigure *a = &n->formats[f].all;
        const Verdict v = (Verdict)n->formats[f].verdict;      // and, not rejected, the whole interval's
        const char *word = v != VERDICT_NOT_REJECTED                 ? verdict_word(v)
                           : stats_accepted(a->diff_low, a->trials, n->tolerance) ? "accepted"
                                                                                    : "undecided";
        snprintf(verdicts[f][1], sizeof verdicts[f][1], "%+.1f]: %s", f ? 100 * a->diff_high : 0, word);
        parts[k++] = verdicts[f][0];
        parts[k++] = verdicts[f][1];
    }
    parts[k] = NULL;
    static const int SIZES[][2] = {{80, 24}, {120, 40}};
    for (size_t i = 0; i < N_OF(SIZES); i++) {
        CutLog c;
        open_cut_log(&c, SIZES[i][0], SIZES[i][1], NO_PLUGIN, "A 20 GiB KV pool");
        press("F7", "Press r");
        assert_reachable(parts, NULL);
        press(SHORT_NIAH, "0.9");
        keys("r");
        wait_for_s("NIAH run done", 60);
        assert_reachable(parts, NULL);
        static char before[65536];
        snprintf(before, sizeof before, "%s", dump());
        keys("s");
        wait_changed(before);
        assert_reachable((const char *const[]){"CPU reference", "Per format", NULL}, NULL);
        assert_screen(!strstr(dump(), "not this machine"), "s left the stored NIAH section at the view's end");
        quit_lab();
        assert_no_cuts(&c, "NIAH");
    }
}
END_TEST

/* Every measured rate on the GPU lab has three significant digits in a unit
 * that fits it (MB/s, GB/s, ...): none reads 0. */
static void assert_rates(const char *buf)
{
    int seen = 0;
    for (const char *p = strstr(buf, "B/s"); p; p = strstr(p + 1, "B/s")) {
        const char *q = p - 1;          // the unit's prefix letter, then a space
        while (q > buf && *q != ' ')
            q--;
        const char *num = q - 1;
        while (num > buf && ((*num >= '0' && *num <= '9') || *num == '.'))
            num--;
        int digits = 0;
        for (const char *d = num + 1; d < q; d++)
            digits += *d >= '0' && *d <= '9';
        ck_assert_msg(digits == 3, "a rate without three significant digits: '%.*s'", (int)(p + 3 - num),
                      num);
        seen++;
    }
    ck_assert_msg(seen >= 6, "%d rates on the screen:\n%.4000s", seen, buf);
}

/* A second sweep keeps the first one's results on screen until it
 * completes; while it runs, and after Esc cancels it, the status says so
 * (never "sweep done"); the CPU reference's slopes are said in place to
 * say nothing about a GPU's speed; bandwidths are in units that fit. */
START_TEST(gpu_sweep_keeps_results)
{
    static char buf[65536];
    open_lab(200, 60, NO_PLUGIN);
    press("F6", "Press r");
    keys(SHORT_SWEEP " r");
    wait_sweep();
    screen(buf, sizeof buf, false);
    assert_rates(buf);
    ck_assert_msg(strstr(buf, "nothing about a GPU's speed"), "no word on the CPU's slopes:\n%.4000s", buf);
    press("2 0 0 Enter r", "left");         // a slower sweep: 200 timed runs a point
    screen(buf, sizeof buf, false);
    ck_assert_msg(!strstr(buf, "sweep done"), "a running sweep said done:\n%.4000s", buf);
    ck_assert(strstr(buf, "4.37e-05"));
    keys("Escape");                         // read between two points
    wait_for_s("cancelled", 20);
    screen(buf, sizeof buf, false);
    ck_assert_msg(!strstr(buf, "sweep done") && strstr(buf, "4.37e-05") && strstr(buf, "bf16"),
                  "after a cancelled sweep:\n%.4000s", buf);
    assert_rates(buf);
    quit_lab();
}
END_TEST

/* The stored GPU run the lab finds beside the build's kvlab (BUILD/stored,
 * a link to assets/stored), its title and its plot whole or not at all:
 * its y label with its first series' legend entry, hollow-marked. */
static const char *const STORED_PLOT[] = {"ms per step (stored)", "\u25CB bf16 NVIDIA H200", NULL};

/* Fails unless the stored run's slopes table on the screen (its rows hold
 * a slope and a rate: "e-0" and "B/s") gives each format's slope, one
 * layer where the column is there and x layers for the model, as the file
 * has it in three digits. */
static void assert_stored_slopes(const StoredRun *r)
{
    const char *p = dump();
    const bool layer = strstr(p, "layer     model") != NULL;
    for (size_t i = 0; i < r->n_formats; i++) {
        char want_layer[32], want_model[32], got[2][64] = {"", ""};
        snprintf(want_layer, sizeof want_layer, "%.2e", r->formats[i].slope);
        snprintf(want_model, sizeof want_model, "%.2e", r->formats[i].slope * (double)r->layers);
        bool found = false;
        for (const char *line = p; *line && !found;) {
            const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
            char row[1024];
            snprintf(row, sizeof row, "%.*s", (int)(end - line), line);
            const char *at = strstr(row, r->formats[i].format);
            if (at && at[strlen(r->formats[i].format)] == ' ' && strstr(row, "e-0") && strstr(row, "B/s")) {
                found = sscanf(at + strlen(r->formats[i].format), " %63s %63s", got[0], got[1]) == 2;
            }
            line = nl ? nl + 1 : end;
        }
        assert_screen(found, "no stored slopes row for %s", r->formats[i].format);
        if (layer)
            assert_screen(!strcmp(got[0], want_layer) && !strcmp(got[1], want_model),
                          "%s: layer %s, model %s on the screen; the file's %s, %s", r->formats[i].format, got[0],
                          got[1], want_layer, want_model);
        else
            assert_screen(!strcmp(got[0], want_model), "%s: model %s on the screen; the file's %s",
                          r->formats[i].format, got[0], want_model);
    }
}

/* Without a GPU (the plugin pointing nowhere) the GPU lab shows the
 * results stored from a GPU run in a section of their own, titled with
 * the GPU and the date, before a sweep and after one, their plot whole or
 * not at all and their slopes the file's; s hides them. Nothing is cut or
 * lost at 80x24 and 120x40. */
START_TEST(gpu_lab_stored)
{
    StoredRun r;
    Error e;
    ck_assert_msg(stored_load(&r, STORED_FILE, &e) == 0, "%s", e.msg);
    char title[256];
    snprintf(title, sizeof title, "Measured on %s, %s, not this machine", r.device, r.measured);
    const char *const parts[] = {title, r.command, "bandwidth at 128k", NULL};
    const char *const after_sweep[] = {"CPU reference", "published", title, r.command, NULL};
    static const int SIZES[][2] = {{80, 24}, {120, 40}};
    for (size_t i = 0; i < N_OF(SIZES); i++) {
        CutLog c;
        open_cut_log(&c, SIZES[i][0], SIZES[i][1], NO_PLUGIN, "A 20 GiB KV pool");
        press("F6", "Press r");
        assert_reachable(parts, STORED_PLOT);
        assert_stored_slopes(&r);           // the stored section ends the view, scrolled to its end
        keys(SHORT_SWEEP " r");
        wait_sweep();
        assert_reachable(after_sweep, STORED_PLOT);
        assert_stored_slopes(&r);
        static char before[65536];
        snprintf(before, sizeof before, "%s", dump());
        keys("s");
        wait_changed(before);
        assert_reachable((const char *const[]){"CPU reference", "published", NULL}, GPU_PLOT);
        assert_screen(!strstr(dump(), "not this machine") && !strstr(dump(), "bandwidth at 128k"),
                      "s left the stored results at the view's end");
        quit_lab();
        assert_no_cuts(&c, "GPU lab");
    }
}
END_TEST

/* The part of `line` from display column `col` on (UTF-8 characters are
 * one column each). */
static const char *from_column(const char *line, int col)
{
    for (int c = 0; *line && c < col; line++)
        c += ((unsigned char)line[1] & 0xC0) != 0x80;
    return line;
}

/* The display column of p in line. */
static int column_of(const char *line, const char *p)
{
    int c = 0;
    for (; line < p; line++)
        c += ((unsigned char)*line & 0xC0) != 0x80;
    return c;
}

/* A series in a plot's legend shows at least one of its markers in the
 * plot, or its legend entry says which series hides it: the calculator's
 * plot for Llama-3.1-405B as MHA, where FP8 and INT8 fall on the same
 * cells. Markers are counted in the plot's own rows and columns, between
 * its title and its legend, so that no other text counts. */
START_TEST(plot_markers_visible)
{
    static char buf[65536];
    open_lab(120, 40, "");
    press("F4", "Sequences the pool holds");
    press("Down Down Down Down 2 0 G i B Enter", "20 GiB");         // a pool of its own
    press("Up Up Up Up - -", "Llama-3.1-405B");
    press("Down Down Down Down Down Down Down Down Down Down Down Enter", "As MHA                       on");
    screen(buf, sizeof buf, false);
    char *lines[128];
    size_t n = 0;
    for (char *p = strtok(buf, "\n"); p && n < N_OF(lines); p = strtok(NULL, "\n"))
        lines[n++] = p;
    size_t title = n, legend = n;
    int col = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = strstr(lines[i], "Step-floor speedup over BF16 by context");
        if (t && title == n)
            title = i, col = column_of(lines[i], t);
        else if (title < n && legend == n && strstr(from_column(lines[i], col), "\u25CF bf16"))
            legend = i;
    }
    ck_assert_msg(title < n && legend < n && legend > title + 4, "no plot on the screen");
    static const char *const MARKS[] = {"\u25CF", "\u25A0", "\u25B2", "\u25C6", "\u25BC", "\u2605", "\u25CB"};
    static const char *const NAMES[] = {"bf16", "fp8_e4m3", "int8", "int4", "int2", "nvfp4", "mxfp4"};
    for (size_t k = 0; k < N_OF(MARKS); k++) {
        int count = 0;
        for (size_t i = title + 1; i < legend; i++)
            for (const char *p = strstr(from_column(lines[i], col), MARKS[k]); p; p = strstr(p + 1, MARKS[k]))
                count++;
        /* the entry: its marker and name at the start of a legend row or
         * after two spaces, up to the next entry */
        char own[64], text[256] = "";
        snprintf(own, sizeof own, "%s %s", MARKS[k], NAMES[k]);
        for (size_t i = legend; i < n && !*text; i++) {
            const char *row = from_column(lines[i], col);
            for (const char *p = strstr(row, own); p && !*text; p = strstr(p + 1, own))
                if (p == row || (p - row >= 2 && p[-1] == ' ' && p[-2] == ' '))
                    snprintf(text, sizeof text, "%s", p);
        }
        ck_assert_msg(*text, "%s missing from the legend", own);
        char *end = strstr(text, "  ");
        if (end)
            *end = '\0';
        ck_assert_msg(count > 0 || strstr(text, "(under "), "%s hidden in the plot, its legend silent: %s", own,
                      text);
    }
    quit_lab();
}
END_TEST

/* Works in a new temporary directory `dir` (a mkdtemp template); cwd
 * keeps the directory to come back to. */
static void enter_temp_dir(char *dir, char *cwd, size_t n)
{
    ck_assert(mkdtemp(dir) != NULL);
    ck_assert(getcwd(cwd, n) != NULL);
    ck_assert_int_eq(chdir(dir), 0);
}

/* Back to cwd, the temporary directory and its files removed. */
static void leave_temp_dir(const char *dir, const char *cwd)
{
    char cmd[1100];
    ck_assert_int_eq(chdir(cwd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* The Model field steps through every model of the catalog, both ways,
 * including those whose weights leave an H100 nothing for the KV cache:
 * they are kept, and the view says so and names the fix, with the figures
 * that need no pool still shown. */
START_TEST(calc_every_model_reachable)
{
    CatalogList models;
    Error e;
    ck_assert_int_eq(catalog_list(test_datadir(), CATALOG_MODELS, &models, &e), 0);
    size_t start = 0;
    for (size_t i = 0; i < models.count; i++)
        if (!strcmp(models.names[i], "llama-3.1-8b"))
            start = i;
    char path[1024];
    Gpu gpu;
    ck_assert_int_eq(catalog_path(test_datadir(), CATALOG_GPUS, "h100-sxm", path, sizeof path, &e), 0);
    ck_assert_msg(gpu_load(&gpu, path, &e) == 0, "%s", e.msg);
    const double usable = 0.9 * (double)gpu.memory;     // x the screen's GPU share, 0.9
    open_lab(120, 40, "");
    press("F4", "Sequences the pool holds");
    for (size_t k = 1; k <= 2 * models.count; k++) {
        bool up = k <= models.count;
        size_t i = up ? (start + k) % models.count : (start + 2 * models.count - k) % models.count;
        press(up ? "+" : "-", field_line("Model", models.names[i]));
        const char *d = view_text();
        Model m = test_model(models.names[i]);
        bool fits = (double)m.weight_bytes < usable;
        assert_screen(!strstr(d, "kept the previous value"), "%s refused", models.names[i]);
        assert_screen((strstr(d, "nothing is left for the KV cache") != NULL) == !fits &&
                          (fits || strstr(d, "tensor parallelism over")),
                      "%s (weights %s)", models.names[i], u128s(m.weight_bytes));
        assert_screen(strstr(d, "step ms") != NULL, "%s shows no figures", models.names[i]);
    }
    quit_lab();
}
END_TEST

/* Once the Scenarios screen's inputs differ from the scenario's, a figure
 * that depends on them reads in full and is not compared (n/a, with the
 * legend saying why), and the explanation of a wrong seed goes with its
 * comparison; a figure at its own context stays compared. The export
 * carries the screen's values. */
START_TEST(scenarios_changed_inputs)
{
    char dir[] = "/tmp/kvlab-export-XXXXXX", cwd[1024];
    enter_temp_dir(dir, cwd, sizeof cwd);
    open_lab(200, 60, "");
    wait_for("71 / 20 slots");              // the explanation, while it applies
    press("Down Enter 1 k Enter", "0.125 GiB");
    const char *d = view_text();
    assert_screen(strstr(d, "0.0625 GiB") && strstr(d, "n/a = not compared") && !strstr(d, "seed wrong") &&
                      !strstr(d, "71 / 20 slots") && !strstr(d, "0.1 GiB"),
                  "at 1k, the figures are still compared");
    press("e", "wrote kvlab-scenarios-");
    /* speedup-vs-context at 32k: its figures at their own contexts still compare */
    press("Up +", "FP8 KV speedup grows with context");
    press("Down Enter 3 2 k Enter", "32,768 (32k)");
    d = view_text();
    assert_screen(strstr(d, "1.81x  1.80x  seed wrong") && strstr(d, "(16 + 137.44)") &&
                      strstr(d, "exceed its 85.52 GB by 10.48 GB") &&
                      strstr(d, "speedup is over fp16 (as many bytes as BF16)"),
                  "speedup-vs-context at 32k");
    /* weights that leave the GPU no pool are kept: the figures that need one say so */
    press("Up + + + +", "128K context on one 80 GB H100");
    press("Down Down Down Down Enter 9 0 G B Enter", "no KV pool");
    d = view_text();
    assert_screen(strstr(d, "no KV pool: the weights (90.00 GB) and the reserve (6.00 GB) take all") &&
                      strstr(d, "no figure = calc cannot work it out from these inputs") && !strstr(dump(), "kept the previous"),
                  "h100-128k with 90 GB of weights");
    quit_lab();
    char cmd[1200], out[8192];
    snprintf(cmd, sizeof cmd, "cat %s/kvlab-scenarios-*.csv", dir);
    shell(cmd, out, sizeof out);
    ck_assert_msg(strstr(out, "\"BF16 per sequence\",bf16,gib_per_sequence,\"0.125\",\"1.0\",not_applicable") &&
                      strstr(out, "\"BF16 slots\",bf16,slots,\"160\",\"20\",not_applicable"),
                  "%s", out);
    leave_temp_dir(dir, cwd);
}
END_TEST

/* A view that does not fit says so with a marker at the edge where more
 * lies (in ASCII too); it scrolls to its last line and no further; another
 * scenario starts at its top; a resize that makes it all fit shows it all
 * from the top, markers gone. The help scrolls the same way. */
START_TEST(scrolling_marked_and_clamped)
{
    open_lab(80, 24, "");
    wait_for("\u25BC more below (Tab, Down)");
    ck_assert(!strstr(dump(), "more above"));
    press("Tab", "Inputs (Tab: back)");
    press("NPage NPage NPage NPage NPage NPage NPage NPage", "more above");
    wait_for("capacity gain is a little");  // the last note's last line
    static char end[65536];
    snprintf(end, sizeof end, "%s", dump());
    assert_screen(!strstr(end, "more below"), "a marker at the end");
    keys("Down Down Down NPage");
    usleep(300000);
    assert_screen(!strcmp(end, dump()), "scrolled past the end");
    /* another scenario starts at its top */
    press("Tab +", "seed 002, section 6-9");
    ck_assert(!strstr(dump(), "more above"));
    press("Tab NPage", "more above");
    tmux(NULL, 0, "resize-window -t lab -x 200 -y 60");
    wait_for("FP8 KV speedup grows with context");
    assert_screen(!strstr(dump(), "more above") && !strstr(dump(), "more below"), "markers where it all fits");
    tmux(NULL, 0, "resize-window -t lab -x 80 -y 24");
    wait_for("FP8 KV speedup grows with context");
    ck_assert(!strstr(dump(), "more above"));
    /* the help at 80x24 scrolls too, and any other key closes it */
    press("F1", "more below (Down)");
    press("NPage NPage NPage", "more above");
    static char help[65536];
    snprintf(help, sizeof help, "%s", dump());
    keys("x");
    wait_changed(help);
    ck_assert(!strstr(dump(), "Help: every key"));
    quit_lab();
    open_lab(80, 24, "KVLAB_ASCII=1");
    wait_for("v more below (Tab, Down)");
    press("NPage", "^ more above");
    quit_lab();
}
END_TEST

/* Every field's error names the field; Enter on an empty edit keeps the
 * value and says so; without a GPU the pool and bandwidth do not claim to
 * come from one; under tensor parallelism the weights are said to be the
 * whole model's, and what one GPU holds; a pool larger than the GPU beside
 * the weights is flagged in place. */
START_TEST(fields_say_what_they_mean)
{
    open_lab(160, 45, "");
    static const struct { const char *keys, *want; } BAD[] = {
        {"Down Enter x Enter", "Context: context 'x' is not a number"},
        {"Down Enter x Enter", "Batch: value 'x' is not a number"},
        {"Down Enter a b c Enter", "KV pool: size 'abc' is not a number"},
        {"Down Enter x Enter", "Weights: size 'x' is not a number"},
        {"Down Enter x Enter", "Bandwidth: rate 'x' is not a number"},
    };
    for (size_t i = 0; i < N_OF(BAD); i++)
        press(BAD[i].keys, BAD[i].want);
    press("Up Up Up Up Enter Enter", "nothing typed: Context stays 8,192 (8k)");
    ck_assert(!strstr(dump(), "is not a number"));
    press("F4", "Sequences the pool holds");
    press("Down Down Down Down Down Down Down Enter x Enter", "GPU share: expected a number");
    press("Down Enter x Enter", "Tensor parallel: value 'x' is not a number");
    press("Up Up Up Up Up Up Up -", field_line("GPU", "b200"));
    press("- -", field_line("GPU", "none"));
    const char *d = dump();
    assert_screen(!strstr(d, "from GPU") && !strstr(d, "GPU's") && strstr(d, field_line("KV pool", "none")),
                  "GPU none still names the GPU");
    press("+ + +", field_line("GPU", "h100-sxm"));
    press("Up - - - -", field_line("Model", "llama-3-70b"));
    press("Down Down Down Down Down Down Down Down 2 Enter", "tensor parallel over 2 GPUs");
    assert_screen(strstr(view_text(), "weights 141.11 GB for the whole model, 70.55 GB per GPU"), "the weights under TP");
    press("Up Up Up Up 5 0 0 G i B Enter", "exceed its 85.52 GB");
    quit_lab();
}
END_TEST

/* At 80x24, the size the lab needs, and at 120x40, the Scenarios and
 * Calculator screens and the help cut no text and lose no line, through
 * every scenario, every model, a pool too large, tensor parallelism and no
 * GPU, scrolled from top to bottom. */
START_TEST(scenarios_calc_help_uncut)
{
    static const int SIZES[][2] = {{80, 24}, {120, 40}};
    for (size_t i = 0; i < N_OF(SIZES); i++) {
        int w = SIZES[i][0], h = SIZES[i][1];
        assert_uncut(w, h, "+ + + + + + Down Enter 1 k Enter Tab NPage NPage NPage NPage NPage NPage "
                           "NPage NPage NPage Tab Up + Tab NPage NPage NPage NPage NPage Tab +",
                     "seed 002, section 6-9", "Scenarios");
        assert_uncut(w, h, "F4 + + + + + + + + Down - - - Tab NPage NPage NPage Tab + + + Up - - - "
                           "Down Down Down Down 5 0 0 G i B Enter Down Down Down Down 2 Enter "
                           "Tab NPage NPage NPage NPage",
                     field_line("Tensor parallel", "2"), "Calculator");
        assert_uncut(w, h, "F1 NPage NPage NPage x F4 F1 NPage NPage NPage x", "Sequences the pool holds",
                     "Help");
    }
}
END_TEST

/* The parts of the Scenarios screen (pool-20gib) and of the Calculator. */
static const char *const SCENARIO_PARTS[] = {"A 20 GiB KV pool", "seed 000", "B/elem", "what the seed says",
                                             "NVFP4 slots over BF16 slots", "verdict: agrees =",
                                             "capacity gain is a little", NULL};
static const char *const CALC_PARTS[] = {"Llama-3.1-8B", "step ms", "Sequences the pool holds",
                                         "Step-floor speedup over BF16 by context", "\u25CB mxfp4", NULL};
/* The calculator's plot whole or not at all: its title with its legend. */
static const char *const CALC_PLOT[] = {"Step-floor speedup over BF16 by context", "\u25CF bf16",
                                        "\u25CB mxfp4", "context (tokens)", NULL};

/* At 80x24 every part of the Scenarios and Calculator screens can be
 * scrolled to, cut and lost nowhere, the plot whole or not at all; with a
 * model that leaves the GPU no KV pool, the calculator's bars say so in a
 * line, with no blank lines left for bars that are not there. */
START_TEST(scenarios_calc_parts_at_80x24)
{
    CutLog c;
    open_cut_log(&c, 80, 24, "", "A 20 GiB KV pool");
    assert_reachable(SCENARIO_PARTS, NULL);
    press("F4", "Sequences the pool holds");
    assert_reachable(CALC_PARTS, CALC_PLOT);
    press("- - - -", field_line("Model", "llama-3-70b"));
    assert_reachable((const char *const[]){"no KV pool", "Sequences the pool holds", "none: see above", NULL},
                     CALC_PLOT);
    while (strstr(dump(), "more above"))
        keys("PPage");
    /* from the bars' title down: the title, "none", then one blank line at
     * most before the plot (or the note that it is further down) */
    press("Tab", "Inputs (Tab: back)");
    static char before[65536];
    for (;;) {
        const char *d = dump(), *none = strstr(d, "none: see above"), *more = strstr(d, "more below");
        int rows_after = 0;
        for (const char *p = none; p && (!more || p < more) && (p = strchr(p, '\n')); p++)
            rows_after++;
        if (none && (rows_after > 4 || !more))
            break;
        snprintf(before, sizeof before, "%s", d);
        keys("Down");
        wait_changed(before);
    }
    const char *v = view_text();
    const char *none = strstr(v, "none: see above");
    assert_screen(none && (strstr(none, "none: see above Step-floor") || strstr(none, "none: see above (scroll")),
                  "no bars, and what follows is not the plot");
    char rows[65536];
    snprintf(rows, sizeof rows, "%s", dump());
    char *at = strstr(rows, "none: see above"), *line = strchr(at, '\n') + 1;
    int blank = 0;
    for (char *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = '\0';
        const char *bar = strstr(line, "\u2502");
        const char *q = bar ? bar + strlen("\u2502") : "";
        if (strspn(q, " ") != strlen(q))
            break;
        blank++;
    }
    assert_screen(blank <= 1, "%d blank lines after the bars' note", blank);
    keys("Tab");
    quit_lab();
    assert_no_cuts(&c, "Scenarios");
    open_cut_log(&c, 80, 24, "", "A 20 GiB KV pool");
    press("F4", "Sequences the pool holds");
    quit_lab();
    assert_no_cuts(&c, "Calculator");
}
END_TEST

/* The scenario's verdict words are one table's (calc's), the same in the
 * lab and in kvlab scenario show, with the same legend: the shipped
 * pool-20gib and test scenarios that disagree without a reason and whose
 * reason is stale. */
START_TEST(verdicts_match_cli)
{
    char dir[] = "/tmp/kvlab-verdicts-XXXXXX", cmd[3000];
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "ln -s '%s/models' '%s/gpus' %s/ && cp '%s/pool-20gib.json' "
                              "'%s/scenario_stale.json' '%s/scenario_unexplained.json' %s/",
             test_datadir(), test_datadir(), dir, test_datadir(), test_testdata(), test_testdata(), dir);
    ck_assert_int_eq(system(cmd), 0);
    char env[128];
    snprintf(env, sizeof env, "KVLAB_DATA=%s", dir);
    open_lab(200, 60, env);
    static const char *const NAMES[] = {"pool-20gib", "scenario_stale", "scenario_unexplained"};
    for (size_t n = 0; n < N_OF(NAMES); n++) {
        static Scenario sc;
        char path[1100];
        Error e;
        snprintf(path, sizeof path, "%s/%s.json", dir, NAMES[n]);
        ck_assert_msg(scenario_load(&sc, path, test_datadir(), &e) == 0, "%s", e.msg);
        press(n ? "+" : "Escape", sc.title);
        const char *argv[] = {"scenario", "show", path, NULL};
        RunResult r = run_kvlab(argv, NULL);
        const char *v = view_text();
        FigureVerdict verdicts[SCENARIO_FIGURES_MAX];
        for (size_t i = 0; i < sc.n_figures; i++) {
            FigureResult fr;
            ck_assert_int_eq(figure_eval(&sc, &sc.figures[i], &fr, &e), 0);
            verdicts[i] = fr.verdict;
            char row[256];
            snprintf(row, sizeof row, "%s", sc.figures[i].label);
            const char *cli = strstr(r.out, row), *lab = strstr(dump(), row);
            ck_assert_msg(cli && lab, "%s: no row '%s'", NAMES[n], row);
            const char *word = figure_verdict_name(fr.verdict);
            ck_assert_msg(strstr(cli, word) && strstr(cli, word) < strchr(cli, '\n'), "CLI: '%s' not %s", row, word);
            ck_assert_msg(strstr(lab, word) && strstr(lab, word) < strchr(lab, '\n'), "lab: '%s' not %s", row, word);
        }
        char legend[1024];
        figure_legend(verdicts, sc.n_figures, legend, sizeof legend);
        ck_assert_msg(strstr(r.out, legend), "CLI legend:\n%s", r.out);
        assert_screen(strstr(v, legend), "lab legend of %s", NAMES[n]);
        run_free(&r);
    }
    quit_lab();
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The GB figure in `text` after `what` ("at most "), as kvlab calc takes
 * it ("34.80GB"); "" when there is none. */
static const char *gb_after(const char *text, const char *what, char *out, size_t n)
{
    const char *p = strstr(text, what);
    double v;
    out[0] = '\0';
    if (p && sscanf(p + strlen(what), "%lf GB", &v) == 1)
        snprintf(out, n, "%.2fGB", v);
    return out;
}

/* The warning on a pool that does not fit one GPU beside the weights gives
 * advice that works: the tensor-parallel degree and the pool it names,
 * given to kvlab calc, leave no warning. Llama-3.1-405B on an H100 with a
 * 500 GiB pool (its weights alone need tensor parallelism, and then a
 * smaller pool), then random models, GPUs, pools and degrees. */
START_TEST(fit_warning_advice_works)
{
    CatalogList models, gpus;
    Error e;
    ck_assert_int_eq(catalog_list(test_datadir(), CATALOG_MODELS, &models, &e), 0);
    ck_assert_int_eq(catalog_list(test_datadir(), CATALOG_GPUS, &gpus, &e), 0);
    Rng g = {test_seed() ^ 0xF17};
    int advised = 0;
    for (int i = 0; i < 40; i++) {
        char pool[32], tp[16];
        const char *model = i ? models.names[rng_range(&g, 0, models.count - 1)] : "llama-3.1-405b";
        const char *gpu = i ? gpus.names[rng_range(&g, 0, gpus.count - 1)] : "h100-sxm";
        if (i)
            snprintf(pool, sizeof pool, "%lluGB", (unsigned long long)rng_range(&g, 1, 1000));
        else
            snprintf(pool, sizeof pool, "500GiB");
        snprintf(tp, sizeof tp, "%d", i ? 1 << rng_range(&g, 0, 3) : 1);
        const char *argv[] = {"calc", "--model", model, "--gpu", gpu, "--pool", pool, "--tp", tp, NULL};
        RunResult r = run_kvlab(argv, NULL);
        const char *w = strstr(r.out, "warning: ");
        if (r.status != 0 || !w) {              // a degree that does not split the model; a pool that fits
            ck_assert(i > 0);
            run_free(&r);
            continue;
        }
        char line[1024], newtp[16] = "", newpool[32];
        snprintf(line, sizeof line, "%.*s", (int)strcspn(w, "\n"), w);
        const char *over = strstr(line, "tensor parallelism over ");
        if (over)
            snprintf(newtp, sizeof newtp, "%d", atoi(over + strlen("tensor parallelism over ")));
        gb_after(line, "at most ", newpool, sizeof newpool);
        if (i == 0)
            ck_assert_msg(strstr(line, "the weights alone need tensor parallelism over 16 GPUs") && *newpool,
                          "%s", line);
        ck_assert_msg(*newtp || *newpool || strstr(line, "a GPU with more memory"), "no advice: %s", line);
        run_free(&r);
        if (!*newtp && !*newpool)
            continue;
        const char *again[] = {"calc", "--model", model, "--gpu", gpu, "--pool", *newpool ? newpool : pool,
                               "--tp", *newtp ? newtp : tp, NULL};
        r = run_kvlab(again, NULL);
        ck_assert_seeded(r.status == 0 && !strstr(r.out, "warning: "), "%s %s %s %s: '%s' did not work:\n%s", model,
                         gpu, pool, tp, line, r.out);
        run_free(&r);
        advised++;
    }
    ck_assert_int_ge(advised, 5);
}
END_TEST

/* ------------------------------------------------------------------------
 * For demos: reset, the pinned baseline, the saved lab state
 */

/* Fails naming every line of the cut log, whatever drew it; removes it. */
static void assert_nothing_cut(CutLog *c)
{
    static char cuts[65536];
    FILE *f = fopen(c->log, "r");
    ck_assert(f != NULL);
    size_t n = fread(cuts, 1, sizeof cuts - 1, f);
    cuts[n] = '\0';
    fclose(f);
    unlink(c->log);
    ck_assert_msg(n == 0, "cut or lost:\n%.3000s", cuts);
}

/* R puts every input of the screen back: on Scenarios to the scenario's
 * own (another scenario to its own), on the Calculator to the values it
 * started with; the function bar names R, P and S at 80x24, and nothing
 * is cut. */
START_TEST(reset_restores_inputs)
{
    CutLog c;
    open_cut_log(&c, 80, 24, "", "A 20 GiB KV pool");
    wait_for("RReset PPin SSave");
    keys("Down");                               // Scenario, Context
    press("1 6 k Enter", field_line("Context", "16,384 (16k)"));
    wait_for("inputs changed from the scenario's");
    press("R", "back to the scenario's inputs");
    wait_for(field_line("Context", "8,192 (8k)"));
    assert_screen(!strstr(view_text(), "inputs changed"), "the scenario's inputs are not all back");
    press("F4", "Sequences the pool holds");
    keys("Down Down Down");                     // Model, GPU, Context, Batch
    press("4 0 Enter", "tokens x 40");
    keys("Up Up");                              // GPU
    wait_for(field_line("Batch", "40"));
    static char before[65536];
    snprintf(before, sizeof before, "%s", dump());
    keys("+");
    wait_changed(before);
    assert_screen(!strstr(dump(), field_line("GPU", "h100-sxm")), "the GPU did not change");
    press("R", "back to its first value");
    wait_for("tokens x 16");
    wait_for(field_line("GPU", "h100-sxm"));
    quit_lab();
    assert_nothing_cut(&c);
}
END_TEST

/* The figure of `fmt` for field (slots, step_ms, bytes) from kvlab calc
 * --json for Llama-3.1-8B on an H100 SXM at `context` tokens x 16. */
static double calc_at(uint64_t context, const char *fmt, const char *field)
{
    char ctx[32];
    snprintf(ctx, sizeof ctx, "%llu", (unsigned long long)context);
    const char *argv[] = {"calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", ctx,
                          "--batch", "16", "--json", NULL};
    return cli_figure(argv, fmt, field);
}

/* The first line of the screen with `fmt` as a word: a format's row of
 * the pinned baseline's changes, which stand above the formats table. */
static const char *first_row(const char *fmt)
{
    static char line[512];
    char key[64];
    snprintf(key, sizeof key, " %s ", fmt);
    const char *p = strstr(dump(), key);
    ck_assert_msg(p != NULL, "no row %s", fmt);
    const char *start = p, *end = strchr(p, '\n');
    while (start > dump() && start[-1] != '\n')
        start--;
    snprintf(line, sizeof line, "%.*s", (int)((end ? end : p + strlen(p)) - start), start);
    return line;
}

/* A change as the pinned table shows it: "+48 GiB", "-42", "0". */
static const char *signed_text(char *buf, size_t n, double now, double was, bool size)
{
    char a[64];
    const double d = fabs(now - was);
    if (size)
        units_size(a, sizeof a, (u128)d);
    else
        u128_str(a, sizeof a, (u128)d, true);
    snprintf(buf, n, "%s%.40s", now > was ? "+" : now < was ? "-" : "", d ? a : "0");
    return buf;
}

/* P pins the Calculator's figures; after the context changes, each
 * format's change from them is what kvlab calc computes at the two
 * contexts (the cache and the sequences as the table prints them, the step
 * floor to its printed whole per cent); P again unpins. At 80x24, nothing
 * is cut. */
START_TEST(pin_shows_changes)
{
    Rng r = {test_seed()};
    const uint64_t pinned = 8192, drawn = rng_range(&r, 1, 63) * 1024;
    const uint64_t context = drawn >= pinned ? drawn + 1024 : drawn;    // another context than the pin's
    CutLog c;
    open_cut_log(&c, 80, 24, "", "A 20 GiB KV pool");
    press("F4", "Sequences the pool holds");
    press("P", "pinned:");
    wait_for("Change from the pin");
    keys("Down Down");                          // Model, GPU, Context
    char typed[64], shown[64], want[96];
    snprintf(typed, sizeof typed, "%llu Enter", (unsigned long long)context);
    snprintf(want, sizeof want, "%s tokens x 16", units_context(shown, sizeof shown, context));
    press(typed, want);
    static const char *const FORMATS[] = {"bf16", "fp8_e4m3", "int4", "nvfp4"};
    for (size_t i = 0; i < N_OF(FORMATS); i++) {
        const char *f = FORMATS[i], *row = first_row(f);
        char cache[64], slots[64];
        signed_text(cache, sizeof cache, calc_at(context, f, "bytes"), calc_at(pinned, f, "bytes"), true);
        signed_text(slots, sizeof slots, calc_at(context, f, "slots"), calc_at(pinned, f, "slots"), false);
        const double was = calc_at(pinned, f, "step_ms");
        const double step = (calc_at(context, f, "step_ms") - was) / was * 100;
        char words[5][64];
        ck_assert_seeded(sscanf(row + strspn(row, " "), "%63s %63s", words[0], words[1]) == 2, "%s", row);
        const char *after = strstr(row, cache);
        ck_assert_seeded(after != NULL, "%s: no cache change %s in '%s'", f, cache, row);
        int got = sscanf(after + strlen(cache), " %63s %63s %63s", words[2], words[3], words[4]);
        ck_assert_seeded(got == 3, "%s: '%s'", f, row);
        ck_assert_seeded(!strcmp(words[3], slots), "%s: sequences %s shown, %s computed", f, words[3], slots);
        ck_assert_seeded(fabs(strtod(words[4], NULL) - step) <= 0.5 + 1e-9, "%s: step %s shown, %.3f%% computed",
                         f, words[4], step);
    }
    press("P", "unpinned");
    assert_screen(!strstr(dump(), "Change from the pin"), "the changes stay after unpinning");
    quit_lab();
    assert_nothing_cut(&c);
}
END_TEST

/* The names in dir, sorted, one a line. */
static const char *dir_names(const char *dir)
{
    static char out[4096];
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | sort", dir);
    shell(cmd, out, sizeof out);
    return out;
}

/* S saves the lab, with its pinned baseline, atomically (nothing but the
 * file is left beside it) under $XDG_DATA_HOME/kvlab/ by a typed name or,
 * with Enter alone, a dated one, or at a typed path; kvlab --open FILE
 * opens the lab as it was: the screen, the inputs and the pin. At 80x24,
 * nothing is cut. */
START_TEST(save_and_open)
{
    char dir[] = "/tmp/kvlab-state-XXXXXX", env[128], path[256], args[300], want[300];
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(env, sizeof env, "XDG_DATA_HOME=%s", dir);
    CutLog c;
    open_cut_log(&c, 80, 24, env, "A 20 GiB KV pool");
    press("F4", "Sequences the pool holds");
    press("P", "pinned:");
    keys("Down Down");                          // Model, GPU, Context
    press("3 2 k Enter", "32,768 (32k) tokens x 16");
    const double slots = row_number("bf16", 2);      // the change in sequences: the first bf16 row is the pin's
    press("S", "save as");
    snprintf(path, sizeof path, "%s/kvlab/demo.json", dir);
    snprintf(want, sizeof want, "saved %s", path);
    press("d e m o Enter", want);
    press("S Enter", "saved");
    snprintf(want, sizeof want, "saved %s/kvlab/lab-", dir);
    wait_for(want);
    press("S", "save as");
    snprintf(args, sizeof args, "\"%s/mine.json\" Enter", dir);
    snprintf(want, sizeof want, "saved %s/mine.json", dir);
    press(args, want);
    quit_lab();
    assert_nothing_cut(&c);
    snprintf(want, sizeof want, "%s/kvlab", dir);
    const char *names = dir_names(want);
    ck_assert_msg(!strncmp(names, "demo.json\nlab-", 14) && strstr(names, ".json\n") &&
                      !strchr(strstr(names, "lab-"), '\n')[1],
                  "in %s: %s", want, names);
    ck_assert_str_eq(dir_names(dir), "kvlab\nmine.json\n");
    snprintf(args, sizeof args, "--open '%s'", path);
    start_cut_log(&c, 80, 24, "", args);
    wait_for("opened");
    wait_for("32,768 (32k) tokens x 16");
    wait_for("Change from the pin");
    ck_assert_double_eq(row_number("bf16", 2), slots);
    press("F3", "A 20 GiB KV pool");
    quit_lab();
    assert_nothing_cut(&c);
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(args), 0);
}
END_TEST

/* A saved lab state that cannot be applied is refused before the
 * terminal is asked for, with exit status 2 and its file, line and
 * column: a screen, input or choice the lab does not have, a value that
 * does not parse, a pin where nothing pins, a lesson the lab does not
 * have or a page where a screen shows none, a repeated input, another
 * version, broken JSON; a good one gets as far as the terminal. */
START_TEST(open_refuses_bad_state)
{
    static const struct {
        const char *line2, *want;
    } BAD[] = {
        {" \"screens\": {\"Calc\": {}}}", ":2:14: no screen 'Calc'; the screens: Lessons, Scenarios, Calculator"},
        {" \"screens\": {\"Calculator\": {\"inputs\": {\"Contxt\": \"8k\"}}}}",
         ":2:40: the Calculator screen has no input 'Contxt'; its inputs: Model, GPU, Context"},
        {" \"screens\": {\"Calculator\": {\"inputs\": {\"Context\": \"eight\"}}}}", ":2:51: Context: "},
        {" \"screens\": {\"Calculator\": {\"inputs\": {\"Model\": \"gpt-9\"}}}}",
         ":2:49: Model: no choice 'gpt-9'; expected one of"},
        {" \"screens\": {\"Calculator\": {\"inputs\": {\"Batch\": 2}}}}", ":2:49: field 'Batch': expected a string"},
        {" \"screens\": {\"Calculator\": {\"inputs\": {\"Batch\": \"2\", \"Batch\": \"3\"}}}}",
         ":2:54: field 'Batch' appears twice"},
        {" \"screens\": {\"Calculator\": {\"pinned\": {\"Batch\": \"0\"}}}}", ":2:49: Batch: "},
        {" \"screens\": {\"GPU lab\": {\"pinned\": {}}}}", ":2:26: the GPU lab screen has no figures to pin"},
        {" \"screens\": {\"Scenarios\": {\"inputs\": {\"Scenario\": \"nope\"}}}}",
         ":2:51: Scenario: no choice 'nope'"},
        {" \"screens\": {\"Lessons\": {\"page\": {\"id\": \"no-such-lesson\", \"line\": 3}}}}",
         ":2:41: no lesson 'no-such-lesson'; the lessons: "},
        {" \"screens\": {\"Lessons\": {\"page\": {\"id\": \"formats\", \"line\": -1}}}}",
         ":2:60: field 'line': expected a whole number"},
        {" \"screens\": {\"Calculator\": {\"page\": {\"id\": \"formats\"}}}}",
         ":2:29: the Calculator screen shows no pages"},
        {" \"screens\": []}", ":2:13: field 'screens' must be a JSON object"},
        {" \"screen\": \"GPU lab\"}", ":2:2: field 'screen' appears twice"},
        {"}", ":2:1:"},
    };
    char dir[] = "/tmp/kvlab-open-XXXXXX", path[128];
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/state.json", dir);
    for (size_t i = 0; i <= N_OF(BAD); i++) {
        FILE *f = fopen(path, "w");
        ck_assert(f != NULL);
        if (i < N_OF(BAD))
            fprintf(f, "{\"version\": 1, \"screen\": \"Calculator\",\n%s\n", BAD[i].line2);
        else
            fprintf(f, "{\"version\": 1, \"screen\": \"GPU lab\",\n \"screens\": {\"Calculator\": "
                       "{\"inputs\": {\"Context\": \"32k\"}, \"pinned\": {\"GPU\": \"none\"}}}}\n");
        fclose(f);
        RunResult r = run_kvlab((const char *const[]){"--open", path, NULL}, "");
        ck_assert_int_eq(r.status, 2);
        if (i < N_OF(BAD)) {
            char want[256];
            snprintf(want, sizeof want, "%s%s", path, BAD[i].want);
            ck_assert_msg(strstr(r.err, want), "case %zu: wanted '%s', got: %s", i, want, r.err);
        } else {
            ck_assert_msg(strstr(r.err, "interactive terminal"), "a good state: %s", r.err);
        }
        run_free(&r);
    }
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    fprintf(f, "{\"version\": 2, \"screen\": \"Calculator\"}\n");
    fclose(f);
    RunResult r = run_kvlab((const char *const[]){"--open", path, NULL}, "");
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, ":1:13: field 'version'"), "%s", r.err);
    run_free(&r);
    r = run_kvlab((const char *const[]){"--open", NULL}, "");
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--open takes one saved lab state"), "%s", r.err);
    run_free(&r);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* ------------------------------------------------------------------------
 * Lessons: the first screen, the reader, widgets, predictions, exercises,
 * the glossary
 */


/* A fresh $XDG_DATA_HOME for the lab's progress, as an env prefix in env. */
static void fresh_data_home(char *dir, size_t n, char *env, size_t m)
{
    snprintf(dir, n, "/tmp/kvlab-home-XXXXXX");
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(env, m, "XDG_DATA_HOME=%s", dir);
}

static void remove_tree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* The lab at w x h on its first screen, the Lessons, with a cut log. */
static void open_lessons(CutLog *c, int w, int h, const char *env)
{
    start_cut_log(c, w, h, env, "");
    wait_for("start here");
}

/* The shipped lesson files, by name, as the lab lists them. */
static size_t lesson_paths(char paths[][1024], size_t max)
{
    const char *dir = getenv("KVLAB_LESSONS");
    ck_assert(dir != NULL);
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    ck_assert(n >= 0);
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        const char *s = names[i]->d_name;
        size_t len = strlen(s);
        if (k < max && len > 6 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] == '-' &&
            !strcmp(s + len - 3, ".md"))
            snprintf(paths[k++], 1024, "%s/%s", dir, s);
        free(names[i]);
    }
    free(names);
    return k;
}

/* The lab at 80x24 with a fresh $XDG_DATA_HOME (dir, n bytes) and a cut
 * log, on the first lesson. */
static void open_first_lesson(CutLog *c, char *dir, size_t n)
{
    char env[128];
    fresh_data_home(dir, n, env, sizeof env);
    open_lessons(c, 80, 24, env);
    press("Enter", " lines");
}

/* Presses Tab until `want` shows (a focused item), at most 200 times. */
static void tab_to(const char *want)
{
    for (int i = 0; i < 200; i++) {
        if (strstr(dump(), want))
            return;
        static char before[65536];
        snprintf(before, sizeof before, "%s", dump());
        keys("Tab");
        wait_changed(before);
    }
    ck_abort_msg("Tab never reached '%s'", want);
}

/* The lab opens on the lessons' contents, the first lesson marked "start
 * here"; Enter opens it, its position shows and moves as it scrolls; Esc
 * goes back to the contents, which now count it read, as the progress
 * file does; at 80x24 nothing is cut. */
START_TEST(lessons_first_screen)
{
    char dir[64], env[128];
    fresh_data_home(dir, sizeof dir, env, sizeof env);
    CutLog c;
    open_lessons(&c, 80, 24, env);
    wait_for("0 of ");
    wait_for(" 1. ");
    press("Enter", " lines");
    const char *p = strstr(dump(), " lines");
    while (p > dump() && p[-1] != ' ')
        p--;
    const int shown = atoi(p);
    press("NPage", "more above");
    char want[32];
    snprintf(want, sizeof want, " %d/", shown + 19);        // a page: the window less its marks
    wait_for(want);
    press("Escape", "lessons read");
    wait_for(" read, exercises");
    quit_lab();
    assert_nothing_cut(&c);
    char path[128], text[4096] = "";
    snprintf(path, sizeof path, "%s/kvlab/progress.json", dir);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "no progress in %s", path);
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    ck_assert_msg(strstr(text, "\"read\":\ttrue") || strstr(text, "\"read\": true"), "%s", text);
    remove_tree(dir);
}
END_TEST

/* A lesson's calc widget shows its figures in place; Enter opens the
 * Calculator with the page's settings (the model, context and batch of
 * the widget, no GPU as kvlab calc has none), Esc comes back to the page. */
START_TEST(lesson_widget_full_screen)
{
    char dir[64];
    CutLog c;
    open_first_lesson(&c, dir, sizeof dir);
    tab_to("> kvlab calc");
    assert_screen(strstr(dump(), "B/elem"), "the widget's table is not in the page");
    press("Enter", "Inputs");
    wait_for(field_line("Model", "llama-3.1-70b"));
    wait_for(field_line("Context", "128,000"));
    wait_for(field_line("GPU", "none"));
    wait_for("128,000 tokens x 16");
    press("Escape", "> kvlab calc");
    quit_lab();
    assert_nothing_cut(&c);
    remove_tree(dir);
}
END_TEST

/* The quantization screen's figures in the order METRIC_ROWS names them:
 * K error, largest score error, softmax TV and output error. */
enum { N_METRICS = 4 };
static const char *const METRIC_ROWS[N_METRICS] = {"K error ", "max score err ", "softmax TV ", "output err "};
/* `kvlab quant` prints them so: one run's lines, or its comparison table's columns. */
static const char *const METRIC_LINES[N_METRICS] = {"relative error of K (Frobenius)", "largest score error",
                                                    "softmax total variation", "attention output error"};
/* The screen shows 3 significant digits and `kvlab quant` 3 or 4: half a
 * unit in the third is at most 0.5% of a figure; the fourth's rounding adds 0.05%. */
#define FIGURE_REL_TOL 0.0055

/* `kvlab quant OPTIONS`'s figures: of its one run, or of the comparison
 * table's row `row` ("token", "channel") where row is not NULL. */
static void cli_quant_figures(const char *options, const char *row, double fig[N_METRICS])
{
    char cmd[512], out[16384], want[32];
    snprintf(cmd, sizeof cmd, "'%s' quant %s", test_bin(), options);
    ck_assert_msg(shell(cmd, out, sizeof out) == 0, "kvlab quant %s failed: %s", options, out);
    snprintf(want, sizeof want, "\n%s ", row ? row : "");
    const char *at = row ? strstr(out, want) : out;
    ck_assert_msg(at != NULL, "no row '%s' in: %s", row, out);
    char *end = (char *)at + strlen(want);
    for (int m = 0; m < N_METRICS; m++) {
        if (!row) {
            const char *line = strstr(out, METRIC_LINES[m]);
            ck_assert_msg(line != NULL, "no '%s' in: %s", METRIC_LINES[m], out);
            end = (char *)line + strlen(METRIC_LINES[m]);
        }
        fig[m] = strtod(end, &end);
        if (*end == '%')
            end++;
    }
}

/* The quantization screen's figures, column col (0: as set, 1: token, 2:
 * channel), from the text d (a screen, or a widget's part of a page);
 * V's error is "exact" or a figure. */
static void quant_figures_in(const char *d, int col, double fig[N_METRICS])
{
    for (int m = 0; m < N_METRICS; m++) {
        const char *at = strstr(d, METRIC_ROWS[m]);
        ck_assert_msg(at != NULL, "no row '%s' on the screen:\n%s", METRIC_ROWS[m], d);
        char *end = (char *)at + strlen(METRIC_ROWS[m]);
        for (int c = 0; c <= col; c++) {
            fig[m] = strtod(end, &end);
            if (*end == '%')
                end++;
        }
    }
}

static void screen_quant_figures(int col, double fig[N_METRICS])
{
    quant_figures_in(dump(), col, fig);
}

static void assert_figures_equal(const double *screen, const double *cli, const char *what)
{
    for (int m = 0; m < N_METRICS; m++)
        ck_assert_msg(fabs(screen[m] - cli[m]) <= FIGURE_REL_TOL * fabs(cli[m]),
                      "%s: the screen's %s%g, kvlab quant's %g", what, METRIC_ROWS[m], screen[m], cli[m]);
}

/* Opens lesson `name` (a part of its file's name) at 80x24 with a fresh
 * $XDG_DATA_HOME (dir, n bytes) and a cut log. */
static void open_lesson(CutLog *c, char *dir, size_t n, const char *name)
{
    char paths[64][1024], env[128], title[64];
    const size_t count = lesson_paths(paths, 64);
    size_t i = 0;
    while (i < count && !strstr(paths[i], name))
        i++;
    ck_assert_msg(i < count, "no lesson %s", name);
    fresh_data_home(dir, n, env, sizeof env);
    open_lessons(c, 80, 24, env);
    for (size_t k = 0; k < i; k++)
        keys("Down");
    snprintf(title, sizeof title, "%zu/%zu ", i + 1, count);
    press("Enter", title);
}

/* Opens lesson `name`'s widget whose command line shows `widget`, full
 * screen, and checks that every option it gives sets an input: the status
 * line names none as left out. */
static void open_quant_widget(CutLog *c, char *dir, size_t n, const char *name, const char *widget)
{
    open_lesson(c, dir, n, name);
    tab_to(widget);
    press("Enter", "Inputs");
    wait_for("the page's settings; Esc");
    assert_screen(!strstr(dump(), "but for"), "an option of the widget sets no input");
}

/* A quant widget opened full screen applies each of its options: keys and
 * values' `--values token` quantizes the values per token, and the
 * screen's figures are `kvlab quant`'s for the same options (its rows per
 * token and per channel). */
START_TEST(lesson_widget_values)
{
    static const char OPTS[] = "--generate --bits 2 --values token";
    char dir[64];
    CutLog c;
    open_quant_widget(&c, dir, sizeof dir, "keys-and-values", "> kvlab quant --generate --bits 2 --values token");
    wait_for(field_line("Values", "token"));
    double screen[N_METRICS], cli[N_METRICS];
    cli_quant_figures(OPTS, "token", cli);
    screen_quant_figures(0, screen);
    assert_figures_equal(screen, cli, "as set (per token)");
    screen_quant_figures(1, screen);
    assert_figures_equal(screen, cli, "per token");
    cli_quant_figures(OPTS, "channel", cli);
    screen_quant_figures(2, screen);
    assert_figures_equal(screen, cli, "per channel");
    quit_lab();
    assert_nothing_cut(&c);
    remove_tree(dir);
}
END_TEST

/* The step-floors lesson's speedup widget opened full screen applies its
 * --contexts as the calculator's Contexts: no option goes unapplied, and
 * the exported series has those four contexts with `kvlab calc`'s speedup
 * at each (to the CSV's six decimals). */
START_TEST(lesson_widget_contexts)
{
    static const char *const ARGS[] = {"calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--weights", "16GB",
                                       "--batch", "32", "--contexts", "1k,8k,32k,128k", "--json", NULL};
    const double TOL = 5e-7 + 1e-12;            // half the CSV's last decimal
    char out_dir[] = "/tmp/kvlab-export-XXXXXX", cwd[1024], dir[64], cmd[1200];
    static char csv[16384];
    ck_assert(mkdtemp(out_dir) != NULL);
    ck_assert(getcwd(cwd, sizeof cwd) != NULL);
    ck_assert_int_eq(chdir(out_dir), 0);
    CutLog c;
    open_quant_widget(&c, dir, sizeof dir, "step-floors", "> kvlab calc --model llama-3.1-8b --gpu h100-sxm --weights 16GB");
    wait_for(field_line("Contexts", "1k,8k,32k,128k"));
    press("e", "wrote kvlab-calculator-");     // its status line, two file names, is cut at 80 columns
    quit_lab();
    snprintf(cmd, sizeof cmd, "cat %s/kvlab-calculator-*.csv", out_dir);
    shell(cmd, csv, sizeof csv);
    ck_assert_msg(strstr(csv, ",speedup,speedup_at_1024,speedup_at_8192,speedup_at_32768,speedup_at_131072\n"),
                  "%s", csv);
    cJSON *j = cli_json(ARGS);
    const cJSON *f;
    size_t checked = 0;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(j, "formats")) {
        char row[64];
        snprintf(row, sizeof row, "\n%s,", cJSON_GetObjectItem(f, "format")->valuestring);
        const char *p = strstr(csv, row);
        ck_assert_msg(p, "no row for %s", row + 1);
        for (int skip = 0; skip < 6; skip++)    // format to speedup: the series follows
            p = strchr(p + 1, ',');
        const cJSON *pt;
        size_t k = 0;
        cJSON_ArrayForEach(pt, cJSON_GetObjectItem(f, "series")) {
            char *end;
            double got = strtod(p + 1, &end);
            ck_assert_msg(fabs(got - cJSON_GetObjectItem(pt, "speedup")->valuedouble) <= TOL,
                          "%s at context %zu: %.9g", row + 1, k, got);
            p = end;
            k++;
        }
        ck_assert_int_eq(k, 4);
        checked++;
    }
    ck_assert(checked > 0);
    cJSON_Delete(j);
    ck_assert_int_eq(chdir(cwd), 0);
    remove_tree(dir);
    snprintf(cmd, sizeof cmd, "rm -rf %s", out_dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The scales lesson's `--scale 0.01` widget opens with that static fp8
 * scale, and the screen's figures are `kvlab quant`'s for its options. */
START_TEST(lesson_widget_scale)
{
    char dir[64];
    CutLog c;
    open_quant_widget(&c, dir, sizeof dir, "scales", "> kvlab quant --generate --scheme fp8 --scale 0.01");
    wait_for(field_line("Scale", "0.01"));
    double screen[N_METRICS], cli[N_METRICS];
    cli_quant_figures("--generate --scheme fp8 --scale 0.01 --granularity tensor", NULL, cli);
    screen_quant_figures(0, screen);
    assert_figures_equal(screen, cli, "fp8 static scale 0.01");
    quit_lab();
    assert_nothing_cut(&c);
    remove_tree(dir);
}
END_TEST

/* The screen from `marker` on: a widget's part of a lesson's page; the
 * test fails where the marker does not show. */
static const char *from_marker(const char *marker)
{
    const char *p = strstr(dump(), marker);
    assert_screen(p != NULL, "'%s' is not on the screen", marker);
    return p;
}

/* Scrolls the page a line at a time (at most 30) until `want` shows after
 * `marker`, the widget's command line, which must stay in view. */
static void scroll_widget_to(const char *marker, const char *want)
{
    static char before[65536];
    for (int i = 0; i < 30 && !strstr(from_marker(marker), want); i++) {
        snprintf(before, sizeof before, "%s", dump());
        keys("Down");
        wait_changed(before);
    }
    assert_screen(strstr(from_marker(marker), want), "'%s' never showed under '%s'", want, marker);
}

/* A quant widget draws its figures in place: the key errors as set, per
 * token and per channel as heatmaps side by side, and the figures under
 * them, which are `kvlab quant`'s for the widget's options (its rows per
 * token and per channel); the keys-and-values lesson's two widgets differ
 * where their options do (the values' output error). At 80x24 nothing is
 * cut. */
START_TEST(lesson_quant_in_place)
{
    static const char *const OPTS[] = {"--generate --bits 2 --values token", "--generate --bits 2 --values channel"};
    char dir[64];
    CutLog c;
    open_lesson(&c, dir, sizeof dir, "keys-and-values");
    double output[2];
    for (int w = 0; w < 2; w++) {
        char marker[128];
        snprintf(marker, sizeof marker, "> kvlab quant %s\n", OPTS[w]);
        tab_to(marker);
        scroll_widget_to(marker, "top token");
        const char *at = from_marker(marker);
        assert_screen(strstr(at, "K error, as set") && strstr(at, "K error, per token") &&
                          strstr(at, "K error, per channel"),
                      "no heatmaps under %s", OPTS[w]);
        double page[N_METRICS], cli[N_METRICS];
        cli_quant_figures(OPTS[w], "token", cli);
        quant_figures_in(at, 0, page);
        assert_figures_equal(page, cli, "in place, as set (per token)");
        quant_figures_in(at, 1, page);
        assert_figures_equal(page, cli, "in place, per token");
        output[w] = page[N_METRICS - 1];
        cli_quant_figures(OPTS[w], "channel", cli);
        quant_figures_in(at, 2, page);
        assert_figures_equal(page, cli, "in place, per channel");
    }
    ck_assert_msg(output[1] > 2 * output[0], "values per channel: output error %g%%, per token %g%%", output[1],
                  output[0]);
    quit_lab();
    assert_nothing_cut(&c);
    remove_tree(dir);
}
END_TEST

/* A page's settings apply over the screen's own starting values, not over
 * the last widget's: after the rotated widget has been opened full
 * screen, the unrotated one opens with Hadamard off, as its in-place
 * figures have it. */
START_TEST(lesson_widget_fresh_settings)
{
    char dir[64];
    CutLog c;
    open_lesson(&c, dir, sizeof dir, "keys-and-values");
    tab_to("> kvlab quant --generate --bits 4 --rotate hadamard");
    press("Enter", "Inputs");
    wait_for(field_line("Hadamard", "on"));
    press("Escape", "> kvlab quant --generate --bits 4 --rotate hadamard");
    static char before[65536];
    snprintf(before, sizeof before, "%s", dump());
    keys("BTab");
    wait_changed(before);
    wait_for("> kvlab quant --generate --bits 4\n");
    press("Enter", "Inputs");
    wait_for(field_line("Hadamard", "off"));
    quit_lab();
    assert_nothing_cut(&c);
    remove_tree(dir);
}
END_TEST

/* The screen's words joined by single spaces, so that a line wrapped
 * over rows is found whole. */
static const char *joined(void)
{
    static char v[65536];
    size_t n = 0;
    for (const char *p = dump(); *p && n + 1 < sizeof v; p++)
        if (!isspace((unsigned char)*p))
            v[n++] = *p;
        else if (n && v[n - 1] != ' ')
            v[n++] = ' ';
    v[n] = '\0';
    return v;
}

/* A speedup widget draws the calculator's plot in place, and the speedups
 * it prints at the longest context are `kvlab calc --json`'s for the same
 * options, to the two decimals shown. At 80x24 nothing is cut. */
START_TEST(lesson_speedup_in_place)
{
    static const char *const ARGS[] = {"calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "8",
                                       "--contexts", "1k,2k,4k,8k,16k,32k", "--json", NULL};
    static const char MARKER[] = "> kvlab calc --model llama-3.1-8b --gpu h100-sxm --batch 8";
    const double TOL = 0.005 + 1e-9;            // half the last of two decimals
    char dir[64];
    CutLog c;
    open_lesson(&c, dir, sizeof dir, "step-floors");
    tab_to(MARKER);
    scroll_widget_to(MARKER, "Step-floor speedup over BF16 by context");
    assert_screen(!strstr(from_marker(MARKER), "scroll to see the whole plot"), "the plot is not drawn whole");
    static char before[65536];
    const char *at;
    for (int i = 0; i < 30 && !((at = strstr(joined(), "at 32,768 (32k) tokens:")) && strstr(at, " mxfp4 ")); i++) {
        snprintf(before, sizeof before, "%s", dump());
        keys("Down");
        wait_changed(before);
    }
    at = strstr(joined(), "at 32,768 (32k) tokens:");
    assert_screen(at && strstr(at, " mxfp4 "), "no speedups at the longest context");
    char *end = strstr(at, " Enter opens");     // the widget's line, not the page after it
    if (end)
        *end = '\0';
    cJSON *j = cli_json(ARGS);
    const cJSON *f;
    size_t checked = 0;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(j, "formats")) {
        char word[64];
        snprintf(word, sizeof word, " %s ", cJSON_GetObjectItem(f, "format")->valuestring);
        const char *p = strstr(at, word);
        if (!p)
            continue;                           // a format of the same size as one plotted
        const cJSON *series = cJSON_GetObjectItem(f, "series");
        const double want = cJSON_GetObjectItem(cJSON_GetArrayItem(series, cJSON_GetArraySize(series) - 1),
                                                "speedup")->valuedouble;
        const double got = strtod(p + strlen(word), NULL);
        ck_assert_msg(fabs(got - want) <= TOL, "%s: the page's %.2fx, kvlab calc's %.4f", word, got, want);
        checked++;
    }
    ck_assert_msg(checked >= 5, "%zu formats' speedups on the page: %s", checked, at);
    cJSON_Delete(j);
    quit_lab();
    assert_nothing_cut(&c);
    remove_tree(dir);
}
END_TEST

/* The gpu widget says that nothing is measured yet and that Enter opens
 * the GPU lab to measure, and shows the stored GPU run's figures under a
 * title naming that GPU and its date; after a sweep there, the page shows
 * this machine's slopes. */
START_TEST(lesson_gpu_in_place)
{
    char dir[64];
    CutLog c;
    open_lesson(&c, dir, sizeof dir, "execution-paths");
    tab_to("> kvlab bench");
    wait_for("Nothing measured yet in this session: Enter opens the GPU lab");
    StoredRun r;
    Error e;
    ck_assert_msg(stored_load(&r, STORED_FILE, &e) == 0, "%s", e.msg);
    char title[256];
    snprintf(title, sizeof title, "Measured on %s, %s, not this machine", r.device, r.measured);
    scroll_widget_to("> kvlab bench", title);   // the stored run's figures, labelled, until this machine measures
    press("Enter", "Inputs");
    keys("Down Down");                          // Model, Batch, Longest context: a short sweep
    press("2 k Enter", field_line("Longest context", "2,048 (2k)"));
    keys("Down");
    press("3 Enter", field_line("Timed runs", "3"));
    keys("r");
    wait_sweep();
    press("Escape", "> kvlab bench");
    wait_for("Measured in this session on ");
    assert_screen(!strstr(dump(), "Nothing measured yet"), "the page still says nothing is measured");
    scroll_widget_to("> kvlab bench", "published");
    quit_lab();
    assert_nothing_cut(&c);
    remove_tree(dir);
}
END_TEST

/* S saves the lesson open and where it is scrolled to; kvlab --open
 * shows the same lesson at the same line. A state saved without a page
 * (the contents shown) still opens, on the contents. */
START_TEST(save_and_open_lesson)
{
    char dir[64], env[128], path[256], args[300], want[300];
    CutLog c;
    open_lesson(&c, dir, sizeof dir, "keys-and-values");
    static char before[65536], page[65536];
    for (int i = 0; i < 2; i++) {
        snprintf(before, sizeof before, "%s", dump());
        keys("NPage");
        wait_changed(before);
    }
    keys("Down");
    wait_changed(before);
    snprintf(page, sizeof page, "%s", dump());
    press("S", "save as");
    snprintf(path, sizeof path, "%s/kvlab/lesson.json", dir);
    snprintf(want, sizeof want, "saved %s", path);
    press("l e s s o n Enter", want);
    quit_lab();
    assert_nothing_cut(&c);
    snprintf(args, sizeof args, "--open '%s'", path);
    snprintf(env, sizeof env, "XDG_DATA_HOME=%s", dir);
    start_cut_log(&c, 80, 24, env, args);
    wait_for("opened");
    /* every row but the status line's, the 23rd (it says what was opened) */
    const char *now = dump();
    int row = 0;
    for (const char *a = page, *b = now; *a || *b; row++) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        ea = ea ? ea : a + strlen(a), eb = eb ? eb : b + strlen(b);
        if (row != 22)
            assert_screen(ea - a == eb - b && !memcmp(a, b, (size_t)(ea - a)), "after --open, '%.*s' reads '%.*s'",
                          (int)(ea - a), a, (int)(eb - b), b);
        a = *ea ? ea + 1 : ea, b = *eb ? eb + 1 : eb;
    }
    quit_lab();
    assert_nothing_cut(&c);
    FILE *f = fopen(path, "w");                 // as a lab without pages saved it
    ck_assert(f != NULL);
    fprintf(f, "{\"version\": 1, \"screen\": \"Lessons\", \"screens\": {\"Lessons\": {\"inputs\": {}}}}\n");
    fclose(f);
    start_cut_log(&c, 80, 24, env, args);
    wait_for("opened");
    wait_for("start here");
    quit_lab();
    assert_nothing_cut(&c);
    remove_tree(dir);
}
END_TEST

/* A prediction hides its answer until the learner gives one; then calc's
 * figure shows under it, the one `kvlab lesson` works out. */
START_TEST(lesson_predict_reveals)
{
    char paths[64][1024], dir[64];
    ck_assert(lesson_paths(paths, 64) > 0);
    Lesson l;
    Error e;
    ck_assert_msg(!lesson_load(&l, paths[0], NULL, &e) && !lesson_eval(&l, &e), "%s", e.msg);
    ck_assert_msg(l.n_predicts > 0, "%s has no prediction", paths[0]);
    char want[128];
    snprintf(want, sizeof want, "calc: %s", l.figures[l.predicts[0].answer].text);
    lesson_free(&l);
    CutLog c;
    open_first_lesson(&c, dir, sizeof dir);
    tab_to("> Predict:");
    assert_screen(!strstr(dump(), "calc: "), "the answer shows before the prediction");
    press("Enter", "your prediction");
    press("1 0 Space G B Enter", "You said: 10 GB");
    wait_for(want);
    quit_lab();
    assert_nothing_cut(&c);
    remove_tree(dir);
}
END_TEST

/* The exercise pane checks an answer: a wrong one (GB for GiB) names the
 * mistake and gives the hint, the right one (the answer's query worked out
 * by calc) is right; both count in the progress file, and the lesson
 * marks the exercise done. */
START_TEST(exercise_pane_checks)
{
    char dir[64], exdir[1100];
    ExerciseSet set = {0};
    Error e;
    snprintf(exdir, sizeof exdir, "%s/exercises", getenv("KVLAB_LESSONS"));
    ck_assert_msg(!exercise_load_dir(&set, exdir, &e), "%s", e.msg);
    const Exercise *x = exercise_find(&set, "try-1");
    ck_assert(x != NULL);
    QueryValue v;
    ck_assert_msg(!query_eval(&x->query, &v, &e), "%s", e.msg);
    char right[96], wrong[96];
    snprintf(right, sizeof right, "\"%s\" Enter", v.text);
    snprintf(wrong, sizeof wrong, "\"%.2f GB\" Enter", v.value);     // the GiB figure written as GB
    exercise_set_free(&set);
    CutLog c;
    open_first_lesson(&c, dir, sizeof dir);
    tab_to("> [    ] try-1");
    press("Enter", "Exercise try-1");
    press("Enter", "your answer");
    press(wrong, "Not right");
    wait_for("Likely mistake");
    wait_for("Hint:");
    press("Enter", "your answer");
    press(right, "Right:");
    press("Escape", "[done] try-1");
    quit_lab();
    assert_nothing_cut(&c);
    char path[128], text[4096] = "";
    snprintf(path, sizeof path, "%s/kvlab/progress.json", dir);
    FILE *f = fopen(path, "r");
    ck_assert(f != NULL);
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    cJSON *j = cJSON_Parse(text), *t = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "exercises"), "try-1");
    ck_assert_msg(t && cJSON_IsTrue(cJSON_GetObjectItem(t, "done")) &&
                      cJSON_GetObjectItem(t, "attempts")->valuedouble == 2,
                  "%s", text);
    cJSON_Delete(j);
    remove_tree(dir);
}
END_TEST

/* Lesson 11's niah widget says in place that it has not run with its
 * settings; Enter opens the NIAH screen with them (its Formats, Depths
 * and Trials, every option set: none named as left out); once r has run
 * that grid, Esc comes back to the page, which shows that run's verdicts
 * in place. */
START_TEST(lesson_widget_niah)
{
    char dir[64];
    CutLog c;
    open_lesson(&c, dir, sizeof dir, "validating");
    tab_to("> kvlab niah --lengths 1k,4k");
    assert_screen(strstr(dump(), "Not run yet in this session"), "the widget does not say it has not run");
    press("Enter", "Needle in a haystack");
    wait_for("the page's settings; Esc");
    assert_screen(!strstr(dump(), "but for"), "an option of the widget sets no input");
    wait_for(field_line("Formats", "token vs channel"));
    wait_for(field_line("Trials", "10"));
    wait_for(field_line("Depths", "0,0.5,1"));
    keys("r");
    wait_for_s("NIAH run done", 60);
    press("Escape", "> kvlab niah --lengths 1k,4k");
    wait_for("token vs channel: 2 lengths x 3 depths x 3 formats");
    assert_screen(!strstr(dump(), "Not run yet in this session"), "the page does not show the run");
    quit_lab();
    assert_nothing_cut(&c);
    remove_tree(dir);
}
END_TEST

/* Task C of lesson 11 opens the NIAH screen (o in its exercise pane)
 * with its grid's settings. */
START_TEST(exercise_task_opens_niah)
{
    char dir[64];
    CutLog c;
    open_lesson(&c, dir, sizeof dir, "validating");
    tab_to("] task-c-niah");
    press("Enter", "Exercise task-c-niah");
    press("o", "Needle in a haystack");
    wait_for(field_line("Formats", "defaults"));
    wait_for(field_line("Trials", "5"));
    wait_for(field_line("Depths", "0,0.5,1"));
    assert_screen(!strstr(dump(), "but for"), "an option of the task sets no input");
    quit_lab();
    assert_nothing_cut(&c);
    remove_tree(dir);
}
END_TEST

/* G on an input shows its glossary entry (the definition of
 * lessons/glossary.json), and with the view selected the entries of its
 * table's columns; a lesson's glossary link shows its entry with Enter. */
START_TEST(glossary_key)
{
    char path[1100], dir[64], env[128];
    snprintf(path, sizeof path, "%s/glossary.json", getenv("KVLAB_LESSONS"));
    Glossary g;
    Error e;
    ck_assert_msg(!glossary_load(&g, path, &e), "%s", e.msg);
    const GlossaryEntry *pool = glossary_find(&g, "KV pool"), *kv = glossary_find(&g, "KV cache");
    const GlossaryEntry *slots = glossary_find(&g, "slots");
    ck_assert(pool && kv && slots);
    char want_pool[40], want_kv[40], want_slots[40];
    snprintf(want_pool, sizeof want_pool, "%.24s", pool->definition);
    snprintf(want_kv, sizeof want_kv, "%.24s", kv->definition);
    snprintf(want_slots, sizeof want_slots, "%.24s", slots->definition);
    glossary_free(&g);
    fresh_data_home(dir, sizeof dir, env, sizeof env);
    CutLog c;
    open_lessons(&c, 80, 24, env);
    press("F4", "Sequences the pool holds");
    keys("Down Down Down Down");                // Model, GPU, Context, Batch, KV pool
    press("G", "Glossary: KV pool");
    wait_for(want_pool);
    press("x", "Sequences the pool holds");
    press("Tab", "Inputs (Tab: back)");         // the view: its table's columns
    press("G", "Glossary: the columns");
    wait_for(want_slots);
    press("x", "Sequences the pool holds");
    press("F2", "start here");
    press("Enter", " lines");
    tab_to("entry for 'KV cache'");
    press("Enter", "Glossary: KV cache");
    wait_for(want_kv);
    static char box[65536];
    snprintf(box, sizeof box, "%s", dump());
    keys("x");                                  // any key closes the box
    wait_changed(box);
    quit_lab();
    assert_nothing_cut(&c);
    remove_tree(dir);
}
END_TEST

/* Every shipped lesson opens in the lab and scrolls from its top to its
 * end at 80x24 with nothing cut. */
START_TEST(every_lesson_uncut)
{
    char paths[64][1024], dir[64], env[128];
    const size_t n = lesson_paths(paths, 64);
    ck_assert(n > 0);
    fresh_data_home(dir, sizeof dir, env, sizeof env);
    CutLog c;
    open_lessons(&c, 80, 24, env);
    for (size_t i = 0; i < n; i++) {
        press("Enter", " lines");
        char title[48];
        snprintf(title, sizeof title, "%zu/%zu ", i + 1, n);
        wait_for(title);
        static char before[65536];
        for (int k = 0; k < 50 && strstr(dump(), "more below"); k++) {
            snprintf(before, sizeof before, "%s", dump());
            keys("NPage");
            wait_changed(before);
        }
        snprintf(title, sizeof title, "%2zu. ", i + 1);
        press("Escape", title);
        keys("Down");
    }
    quit_lab();
    assert_nothing_cut(&c);
    remove_tree(dir);
}
END_TEST

/* exercise-70b asks before it shows: its figures (calc's and the seed's)
 * are hidden until the learner has answered each, then show beside the
 * answers; R asks again. At 80x24 nothing is cut. */
START_TEST(exercise_70b_predicts)
{
    CutLog c;
    open_cut_log(&c, 80, 24, "", "A 20 GiB KV pool");
    for (int i = 0; i < 12 && !strstr(dump(), "Exercise: Llama-3.1-70B"); i++) {
        static char before[65536];
        snprintf(before, sizeof before, "%s", dump());
        keys("-");
        wait_changed(before);
    }
    wait_for("Predict first");
    assert_screen(!strstr(dump(), "21,474,836,480") && !strstr(dump(), "B/elem"), "figures show before the answers");
    press("a", "elements (bf16), with its unit");
    keys("2 1 4 7 4 8 3 6 4 8 0 Enter");
    press("4 0 Space G i B Enter", "BF16 GiB");
    press("Enter", "FP8 GiB");
    keys("2 0 Space G i B Enter");
    press("2 0 Space G i B Enter", "revealed");
    wait_for("21474836480");                    // the answer as typed, beside calc's
    assert_reachable((const char *const[]){"21,474,836,480", "B/elem", NULL}, NULL);
    press("R", "Predict first");
    quit_lab();
    assert_nothing_cut(&c);
}
END_TEST

Suite *suite_tui(void)
{
    Suite *s = suite_create("tui");
    TCase *t = tcase_create("tmux");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, screens_open);
    tcase_add_test(t, unknown_escape_sequence_ignored);
    tcase_add_test(t, editing_changes_figures);
    tcase_add_test(t, resizes_survive);
    tcase_add_test(t, quit_restores_terminal);
    tcase_add_test(t, signals_restore_terminal);
    tcase_add_test(t, stop_and_continue);
    tcase_add_test(t, control_characters_escaped);
    tcase_add_test(t, no_color);
    tcase_add_test(t, export_files);
    tcase_add_test(t, no_terminal);
    tcase_add_test(t, gpu_lab_screen);
    tcase_add_test(t, figures_match_and_edits_hold);
    tcase_add_test(t, quant_screen_uncut);
    tcase_add_test(t, quant_screen_values);
    tcase_add_test(t, gpu_screen_uncut);
    tcase_add_test(t, gpu_sweep_keeps_results);
    tcase_add_test(t, gpu_lab_stored);
    tcase_add_test(t, plot_markers_visible);
    tcase_add_test(t, calc_every_model_reachable);
    tcase_add_test(t, scenarios_changed_inputs);
    tcase_add_test(t, scrolling_marked_and_clamped);
    tcase_add_test(t, fields_say_what_they_mean);
    tcase_add_test(t, scenarios_calc_help_uncut);
    tcase_add_test(t, scenarios_calc_parts_at_80x24);
    tcase_add_test(t, verdicts_match_cli);
    tcase_add_test(t, fit_warning_advice_works);
    suite_add_tcase(s, t);
    TCase *demo = tcase_create("demo");         // reset, pin, save and open: for a class
    tcase_set_timeout(demo, 120);
    tcase_add_test(demo, reset_restores_inputs);
    tcase_add_test(demo, pin_shows_changes);
    tcase_add_test(demo, save_and_open);
    tcase_add_test(demo, open_refuses_bad_state);
    suite_add_tcase(s, demo);
    TCase *niah = tcase_create("niah");            // the NIAH screen
    tcase_set_timeout(niah, 240);
    tcase_add_test(niah, niah_screen_uncut);
    tcase_add_test(niah, niah_screen_stored);
    suite_add_tcase(s, niah);
    TCase *lessons = tcase_create("lessons");      // the lessons screen, exercises, glossary
    tcase_set_timeout(lessons, 120);
    tcase_add_test(lessons, lessons_first_screen);
    tcase_add_test(lessons, lesson_widget_full_screen);
    tcase_add_test(lessons, lesson_widget_niah);
    tcase_add_test(lessons, lesson_widget_values);
    tcase_add_test(lessons, lesson_widget_contexts);
    tcase_add_test(lessons, lesson_widget_scale);
    tcase_add_test(lessons, lesson_quant_in_place);
    tcase_add_test(lessons, lesson_widget_fresh_settings);
    tcase_add_test(lessons, lesson_speedup_in_place);
    tcase_add_test(lessons, lesson_gpu_in_place);
    tcase_add_test(lessons, save_and_open_lesson);
    tcase_add_test(lessons, lesson_predict_reveals);
    tcase_add_test(lessons, exercise_pane_checks);
    tcase_add_test(lessons, exercise_task_opens_niah);
    tcase_add_test(lessons, glossary_key);
    tcase_add_test(lessons, every_lesson_uncut);
    tcase_add_test(lessons, exercise_70b_predicts);
    suite_add_tcase(s, lessons);
    return s;
}
