/* asyncrt: the disk cache as the library sees it, and administering a cache
 * directory (asyncrt-cache is built on these calls). docs/cache.md says what the cache keeps and how it is checked. */
#ifndef ASYNCRT_CACHE_PUBLIC_H
#define ASYNCRT_CACHE_PUBLIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asyncrt/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the context's cache directory, counters and remote ------------------ */

/* Overrides the on-disk cache directory; NULL disables the disk cache. The
 * in-process cache stays on unless ASYNCRT_CACHE=0. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_set_cache_dir(asyncrt_context *ctx, const char *dir);
ASYNCRT_EXTERN const char *asyncrt_context_cache_dir(const asyncrt_context *ctx); /* NULL if off */

/* What this context's program cache did (see docs/cache.md). */
typedef struct asyncrt_cache_stats {
    /* Set it with ASYNCRT_CACHE_STATS_INIT (or .size = sizeof(asyncrt_cache_stats)): the
     * library writes only the fields this size covers (docs/deployment.md, "ABI and versioning"). */
    size_t size;
    uint64_t memory_hits;   /* found in this context's memory */
    uint64_t disk_hits;     /* read from the cache directory */
    uint64_t misses;        /* NVRTC had to run */
    uint64_t stores;        /* programs stored (memory, and disk when on) */
    /* ---- The first layout ends here. Fields added later: written only when
     * the caller's size covers them. */
    uint64_t evictions;     /* files this context deleted to keep under ASYNCRT_CACHE_MAX_BYTES */
    uint64_t rejected;      /* disk files refused: damaged, foreign, not a regular file, too big */
    /* Loads, counted where the cache is shared (asyncrt_context_create_peer): a
     * program compiled once and loaded on N devices is 1 miss and N module
     * loads, and 1 image load where the driver has cuLibraryLoadData. */
    uint64_t image_loads;   /* images handed to the driver (cuLibraryLoadData, or cuModuleLoadDataEx) */
    uint64_t module_loads;  /* asyncrt_module_load calls that succeeded, on any device */
} asyncrt_cache_stats;
#define ASYNCRT_CACHE_STATS_INIT ASYNCRT_SIZED_INIT(asyncrt_cache_stats)

/* Copies the counters; safe while other threads use the context. A size
 * below the first layout is ASYNCRT_ERROR_INVALID_ARGUMENT. Like the other
 * calls that only report (remote_cache_stats, kernel_resources_of), it
 * leaves the last error alone unless it fails. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_cache_stats(const asyncrt_context *ctx, asyncrt_cache_stats *out);

/* ---- remote cache (docs/cache.md, "The remote cache") ------------------- */

/* A shared Redis behind this context's memory and disk caches: `spec` as in
 * ASYNCRT_REMOTE_CACHE (redis://[[USER:]PASSWORD@]HOST[:PORT][/DB] or
 * redis+unix:/PATH, then |read-only, |connect-timeout=MS, |operation-timeout=MS,
 * |prefix=TEXT, |shards=A,B (each replaces the URL's '*'), |lease-wait=MS),
 * `key_file` as ASYNCRT_REMOTE_CACHE_KEY_FILE (NULL: that variable): the
 * fleet's HMAC secret, a file of this user's with mode 0600. NULL spec turns
 * the remote off. Opens hiredis (libhiredis.so) but does not connect.
 * ASYNCRT_ERROR_INVALID_ARGUMENT for a malformed spec or an unusable key,
 * ASYNCRT_ERROR_UNSUPPORTED when hiredis cannot be used; the message says
 * why (never a password). Must not overlap other calls on the context. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_set_remote_cache(asyncrt_context *ctx, const char *spec,
                                                                const char *key_file);

typedef struct asyncrt_remote_cache_stats {
    /* Set it with ASYNCRT_REMOTE_CACHE_STATS_INIT (or .size = sizeof(asyncrt_remote_cache_stats)): the
     * library writes only the fields this size covers (docs/deployment.md, "ABI and versioning"). */
    size_t size;
    bool enabled;          /* configured, accepted and not switched off by failures */
    char state[512];       /* the servers (passwords as ****), then the last value refused and why;
                              or why the remote is off */
    uint64_t hits;         /* programs taken from the remote: verified here, installed locally */
    uint64_t misses;       /* lookups it could not answer: absent, or stale for this machine's files */
    uint64_t errors;       /* failed or timed-out operations (connects included) */
    uint64_t rejected;     /* values refused: no or a wrong HMAC, truncated, oversized, malformed */
    uint64_t stores;       /* programs written to it */
    uint64_t lease_waits;  /* times another process's compile of the same key was waited for */
    uint64_t bytes_read, bytes_written;
    double time_ms;        /* spent in remote operations, waits for leases included */
} asyncrt_remote_cache_stats;
#define ASYNCRT_REMOTE_CACHE_STATS_INIT ASYNCRT_SIZED_INIT(asyncrt_remote_cache_stats)

