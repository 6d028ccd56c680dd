#define _GNU_SOURCE /* realpath, S_ISVTX, F_OFD_SETLK */
#include "safe_io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uid_t (*asyncrt__safe_io_euid)(void) = geteuid;

static bool in_group(gid_t gid)
{
    if (gid == getegid()) return true;
    gid_t groups[256];
    int n = getgroups(256, groups);
    for (int i = 0; i < n; i++)
        if (groups[i] == gid) return true;
    return false;
}

/* Whether uid belongs to group gid by the user database: its primary group,
 * or a member's list (getgrouplist, as login sets a user's groups). A uid
 * with no entry belongs to none. */
static bool uid_in_group(uid_t uid, gid_t gid)
{
    long size = sysconf(_SC_GETPW_R_SIZE_MAX);
    size = size < 16384 ? 16384 : size;
    char *buf = malloc((size_t)size);
    struct passwd pw, *found = NULL;
    bool member = false;
    if (buf && getpwuid_r(uid, &pw, buf, (size_t)size, &found) == 0 && found) {
        member = pw.pw_gid == gid;
        gid_t *groups = NULL;
        for (int n = 64, tries = 0; !member && tries < 4; tries++) {
            gid_t *grown = realloc(groups, (size_t)n * sizeof *groups);
            if (!grown) break;
            groups = grown;
            int want = n;
            if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &want) >= 0) {
                for (int i = 0; i < want && !member; i++) member = groups[i] == gid;
                break;
            }
            n = want > n ? want : 2 * n; /* too small: it said how many */
        }
        free(groups);
    }
    free(buf);
    return member;
}

/* A shared cache's directory and KEY: owned by this user, by root, or by a
 * member of the directory's group. Not by anyone else, even where the
 * directory's group is the team's: a set-gid parent gives everything made in
 * it the team's group, whoever makes it. False with why. */
static bool team_owned(const struct stat *st, gid_t team, const char *path, char *why, size_t why_size)
{
    uid_t me = asyncrt__safe_io_euid();
    if (st->st_uid == me || st->st_uid == 0 || uid_in_group(st->st_uid, team)) return true;
    snprintf(why, why_size, "%s is owned by uid %u, who is neither this user (uid %u), root, nor a member of the "
             "directory's group %u; a shared cache and its KEY must belong to the team", path,
             (unsigned)st->st_uid, (unsigned)me, (unsigned)team);
    return false;
}

/* mkdir -p, the components above `dir` 0700 where it creates them; *created:
 * it made `dir` itself (its mode is set on the opened directory, not here:
 * a chmod by name would follow whatever was put at the name meanwhile).
 * 0, or the errno of the mkdir that failed, with that component in `failed`
 * (the caller's lstat would otherwise replace EACCES by ENOENT). */
static int make_dirs(const char *dir, mode_t mode, bool *created, char *failed, size_t failed_size)
{
    *created = false;
    snprintf(failed, failed_size, "%s", dir);
    char *copy = strdup(dir);
    if (!copy) return ENOMEM;
    int err = 0;
    for (char *p = copy + 1; !err; p++) {
        bool last = *p == '\0';
        if (!last && *p != '/') continue;
        *p = '\0';
        if (mkdir(copy, last ? mode : 0700) == 0) {
            *created = last;
        } else if (errno != EEXIST) {
            err = errno;
            snprintf(failed, failed_size, "%s", copy);
        }
        if (last) break;
        *p = '/';
    }
    free(copy);
    return err;
}

void asyncrt__mkdir_why(const char *dir, int err, char *why, size_t why_size)
{
    if (err != EACCES && err != EPERM) {
        snprintf(why, why_size, "cannot create %s: %s", dir, strerror(err));
        return;
    }
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", dir);
    char *slash = strrchr(parent, '/');
    while (slash && slash > parent && slash[1] == '\0') { /* "a/b/" names b */
        *slash = '\0';
        slash = strrchr(parent, '/');
    }
    if (!slash) snprintf(parent, sizeof parent, ".");
    else slash[slash == parent] = '\0'; /* "/x": the parent is "/" */
    /* A parent that cannot even be looked into: a folder above it is closed. */
    bool searchable = faccessat(AT_FDCWD, parent, X_OK, AT_EACCESS) == 0 || errno != EACCES;
    snprintf(why, why_size, "permission denied creating %s (parent %s is not %s by uid %u)", dir, parent,
             searchable ? "writable" : "searchable", (unsigned)geteuid());
}

