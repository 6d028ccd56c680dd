/* The disk tier (cache_tiers.h): the directory, checked and opened once,
 * its manifests and entries, and its trim to the cap. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache_store.h"
#include "cache_tiers.h"
#include "key_record.h"
#include "safe_io.h"
#include "sha256.h"

bool asyncrt__cache_set_dir(asyncrt_cache *c, const char *dir)
{
    char *copy = NULL;
    if (dir && !(copy = strdup(dir))) return false;
    free(c->dir);
    c->dir = copy;
    c->pinned = false;
    return true;
}

bool asyncrt__cache_adopt_dir(asyncrt_cache *c, const char *name, int dir_fd, bool shared, const uint8_t mac_key[32])
{
    char *dir = strdup(name), *checked = strdup(name);
    int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
    if (!dir || !checked || fd < 0) {
        free(dir), free(checked);
        if (fd >= 0) close(fd);
        return false;
    }
    pthread_mutex_lock(&c->lock);
    free(c->dir), free(c->checked_dir);
    if (c->dir_fd >= 0) close(c->dir_fd);
    c->dir = dir, c->checked_dir = checked, c->dir_fd = fd;
    c->pinned = true;
    c->dir_why[0] = '\0';
    c->shared = shared;
    memcpy(c->mac_key, mac_key, 32);
    pthread_mutex_unlock(&c->lock);
    return true;
}

const char *asyncrt__cache_dir(const asyncrt_cache *c) { return c ? c->dir : NULL; }
/* <hex key><suffix>: a name in the cache directory. */
static void file_name(const uint8_t key[32], const char *suffix, char out[72])
{
    asyncrt__sha256_hex(key, out);
    strcat(out, suffix);
}