/* This context's remote counters; safe while other threads use the context. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_remote_cache_stats(const asyncrt_context *ctx,
                                                                  asyncrt_remote_cache_stats *out);

/* ---- the context's disk cache ------------------------------------------- */

/* The disk cache a context uses, as it read its settings (ASYNCRT_CACHE,
 * ASYNCRT_CACHE_DIR, XDG_CACHE_HOME, HOME, ASYNCRT_CACHE_MAX_BYTES,
 * ASYNCRT_CACHE_SHARED) or as set_cache_dir changed them. */
typedef struct asyncrt_cache_info {
    /* Set it with ASYNCRT_CACHE_INFO_INIT (or .size = sizeof(asyncrt_cache_info)): the
     * library writes only the fields this size covers (docs/deployment.md, "ABI and versioning"). */
    size_t size;
    const char *dir;    /* the directory; NULL when there is none (ASYNCRT_CACHE=0, no HOME,
                           set_cache_dir(NULL)). Valid until the next set_cache_dir or ctx's destruction */
    bool used;          /* it passed the trust checks and is read and written */
    bool shared;        /* ASYNCRT_CACHE_SHARED=1: a team cache, sealed with its KEY */
    uint64_t max_bytes; /* the cap in force */
    bool max_malformed; /* ASYNCRT_CACHE_MAX_BYTES is set but is not a size: the default applies */
    char why[512];      /* when !used: why not (what the warning at ASYNCRT_LOG=1 says); else "" */
} asyncrt_cache_info;
#define ASYNCRT_CACHE_INFO_INIT ASYNCRT_SIZED_INIT(asyncrt_cache_info)

/* Fills *out. To say whether the directory is used it is checked as a
 * compile's lookup checks it (created when missing, 0700; 02770 shared), so
 * `used` and `why` are what the next compile will find. A size below the
 * struct's is ASYNCRT_ERROR_INVALID_ARGUMENT, as for every sized struct.
 * Like the other calls that only report, it leaves the last error alone
 * unless it fails. Must not overlap set_cache_dir on ctx. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_cache_info(const asyncrt_context *ctx, asyncrt_cache_info *out);

/* ---- administering a cache directory (asyncrt-cache) --------------------- */

/* One handle per opened folder, bound to the context that opened it (its
 * messages, its remote, its settings). The handle is the door: the folder is
 * opened once (O_DIRECTORY | O_NOFOLLOW), judged on what was opened, and
 * every later call goes through that descriptor, never the name again, so a
 * folder swapped in at that name afterwards is never read or written.
 * A handle is used by one thread at a time. */
typedef struct asyncrt_cache_dir asyncrt_cache_dir;

typedef enum asyncrt_cache_dir_role {
    ASYNCRT_CACHE_DIR_CACHE = 0, /* a cache directory: the library's trust checks; shared mode and KEY as ctx has them */
    ASYNCRT_CACHE_DIR_EXPORT     /* an export folder: plain SHA-256 seals, nothing in it trusted */
} asyncrt_cache_dir_role;

