/* exercise.h - exercises: the files that hold them, checked on load, and
 * their texts with live figures.
 *
 * An exercise file is {"exercises": [ {...}, ... ]} (lessons/FORMAT.md,
 * "Exercises"). A number exercise's answer is a query, so it cannot be
 * wrong; a choice exercise explains every choice; a task opens a screen of
 * the lab with settings and may ask for a number read off it. Every query in
 * a file (answers, reports, `=query` figures in the texts) is worked out
 * when the file is loaded, and any error names file:line:column. */
#ifndef KVLAB_EXERCISE_H
#define KVLAB_EXERCISE_H

#include "answer.h"
#include "error.h"
#include "lesson.h"
#include "query.h"

#include <stdbool.h>
#include <stddef.h>

#define EXERCISE_ID_MAX 64
#define EXERCISE_TEXT_MAX 2048
#define EXERCISE_CHOICES_MAX 8
#define EXERCISE_STEPS_MAX 12
#define EXERCISE_FILES_MAX 64

typedef enum { EXERCISE_NUMBER, EXERCISE_CHOICE, EXERCISE_TASK, EXERCISE_KINDS } ExerciseKind;
typedef enum { LEVEL_RECALL, LEVEL_COMPUTE, LEVEL_DIAGNOSE, LEVEL_DECIDE, EXERCISE_LEVELS } ExerciseLevel;

const char *exercise_kind_name(ExerciseKind k);     // "number", "choice", "task"
const char *exercise_level_name(ExerciseLevel l);   // "recall" ...

typedef struct {
    char text[512];
    bool correct;
    char why[1024];
} Choice;

typedef struct {
    char id[EXERCISE_ID_MAX];
    char lesson[EXERCISE_ID_MAX];
    ExerciseKind kind;
    ExerciseLevel level;
    char question[EXERCISE_TEXT_MAX];   // may hold `=query` figures and [t](term:t) links
    char hint[1024];
    char source[256];                   // "" none
    char file[512];                     // the file it came from, for messages
    /* number, and a task's report: the query, the unit it is asked in */
    bool has_query;
    char answer[QUERY_TEXT_MAX];        // the query as written
    Query query;
    const QueryUnit *unit;
    double tolerance;
    char solution[EXERCISE_TEXT_MAX];
    /* choice */
    size_t n_choices;
    Choice choices[EXERCISE_CHOICES_MAX];
    /* task */
    char screen[32];
    char settings[512];
    size_t n_steps;
    char steps[EXERCISE_STEPS_MAX][512];
    /* what a seed says the answer is, and what it got wrong ("" = right) */
    char seed_answer[64];
    char seed_error[1024];
} Exercise;

typedef struct {
    size_t n;
    Exercise *ex;               // heap
    /* What a file's lessons, term links and task settings are checked
     * against as it loads (lesson_known, term_known, widget_check); NULL
     * checks none of them. */
    const LessonRefs *refs;
} ExerciseSet;

/* The lab screens a task may open, as exercise files name them. */
size_t exercise_screen_count(void);
const char *exercise_screen_at(size_t i);

/* Adds the exercises of one file (or, where text is not NULL, of its len
 * bytes, path naming it) to set; ids must be unique across the set. On an
 * error the set is as it was. */
int exercise_load_file(ExerciseSet *set, const char *path, const char *text, size_t len, Error *e);
/* Every *.json of dir, in name order. */
int exercise_load_dir(ExerciseSet *set, const char *dir, Error *e);
void exercise_set_free(ExerciseSet *set);
const Exercise *exercise_find(const ExerciseSet *set, const char *id);

/* The directory of the shipped exercises: exercises/ in the lessons
 * directory (paths_lessondir: $KVLAB_LESSONS, else found as the data is). */
const char *exercise_dir(char *buf, size_t n);

/* A text with its `=query` figures worked out ("41.94 GB"), other code
 * spans without their backticks, and links as their text. */
int exercise_text(const char *in, char *out, size_t n, Error *e);

/* A choice answer, "b" or "2", as the choice's index; -1 when it is none. */
int exercise_choice_index(const Exercise *x, const char *answer);

/* ------------------------------------------------------------------------
 * Checking an answer, for the command line and the lab alike
 */
typedef struct {
    bool correct;
    int choice;                 // a choice exercise: the index answered; else -1
    AnswerVerdict number;       // a number exercise or a task's report
    bool seed;                  // the answer is the source's own seed_answer
} ExerciseVerdict;

/* Checks answer (a choice letter or number, or a number with a unit) to x.
 * An answer that cannot be read, a unit of another family, or a task with
 * nothing to report is an error (-1), not a wrong answer. */
int exercise_check(const Exercise *x, const char *answer, ExerciseVerdict *v, Error *e);

/* What a query is worked out on, in words: "Llama-3.1-70B, context 4,096
 * tokens, batch 32, format fp8_e4m3, pool 20 GiB, GPU ...". */
const char *exercise_query_inputs(const Query *q, char *buf, size_t n);

/* The typed-number rule (lessons/FORMAT.md) over an exercise's question,
 * hint, solution and choices (text and why), the inputs its figures and
 * its answer's query: see text_typed_numbers. */
int exercise_typed_numbers(const Exercise *x, TypedNumber *out, size_t max, Error *e);

#endif
