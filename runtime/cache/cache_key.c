#define _GNU_SOURCE /* dladdr */
#include "cache_key.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void asyncrt__key_str(asyncrt_sha256 *h, const char *s)
{
    uint64_t n = strlen(s);
    asyncrt__sha256_update(h, &n, sizeof n);
    asyncrt__sha256_update(h, s, n);
}

/* What a package or an image preserves, so that machines installed alike
 * share keys (the remote cache, export/import): a file's path, size and
 * mtime; a directory's path alone (its mtime, inode and device differ from
 * machine to machine; the headers read under it are in the manifest, by
 * content, and a toolkit reinstalled in place brings another NVRTC file). */
static void hash_stat(asyncrt_sha256 *h, const char *path)
{
    struct stat st;
    int64_t id[3] = {0};
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
        id[0] = (int64_t)st.st_size, id[1] = st.st_mtim.tv_sec, id[2] = st.st_mtim.tv_nsec;
    asyncrt__key_str(h, path);
    asyncrt__sha256_update(h, id, sizeof id);
}

void asyncrt__key_library_identity(asyncrt_sha256 *h, const void *symbol)
{
    Dl_info info;
    /* Statically linked (no file to name): the version alone is all there is. */
    hash_stat(h, dladdr(symbol, &info) && info.dli_fname ? info.dli_fname : "(static nvrtc)");
}

void asyncrt__key_dir_identity(asyncrt_sha256 *h, const char *dir) { hash_stat(h, dir); }

void asyncrt__key_identity_text(const char *path, char *out, size_t size)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
        snprintf(out, size, "%s (%lld bytes, mtime %lld.%09ld)", path, (long long)st.st_size,
                 (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
    else
        snprintf(out, size, "%s", path);
}
