/* test_tui.c - the interactive lab driven through tmux: every screen opens
 * and shows its key figures (the same as kvlab calc), editing a field moves
 * the figures, resizes down to 30x8 and back keep it alive, q and Ctrl-C
 * leave the terminal restored, NO_COLOR draws no colour, export writes its
 * files, and without a terminal kvlab says so and exits 2. */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char sock[64];

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

/* Starts kvlab in a w x h window; `env` is prepended to the command. */
static void start(int w, int h, const char *env)
{
    /* a new server each time: a name used again could reach one that
     * kill-server has not finished taking down */
    static unsigned starts;
    snprintf(sock, sizeof sock, "kvlab-test-%d-%ld-%u", getpid(), (long)time(NULL), starts++);
    char dir[1024];
    ck_assert(getcwd(dir, sizeof dir) != NULL);
    tmux(NULL, 0, "new-session -d -x %d -y %d -s lab \"cd '%s' && env TERM=xterm-256color "
                  "KVLAB_DATA='%s' %s '%s'; echo EXIT:\\$?; sleep 20\"",
         w, h, dir, test_datadir(), env, test_bin());
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
static bool wait_for_s(const char *text, int seconds)
{
    static char buf[65536];
    for (int i = 0; i < seconds * 20; i++) {
        screen(buf, sizeof buf, false);
        if (strstr(buf, text))
            return true;
        usleep(50000);
    }
    fprintf(stderr, "waited for '%s'; the screen was:\n%s\n", text, buf);
    ck_abort_msg("'%s' did not appear within %d s (the screen it saw is on stderr)", text,
                 seconds);
    return false;
}

static bool wait_for(const char *text)
{
    return wait_for_s(text, 5);
}

static void keys(const char *k)
{
    tmux(NULL, 0, "send-keys -t lab %s", k);
}

/* Sends keys and waits for `want` to appear on the screen. */
static void press(const char *k, const char *want)
{
    keys(k);
    ck_assert(wait_for(want));
}

/* Starts the lab in a w x h window and waits for its first screen. */
static void open_lab(int w, int h, const char *env)
{
    start(w, h, env);
    ck_assert(wait_for("A 20 GiB KV pool"));
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

/* Opens the lab at w x h with a cut log (KVLAB_CUT_LOG), sends `k` and
 * waits for `want`, quits, and fails naming every text that the drawing
 * of `what` (a screen's name, "Help") had to cut. */
static void assert_uncut(int w, int h, const char *k, const char *want, const char *what)
{
    char log[] = "/tmp/kvlab-cuts-XXXXXX", env[64];
    int fd = mkstemp(log);
    ck_assert(fd >= 0);
    close(fd);
    snprintf(env, sizeof env, "KVLAB_CUT_LOG=%s", log);
    open_lab(w, h, env);
    press(k, want);
    quit_lab();
    static char cuts[65536];
    size_t n = 0, len = strlen(what);
    FILE *f = fopen(log, "r");
    ck_assert(f != NULL);
    char line[1024];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, what, len) && line[len] == ':' && n + strlen(line) < sizeof cuts)
            n += (size_t)sprintf(cuts + n, "%s", line);
    fclose(f);
    unlink(log);
    ck_assert_msg(n == 0, "at %dx%d, %s cut:\n%s", w, h, what, cuts);
}

/* The CLI's figure for the same inputs, from kvlab calc --json. */
static double cli_figure(const char *const *argv, const char *fmt, const char *field)
{
    RunResult r = run_kvlab(argv, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    cJSON *j = cJSON_Parse(r.out);
    double v = -1;
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(j, "formats"))
        if (!strcmp(cJSON_GetObjectItem(f, "format")->valuestring, fmt))
            v = cJSON_GetObjectItem(f, field)->valuedouble;
    cJSON_Delete(j);
    run_free(&r);
    return v;
}

