/* Key records (issue 36): the named inputs of a compile's key1 (compile/key.c
 * notes them as it hashes them), kept beside the entries so that a miss can
 * say what differs from the nearest entry of the same source name
 * (asyncrt_cache_explain, asyncrt-cache explain, the miss line at
 * ASYNCRT_LOG=1).
 *
 * A record is a list of "name\tvalue" lines, values escaped (\\, \n, \t);
 * large inputs (the source, in-memory headers, built-in headers, a bundle)
 * by their SHA-256. The records of one source name live in one side file
 * (cache.h's side files: checked, sealed with the entries' digest or team
 * MAC, 64 KiB at most), "keys-<16 hex of SHA-256(source name)>", newest
 * first, ASYNCRT_KEY_RECORDS_MAX of them, in format ASYNCRT_KEY_RECORDS_FORMAT:
 *   asyncrt key records 1
 *   key <key1 hex> <seconds since the epoch>
 *   <name>\t<value>
 *   ...
 * A file of another format, or an entry stored before records existed, is
 * "no record": never guessed at. */
#ifndef ASYNCRT_KEY_RECORD_H
#define ASYNCRT_KEY_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asyncrt/runtime.h"
#include "diag.h"
#include "string_list.h"

#define ASYNCRT_KEY_RECORDS_FORMAT 1
#define ASYNCRT_KEY_RECORDS_MAX 8

typedef struct asyncrt_cache asyncrt_cache;

typedef struct asyncrt_key_record {
    uint8_t key1[32];
    int64_t when;              /* stored at, seconds since the epoch */
    asyncrt_string_list lines; /* "name\tvalue", value escaped */
} asyncrt_key_record;

/* Appends one named input (value escaped) to l; NULL value: "". */
void asyncrt__key_note(asyncrt_string_list *l, const char *name, const char *value);
/* The value of the first line named `name` (unescaped, malloc'd), or NULL. */
char *asyncrt__key_value(const asyncrt_string_list *l, const char *name);

/* The side file of a source name's records, into out[32]: "keys-" and 16
 * hex digits of asyncrt__key_record_name_digest. */
void asyncrt__key_records_file(const char *source_name, char out[32]);
/* One record as a side file holds it: its key line ("key HEX WHEN") and
 * its lines, each ending in a newline (malloc'd; NULL: out of memory). */
char *asyncrt__key_record_text(const asyncrt_key_record *r);
/* Parses a side file's text; how many records went into out (at most max;
 * 0 for another format). */
size_t asyncrt__key_records_parse(const char *text, asyncrt_key_record *out, size_t max);
/* The records of source_name in c's directory, newest first (0: none). */
size_t asyncrt__key_records_load(asyncrt_cache *c, const char *source_name, asyncrt_key_record *out, size_t max);
/* The live record of the key whose hex is key_hex, of any source name, in
 * c's directory (explain KEY_A KEY_B). */
bool asyncrt__key_records_find(asyncrt_cache *c, const char *key_hex, asyncrt_key_record *out);
/* rec as the newest record of source_name (replacing one of its key1),
 * older ones dropped past the count or the side file's size. False when
 * not written (no usable directory: the side-file helpers log why). */
bool asyncrt__key_records_save(asyncrt_cache *c, const char *source_name, const uint8_t key1[32],
                               const asyncrt_string_list *lines);
void asyncrt__key_record_free(asyncrt_key_record *r);

/* One input that differs. what: "version", "nvrtc", "compact", "toolkit",
 * "arch", "option", "header", "bundle", "cwd", "source", "name expression",
 * "builtins", "std header" (a record's names), "nvjitlink", "link option",
 * "input" (a link's: link/link_record.c), or "dependency" (a file the
 * compile read, cache_explain.c). name: the option, header or file; was /
 * now: NULL where absent on that side. All malloc'd. */
typedef struct asyncrt_key_diff {
    char what[24];
    char *name, *was, *now;
} asyncrt_key_diff;

/* The differences from `was` to `now`, most telling first (arch, options,
 * headers, bundle, NVRTC, ... the source last); up to max into out, the
 * total returned. */
size_t asyncrt__key_diff(const asyncrt_string_list *was, const asyncrt_string_list *now, asyncrt_key_diff *out,
                         size_t max);
void asyncrt__key_diff_free(asyncrt_key_diff *d, size_t count);

/* One line for a difference: "option -DN=2 added", "header a.h: digest
 * 1234abcd... -> 5678ef01...", "arch: sm_80 -> sm_90". */
