#define _DEFAULT_SOURCE
#include "cache_store.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

asyncrt_cache_file_kind asyncrt__cache_kind_of(const char *name)
{
    if (strncmp(name, ".tmp.", 5) == 0) return ASYNCRT_CACHE_TEMP;
    if (strlen(name) == 64 + 4 && ends_with(name, ".bin")) return ASYNCRT_CACHE_ENTRY;
    if (strlen(name) == 64 + 3 && ends_with(name, ".mf")) return ASYNCRT_CACHE_MANIFEST;
    return ASYNCRT_CACHE_OTHER;
}

void asyncrt__cache_listing_free(asyncrt_cache_listing *l)
{
    for (size_t i = 0; i < l->count; i++) free(l->files[i].name);
    free(l->files);
    *l = (asyncrt_cache_listing){0};
}

bool asyncrt__cache_scan(const char *dir, asyncrt_cache_listing *out)
{
    *out = (asyncrt_cache_listing){0};
    DIR *d = opendir(dir);
    if (!d) return false;
    size_t cap = 0;
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) != 0) continue; /* deleted meanwhile */
        if (out->count == cap) {
            cap = cap ? 2 * cap : 64;
            asyncrt_cache_file *grown = realloc(out->files, cap * sizeof *grown);
            if (!grown) {
                ok = false;
                break;
            }
            out->files = grown;
        }
        asyncrt_cache_file *f = &out->files[out->count];
        if (!(f->name = strdup(e->d_name))) {
            ok = false;
            break;
        }
        out->count++;
        f->kind = asyncrt__cache_kind_of(e->d_name);
        f->regular = S_ISREG(st.st_mode);
        f->size = (uint64_t)st.st_size;
        f->mtime = st.st_mtim;
        f->atime = st.st_atim;
        if (!f->regular) continue;
        switch (f->kind) {
        case ASYNCRT_CACHE_ENTRY: out->entries++, out->entry_bytes += f->size; break;
        case ASYNCRT_CACHE_MANIFEST: out->manifests++, out->manifest_bytes += f->size; break;
        case ASYNCRT_CACHE_TEMP: out->temps++, out->temp_bytes += f->size; break;
        default: break;
        }
    }
    closedir(d);
    if (!ok) asyncrt__cache_listing_free(out);
    return ok;
}

/* .tmp.<host>.<pid>.<random> of a dead writer on this host, or old. */
static bool stale_temp(const asyncrt_cache_file *f)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (now.tv_sec - f->mtime.tv_sec > ASYNCRT_CACHE_TEMP_MAX_AGE_S) return true;
    char host[64] = "host";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == '/' || *c == '.') *c = '_';
    const char *rest = f->name + 5;
    size_t n = strlen(host);
    if (strncmp(rest, host, n) != 0 || rest[n] != '.') return false;
    char *end;
    long pid = strtol(rest + n + 1, &end, 10);
    return *end == '.' && pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static int older_first(const void *a, const void *b)
{
    const asyncrt_cache_file *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

static bool remove_file(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return unlink(path) == 0;
}

size_t asyncrt__cache_evict(const char *dir, uint64_t max_bytes, const char *keep, size_t *temps_removed)
{
    asyncrt_cache_listing l;
    if (temps_removed) *temps_removed = 0;
    if (!asyncrt__cache_scan(dir, &l)) return 0;
    for (size_t i = 0; i < l.count; i++)
        if (l.files[i].kind == ASYNCRT_CACHE_TEMP && l.files[i].regular && stale_temp(&l.files[i]) &&
            remove_file(dir, l.files[i].name) && temps_removed)
            ++*temps_removed;
    uint64_t total = l.entry_bytes + l.manifest_bytes;
    size_t evicted = 0;
    if (total > max_bytes) {
        qsort(l.files, l.count, sizeof *l.files, older_first);
        for (size_t i = 0; i < l.count && total > max_bytes; i++) {
            asyncrt_cache_file *f = &l.files[i];
            if (!f->regular || (f->kind != ASYNCRT_CACHE_ENTRY && f->kind != ASYNCRT_CACHE_MANIFEST)) continue;
            if (keep && strcmp(f->name, keep) == 0) continue;
            /* Another process may have deleted it first: it is gone either way. */
            if (remove_file(dir, f->name)) evicted++;
            total -= f->size;
        }
    }
    asyncrt__cache_listing_free(&l);
    return evicted;
}

size_t asyncrt__cache_remove_all(const char *dir)
{
    asyncrt_cache_listing l;
    if (!asyncrt__cache_scan(dir, &l)) return 0;
    size_t removed = 0;
    for (size_t i = 0; i < l.count; i++)
        if (l.files[i].kind != ASYNCRT_CACHE_OTHER && remove_file(dir, l.files[i].name)) removed++;
    asyncrt__cache_listing_free(&l);
    return removed;
}
