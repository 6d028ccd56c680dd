#define _GNU_SOURCE /* dladdr */
#include "cache_key.h"

#include <dlfcn.h>
#include <string.h>
#include <sys/stat.h>

void asyncrt__key_str(asyncrt_sha256 *h, const char *s)
{
    uint64_t n = strlen(s);
    asyncrt__sha256_update(h, &n, sizeof n);
    asyncrt__sha256_update(h, s, n);
}

static void hash_stat(asyncrt_sha256 *h, const char *path)
{
    struct stat st;
    int64_t id[7] = {0};
    if (stat(path, &st) == 0) {
        id[0] = (int64_t)st.st_dev, id[1] = (int64_t)st.st_ino, id[2] = (int64_t)st.st_size;
        id[3] = st.st_mtim.tv_sec, id[4] = st.st_mtim.tv_nsec, id[5] = st.st_ctim.tv_sec;
        id[6] = st.st_ctim.tv_nsec;
    }
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
