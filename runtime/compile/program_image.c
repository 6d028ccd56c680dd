/* asyncrt_program_from_image: a program around bytes the caller has (a CUBIN
 * nvcc wrote, PTX from elsewhere), so that a tool loads them through the
 * public API (asyncrt-run --image, asyncrt-bench's image timings). No NVRTC,
 * no cache: the program is only what the caller gave. */
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "codec.h"
#include "context_report.h"
#include "program.h"
#include "try.h"

static asyncrt_status check_image(asyncrt_context *ctx, const unsigned char *data, size_t size, const char *arch,
                                  bool ptx)
{
    bool elf = size >= 4 && memcmp(data, "\x7f" "ELF", 4) == 0;
    if (!ptx && !elf)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                             "image for %s: %zu bytes that are not a CUBIN (an sm_XY target takes an ELF file, "
                             "as nvcc -cubin writes; PTX text needs a compute_XY target)", arch, size);
    const unsigned char *nul = memchr(data, '\0', size);
    if (ptx && (elf || (nul && nul != data + size - 1)))
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                             "image for %s: not PTX text (%s; a compute_XY target takes PTX, a CUBIN needs an "
                             "sm_XY target)", arch, elf ? "an ELF file" : "a NUL byte before its end");
    return ASYNCRT_SUCCESS;
}

static asyncrt_status from_image(asyncrt_context *ctx, const unsigned char *data, size_t size, const char *arch,
                                 asyncrt_program **out)
{
    asyncrt__arch a;
    if (!data || !size)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT, "image is empty: %s",
                             data ? "size is 0" : "data is NULL");
    if (!arch || !asyncrt__arch_parse(arch, &a))
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                             "image arch '%s' is malformed: it must be sm_XY[a|f] (a CUBIN) or compute_XY[a|f] "
                             "(PTX), e.g. sm_90", arch ? arch : "(null)");
    ASYNCRT_TRY(check_image(ctx, data, size, arch, a.ptx));
    bool add_nul = a.ptx && data[size - 1] != '\0';
    asyncrt_program *p = calloc(1, sizeof *p);
    if (!p) return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory for a program");
    asyncrt__arch_format(&a, p->arch, sizeof p->arch);
    p->ptx = a.ptx;
    p->origin = ASYNCRT_ORIGIN_IMAGE;
    p->log = strdup("");
    p->image = malloc(size + add_nul);
    p->image_size = size + add_nul;
    p->expressions = calloc(1, sizeof(char *));
    p->lowered = calloc(1, sizeof(char *));
    if (!p->log || !p->image || !p->expressions || !p->lowered) {
        asyncrt_program_destroy(p);
        return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory for a program of %zu bytes", size);
    }
    memcpy(p->image, data, size);
    if (add_nul) p->image[size] = '\0';
    *out = p;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_program_from_image(asyncrt_context *ctx, const void *data, size_t size, const char *arch,
                                          asyncrt_program **out)
{
    if (!ctx || !out) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, from_image(ctx, data, size, arch, out));
}
