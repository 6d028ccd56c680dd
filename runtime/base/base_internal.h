/* What tests may use of the base layer, beside the public API (the tools
 * use the public API only; tools/common compiles format.c and safe_io.c
 * under its own names). Internal, not libasyncrt's ABI: it is linked from
 * asyncrt_private and may change with the library.
 *   settings.h: asyncrt__settings_read/free, the library's own reading of its
 *     environment. A tool hands the snapshot to the layer that owns a
 *     variable (cache_internal.h's asyncrt__cache_config_read) instead of
 *     calling getenv and interpreting it a second time.
 *   format.h: asyncrt__format, a malloc'd printf.
 *   sha256.h: SHA-256, HMAC and asyncrt__sha256_hex (cache file names).
 *   arch.h: sm_XY / compute_XY parsing and formatting, and
 *     asyncrt__nvrtc_supported_archs (public: asyncrt_arch_*).
 *   nvrtc_loader.h: asyncrt__nvrtc_load, which NVRTC the search order chose
 *     and why (public: asyncrt_nvrtc_info_get).
 *   embedded.h: the files of kernels_src/ compiled into the library.
 *   codec.h: the writer, reader and sealed container of every file format.
 *   safe_io.h: the checked reads, atomic writes, private folders and the door
 *     of a cache folder (its trust check), as the library uses them.
 *   driver.h: the driver table's type and asyncrt__driver_describe (a table
 *     comes from context_internal.h's asyncrt__context_driver; public:
 *     asyncrt_context_driver_proc). */
#ifndef ASYNCRT_BASE_INTERNAL_H
#define ASYNCRT_BASE_INTERNAL_H

#include "arch.h"
#include "codec.h"
#include "driver.h"
#include "embedded.h"
#include "format.h"
#include "nvrtc_loader.h"
#include "safe_io.h"
#include "settings.h"
#include "sha256.h"

#endif
