/* File-safety I/O: every file the library (or a tool) reads, writes or runs
 * goes through these, so that one set of rules holds everywhere: no symlink
 * followed, no FIFO blocked on, sizes bounded before a byte is read, writes
 * atomic under unguessable temporaries, folders checked once and then used
 * by descriptor only, programs run only from folders nobody else can write.
 *
 * The door of a folder of sealed files (the disk cache's, codec.h's seals):
 * private mode (default): the directory must be a real directory (not a
 * symlink) owned by the effective user and not writable by group or others.
 * Shared mode (ASYNCRT_CACHE_SHARED=1): it may also be group-writable when
 * the setgid bit is set (files stay in the team's group), never
 * other-writable, and every file carries an HMAC-SHA-256 under the team key
 * `<dir>/KEY` (32 random bytes, group-readable, nobody-writable, created by
 * the first user). This user must own the directory or be in its group, and
 * the directory and KEY must each be owned by this user, by root, or by a
 * member of the directory's group (the user database's: primary group or
 * member list). A directory that fails is not used (no disk cache). */
#ifndef ASYNCRT_SAFE_IO_H
#define ASYNCRT_SAFE_IO_H

#include <fcntl.h> /* AT_FDCWD, for plain paths */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Test seam: the effective uid that owners are compared with (geteuid by
 * default); tests point it elsewhere to act as another user while root. */
extern uid_t (*asyncrt__safe_io_euid)(void);

/* Creates `dir` if missing (0700; 02770 in shared mode), opens it
 * (O_DIRECTORY | O_NOFOLLOW) and checks the opened directory. Returns the
 * descriptor, or -1 (why) when it may not be used; mac_key is filled in
 * shared mode. Every later access goes through the descriptor (openat and
 * friends), so a directory renamed or swapped afterwards is never read. */
int asyncrt__dir_open_trusted(const char *dir, bool shared, uint8_t mac_key[32], char *why, size_t why_size);
/* The door of a tool (asyncrt-cache): `dir` opened once and checked as
 * above (created first only when `create`), the descriptor returned whenever
 * it is a real directory that could be opened, trusted or not (*trusted says
 * which, why says why not), so that a command that also shows a refused
 * directory (stats, list) shows the very one it judged. Every later read and
 * write goes through the descriptor, never through `dir` again: a folder
 * swapped in at that name afterwards is never read. -1 with why when it
 * cannot be opened as a directory (missing, a symlink, not a directory). */
int asyncrt__dir_open_door(const char *dir, bool shared, bool create, uint8_t mac_key[32], bool *trusted,
                            char *why, size_t why_size);

/* Why mkdir(dir) failed with errno err, for a message: EACCES and EPERM as
 * "permission denied creating DIR (parent P is not writable by uid N)". */
void asyncrt__mkdir_why(const char *dir, int err, char *why, size_t why_size);

/* The checks above on a directory already open (dir_fd, named `dir` in
 * messages): a compile worker's, handed its parent's descriptor. True, with
 * mac_key filled in shared mode, when it may be used; false with why. */
bool asyncrt__dir_check_trusted(int dir_fd, const char *dir, bool shared, uint8_t mac_key[32], char *why,
                             size_t why_size);

/* Largest plausible entry or manifest: anything bigger is refused unread. */
#define ASYNCRT_FILE_MAX ((size_t)256 << 20)

/* Reads a cache file (path relative to dir_fd, as openat: AT_FDCWD for a
 * plain path) without following a symlink or blocking on a FIFO, checking
 * with fstat that it is a regular file of 1..max bytes before any read;
 * EINTR is retried. touch: refresh its times (the LRU's recency). NULL when
 * refused or absent: why is "" when it simply is not there. */
unsigned char *asyncrt__file_read(int dir_fd, const char *path, size_t max, bool touch, size_t *size,
                                       char *why, size_t why_size);

/* Reads a secret, such as the remote cache's HMAC key file: like
 * asyncrt__file_read (no symlink, no FIFO, a regular file of 1..max
 * bytes, fstat before any read), and the opened file must also be owned by
 * this user and neither readable nor writable by group or others (0600 or
 * 0400), as the private cache directory is. NULL with why. */
unsigned char *asyncrt__file_read_private(const char *path, size_t max, size_t *size, char *why, size_t why_size);

/* Writes data to `path` (relative to dir_fd, as above) atomically: a
 * temporary of an unguessable name created exclusively in the same
 * directory, then rename (atomic on local and NFS filesystems; readers see
 * old or new). mode: 0600 private, 0660 shared. False with errno set. */
bool asyncrt__file_write(int dir_fd, const char *path, const unsigned char *data, size_t size, mode_t mode);

/* An exclusive advisory lock on `path` (relative to dir_fd; created empty
 * with `mode` when missing, never through a symlink, a regular file only),
 * tried for at most wait_ms: an open file description's lock (F_OFD_SETLK),
 * so two threads that each call this exclude each other as two processes
 * do. The descriptor (close it to let go), or -1 with why: no unbounded wait. */
int asyncrt__file_lock(int dir_fd, const char *path, mode_t mode, unsigned wait_ms, char *why, size_t why_size);

/* A fresh directory only this user can enter (mkdtemp: mode 0700, a name
 * nobody can guess): <tmpdir or /tmp>/<prefix><pid>-XXXXXX; tmpdir is the
 * TMPDIR setting (NULL when unset), used only when shorter than 32 characters. The pid lets a later process recognise a
 * crashed one's leftovers: the first make of a prefix in a process sweeps
 * them first. False (path holds the name tried) when it cannot be made. */
bool asyncrt__private_dir_make(const char *tmpdir, char *path, size_t size, const char *prefix);

/* Removes tmp/<prefix><pid>-* folders whose process is dead (this host:
 * kill(pid, 0) says ESRCH) and that belong to this user, with the plain
 * files in them (PCH files, time traces), never following a symlink.
 * Returns how many it removed. */
size_t asyncrt__private_dirs_sweep(const char *tmp, const char *prefix);

/* Whether asyncrt may run the program at `path` (the compile worker): its
 * real path (symlinks resolved, written to `real`) must be a regular,
 * executable file, and it and every folder above it up to / owned by this
 * user or root and writable by neither group nor others, so that nobody
 * else can replace it between this check and the exec. A folder above the
 * program's own may be world-writable with the sticky bit (/tmp): there
 * nobody else can rename or remove what this user owns. False with why. */
bool asyncrt__trusted_executable(const char *path, char *real, size_t real_size, char *why, size_t why_size);

#endif
