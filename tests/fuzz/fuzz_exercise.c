/* fuzz_exercise.c - the exercise file loader (exercise_load_file), with the
 * models, GPUs and scenarios of the data directory ($KVLAB_DATA, else
 * ./scenarios), and every exercise it accepts. */
#include "fuzz.h"

#include "exercise.h"

/* What a loaded exercise promises: a slug id, its kind's parts, and texts
 * whose figures all work out, the same every time. */
static void check_exercise(const Exercise *x)
{
    FUZZ_CHECK(x->id[0] && strspn(x->id, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(x->id), "id '%s'",
               x->id);
    FUZZ_CHECK(x->kind < EXERCISE_KINDS && x->level < EXERCISE_LEVELS, "kind %d level %d", (int)x->kind,
               (int)x->level);
    static char a[4 * EXERCISE_TEXT_MAX], b[4 * EXERCISE_TEXT_MAX];
    Error e;
    FUZZ_CHECK(exercise_text(x->question, a, sizeof a, &e) == 0, "question: %s", e.msg);
    FUZZ_CHECK(exercise_text(x->question, b, sizeof b, &e) == 0 && strcmp(a, b) == 0, "question differs");
    if (x->kind == EXERCISE_NUMBER)
        FUZZ_CHECK(x->has_query && x->unit && x->tolerance > 0 && x->tolerance < 1, "number without answer");
    if (x->kind == EXERCISE_CHOICE) {
        size_t right = 0;
        for (size_t i = 0; i < x->n_choices; i++)
            right += x->choices[i].correct;
        FUZZ_CHECK(x->n_choices >= 2 && right == 1, "%zu choices, %zu right", x->n_choices, right);
    }
    if (x->kind == EXERCISE_TASK)
        FUZZ_CHECK(x->n_steps >= 1 && x->screen[0], "task without steps or screen");
    if (x->has_query) {
        QueryValue v;
        FUZZ_CHECK(query_eval(&x->query, &v, &e) == 0, "answer loaded but fails: %s", e.msg);
        FUZZ_CHECK(memchr(v.text, '\0', sizeof v.text) != NULL, "text not terminated");
    }
}

FUZZ_TARGET(exercise)
{
    char *text = fuzz_exact(data, size);
    setenv("KVLAB_DATA", fuzz_datadir(), 0);
    ExerciseSet set = {0};
    Error e;
    if (exercise_load_file(&set, "fuzz.json", text, size, &e)) {
        fuzz_check_file_error(&e, "fuzz.json", text, size);
        FUZZ_CHECK(set.n == 0, "%zu exercises kept from a refused file", set.n);
    } else {
        for (size_t i = 0; i < set.n; i++)
            check_exercise(&set.ex[i]);
    }
    exercise_set_free(&set);
    free(text);
    return 0;
}
