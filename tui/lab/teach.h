/* teach.h - what the lab teaches from: the lessons directory's glossary
 * and exercises (loaded once, as `kvlab lesson` loads them, so that a
 * lesson is checked against the same references) and the learner's
 * progress (calc/progress.h), shared by the lessons screen, the exercise
 * pane and the glossary key of every screen. */
#ifndef KVLAB_TEACH_H
#define KVLAB_TEACH_H

#include "progress.h"
#include "tui/cli/lessontext.h"

/* Loads the glossary, the exercises and the progress once; later calls
 * answer as the first did. -1 with the reason in e where the lessons
 * directory cannot be read (the lab goes on without lessons). */
int teach_load(Error *e);
/* NULL until teach_load succeeded. */
const LessonContext *teach_context(void);
/* The progress (empty where it could not be read). */
Progress *teach_progress(void);
/* What became of a corrupt progress file, for the user ("" none). */
const char *teach_notice(void);
/* Writes the progress atomically. */
int teach_save(Error *e);
void teach_done(void);

#endif
