#!/usr/bin/env python3
"""The peer a user would reach for: torch's x.t().contiguous() on a 16384 x 16384
f32 matrix of random data, timed like asyncrt-bench (CUDA events, median of
--repeats runs after --warmup), as a share of the same run's device-to-device
copy of the same bytes (out.copy_(x)), and checked once.
Compare its "% D2D" with asyncrt-bench --tile-sweep's rows (same device)."""
import argparse
import statistics
import sys

try:
    import torch
except ImportError:
    print("peer_torch: torch is not installed; skipped")
    sys.exit(0)


def median_ms(fn, warmup, repeats):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("peer_torch: no CUDA device; skipped")
        return 0
    n = a.size
    x = torch.rand((n, n), dtype=torch.float32, device="cuda") * 8 - 4
    out = torch.empty_like(x)
    # Checked once: a corner block on the CPU, and every element against the transposed view.
    y = x.t().contiguous()
    ok = torch.equal(y[:512, :512].cpu(), x[:512, :512].cpu().t()) and torch.equal(y, x.t())
    del y
    copy_ms = median_ms(lambda: out.copy_(x), a.warmup, a.repeats)
    t_ms = median_ms(lambda: x.t().contiguous(), a.warmup, a.repeats)
    nbytes = 2 * x.numel() * 4
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}: {n} x {n} f32, median of {a.repeats}")
    print(f"  copy_ (D2D)          {copy_ms:9.4f} ms {nbytes / copy_ms / 1e6:8.1f} GB/s  100.0%")
    print(f"  t().contiguous()     {t_ms:9.4f} ms {nbytes / t_ms / 1e6:8.1f} GB/s {100 * copy_ms / t_ms:6.1f}%  "
          f"check {'ok' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
