/* asyncrt: the umbrella header. */
#ifndef ASYNCRT_ASYNCRT_H
#define ASYNCRT_ASYNCRT_H

#include "asyncrt/status.h"
#include "asyncrt/version.h"
#include "asyncrt/runtime.h"
#include "asyncrt/bundle.h"
#include "asyncrt/cache.h"
#include "asyncrt/link.h"
#include "asyncrt/ops.h"
#include "asyncrt/tile_ops.h"
#include "asyncrt/tensormap.h"
#include "asyncrt/graph.h"

#endif