static bool load_key(int dir_fd, const char *dir, const struct stat *dir_st, uint8_t key[32], char *why,
                     size_t why_size);

/* The checks on the opened directory itself (fstat), so what was checked is
 * what every later openat sees, whatever happens to the path. */
static bool trusted(int fd, const char *dir, bool shared, uint8_t mac_key[32], char *why, size_t why_size)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_size, "cannot stat %s: %s", dir, strerror(errno));
        return false;
    }
    uid_t me = asyncrt__safe_io_euid();
    unsigned mode = st.st_mode & 07777;
    if (!shared) {
        if (st.st_uid != me) {
            snprintf(why, why_size, "%s is owned by uid %u, not by this user (uid %u); set ASYNCRT_CACHE_SHARED=1 "
                     "for a team cache", dir, (unsigned)st.st_uid, (unsigned)me);
            return false;
        }
        if (mode & 022) {
            snprintf(why, why_size, "%s has mode %04o: writable by %s; it must not be (chmod go-w), or set "
                     "ASYNCRT_CACHE_SHARED=1 for a team cache", dir, mode, mode & 002 ? "others" : "its group");
            return false;
        }
        return true;
    }
    if (mode & 002) {
        snprintf(why, why_size, "%s has mode %04o: writable by others, refused even as a shared cache", dir, mode);
        return false;
    }
    if ((mode & 020) && !(mode & S_ISGID)) {
        snprintf(why, why_size, "%s has mode %04o: a group-writable shared cache needs the setgid bit (chmod g+s)",
                 dir, mode);
        return false;
    }
    if (st.st_uid != me && !in_group(st.st_gid)) {
        snprintf(why, why_size, "%s belongs to uid %u, group %u, and this user is in neither", dir,
                 (unsigned)st.st_uid, (unsigned)st.st_gid);
        return false;
    }
    if (!team_owned(&st, st.st_gid, dir, why, why_size)) return false;
    return load_key(fd, dir, &st, mac_key, why, why_size);
}

int asyncrt__dir_open_door(const char *dir, bool shared, bool create, uint8_t mac_key[32], bool *is_trusted,
                            char *why, size_t why_size)
{
    struct stat st;
    *is_trusted = false;
    bool created = false;
    mode_t mode = shared ? 02770 : 0700;
    char failed[PATH_MAX];
    int made = create ? make_dirs(dir, mode, &created, failed, sizeof failed) : 0;
    if (made && lstat(dir, &st) != 0) {
        asyncrt__mkdir_why(failed, made, why, why_size);
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    /* The mode mkdir's umask took away, on what was opened: never through a
     * symlink, and only on a directory this user owns (fchmod refuses others). */
    if (fd >= 0 && created && fchmod(fd, mode) != 0) {
        snprintf(why, why_size, "cannot set mode %04o on %s: %s", (unsigned)mode, dir, strerror(errno));
        close(fd);
        return -1;
    }
    if (fd < 0) {
        int err = errno;
        if (err == ELOOP || (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)))
            snprintf(why, why_size, "%s is a symbolic link; the cache directory must be a real directory", dir);
        else if (err == ENOTDIR)
            snprintf(why, why_size, "%s is not a directory", dir);
        else
            snprintf(why, why_size, "cannot open %s: %s", dir, strerror(err));
        return -1;
    }
    *is_trusted = trusted(fd, dir, shared, mac_key, why, why_size);
    return fd;
}

bool asyncrt__dir_check_trusted(int dir_fd, const char *dir, bool shared, uint8_t mac_key[32], char *why,
                             size_t why_size)
{
    struct stat st;
    if (fstat(dir_fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, why_size, "%s: descriptor %d is not an open directory", dir, dir_fd);
        return false;
    }
    return trusted(dir_fd, dir, shared, mac_key, why, why_size);
}

