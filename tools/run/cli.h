/* asyncrt-run's command line. run_cli_parse is a pure function over argv:
 * it fills a run_cli (pointing into argv for paths) or writes a message, so
 * it is tested, and fuzzed, without a GPU or files. */
#ifndef ASYNCRT_RUN_CLI_H
#define ASYNCRT_RUN_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asyncrt/tensormap.h"
#include "dtype.h"

/* Exit codes, documented in --help and the README. */
enum {
    RUN_EXIT_OK = 0,
    RUN_EXIT_INTERNAL = 1,   /* out of memory, a bug */
    RUN_EXIT_USAGE = 2,      /* the command line is wrong or does not fit the kernel */
    RUN_EXIT_COMPILE = 3,    /* NVRTC rejected the source or the target */
    RUN_EXIT_NO_DEVICE = 4,  /* no CUDA driver or no such device */
    RUN_EXIT_CUDA = 5,       /* module load, launch, or a fault in the kernel */
    RUN_EXIT_MISMATCH = 6,   /* --expect found differences */
    RUN_EXIT_IO = 7,         /* a file could not be read or written */
};

#define RUN_MAX_ITEMS 64   /* per kind: buffers, args, includes, ... */
#define RUN_MAX_RANK 8     /* buffer shapes */
#define RUN_MAX_TMAP_RANK 5
#define RUN_NAME_MAX 64

typedef enum run_init { RUN_INIT_ZEROS, RUN_INIT_FILL, RUN_INIT_IOTA, RUN_INIT_RAND, RUN_INIT_POISON, RUN_INIT_NPY } run_init;

typedef struct run_buffer_spec {
    char name[RUN_NAME_MAX];
    bool from_file;           /* x=npy:FILE: dtype and shape come from the file */
    run_dtype dtype;
    int rank;
    uint64_t shape[RUN_MAX_RANK];
    uint64_t count;           /* product of shape (0 until known for from_file) */
    run_init init;
    long double a, b;         /* fill: a; iota: start a, step b; rand: [a, b) */
    uint64_t seed;
    const char *path;         /* npy */
} run_buffer_spec;

typedef enum run_arg_kind { RUN_ARG_SCALAR, RUN_ARG_BUFFER, RUN_ARG_TMAP } run_arg_kind;

typedef struct run_arg_spec {
    run_arg_kind kind;
    run_dtype dtype;          /* scalar */
    long double value;
    int ref;                  /* index into buffers or tmaps */
    const char *text;         /* as given, for messages */
} run_arg_spec;

/* Tensor-map lists are in the driver's order: innermost dimension first.
 * Enumerated settings use the tensormap module's names and parsers. Limits
 * (box 1..256 and so on) are left to asyncrt_tensormap_encode's validation so
 * that its named-rule messages reach the user. */
typedef struct run_tmap_spec {
    char name[RUN_NAME_MAX];
    int buffer;
    int rank;                 /* from box */
    uint64_t box[RUN_MAX_TMAP_RANK];
    int dims_rank, strides_rank, estrides_rank; /* 0 when not given */
    uint64_t dims[RUN_MAX_TMAP_RANK];
    uint64_t strides[RUN_MAX_TMAP_RANK];        /* bytes, for dims 1..rank-1 */
    uint64_t estrides[RUN_MAX_TMAP_RANK];
    bool has_dtype;                             /* else derived from the buffer's */
    asyncrt_tensormap_dtype dtype;
    asyncrt_tensormap_swizzle swizzle;          /* defaults: none, none, none, zero */
    asyncrt_tensormap_interleave interleave;
    asyncrt_tensormap_l2_promotion l2;
    asyncrt_tensormap_oob_fill oob;
} run_tmap_spec;

typedef struct run_file_ref {
    int buffer;
    const char *path;
} run_file_ref;

typedef struct run_cli {
    bool help, version;
    const char *source;       /* path, or "-" for stdin */
    const char *arch;         /* "auto" unless given */
    int device;
    const char *std;          /* NULL: the library's default */
    const char *includes[RUN_MAX_ITEMS]; size_t include_count;
    const char *defines[RUN_MAX_ITEMS]; size_t define_count;
    const char *nvrtc_options[RUN_MAX_ITEMS]; size_t nvrtc_option_count;
    const char *kernel;       /* NULL: the file's only kernel */
    unsigned grid[3], block[3], cluster[3];
    uint64_t smem;
    run_buffer_spec buffers[RUN_MAX_ITEMS]; size_t buffer_count;
    run_arg_spec args[RUN_MAX_ITEMS]; size_t arg_count;
    run_tmap_spec tmaps[RUN_MAX_ITEMS]; size_t tmap_count;
    run_file_ref outs[RUN_MAX_ITEMS]; size_t out_count;
    run_file_ref expects[RUN_MAX_ITEMS]; size_t expect_count;
    double rtol, atol;        /* negative: per-dtype defaults */
    unsigned repeat, warmup;
    uint64_t bytes;           /* 0: derived from the buffers */
    bool compile_only, json;
    int verbose;
    const char *emit_ptx, *emit_cubin;
} run_cli;

/* Returns RUN_EXIT_OK or RUN_EXIT_USAGE (with a message naming the offending
 * argument and the rule). argv[0] is the program name. */
int run_cli_parse(int argc, char *const *argv, run_cli *out, char *err, size_t err_size);

/* The --help text. */
const char *run_cli_usage(void);

#endif
