/* The calls of asyncrt/cache.h that read what a cache file holds: check,
 * transfer and push. They are the compile layer's because an entry's
 * payload is a program (program.h); the folder itself is the context's
 * (context/cache_dir.h). Every file is read as a lookup reads it: no link
 * followed, a regular file of plausible size, named by its key, its seal
 * (SHA-256 or a shared cache's team MAC) and its contents checked. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cache.h"
#include "cache_dir.h"
#include "cache_store.h"
#include "key_record.h"
#include "program.h"
#include "safe_io.h"
#include "sha256.h"

/* One file, read and decoded: exactly one of program / manifest is set. */
typedef struct loaded {
    uint8_t key[32];
    asyncrt_program *program;
    asyncrt_manifest manifest;
    bool is_manifest;
    char newest[72]; /* a manifest's newest set's entry, "<hex>.bin" */
} loaded;

static void loaded_free(void *state)
{
    loaded *l = state;
    if (!l) return;
    asyncrt_program_destroy(l->program);
    if (l->is_manifest) asyncrt__manifest_free(&l->manifest);
    free(l);
}

static int hex_value(char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; }

/* "<64 lowercase hex>.bin" or ".mf" -> the key. */
static bool key_from_name(const char *name, uint8_t key[32])
{
    for (int i = 0; i < 32; i++) {
        int hi = hex_value(name[2 * i]), lo = hi < 0 ? -1 : hex_value(name[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        key[i] = (uint8_t)(hi << 4 | lo);
    }
    return name[64] == '.';
}

/* Reads `name` of dir into *out (malloc'd): CORRUPT with why when it fails
 * the checks, IO when it is not there; nothing said (load_said says it). */
static asyncrt_status load(const asyncrt_cache_dir *dir, const char *name, loaded **out, char *why, size_t why_size)
{
    asyncrt_cache_file_kind kind = asyncrt__cache_kind_of(name);
    struct stat st;
    why[0] = '\0';
    *out = NULL;
    if (kind != ASYNCRT_CACHE_ENTRY && kind != ASYNCRT_CACHE_MANIFEST)
        snprintf(why, why_size, "not named <64 hex digits>.bin or .mf");
    else if (fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
        snprintf(why, why_size, "not a regular file");
    loaded *l = why[0] ? NULL : calloc(1, sizeof *l);
    if (!why[0] && !l) snprintf(why, why_size, "out of memory");
    else if (!why[0] && !key_from_name(name, l->key)) snprintf(why, why_size, "malformed name");
    if (why[0]) {
        free(l);
        return ASYNCRT_ERROR_CORRUPT;
    }
    size_t n = 0;
    unsigned char *data = asyncrt__file_read(dir->fd, name, ASYNCRT_FILE_MAX, false, &n, why, why_size);
    if (!data) {
        free(l);
        if (why[0]) return ASYNCRT_ERROR_CORRUPT;
        snprintf(why, why_size, "vanished while reading");
        return ASYNCRT_ERROR_IO;
    }
    const uint8_t *mac = asyncrt__folder_mac(dir);
    bool ok;
    if (kind == ASYNCRT_CACHE_ENTRY) {
        ok = asyncrt__program_decode_keyed(data, n, l->key, mac, &l->program, why, why_size) == ASYNCRT_SUCCESS;
    } else {
        ok = l->is_manifest = asyncrt__manifest_decode(data, n, l->key, mac, &l->manifest, why, why_size);
        if (ok && l->manifest.count) {
            asyncrt__sha256_hex(l->manifest.sets[0].result_key, l->newest);
            strcat(l->newest, ".bin");
        }
    }
    free(data);
    if (!ok) {
        loaded_free(l);
        return ASYNCRT_ERROR_CORRUPT;
    }
    *out = l;
    return ASYNCRT_SUCCESS;
}

/* load, its failure as ctx's message: `prefix` then why. */
static asyncrt_status load_said(asyncrt_cache_dir *dir, const char *prefix, const char *name, loaded **out)
{
    char why[256];
    asyncrt_status s = load(dir, name, out, why, sizeof why);
    return s == ASYNCRT_SUCCESS ? s : asyncrt__fail(dir->ctx, s, "%s%s", prefix, why);
}

static void describe(const loaded *l, asyncrt_cache_dir_item *item)
{
    if (!l->is_manifest) {
        const asyncrt_program *p = l->program;
        item->kind = ASYNCRT_CACHE_FILE_ENTRY;
        item->source_name = p->source_name, item->arch = p->arch, item->options = p->options, item->ptx = p->ptx;
        item->name_expressions = (const char *const *)p->expressions;
        item->name_expression_count = p->name_count;
        return;
    }
    item->kind = ASYNCRT_CACHE_FILE_MANIFEST;
    item->dependency_sets = l->manifest.count;
    for (size_t s = 0; s < l->manifest.count; s++) {
        item->files_read += l->manifest.sets[s].count;
        item->stale_sets += !asyncrt__dep_set_valid(&l->manifest.sets[s]);
    }
    item->newest_entry = l->manifest.count ? l->newest : NULL;
}

static asyncrt_status check(asyncrt_cache_dir *dir, const char *name, asyncrt_cache_dir_item *out)
{
    asyncrt_cache_dir_item item = {.size = sizeof item};
    ASYNCRT_TRY(asyncrt__sized_give(dir->ctx, ASYNCRT_SIZED_CACHE_DIR_ITEM, out, &item, "cache dir item"));
    ASYNCRT_TRY(asyncrt__folder_name_ok(dir, name, "asyncrt_cache_dir_check"));
    if (dir->item.state) dir->item.free(dir->item.state); /* the last check's strings die here */
    dir->item = (asyncrt_context_slot){0};
    loaded *l;
    ASYNCRT_TRY(load_said(dir, "", name, &l));
    dir->item = (asyncrt_context_slot){l, loaded_free};
    describe(l, &item);
    return asyncrt__sized_give(dir->ctx, ASYNCRT_SIZED_CACHE_DIR_ITEM, out, &item, "cache dir item");
}

asyncrt_status asyncrt_cache_dir_check(asyncrt_cache_dir *dir, const char *name, asyncrt_cache_dir_item *out)
{
    if (!dir) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__enter(dir->ctx);
    return asyncrt__leave(dir->ctx, check(dir, name, out));
}

/* ---- transfer ------------------------------------------------------------ */

/* A manifest written into a cache joins the dependency sets recorded there
 * (newest first: ours, then theirs not already present), up to the limit.
 * One of ours that cannot be read is replaced. */
static asyncrt_status merge_manifest(asyncrt_cache_dir *to, const char *name, loaded *theirs)
{
    loaded *ours;
    char why[256];
    if (load(to, name, &ours, why, sizeof why) != ASYNCRT_SUCCESS) return ASYNCRT_SUCCESS;
    asyncrt_dep_set *sets = calloc(ASYNCRT_MANIFEST_MAX_SETS, sizeof *sets);
    size_t count = 0;
    bool ok = sets != NULL;
    for (size_t i = 0; ok && i < ours->manifest.count && count < ASYNCRT_MANIFEST_MAX_SETS; i++)
        ok = asyncrt__dep_set_copy(&sets[count++], &ours->manifest.sets[i]);
    for (size_t i = 0; ok && i < theirs->manifest.count && count < ASYNCRT_MANIFEST_MAX_SETS; i++) {
        bool known = false;
        for (size_t j = 0; j < ours->manifest.count && !known; j++)
            known = !memcmp(ours->manifest.sets[j].result_key, theirs->manifest.sets[i].result_key, 32);
        if (!known) ok = asyncrt__dep_set_copy(&sets[count++], &theirs->manifest.sets[i]);
    }
    loaded_free(ours);
    if (!ok) {
        asyncrt_manifest m = {sets, count};
        asyncrt__manifest_free(&m);
        return asyncrt__fail(to->ctx, ASYNCRT_ERROR_IO, "out of memory merging manifests");
    }
    asyncrt__manifest_free(&theirs->manifest);
    theirs->manifest = (asyncrt_manifest){sets, count};
    return ASYNCRT_SUCCESS;
}

/* Seals l for `to` and writes it there atomically. */
static asyncrt_status save(asyncrt_cache_dir *to, const char *name, const loaded *l)
{
    const uint8_t *mac = asyncrt__folder_mac(to);
    mode_t mode = mac ? 0660 : 0600;
    size_t size = 0;
    errno = 0;
    unsigned char *data = l->is_manifest ? asyncrt__manifest_encode(&l->manifest, l->key, mac, &size)
                                         : asyncrt__program_encode_keyed(l->program, mac, &size);
    bool ok = data && asyncrt__file_write(to->fd, name, data, size, mode);
    int err = data ? errno : ENOMEM;
    free(data);
    return ok ? ASYNCRT_SUCCESS : asyncrt__fail(to->ctx, ASYNCRT_ERROR_IO, "%s", strerror(err));
}

/* A key records side file (key_record.h): its live records, re-sealed for
 * `to` and, into a cache, merged with those there: an imported entry
 * explains its misses as a local one. */
static asyncrt_status transfer_records(asyncrt_cache_dir *from, asyncrt_cache_dir *to, const char *name)
{
    asyncrt_key_records_dir a = {from->fd, asyncrt__folder_mac(from), &from->ctx->diag, from->name},
                            b = {to->fd, asyncrt__folder_mac(to), &to->ctx->diag, to->name};
    char why[256];
    asyncrt_status s = asyncrt__key_records_transfer_at(&a, &b, name, to->role == ASYNCRT_CACHE_DIR_CACHE, why,
                                                        sizeof why);
    return s == ASYNCRT_SUCCESS ? s : asyncrt__fail(from->ctx, s, "%s", why);
}

static asyncrt_status transfer(asyncrt_cache_dir *from, asyncrt_cache_dir *to, const char *name)
{
    if (!to)
        return asyncrt__fail(from->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_cache_dir_transfer: `to` is NULL");
    if (to->ctx != from->ctx)
        return asyncrt__fail(from->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_cache_dir_transfer: %s and %s were "
                             "opened on different contexts: open both on one", from->name, to->name);
    ASYNCRT_TRY(asyncrt__folder_name_ok(from, name, "asyncrt_cache_dir_transfer"));
    ASYNCRT_TRY(asyncrt__folder_trusted(from, "asyncrt_cache_dir_transfer"));
    ASYNCRT_TRY(asyncrt__folder_trusted(to, "asyncrt_cache_dir_transfer"));
    if (asyncrt__key_records_named(name)) return transfer_records(from, to, name);
    loaded *l;
    ASYNCRT_TRY(load_said(from, "", name, &l));
    asyncrt_status s = ASYNCRT_SUCCESS;
    if (l->is_manifest && to->role == ASYNCRT_CACHE_DIR_CACHE) s = merge_manifest(to, name, l);
    if (s == ASYNCRT_SUCCESS) s = save(to, name, l);
    loaded_free(l);
    return s;
}

asyncrt_status asyncrt_cache_dir_transfer(asyncrt_cache_dir *from, asyncrt_cache_dir *to, const char *name)
{
    if (!from) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__enter(from->ctx);
    return asyncrt__leave(from->ctx, transfer(from, to, name));
}

/* ---- push ------------------------------------------------------------------ */

static asyncrt_status push(asyncrt_cache_dir *dir, const char *name, bool *kept)
{
    if (kept) *kept = false;
    ASYNCRT_TRY(asyncrt__folder_name_ok(dir, name, "asyncrt_cache_dir_push"));
    ASYNCRT_TRY(asyncrt__folder_trusted(dir, "asyncrt_cache_dir_push"));
    if (asyncrt__cache_kind_of(name) != ASYNCRT_CACHE_MANIFEST)
        return asyncrt__fail(dir->ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "asyncrt_cache_dir_push: \"%s\" is not a "
                             "manifest's name (<64 hex digits>.mf): a push sends a manifest's newest compile", name);
    loaded *m, *e;
    ASYNCRT_TRY(load_said(dir, "", name, &m));
    if (!m->manifest.count) {
        loaded_free(m);
        return asyncrt__fail(dir->ctx, ASYNCRT_ERROR_CORRUPT, "no dependency set");
    }
    char prefix[96];
    snprintf(prefix, sizeof prefix, "its entry %s: ", m->newest);
    asyncrt_status s = load_said(dir, prefix, m->newest, &e);
    if (s != ASYNCRT_SUCCESS) {
        loaded_free(m);
        return s;
    }
    size_t size = 0;
    char why[512];
    unsigned char *payload = asyncrt__program_payload(e->program, &size);
    bool held = false;
    if (!payload)
        s = asyncrt__fail(dir->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    else if (!asyncrt__cache_remote_push(dir->ctx->cache, m->key, &m->manifest.sets[0], payload, size, &held, why,
                                         sizeof why))
        s = asyncrt__fail(dir->ctx, ASYNCRT_ERROR_IO, "%s", why);
    else if (kept)
        *kept = held; /* SET NX found a value there: kept as it is, not ours */
    free(payload);
    loaded_free(e);
    loaded_free(m);
    return s;
}

asyncrt_status asyncrt_cache_dir_push(asyncrt_cache_dir *dir, const char *name, bool *kept)
{
    if (!dir) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__enter(dir->ctx);
    return asyncrt__leave(dir->ctx, push(dir, name, kept));
}
