#define _GNU_SOURCE /* memmem */
#include "cache_manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "sha256.h"

#define MANIFEST_MAGIC ASYNCRT_MANIFEST_MAGIC
#define MANIFEST_FORMAT ASYNCRT_MANIFEST_FORMAT /* 2: the digest covers the header */

static void take_stat(asyncrt_dep *d, const struct stat *st)
{
    d->size = (uint64_t)st->st_size;
    d->ino = (uint64_t)st->st_ino;
    d->dev = (uint64_t)st->st_dev;
    d->mtime_s = st->st_mtim.tv_sec;
    d->mtime_ns = st->st_mtim.tv_nsec;
    d->ctime_s = st->st_ctim.tv_sec;
    d->ctime_ns = st->st_ctim.tv_nsec;
}

#define PROBE "__has_include"
#define PROBE_LEN (sizeof PROBE - 1)

/* SHA-256 of a regular file and the fstat of the descriptor hashed; when
 * probe is not NULL, whether the text holds "__has_include". */
static bool hash_file(const char *path, uint8_t sha[32], struct stat *st, bool *probe)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = fstat(fd, st) == 0 && S_ISREG(st->st_mode);
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    unsigned char buf[PROBE_LEN + 65536]; /* the last chunk's tail, then the next chunk */
    size_t kept = 0;
    while (ok) {
        ssize_t n = read(fd, buf + kept, sizeof buf - PROBE_LEN);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) ok = false;
        if (n <= 0) break;
        asyncrt__sha256_update(&h, buf + kept, (size_t)n);
        size_t have = kept + (size_t)n;
        if (probe && memmem(buf, have, PROBE, PROBE_LEN)) *probe = true;
        kept = have < PROBE_LEN - 1 ? have : PROBE_LEN - 1;
        memmove(buf, buf + have - kept, kept);
    }
    close(fd);
    asyncrt__sha256_final(&h, sha);
    return ok;
}

static bool at_or_after(int64_t s, int64_t ns, const struct timespec *t)
{
    return s > t->tv_sec || (s == t->tv_sec && ns >= t->tv_nsec);
}

static void result_key(asyncrt_dep_set *set, const uint8_t key1[32])
{
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    asyncrt__sha256_update(&h, "asyncrt result", 14);
    asyncrt__sha256_update(&h, key1, 32);
    uint64_t n = strlen(set->cwd);
    asyncrt__sha256_update(&h, &n, sizeof n);
    asyncrt__sha256_update(&h, set->cwd, n);
    for (size_t i = 0; i < set->count; i++) {
        n = strlen(set->deps[i].path);
        asyncrt__sha256_update(&h, &n, sizeof n);
        asyncrt__sha256_update(&h, set->deps[i].path, n);
        asyncrt__sha256_update(&h, set->deps[i].sha, 32);
    }
    asyncrt__sha256_final(&h, set->result_key);
}

/* Whether a directory or symbolic link on the way to path (those after the
 * first `skip` characters, already checked) was put in place at or after
 * start: a folder or link switched by rename gets a new ctime then, while a
 * folder that was only written into also gets a new mtime (not a switch).
 * NVRTC may have read the file through what was there before. */
static bool way_replaced(const char *path, size_t skip, const struct timespec *start, char *why, size_t why_size)
{
    char prefix[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof prefix) return false;
    memcpy(prefix, path, n + 1);
    for (size_t i = skip + 1; i < n; i++) {
        if (prefix[i] != '/') continue;
        prefix[i] = '\0';
        struct stat st;
        bool moved = lstat(prefix, &st) == 0 && at_or_after(st.st_ctim.tv_sec, st.st_ctim.tv_nsec, start) &&
                     (S_ISLNK(st.st_mode) || (S_ISDIR(st.st_mode) && !at_or_after(st.st_mtim.tv_sec,
                                                                                  st.st_mtim.tv_nsec, start)));
        if (moved) {
            snprintf(why, why_size, "%s was replaced while %s was being compiled", prefix, path);
            return true;
        }
        prefix[i] = '/';
    }
    return false;
}

/* How many leading characters of a and b name the same directory. */
static size_t same_dir(const char *a, const char *b)
{
    size_t n = 0;
    for (size_t i = 0; a[i] && a[i] == b[i]; i++)
        if (a[i] == '/') n = i;
    return n;
}

/* The file at path is still the one hashed (device, inode, size, ctime). */
static bool still_same(const char *path, const struct stat *hashed)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_dev == hashed->st_dev && st.st_ino == hashed->st_ino &&
           st.st_size == hashed->st_size && st.st_ctim.tv_sec == hashed->st_ctim.tv_sec &&
           st.st_ctim.tv_nsec == hashed->st_ctim.tv_nsec;
}

/* Under dir/ (the toolkit's headers, whose own probes change only with the toolkit). */
static bool inside(const char *path, const char *dir)
{
    size_t n = dir ? strlen(dir) : 0;
    return n && strncmp(path, dir, n) == 0 && path[n] == '/';
}

