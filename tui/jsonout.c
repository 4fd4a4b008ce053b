/* jsonout.c - see jsonout.h. */
#include "jsonout.h"

#include "text.h"

void json_add_u128(cJSON *obj, const char *name, u128 v)
{
    char buf[64];
    cJSON_AddItemToObject(obj, name, cJSON_CreateRaw(u128_str(buf, sizeof buf, v, false)));
}

void json_add_q(cJSON *obj, const char *name, Q q)
{
    cJSON_AddNumberToObject(obj, name, q_to_double(q));
}

int json_emit(cJSON *root, Error *e)
{
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s)
        return error_runtime(e, "out of memory printing JSON");
    text_put_json(stdout, s);
    cJSON_free(s);
    return 0;               // write errors are caught once, in main
}
