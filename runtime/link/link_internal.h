/* A link's state, shared by link.c (inputs, the run) and link_record.c (its
 * key, the key's record and the explanation of a miss). */
#ifndef ASYNCRT_LINK_INTERNAL_H
#define ASYNCRT_LINK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "asyncrt/link.h"
#include "progress.h"
#include "string_list.h"

typedef struct link_input {
    int kind;                /* ASYNCRT_JIT_* */
    bool from_nvrtc;         /* a program this process's NVRTC compiled (asyncrt_link_add_program) */
    char *name;
    unsigned char *data;
    size_t size;
    uint8_t sha[32];
} link_input;

struct asyncrt_link {
    asyncrt_context *ctx;
    asyncrt__arch arch;
    char arch_name[32];      /* "sm_90": nvJitLink's -arch */
    char *arch_why;          /* why that target (asyncrt_program_arch_reason of the result) */
    link_input *inputs;
    size_t count, cap;
    asyncrt_string_list options;
    asyncrt_string_list expressions, lowered; /* the programs' name expressions, in pairs */
    asyncrt_progress_fn progress;             /* asyncrt_link_set_progress */
    void *progress_user;
};

/* link_record.c: the link's cache key, and (record not NULL) each of its
 * inputs noted by name as it is hashed (key_record.h), so a record never
 * disagrees with its key. */
void asyncrt__link_key(const asyncrt_link *l, uint8_t key[32], asyncrt_string_list *record);
/* "link: a.cu b.cu lib.a": the inputs' names in the order given (malloc'd,
 * NULL when out of memory); the program's source name and the side file
 * its key records live in. */
char *asyncrt__link_name(const asyncrt_link *l);
/* At ASYNCRT_LOG=1, a miss's line naming its cause (as a compile's). */
void asyncrt__link_log_miss(const asyncrt_link *l, const uint8_t key[32], const asyncrt_string_list *record);

#endif
