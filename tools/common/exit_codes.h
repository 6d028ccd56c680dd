/* One exit-code table for asyncrt-run, asyncrt-probe, asyncrt-bench,
 * asyncrt-cache and asyncrt-bundle, so that scripts can treat "no driver"
 * (and everything else) the same way whichever tool they call. Each tool's --help prints
 * TOOL_EXIT_CODES_HELP, then what each code means for it. */
#ifndef ASYNCRT_TOOL_EXIT_CODES_H
#define ASYNCRT_TOOL_EXIT_CODES_H

enum {
    TOOL_EXIT_OK = 0,
    TOOL_EXIT_INTERNAL = 1,  /* out of memory, a bug */
    TOOL_EXIT_USAGE = 2,     /* a bad command line, or one that does not fit the kernel */
    TOOL_EXIT_COMPILE = 3,   /* NVRTC rejected the source or the target */
    TOOL_EXIT_NO_DEVICE = 4, /* no CUDA driver, or no (such) device */
    TOOL_EXIT_CUDA = 5,      /* a driver call, module load, launch or kernel fault */
    TOOL_EXIT_CHECK = 6,     /* a result or file was checked and is wrong (run --expect, probe --check, cache verify) */
    TOOL_EXIT_IO = 7,        /* a file or directory could not be read, written or used */
};

#define TOOL_EXIT_CODES_HELP                                                                  \
    "Exit codes (the same for asyncrt-run, asyncrt-probe, asyncrt-bench,\n"                   \
    "asyncrt-cache and asyncrt-bundle)\n"                                                    \
    "  0 success                       4 no CUDA driver, or no (such) device\n"               \
    "  1 internal error (memory)       5 driver call, module load, launch, fault\n"           \
    "  2 usage: bad command line       6 a checked result or file is wrong\n"                 \
    "  3 compile error                 7 a file or directory could not be read,\n"            \
    "                                    written or used\n"

#endif
