/* asyncrt: what every public header needs for the ABI.
 *
 * ASYNCRT_EXTERN marks the functions libasyncrt exports (libuv's
 * UV_EXTERN). The library is built with hidden visibility, so a function
 * without it is internal, whatever its name; runtime/asyncrt.sym lists the
 * exported set and tests/abi/check_abi.sh keeps the three in step.
 *
 * ASYNCRT_SIZED_INIT(T) starts a struct that grows (docs/deployment.md, "ABI and
 * versioning"): its first member, `size_t size`, is sizeof(T) as this
 * program was built, everything else zero. Each such struct has its own
 * name for it (ASYNCRT_COMPILE_OPTIONS_INIT, ...); with designated
 * initializers write `asyncrt_compile_options o = {.size = sizeof o, ...}`. */
#ifndef ASYNCRT_EXPORT_H
#define ASYNCRT_EXPORT_H

#if defined(__GNUC__) && __GNUC__ >= 4
#define ASYNCRT_EXTERN __attribute__((visibility("default")))
#else
#define ASYNCRT_EXTERN
#endif

#if defined(__cplusplus) /* a value, so that no member goes uninitialized (-Wmissing-field-initializers) */
#define ASYNCRT_SIZED_INIT(T) ([] { T asyncrt_sized_ = {}; asyncrt_sized_.size = sizeof(T); return asyncrt_sized_; }())
#else
#define ASYNCRT_SIZED_INIT(T) {.size = sizeof(T)}
#endif

#endif