typedef struct asyncrt_cache_dir_options {
    /* Set it with ASYNCRT_CACHE_DIR_OPTIONS_INIT (or .size = sizeof(asyncrt_cache_dir_options)). */
    size_t size;
    const char *dir;             /* NULL: the context's (ASYNCRT_CACHE_DIR, XDG_CACHE_HOME/asyncrt, ~/.cache/asyncrt) */
    asyncrt_cache_dir_role role;
    bool create;                 /* create it when missing (0700; 02770 for a shared cache) */
} asyncrt_cache_dir_options;
#define ASYNCRT_CACHE_DIR_OPTIONS_INIT ASYNCRT_SIZED_INIT(asyncrt_cache_dir_options)

/* Opens and judges the folder. A real directory that opens gives a handle
 * even when the library would not use it as a cache (asyncrt_cache_dir_info
 * says why), so that a report shows the very folder it judged; every call
 * below that changes it, or trusts what is in it, is then
 * ASYNCRT_ERROR_IO with that reason. ASYNCRT_ERROR_NOT_FOUND when it is
 * missing or not a directory (a symbolic link included), with the reason as
 * ctx's message; ASYNCRT_ERROR_IO when opts->dir is NULL and ctx has no
 * cache directory (caching off, no HOME). ctx must outlive the handle;
 * *out is NULL on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_dir_open(asyncrt_context *ctx, const asyncrt_cache_dir_options *opts,
                                                     asyncrt_cache_dir **out);
ASYNCRT_EXTERN void asyncrt_cache_dir_close(asyncrt_cache_dir *dir); /* NULL is fine */
/* The folder as a cache: its name, whether the library would use it (used)
 * and why not, shared mode, and ctx's cap. An export folder is `used`. */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_dir_info(const asyncrt_cache_dir *dir, asyncrt_cache_info *out);
/* ctx's disk cache becomes this handle's folder, by its descriptor, never
 * reopened by name (compiles, warm, push, pull; its compile workers get the
 * descriptor), until the next set_cache_dir. ASYNCRT_ERROR_IO for a folder
 * the library would not use, or an export folder. Must not overlap other
 * calls on ctx, like set_cache_dir. */
ASYNCRT_EXTERN asyncrt_status asyncrt_context_use_cache_dir(asyncrt_context *ctx, const asyncrt_cache_dir *dir);

/* A file's kind, by its name. */
typedef enum asyncrt_cache_dir_file_kind {
    ASYNCRT_CACHE_FILE_ENTRY,    /* <64 hex digits>.bin: a compiled program */
    ASYNCRT_CACHE_FILE_MANIFEST, /* <64 hex digits>.mf: the files a compile read */
    ASYNCRT_CACHE_FILE_TEMP,     /* .tmp.*: a write in flight, or left by a process that died */
    ASYNCRT_CACHE_FILE_OTHER     /* KEY, side files, anything else */
} asyncrt_cache_dir_file_kind;

typedef struct asyncrt_cache_dir_file {
    /* Set it with ASYNCRT_CACHE_DIR_FILE_INIT (or .size = sizeof(asyncrt_cache_dir_file)). */
    size_t size;
    const char *name;            /* lives as long as the listing */
    asyncrt_cache_dir_file_kind kind;
    bool regular;                /* false: not a regular file (a symlink, a FIFO...): "odd", never read */
    uint64_t bytes;
    int64_t used_ns;             /* mtime, the LRU's recency (a hit refreshes it), ns since the epoch */
    int64_t accessed_ns;         /* atime */
} asyncrt_cache_dir_file;
#define ASYNCRT_CACHE_DIR_FILE_INIT ASYNCRT_SIZED_INIT(asyncrt_cache_dir_file)

