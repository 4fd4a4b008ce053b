/* exercise_pane.c - see exercise_pane.h. */
#include "exercise_pane.h"

#include "crt.h"
#include "teach.h"

#include <curses.h>

#include <math.h>
#include <stdarg.h>
#include <string.h>

#define VERDICT_CLOSE 0.005     // nearer the answer than this share: "close", not "N times", as kvlab exercise says

/* Appends a line to the verdict. */
__attribute__((format(printf, 2, 3)))
static void exercise_pane_say(ExercisePane *p, const char *fmt, ...)
{
    size_t len = strlen(p->verdict);
    va_list ap;
    va_start(ap, fmt);
    if (len + 1 < sizeof p->verdict)
        vsnprintf(p->verdict + len, sizeof p->verdict - len, fmt, ap);
    va_end(ap);
    len = strlen(p->verdict);
    if (len + 1 < sizeof p->verdict)
        strcat(p->verdict, "\n");
}

/* A text of the exercise's with its figures worked out. */
static const char *exercise_pane_text(const char *in, char *out, size_t n)
{
    Error e;
    if (exercise_text(in, out, n, &e))
        snprintf(out, n, "%s", e.msg);
    return out;
}

/* The verdict of a number (or a task's report) in words. */
static void exercise_pane_number(ExercisePane *p, const AnswerVerdict *v)
{
    if (v->correct)
        exercise_pane_say(p, "Right: %s (calc: %s).", v->given_text, v->truth_text);
    else if (v->off > 0 && fabs(v->off - 1) >= VERDICT_CLOSE)
        exercise_pane_say(p, "Not right: %s is %.3g times the answer.", v->given_text, v->off);
    else
        exercise_pane_say(p, "Not right: %s is close, but not within the tolerance.", v->given_text);
    if (!v->correct && v->n_mistakes) {
        exercise_pane_say(p, "Likely mistake: %s%s%s (that gives %s).", mistake_name(v->mistakes[0]),
                          v->n_mistakes > 1 ? ", and " : "", v->n_mistakes > 1 ? mistake_name(v->mistakes[1]) : "",
                          v->mistaken_text);
        for (size_t i = 0; i < v->n_mistakes; i++)
            exercise_pane_say(p, "  %s", mistake_why(v->mistakes[i]));
    }
}

/* The prompt's answer: checked, counted, and the verdict shown. */
static void exercise_pane_answered(void *ctx, Lab *lab, const char *answer)
{
    ExercisePane *p = ctx;
    const Exercise *x = p->x;
    Error e;
    p->verdict[0] = '\0';
    if (!answer[0]) {
        lab_status(lab, false, "nothing answered");
        return;
    }
    ExerciseVerdict v;
    if (exercise_check(x, answer, &v, &e)) {
        lab_status(lab, true, "%s", e.msg);
        return;
    }
    p->correct = v.correct;
    char t[EXERCISE_TEXT_MAX];
    if (v.choice >= 0)
        exercise_pane_say(p, "%c) is %s. %s", 'a' + v.choice, v.correct ? "right" : "not right",
                          exercise_pane_text(x->choices[v.choice].why, t, sizeof t));
    else
        exercise_pane_number(p, &v.number);
    if (v.seed && x->seed_error[0])
        exercise_pane_say(p, "That is the source's answer (%s), and the source is wrong: %s", x->seed_answer,
                          exercise_pane_text(x->seed_error, t, sizeof t));
    p->answered = true;
    p->hint = p->hint || !p->correct;
    if (teach_attempt(x->id, p->correct, &e))
        lab_status(lab, true, "progress not saved: %s", e.msg);
    else
        lab_status(lab, false, "%s", p->correct ? "right: counted as done" : "not right: see the hint");
}

