/* What a CUBIN says about each kernel, read from its ELF: the facts that make
 * two images the same kernel (code, registers, stack, shared-memory layout,
 * parameter bank, attributes). The parity harness holds asyncrt's images
 * against nvcc's with it. Reads only, within the bounds it is given. */
#ifndef ASYNCRT_CUBIN_ELF_H
#define ASYNCRT_CUBIN_ELF_H

#include <stddef.h>
#include <stdint.h>

typedef struct asyncrt_cubin_kernel {
    char name[512];
    const uint8_t *text; /* the kernel's code (.text.NAME), inside the image */
    uint64_t text_size, text_flags, text_align;
    uint64_t shared_size, shared_align; /* .nv.shared.NAME: static shared memory; its alignment is
                                           where dynamic shared memory starts */
    uint64_t const0_size;               /* .nv.constant0.NAME: the parameter bank */
    uint32_t regs, frame, min_stack, max_stack; /* from .nv.info (EIATTR_REGCOUNT, _FRAME_SIZE, ...) */
    uint8_t info[1024];                 /* .nv.info.NAME records, symbol indices zeroed */
    size_t info_size;
} asyncrt_cubin_kernel;

/* Fills up to `cap` kernels; returns how many the image has, or -1 with
 * `why` when it is not a CUBIN this reader understands. */
int asyncrt__cubin_kernels(const void *image, size_t size, asyncrt_cubin_kernel *out, size_t cap, char *why, size_t why_size);

/* Compares two CUBINs kernel by kernel; writes one line per difference to
 * `report` (NUL-terminated, truncated to report_size) and returns the number
 * of differences, or -1 when either cannot be read (or out of memory).
 * `facts` says how much must agree: the memory layout a launch depends on
 * (static shared size, its alignment, which is where dynamic shared memory
 * starts, and the parameter bank), or that and the resources (registers,
 * stack), or everything (also the code bytes and attributes). Two
 * compilers' images of one source (NVRTC's and nvcc's) can be asked for the
 * layout; NVRTC's front end differs from nvcc's, and so at times do
 * registers and code. */
typedef enum asyncrt_cubin_facts { ASYNCRT_CUBIN_LAYOUT, ASYNCRT_CUBIN_RESOURCES, ASYNCRT_CUBIN_ALL } asyncrt_cubin_facts;
int asyncrt__cubin_compare(const void *a, size_t a_size, const void *b, size_t b_size, asyncrt_cubin_facts facts,
                           char *report, size_t report_size);

#endif