void asyncrt__key_diff_say(const asyncrt_key_diff *d, char *out, size_t size);

/* ---- on the wire (key_record_wire.c; the remote's records, remote_records.h) ---- */

/* SHA-256 of a source name: its records' list on the remote. */
void asyncrt__key_record_name_digest(const char *source_name, uint8_t out[32]);
/* One record's bytes: the source name and the record's side-file text
 * (malloc'd, *size); NULL when out of memory. */
unsigned char *asyncrt__key_record_wire_encode(const char *source_name, const uint8_t key1[32], int64_t when,
                                              const asyncrt_string_list *lines, size_t *size);
/* Reads them back into *out and *source_name (malloc'd): false with why
 * unless they hold one record of key1 (the key its seal named) and a source
 * name whose digest is name_digest (the list it came from). */
bool asyncrt__key_record_wire_decode(const unsigned char *data, size_t size, const uint8_t key1[32],
                                     const uint8_t name_digest[32], char **source_name, asyncrt_key_record *out,
                                     char *why, size_t why_size);

/* ---- the records' life (key_record_life.c) --------------------------------
 * A record lives as long as its entry: one whose manifest (<key1>.mf) is not
 * in the folder is skipped when loaded, whoever removed it (eviction, clear,
 * verify --delete, a lookup's discard, another process or asyncrt), and is
 * dropped when its side file is next written; a trim (at most once a
 * minute) or prune that evicted a manifest, and a remove of one, sweep the
 * side files (rewritten without the dead records, deleted when none is
 * left); clear deletes them all.
 * Writers of the side files (a store's save, a sweep, an import's merge)
 * read, merge and write under one advisory lock, ASYNCRT_KEY_RECORDS_LOCK in
 * the folder (safe_io.h's asyncrt__file_lock), waited for at most
 * ASYNCRT_KEY_RECORDS_LOCK_MS: not got, the record is not kept (logged at
 * ASYNCRT_LOG=1) and the compile goes on. Readers need no lock (a side file
 * is replaced by an atomic rename). */
#define ASYNCRT_KEY_RECORDS_LOCK "keys.lock"
#define ASYNCRT_KEY_RECORDS_LOCK_MS 1000
#define ASYNCRT_KEY_RECORDS_SWEPT "keys.swept"
#define ASYNCRT_KEY_RECORDS_SWEEP_S 60

/* A folder of key records: its descriptor, its seal (a shared cache's team
 * MAC; NULL: plain SHA-256), where warnings go (NULL: nowhere) and its name
 * for them. */
typedef struct asyncrt_key_records_dir {
    int fd;
    const uint8_t *mac;
    const asyncrt_diag *diag;
    const char *name;
} asyncrt_key_records_dir;

/* Whether name is a key records side file's: "keys-" and 16 lowercase hex. */
bool asyncrt__key_records_named(const char *name);
/* The live records of side file `file` of d, newest first (0: none). */
size_t asyncrt__key_records_load_at(const asyncrt_key_records_dir *d, const char *file, asyncrt_key_record *out,
                                    size_t max);
/* asyncrt__key_records_save on a folder already open. */
bool asyncrt__key_records_save_at(const asyncrt_key_records_dir *d, const char *source_name, const uint8_t key1[32],
                                  const asyncrt_string_list *lines);
/* Drops the dead records of every side file of d (a file left with none is
 * deleted); how many files changed. It reads every records file (about half
 * a millisecond each), so a store's trim asks for it at most once every
 * `every` seconds (ASYNCRT_KEY_RECORDS_SWEEP_S; the last one's time is the
 * mtime of side file ASYNCRT_KEY_RECORDS_SWEPT): loading skips dead records
 * meanwhile. 0: now (prune, remove). */
size_t asyncrt__key_records_sweep_at(const asyncrt_key_records_dir *d, unsigned every);
/* Side file `file` of `from` into `to` (export, import): read and checked
 * as a load reads it (its seal, its format, each record's source name
 * hashing to the file's name), its live records re-sealed for `to`; into a
 * cache (into_cache), merged under the lock with the records there, newest
 * first, keeping only those whose manifest `to` holds. CORRUPT (refused) or
 * IO (not written) with why. */
asyncrt_status asyncrt__key_records_transfer_at(const asyncrt_key_records_dir *from, const asyncrt_key_records_dir *to,
                                                const char *file, bool into_cache, char *why, size_t why_size);

#endif
