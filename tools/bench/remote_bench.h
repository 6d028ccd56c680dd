/* asyncrt-bench --remote: the remote cache across a fleet (issue 26), on
 * the CPU (explicit --arch, nothing is launched: no GPU needed).
 *  - one process with an empty cache and no remote compiles the 12 CCCL
 *    kernels of --jit one by one: the cold time and CPU;
 *  - N processes (default 16), each with an empty local cache, share one
 *    Redis on loopback and compile the same 12 kernels: compiles in the
 *    fleet, the last process's finish against the cold time, fleet CPU;
 *  - per kernel, a remote hit with an empty local cache against a disk hit;
 *  - the server down (nothing at the socket) and a server whose connects
 *    hang: the time lost to the remote against the connect timeout.
 * The Redis is ASYNCRT_REMOTE_CACHE's, or a redis-server it starts on a
 * unix socket in a private temporary folder (and stops). Each process is
 * this binary exec'd again. */
#ifndef ASYNCRT_BENCH_REMOTE_BENCH_H
#define ASYNCRT_BENCH_REMOTE_BENCH_H

#define REMOTE_BENCH_FLAG "--remote"
#define REMOTE_BENCH_CHILD_FLAG "--remote-child"

/* argv holds --remote and its options (--processes N, --arch A, --json). */
int remote_bench_main(int argc, char **argv);
/* One process of the bench: argv[1] is REMOTE_BENCH_CHILD_FLAG. */
int remote_bench_child(int argc, char **argv);

#endif
