/* nvJitLink against the NVRTC whose LTO-IR it links (link_jit.h): one older
 * than that NVRTC is refused before it is called, with both versions named
 * (nvJitLink 13.0 would say only "may need newer version of nvJitLink
 * library"). NVRTC is tests/runtime's fake of any version, so the NVRTC is
 * newer or older than every nvJitLink this machine has; each case runs in a
 * child process (NVRTC and nvJitLink are chosen once per process). The
 * LTO-IR is four bytes of its magic number: the check comes before any
 * byte is read by nvJitLink, and a link that passes it is then refused by
 * nvJitLink itself (proving the check let it through). */
#define _GNU_SOURCE /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "asyncrt/link.h"
#include "test_support.h"

static const unsigned char k_ltoir[16] = {0xED, 0x43, 0x4E, 0x7F}; /* LTOIR_MAGIC, little-endian */

/* In the child: 0 when the link's status is as expected. */
static int link_with(const char *nvrtc_version, bool refused)
{
    setenv("ASYNCRT_NVRTC", FAKE_NVRTC_PATH, 1);
    setenv("FAKE_NVRTC_VERSION", nvrtc_version, 1);
    setenv("ASYNCRT_CACHE", "0", 1);
    setenv("ASYNCRT_COMPILE_WORKER", "0", 1); /* nvJitLink's answer here, not from a worker of another NVRTC */
    asyncrt_context *ctx;
    asyncrt_link *link = NULL;
    asyncrt_program *out = NULL;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    asyncrt_status s = asyncrt_link_create(ctx, "sm_90", &link);
    if (s == ASYNCRT_SUCCESS) s = asyncrt_link_add_data(link, k_ltoir, sizeof k_ltoir, ASYNCRT_LINK_LTOIR, "fake.ltoir");
    if (s == ASYNCRT_SUCCESS) s = asyncrt_link_complete(link, &out);
    const char *msg = asyncrt_context_last_error(ctx);
    char want[64];
    snprintf(want, sizeof want, "at least its version, NVRTC %s", nvrtc_version);
    bool ok = refused ? s == ASYNCRT_ERROR_VERSION_MISMATCH && strstr(msg, want) && strstr(msg, "fake.ltoir") &&
                            strstr(msg, "the nvJitLink found is 13.")
                      : s != ASYNCRT_SUCCESS && s != ASYNCRT_ERROR_VERSION_MISMATCH;
    if (!ok) fprintf(stderr, "NVRTC %s: %s: %s\n", nvrtc_version, asyncrt_status_string(s), msg);
    asyncrt_link_destroy(link);
    asyncrt_program_destroy(out);
    asyncrt_context_destroy(ctx);
    return ok ? 0 : 1;
}

static int in_child(const char *nvrtc_version, bool refused)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) _exit(link_with(nvrtc_version, refused));
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static void an_older_nvjitlink_is_refused_before_it_runs(void **state)
{
    (void)state;
    /* Every nvJitLink here is 13.0 (the toolkit's) or 13.1 (the set-up's wheel): older than 13.9. */
    assert_int_equal(in_child("13.9", true), 0);
    /* NVRTC 13.0: any of them fits, so nvJitLink itself answers (and refuses four bytes). */
    assert_int_equal(in_child("13.0", false), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(an_older_nvjitlink_is_refused_before_it_runs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
