/* main.c - kvlab's entry point: dispatches to a subcommand.
 *
 * One table of commands; adding a command is adding a row. */
#include "cli.h"
#include "commands.h"
#include "paths.h"
#include "teachsources.h"
#include "tui/lab/crt.h"
#include "tui/lab/lab.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    int (*check)(int argc, char **argv);    // its arguments checked, not run; NULL: run is the check
} Command;

static const Command COMMANDS[] = {
    {"calc", cmd_calc, "KV-cache footprint, slots, step floors and speedups", NULL},
    {"formats", cmd_formats, "the storage formats and their byte accounting", NULL},
    {"scenario", cmd_scenario, "walk-through scenarios: list, show NAME, check FILE", NULL},
    {"roundtrip", cmd_roundtrip, "floats on stdin through E4M3, E5M2 or E2M1 and back", NULL},
    {"quant", cmd_quant, "quantization error experiments on keys and values", NULL},
    {"bench", cmd_bench, "measured decode attention over a quantized cache (GPU or CPU)", NULL},
    {"niah", cmd_niah, "needle in a haystack through the decode kernels, with intervals", cmd_niah_check},
    {"models", cmd_models, "the models --model takes", NULL},
    {"gpus", cmd_gpus, "the GPUs --gpu takes", NULL},
    {"lesson", cmd_lesson, "the lessons: list, show ID, check FILE", NULL},
    {"exercise", cmd_exercise, "exercises checked by calc: list, show ID, check ID ANSWER, reset", NULL},
    {"glossary", cmd_glossary, "the terms the lab and the lessons use", NULL},
};

#define N_COMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

static void main_usage(FILE *out)
{
    fprintf(out, "kvlab %s - a lab for KV-cache quantization in LLM serving\n\n"
                 "usage: kvlab                       the interactive lab (in a terminal)\n"
                 "       kvlab --open FILE           the lab as a saved state left it (S saves one)\n"
                 "       kvlab COMMAND [options]     (kvlab COMMAND --help for its options)\n"
                 "       kvlab --help | -h | help | --version\n\n"
                 "commands:\n", KVLAB_VERSION);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fprintf(out, "\nexit status: 0 success, 1 a check said no, 2 bad usage or input, "
                 "3 run-time failure\ndata: ");
    text_put(out, paths_datadir(), false);
    fprintf(out, " (set KVLAB_DATA to use another scenarios directory)\nGPU plugin: ");
    const char *plugin = paths_find(PATH_PLUGIN);
    text_put(out, plugin ? plugin : "none found; make builds libkvlab_cuda.so where nvcc is found", false);
    fprintf(out, " (set KVLAB_CUDA_PLUGIN to use another)\nstored GPU results: ");
    text_put(out, paths_storeddir(), false);
    fprintf(out, " (set KVLAB_STORED to use another)\n");
}

static void main_version(FILE *out)
{
    fprintf(out, "kvlab %s\n", KVLAB_VERSION);
}

/* The words kvlab takes alone, in place of a command. */
static const struct {
    const char *word;
    void (*print)(FILE *out);
} ALONE[] = {
    {"--help", main_usage}, {"-h", main_usage}, {"help", main_usage}, {"--version", main_version},
};

int main(int argc, char **argv)
{
    Error e;
    /* the lab, or the lab as a saved state has it */
    const bool open = argc == 3 && strcmp(argv[1], "--open") == 0;
    if (argc < 2 || open) {
        /* a saved state is checked first, so that a bad one is named
         * wherever kvlab runs; lab_run then asks for the terminal */
        static TeachSources lessons;
        int sig = -1;
        if (open || !crt_usable(&e)) {
            teachsources_fill(&lessons);
            teach_set(&lessons);
            sig = lab_run(open ? argv[2] : NULL, &e);
        }
        if (sig < 0)
            return cli_fail(NULL, EXIT_USAGE, &e);
        return sig ? 128 + sig : EXIT_OK;           // as the shell reports a signal
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--open") == 0) {
        error_set(&e, "--open takes one saved lab state, a file (kvlab --open FILE)");
        return cli_fail(NULL, EXIT_USAGE, &e);
    }
    for (size_t i = 0; i < sizeof ALONE / sizeof ALONE[0]; i++)
        if (strcmp(cmd, ALONE[i].word) == 0) {
            if (argc > 2) {
                error_set(&e, "%s takes nothing after it, not '%s' (a command's options: kvlab COMMAND --help)",
                          cmd, argv[2]);
                return cli_fail(NULL, EXIT_USAGE, &e);
            }
            ALONE[i].print(stdout);
            return EXIT_OK;
        }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(cmd, COMMANDS[i].name) == 0) {
            int rc = COMMANDS[i].run(argc - 2, argv + 2);
            /* Output that never arrived is a failure, not a success. */
            if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "kvlab %s: cannot write the output: %s\n", cmd,
                        errno ? strerror(errno) : "write error");
                return EXIT_RUNTIME;
            }
            return rc;
        }
    size_t len = (size_t)snprintf(e.msg, sizeof e.msg, "unknown command '%s'; expected one of:", cmd);
    for (size_t i = 0; i < N_COMMANDS && len < sizeof e.msg; i++)
        len += (size_t)snprintf(e.msg + len, sizeof e.msg - len, " %s", COMMANDS[i].name);
    if (len < sizeof e.msg)
        snprintf(e.msg + len, sizeof e.msg - len, " (kvlab --help)");
    return cli_fail(NULL, EXIT_USAGE, &e);
}

static const Command *main_command_named(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(name, COMMANDS[i].name) == 0)
            return &COMMANDS[i];
    return NULL;
}

int (*cli_command(const char *name))(int argc, char **argv)
{
    const Command *c = main_command_named(name);
    return c ? c->run : NULL;
}

int (*cli_command_check(const char *name))(int argc, char **argv)
{
    const Command *c = main_command_named(name);
    return c ? c->check ? c->check : c->run : NULL;
}
