/* Private NVRTC precompiled-header directories and what they may hold (pch.h). */
#include "pch.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "context.h"
#include "safe_io.h"

#define PCH_KEYS 8  /* keys remembered at once; the least recently used is forgotten */
#define PCH_FILES 4 /* PCH files in one directory (one per distinct #include prefix) */

struct asyncrt_pch_dir {
    bool used;
    uint8_t key[32];
    bool heavy;             /* its first compile read ASYNCRT_PCH_HEAVY files or more */
    char path[64];          /* "" until a compile with this key uses PCH */
    asyncrt_dep_set record; /* disk files read by compiles that used the directory */
    uint64_t last_used;
};

struct asyncrt_pch {
    pthread_mutex_t lock;
    asyncrt_pch_mode mode;
    char *tmpdir;      /* the TMPDIR setting, NULL when unset */
    bool told_no_room; /* the "no room" note is given once */
    uint64_t compiles; /* the LRU clock */
    asyncrt_pch_dir keys[PCH_KEYS];
};

static uint64_t statvfs_free_bytes(const char *dir)
{
    struct statvfs st;
    return statvfs(dir, &st) == 0 ? (uint64_t)st.f_bavail * st.f_frsize : 0;
}

uint64_t (*asyncrt__pch_free_bytes)(const char *dir) = statvfs_free_bytes;

asyncrt_pch_mode asyncrt__pch_mode_parse(const char *v)
{
    return v && strcmp(v, "0") == 0 ? ASYNCRT_PCH_OFF : v && strcmp(v, "1") == 0 ? ASYNCRT_PCH_ON : ASYNCRT_PCH_AUTO;
}

asyncrt_pch *asyncrt__pch_create(asyncrt_pch_mode mode, const char *tmpdir)
{
    asyncrt_pch *pch = calloc(1, sizeof *pch);
    if (!pch) return NULL;
    if ((tmpdir && !(pch->tmpdir = strdup(tmpdir))) || pthread_mutex_init(&pch->lock, NULL) != 0) {
        free(pch->tmpdir);
        free(pch);
        return NULL;
    }
    pch->mode = mode;
    return pch;
}

static void destroy_slot(void *pch) { asyncrt__pch_destroy(pch); }

asyncrt_pch *asyncrt__pch_of(asyncrt_context *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    if (!ctx->pch.state) {
        ctx->pch.state = asyncrt__pch_create(asyncrt__pch_mode_parse(ctx->settings.pch), ctx->settings.tmpdir);
        ctx->pch.free = destroy_slot;
    }
    asyncrt_pch *pch = ctx->pch.state;
    pthread_mutex_unlock(&ctx->lock);
    return pch;
}

/* Deletes the directory and forgets its record; the next compile that uses
 * PCH with this key makes a directory of another name. */
static void retire(asyncrt_pch_dir *d)
{
    if (d->path[0]) {
        DIR *dir = opendir(d->path);
        for (struct dirent *e; dir && (e = readdir(dir));) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char file[384];
            snprintf(file, sizeof file, "%s/%s", d->path, e->d_name);
            unlink(file);
        }
        if (dir) closedir(dir);
        rmdir(d->path);
    }
    asyncrt__dep_set_free(&d->record);
    d->path[0] = '\0';
}

void asyncrt__pch_destroy(asyncrt_pch *pch)
{
    if (!pch) return;
    for (size_t i = 0; i < PCH_KEYS; i++) retire(&pch->keys[i]);
    pthread_mutex_destroy(&pch->lock);
    free(pch->tmpdir);
    free(pch);
}

static int count_pch_files(const char *path)
{
    DIR *dir = opendir(path);
    if (!dir) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        size_t len = strlen(e->d_name);
        n += len > 4 && strcmp(e->d_name + len - 4, ".pch") == 0;
    }
    closedir(dir);
    return n;
}

static asyncrt_pch_dir *find(asyncrt_pch *pch, const uint8_t key[32])
{
    for (size_t i = 0; i < PCH_KEYS; i++)
        if (pch->keys[i].used && memcmp(pch->keys[i].key, key, 32) == 0) return &pch->keys[i];
    return NULL;
}

/* The key's entry: found, else a free one, else the least recently used one
 * (retired and reset). */
static asyncrt_pch_dir *entry(asyncrt_pch *pch, const uint8_t key[32])
{
    asyncrt_pch_dir *lru = find(pch, key);
    if (lru) return lru;
    lru = &pch->keys[0];
    for (size_t i = 0; i < PCH_KEYS; i++) {
        asyncrt_pch_dir *d = &pch->keys[i];
        if (lru->used && (!d->used || d->last_used < lru->last_used)) lru = d;
    }
    retire(lru);
    *lru = (asyncrt_pch_dir){.used = true};
    memcpy(lru->key, key, 32);
    return lru;
}

