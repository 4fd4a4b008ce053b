/* fuzz_lesson.c - the lesson parser (lesson_parse, md4c underneath) and the
 * evaluation of the figures of every lesson it accepts, with the models
 * and scenarios of the data directory ($KVLAB_DATA, else ./scenarios). */
#include "fuzz.h"

#include "lesson.h"

/* What a parsed lesson promises: its runs, figures and predicts lie within
 * their arrays, every block's runs are its own, every position lies within
 * the text. */
static void check_lesson(const Lesson *l, const char *text, size_t size)
{
    FUZZ_CHECK(l->id[0] && l->title && l->question, "a header field missing");
    unsigned long lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += text[i] == '\n';
    for (size_t i = 0; i < l->n_blocks; i++) {
        const LessonBlock *b = &l->blocks[i];
        FUZZ_CHECK(b->run0 + b->n_runs <= l->n_runs, "block %zu runs past the runs", i);
        FUZZ_CHECK(b->pos.line >= 1 && (unsigned long)b->pos.line <= lines, "block %zu at line %d", i, b->pos.line);
        FUZZ_CHECK(b->kind != BLOCK_PREDICT || (b->predict >= 0 && (size_t)b->predict < l->n_predicts),
                   "block %zu's predict", i);
        FUZZ_CHECK(b->kind != BLOCK_WIDGET || (b->widget && b->text), "block %zu's widget", i);
    }
    for (size_t i = 0; i < l->n_runs; i++) {
        const LessonRun *r = &l->runs[i];
        FUZZ_CHECK(r->text, "run %zu without text", i);
        FUZZ_CHECK(r->kind != RUN_FIGURE || (r->figure >= 0 && (size_t)r->figure < l->n_figures), "run %zu", i);
        FUZZ_CHECK(r->kind != RUN_CITE || lesson_source(l, r->target), "run %zu cites no source", i);
        FUZZ_CHECK(r->offset <= size, "run %zu at offset %zu of %zu", i, r->offset, size);
    }
    for (size_t i = 0; i < l->n_predicts; i++) {
        const LessonPredict *p = &l->predicts[i];
        FUZZ_CHECK(p->answer >= 0 && (size_t)p->answer < l->n_figures, "predict %zu's answer", i);
        FUZZ_CHECK(p->run0 + p->n_runs <= l->n_runs && p->question, "predict %zu", i);
    }
}

FUZZ_TARGET(lesson)
{
    char *text = fuzz_exact(data, size);
    static Lesson l;
    Error e;
    LessonRefs refs = {.datadir = fuzz_datadir()};
    if (lesson_parse(&l, "fuzz.md", text, size, &refs, &e)) {
        fuzz_check_file_error(&e, "fuzz.md", text, size);
    } else {
        check_lesson(&l, text, size);
        if (lesson_eval(&l, &e))
            fuzz_check_file_error(&e, "fuzz.md", text, size);
        else
            for (size_t i = 0; i < l.n_figures; i++)
                FUZZ_CHECK(l.figures[i].evaluated && memchr(l.figures[i].text, '\0', sizeof l.figures[i].text),
                           "figure %zu", i);
        lesson_free(&l);
    }
    free(text);
    return 0;
}