int asyncrt__dir_open_trusted(const char *dir, bool shared, uint8_t mac_key[32], char *why, size_t why_size)
{
    bool ok;
    int fd = asyncrt__dir_open_door(dir, shared, true, mac_key, &ok, why, why_size);
    if (fd >= 0 && !ok) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static bool read_all(int fd, unsigned char *data, size_t size)
{
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, data + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false; /* shrank under us: refused like a truncated file */
        got += (size_t)n;
    }
    return true;
}

unsigned char *asyncrt__file_read(int dir_fd, const char *path, size_t max, bool touch, size_t *size,
                                       char *why, size_t why_size)
{
    why[0] = '\0';
    int fd;
    do fd = openat(dir_fd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        if (errno == ELOOP) snprintf(why, why_size, "is a symbolic link");
        else if (errno != ENOENT) snprintf(why, why_size, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    unsigned char *data = NULL;
    if (fstat(fd, &st) != 0) snprintf(why, why_size, "cannot stat: %s", strerror(errno));
    else if (!S_ISREG(st.st_mode))
        snprintf(why, why_size, "is not a regular file (%s)",
                 S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory" : "a special file");
    else if (st.st_size <= 0 || (uint64_t)st.st_size > max)
        snprintf(why, why_size, "has an implausible size (%lld bytes; at most %zu)", (long long)st.st_size, max);
    else if (!(data = malloc((size_t)st.st_size)))
        snprintf(why, why_size, "out of memory for %lld bytes", (long long)st.st_size);
    else if (!read_all(fd, data, (size_t)st.st_size)) {
        snprintf(why, why_size, "read failed or the file shrank");
        free(data);
        data = NULL;
    } else {
        *size = (size_t)st.st_size;
        if (touch) futimens(fd, NULL); /* best effort: recency for the LRU */
    }
    close(fd);
    return data;
}

unsigned char *asyncrt__file_read_private(const char *path, size_t max, size_t *size, char *why, size_t why_size)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "%s: %s", path, errno == ELOOP ? "is a symbolic link" : strerror(errno));
        return NULL;
    }
    struct stat st;
    unsigned char *data = NULL;
    uid_t me = asyncrt__safe_io_euid();
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) snprintf(why, why_size, "%s is not a regular file", path);
    else if (st.st_uid != me)
        snprintf(why, why_size, "%s is owned by uid %u, not by this user (uid %u)", path, (unsigned)st.st_uid,
                 (unsigned)me);
    else if (st.st_mode & 077)
        snprintf(why, why_size, "%s has mode %04o: group or others may use it; it must be 0600 (chmod 600)", path,
                 (unsigned)(st.st_mode & 07777));
    else if (st.st_size <= 0 || (uint64_t)st.st_size > max)
        snprintf(why, why_size, "%s has an implausible size (%lld bytes; 1 to %zu)", path, (long long)st.st_size, max);
    else if (!(data = malloc((size_t)st.st_size)) || !read_all(fd, data, (size_t)st.st_size)) {
        snprintf(why, why_size, "cannot read %s", path);
        free(data);
        data = NULL;
    } else {
        *size = (size_t)st.st_size;
    }
    close(fd);
    return data;
}

static bool write_all(int fd, const unsigned char *data, size_t size)
{
    while (size) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        size -= (size_t)n;
    }
    return true;
}

/* [<dir>/].tmp.<host>.<pid>.<random>, beside path: the host and pid let the
 * next store recognise a dead writer's leftovers (cache_store.c). */
static char *temp_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path) + 1 : 0;
    char host[64] = "host";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == '/' || *c == '.') *c = '_';
    unsigned rnd = 0;
    if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != sizeof rnd) rnd = (unsigned)clock();
    size_t n = strlen(path) + strlen(host) + 64;
    char *tmp = malloc(n);
    if (tmp) snprintf(tmp, n, "%.*s.tmp.%s.%ld.%08x", dir_len, path, host, (long)getpid(), rnd);
    return tmp;
}

