/* fuzz_query.c - queries (calc/query.h) and answers (calc/answer.h) on one
 * line: a query that parses prints back as one that parses the same, and
 * evaluates or says why; an answer that parses is a finite number that the
 * checker judges against a fixed query without failing. */
#include "fuzz.h"

#include "answer.h"
#include "query.h"

#include <math.h>

static void check_query(const char *text)
{
    static Query q, back;
    Error e;
    if (query_parse(text, &q, &e))
        return;
    char buf[QUERY_TEXT_MAX + 64];
    query_format(&q, buf, sizeof buf);
    FUZZ_CHECK(query_parse(buf, &back, &e) == 0, "'%s' prints as '%s', which fails: %s", text, buf, e.msg);
    FUZZ_CHECK(back.metric == q.metric && back.unit == q.unit && back.digits == q.digits &&
                   back.n_words == q.n_words,
               "'%s' prints as '%s', another query", text, buf);
    QueryValue v;
    if (query_eval(&q, &v, &e) == 0)
        FUZZ_CHECK(memchr(v.text, '\0', sizeof v.text) && (v.never || isfinite(v.value)), "'%s': %s", text,
                   v.text);
    else
        FUZZ_CHECK(e.msg[0] != '\0', "'%s' fails without a message", text);
}

static void check_answer(const char *text)
{
    static Query q;
    static bool ready;
    Error e;
    if (!ready) {
        FUZZ_CHECK(query_parse("gib --scenario pool-20gib", &q, &e) == 0, "%s", e.msg);
        ready = true;
    }
    Answer a;
    if (answer_parse(text, &a, &e))
        return;
    FUZZ_CHECK(isfinite(a.value) && a.value >= 0, "'%s' reads as %g", text, a.value);
    AnswerVerdict v;
    if (answer_check(&q, query_unit_by_name("GiB"), ANSWER_TOLERANCE_DEFAULT, &a, &v, &e) == 0)
        FUZZ_CHECK(v.n_mistakes <= VERDICT_MISTAKES_MAX && (!v.correct || !v.n_mistakes), "'%s'", text);
}

FUZZ_TARGET(query)
{
    char *text = fuzz_string(data, size);
    setenv("KVLAB_DATA", fuzz_datadir(), 0);
    check_query(text);
    check_answer(text);
    free(text);
    return 0;
}