int asyncrt__disk_open(asyncrt_cache *c, char **name, uint8_t mac_key[32], bool *shared)
{
    *name = NULL;
    if (!c || !c->dir || !c->enabled) return -1;
    pthread_mutex_lock(&c->lock);
    if (!c->pinned && (!c->checked_dir || strcmp(c->checked_dir, c->dir) != 0)) {
        free(c->checked_dir);
        if (c->dir_fd >= 0) close(c->dir_fd);
        c->dir_fd = -1;
        c->checked_dir = strdup(c->dir);
        c->dir_why[0] = '\0';
        if (!c->checked_dir)
            snprintf(c->dir_why, sizeof c->dir_why, "out of memory");
        else if ((c->dir_fd = asyncrt__dir_open_trusted(c->checked_dir, c->shared, c->mac_key, c->dir_why,
                                                        sizeof c->dir_why)) < 0)
            asyncrt__diag_log(c->diag, 1, "warning: not caching in %s (no disk cache): %s", c->checked_dir,
                              c->dir_why);
    }
    int fd = c->dir_fd >= 0 ? fcntl(c->dir_fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (fd >= 0 && !(*name = strdup(c->checked_dir))) {
        close(fd);
        fd = -1;
    }
    memcpy(mac_key, c->mac_key, 32);
    *shared = c->shared;
    pthread_mutex_unlock(&c->lock);
    return fd;
}

/* Forgets the directory's check: the next use checks (and creates) it again. */
static void forget_dir(asyncrt_cache *c)
{
    pthread_mutex_lock(&c->lock);
    if (c->pinned) { /* the one directory handed in, or none */
        pthread_mutex_unlock(&c->lock);
        return;
    }
    free(c->checked_dir);
    c->checked_dir = NULL;
    if (c->dir_fd >= 0) close(c->dir_fd);
    c->dir_fd = -1;
    pthread_mutex_unlock(&c->lock);
}

bool asyncrt__cache_dir_usable(asyncrt_cache *c)
{
    bool shared;
    char *dir;
    int fd = asyncrt__cache_dir_fd(c, &dir, &shared);
    if (fd >= 0) close(fd);
    free(dir);
    return fd >= 0;
}

int asyncrt__cache_dir_fd(asyncrt_cache *c, char **name, bool *shared)
{
    uint8_t mac_key[32];
    return asyncrt__disk_open(c, name, mac_key, shared);
}

/* Reads one cache file, <hex key><suffix> (its name into `name`); a refused
 * one is logged and counted. */
static unsigned char *read_cache_file(asyncrt_cache *c, int dir_fd, const char *dir, const uint8_t key[32],
                                      const char *suffix, char name[72], size_t *size)
{
    char why[256];
    file_name(key, suffix, name);
    unsigned char *data = asyncrt__file_read(dir_fd, name, ASYNCRT_FILE_MAX, true, size, why,
                                                  sizeof why);
    if (!data && why[0]) {
        asyncrt__diag_log(c->diag, 1, "warning: refusing cache file %s/%s: it %s", dir, name, why);
        asyncrt__cache_count(c, C_REJECTED, 1);
    }
    return data;
}

/* A damaged file is logged, counted and deleted. */
static void discard(asyncrt_cache *c, int dir_fd, const char *dir, const char *name, const char *why)
{
    /* Another process may be renaming a good file over this one; unlinking
     * is still safe, since rename replaces atomically. */
    asyncrt__diag_log(c->diag, 1, "warning: discarding cache file %s/%s: %s", dir, name, why);
    asyncrt__cache_count(c, C_REJECTED, 1);
    unlinkat(dir_fd, name, 0);
}

bool asyncrt__disk_find(asyncrt_cache *c, const uint8_t key1[32], asyncrt_dep_set *set, asyncrt_cache_entry *out)
{
    uint8_t mac_key[32];
    bool shared;
    char *dir;
    int dir_fd = asyncrt__disk_open(c, &dir, mac_key, &shared);
    if (dir_fd < 0) return false;
    const uint8_t *mac = shared ? mac_key : NULL;
    char mf_name[72], name[72];
    size_t size = 0;
    unsigned char *data = read_cache_file(c, dir_fd, dir, key1, ".mf", mf_name, &size);
    asyncrt_manifest m = {0};
    char why[256];
    if (data && !asyncrt__manifest_decode(data, size, key1, mac, &m, why, sizeof why))
        discard(c, dir_fd, dir, mf_name, why);
    free(data);
    bool found = false;
    for (size_t s = 0; s < m.count; s++) {
        if (!asyncrt__dep_set_valid(&m.sets[s])) continue;
        data = read_cache_file(c, dir_fd, dir, m.sets[s].result_key, ".bin", name, &size);
        if (data && !(found = asyncrt__cache_entry_open(data, size, m.sets[s].result_key, mac, out, why, sizeof why)))
            discard(c, dir_fd, dir, name, why);
        if (found) {
            asyncrt__diag_log(c->diag, 2, "cache hit: %s/%s", dir, name);
            out->origin = ASYNCRT_ORIGIN_DISK_CACHE;
            *set = m.sets[s]; /* taken from the manifest */
            m.sets[s] = (asyncrt_dep_set){0};
        }
        free(data);
        break; /* the newest valid set decides: an older one is another header version */
    }
    if (!found) asyncrt__diag_log(c->diag, 2, "cache miss: %s/%s", dir, mf_name);
    asyncrt__manifest_free(&m);
    free(dir);
    close(dir_fd);
    return found;
}

/* The entry for `payload`, sealed (its name, <hex result key>.bin, into
 * `name`), then the manifest for key1 with `deps` first and up to
 * MAX_SETS - 1 older sets (a damaged or absent manifest simply starts
 * afresh): written in that order, so that a manifest never names an entry
 * not yet there. Two processes updating one manifest at once may lose one's
 * set: a later miss adds it back. NULL when both are written, else what
 * failed. */
static const char *write_entry(asyncrt_cache *c, int dir_fd, const char *dir, const uint8_t key1[32],
                               const asyncrt_dep_set *deps, const unsigned char *payload, size_t payload_size,
                               const uint8_t *mac_key, mode_t mode, char name[72], size_t *size)
{
    char mf_name[72];
    file_name(deps->result_key, ".bin", name);
    file_name(key1, ".mf", mf_name);
    unsigned char *data = asyncrt__cache_entry_seal(payload, payload_size, deps->result_key, mac_key, size);
    if (!data) return "out of memory";
    bool written = asyncrt__file_write(dir_fd, name, data, *size, mode);
    free(data);
    if (!written) return "cannot write the entry";
    size_t mf_size = 0;
    char why[256];
    data = asyncrt__file_read(dir_fd, mf_name, ASYNCRT_FILE_MAX, false, &mf_size, why, sizeof why);
    asyncrt_manifest old = {0};
    if (data && !asyncrt__manifest_decode(data, mf_size, key1, mac_key, &old, why, sizeof why))
        asyncrt__diag_log(c->diag, 1, "warning: replacing cache manifest %s/%s: %s", dir, mf_name, why);
    free(data);
    asyncrt_dep_set sets[ASYNCRT_MANIFEST_MAX_SETS];
    asyncrt_manifest m = {sets, 1};
    sets[0] = *deps;
    for (size_t i = 0; i < old.count && m.count < ASYNCRT_MANIFEST_MAX_SETS; i++)
        if (memcmp(old.sets[i].result_key, deps->result_key, 32) != 0) sets[m.count++] = old.sets[i];
    data = asyncrt__manifest_encode(&m, key1, mac_key, &mf_size);
    bool ok = data && asyncrt__file_write(dir_fd, mf_name, data, mf_size, mode);
    free(data);
    asyncrt__manifest_free(&old);
    return ok ? NULL : "cannot write the manifest";
}

bool asyncrt__disk_store(asyncrt_cache *c, const uint8_t key1[32], const asyncrt_dep_set *deps,
                         const unsigned char *payload, size_t payload_size)
{
    uint8_t mac_key[32];
    bool shared;
    char *dir;
    int fd = asyncrt__disk_open(c, &dir, mac_key, &shared);
    if (fd < 0) return false;
    const uint8_t *mac = shared ? mac_key : NULL;
    mode_t mode = shared ? 0660 : 0600;
    char name[72];
    size_t size = 0;
    const char *failed = write_entry(c, fd, dir, key1, deps, payload, payload_size, mac, mode, name, &size);
    if (failed) {
        int err = errno;
        asyncrt__diag_log(c->diag, 1, "warning: not caching in %s: %s (%s)", dir, failed, strerror(err));
        if (err == ENOENT) forget_dir(c); /* removed under us */
    } else {
        asyncrt__diag_log(c->diag, 2, "cached %s/%s (%zu bytes, %zu dependencies)", dir, name, size, deps->count);
        asyncrt_key_records_dir records = {fd, mac, c->diag, dir};
        if (asyncrt__cache_trim(c, fd, dir, name)) /* manifests evicted: their key records die too */
            asyncrt__key_records_sweep_at(&records, ASYNCRT_KEY_RECORDS_SWEEP_S);
    }
    free(dir);
    close(fd);
    return !failed;
}

void asyncrt__disk_discard(asyncrt_cache *c, const uint8_t key2[32], const char *why)
{
    uint8_t mac_key[32];
    bool shared;
    char *dir, name[72];
    int fd = asyncrt__disk_open(c, &dir, mac_key, &shared);
    if (fd < 0) return;
    file_name(key2, ".bin", name);
    if (why) discard(c, fd, dir, name, why);
    else unlinkat(fd, name, 0); /* a copy installed on its way to a refusal */
    free(dir);
    close(fd);
}

void asyncrt__disk_close(asyncrt_cache *c)
{
    if (c->dir_fd >= 0) close(c->dir_fd);
    free(c->checked_dir);
    free(c->dir);
}
