/* cli_exercise.c - `kvlab exercise`: list, show and check exercises, and
 * reset the learner's progress.
 *
 * A number answer is checked against its query (calc/answer.h): right
 * within the tolerance in any unit of its family; a wrong one gets the
 * mistake that explains it, then the hint. Every check is an attempt in
 * the progress file (calc/progress.h). */
#include "cli.h"
#include "commands.h"
#include "lessontext.h"

#include "answer.h"
#include "exercise.h"
#include "progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_FILE, O_JSON, O_SOLUTION, O_YES, O_HELP, O_COUNT };

static const OptSpec OPTS[O_COUNT] = {
    [O_FILE] = {"file", "FILE", "exercises from FILE too (format: lessons/FORMAT.md)"},
    [O_JSON] = {"json", NULL, "print one JSON object"},
    [O_SOLUTION] = {"solution", NULL, "show (or check, then show) the worked solution"},
    [O_YES] = {"yes", NULL, "reset without asking"},
    [O_HELP] = {"help", NULL, "show this help"},
};

static const CmdSpec CMD = {
    .name = "exercise",
    .usage = "usage: kvlab exercise list [--json]\n"
             "       kvlab exercise show ID [--solution] [--json]\n"
             "       kvlab exercise check ID ANSWER [--solution] [--json]\n"
             "       kvlab exercise reset [--yes]\n\n"
             "Exercises with answers worked out by calc. ANSWER is a number with a\n"
             "unit (20 GiB, 3.55x, 0.5625 B/elem, 71) or a choice (b or 2). check\n"
             "exits 0 when the answer is right, 1 when it is wrong (saying which\n"
             "mistake gives it), 2 when it cannot be read or the id is unknown.\n"
             "Progress is kept in $XDG_DATA_HOME/kvlab/progress.json\n"
             "(~/.local/share/kvlab/).",
    .opts = OPTS,
    .n_opts = O_COUNT,
    .help_opt = O_HELP,
    .repeat_opt = -1,
    .max_words = 4,
};

static int cli_exercise_load(const Given *g, ExerciseSet *set, Error *e)
{
    return lessontext_exercises(set, g->set[O_FILE] ? g->val[O_FILE] : NULL, e);
}

/* What became of a corrupt progress file, on stderr. */
static void cli_exercise_notice(const Progress *p)
{
    if (p->notice[0]) {
        Error note;
        error_set(&note, "%s", p->notice);
        cli_fail("exercise", 0, &note);
    }
}

/* Progress to show (nothing on disk is touched), its notice on stderr;
 * NULL (e saying why) where it cannot be had. */
static const Progress *cli_exercise_progress(Error *e)
{
    static Progress p;
    char path[PROGRESS_PATH_MAX];
    if (progress_path(path, sizeof path, e) || progress_load(&p, path, PROGRESS_READ, e))
        return NULL;
    cli_exercise_notice(&p);
    return &p;
}

/* label and the text, wrapped to the terminal's width; a short label
 * ("  a) ", "hint: ") indents the lines after the first. */
static void cli_exercise_line(const char *label, const char *text)
{
    char out[4 * EXERCISE_TEXT_MAX], line[4 * EXERCISE_TEXT_MAX + 256];
    Error e;
    if (exercise_text(text, out, sizeof out, &e))
        snprintf(out, sizeof out, "%s", text);      // checked on load; cannot fail here
    snprintf(line, sizeof line, "%s%s", label ? label : "", out);
    size_t indent = label && strlen(label) <= 8 ? strlen(label) : 0;
    text_wrap(stdout, "", &"        "[8 - indent], line, text_width());
}

static cJSON *cli_exercise_text_json(const char *text)
{
    char out[4 * EXERCISE_TEXT_MAX];
    Error e;
    if (exercise_text(text, out, sizeof out, &e))
        snprintf(out, sizeof out, "%s", text);
    return cJSON_CreateString(out);
}

/* What list and show both say of an exercise: its id, lesson, kind,
 * level and question. */
static cJSON *cli_exercise_head_json(const Exercise *x)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", x->id);
    cJSON_AddStringToObject(o, "lesson", x->lesson);
    cJSON_AddStringToObject(o, "kind", exercise_kind_name(x->kind));
    cJSON_AddStringToObject(o, "level", exercise_level_name(x->level));
    cJSON_AddItemToObject(o, "question", cli_exercise_text_json(x->question));
    return o;
}

