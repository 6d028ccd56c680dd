/* Every environment variable the library reads, read once (settings.c): a
 * context takes a snapshot when it is created, and each layer interprets its
 * own fields from that snapshot, so a variable changed later (or by another
 * thread) never half-applies. The README's "Settings" table lists them. */
#ifndef ASYNCRT_SETTINGS_H
#define ASYNCRT_SETTINGS_H

/* One X-macro feeds the struct, the reader and the tests: (field, variable). */
#define ASYNCRT_SETTINGS(X)                                                              \
    X(log, "ASYNCRT_LOG")                     /* 0, 1 or 2: what the library prints */  \
    X(cache, "ASYNCRT_CACHE")                 /* "0": no memory and no disk cache */    \
    X(cache_dir, "ASYNCRT_CACHE_DIR")         /* the disk cache's folder */             \
    X(cache_max_bytes, "ASYNCRT_CACHE_MAX_BYTES")                                       \
    X(cache_shared, "ASYNCRT_CACHE_SHARED")   /* "1": a folder shared by a group */     \
    X(pch, "ASYNCRT_PCH")                     /* unset auto, 0 never, 1 always */       \
    X(path, "ASYNCRT_PATH")                   /* force a built-in op's path */          \
    X(map_tune, "ASYNCRT_MAP_TUNE")                                                     \
    X(tile_tune, "ASYNCRT_TILE_TUNE")                                                   \
    X(libcuda, "ASYNCRT_LIBCUDA")             /* the driver library to open */          \
    X(nvrtc, "ASYNCRT_NVRTC")                 /* the NVRTC library to open */           \
    X(compile_worker, "ASYNCRT_COMPILE_WORKER")                                         \
    X(remote_cache, "ASYNCRT_REMOTE_CACHE")   /* a shared Redis behind the caches */    \
    X(remote_cache_key_file, "ASYNCRT_REMOTE_CACHE_KEY_FILE") /* its HMAC secret */     \
    X(libhiredis, "ASYNCRT_LIBHIREDIS")       /* the hiredis library to open */         \
    X(virtual_env, "VIRTUAL_ENV")             /* NVIDIA's wheels: a virtual env's, */   \
    X(python_user_base, "PYTHONUSERBASE")     /* the user's (else ~/.local) */          \
    X(cuda_path, "CUDA_PATH")                 /* toolkits, in the search order */       \
    X(cuda_home, "CUDA_HOME")                                                           \
    X(toolkit, "ASYNCRT_TOOLKIT")             /* "none": no toolkit's headers */        \
    X(tmpdir, "TMPDIR")                                                                 \
    X(xdg_cache_home, "XDG_CACHE_HOME")                                                 \
    X(home, "HOME")

/* Each field is the variable's value, or NULL when it is unset. */
typedef struct asyncrt_settings {
#define ASYNCRT_SETTINGS_FIELD(field, name) char *field;
    ASYNCRT_SETTINGS(ASYNCRT_SETTINGS_FIELD)
#undef ASYNCRT_SETTINGS_FIELD
} asyncrt_settings;

/* Reads the environment into *out; false (and *out empty) when out of memory. */
#include <stdbool.h>
bool asyncrt__settings_read(asyncrt_settings *out);
void asyncrt__settings_free(asyncrt_settings *s);

/* Replaces variable `name`'s value in *s (NULL: unset), for tests and the
 * bench's sweeps that vary a tuning between ops of one context; only while
 * no other call runs on that context. False for a name not in the list, or
 * when out of memory (*s then unchanged). */
bool asyncrt__settings_set(asyncrt_settings *s, const char *name, const char *value);

/* The process's own snapshot, read on first use, for code that runs before or
 * without a context (the driver and NVRTC loaders are process-wide). NULL
 * when out of memory. */
const asyncrt_settings *asyncrt__settings_process(void);

#endif
