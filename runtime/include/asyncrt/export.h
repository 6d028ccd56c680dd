/* asyncrt: ASYNCRT_EXTERN marks the functions libasyncrt exports (libuv's
 * UV_EXTERN). The library is built with hidden visibility, so a function
 * without it is internal, whatever its name; runtime/asyncrt.sym lists the
 * exported set and tests/abi/check_abi.sh keeps the three in step. */
#ifndef ASYNCRT_EXPORT_H
#define ASYNCRT_EXPORT_H

#if defined(__GNUC__) && __GNUC__ >= 4
#define ASYNCRT_EXTERN __attribute__((visibility("default")))
#else
#define ASYNCRT_EXTERN
#endif

#endif
