/* A growable list of owned strings, for building option lists: a push that
 * runs out of memory marks the list failed instead of failing at once, so a
 * builder checks once at the end (string_list.c). */
#ifndef ASYNCRT_STRING_LIST_H
#define ASYNCRT_STRING_LIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct asyncrt_string_list {
    char **items;
    size_t count, cap;
    bool failed; /* a push ran out of memory */
} asyncrt_string_list;

void asyncrt__list_push(asyncrt_string_list *l, char *s); /* takes s; NULL marks the list failed */
void asyncrt__list_free(asyncrt_string_list *l);

#endif