/* ------------------------------------------------------------------------
 * list
 */

static int cli_exercise_list(const ExerciseSet *set, bool json)
{
    Error e;
    const Progress *p = cli_exercise_progress(&e);
    if (!p)
        cli_fail("exercise", 0, &e);        // the list is shown without it
    if (json) {
        cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "exercises");
        for (size_t i = 0; i < set->n; i++) {
            const Exercise *x = &set->ex[i];
            const ProgressItem *it = p ? progress_find_exercise(p, x->id) : NULL;
            cJSON *o = cli_exercise_head_json(x);
            cJSON_AddBoolToObject(o, "done", it && it->done);
            cJSON_AddNumberToObject(o, "attempts", it ? (double)it->attempts : 0);
            cJSON_AddItemToArray(arr, o);
        }
        return json_emit(root, &e) ? cli_error("exercise", &e) : EXIT_OK;
    }
    Table t;
    table_header(&t, "id", "kind", "level", "lesson", "done", "tries", (char *)NULL);
    size_t done = 0;
    for (size_t i = 0; i < set->n; i++) {
        const Exercise *x = &set->ex[i];
        const ProgressItem *it = p ? progress_find_exercise(p, x->id) : NULL;
        done += it && it->done;
        table_row(&t);
        table_cell(&t, "%s", x->id);
        table_cell(&t, "%s", exercise_kind_name(x->kind));
        table_cell(&t, "%s", exercise_level_name(x->level));
        table_cell(&t, "%s", x->lesson);
        table_cell(&t, "%s", it && it->done ? "yes" : "");
        table_cell(&t, "%lu", it ? it->attempts : 0);
    }
    table_print(&t, stdout);
    table_free(&t);
    printf("\n%zu of %zu done; kvlab exercise show ID to try one\n", done, set->n);
    return EXIT_OK;
}

/* ------------------------------------------------------------------------
 * show
 */

static void cli_exercise_solution(const Exercise *x)
{
    if (x->solution[0])
        cli_exercise_line("solution: ", x->solution);
    if (x->seed_answer[0]) {
        char label[EXERCISE_TEXT_MAX];
        snprintf(label, sizeof label, "the source's answer: %s, %s", x->seed_answer,
                 x->seed_error[0] ? "wrong: " : "right");
        cli_exercise_line(label, x->seed_error);
    }
    if (x->kind == EXERCISE_CHOICE) {
        for (size_t i = 0; i < x->n_choices; i++)
            if (x->choices[i].correct) {
                cli_exercise_line((char[]){'a', 'n', 's', 'w', 'e', 'r', ':', ' ', (char)('a' + i), ')', ' ', '\0'},
                                  x->choices[i].text);
                cli_exercise_line("  ", x->choices[i].why);
            }
        return;
    }
    if (!x->has_query)
        return;
    char text[QUERY_TEXT_MAX + 64], inputs[512], cmd[QUERY_TEXT_MAX + 16];
    QueryValue v;
    Error e;
    Q in_unit;
    if (query_eval(&x->query, &v, &e) || query_convert(v.exact, x->query.unit, x->unit, &in_unit, &e)) {
        cli_fail("exercise", 0, &e);
        return;
    }
    char val[64];
    query_value_text(in_unit, v.never, x->unit, x->query.digits, val, sizeof val);
    exercise_query_inputs(&x->query, inputs, sizeof inputs);
    printf("worked out: %s = %s\n", metric_id(x->query.metric), val);
    text_wrap(stdout, "  inputs: ", "          ", inputs, text_width());
    text_wrap(stdout, "  query:  ", "          ", query_format(&x->query, text, sizeof text), text_width());
    text_wrap(stdout, "  see it: ", "          ", query_command(&x->query, cmd, sizeof cmd), text_width());
}