bool asyncrt__dep_set_record(const char *const *paths, size_t path_count, const char *const *memory_names,
                            size_t memory_count, const char *toolkit_dir, const struct timespec *start,
                            const uint8_t key1[32], asyncrt_dep_set *out, char *why, size_t why_size)
{
    *out = (asyncrt_dep_set){0};
    out->deps = calloc(path_count + 1, sizeof *out->deps);
    out->cwd = strdup("");
    bool ok = out->deps && out->cwd;
    if (!ok) snprintf(why, why_size, "out of memory");
    bool relative = false;
    const char *checked = NULL; /* the last path whose way was checked */
    for (size_t i = 0; ok && i < path_count; i++) {
        const char *path = paths[i];
        asyncrt_dep *d = &out->deps[out->count];
        struct stat st;
        bool probe = false;
        int linked = lstat(path, &st);
        if (linked != 0 && errno == ENOENT) {
            bool in_memory = false;
            for (size_t m = 0; m < memory_count; m++) in_memory |= strcmp(memory_names[m], path) == 0;
            if (in_memory) continue;
            snprintf(why, why_size, "%s was read by NVRTC but is gone", path);
            ok = false;
        } else if (linked == 0 && S_ISLNK(st.st_mode) && at_or_after(st.st_ctim.tv_sec, st.st_ctim.tv_nsec, start)) {
            /* the header itself is a link, switched (ln -sfn) during the compile */
            snprintf(why, why_size, "%s (a symbolic link) was replaced while it was being compiled", path);
            ok = false;
        } else if (!hash_file(path, d->sha, &st, inside(path, toolkit_dir) ? NULL : &probe)) {
            snprintf(why, why_size, "cannot hash %s (not a readable regular file)", path);
            ok = false;
        } else if (probe) {
            snprintf(why, why_size, "%s uses __has_include, which the trace cannot see", path);
            ok = false;
        } else if (at_or_after(st.st_mtim.tv_sec, st.st_mtim.tv_nsec, start) ||
                   at_or_after(st.st_ctim.tv_sec, st.st_ctim.tv_nsec, start)) {
            snprintf(why, why_size, "%s changed while it was being compiled", path);
            ok = false;
        } else if (!still_same(path, &st)) {
            snprintf(why, why_size, "%s was replaced while it was being recorded", path);
            ok = false;
        } else if (way_replaced(path, checked ? same_dir(path, checked) : 0, start, why, why_size)) {
            ok = false;
        } else if (!(d->path = strdup(path))) {
            snprintf(why, why_size, "out of memory");
            ok = false;
        } else {
            take_stat(d, &st);
            out->count++;
            checked = path;
            relative |= path[0] != '/';
        }
    }
    if (ok && relative) {
        char cwd[PATH_MAX];
        free(out->cwd);
        out->cwd = getcwd(cwd, sizeof cwd) ? strdup(cwd) : NULL;
        if (!out->cwd) {
            snprintf(why, why_size, "cannot read the working directory, which relative headers depend on");
            ok = false;
        }
    }
    if (!ok) {
        asyncrt__dep_set_free(out);
        return false;
    }
    result_key(out, key1);
    return true;
}

bool asyncrt__dep_set_valid(const asyncrt_dep_set *set)
{
    if (set->cwd[0]) {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd) || strcmp(cwd, set->cwd) != 0) return false;
    }
    for (size_t i = 0; i < set->count; i++) {
        const asyncrt_dep *d = &set->deps[i];
        struct stat st;
        if (stat(d->path, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != d->size) return false;
        asyncrt_dep now;
        take_stat(&now, &st);
        if (now.ino == d->ino && now.dev == d->dev && now.mtime_s == d->mtime_s && now.mtime_ns == d->mtime_ns &&
            now.ctime_s == d->ctime_s && now.ctime_ns == d->ctime_ns)
            continue;
        uint8_t sha[32];
        if (!hash_file(d->path, sha, &st, NULL) || memcmp(sha, d->sha, 32) != 0) return false;
    }
    return true;
}

void asyncrt__dep_set_free(asyncrt_dep_set *set)
{
    for (size_t i = 0; set->deps && i < set->count; i++) free(set->deps[i].path);
    free(set->deps);
    free(set->cwd);
    *set = (asyncrt_dep_set){0};
}

bool asyncrt__dep_set_copy(asyncrt_dep_set *dst, const asyncrt_dep_set *src)
{
    *dst = *src;
    dst->count = 0;
    dst->deps = calloc(src->count + 1, sizeof *dst->deps);
    dst->cwd = strdup(src->cwd);
    bool ok = dst->deps && dst->cwd;
    for (size_t i = 0; ok && i < src->count; i++, dst->count++) {
        dst->deps[i] = src->deps[i];
        ok = (dst->deps[i].path = strdup(src->deps[i].path)) != NULL;
    }
    if (!ok) asyncrt__dep_set_free(dst);
    return ok;
}

void asyncrt__manifest_free(asyncrt_manifest *m)
{
    for (size_t i = 0; i < m->count; i++) asyncrt__dep_set_free(&m->sets[i]);
    free(m->sets);
    *m = (asyncrt_manifest){0};
}