static void exercise_pane_doc(void *st, Doc *d)
{
    ExercisePane *p = st;
    const Exercise *x = p->x;
    char t[EXERCISE_TEXT_MAX], line[EXERCISE_TEXT_MAX + 64];
    snprintf(line, sizeof line, "%s, %s%s%s", exercise_kind_name(x->kind), exercise_level_name(x->level),
             x->source[0] ? "; " : "", x->source);
    doc_text(d, 0, crt_attr(ROLE_DIM), line);
    doc_text(d, 0, crt_attr(ROLE_NORMAL), exercise_pane_text(x->question, t, sizeof t));
    for (size_t i = 0; i < x->n_choices; i++) {
        snprintf(line, sizeof line, "%c) %s", 'a' + (int)i, exercise_pane_text(x->choices[i].text, t, sizeof t));
        doc_text(d, 2, crt_attr(ROLE_NORMAL), line);
    }
    if (x->kind == EXERCISE_TASK) {
        snprintf(line, sizeof line, "In the lab: the %s screen%s%s (o opens it; Esc there comes back)", x->screen,
                 x->settings[0] ? " with " : "", x->settings);
        doc_text(d, 0, crt_attr(ROLE_TITLE), line);
        for (size_t i = 0; i < x->n_steps; i++) {
            snprintf(line, sizeof line, "%zu. %s", i + 1, exercise_pane_text(x->steps[i], t, sizeof t));
            doc_text(d, 2, crt_attr(ROLE_NORMAL), line);
        }
    }
    doc_gap(d, 1);
    if (p->answered)
        doc_text(d, 0, crt_attr(p->correct ? ROLE_GOOD : ROLE_BAD), p->verdict);
    if (p->hint) {
        snprintf(line, sizeof line, "Hint: %s", exercise_pane_text(x->hint, t, sizeof t));
        doc_text(d, 0, crt_attr(ROLE_WARN), line);
    }
    if (p->solution) {
        if (x->solution[0]) {
            snprintf(line, sizeof line, "Solution: %s", exercise_pane_text(x->solution, t, sizeof t));
            doc_text(d, 0, crt_attr(ROLE_NORMAL), line);
        }
        for (size_t i = 0; i < x->n_choices; i++)
            if (x->choices[i].correct) {
                snprintf(line, sizeof line, "Answer: %c) %s", 'a' + (int)i,
                         exercise_pane_text(x->choices[i].why, t, sizeof t));
                doc_text(d, 0, crt_attr(ROLE_NORMAL), line);
            }
        QueryValue v;
        Error e;
        char q[QUERY_TEXT_MAX + 64], cmd[QUERY_TEXT_MAX + 16];
        if (x->has_query && !query_eval(&x->query, &v, &e)) {
            char inputs[512];
            snprintf(line, sizeof line, "calc: %s = %s on %s, from the query %s (see it whole: %s)",
                     metric_id(x->query.metric), v.text, exercise_query_inputs(&x->query, inputs, sizeof inputs),
                     query_format(&x->query, q, sizeof q), query_command(&x->query, cmd, sizeof cmd));
            doc_text(d, 0, crt_attr(ROLE_DIM), line);
        }
    }
    doc_gap(d, 1);
    const bool answers = x->kind == EXERCISE_CHOICE || x->has_query;
    snprintf(line, sizeof line, "%s%sh: hint; s: solution; Esc: back to the lesson",
             answers ? "Enter: answer; " : "", x->kind == EXERCISE_TASK ? "o: open the screen; " : "");
    doc_text(d, 0, crt_attr(ROLE_DIM), line);
}

static int exercise_pane_key(void *st, int ch, Lab *lab)
{
    ExercisePane *p = st;
    const Exercise *x = p->x;
    Error e;
    switch (ch) {
    case '\n':
    case '\r':
    case KEY_ENTER:
    case 'a':
        if (x->kind != EXERCISE_CHOICE && !x->has_query) {
            lab_status(lab, false, "a task with nothing to report: o opens its screen");
            return KEY_HANDLED;
        }
        lab_prompt(lab, x->kind == EXERCISE_CHOICE ? "your answer (a letter): "
                        : query_unit_name(x->unit)[0] ? "your answer (a number with its unit): "
                                                       : "your answer (a number): ",
                   exercise_pane_answered, p);
        return KEY_HANDLED;
    case 'h':
        p->hint = true;
        return KEY_HANDLED;
    case 's':
        p->solution = true;
        return KEY_HANDLED;
    case 'o':
        if (x->kind != EXERCISE_TASK)
            return KEY_HANDLED;
        if (lab_open_screen(lab, x->screen, x->settings, &e))
            lab_status(lab, true, "cannot open the %s screen: %s", x->screen, e.msg);
        return KEY_IGNORED;     // the box closes over the screen it opened
    default:
        return ch == CRT_ESC || ch == 'q' ? KEY_IGNORED : KEY_HANDLED;
    }
}

void exercise_pane_open(ExercisePane *p, const Exercise *x, Lab *lab)
{
    memset(p, 0, sizeof *p);
    p->x = x;
    char title[128];
    snprintf(title, sizeof title, "Exercise %s", x->id);
    lab_popup(lab, title, exercise_pane_doc, p, exercise_pane_key);
}
