/* screens.h - the lab's screens, each a ScreenDef (lab.h). */
#ifndef KVLAB_SCREENS_H
#define KVLAB_SCREENS_H

#include "lab.h"

extern const ScreenDef SCREEN_LESSONS;
extern const ScreenDef SCREEN_SCENARIOS;
extern const ScreenDef SCREEN_CALC;
extern const ScreenDef SCREEN_QUANT;
extern const ScreenDef SCREEN_GPU;
extern const ScreenDef SCREEN_NIAH;

#endif
