/* The peer matrix: for every ordered pair of devices, the driver's peer
 * answers and a measured cuMemcpyPeerAsync bandwidth. */
#ifndef ASYNCRT_PROBE_PEERS_H
#define ASYNCRT_PROBE_PEERS_H

#include "asyncrt/runtime.h"
#include "report.h"

/* Fills r->peers for r's devices (nothing below 2). A pair whose copy
 * cannot be measured says why in its error; only out of memory fails
 * (PROBE_EXIT_INTERNAL). */
int probe_collect_peers(asyncrt_context *ctx, probe_report *r);

#endif
