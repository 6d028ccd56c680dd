/* A dependency set recorded on another machine, checked here (dep_fit.h). */
#define _DEFAULT_SOURCE
#include "dep_fit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_hash.h"

/* Content hashes this process already took, by path and stat (as the disk
 * cache trusts a file whose stat is unchanged): the CCCL kernels of one
 * program share ~385 headers, hashed once instead of once per kernel. */
#define MEMO_SLOTS 4096
typedef struct memo_entry {
    char *path;
    struct stat st;
    uint8_t sha[32];
} memo_entry;
static memo_entry g_memo[MEMO_SLOTS];
static pthread_mutex_t g_memo_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_stat(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static size_t memo_slot(const char *path) /* FNV-1a: a slot, not a secret */
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) h = (h ^ *c) * 1099511628211ull;
    return (size_t)(h % MEMO_SLOTS);
}

/* The file's content hash and stat: from the memo when its stat is the one hashed. */
static bool hash_memoised(const char *path, uint8_t sha[32], struct stat *st)
{
    size_t i = memo_slot(path);
    if (stat(path, st) != 0 || !S_ISREG(st->st_mode)) return false;
    pthread_mutex_lock(&g_memo_lock);
    bool hit = g_memo[i].path && strcmp(g_memo[i].path, path) == 0 && same_stat(&g_memo[i].st, st);
    if (hit) memcpy(sha, g_memo[i].sha, 32);
    pthread_mutex_unlock(&g_memo_lock);
    if (hit || !asyncrt__file_sha256(path, sha, st)) return hit;
    char *copy = strdup(path);
    pthread_mutex_lock(&g_memo_lock);
    free(g_memo[i].path); /* a collision replaces: it is only a memo */
    g_memo[i] = (memo_entry){.path = copy, .st = *st};
    memcpy(g_memo[i].sha, sha, 32);
    pthread_mutex_unlock(&g_memo_lock);
    return true;
}

bool asyncrt__dep_set_fits(asyncrt_dep_set *set, char *why, size_t why_size)
{
    char cwd[4096];
    if (set->cwd[0] && (!getcwd(cwd, sizeof cwd) || strcmp(cwd, set->cwd) != 0)) {
        snprintf(why, why_size, "it was compiled in the working directory %s", set->cwd);
        return false;
    }
    for (size_t i = 0; i < set->count; i++) {
        asyncrt_dep *d = &set->deps[i];
        struct stat st;
        uint8_t sha[32];
        if (!hash_memoised(d->path, sha, &st) || (uint64_t)st.st_size != d->size || memcmp(sha, d->sha, 32) != 0) {
            snprintf(why, why_size, "%s differs here from where it was compiled", d->path);
            return false;
        }
        d->ino = (uint64_t)st.st_ino, d->dev = (uint64_t)st.st_dev;
        d->mtime_s = st.st_mtim.tv_sec, d->mtime_ns = st.st_mtim.tv_nsec;
        d->ctime_s = st.st_ctim.tv_sec, d->ctime_ns = st.st_ctim.tv_nsec;
    }
    return true;
}

