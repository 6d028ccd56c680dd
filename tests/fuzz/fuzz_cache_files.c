/* libFuzzer target: the whole file-level cache read path. Each input becomes
 * a manifest and an entry file in a private cache directory, then
 * the cache's lookup runs on a fresh context as a compile would (the
 * cache's lookup with the program's reader, asyncrt__program_accept): safe
 * open, fstat checks, manifest decode, dependency validation (stat,
 * re-hash), the entry's seal and its payload, discarding what is refused. The trace parser gets the same
 * bytes as JSON.
 *
 * Input: a mode byte, a 16-bit little-endian manifest length, the manifest
 * bytes, then the entry bytes. Mode bit 0: the manifest bytes are a payload
 * sealed here under the lookup's key1 (so the payload parser is reached);
 * bit 1: likewise for the entry, under the first set's result key; bit 2:
 * the entry path is made a FIFO instead (must be refused, never block). */
#define _DEFAULT_SOURCE /* mkdtemp, mkfifo */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "context.h"
#include "codec.h"
#include "program.h"
#include "cache_manifest.h"
#include "cache_store.h"
#include "trace.h"
#include "sha256.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static char g_dir[64];
static const uint8_t k_key1[32] = {0x4b, 0x31}; /* any fixed key1 */

static void write_bytes(const char *path, const void *bytes, size_t n)
{
    unlink(path);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n && fwrite(bytes, 1, n, f) != n) abort();
    if (fclose(f) != 0) abort();
}

/* Seals payload under key like the library's writers (magic, format). */
/* The last input's files, FIFOs included. */
static void remove_all(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) asyncrt__cache_remove_all_at(fd);
    if (fd >= 0) close(fd);
}

static unsigned char *seal(const char magic[8], uint32_t format, const uint8_t key[32], const unsigned char *payload,
                           size_t n, size_t *size)
{
    asyncrt_writer w = {0};
    asyncrt__seal_begin(&w);
    asyncrt__put(&w, payload, n);
    return asyncrt__seal_end(&w, magic, format, key, NULL, size);
}


static void remove_dir(void)
{
    remove_all(g_dir);
    rmdir(g_dir);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof g_dir, "/tmp/asyncrt-fuzz-files-XXXXXX");
        if (!mkdtemp(g_dir)) abort();
        atexit(remove_dir);
    }
    /* The trace parser on the raw bytes. */
    asyncrt_trace_headers headers;
    char why[256];
    if (asyncrt__trace_parse((const char *)data, size, false, &headers, why, sizeof why)) {
        for (size_t i = 0; i < headers.count; i++)
            if (!headers.paths[i] || strcmp(headers.paths[i], ASYNCRT_NVRTC_BUILTIN_HEADER) == 0) abort();
        asyncrt__trace_headers_free(&headers);
    } else if (!why[0]) {
        abort();
    }
    if (size < 3) return 0;
    unsigned mode = data[0];
    size_t mf_len = (size_t)data[1] | (size_t)data[2] << 8;
    data += 3, size -= 3;
    if (mf_len > size) mf_len = size;
    const unsigned char *mf = data, *entry = data + mf_len;
    size_t entry_len = size - mf_len;

    remove_all(g_dir); /* the last input's files, FIFOs included */
    char hex[65], path[256];
    asyncrt__sha256_hex(k_key1, hex);
    snprintf(path, sizeof path, "%s/%s.mf", g_dir, hex);
    size_t sealed_size = 0;
    unsigned char *sealed =
        (mode & 1) ? seal(ASYNCRT_MANIFEST_MAGIC, ASYNCRT_MANIFEST_FORMAT, k_key1, mf, mf_len, &sealed_size) : NULL;
    write_bytes(path, sealed ? sealed : mf, sealed ? sealed_size : mf_len);

    /* The entry goes where the manifest's first set points, if it has one. */
    uint8_t result[32] = {0};
    asyncrt_manifest m;
    if (asyncrt__manifest_decode(sealed ? sealed : mf, sealed ? sealed_size : mf_len, k_key1, NULL, &m, why,
                                sizeof why)) {
        memcpy(result, m.sets[0].result_key, 32);
        asyncrt__manifest_free(&m);
    }
    free(sealed);
    asyncrt__sha256_hex(result, hex);
    snprintf(path, sizeof path, "%s/%s.bin", g_dir, hex);
    if (mode & 4) {
        unlink(path);
        if (mkfifo(path, 0600) != 0) abort();
    } else {
        sealed = (mode & 2) ? seal(ASYNCRT_ENTRY_MAGIC, ASYNCRT_ENTRY_FORMAT, result, entry, entry_len, &sealed_size)
                            : NULL;
        write_bytes(path, sealed ? sealed : entry, sealed ? sealed_size : entry_len);
        free(sealed);
    }

    asyncrt_context *ctx = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) abort();
    if (asyncrt_context_set_cache_dir(ctx, g_dir) != ASYNCRT_SUCCESS) abort();
    asyncrt_program *p = NULL;
    asyncrt__cache_lookup(ctx->cache, k_key1, ASYNCRT_TIERS_LOCAL, NULL, asyncrt__program_accept, &p);
    asyncrt_cache_stats stats = ASYNCRT_CACHE_STATS_INIT;
    asyncrt_context_cache_stats(ctx, &stats);
    if (p) {
        size_t n = 0;
        const unsigned char *image = asyncrt_program_image(p, &n);
        if (!image || n == 0 || (mode & 4) || stats.disk_hits != 1 || memcmp(p->key, result, 32) != 0) abort();
        unsigned char sum = 0;
        for (size_t i = 0; i < n; i++) sum ^= image[i];
        *(volatile unsigned char *)&sum = sum;
        /* A second lookup in the same context is served from memory (unless a
         * dependency, e.g. a /proc file, changed meanwhile), the same image. */
        asyncrt_program *again = NULL;
        asyncrt__cache_lookup(ctx->cache, k_key1, ASYNCRT_TIERS_LOCAL, NULL, asyncrt__program_accept, &again);
        size_t n2 = 0;
        if (again && (asyncrt_program_origin_of(again) != ASYNCRT_ORIGIN_MEMORY_CACHE ||
                      !asyncrt_program_image(again, &n2) || n2 != n ||
                      memcmp(asyncrt_program_image(again, &n2), image, n) != 0))
            abort();
        asyncrt_program_destroy(again);
        asyncrt_program_destroy(p);
    } else if (stats.misses != 1) {
        abort();
    }
    asyncrt_context_destroy(ctx);
    return 0;
}
