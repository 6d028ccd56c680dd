/* compact_use.h: the context's nvPTXCompiler, its part of the key, the step. */
#define _DEFAULT_SOURCE /* st_mtim */
#include "compact_use.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
        snprintf(why, why_size,
                 "compact images off: ASYNCRT_COMPACT_IMAGES is %s, and off is the default until the GPU parity "
                 "run holds them to NVRTC's images (1 turns them on)",
                 v && *v ? "auto" : "unset");
    } else {
        snprintf(why, why_size, "compact images off: ASYNCRT_COMPACT_IMAGES is \"%.40s\"; it must be 0, 1 or auto", v);
        asyncrt__log(ctx, 1, "%s", why);
    }
    return false;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
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

/* Opens and hashes the loader of NVRTC's exact version. */
static void choose(asyncrt_context *ctx, compact_use *u)
{
    asyncrt_nvrtc_identity nvrtc;
    bool known = asyncrt__nvrtc_identity_get(&nvrtc);
    char path[4096], hex[65];
    struct stat st;
    if (!asyncrt__ptxcompiler_path(ctx->settings.ptxcompiler, known ? nvrtc.path : NULL, path, sizeof path, u->why,
                                   sizeof u->why))
        return;
    asyncrt_lib_version none = {-1, -1, -1};
    if (stat(path, &st) != 0) memset(&st, 0, sizeof st); /* the open says it is missing */
    if (!asyncrt__ptxcompiler_open(path, known ? &nvrtc.version : &none, &u->pc, u->why, sizeof u->why)) return;
    if (!hash_loader(path, &st, hex, u->why, sizeof u->why)) {
        asyncrt__ptxcompiler_close(u->pc);
        u->pc = NULL;
        return;
    }
    snprintf(u->key, sizeof u->key, "compact on, nvPTXCompiler %s sha256 %s", asyncrt__ptxcompiler_version(u->pc),
             hex);
    snprintf(u->why, sizeof u->why, "compact images on: nvPTXCompiler %s (%.600s)",
             asyncrt__ptxcompiler_version(u->pc), path);
}

static const compact_use *use_of(asyncrt_context *ctx)
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
    const compact_use *u = ctx->compact.state;
    pthread_mutex_unlock(&ctx->lock);
    return u;
}

const char *asyncrt__compact_key(asyncrt_context *ctx)
{
    const compact_use *u = use_of(ctx);
    return u ? u->key : "compact off, out of memory";
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
    const compact_use *u = use_of(job->ctx);
    p->nvrtc_image_size = p->image_size;
    char why[768];
    if (!u || !u->pc) {
        p->image_note = strdup(u ? u->why : "compact images off: out of memory");
        asyncrt__log(job->ctx, 2, "%s: %s", job->source_name, p->image_note ? p->image_note : "");
        return;
    }
    size_t ptx_size = 0;
    char *ptx = nvrtc_ptx(nv, prog, &ptx_size, why, sizeof why);
    asyncrt_compact c = {0};
    if (ptx) {
        asyncrt__compact(u->pc, p->image, p->image_size, ptx, ptx_size, (const char *const *)job->options.items,
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
