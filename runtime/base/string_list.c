/* A growable list of owned strings (string_list.h). */
#include "string_list.h"

#include <stdlib.h>

void asyncrt__list_push(asyncrt_string_list *l, char *s)
{
    if (!s || l->failed) {
        l->failed = true;
        free(s);
        return;
    }
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **grown = realloc(l->items, cap * sizeof *grown);
        if (!grown) {
            l->failed = true;
            free(s);
            return;
        }
        l->items = grown;
        l->cap = cap;
    }
    l->items[l->count++] = s;
}

void asyncrt__list_free(asyncrt_string_list *l)
{
    for (size_t i = 0; i < l->count; i++) free(l->items[i]);
    free(l->items);
    *l = (asyncrt_string_list){0};
}
