#define _DEFAULT_SOURCE
#include "cache_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_manifest.h"
#include "cache_tiers.h"
#include "key_record.h" /* asyncrt__key_records_named: clear takes them */
#include "safe_io.h"
#include "sha256.h"

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

bool asyncrt__cache_scan_at(int dir_fd, asyncrt_cache_listing *out)
{
    *out = (asyncrt_cache_listing){0};
    /* A descriptor of its own: readdir moves the offset, which dup would share. */
    int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return false;
    }
    size_t cap = 0;
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        struct stat st;
        if (fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue; /* deleted meanwhile */
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

/* An entry and the manifest that leads to it live and die together: one
 * group per manifest (with the entries its sets name), one per entry no
 * manifest names (a store between its two writes, or a leftover). */
typedef struct group {
    struct timespec newest; /* the LRU's recency: a hit touches both files */
    uint64_t bytes;
    size_t first, count;    /* its files: order[first .. first + count) */
} group;

static bool newer(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec != b->tv_sec ? a->tv_sec > b->tv_sec : a->tv_nsec > b->tv_nsec;
}

static int older_first(const void *a, const void *b)
{
    const group *x = a, *y = b;
    return newer(&y->newest, &x->newest) ? -1 : newer(&x->newest, &y->newest) ? 1 : 0;
}

static size_t find_entry(const asyncrt_cache_listing *l, const uint8_t key[32])
{
    char name[64 + 5];
    asyncrt__sha256_hex(key, name);
    strcat(name, ".bin");
    for (size_t i = 0; i < l->count; i++)
        if (l->files[i].kind == ASYNCRT_CACHE_ENTRY && strcmp(l->files[i].name, name) == 0) return i;
    return l->count;
}

/* Groups l's regular entries and manifests; order lists file indexes group
 * by group. False when out of memory. */
static bool make_groups(int dir_fd, const asyncrt_cache_listing *l, group **groups_out, size_t *group_count,
                        size_t **order_out)
{
    size_t *owner = malloc((l->count + 1) * sizeof *owner); /* file -> group, SIZE_MAX: none */
    group *groups = calloc(l->count + 1, sizeof *groups);
    size_t *order = malloc((l->count + 1) * sizeof *order);
    if (!owner || !groups || !order) {
        free(owner), free(groups), free(order);
        return false;
    }
    size_t n = 0;
    for (size_t i = 0; i < l->count; i++) owner[i] = SIZE_MAX;
    for (size_t i = 0; i < l->count; i++) {
        const asyncrt_cache_file *f = &l->files[i];
        if (!f->regular || f->kind != ASYNCRT_CACHE_MANIFEST) continue;
        owner[i] = n++;
        size_t size = 0;
        char why[256];
        unsigned char *data = asyncrt__file_read(dir_fd, f->name, ASYNCRT_FILE_MAX, false, &size, why,
                                                      sizeof why);
        uint8_t keys[ASYNCRT_MANIFEST_MAX_SETS][32];
        size_t k = data ? asyncrt__manifest_result_keys(data, size, keys) : 0;
        for (size_t j = 0; j < k; j++) {
            size_t e = find_entry(l, keys[j]);
            if (e < l->count && l->files[e].regular && owner[e] == SIZE_MAX) owner[e] = owner[i];
        }
        free(data);
    }
    for (size_t i = 0; i < l->count; i++)
        if (l->files[i].regular && l->files[i].kind == ASYNCRT_CACHE_ENTRY && owner[i] == SIZE_MAX) owner[i] = n++;
    size_t at = 0;
    for (size_t g = 0; g < n; g++) {
        groups[g].first = at;
        bool entry = false;
        for (size_t i = 0; i < l->count; i++) {
            if (owner[i] != g) continue;
            order[at++] = i;
            groups[g].count++;
            groups[g].bytes += l->files[i].size;
            if (newer(&l->files[i].mtime, &groups[g].newest)) groups[g].newest = l->files[i].mtime;
            entry |= l->files[i].kind == ASYNCRT_CACHE_ENTRY;
        }
        if (!entry) groups[g].newest = (struct timespec){0}; /* a manifest whose entries are gone goes first */
    }
    free(owner);
    *groups_out = groups;
    *group_count = n;
    *order_out = order;
    return true;
}

static bool contains(const asyncrt_cache_listing *l, const size_t *order, const group *g, const char *name)
{
    for (size_t i = 0; name && i < g->count; i++)
        if (strcmp(l->files[order[g->first + i]].name, name) == 0) return true;
    return false;
}

asyncrt_cache_eviction asyncrt__cache_evict_at(int dir_fd, uint64_t max_bytes, const char *keep)
{
    asyncrt_cache_eviction r = {0};
    asyncrt_cache_listing l;
    if (!asyncrt__cache_scan_at(dir_fd, &l)) return r;
    for (size_t i = 0; i < l.count; i++)
        if (l.files[i].kind == ASYNCRT_CACHE_TEMP && l.files[i].regular && stale_temp(&l.files[i]) &&
            unlinkat(dir_fd, l.files[i].name, 0) == 0)
            r.temps++;
    uint64_t total = l.entry_bytes + l.manifest_bytes;
    group *groups = NULL;
    size_t count = 0, *order = NULL;
    if (total > max_bytes && make_groups(dir_fd, &l, &groups, &count, &order) && count) {
        qsort(groups, count, sizeof *groups, older_first);
        /* The group just stored, else the newest, is never evicted: a cap it
         * alone exceeds could only ever empty the cache, so it is refused. */
        size_t kept = count - 1;
        for (size_t g = 0; keep && g < count; g++)
            if (contains(&l, order, &groups[g], keep)) kept = g;
        if (groups[kept].bytes > max_bytes) {
            r.refused_below = groups[kept].bytes;
        } else {
            for (size_t g = 0; g < count && total > max_bytes; g++) {
                if (g == kept) continue;
                for (size_t i = 0; i < groups[g].count; i++) {
                    const asyncrt_cache_file *f = &l.files[order[groups[g].first + i]];
                    /* Another process may have deleted it first: it is gone either way. */
                    if (unlinkat(dir_fd, f->name, 0) == 0) {
                        r.evicted++;
                        r.manifests += f->kind == ASYNCRT_CACHE_MANIFEST;
                    }
                    total -= f->size;
                }
            }
        }
    }
    free(groups);
    free(order);
    asyncrt__cache_listing_free(&l);
    return r;
}

size_t asyncrt__cache_remove_all_at(int dir_fd)
{
    asyncrt_cache_listing l;
    if (!asyncrt__cache_scan_at(dir_fd, &l)) return 0;
    size_t removed = 0;
    for (size_t i = 0; i < l.count; i++)
        if ((l.files[i].kind != ASYNCRT_CACHE_OTHER || asyncrt__key_records_named(l.files[i].name)) &&
            unlinkat(dir_fd, l.files[i].name, 0) == 0)
            removed++;
    asyncrt__cache_listing_free(&l);
    return removed;
}

/* disk.c's store: here, beside the eviction it runs. Trims the directory to
 * the cap after a store. A cap smaller than the entry
 * just stored (with its manifest) could only ever empty the cache: it is
 * refused with a warning, and the default applies from then on. Returns how
 * many manifests it evicted (their key records are dead: key_record.h). */
size_t asyncrt__cache_trim(asyncrt_cache *c, int dir_fd, const char *dir, const char *stored)
{
    uint64_t max = atomic_load_explicit(&c->max_bytes, memory_order_relaxed);
    asyncrt_cache_eviction r = asyncrt__cache_evict_at(dir_fd, max, stored);
    if (r.refused_below && max != ASYNCRT_CACHE_DEFAULT_MAX_BYTES &&
        atomic_compare_exchange_strong_explicit(&c->max_bytes, &max, ASYNCRT_CACHE_DEFAULT_MAX_BYTES,
                                                memory_order_relaxed, memory_order_relaxed)) {
        asyncrt__diag_log(c->diag, 1, "warning: the cache cap ASYNCRT_CACHE_MAX_BYTES (%llu bytes) is smaller than one "
                            "entry with its manifest (%llu bytes) in %s: refused, using %llu",
                    (unsigned long long)max, (unsigned long long)r.refused_below, dir,
                    (unsigned long long)ASYNCRT_CACHE_DEFAULT_MAX_BYTES);
        r = asyncrt__cache_evict_at(dir_fd, ASYNCRT_CACHE_DEFAULT_MAX_BYTES, stored);
    }
    asyncrt__cache_count(c, C_EVICTIONS, r.evicted);
    if (r.evicted || r.temps)
        asyncrt__diag_log(c->diag, 2, "cache: evicted %zu files to stay under %llu bytes, removed %zu stale temporaries",
                    r.evicted, (unsigned long long)atomic_load_explicit(&c->max_bytes, memory_order_relaxed), r.temps);
    return r.manifests;
}
