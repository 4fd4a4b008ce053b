/* lessontext.h - lessons and glossary entries as plain text, for
 * `kvlab lesson show` and `kvlab glossary`: prose wrapped to a width,
 * figures as calc computes them, widgets as their commands print them;
 * and the references a lesson is checked against on the command line. */
#ifndef KVLAB_LESSONTEXT_H
#define KVLAB_LESSONTEXT_H

#include "exercise.h"
#include "glossary.h"
#include "lesson.h"
#include "paths.h"

#include <stdio.h>

/* The lessons directory's glossary, and refs that check against it, the
 * scenarios, the exercises and the widgets. */
typedef struct {
    Glossary glossary;
    ExerciseSet exercises;
    LessonRefs refs;
} LessonContext;

int lessontext_context(LessonContext *c, Error *e);
void lessontext_context_done(LessonContext *c);
/* The shipped exercises and those of file (NULL: none), their lessons,
 * term links and task settings checked as lessons' are. */
int lessontext_exercises(ExerciseSet *set, const char *file, Error *e);
/* The glossary's path, in the lessons directory. */
const char *lessontext_glossary_path(char *buf, size_t n);

#define LESSONS_MAX 64

typedef struct {
    size_t n;
    char path[LESSONS_MAX][PATHS_LEN + 256];
} LessonFiles;

/* The lesson files: `file` alone where it is not NULL, else NN-slug.md of
 * the lessons directory, by name. */
int lessontext_files(const char *file, LessonFiles *out, Error *e);

/* Runs as one line of text (figures evaluated, citations with their
 * source id), into buf. */
const char *lessontext_runs(const Lesson *l, size_t run0, size_t n, char *buf, size_t size);
/* The whole lesson, evaluated. */
int lessontext_print(const Lesson *l, FILE *out, int width, Error *e);

#endif
