/* exercise_pane.h - an exercise in a box over the lessons: its question,
 * the answer typed in the status line, the verdict (right, or how far off
 * and the likely mistake, named by the mistake models of calc/answer.h),
 * the hint and the worked solution; a task opens the screen that does it.
 * Every answer is counted in the learner's progress (teach.h). */
#ifndef KVLAB_EXERCISE_PANE_H
#define KVLAB_EXERCISE_PANE_H

#include "exercise.h"
#include "lab.h"

#define EXERCISE_PANE_TEXT 8192

typedef struct {
    const Exercise *x;
    bool answered, correct;
    bool hint, solution;        // shown
    char verdict[EXERCISE_PANE_TEXT];   // lines of the last verdict
} ExercisePane;

/* Opens the box on exercise x (p keeps what the box shows). */
void exercise_pane_open(ExercisePane *p, const Exercise *x, Lab *lab);

#endif
