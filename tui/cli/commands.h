/* commands.h - the subcommands main.c dispatches to. Each takes the
 * arguments after its name and returns an exit code from cli.h. */
#ifndef KVLAB_COMMANDS_H
#define KVLAB_COMMANDS_H

int cmd_calc(int argc, char **argv);
int cmd_formats(int argc, char **argv);
int cmd_scenario(int argc, char **argv);
int cmd_roundtrip(int argc, char **argv);
int cmd_quant(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_gpus(int argc, char **argv);
int cmd_lesson(int argc, char **argv);
int cmd_exercise(int argc, char **argv);
int cmd_glossary(int argc, char **argv);
int cmd_niah(int argc, char **argv);
/* kvlab niah's arguments checked as it checks them, the grid not run: 0
 * where it would run them, else its exit code, its message printed. */
int cmd_niah_check(int argc, char **argv);

/* The command named `name`'s function (main.c's table), or NULL. */
int (*cli_command(const char *name))(int argc, char **argv);
/* What checks that command's arguments without running it: its own check
 * where running takes long (niah), else the command itself; NULL where no
 * command has the name. */
int (*cli_command_check(const char *name))(int argc, char **argv);

#endif