typedef struct asyncrt_cache_dir_totals {
    /* Set it with ASYNCRT_CACHE_DIR_TOTALS_INIT (or .size = sizeof(asyncrt_cache_dir_totals)). */
    size_t size;
    size_t entries, manifests, temps;             /* regular files only */
    size_t odd;                                   /* entry names that are not regular files */
    uint64_t entry_bytes, manifest_bytes, temp_bytes;
} asyncrt_cache_dir_totals;
#define ASYNCRT_CACHE_DIR_TOTALS_INIT ASYNCRT_SIZED_INIT(asyncrt_cache_dir_totals)

typedef struct asyncrt_cache_dir_listing asyncrt_cache_dir_listing;
/* A snapshot of the folder (an lstat of each name), in directory order.
 * ASYNCRT_ERROR_IO ("cannot read DIR (reason)") when it cannot be read. */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_dir_scan(asyncrt_cache_dir *dir, asyncrt_cache_dir_listing **out);
ASYNCRT_EXTERN size_t asyncrt_cache_dir_listing_count(const asyncrt_cache_dir_listing *listing); /* 0 for NULL */
/* ASYNCRT_ERROR_INVALID_ARGUMENT past the count or for a NULL or unsized struct. */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_dir_listing_file(const asyncrt_cache_dir_listing *listing, size_t index,
                                                             asyncrt_cache_dir_file *out);
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_dir_listing_totals(const asyncrt_cache_dir_listing *listing,
                                                               asyncrt_cache_dir_totals *out);
ASYNCRT_EXTERN void asyncrt_cache_dir_listing_free(asyncrt_cache_dir_listing *listing); /* NULL is fine; names die here */

/* What one entry or manifest holds, read with every check the library makes. */
typedef struct asyncrt_cache_dir_item {
    /* Set it with ASYNCRT_CACHE_DIR_ITEM_INIT (or .size = sizeof(asyncrt_cache_dir_item)). */
    size_t size;
    asyncrt_cache_dir_file_kind kind; /* ENTRY or MANIFEST */
    /* An entry: what it was compiled from (NULL where an old entry did not record it). */
    const char *source_name;
    const char *arch;                 /* never NULL for an entry */
    const char *options;              /* NVRTC's options but -arch and the toolkit's -I */
    bool ptx;
    const char *const *name_expressions;
    size_t name_expression_count;
    /* A manifest. */
    size_t dependency_sets, files_read;
    size_t stale_sets;                /* sets whose files changed since (a miss, not damage) */
    const char *newest_entry;         /* "<64 hex digits>.bin", the newest set's entry; NULL when none */
} asyncrt_cache_dir_item;
#define ASYNCRT_CACHE_DIR_ITEM_INIT ASYNCRT_SIZED_INIT(asyncrt_cache_dir_item)

/* Reads `name` (a plain file name in the folder: no '/') with every check a
 * lookup makes: a regular file of plausible size, named by its key, whose
 * header and SHA-256 (or a shared cache's team MAC) hold and which decodes.
 * ASYNCRT_ERROR_CORRUPT with why as ctx's message when it fails them (a
 * name that is not <64 hex digits>.bin or .mf included);
 * ASYNCRT_ERROR_INVALID_ARGUMENT for a name with '/', "", "." or "..".
 * The strings live until the next check on this handle or its close. */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_dir_check(asyncrt_cache_dir *dir, const char *name,
                                                      asyncrt_cache_dir_item *out);
/* Deletes `name` (as above). ASYNCRT_ERROR_IO when it cannot. A manifest
 * deleted takes its key record (explain's) with it. */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_dir_remove(asyncrt_cache_dir *dir, const char *name);

/* "512M", "1G", "4096" (binary units), as ASYNCRT_CACHE_MAX_BYTES is read;
 * false, *bytes untouched, when malformed. */
ASYNCRT_EXTERN bool asyncrt_cache_parse_size(const char *text, uint64_t *bytes);