bool asyncrt__file_write(int dir_fd, const char *path, const unsigned char *data, size_t size, mode_t mode)
{
    char *tmp = temp_name(path);
    if (!tmp) {
        errno = ENOMEM;
        return false;
    }
    int fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    bool ok = fd >= 0 && fchmod(fd, mode) == 0 && write_all(fd, data, size);
    int err = errno;
    if (fd >= 0 && close(fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (ok && renameat(dir_fd, tmp, dir_fd, path) != 0) {
        ok = false;
        err = errno;
    }
    if (!ok && fd >= 0) unlinkat(dir_fd, tmp, 0);
    free(tmp);
    errno = err;
    return ok;
}

/* The team key: created once by whoever comes first (link() refuses to
 * replace, so two creators agree on one), checked on every use. */
static bool load_key(int dir_fd, const char *dir, const struct stat *dir_st, uint8_t key[32], char *why,
                     size_t why_size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/KEY", dir);
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = openat(dir_fd, "KEY", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
            struct stat st;
            bool ok = fstat(fd, &st) == 0;
            if (!ok || !S_ISREG(st.st_mode) || st.st_size != 32)
                snprintf(why, why_size, "%s is not a 32-byte regular file", path);
            else if (st.st_mode & 0027)
                snprintf(why, why_size, "%s has mode %04o: it must not be group-writable or accessible to others",
                         path, (unsigned)(st.st_mode & 07777));
            else if (st.st_gid != dir_st->st_gid)
                snprintf(why, why_size, "%s belongs to group %u, the directory to group %u", path,
                         (unsigned)st.st_gid, (unsigned)dir_st->st_gid);
            else if (!team_owned(&st, dir_st->st_gid, path, why, why_size))
                ; /* why is said */
            else if (!read_all(fd, key, 32))
                snprintf(why, why_size, "cannot read %s", path);
            else {
                close(fd);
                return true;
            }
            close(fd);
            return false;
        }
        if (errno != ENOENT || attempt) break;
        uint8_t fresh[32];
        if (getrandom(fresh, sizeof fresh, 0) != (ssize_t)sizeof fresh) break;
        char *tmp = temp_name("KEY");
        int out = tmp ? openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0440) : -1;
        bool written = out >= 0 && fchmod(out, 0440) == 0 && write_all(out, fresh, sizeof fresh);
        if (out >= 0) close(out);
        if (written && linkat(dir_fd, tmp, dir_fd, "KEY", 0) != 0 && errno != EEXIST) written = false;
        if (tmp) unlinkat(dir_fd, tmp, 0);
        free(tmp);
        if (!written) break;
    }
    snprintf(why, why_size, "cannot read or create the shared cache key %s: %s", path, strerror(errno));
    return false;
}

/* Removes a folder a dead process of this user left: its plain files, then
 * itself. Never follows a symbolic link; a folder of someone else's, or
 * holding anything but files, stays. */
static bool remove_left_dir(int parent, const char *name)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0) return false;
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
        close(fd);
        return false;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return false;
    }
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
    return unlinkat(parent, name, AT_REMOVEDIR) == 0;
}

size_t asyncrt__private_dirs_sweep(const char *tmp, const char *prefix)
{
    int parent = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = parent >= 0 ? fdopendir(parent) : NULL;
    if (!d) {
        if (parent >= 0) close(parent);
        return 0;
    }
    size_t n = strlen(prefix), removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, prefix, n) != 0) continue;
        char *end;
        const char *digits = e->d_name + n;
        long pid = strtol(digits, &end, 10);
        if (end == digits || *digits == '-' || *end != '-' || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive (or not ours to ask) */
        removed += remove_left_dir(dirfd(d), e->d_name);
    }
    closedir(d);
    return removed;
}

/* Each (folder, prefix) is swept once per process, by its first make. */
static bool first_make(const char *tmp, const char *prefix)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char seen[8][96];
    static size_t count;
    char key[96];
    snprintf(key, sizeof key, "%s/%s", tmp, prefix);
    pthread_mutex_lock(&lock);
    bool first = true;
    for (size_t i = 0; i < count && i < 8 && first; i++) first = strcmp(seen[i], key) != 0;
    if (first) snprintf(seen[count++ % 8], sizeof seen[0], "%s", key);
    pthread_mutex_unlock(&lock);
    return first;
}

