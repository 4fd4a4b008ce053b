/* teach.h - what the lab teaches from: the lessons directory's lesson
 * files, glossary and exercises, and the learner's progress
 * (calc/progress.h), shared by the lessons screen, the exercise pane and
 * the glossary key of every screen.
 *
 * The lessons are read by the command line's own code (`kvlab lesson`:
 * the same references, which run a widget's command to check it), which
 * lives in the room above the lab; kvlab hands it to the lab as these sources before the
 * lab starts (teach_set), so that a lesson the command line refuses is
 * refused here with the same message. */
#ifndef KVLAB_TEACH_H
#define KVLAB_TEACH_H

#include "exercise.h"
#include "glossary.h"
#include "lesson.h"
#include "paths.h"
#include "progress.h"

#define TEACH_LESSONS_MAX 64

typedef struct {
    char why[ERROR_MSG_MAX];            // the lessons could not be read ("" they could)
    const Glossary *glossary;
    const ExerciseSet *exercises;
    const LessonRefs *refs;             // what a lesson is checked against
    size_t n_lessons;
    const char *lessons[TEACH_LESSONS_MAX];     // the lesson files, in order
} TeachSources;

/* The sources (kept, not copied); before lab_run. */
void teach_set(const TeachSources *src);
/* Loads the progress once; -1 with the reason in e where there are no
 * lessons (the lab goes on without them). */
int teach_load(Error *e);
/* NULL until teach_load succeeded. */
const TeachSources *teach_context(void);
/* The progress (empty where it could not be read). */
Progress *teach_progress(void);
/* What became of a corrupt progress file, for the user ("" none). */
const char *teach_notice(void);
/* One attempt at an exercise, and a lesson read, recorded in the progress
 * file (locked, written atomically; teach_progress() then holds the file's
 * latest). */
int teach_attempt(const char *exercise, bool correct, Error *e);
int teach_mark_read(const char *lesson, Error *e);

#endif
