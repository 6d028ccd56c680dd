/* libFuzzer target: the tensor-map validator. The input's bytes become the
 * descriptor (any enum or count a C caller could pass); validation, the
 * per-architecture rules, the warnings (analyze), the helpers and dump must
 * cope with all of them. */
#include <stdlib.h>
#include <string.h>

#include "asyncrt/tensormap.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void check_msg(asyncrt_status st, const char *msg)
{
    if (st != ASYNCRT_SUCCESS && st != ASYNCRT_ERROR_TENSORMAP_INVALID) abort();
    if (st != ASYNCRT_SUCCESS && msg[0] == '\0') abort(); /* every rejection names a rule */
}

static void check_finding(const asyncrt_tensormap_finding *f)
{
    if (!f->rule || f->message[0] == '\0' || !memchr(f->message, '\0', sizeof f->message)) abort();
}

/* analyze agrees with validate on errors; warnings only without errors, each
 * named; warnings_as_errors fails exactly when there is a warning. */
static void check_analyze(const asyncrt_tensormap_im2col_desc *im, int sm, const unsigned char *data, size_t size)
{
    static asyncrt_tensormap_report r = ASYNCRT_TENSORMAP_REPORT_INIT, strict = ASYNCRT_TENSORMAP_REPORT_INIT;
    asyncrt_tensormap_check_options opts = {.size = sizeof opts, .sm = sm};
    if (size > sizeof *im) opts.smem_per_block = (uint64_t)data[sizeof *im] << 10; /* 0..255 KiB */
    for (int kind = 0; kind < 2; kind++) {
        char msg[1024];
        asyncrt_status v = kind ? asyncrt_tensormap_validate_im2col(im, msg, sizeof msg)
                                : asyncrt_tensormap_validate_for_sm(&im->tiled, sm, msg, sizeof msg);
        if (kind) opts.sm = 0; /* validate_im2col has no sm */
        asyncrt_status a = kind ? asyncrt_tensormap_analyze_im2col(im, &opts, &r)
                                : asyncrt_tensormap_analyze(&im->tiled, &opts, &r);
        if (a != v) abort();
        if (a != ASYNCRT_SUCCESS) {
            check_finding(&r.error);
            if (strcmp(r.error.message, msg) != 0 || r.warning_count != 0) abort();
        } else if (r.error.rule) {
            abort();
        }
        for (unsigned i = 0; i < r.warning_count && i < ASYNCRT_TENSORMAP_MAX_WARNINGS; i++)
            check_finding(&r.warnings[i]);
        opts.warnings_as_errors = true;
        asyncrt_status s = kind ? asyncrt_tensormap_analyze_im2col(im, &opts, &strict)
                                : asyncrt_tensormap_analyze(&im->tiled, &opts, &strict);
        opts.warnings_as_errors = false;
        bool want_fail = a != ASYNCRT_SUCCESS || r.warning_count > 0;
        if ((s != ASYNCRT_SUCCESS) != want_fail || strict.warning_count != r.warning_count) abort();
        if (want_fail) check_finding(&strict.error);
    }
    if (asyncrt_tensormap_analyze(NULL, &opts, &r) != ASYNCRT_ERROR_INVALID_ARGUMENT) abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    asyncrt_tensormap_im2col_desc im;
    if (size < 1) return 0;
    int sm = data[0];
    data++, size--;
    memset(&im, 0, sizeof im);
    memcpy(&im, data, size < sizeof im ? size : sizeof im);
    const asyncrt_tensormap_desc *d = &im.tiled;
    char msg[1024];

    msg[0] = '\0';
    asyncrt_status st = asyncrt_tensormap_validate(d, msg, sizeof msg);
    check_msg(st, msg);
    bool valid = st == ASYNCRT_SUCCESS;
    msg[0] = '\0';
    check_msg(asyncrt_tensormap_validate_for_sm(d, sm, msg, sizeof msg), msg);
    msg[0] = '\0';
    check_msg(asyncrt_tensormap_validate_im2col(&im, msg, sizeof msg), msg);
    check_analyze(&im, sm, data, size);
    /* Small buffers must still be NUL-terminated. */
    char tiny[7];
    asyncrt_tensormap_validate(d, tiny, sizeof tiny);
    if (!memchr(tiny, '\0', sizeof tiny)) abort();

    size_t box = asyncrt_tensormap_box_bytes(d);
    if (valid && box == 0) abort();
    (void)asyncrt_tensormap_widest_swizzle(d->dtype, d->box_dim[0]);
    (void)asyncrt_tensormap_dtype_bits(d->dtype);

    size_t need = asyncrt_tensormap_dump(d, NULL, 0);
    char *text = malloc(need + 1);
    if (text) {
        if (asyncrt_tensormap_dump(d, text, need + 1) != need || strlen(text) != need) abort();
        free(text);
    }
    char small[16];
    asyncrt_tensormap_dump_im2col(&im, small, sizeof small);
    if (!memchr(small, '\0', sizeof small)) abort();
    need = asyncrt_tensormap_dump_im2col(&im, NULL, 0);
    text = malloc(need + 1);
    if (text) {
        if (asyncrt_tensormap_dump_im2col(&im, text, need + 1) != need) abort();
        free(text);
    }
    return 0;
}
