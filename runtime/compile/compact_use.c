/* compact_use.h: the context's nvPTXCompiler, its part of the key, the step. */
#define _DEFAULT_SOURCE /* st_mtim */
#include "compact_use.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cache.h"
#include "compact.h"
#include "ptx_assemble.h"
#include "safe_io.h"
#include "file_hash.h"
#include "sha256.h"

/* The context's choice, made once (its slot). Its threads share the one
 * handle: nvPTXCompiler's API is thread safe (NVIDIA's PTX Compiler API
 * guide, "Thread Safety"), each assembly with its own compiler handle. */
typedef struct compact_use {
    asyncrt_ptxcompiler *pc; /* NULL: NVRTC's images, `why` says why */
    bool deferred;           /* the key came from the memo: open at the first assembly */
    char path[4096];         /* the loader the key names, and its identity then */
    struct stat id;
    asyncrt_lib_version nvrtc;
    char version[32];
    char key[192];
    char why[768];
} compact_use;

static void destroy_slot(void *state)
{
    compact_use *u = state;
    if (u) asyncrt__ptxcompiler_close(u->pc);
    free(u);
}

/* ASYNCRT_COMPACT_IMAGES: true for on; false with why for off. */
static bool wanted(const asyncrt_context *ctx, char *why, size_t why_size)
{
    const char *v = ctx->settings.compact_images;
    if (v && strcmp(v, "1") == 0) return true;
    if (v && strcmp(v, "0") == 0) {
        snprintf(why, why_size, "compact images off: ASYNCRT_COMPACT_IMAGES=0");
    } else if (!v || !*v || strcmp(v, "auto") == 0) {
        if (ASYNCRT_COMPACT_DEFAULT) return true;
        snprintf(why, why_size, "compact images off: ASYNCRT_COMPACT_IMAGES is %s, and this build's default is off",
                 v && *v ? "auto" : "unset");
    } else {
        snprintf(why, why_size, "compact images off: ASYNCRT_COMPACT_IMAGES is \"%.40s\"; it must be 0, 1 or auto", v);
        asyncrt__log(ctx, 1, "%s", why);
    }
    return false;
}

/* ctime too: no user can set it, so a file rewritten in place with its old
 * size and mtime is still another file. */
static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* ---- the memo: the loader's version and hash beside the cache ------------
 * Opening the 35 MB loader and hashing it costs ~50 ms, once per context: a
 * side file (sealed like every side file) keeps what they gave for the
 * file's identity, so a process whose compiles all hit opens nothing. The
 * memo is used only for the same path, identity and NVRTC version. */

static void memo_name(const char *path, char *out, size_t size)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a: a file name, not a check */
    for (const char *p = path; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    snprintf(out, size, "ptxcompiler-%016llx.memo", (unsigned long long)h);
}