bool asyncrt__private_dir_make(const char *tmpdir, char *path, size_t size, const char *prefix)
{
    const char *tmp = tmpdir && *tmpdir && strlen(tmpdir) < 32 ? tmpdir : "/tmp";
    if (first_make(tmp, prefix)) asyncrt__private_dirs_sweep(tmp, prefix);
    int n = snprintf(path, size, "%s/%s%ld-XXXXXX", tmp, prefix, (long)getpid());
    return n > 0 && (size_t)n < size && mkdtemp(path) != NULL;
}

/* One component of a program's real path: owner and mode (trusted_executable). */
static bool trusted_node(const char *path, bool file, bool may_be_sticky, char *why, size_t why_size)
{
    struct stat st;
    uid_t me = asyncrt__safe_io_euid();
    if (lstat(path, &st) != 0) {
        snprintf(why, why_size, "cannot stat %s: %s", path, strerror(errno));
        return false;
    }
    unsigned mode = st.st_mode & 07777;
    if (file && !S_ISREG(st.st_mode)) snprintf(why, why_size, "%s is not a regular file", path);
    else if (file && (!(mode & 0111) || access(path, X_OK) != 0))
        snprintf(why, why_size, "%s is not executable (mode %04o)", path, mode);
    else if (st.st_uid != me && st.st_uid != 0)
        snprintf(why, why_size, "%s is owned by uid %u, neither this user (uid %u) nor root", path,
                 (unsigned)st.st_uid, (unsigned)me);
    else if ((mode & 022) && !(may_be_sticky && S_ISDIR(st.st_mode) && (mode & S_ISVTX)))
        snprintf(why, why_size, "%s has mode %04o: writable by %s", path, mode, mode & 002 ? "others" : "its group");
    else
        return true;
    return false;
}

bool asyncrt__trusted_executable(const char *path, char *real, size_t real_size, char *why, size_t why_size)
{
    char resolved[PATH_MAX];
    if (!realpath(path, resolved)) {
        snprintf(why, why_size, "cannot resolve %s: %s", path, strerror(errno));
        return false;
    }
    if (strlen(resolved) >= real_size) {
        snprintf(why, why_size, "%s: path too long", resolved);
        return false;
    }
    if (!trusted_node(resolved, true, false, why, why_size)) return false;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", resolved);
    for (char *slash = strrchr(dir, '/'); slash; slash = strrchr(dir, '/')) {
        bool own_folder = strcmp(dir, resolved) == 0;
        slash[slash == dir] = '\0'; /* "/usr/x" -> "/usr"; "/usr" -> "/" */
        if (!trusted_node(dir, false, !own_folder, why, why_size)) return false;
        if (slash == dir) break;
    }
    snprintf(real, real_size, "%s", resolved);
    return true;
}

int asyncrt__file_lock(int dir_fd, const char *path, mode_t mode, unsigned wait_ms, char *why, size_t why_size)
{
    int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK; /* O_NONBLOCK: never hang on a FIFO */
    int fd = openat(dir_fd, path, flags | O_CREAT | O_EXCL, mode);
    if (fd >= 0) fchmod(fd, mode); /* the umask's cut undone: a team's members all lock it */
    else if (errno == EEXIST) fd = openat(dir_fd, path, flags);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "cannot open the lock file %s: %s", path, fd < 0 ? strerror(errno) : "not a regular file");
        if (fd >= 0) close(fd);
        return -1;
    }
    struct timespec start, now, pause = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        /* An open file description's lock: exclusive between processes and
         * between two opens in one process (threads), also over NFS. */
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (fcntl(fd, F_OFD_SETLK, &fl) == 0) return fd;
        if (errno != EAGAIN && errno != EACCES && errno != EINTR) {
            snprintf(why, why_size, "cannot lock %s: %s", path, strerror(errno));
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long ms = (now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (ms >= (long long)wait_ms) {
            snprintf(why, why_size, "%s is held by another writer for more than %u ms", path, wait_ms);
            break;
        }
        nanosleep(&pause, NULL);
        if (pause.tv_nsec < 8000000) pause.tv_nsec *= 2; /* 1, 2, 4, 8 ms */
    }
    close(fd);
    return -1;
}