typedef struct asyncrt_cache_dir_prune_result {
    /* Set it with ASYNCRT_CACHE_DIR_PRUNE_RESULT_INIT (or .size = sizeof(asyncrt_cache_dir_prune_result)). */
    size_t size;
    size_t evicted;         /* entries and manifests deleted */
    size_t temps_removed;   /* temporaries of writers that died */
    uint64_t refused_below; /* not 0: the cap was refused, the newest entry with its manifest takes this many bytes */
} asyncrt_cache_dir_prune_result;
#define ASYNCRT_CACHE_DIR_PRUNE_RESULT_INIT ASYNCRT_SIZED_INIT(asyncrt_cache_dir_prune_result)
/* The LRU eviction every store runs, down to max_bytes: an entry goes with
 * its manifest (and its key record); never the newest entry, so a cap below it is
 * ASYNCRT_ERROR_INVALID_ARGUMENT with refused_below set and nothing evicted. */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_dir_prune(asyncrt_cache_dir *dir, uint64_t max_bytes,
                                                      asyncrt_cache_dir_prune_result *out);
/* Deletes every entry, manifest, temporary and key records file (KEY, the
 * records' lock and other side files stay); *removed (may be NULL) counts them. */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_dir_clear(asyncrt_cache_dir *dir, size_t *removed);

/* One entry or manifest `name` of `from`, checked as asyncrt_cache_dir_check
 * does, re-sealed for `to` (its team MAC, or plain SHA-256) and written there
 * atomically; a manifest written into a cache joins the dependency sets it
 * has there (theirs after ours). A key records file (keys-<16 hex>): its
 * records of entries `from` holds, checked as a side file, merged into a
 * cache's under its lock, those whose manifest `to` holds (move it after
 * the manifests). Never a byte copy. export: a cache to an
 * export folder; import: the reverse. ASYNCRT_ERROR_CORRUPT: refused by the
 * checks; ASYNCRT_ERROR_IO: not written (ctx's message says why). */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_dir_transfer(asyncrt_cache_dir *from, asyncrt_cache_dir *to,
                                                         const char *name);

/* The newest compile of manifest `name` (its newest dependency set and that
 * set's entry, both checked) to the context's remote cache, where its key
 * holds no value yet: *kept (may be NULL) says one was there, left as it is.
 * ASYNCRT_ERROR_CORRUPT when a local file fails its checks; ASYNCRT_ERROR_IO
 * with no usable remote, or when the server failed. */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_dir_push(asyncrt_cache_dir *dir, const char *name, bool *kept);

typedef struct asyncrt_cache_dir_pull_result {
    /* Set it with ASYNCRT_CACHE_DIR_PULL_RESULT_INIT (or .size = sizeof(asyncrt_cache_dir_pull_result)). */
    size_t size;
    size_t installed;            /* verified and installed here */
    size_t refused;              /* failed the checks (HMAC, bounds, seals) */
    size_t not_for_this_machine; /* their headers do not hold the same content here */
    size_t already_here;         /* verified, and this cache held that compile already: not written again,
                                    not counted in installed (a struct of an older size lacks this field) */
    size_t key_records;          /* key records written here (for explain) from the remote's, for entries this
                                    cache holds and had no record of (a struct of an older size lacks it) */
} asyncrt_cache_dir_pull_result;
#define ASYNCRT_CACHE_DIR_PULL_RESULT_INIT ASYNCRT_SIZED_INIT(asyncrt_cache_dir_pull_result)
/* Every value of the context's remote (all shards), verified, and installed
 * where its headers hold here. The context's disk cache must be this folder
 * (asyncrt_context_use_cache_dir): ASYNCRT_ERROR_INVALID_ARGUMENT otherwise.
 * ASYNCRT_ERROR_IO with no usable remote or when a server failed; *out keeps
 * the counts so far. */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_dir_pull(asyncrt_cache_dir *dir, asyncrt_cache_dir_pull_result *out);

/* The remote counters the processes that used this folder left in it (its
 * remote-stats side file), and *kept (may be NULL): their stores that found
 * a value there already. Zeros for a folder the library would not use. */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_dir_remote_tally(const asyncrt_cache_dir *dir,
                                                             asyncrt_remote_cache_stats *out, uint64_t *kept);

