/* Images loaded once for every device: one cuLibraryLoadData per CUBIN,
 * shared by a context and its peers (asyncrt_context_create_peer), each
 * device taking its module and kernels from it. The set lives on the root
 * context (a slot, freed when the last peer goes); its entries are counted
 * by the modules that use them. */
#include "library.h"

#include <stdlib.h>

#include "sha256.h"

struct asyncrt_library {
    uint8_t digest[32]; /* of the image: the same bytes are one library */
    size_t size;
    CUlibrary handle;
    size_t users;       /* modules, on any device */
    asyncrt_library *next;
};

typedef struct library_set {
    const asyncrt_driver *drv;
    pthread_mutex_t lock; /* guards list and users; held across a load, so one image is loaded once */
    asyncrt_library *list;
} library_set;

static void set_free(void *state)
{
    library_set *set = state;
    for (asyncrt_library *l = set->list, *next; l; l = next) {
        next = l->next;
        set->drv->cuLibraryUnload(l->handle); /* a module left undestroyed: its context is gone too */
        free(l);
    }
    pthread_mutex_destroy(&set->lock);
    free(set);
}

static library_set *set_of(asyncrt_context *ctx)
{
    asyncrt_context *root = ctx->root;
    pthread_mutex_lock(&root->lock);
    if (!root->libraries.state) {
        library_set *set = calloc(1, sizeof *set);
        if (set && pthread_mutex_init(&set->lock, NULL) == 0) {
            set->drv = ctx->drv;
            root->libraries.state = set;
            root->libraries.free = set_free;
        } else {
            free(set);
        }
    }
    library_set *set = root->libraries.state;
    pthread_mutex_unlock(&root->lock);
    return set;
}

static bool usable(const asyncrt_driver *drv)
{
    return drv->cuLibraryLoadData && drv->cuLibraryUnload && drv->cuLibraryGetKernel && drv->cuLibraryGetModule &&
           drv->cuKernelGetFunction;
}

asyncrt_status asyncrt__library_acquire(asyncrt_context *ctx, const asyncrt_program *p, asyncrt_library **out,
                                        bool *loaded)
{
    *out = NULL;
    *loaded = false;
    if (p->ptx || !usable(ctx->drv)) return ASYNCRT_SUCCESS;
    library_set *set = set_of(ctx);
    if (!set) return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory loading a module");
    uint8_t digest[32];
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    asyncrt__sha256_update(&h, p->image, p->image_size);
    asyncrt__sha256_final(&h, digest);
    asyncrt_status s = ASYNCRT_SUCCESS;
    pthread_mutex_lock(&set->lock);
    asyncrt_library *l = set->list;
    while (l && (l->size != p->image_size || memcmp(l->digest, digest, sizeof digest) != 0)) l = l->next;
    if (!l) {
        l = calloc(1, sizeof *l);
        CUresult r = CUDA_SUCCESS;
        if (!l) {
            s = asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory loading a module");
        } else if ((r = ctx->drv->cuLibraryLoadData(&l->handle, p->image, NULL, NULL, 0, NULL, NULL, 0)) !=
                   CUDA_SUCCESS) {
            s = asyncrt__fail_cu(ctx, ASYNCRT_ERROR_MODULE_LOAD, r, "cuLibraryLoadData", "CUBIN image for %s (%zu bytes)",
                                 p->arch, p->image_size);
            free(l);
            l = NULL;
        } else {
            memcpy(l->digest, digest, sizeof digest);
            l->size = p->image_size;
            l->next = set->list;
            set->list = l;
            *loaded = true;
        }
    }
    if (l) l->users++;
    pthread_mutex_unlock(&set->lock);
    *out = l;
    return s;
}

void asyncrt__library_release(asyncrt_context *ctx, asyncrt_library *lib)
{
    if (!lib) return;
    library_set *set = ctx->root->libraries.state; /* there: lib came from it */
    pthread_mutex_lock(&set->lock);
    bool last = --lib->users == 0;
    if (last) {
        asyncrt_library **at = &set->list;
        while (*at != lib) at = &(*at)->next;
        *at = lib->next;
    }
    pthread_mutex_unlock(&set->lock);
    if (!last) return;
    ctx->drv->cuLibraryUnload(lib->handle);
    free(lib);
}

CUlibrary asyncrt__library_handle(const asyncrt_library *lib) { return lib->handle; }
