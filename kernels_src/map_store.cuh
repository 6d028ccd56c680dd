// asyncrt map op: the store modes, one list for the runtime (op_map.c
// includes this file as C: ASYNCRT_MAP_TUNE's store=cs|wb|bulk) and for the
// kernels (map_common.cuh, map_tma.cuh). The generated Op::store names one.
#pragma once

#define ASYNCRT_MAP_STORE_MODES(X)                                              \
    X(CS, "cs")     /* st.global.cs: streaming, the kernel does not read it */ \
    X(WB, "wb")     /* st.global: write-back */                                \
    X(BULK, "bulk") /* bulk stores from a shared-memory stage (TMA path only) */

enum asyncrt_map_store {
#define ASYNCRT_MAP_STORE_ENUM_(name, word) ASYNCRT_MAP_STORE_##name,
    ASYNCRT_MAP_STORE_MODES(ASYNCRT_MAP_STORE_ENUM_)
#undef ASYNCRT_MAP_STORE_ENUM_
    ASYNCRT_MAP_STORE_COUNT
};
