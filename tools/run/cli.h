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
#include "exit_codes.h"

/* Exit codes: one table shared by asyncrt-run, asyncrt-probe and
 * asyncrt-bench (tools/common/exit_codes.h), documented in --help and the
 * README. */
enum {
    RUN_EXIT_OK = TOOL_EXIT_OK,
    RUN_EXIT_INTERNAL = TOOL_EXIT_INTERNAL,   /* out of memory, a bug */
    RUN_EXIT_USAGE = TOOL_EXIT_USAGE,         /* the command line is wrong or does not fit the kernel */
    RUN_EXIT_COMPILE = TOOL_EXIT_COMPILE,     /* NVRTC rejected the source or the target */
    RUN_EXIT_NO_DEVICE = TOOL_EXIT_NO_DEVICE, /* no CUDA driver or no such device */
    RUN_EXIT_CUDA = TOOL_EXIT_CUDA,           /* module load, launch, or a fault in the kernel */
    RUN_EXIT_MISMATCH = TOOL_EXIT_CHECK,      /* --expect found differences */
    RUN_EXIT_IO = TOOL_EXIT_IO,               /* a file could not be read or written */
};

#define RUN_MAX_ITEMS 64   /* per kind: buffers, args, includes, ... */
#define RUN_MAX_RANK 8     /* buffer shapes */
#define RUN_MAX_TMAP_RANK 5
#define RUN_NAME_MAX 64
#define RUN_MAX_LAUNCHES 16 /* --then groups */
#define RUN_MAX_ARG_BYTES 4096 /* bytes:/struct: arguments (the kernel parameter limit before CUDA 12.1) */

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

typedef enum run_arg_kind {
    RUN_ARG_SCALAR,   /* TYPE:VALUE */
    RUN_ARG_BUFFER,   /* buf:NAME[+N[B]] */
    RUN_ARG_TMAP,     /* tmap:NAME, the 128-byte map by value */
    RUN_ARG_TMAP_PTR, /* tmapptr:NAME, a device pointer to a copy of the map */
    RUN_ARG_NULL,     /* null: an 8-byte zero pointer */
    RUN_ARG_BYTES,    /* bytes:HEX, raw bytes in memory order */
    RUN_ARG_STRUCT,   /* struct:T:V,T:V,... with natural C alignment */
} run_arg_kind;

typedef struct run_arg_spec {
    run_arg_kind kind;
    run_dtype dtype;          /* scalar */
    long double value;
    int ref;                  /* index into buffers or tmaps */
    uint64_t offset;          /* buf:NAME+N: N elements, or N bytes with a B suffix */
    bool offset_in_bytes;
    size_t size;              /* bytes of the value passed (all kinds) */
    size_t align;             /* its alignment (struct: the largest field's) */
    const char *payload;      /* bytes: the hex digits; struct: the field list */
    const char *text;         /* as given, for messages */
} run_arg_spec;

/* One launch: --then starts the next. Buffers, tensor maps, --out and
 * --expect are shared by all launches of a run. */
typedef struct run_launch_spec {
    const char *kernel;       /* NULL: the file's only kernel */
    unsigned grid[3], block[3], cluster[3];
    uint64_t smem;
    run_arg_spec args[RUN_MAX_ITEMS]; size_t arg_count;
    bool cooperative;         /* grid-wide sync: cooperative launch */
    bool pdl;                 /* programmatic dependent launch after the previous launch */
    bool has_priority;
    int priority;             /* stream priority (lower is higher priority, as in CUDA) */
} run_launch_spec;

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
    /* --expect X=F.npy:rtol=R,atol=A or :exact; negative: not given here */
    double rtol, atol;
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
    run_launch_spec launches[RUN_MAX_LAUNCHES]; size_t launch_count; /* at least 1 */
    run_buffer_spec buffers[RUN_MAX_ITEMS]; size_t buffer_count;
    run_tmap_spec tmaps[RUN_MAX_ITEMS]; size_t tmap_count;
    run_file_ref outs[RUN_MAX_ITEMS]; size_t out_count;
    run_file_ref expects[RUN_MAX_ITEMS]; size_t expect_count;
    char expect_path_storage[RUN_MAX_ITEMS][1024]; /* FILE of FILE:rtol=... */
    double rtol, atol;        /* negative: per-dtype defaults; --expect's own win */
    unsigned repeat, warmup;
    unsigned batch;           /* launches per timed sample (--batch; 1: one event pair per launch) */
    unsigned graph;           /* --graph N: the run captured once, replayed N times and timed (graph.h); 0: off */
    uint64_t bytes;           /* 0: derived from the buffers */
    bool compile_only, json;
    int verbose;
    bool quiet;               /* --quiet: no status line while compiling or linking */
    const char *emit_ptx, *emit_cubin;
    const char *image;        /* --image: load this CUBIN instead of the compiled one */
    const char *bundle;       /* --bundle: the header bundle to compile with */
    /* Linking (link_run.h): the sources after the first, --link files,
     * -Xnvjitlink options, --lto. Any of the first two links the sources. */
    const char *more_sources[RUN_MAX_ITEMS]; size_t more_source_count;
    const char *link_files[RUN_MAX_ITEMS]; size_t link_file_count;
    const char *link_options[RUN_MAX_ITEMS]; size_t link_option_count;
    bool lto;
    const char *emit_lib;     /* --emit-lib: write a kernel-less device library, run nothing (link_run.h) */
    bool all_devices;         /* --devices all: the run on every device, each checked */
} run_cli;

/* Returns RUN_EXIT_OK or RUN_EXIT_USAGE (with a message naming the offending
 * argument and the rule). argv[0] is the program name. */
int run_cli_parse(int argc, char *const *argv, run_cli *out, char *err, size_t err_size);

/* Decimal (leading zeros allowed, never octal) or 0x hex digits of
 * text[0..len); false on anything else or overflow. */
bool run_parse_u64(const char *text, size_t len, uint64_t *out);

/* Writes the value of a bytes: or struct: argument (a->size bytes) to dst.
 * The text was validated by the parser. */
void run_arg_encode(const run_arg_spec *a, void *dst);

/* The --help text. */
const char *run_cli_usage(void);

#endif