unsigned char *asyncrt__manifest_encode(const asyncrt_manifest *m, const uint8_t key1[32],
                                       const uint8_t *mac_key, size_t *size)
{
    asyncrt_writer w = {0};
    asyncrt__seal_begin(&w);
    asyncrt__put_u64(&w, m->count);
    for (size_t s = 0; s < m->count; s++) {
        const asyncrt_dep_set *set = &m->sets[s];
        asyncrt__put(&w, set->result_key, 32);
        asyncrt__put_str(&w, set->cwd);
        asyncrt__put_u64(&w, set->count);
        for (size_t i = 0; i < set->count; i++) {
            const asyncrt_dep *d = &set->deps[i];
            asyncrt__put_str(&w, d->path);
            const uint64_t fields[] = {d->size, d->ino, d->dev, (uint64_t)d->mtime_s, (uint64_t)d->mtime_ns,
                                       (uint64_t)d->ctime_s, (uint64_t)d->ctime_ns};
            asyncrt__put(&w, fields, sizeof fields);
            asyncrt__put(&w, d->sha, 32);
        }
    }
    return asyncrt__seal_end(&w, MANIFEST_MAGIC, MANIFEST_FORMAT, key1, mac_key, size);
}

/* Smallest encoded dep: empty path length + 7 fields + hash. */
#define DEP_MIN_BYTES (8 + 7 * 8 + 32)

bool asyncrt__manifest_decode(const void *data, size_t size, const uint8_t key1[32], const uint8_t *mac_key,
                             asyncrt_manifest *out, char *why, size_t why_size)
{
    *out = (asyncrt_manifest){0};
    const unsigned char *payload;
    size_t payload_size;
    if (!asyncrt__seal_open("manifest", data, size, MANIFEST_MAGIC, MANIFEST_FORMAT, key1, mac_key, &payload,
                           &payload_size, NULL, why, why_size))
        return false;
    asyncrt_reader r = {payload, payload_size, false};
    uint64_t sets = asyncrt__take_u64(&r);
    if (sets == 0 || sets > ASYNCRT_MANIFEST_MAX_SETS) r.bad = true;
    if (!r.bad && !(out->sets = calloc(sets, sizeof *out->sets))) r.bad = true;
    for (uint64_t s = 0; !r.bad && s < sets; s++) {
        asyncrt_dep_set *set = &out->sets[out->count++]; /* counted first: freed even half-read */
        const void *key = asyncrt__take(&r, 32);
        if (key) memcpy(set->result_key, key, 32);
        set->cwd = asyncrt__take_str(&r);
        uint64_t deps = asyncrt__take_u64(&r);
        if (!set->cwd || deps > r.left / DEP_MIN_BYTES || !(set->deps = calloc(deps + 1, sizeof *set->deps))) {
            r.bad = true;
            break;
        }
        for (uint64_t i = 0; !r.bad && i < deps; i++) {
            asyncrt_dep *d = &set->deps[i];
            d->path = asyncrt__take_str(&r);
            set->count++;
            uint64_t f[7];
            const void *fields = asyncrt__take(&r, sizeof f);
            const void *sha = asyncrt__take(&r, 32);
            if (!d->path || !d->path[0] || !fields || !sha) {
                r.bad = true;
                break;
            }
            memcpy(f, fields, sizeof f);
            d->size = f[0], d->ino = f[1], d->dev = f[2];
            d->mtime_s = (int64_t)f[3], d->mtime_ns = (int64_t)f[4], d->ctime_s = (int64_t)f[5];
            d->ctime_ns = (int64_t)f[6];
            memcpy(d->sha, sha, 32);
        }
    }
    if (r.bad || r.left != 0) {
        asyncrt__manifest_free(out);
        snprintf(why, why_size, "manifest payload is malformed");
        return false;
    }
    return true;
}

size_t asyncrt__manifest_result_keys(const void *data, size_t size, uint8_t keys[ASYNCRT_MANIFEST_MAX_SETS][32])
{
    if (size < ASYNCRT_SEAL_HEADER_SIZE || memcmp(data, MANIFEST_MAGIC, 8) != 0) return 0;
    asyncrt_reader r = {(const unsigned char *)data + ASYNCRT_SEAL_HEADER_SIZE, size - ASYNCRT_SEAL_HEADER_SIZE,
                        false};
    uint64_t sets = asyncrt__take_u64(&r);
    size_t n = 0;
    for (uint64_t s = 0; !r.bad && s < sets && n < ASYNCRT_MANIFEST_MAX_SETS; s++) {
        const void *key = asyncrt__take(&r, 32);
        free(asyncrt__take_str(&r));
        uint64_t deps = asyncrt__take_u64(&r);
        for (uint64_t i = 0; !r.bad && i < deps; i++) {
            free(asyncrt__take_str(&r));
            asyncrt__take(&r, 7 * 8 + 32);
        }
        if (key && !r.bad) memcpy(keys[n++], key, 32);
    }
    return n;
}
