/* lessonwidget.c - see lessonwidget.h.
 *
 * A widget is checked and printed by running its command in this process
 * with its output set aside: the command's parser is the only one, and a
 * message it would print is the widget's error. */
#include "lessonwidget.h"

#include "cli.h"
#include "commands.h"
#include "lesson.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WIDGET_WORDS_MAX 40

struct LessonWidget {
    const char *name;
    const char *screen;                 // the lab screen it opens
    const char *command;                // the command it runs; NULL: none runs here
    int (*run)(int argc, char **argv);
    const char *first;                  // a word before the options ("show"), or NULL
    int words;                          // -1: any options; else exactly this many words
    const char *text;                   // what is printed where no command runs
};

static const LessonWidget WIDGETS[] = {
    {"calc", "calc", "calc", cmd_calc, NULL, -1, NULL},
    {"quant", "quant", "quant", cmd_quant, NULL, -1, NULL},
    {"speedup", "calc", "calc", cmd_calc, NULL, -1, NULL},
    {"gpu", "gpu", NULL, NULL, NULL, 0,
     "The GPU lab measures the decode step of every format on this machine's GPU "
     "(kvlab bench; the lab's GPU screen runs it and shows the slopes)."},
    {"scenario", "scenarios", "scenario", cmd_scenario, "show", 1, NULL},
};

#define N_WIDGETS (sizeof WIDGETS / sizeof WIDGETS[0])

const LessonWidget *lessonwidget_by_name(const char *name)
{
    for (size_t i = 0; i < N_WIDGETS; i++)
        if (strcmp(WIDGETS[i].name, name) == 0)
            return &WIDGETS[i];
    return NULL;
}

const char *lessonwidget_screen(const LessonWidget *w)
{
    return w->screen;
}

const char *lessonwidget_names(void)
{
    static char buf[256];
    size_t len = 0;
    for (size_t i = 0; i < N_WIDGETS && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", WIDGETS[i].name,
                                i + 2 < N_WIDGETS ? ", " : i + 2 == N_WIDGETS ? " or " : "");
    return buf;
}

/* The options as words (split at white space) after the command's own
 * first word; returns the count, or -1 with a message. */
static int lessonwidget_words(const LessonWidget *w, char *copy, char **argv, Error *e)
{
    int n = 0;
    if (w->first)
        argv[n++] = (char *)w->first;
    for (char *s = strtok(copy, " \t\r\n"); s; s = strtok(NULL, " \t\r\n")) {
        if (n == WIDGET_WORDS_MAX)
            return error_set(e, "more than %d words", WIDGET_WORDS_MAX);
        argv[n++] = s;
    }
    int given = n - (w->first != NULL);
    if (w->words >= 0 && given != w->words)
        return w->words ? error_set(e, "takes %d word%s, not %d", w->words, w->words == 1 ? "" : "s", given)
                        : error_set(e, "takes no options (got '%s')", argv[n - given]);
    argv[n] = NULL;
    return n;
}

const char *lessonwidget_command(const LessonWidget *w, const char *options, char *buf, size_t n)
{
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", options);
    size_t len = (size_t)snprintf(buf, n, "kvlab %s", w->command ? w->command : "bench");
    if (w->first && len < n)
        len += (size_t)snprintf(buf + len, n - len, " %s", w->first);
    for (char *s = strtok(copy, " \t\r\n"); s && len < n; s = strtok(NULL, " \t\r\n"))
        len += (size_t)snprintf(buf + len, n - len, " %s", s);
    return buf;
}

/* Runs the widget's command on argv with stderr set aside, and stdout too
 * where quiet; a failure's message (its first line, without "kvlab CMD: ")
 * goes into e. */
static int lessonwidget_run(const LessonWidget *w, int argc, char **argv, bool quiet, Error *e)
{
    FILE *msg = tmpfile();
    int saved_err = dup(STDERR_FILENO), saved_out = quiet ? dup(STDOUT_FILENO) : -1;
    int null = quiet ? open("/dev/null", O_WRONLY) : -1;
    if (!msg || saved_err < 0 || (quiet && (saved_out < 0 || null < 0))) {
        if (msg)
            fclose(msg);
        close(saved_err), close(saved_out), close(null);
        return error_runtime(e, "cannot set the output of kvlab %s aside", w->command);
    }
    fflush(stdout);
    fflush(stderr);
    dup2(fileno(msg), STDERR_FILENO);
    if (quiet)
        dup2(null, STDOUT_FILENO);
    int rc = w->run(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_err, STDERR_FILENO);
    if (quiet)
        dup2(saved_out, STDOUT_FILENO);
    close(saved_err), close(saved_out), close(null);
    if (rc != EXIT_OK) {
        char line[ERROR_MSG_MAX] = "";
        rewind(msg);
        if (!fgets(line, sizeof line, msg))
            snprintf(line, sizeof line, "kvlab %s failed (exit %d)", w->command, rc);
        line[strcspn(line, "\n")] = '\0';
        char prefix[64];
        snprintf(prefix, sizeof prefix, "kvlab %s: ", w->command);
        const char *m = strncmp(line, prefix, strlen(prefix)) == 0 ? line + strlen(prefix) : line;
        fclose(msg);
        return rc == EXIT_RUNTIME ? error_runtime(e, "%s", m) : error_set(e, "%s", m);
    }
    fclose(msg);
    return 0;
}

static int lessonwidget_go(const LessonWidget *w, const char *options, bool quiet, Error *e)
{
    char copy[1024];
    if (strlen(options) >= sizeof copy)
        return error_set(e, "options longer than %zu bytes", sizeof copy - 1);
    snprintf(copy, sizeof copy, "%s", options);
    char *argv[WIDGET_WORDS_MAX + 2];
    int argc = lessonwidget_words(w, copy, argv, e);
    if (argc < 0)
        return -1;
    if (!w->run) {
        if (!quiet)
            printf("%s\n", w->text);
        return 0;
    }
    return lessonwidget_run(w, argc, argv, quiet, e);
}

int lessonwidget_check(const char *name, const char *options, const void *ctx, Error *e)
{
    (void)ctx;
    const LessonWidget *w = lessonwidget_by_name(name);
    if (!w)
        return LESSON_WIDGET_UNKNOWN;
    return lessonwidget_go(w, options, true, e);
}

int lessonwidget_print(const LessonWidget *w, const char *options, Error *e)
{
    return lessonwidget_go(w, options, false, e);
}