static void cli_exercise_question(const Exercise *x)
{
    char head[512];
    snprintf(head, sizeof head, "%s (%s, %s%s%s)", x->id, exercise_kind_name(x->kind), exercise_level_name(x->level),
             x->source[0] ? "; " : "", x->source);
    text_wrap(stdout, "", "  ", head, text_width());
    putchar('\n');
    cli_exercise_line(NULL, x->question);
    for (size_t i = 0; i < x->n_choices; i++) {
        cli_exercise_line((char[]){' ', ' ', (char)('a' + i), ')', ' ', '\0'}, x->choices[i].text);
    }
    if (x->kind == EXERCISE_TASK) {
        char lab[sizeof x->settings + 64];
        snprintf(lab, sizeof lab, "in the lab: the %s screen%s%s", x->screen, x->settings[0] ? " with " : "",
                 x->settings);
        putchar('\n');
        text_wrap(stdout, "", "  ", lab, text_width());
        for (size_t i = 0; i < x->n_steps; i++) {
            char mark[32];
            snprintf(mark, sizeof mark, "  %zu. ", i + 1);
            cli_exercise_line(mark, x->steps[i]);
        }
    }
    putchar('\n');
    if (x->kind == EXERCISE_CHOICE)
        printf("answer with: kvlab exercise check %s LETTER\n", x->id);
    else if (x->has_query) {
        char form[64];
        answer_join("NUMBER", x->unit, form, sizeof form);
        printf("answer with: kvlab exercise check %s %s%s%s\n", x->id, strchr(form, ' ') ? "'" : "", form,
               strchr(form, ' ') ? "'" : "");
    }
}

static cJSON *cli_exercise_json(const Exercise *x, bool solution)
{
    cJSON *o = cli_exercise_head_json(x);
    cJSON_AddItemToObject(o, "hint", cli_exercise_text_json(x->hint));
    if (x->source[0])
        cJSON_AddStringToObject(o, "source", x->source);
    if (x->has_query) {
        cJSON_AddStringToObject(o, "unit", query_unit_name(x->unit));
        cJSON_AddNumberToObject(o, "tolerance", x->tolerance);
    }
    if (x->n_choices) {
        cJSON *arr = cJSON_AddArrayToObject(o, "choices");
        for (size_t i = 0; i < x->n_choices; i++) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddItemToObject(c, "text", cli_exercise_text_json(x->choices[i].text));
            if (solution) {
                cJSON_AddBoolToObject(c, "correct", x->choices[i].correct);
                cJSON_AddItemToObject(c, "why", cli_exercise_text_json(x->choices[i].why));
            }
            cJSON_AddItemToArray(arr, c);
        }
    }
    if (x->kind == EXERCISE_TASK) {
        cJSON_AddStringToObject(o, "screen", x->screen);
        cJSON_AddStringToObject(o, "settings", x->settings);
        cJSON *arr = cJSON_AddArrayToObject(o, "steps");
        for (size_t i = 0; i < x->n_steps; i++)
            cJSON_AddItemToArray(arr, cli_exercise_text_json(x->steps[i]));
    }
    if (solution) {
        if (x->solution[0])
            cJSON_AddItemToObject(o, "solution", cli_exercise_text_json(x->solution));
        /* the source's own answer (with the solution: where right, it is the answer) */
        if (x->seed_answer[0])
            cJSON_AddStringToObject(o, "seed_answer", x->seed_answer);
        if (x->seed_error[0])
            cJSON_AddItemToObject(o, "seed_error", cli_exercise_text_json(x->seed_error));
        if (x->has_query) {
            char text[QUERY_TEXT_MAX + 64];
            QueryValue v;
            Error e;
            Q in_unit;
            cJSON_AddStringToObject(o, "query", query_format(&x->query, text, sizeof text));
            if (!query_eval(&x->query, &v, &e) && !query_convert(v.exact, x->query.unit, x->unit, &in_unit, &e)) {
                char val[64];
                cJSON_AddNumberToObject(o, "answer", q_to_double(in_unit));
                cJSON_AddStringToObject(o, "answer_text", query_value_text(in_unit, v.never, x->unit,
                                                                           x->query.digits, val, sizeof val));
            }
        }
    }
    return o;
}

static int cli_exercise_show(const Exercise *x, bool solution, bool json)
{
    if (json) {
        Error e;
        return json_emit(cli_exercise_json(x, solution), &e) ? cli_error("exercise", &e) : EXIT_OK;
    }
    cli_exercise_question(x);
    if (solution) {
        putchar('\n');
        cli_exercise_solution(x);
    }
    return EXIT_OK;
}

/* ------------------------------------------------------------------------
 * check
 */

