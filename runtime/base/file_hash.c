#define _DEFAULT_SOURCE /* st_mtim, st_ctim */
#include "file_hash.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "sha256.h"

bool asyncrt__file_sha256(const char *path, uint8_t sha[32], struct stat *st)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = fstat(fd, st) == 0 && S_ISREG(st->st_mode);
    asyncrt_sha256 h;
    asyncrt__sha256_init(&h);
    unsigned char buf[65536];
    for (ssize_t n; ok;) {
        n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        asyncrt__sha256_update(&h, buf, (size_t)n);
    }
    struct stat after;
    ok = ok && fstat(fd, &after) == 0 && after.st_size == st->st_size &&
         after.st_mtim.tv_sec == st->st_mtim.tv_sec && after.st_mtim.tv_nsec == st->st_mtim.tv_nsec &&
         after.st_ctim.tv_sec == st->st_ctim.tv_sec && after.st_ctim.tv_nsec == st->st_ctim.tv_nsec;
    close(fd);
    asyncrt__sha256_final(&h, sha);
    return ok;
}
