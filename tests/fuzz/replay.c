/* replay.c - runs the fuzz harnesses without libFuzzer: every file of
 * DIR/corpus/NAME/ and DIR/crashes/NAME/ through harness NAME, in name
 * order, so that `make test` checks the seed corpora and every crash ever
 * found (kept after its fix) with the normal compiler, and under `make
 * asan` with AddressSanitizer and UBSan.
 *
 *   replay DIR                 every harness
 *   replay DIR NAME FILE...    the given files through one harness
 *
 * A file that breaks a harness ends the program (a crash, an abort or a
 * sanitizer report); its path is printed first. */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#define HARNESS_MAX 16

typedef struct {
    const char *name;           // "model": corpus/model/, crashes/model/
    FuzzFn fn;
} Harness;

static Harness harness[HARNESS_MAX];
static size_t n_harness;

void fuzz_register(const char *name, FuzzFn fn)
{
    if (n_harness < HARNESS_MAX)
        harness[n_harness++] = (Harness){name, fn};
}

/* ------------------------------------------------------------------------
 * Naming the file that broke a harness
 */

static const char *current;         // the file being replayed

static void say_current(void)
{
    if (!current)
        return;
    static const char MSG[] = "fuzz replay: this input broke the harness: ";
    ssize_t w = write(2, MSG, sizeof MSG - 1);
    w = write(2, current, strlen(current));
    w = write(2, "\n", 1);
    (void)w;
}

static void on_fatal(int sig)
{
    say_current();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Sanitizers end the program themselves; they call this first. */
extern void __asan_set_death_callback(void (*cb)(void)) __attribute__((weak));

/* ------------------------------------------------------------------------
 * Replaying
 */

static int replay_file(FuzzFn fn, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *data = malloc(cap);
    for (size_t got; data && (got = fread(data + len, 1, cap - len, f)) > 0;) {
        len += got;
        if (len == cap)
            data = realloc(data, cap *= 2);
    }
    int bad = !data || ferror(f);
    fclose(f);
    if (bad) {
        free(data);
        fprintf(stderr, "fuzz replay: %s: cannot read\n", path);
        return -1;
    }
    /* The harness gets exactly len bytes, as libFuzzer gives them. */
    uint8_t *exact = malloc(len ? len : 1);
    memcpy(exact, data, len);
    free(data);
    current = path;
    fn(exact, len);
    current = NULL;
    free(exact);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file in dir, sorted; a missing dir is empty. Returns the
 * count, or -1 on an error. */
static long replay_dir(FuzzFn fn, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : (fprintf(stderr, "fuzz replay: %s: %s\n", dir, strerror(errno)), -1);
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        size_t len = strlen(dir) + strlen(de->d_name) + 2;
        names[n] = malloc(len);
        snprintf(names[n++], len, "%s/%s", dir, de->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    long rc = (long)n;
    for (size_t i = 0; i < n; i++) {
        if (rc >= 0 && replay_file(fn, names[i]))
            rc = -1;
        free(names[i]);
    }
    free(names);
    return rc;
}

static int cmp_harness(const void *a, const void *b)
{
    return strcmp(((const Harness *)a)->name, ((const Harness *)b)->name);
}

static FuzzFn find(const char *name)
{
    for (size_t i = 0; i < n_harness; i++)
        if (strcmp(harness[i].name, name) == 0)
            return harness[i].fn;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: replay DIR [NAME FILE...]\n");
        return 2;
    }
    static const int FATAL[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof FATAL / sizeof FATAL[0]; i++)
        signal(FATAL[i], on_fatal);
    if (__asan_set_death_callback)
        __asan_set_death_callback(say_current);
    qsort(harness, n_harness, sizeof *harness, cmp_harness);    // constructors run in any order

    if (argc > 2) {
        FuzzFn fn = find(argv[2]);
        if (!fn) {
            fprintf(stderr, "fuzz replay: no harness '%s'\n", argv[2]);
            return 2;
        }
        for (int i = 3; i < argc; i++)
            if (replay_file(fn, argv[i]))
                return 1;
        return 0;
    }
    char dir[4096];
    for (size_t i = 0; i < n_harness; i++) {
        snprintf(dir, sizeof dir, "%s/corpus/%s", argv[1], harness[i].name);
        long seeds = replay_dir(harness[i].fn, dir);
        snprintf(dir, sizeof dir, "%s/crashes/%s", argv[1], harness[i].name);
        long crashes = replay_dir(harness[i].fn, dir);
        if (seeds < 0 || crashes < 0)
            return 1;
        if (seeds == 0) {
            fprintf(stderr, "fuzz replay: %s/corpus/%s holds no inputs\n", argv[1], harness[i].name);
            return 1;
        }
        printf("fuzz replay: %-9s %3ld corpus files, %ld past crashes\n", harness[i].name, seeds,
               crashes);
    }
    return 0;
}
