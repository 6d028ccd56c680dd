/* A fleet sharing its compiles through a remote cache (Redis): the first
 * machine to compile a program stores it, the others fetch it, check its
 * HMAC and use it instead of running NVRTC.
 *   remote_fleet [SPEC [KEY_FILE]]
 * SPEC as ASYNCRT_REMOTE_CACHE (e.g. redis://cache.example:6379), KEY_FILE
 * the fleet's secret (mode 0600); without SPEC the context takes
 * ASYNCRT_REMOTE_CACHE and ASYNCRT_REMOTE_CACHE_KEY_FILE from the
 * environment, and without those it runs with the remote off and says so.
 * Run it twice with different ASYNCRT_CACHE_DIRs (two "machines"): the
 * second says "origin: remote cache". Needs no GPU: it compiles for sm_90.
 * Build: examples/CMakeLists.txt (find_package), or
 *   cc remote_fleet.c $(pkg-config --cflags --libs asyncrt) -Wl,-rpath,$(pkg-config --variable=libdir asyncrt) */
#include <asyncrt/asyncrt.h>
#include <inttypes.h>
#include <stdio.h>

static const char *k_source =
    "extern \"C\" __global__ void fleet_scale(float *x, float a, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }\n";

static int fail(asyncrt_context *ctx, const char *what, asyncrt_status s)
{
    fprintf(stderr, "remote_fleet: %s: %s: %s\n", what, asyncrt_status_string(s), asyncrt_context_last_error(ctx));
    asyncrt_context_destroy(ctx);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc > 3) {
        fprintf(stderr, "usage: remote_fleet [SPEC [KEY_FILE]]\n");
        return 2;
    }
    asyncrt_context *ctx;
    if (asyncrt_context_create(&ctx) != ASYNCRT_SUCCESS) return 1;
    asyncrt_status s;
    if (argc > 1 && (s = asyncrt_context_set_remote_cache(ctx, argv[1], argc > 2 ? argv[2] : NULL)))
        return fail(ctx, "remote cache", s); /* a malformed spec, an unusable key, no hiredis */

    asyncrt_compile_options opts = ASYNCRT_COMPILE_OPTIONS_INIT;
    opts.arch = "sm_90"; /* every machine of the fleet compiles for the same target */
    asyncrt_program *program;
    if ((s = asyncrt_program_compile(ctx, "fleet.cu", k_source, &opts, &program)))
        return fail(ctx, "compile", s);
    printf("fleet_scale for %s, origin: %s\n", asyncrt_program_arch(program),
           asyncrt_program_origin_string(asyncrt_program_origin_of(program)));
    asyncrt_program_destroy(program);

    /* A remote that fails is switched off, never a failed compile: the counters say what happened. */
    asyncrt_remote_cache_stats r = ASYNCRT_REMOTE_CACHE_STATS_INIT;
    if ((s = asyncrt_context_remote_cache_stats(ctx, &r))) return fail(ctx, "remote cache stats", s);
    if (!r.enabled)
        printf("remote cache: %s\n", r.state[0] ? r.state : "off");
    else
        printf("remote cache %s: %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64 " stores, %" PRIu64
               " errors, %" PRIu64 " refused, %.1f ms\n",
               r.state, r.hits, r.misses, r.stores, r.errors, r.rejected, r.time_ms);
    asyncrt_context_destroy(ctx);
    return 0;
}