static void cli_exercise_verdict_text(const Exercise *x, const ExerciseVerdict *c, bool solution)
{
    if (x->kind == EXERCISE_CHOICE) {
        printf("%s: %c) is %s.\n", x->id, 'a' + c->choice, c->correct ? "right" : "not right");
        cli_exercise_line("  ", x->choices[c->choice].why);
    } else {
        char said[512];
        if (c->correct)
            snprintf(said, sizeof said, "%s: right: %s (calc: %s)", x->id, c->number.given_text,
                     c->number.truth_text);
        else
            snprintf(said, sizeof said, "%s: not right: %s %s", x->id, c->number.given_text, c->number.off_text);
        text_wrap(stdout, "", "  ", said, text_width());
    }
    if (x->kind != EXERCISE_CHOICE && !c->correct) {
        char label[2][128];
        for (size_t i = 0; i < c->number.n_mistakes; i++)
            mistake_label(c->number.mistakes[i], c->number.variants[i], label[i], sizeof label[i]);
        if (c->number.n_mistakes) {
            char said[512];
            snprintf(said, sizeof said, "likely mistake: %s%s%s (that gives %s)", label[0],
                     c->number.n_mistakes > 1 ? ", and " : "",
                     c->number.n_mistakes > 1 ? label[1] : "", c->number.mistaken_text);
            text_wrap(stdout, "", "  ", said, text_width());
            for (size_t i = 0; i < c->number.n_mistakes; i++)
                text_wrap(stdout, "  ", "  ", mistake_why(c->number.mistakes[i]), text_width());
        }
    }
    if (c->seed && x->seed_error[0]) {
        char said[128];
        snprintf(said, sizeof said, "that is the source's answer (%s), and the source is wrong: ", x->seed_answer);
        cli_exercise_line(said, x->seed_error);
    }
    if (!c->correct)
        cli_exercise_line("hint: ", x->hint);
    if (solution) {
        putchar('\n');
        cli_exercise_solution(x);
    } else if (!c->correct) {
        printf("(kvlab exercise show %s --solution for the worked solution)\n", x->id);
    }
}

static int cli_exercise_verdict_json(const Exercise *x, const ExerciseVerdict *c, const char *answer, bool solution)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", x->id);
    cJSON_AddStringToObject(o, "answer", answer);
    cJSON_AddBoolToObject(o, "correct", c->correct);
    if (x->kind == EXERCISE_CHOICE) {
        char letter[2] = {(char)('a' + c->choice), 0};
        cJSON_AddStringToObject(o, "choice", letter);
        cJSON_AddItemToObject(o, "why", cli_exercise_text_json(x->choices[c->choice].why));
    } else {
        cJSON_AddNumberToObject(o, "value", c->number.given);
        cJSON_AddNumberToObject(o, "expected", q_to_double(c->number.truth));
        cJSON_AddStringToObject(o, "expected_text", c->number.truth_text);
        cJSON_AddStringToObject(o, "answer_text", c->number.given_text);
        if (!c->correct)
            cJSON_AddStringToObject(o, "off_text", c->number.off_text);
        cJSON_AddStringToObject(o, "unit", query_unit_name(x->unit));
        cJSON *arr = cJSON_AddArrayToObject(o, "mistakes");
        for (size_t i = 0; i < c->number.n_mistakes; i++) {
            cJSON *m = cJSON_CreateObject();
            cJSON_AddStringToObject(m, "id", mistake_id(c->number.mistakes[i]));
            char label[128];
            cJSON_AddStringToObject(m, "name", mistake_label(c->number.mistakes[i], c->number.variants[i], label,
                                                             sizeof label));
            cJSON_AddStringToObject(m, "why", mistake_why(c->number.mistakes[i]));
            cJSON_AddItemToArray(arr, m);
        }
        if (c->number.n_mistakes)
            cJSON_AddStringToObject(o, "mistaken_text", c->number.mistaken_text);
    }
    if (c->seed && x->seed_error[0])
        cJSON_AddItemToObject(o, "seed_error", cli_exercise_text_json(x->seed_error));
    if (!c->correct)
        cJSON_AddItemToObject(o, "hint", cli_exercise_text_json(x->hint));
    if (solution)
        cJSON_AddItemToObject(o, "exercise", cli_exercise_json(x, true));
    Error e;
    return json_emit(o, &e) ? cli_error("exercise", &e) : 0;
}