/* ---- why a compile misses (asyncrt-cache explain) ------------------------ */

/* Each compile stored on disk keeps its key's named inputs beside its entry
 * (docs/cache.md, "Why a miss"): the arch, each NVRTC option, each
 * in-memory header's digest, the bundle, NVRTC's and the toolkit's identity,
 * the working folder where includes search it, the source's digest... so a
 * miss can be compared with the nearest entry of the same source name. */
typedef enum asyncrt_cache_verdict {
    ASYNCRT_CACHE_VERDICT_HIT = 0,     /* the compile would find its entry on disk */
    ASYNCRT_CACHE_VERDICT_MISS,        /* a miss: cause and the differences say what changed */
    ASYNCRT_CACHE_VERDICT_NO_RECORD,   /* a miss, and no entry of this source name to compare with */
    ASYNCRT_CACHE_VERDICT_UNCACHEABLE, /* this compile is never cached (cause says why) */
    ASYNCRT_CACHE_VERDICT_NO_CACHE,    /* no usable cache directory (cause says why) */
} asyncrt_cache_verdict;

typedef struct asyncrt_cache_explanation {
    /* Set it with ASYNCRT_CACHE_EXPLANATION_INIT (or .size = sizeof(asyncrt_cache_explanation)). */
    size_t size;
    asyncrt_cache_verdict verdict;
    char key[65];        /* key1 of the compile (the manifest's name less ".mf"); KEY_A for two keys */
    char nearest[65];    /* key1 of the entry compared with ("" when none); KEY_B for two keys */
    size_t differences;  /* the inputs that differ from it */
    char cause[512];     /* one line: the most telling difference, or the hit, or why nothing compares */
    char *text;          /* the whole report, a line per difference (malloc'd) */
    char *json;          /* the same as one JSON object (malloc'd) */
} asyncrt_cache_explanation;
#define ASYNCRT_CACHE_EXPLANATION_INIT ASYNCRT_SIZED_INIT(asyncrt_cache_explanation)

/* Also ask the remote cache (ASYNCRT_REMOTE_CACHE) whether it holds the key,
 * and compare with its key records of source_name where one is nearer than
 * the local ones (text and json say which tier the nearest came from). */
#define ASYNCRT_CACHE_EXPLAIN_REMOTE 1u

/* Whether asyncrt_program_compile(ctx, source_name, source, opts) would hit
 * ctx's disk cache, and on a miss what differs from the nearest recorded
 * entry of source_name: a header the compile read (path, recorded and
 * current digest), an option, the arch, NVRTC's identity, the working
 * folder, the bundle... Reads with a lookup's checks and changes nothing
 * (no LRU refresh, no compile). "auto" waits for the device as a compile
 * does. ASYNCRT_SUCCESS whatever the verdict; free *out's strings with
 * asyncrt_cache_explanation_free. */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_explain(asyncrt_context *ctx, const char *source_name, const char *source,
                                                    const asyncrt_compile_options *opts, unsigned flags,
                                                    asyncrt_cache_explanation *out);
/* Compares the records of two entries of ctx's disk cache, named by their
 * key1 (64 hex digits, ".mf" allowed): verdict MISS with their differences
 * (HIT when none). ASYNCRT_ERROR_NOT_FOUND when a key has no record there;
 * ASYNCRT_ERROR_INVALID_ARGUMENT for a malformed key. */
ASYNCRT_EXTERN asyncrt_status asyncrt_cache_explain_keys(asyncrt_context *ctx, const char *key_a, const char *key_b,
                                                         asyncrt_cache_explanation *out);
/* Frees text and json (NULL is fine). */
ASYNCRT_EXTERN void asyncrt_cache_explanation_free(asyncrt_cache_explanation *e);

#ifdef __cplusplus
}
#endif
#endif