bool asyncrt__pch_begin(asyncrt_pch *pch, const uint8_t key[32], asyncrt_pch_use *use, char *note,
                        size_t note_size)
{
    *use = (asyncrt_pch_use){0};
    note[0] = '\0';
    if (!pch || pch->mode == ASYNCRT_PCH_OFF) return false;
    use->pch = pch;
    memcpy(use->key, key, 32);
    pthread_mutex_lock(&pch->lock);
    asyncrt_pch_dir *d = entry(pch, key);
    d->last_used = ++pch->compiles;
    if (pch->mode == ASYNCRT_PCH_AUTO && !d->heavy) {
        pthread_mutex_unlock(&pch->lock);
        return false;
    }
    if (d->path[0] && !asyncrt__dep_set_valid(&d->record)) {
        snprintf(note, note_size, "a header its precompiled headers hold changed: %s retired", d->path);
        retire(d);
    }
    if (!d->path[0]) {
        d->record.cwd = strdup("");
        if (!d->record.cwd || !asyncrt__private_dir_make(pch->tmpdir, d->path, sizeof d->path, "asyncrt-pch-")) {
            snprintf(note, note_size, "no precompiled headers: cannot create a directory in %s", d->path);
            d->path[0] = '\0';
            asyncrt__dep_set_free(&d->record);
            pthread_mutex_unlock(&pch->lock);
            return false;
        }
    }
    /* With PCH on, NVRTC keeps its parse in a memory-mapped file in $TMPDIR
     * (edg0_<pid>, unlinked) and writes the PCH file into the directory: a
     * filesystem that fills up under either is SIGBUS, so the whole process
     * dies. Only with room to spare in both. */
    const char *where[] = {d->path, pch->tmpdir && *pch->tmpdir ? pch->tmpdir : "/tmp"};
    uint64_t free_bytes = UINT64_MAX;
    const char *tightest = where[0];
    for (int i = 0; i < 2; i++) {
        uint64_t here = asyncrt__pch_free_bytes(where[i]);
        if (here < free_bytes) free_bytes = here, tightest = where[i];
    }
    if (free_bytes < ASYNCRT_PCH_MIN_FREE_BYTES) {
        if (!pch->told_no_room)
            snprintf(note, note_size, "no precompiled headers: %llu MiB free in %s, less than %llu MiB",
                     (unsigned long long)(free_bytes >> 20), tightest,
                     (unsigned long long)(ASYNCRT_PCH_MIN_FREE_BYTES >> 20));
        pch->told_no_room = true;
        pthread_mutex_unlock(&pch->lock);
        return false;
    }
    use->dir = d;
    snprintf(use->option, sizeof use->option, "--pch-dir=%s", d->path);
    return true; /* locked until asyncrt__pch_end */
}

const asyncrt_dep_set *asyncrt__pch_record(const asyncrt_pch_use *use)
{
    return use->dir ? &use->dir->record : NULL;
}

/* Adds what a compile read to the record. False when a file is recorded
 * with other content (it changed while the directory was in use). */
static bool merge(asyncrt_dep_set *record, const asyncrt_dep_set *read)
{
    if (read->cwd[0] && !record->cwd[0]) {
        char *cwd = strdup(read->cwd);
        if (!cwd) return false;
        free(record->cwd);
        record->cwd = cwd;
    }
    for (size_t i = 0; i < read->count; i++) {
        const asyncrt_dep *dep = &read->deps[i];
        size_t j = 0;
        while (j < record->count && strcmp(record->deps[j].path, dep->path) != 0) j++;
        if (j < record->count) {
            if (memcmp(record->deps[j].sha, dep->sha, 32) != 0) return false;
            continue;
        }
        asyncrt_dep *grown = realloc(record->deps, (record->count + 1) * sizeof *grown);
        if (!grown) return false;
        record->deps = grown;
        record->deps[record->count] = *dep;
        if (!(record->deps[record->count].path = strdup(dep->path))) return false;
        record->count++;
    }
    return true;
}

void asyncrt__pch_end(asyncrt_pch_use *use, const asyncrt_dep_set *read, char *note, size_t note_size)
{
    note[0] = '\0';
    asyncrt_pch *pch = use->pch;
    if (!pch) return;
    asyncrt_pch_dir *d = use->dir;
    if (!d) { /* a compile without PCH: is this key's header parsing worth a PCH? */
        pthread_mutex_lock(&pch->lock);
        asyncrt_pch_dir *seen = find(pch, use->key); /* gone if other keys pushed it out */
        if (seen && read && read->count >= ASYNCRT_PCH_HEAVY) seen->heavy = true;
    } else if (!read || !merge(&d->record, read)) {
        snprintf(note, note_size, "what the compile read is unknown, so what its precompiled header holds: "
                                  "%s retired", d->path);
        retire(d);
    } else if (count_pch_files(d->path) > PCH_FILES) {
        snprintf(note, note_size, "more than %d precompiled headers: %s retired", PCH_FILES, d->path);
        retire(d);
    }
    pthread_mutex_unlock(&pch->lock);
    *use = (asyncrt_pch_use){0};
}

int asyncrt__pch_file_count(asyncrt_pch *pch)
{
    pthread_mutex_lock(&pch->lock);
    int n = 0;
    for (size_t i = 0; i < PCH_KEYS; i++)
        if (pch->keys[i].path[0]) n += count_pch_files(pch->keys[i].path);
    pthread_mutex_unlock(&pch->lock);
    return n;
}
