/* Trust checks of the cache directory and safe reads of the files in it.
 *
 * Private mode (default): the directory must be a real directory (not a
 * symlink) owned by the effective user and not writable by group or others.
 * Shared mode (ASYNCRT_CACHE_SHARED=1): it may also be group-writable when
 * the setgid bit is set (files stay in the team's group), never
 * other-writable, and every file carries an HMAC-SHA-256 under the team key
 * `<dir>/KEY` (32 random bytes, group-readable, nobody-writable, created by
 * the first user). A directory that fails is not used (no disk cache). */
#ifndef ASYNCRT_CACHE_TRUST_H
#define ASYNCRT_CACHE_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Test seam: the effective uid that owners are compared with (geteuid by
 * default); tests point it elsewhere to act as another user while root. */
extern uid_t (*asyncrt__cache_trust_euid)(void);

/* Creates `dir` if missing (0700; 02770 in shared mode) and checks it. True
 * when it may be used; mac_key is then filled in shared mode. */
bool asyncrt__cache_trust_dir(const char *dir, bool shared, uint8_t mac_key[32], char *why, size_t why_size);

/* Largest plausible entry or manifest: anything bigger is refused unread. */
#define ASYNCRT_CACHE_FILE_MAX ((size_t)256 << 20)

/* Reads a cache file without following a symlink or blocking on a FIFO,
 * checking with fstat that it is a regular file of 1..max bytes before any
 * read; EINTR is retried. touch: refresh its times (the LRU's recency).
 * NULL when refused or absent: why is "" when it simply is not there. */
unsigned char *asyncrt__cache_read_file(const char *path, size_t max, bool touch, size_t *size, char *why,
                                       size_t why_size);

/* Writes data to `path` atomically: a temporary in the same directory, then
 * rename (atomic on local and NFS filesystems; readers see old or new). mode:
 * 0600 private, 0660 shared. False with errno set on failure. */
/* A fresh directory only this user can enter (mkdtemp: mode 0700, a name
 * nobody can guess): <$TMPDIR or /tmp>/<prefix>XXXXXX, $TMPDIR only when
 * shorter than 32 characters. False (path holds the name tried) when it
 * cannot be made. */
bool asyncrt__make_private_dir(char *path, size_t size, const char *prefix);

bool asyncrt__cache_write_file(const char *path, const unsigned char *data, size_t size, mode_t mode);

/* Whether asyncrt may run the program at `path` (the compile worker): its
 * real path (symlinks resolved, written to `real`) must be a regular,
 * executable file, and it and every folder above it up to / owned by this
 * user or root and writable by neither group nor others, so that nobody
 * else can replace it between this check and the exec. A folder above the
 * program's own may be world-writable with the sticky bit (/tmp): there
 * nobody else can rename or remove what this user owns. False with why. */
bool asyncrt__trusted_executable(const char *path, char *real, size_t real_size, char *why, size_t why_size);

#endif