static int cli_exercise_check(const Exercise *x, const char *answer, bool solution, bool json)
{
    ExerciseVerdict c;
    Error e;
    if (exercise_check(x, answer, &c, &e))
        return cli_error("exercise", &e);
    char path[PROGRESS_PATH_MAX];
    static Progress p;
    bool saved = !progress_path(path, sizeof path, &e) && !progress_record(&p, path, x->id, c.correct, &e);
    cli_exercise_notice(&p);
    if (json) {
        if (cli_exercise_verdict_json(x, &c, answer, solution))
            return EXIT_RUNTIME;
    } else {
        cli_exercise_verdict_text(x, &c, solution);
    }
    /* The verdict stands, but an attempt that is not kept is a failure the
     * learner (or a script counting on the file) must hear of. */
    if (!saved) {
        error_prefix(&e, "progress not saved");
        return cli_fail("exercise", EXIT_RUNTIME, &e);
    }
    return c.correct ? EXIT_OK : EXIT_NO;
}

/* ------------------------------------------------------------------------
 * reset
 */

static int cli_exercise_reset(bool yes)
{
    char path[PROGRESS_PATH_MAX];
    Error e;
    if (progress_path(path, sizeof path, &e))
        return cli_error("exercise", &e);
    if (access(path, F_OK) != 0) {
        printf("no progress to reset (%s is not there)\n", path);
        return EXIT_OK;
    }
    if (!yes) {
        if (!isatty(STDIN_FILENO)) {
            error_set(&e, "reset deletes %s; give --yes to do it without a terminal to ask on", path);
            return cli_error("exercise", &e);
        }
        printf("delete your progress (%s)? [y/N] ", path);
        fflush(stdout);
        char line[16];
        if (!fgets(line, sizeof line, stdin) || (line[0] != 'y' && line[0] != 'Y')) {
            printf("kept\n");
            return EXIT_NO;
        }
    }
    /* Under the lock a check takes to record its attempt: a check running
     * now finishes first, and its attempt goes with the rest. */
    int deleted = progress_reset(path, &e);
    if (deleted < 0)
        return cli_error("exercise", &e);
    printf(deleted ? "progress deleted\n" : "no progress to reset (%s is not there)\n", path);
    return EXIT_OK;
}

int cmd_exercise(int argc, char **argv)
{
    Given g;
    int rc = cli_begin(&CMD, argc, argv, &g);
    if (rc != CLI_GO_ON)
        return rc;
    Error e;
    const char *verb = g.n_words ? g.words[0] : "";
    static const struct {
        const char *verb;
        int min, max;
        const char *usage;
    } VERBS[] = {
        {"list", 1, 1, "list"}, {"show", 2, 2, "show ID"}, {"check", 3, 4, "check ID ANSWER"}, {"reset", 1, 1, "reset"},
    };
    size_t k = 0;
    while (k < sizeof VERBS / sizeof VERBS[0] && strcmp(VERBS[k].verb, verb))
        k++;
    if (k == sizeof VERBS / sizeof VERBS[0]) {
        error_set(&e, "%s%s%sexpected list, show ID, check ID ANSWER or reset", *verb ? "unknown action '" : "",
                  verb, *verb ? "'; " : "");
        return cli_error("exercise", &e);
    }
    if (g.n_words < VERBS[k].min || g.n_words > VERBS[k].max) {
        error_set(&e, "usage: kvlab exercise %s", VERBS[k].usage);
        return cli_error("exercise", &e);
    }
    if (!strcmp(verb, "reset"))
        return cli_exercise_reset(g.set[O_YES]);
    static ExerciseSet set;
    if (cli_exercise_load(&g, &set, &e))
        return cli_error("exercise", &e);
    if (!strcmp(verb, "list")) {
        rc = cli_exercise_list(&set, g.set[O_JSON]);
    } else {
        const Exercise *x = exercise_find(&set, g.words[1]);
        if (!x) {
            error_set(&e, "unknown exercise '%s' (kvlab exercise list)", g.words[1]);
            rc = cli_error("exercise", &e);
        } else if (!strcmp(verb, "show")) {
            rc = cli_exercise_show(x, g.set[O_SOLUTION], g.set[O_JSON]);
        } else {
            char answer[256];
            snprintf(answer, sizeof answer, "%s%s%s", g.words[2], g.n_words > 3 ? " " : "",
                     g.n_words > 3 ? g.words[3] : "");
            rc = cli_exercise_check(x, answer, g.set[O_SOLUTION], g.set[O_JSON]);
        }
    }
    exercise_set_free(&set);
    return rc;
}
