/* --tmap: tensor-map descriptors over uploaded buffers, encoded by the
 * tensormap module (whose validation messages reach the user unchanged). */
#ifndef ASYNCRT_RUN_TMAP_H
#define ASYNCRT_RUN_TMAP_H

#include "asyncrt/tensormap.h"
#include "buffers.h"
#include "cli.h"

/* Builds the descriptor of spec t over buffer b (pure: no driver). Returns
 * false with a message when the spec cannot describe the buffer (a dtype with
 * no tensor-map equivalent, dims missing, a map reaching past the buffer). */
bool run_tmap_describe(const run_tmap_spec *t, const run_buffer *b, asyncrt_tensormap_desc *out, char *err,
                       size_t err_size);

/* Describes and encodes every --tmap. Returns an exit code; the message is
 * in err (for asyncrt_tensormap_encode failures, the context's message). */
int run_tmaps_encode(asyncrt_context *ctx, const run_cli *cli, const run_buffer *buffers,
                     asyncrt_tensor_map *maps, char *err, size_t err_size);

#endif
