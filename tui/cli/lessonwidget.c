/* lessonwidget.c - see lessonwidget.h.
 *
 * A widget is printed by running its command in this process with its
 * output set aside, and checked the same way by what checks the command's
 * arguments (the command itself, or its check where running takes long:
 * kvlab niah's grid): a message the command would print is the widget's
 * error. */
#include "lessonwidget.h"

#include "cli.h"
#include "commands.h"
#include "lesson.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Runs the command on argv with stderr set aside and stdout into `to`
 * (NULL: only its arguments checked, the output thrown away); a failure's
 * message (its first line, without "kvlab CMD: ") goes into e. */
static int lessonwidget_run(const char *cmd, int argc, char **argv, FILE *to, Error *e)
{
    int (*run)(int, char **) = to ? cli_command(cmd) : cli_command_check(cmd);
    if (!run)
        return error_runtime(e, "no command '%s'", cmd);
    FILE *msg = tmpfile();
    int saved_err = dup(STDERR_FILENO), saved_out = dup(STDOUT_FILENO);
    int null = to ? -1 : open("/dev/null", O_WRONLY);
    if (!msg || saved_err < 0 || saved_out < 0 || (!to && null < 0)) {
        if (msg)
            fclose(msg);
        close(saved_err), close(saved_out), close(null);
        return error_runtime(e, "cannot set the output of kvlab %s aside", cmd);
    }
    fflush(stdout);
    fflush(stderr);
    if (to)
        fflush(to);
    dup2(fileno(msg), STDERR_FILENO);
    dup2(to ? fileno(to) : null, STDOUT_FILENO);
    int rc = run(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_err, STDERR_FILENO);
    dup2(saved_out, STDOUT_FILENO);
    close(saved_err), close(saved_out), close(null);
    if (rc != EXIT_OK) {
        char line[ERROR_MSG_MAX] = "";
        rewind(msg);
        if (!fgets(line, sizeof line, msg))
            snprintf(line, sizeof line, "kvlab %s failed (exit %d)", cmd, rc);
        line[strcspn(line, "\n")] = '\0';
        char prefix[64];
        snprintf(prefix, sizeof prefix, "kvlab %s: ", cmd);
        const char *m = strncmp(line, prefix, strlen(prefix)) == 0 ? line + strlen(prefix) : line;
        fclose(msg);
        return rc == EXIT_RUNTIME ? error_runtime(e, "%s", m) : error_set(e, "%s", m);
    }
    fclose(msg);
    return 0;
}

static int lessonwidget_go(const LessonWidget *w, const char *options, FILE *to, Error *e)
{
    char copy[1024];
    if (strlen(options) >= sizeof copy)
        return error_set(e, "options longer than %zu bytes", sizeof copy - 1);
    snprintf(copy, sizeof copy, "%s", options);
    char *argv[LESSONWIDGET_WORDS_MAX + 2];
    int argc = lessonwidget_argv(w, copy, argv, e);
    if (argc < 0)
        return -1;
    if (!lessonwidget_runs(w)) {
        if (to)
            fprintf(to, "%s\n", lessonwidget_text(w));
        return 0;
    }
    return lessonwidget_run(lessonwidget_runs(w), argc, argv, to, e);
}

int lessonwidget_check(const char *name, const char *options, const void *ctx, Error *e)
{
    (void)ctx;
    const LessonWidget *w = lessonwidget_by_name(name);
    if (!w)
        return LESSON_WIDGET_UNKNOWN;
    return lessonwidget_go(w, options, NULL, e);
}

int lessonwidget_print(const LessonWidget *w, const char *options, FILE *to, Error *e)
{
    return lessonwidget_go(w, options, to, e);
}