static void memo_identity(const char *path, const struct stat *st, const asyncrt_lib_version *nvrtc, char *out,
                          size_t size)
{
    char v[64];
    asyncrt__lib_version_format(nvrtc, v, sizeof v);
    snprintf(out, size, "asyncrt-ptxcompiler-memo 1\n%s\n%llu %llu %lld %lld.%09ld %lld.%09ld\nnvrtc %s\n", path,
             (unsigned long long)st->st_dev, (unsigned long long)st->st_ino, (long long)st->st_size,
             (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec, v);
}

/* The memo's "version V sha256 HEX" for this identity, into u's key. */
static bool memo_recall(asyncrt_context *ctx, compact_use *u)
{
    char name[64], want[4600], version[32], hex[65];
    memo_name(u->path, name, sizeof name);
    memo_identity(u->path, &u->id, &u->nvrtc, want, sizeof want);
    char *text = asyncrt__cache_read_side(ctx->cache, name);
    size_t n = strlen(want);
    int used = 0;
    bool ok = text && strncmp(text, want, n) == 0 &&
              sscanf(text + n, "version %31s sha256 %64[0-9a-f]\n%n", version, hex, &used) == 2 &&
              strlen(hex) == 64 && text[n + (size_t)used] == '\0';
    free(text);
    if (!ok) return false;
    snprintf(u->version, sizeof u->version, "%s", version);
    snprintf(u->key, sizeof u->key, "compact on, nvPTXCompiler %s sha256 %s", version, hex);
    snprintf(u->why, sizeof u->why, "compact images on: nvPTXCompiler %s (%.600s)", version, u->path);
    return u->deferred = true;
}

static void memo_keep(asyncrt_context *ctx, const compact_use *u, const char *hex)
{
    char name[64], text[4800];
    memo_name(u->path, name, sizeof name);
    memo_identity(u->path, &u->id, &u->nvrtc, text, sizeof text);
    size_t n = strlen(text);
    snprintf(text + n, sizeof text - n, "version %s sha256 %s\n", asyncrt__ptxcompiler_version(u->pc), hex);
    asyncrt__cache_write_side(ctx->cache, name, text); /* none: the next context hashes again */
}

/* The loader's SHA-256 (hex); the file hashed must be the one opened (the
 * identity stat'ed before the open is the one it had throughout the read),
 * so that the key names the code that assembles. */
static bool hash_loader(const char *path, const struct stat *opened, char hex[65], char *why, size_t why_size)
{
    uint8_t digest[32];
    struct stat hashed;
    bool ok = asyncrt__file_sha256(path, digest, &hashed) && same_file(opened, &hashed) &&
              (uint64_t)hashed.st_size <= ASYNCRT_FILE_MAX; /* the bound every checked read has */
    if (ok) asyncrt__sha256_hex(digest, hex);
    else
        snprintf(why, why_size, "compact images off: %.400s cannot be read to hash it (a regular file of at most %zu "
                 "bytes), or changed while it was opened", path, (size_t)ASYNCRT_FILE_MAX);
    return ok;
}

/* The loader of NVRTC's exact version: its key from the memo, else opened
 * and hashed (and memoised). */
static void choose(asyncrt_context *ctx, compact_use *u)
{
    asyncrt_nvrtc_identity nvrtc;
    bool known = asyncrt__nvrtc_identity_get(&nvrtc);
    char hex[65];
    u->nvrtc = known ? nvrtc.version : (asyncrt_lib_version){-1, -1, -1};
    if (!asyncrt__ptxcompiler_path(ctx->settings.ptxcompiler, known ? nvrtc.path : NULL, u->path, sizeof u->path,
                                   u->why, sizeof u->why))
        return;
    if (stat(u->path, &u->id) != 0) memset(&u->id, 0, sizeof u->id); /* the open says it is missing */
    else if (known && memo_recall(ctx, u)) return;
    if (!asyncrt__ptxcompiler_open(u->path, &u->nvrtc, &u->pc, u->why, sizeof u->why)) return;
    if (!hash_loader(u->path, &u->id, hex, u->why, sizeof u->why)) {
        asyncrt__ptxcompiler_close(u->pc);
        u->pc = NULL;
        return;
    }
    if (known) memo_keep(ctx, u, hex);
    snprintf(u->key, sizeof u->key, "compact on, nvPTXCompiler %s sha256 %s", asyncrt__ptxcompiler_version(u->pc),
             hex);
    snprintf(u->why, sizeof u->why, "compact images on: nvPTXCompiler %s (%.600s)",
             asyncrt__ptxcompiler_version(u->pc), u->path);
}

/* The assembler, opened now where the key came from the memo: the file must
 * still be the one the memo named, of the version it named. Under the lock;
 * `why` changes at most once, here, before any reader of it gets here. */
static asyncrt_ptxcompiler *assembler(asyncrt_context *ctx, compact_use *u)
{
    pthread_mutex_lock(&ctx->lock);
    if (u->deferred) {
        u->deferred = false;
        struct stat now;
        if (stat(u->path, &now) != 0 || !same_file(&now, &u->id))
            snprintf(u->why, sizeof u->why, "compact images off: %.600s changed after this process chose it", u->path);
        else if (asyncrt__ptxcompiler_open(u->path, &u->nvrtc, &u->pc, u->why, sizeof u->why) &&
                 strcmp(asyncrt__ptxcompiler_version(u->pc), u->version) != 0) {
            snprintf(u->why, sizeof u->why, "compact images off: %.600s is not the nvPTXCompiler %s it was", u->path,
                     u->version);
            asyncrt__ptxcompiler_close(u->pc);
            u->pc = NULL;
        }
    }
    asyncrt_ptxcompiler *pc = u->pc;
    pthread_mutex_unlock(&ctx->lock);
    return pc;
}

static compact_use *use_of(asyncrt_context *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    if (!ctx->compact.state) {
        compact_use *u = calloc(1, sizeof *u);
        if (u) {
            snprintf(u->key, sizeof u->key, "compact off");
            if (wanted(ctx, u->why, sizeof u->why)) {
                snprintf(u->key, sizeof u->key, "compact on, no nvPTXCompiler");
                choose(ctx, u);
                asyncrt__log(ctx, 1, "%s", u->why);
            }
        }
        ctx->compact.state = u;
        ctx->compact.free = destroy_slot;
    }
    compact_use *u = ctx->compact.state;
    pthread_mutex_unlock(&ctx->lock);
    return u;
}

const char *asyncrt__compact_key(asyncrt_context *ctx)
{
    const compact_use *u = use_of(ctx);
    return u ? u->key : "compact off, out of memory";
}

bool asyncrt__compact_setting(asyncrt_context *ctx, char *why, size_t why_size)
{
    compact_use *u = use_of(ctx);
    if (!u) return snprintf(why, why_size, "compact images off: out of memory"), false;
    pthread_mutex_lock(&ctx->lock); /* assembler() may be writing why */
    snprintf(why, why_size, "%s", u->why);
    bool on = u->pc || u->deferred;
    pthread_mutex_unlock(&ctx->lock);
    return on;
}

/* NVRTC's PTX of prog (malloc'd), or NULL with why. */
static char *nvrtc_ptx(const asyncrt_nvrtc *nv, nvrtcProgram prog, size_t *size, char *why, size_t why_size)
{
    char *ptx = NULL;
    nvrtcResult r = nv->nvrtcGetPTXSize(prog, size);
    if (r == NVRTC_SUCCESS && !(ptx = malloc(*size ? *size : 1))) r = NVRTC_ERROR_OUT_OF_MEMORY;
    if (r == NVRTC_SUCCESS) r = nv->nvrtcGetPTX(prog, ptx);
    if (r == NVRTC_SUCCESS) return ptx;
    snprintf(why, why_size, "NVRTC's image: its PTX could not be read (%s)", nv->nvrtcGetErrorString(r));
    free(ptx);
    return NULL;
}

void asyncrt__job_compact(asyncrt_compile_job *job, const asyncrt_nvrtc *nv, nvrtcProgram prog, asyncrt_program *p,
                          bool ltoir)
{
    if (p->ptx || ltoir) return; /* compact images are CUBINs */
    compact_use *u = use_of(job->ctx);
    asyncrt_ptxcompiler *pc = u ? assembler(job->ctx, u) : NULL;
    p->nvrtc_image_size = p->image_size;
    char why[768];
    if (!pc) {
        p->image_note = strdup(u ? u->why : "compact images off: out of memory");
        asyncrt__log(job->ctx, 2, "%s: %s", job->source_name, p->image_note ? p->image_note : "");
        return;
    }
    size_t ptx_size = 0;
    char *ptx = nvrtc_ptx(nv, prog, &ptx_size, why, sizeof why);
    asyncrt_compact c = {0};
    if (ptx) {
        asyncrt__compact(pc, p->image, p->image_size, ptx, ptx_size, (const char *const *)job->options.items,
                         job->options.count, &c);
        snprintf(why, sizeof why, "%s", c.why);
    }
    free(ptx);
    if (c.image) {
        free(p->image);
        p->image = c.image;
        p->image_size = c.size;
        p->compact = true;
        c.image = NULL;
    }
    p->image_note = strdup(why);
    if (c.assemble_ms > 0)
        asyncrt__log(job->ctx, 1, "%s: %s (prune %.1f ms, nvPTXCompiler %.1f ms, proof %.1f ms)", job->source_name,
                     why, c.prune_ms, c.assemble_ms, c.check_ms);
    else
        asyncrt__log(job->ctx, 1, "%s: %s", job->source_name, why);
    asyncrt__compact_free(&c);
}
