/* labstate.h - a saved lab state: the screen shown, every input of every
 * screen and the inputs each pinned baseline was computed from, as a JSON
 * file a teacher can reopen (`kvlab --open FILE`) in front of a class.
 *
 *   {"version": 1, "screen": "Calculator",
 *    "screens": {"Calculator": {"inputs": {"Model": "llama-3.1-8b",
 *                                          "Context": "131072", ...},
 *                               "pinned": {"Model": ..., "Context": "8192"}},
 *                "Scenarios": {"inputs": {"Scenario": "pool-20gib", ...}},
 *                "Lessons": {"inputs": {}, "page": {"id": "step-floors", "line": 40}}}}
 *
 * Inputs are the screens' fields by label, each value in the text
 * field_save_text writes (exact: bytes, tokens, a choice's name). The file
 * is checked against the screens and labels the lab has, with the line
 * and column of whatever is wrong; a value is checked where the lab
 * applies it, and `where` keeps its place for that message. The file is
 * written atomically (calc/atomicfile.h). A screen that shows pages
 * (the lessons) records the one open and the first line in view; the lab
 * checks the id where it opens the page, and a file without a page opens
 * the screen as it starts. */
#ifndef KVLAB_LABSTATE_H
#define KVLAB_LABSTATE_H

#include "lab.h"

#define LABSTATE_VERSION 1
#define LABSTATE_SCREENS 8
#define LABSTATE_VALUE 256

typedef struct {
    const char *label;              // the field's, as the lab gave it
    char value[LABSTATE_VALUE];     // field_save_text's form
    char where[ERROR_MSG_MAX];      // "FILE:LINE:COL: " (loaded), for the errors of applying it
} StateInput;

typedef struct {
    size_t n;
    StateInput in[FIELDS_MAX];
    char where[ERROR_MSG_MAX];      // the object's place (loaded), for an error in the whole
} StateInputs;

typedef struct {
    StateInputs inputs;
    bool pinned;
    StateInputs pin;                // the inputs the pinned figures came from
    char page[LABSTATE_VALUE];      // the page shown (a lesson's id); "" none
    uint64_t line;                  // the page's first line in view
    char page_where[ERROR_MSG_MAX]; // the page id's "FILE:LINE:COL: " (loaded)
} StateScreen;

typedef struct {
    size_t screen;                  // the screen shown, an index into the lab's screens
    StateScreen s[LABSTATE_SCREENS];
} LabState;

/* A screen as a file may name it: its name and its inputs' labels. */
typedef struct {
    const char *name;
    bool pins;                      // whether it has figures to pin
    bool pages;                     // whether it shows pages (lessons) a file may name
    size_t n;
    const char *labels[FIELDS_MAX];
} StateScreenInfo;

/* Reads path into ls, checking its keys against the n screens of info;
 * a screen or input the file leaves out keeps what it has. */
int labstate_load(LabState *ls, const char *path, const StateScreenInfo *info, size_t n, Error *e);
/* Writes ls (its n screens named by info) to path atomically. */
int labstate_save(const LabState *ls, const char *path, const StateScreenInfo *info, size_t n, Error *e);
/* Where a typed name goes: a path with a '/' as it is; a bare name, with
 * ".json" added when it has no extension, in kvlab's directory, the
 * progress file's ($XDG_DATA_HOME/kvlab, default ~/.local/share/kvlab);
 * an empty name is lab-YYYYMMDD-HHMMSS.json there. */
int labstate_path(const char *typed, char *out, size_t n, Error *e);

#endif
