"""Times torch's F.scaled_dot_product_attention backends (cuDNN, flash, efficient) on the
attention workloads of specs/attention.yaml, for comparison with gpu_mm_bench's rows.

Method: CUDA events, L2 flushed by a 256 MiB fill before each run, 10 warm-ups, median of 50.
"""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

WORKLOADS = [
    ("llama3-8b-prefill-8k", 1, 32, 8, 8192, 8192, 128, True, torch.bfloat16),
    ("llama3-8b-prefill-8k", 1, 32, 8, 8192, 8192, 128, True, torch.float16),
    ("llama3-8b-prefill-2k", 4, 32, 8, 2048, 2048, 128, True, torch.bfloat16),
    ("llama3-70b-prefill-4k", 2, 64, 8, 4096, 4096, 128, True, torch.bfloat16),
    ("mha-noncausal-2k", 4, 32, 32, 2048, 2048, 128, False, torch.bfloat16),
    ("llama3-8b-decode-4k", 16, 32, 8, 1, 4096, 128, False, torch.bfloat16),
]
BACKENDS = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]


def time_us(fn, runs=50):
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        flush.fill_(1)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) * 1e3)
    times.sort()
    return times[len(times) // 2]


def main():
    print("device:", torch.cuda.get_device_name())
    for label, b, hq, hkv, sq, skv, d, causal, dtype in WORKLOADS:
        q = torch.randn(b, hq, sq, d, device="cuda", dtype=dtype)
        k = torch.randn(b, hkv, skv, d, device="cuda", dtype=dtype)
        v = torch.randn(b, hkv, skv, d, device="cuda", dtype=dtype)
        flops = 4 * b * hq * sq * skv * d / (2 if causal else 1)
        for backend in BACKENDS:
            try:
                with sdpa_kernel([backend]):
                    us = time_us(lambda: F.scaled_dot_product_attention(
                        q, k, v, is_causal=causal, enable_gqa=hq != hkv))
                print(f"sdpa {label:24s} {str(dtype):15s} {backend.name:20s} {us:10.1f} us "
                      f"{flops / us / 1e6:7.1f} TFLOP/s")
            except RuntimeError as err:  # backend not available for this shape
                print(f"sdpa {label:24s} {str(dtype):15s} {backend.name:20s} unavailable: "
                      f"{str(err).splitlines()[0][:80]}")


if __name__ == "__main__":
    main()