/* Each screen opens with its figures; the calculator's are kvlab calc's. */
START_TEST(screens_open)
{
    open_lab(200, 60, "");
    ck_assert(wait_for("seed is wrong"));
    ck_assert(wait_for("3.55x"));
    press("F3", "Sequences the pool holds");
    double slots = row_number("fp8_e4m3", 5), step = row_number("fp8_e4m3", 7);
    const char *argv[] = {"calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "8k",
                          "--batch", "16", "--json", NULL};
    ck_assert_double_eq(slots, cli_figure(argv, "fp8_e4m3", "slots"));
    ck_assert_double_eq_tol(step, cli_figure(argv, "fp8_e4m3", "step_ms"), 0.006);
    press("F4", "per channel: K error");
    ck_assert(wait_for("score errors"));
    press("F1", "Help: every key");
    ck_assert(wait_for("Hadamard rotation on or off"));
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
    press("F3", "Sequences the pool holds");
    keys("Down Down");              // Model, GPU, Context
    press("3 2 k Enter", "32,768 (32k) tokens x 16");
    const char *argv[] = {"calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "32k",
                          "--batch", "16", "--json", NULL};
    ck_assert_double_eq(row_number("bf16", 5), cli_figure(argv, "bf16", "slots"));
    /* the refusal, not the text being typed: "context 'banana' is not ..." */
    press("Enter b a n a n a Enter", "'banana' is not");
    ck_assert(wait_for("32,768 (32k) tokens x 16"));
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
        ck_assert(wait_for(SIZES[i][0] < 80 ? "larger" : "Inputs"));
        keys(i % 2 ? "F4" : "F3");
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
        press("F4", "score errors");
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
    press("F3", "Sequences the pool holds");
    press("e", "wrote kvlab-calculator-");
    press("F2 e", "wrote kvlab-scenarios-");
    quit_lab();
    char cmd[1200], out[4096];
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

/* The quantization screen's figures are kvlab quant's for the same keys;
 * a value the figures cannot use is refused and the previous one kept;
 * 80x24 shows every screen's key figures. */
START_TEST(figures_match_and_edits_hold)
{
    static char buf[65536];
    open_lab(200, 60, "");
    press("F4", "per channel: K error");
    screen(buf, sizeof buf, false);
    const char *p = strstr(buf, "per token: K error ");
    ck_assert(p != NULL);
    double tok = strtod(p + strlen("per token: K error "), NULL);
    RunResult r = run_kvlab((const char *const[]){"quant", "--tokens", "128", "--head-dim", "64",
                                                  "--json", NULL}, NULL);
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
    press("F3", "Sequences the pool holds");
    keys("Down Down Down Down Down Down Down Down");    // Tensor parallel
    press("3 Enter", "kept the previous value");
    screen(buf, sizeof buf, false);
    ck_assert(strstr(buf, "Tensor parallel               1") != NULL);
    quit_lab();
    open_lab(80, 24, "");
    ck_assert(wait_for("8,589,934,592  ok"));     /* narrow: no seed column, short verdicts */
    press("F3", "slots");
    press("F4", "K error");
    quit_lab();
}
END_TEST

/* The GPU lab: without a GPU it says why and measures the CPU reference,
 * with a progress bar, then shows the slopes next to the published ones. */
START_TEST(gpu_lab_screen)
{
    open_lab(160, 45, "KVLAB_CUDA_PLUGIN=/nonexistent/libkvlab_cuda.so");
    press("F5", "Press r");
    /* a longest context of 2k and 3 timed runs keep the CPU sweep short,
     * under ASan too */
    press("Down Down 2 k Enter Down 3 Enter r", "CPU reference");
    ck_assert(wait_for_s("sweep done", 30));
    ck_assert(wait_for("published (H100, FA3)"));
    ck_assert(wait_for("4.37e-05"));
    /* a batch typed after the sweep does not blank its slopes */
    press("Up Up 3 Enter", "Batch                         3");
    static char buf[65536];
    screen(buf, sizeof buf, false);
    ck_assert_msg(!strstr(buf, "nan") && strstr(buf, "ms/tok"), "the slopes went blank after a batch change");
    quit_lab();
}
END_TEST

/* At 80x24, the size the lab asks for, no screen cuts a text short: what
 * does not fit is wrapped, abbreviated by a rule or moved. */
START_TEST(nothing_cut_at_80x24)
{
    assert_uncut(80, 24, "F2", "A 20 GiB KV pool", "Scenarios");
}
END_TEST

Suite *suite_tui(void)
{
    Suite *s = suite_create("tui");
    TCase *t = tcase_create("tmux");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, screens_open);
    tcase_add_test(t, editing_changes_figures);
    tcase_add_test(t, resizes_survive);
    tcase_add_test(t, quit_restores_terminal);
    tcase_add_test(t, no_color);
    tcase_add_test(t, export_files);
    tcase_add_test(t, no_terminal);
    tcase_add_test(t, gpu_lab_screen);
    tcase_add_test(t, figures_match_and_edits_hold);
    tcase_add_test(t, nothing_cut_at_80x24);
    suite_add_tcase(s, t);
    return s;
}
