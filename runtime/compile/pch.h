/* Precompiled headers within one process: headers parsed once, never served
 * stale.
 *
 * NVRTC's automatic PCH (-pch --pch-dir=D) saves the headers a program
 * includes before its first declaration into a file in D (~130 MB for
 * <cuda/barrier>); a later compile in the same process whose leading
 * #includes match loads that file instead of parsing them (measured on a
 * 2-core CPU: a <cuda/barrier> kernel 1.1 s -> 0.16 s; making the PCH costs
 * ~0.25 s more than a plain compile). NVRTC deletes the files at exit, and
 * never checks whether a header changed since it made them: an edited disk
 * header, or an in-memory header's new content, is served stale (measured);
 * only other options, the directory included, make it start over.
 *
 * So each key (compile.c: the options and in-memory headers, the working
 * directory) gets a private directory and the record of every disk file read
 * by the compiles that may have written a PCH there. Before a compile uses
 * the directory the record is checked like a cache manifest; a changed file
 * retires the directory (files deleted, the next one gets a new name, so
 * NVRTC cannot reuse what it holds in memory either). A compile whose trace
 * cannot be read retires it too: what its PCH holds would be unknown.
 *
 * A compile that used a PCH traces only the headers read after it, so its
 * cache manifest adds the directory's record (a superset of what it read).
 * Threads: one compile at a time holds the PCH state, from begin to end
 * (NVRTC 13 serialises compiles within a process anyway). */
#ifndef ASYNCRT_PCH_H
#define ASYNCRT_PCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache_manifest.h"

typedef struct asyncrt_pch asyncrt_pch;
typedef struct asyncrt_pch_dir asyncrt_pch_dir;

/* ASYNCRT_PCH: "0" off, "1" on for every traced compile, anything else auto:
 * a key's first compile runs without, and the later ones use a PCH when that
 * first one read at least ASYNCRT_PCH_HEAVY header files. Measured (2-core
 * CPU): a kernel with no includes 20 ms plain, 33 ms making a 7 MB PCH, 19 ms
 * using it, so a PCH only pays where there are headers to parse, and a
 * process that compiles one program never pays for making one. */
#define ASYNCRT_PCH_HEAVY 32
typedef enum { ASYNCRT_PCH_OFF, ASYNCRT_PCH_AUTO, ASYNCRT_PCH_ON } asyncrt_pch_mode;

asyncrt_pch_mode asyncrt__pch_mode_parse(const char *setting); /* ASYNCRT_PCH: NULL is auto */
/* The context's PCH (its slot, context.h), made on first use from its
 * settings (ASYNCRT_PCH, TMPDIR); NULL when out of memory (PCH then off). */
typedef struct asyncrt_context asyncrt_context;
asyncrt_pch *asyncrt__pch_of(asyncrt_context *ctx);
/* tmpdir: the TMPDIR setting (NULL when unset), where the directories go and
 * where NVRTC keeps its parse. NULL: out of memory. */
asyncrt_pch *asyncrt__pch_create(asyncrt_pch_mode mode, const char *tmpdir);
void asyncrt__pch_destroy(asyncrt_pch *pch);            /* deletes its directories */

typedef struct asyncrt_pch_use {
    asyncrt_pch *pch;     /* NULL: PCH is off */
    uint8_t key[32];
    asyncrt_pch_dir *dir; /* NULL: this compile runs without PCH */
    char option[96];      /* "--pch-dir=<dir>" */
} asyncrt_pch_use;

/* Before an NVRTC compile that is traced: true when it should use PCH; then
 * *use holds the --pch-dir option and the state stays locked until
 * asyncrt__pch_end. *note says why a directory was retired ("" if none). */
bool asyncrt__pch_begin(asyncrt_pch *pch, const uint8_t key[32], asyncrt_pch_use *use, char *note,
                        size_t note_size);

/* The directory's record: the disk files every PCH in it may hold (NULL
 * without PCH). A trace without NVRTC's builtin header came from a PCH,
 * which is only possible when the record is not empty. */
const asyncrt_dep_set *asyncrt__pch_record(const asyncrt_pch_use *use);

/* After every compile that began: `read` is what it read (its trace plus the
 * record), NULL when that is unknown (a directory in use is then retired).
 * Unlocks. *note as above. */
void asyncrt__pch_end(asyncrt_pch_use *use, const asyncrt_dep_set *read, char *note, size_t note_size);

/* With PCH on, NVRTC writes through memory maps (its parse, in a file in
 * $TMPDIR; the PCH file, in the PCH directory), so a filesystem that fills
 * up kills the process (SIGBUS), and one PCH of <cuda/barrier> takes ~130
 * MB: a compile uses PCH only while both filesystems have this much free
 * (otherwise it runs without, with one log line per context). */
#define ASYNCRT_PCH_MIN_FREE_BYTES ((uint64_t)512 << 20)
/* Test seam: the free space of dir's filesystem (statvfs by default). */
extern uint64_t (*asyncrt__pch_free_bytes)(const char *dir);

/* Test seam: .pch files in all of this context's directories. */
int asyncrt__pch_file_count(asyncrt_pch *pch);

#endif
