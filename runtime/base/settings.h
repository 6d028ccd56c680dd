/* Every environment variable the library reads, read once (settings.c): a
 * context takes a snapshot when it is created, and each layer interprets its
 * own fields from that snapshot, so a variable changed later (or by another
 * thread) never half-applies. The table in docs/library.md, "Environment", lists them. */
#ifndef ASYNCRT_SETTINGS_H
#define ASYNCRT_SETTINGS_H

/* One X-macro feeds the struct, the reader and the tests: (field, variable,
 * who may set it). The third column is required of every row:
 *   ASYNCRT_ANY_PROCESS: read in every process.
 *   ASYNCRT_NOT_SETUID: the variable names a library, program, file, folder
 *     or server that the library loads, runs, reads, writes or connects to
 *     (or widens whom it trusts). A set-uid or set-gid process (AT_SECURE,
 *     as secure_getenv decides) ignores it: there the environment belongs to
 *     whoever ran the program, not to its owner, and the context says so at
 *     ASYNCRT_LOG=1. A new variable that names any of these, or when unsure,
 *     is ASYNCRT_NOT_SETUID. */
#define ASYNCRT_SETTINGS(X)                                                                        \
    X(log, "ASYNCRT_LOG", ASYNCRT_ANY_PROCESS)                   /* 0, 1 or 2: what the library prints */ \
    X(cache, "ASYNCRT_CACHE", ASYNCRT_ANY_PROCESS)               /* "0": no memory and no disk cache */   \
    X(cache_dir, "ASYNCRT_CACHE_DIR", ASYNCRT_NOT_SETUID)        /* the disk cache's folder */            \
    X(cache_max_bytes, "ASYNCRT_CACHE_MAX_BYTES", ASYNCRT_ANY_PROCESS)                                    \
    X(cache_shared, "ASYNCRT_CACHE_SHARED", ASYNCRT_NOT_SETUID)  /* "1": a folder shared by a group */    \
    X(pch, "ASYNCRT_PCH", ASYNCRT_ANY_PROCESS)                   /* unset auto, 0 never, 1 always */      \
    X(path, "ASYNCRT_PATH", ASYNCRT_ANY_PROCESS)                 /* force a built-in op's path */         \
    X(map_tune, "ASYNCRT_MAP_TUNE", ASYNCRT_ANY_PROCESS)                                                  \
    X(tile_tune, "ASYNCRT_TILE_TUNE", ASYNCRT_ANY_PROCESS)                                                \
    X(libcuda, "ASYNCRT_LIBCUDA", ASYNCRT_NOT_SETUID)            /* the driver library to open */         \
    X(nvrtc, "ASYNCRT_NVRTC", ASYNCRT_NOT_SETUID)                /* the NVRTC library to open */          \
    X(compact_images, "ASYNCRT_COMPACT_IMAGES", ASYNCRT_ANY_PROCESS) /* 0, 1, auto: compact CUBINs */     \
    X(ptxcompiler, "ASYNCRT_PTXCOMPILER", ASYNCRT_NOT_SETUID)    /* their nvPTXCompiler loader library */ \
    X(compile_worker, "ASYNCRT_COMPILE_WORKER", ASYNCRT_NOT_SETUID)                                       \
    X(remote_cache, "ASYNCRT_REMOTE_CACHE", ASYNCRT_NOT_SETUID)  /* a shared Redis behind the caches */   \
    X(remote_cache_key_file, "ASYNCRT_REMOTE_CACHE_KEY_FILE", ASYNCRT_NOT_SETUID) /* its HMAC secret */   \
    X(libhiredis, "ASYNCRT_LIBHIREDIS", ASYNCRT_NOT_SETUID)      /* the hiredis library to open */        \
    X(virtual_env, "VIRTUAL_ENV", ASYNCRT_NOT_SETUID)            /* NVIDIA's wheels: a virtual env's, */  \
    X(python_user_base, "PYTHONUSERBASE", ASYNCRT_NOT_SETUID)    /* the user's (else ~/.local) */         \
    X(cuda_path, "CUDA_PATH", ASYNCRT_NOT_SETUID)                /* toolkits, in the search order */      \
    X(cuda_home, "CUDA_HOME", ASYNCRT_NOT_SETUID)                                                         \
    X(toolkit, "ASYNCRT_TOOLKIT", ASYNCRT_ANY_PROCESS)           /* "none": no toolkit's headers */       \
    X(tmpdir, "TMPDIR", ASYNCRT_NOT_SETUID)                                                               \
    X(xdg_cache_home, "XDG_CACHE_HOME", ASYNCRT_NOT_SETUID)                                               \
    X(home, "HOME", ASYNCRT_NOT_SETUID)

#define ASYNCRT_ANY_PROCESS false /* the column's values: ignored where AT_SECURE? */
#define ASYNCRT_NOT_SETUID true

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Each field is the variable's value, or NULL when it is unset (or ignored). */
typedef struct asyncrt_settings {
#define ASYNCRT_SETTINGS_FIELD(field, name, rule) char *field;
    ASYNCRT_SETTINGS(ASYNCRT_SETTINGS_FIELD)
#undef ASYNCRT_SETTINGS_FIELD
    /* The ASYNCRT_NOT_SETUID variables that were set and ignored, one bit per
     * row in the X-macro's order (0 in an ordinary process). */
    uint64_t ignored;
} asyncrt_settings;

/* Whether this process is set-uid or set-gid (getauxval(AT_SECURE): the
 * kernel's word, what secure_getenv follows). A test seam: tests point it at
 * a function of their own to read the settings as such a process would. */
extern bool (*asyncrt__settings_secure)(void);

/* Reads the environment into *out (a set-uid or set-gid process ignores the
 * ASYNCRT_NOT_SETUID rows, and records them in ->ignored); false (and *out
 * empty) when out of memory. */
bool asyncrt__settings_read(asyncrt_settings *out);

/* The names of the variables s->ignored holds, ", "-separated, into out
 * (truncated to size); the count. For the context's log line. */
size_t asyncrt__settings_ignored_names(const asyncrt_settings *s, char *out, size_t size);
void asyncrt__settings_free(asyncrt_settings *s);

/* Replaces variable `name`'s value in *s (NULL: unset), for tests and the
 * bench's sweeps that vary a tuning between ops of one context; only while
 * no other call runs on that context. False for a name not in the list, or
 * when out of memory (*s then unchanged). */
bool asyncrt__settings_set(asyncrt_settings *s, const char *name, const char *value);
/* Variable `name`'s value in s (NULL: unset) into *value; false for a name
 * not in the list. */
bool asyncrt__settings_get(const asyncrt_settings *s, const char *name, const char **value);

/* The process's own snapshot, read on first use, for code that runs before or
 * without a context (the driver and NVRTC loaders are process-wide). NULL
 * when out of memory. */
const asyncrt_settings *asyncrt__settings_process(void);

#endif
