"""GPU loads for tests/device/run.sh (needs PyTorch with CUDA).

usage: python3 gpu_load.py MODE SECONDS READY_FILE

Warms up, touches READY_FILE, then runs MODE for SECONDS and prints what it
achieved. Every loop ends by itself.

  fp32mm    8192x8192 float32 matmul loop (as bench/device/gpu_check.sh;
            TF32 left at PyTorch's default, off)
  bf16mm    8192x8192 bfloat16 matmul loop (tensor cores)
  copy      1 GiB device-to-device tensor copy loop (memory-bound)
  halfidle  a few small matmuls, then the host sleeps, over and over
  narrow    one-thread spin kernels back to back (torch.cuda._sleep): the
            GPU is never idle, but only one SM has work
"""
import sys
import time

import torch


def main():
    mode, seconds, ready = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    dev = "cuda"
    iters = 0
    if mode in ("fp32mm", "bf16mm"):
        dt = torch.float32 if mode == "fp32mm" else torch.bfloat16
        a = torch.randn(8192, 8192, device=dev, dtype=dt)
        b = a @ a
        torch.cuda.synchronize()
        open(ready, "w").close()
        t0 = time.time()
        end = t0 + seconds
        while time.time() < end:
            for _ in range(4):
                b = a @ a
            torch.cuda.synchronize()
            iters += 4
        el = time.time() - t0
        print(f"{mode}: {iters} matmuls in {el:.1f} s, {iters * 2 * 8192**3 / el / 1e12:.1f} TFLOP/s")
    elif mode == "copy":
        n = 1 << 28  # 256 Mi float32 = 1 GiB
        a = torch.ones(n, device=dev)
        b = torch.empty_like(a)
        b.copy_(a)
        torch.cuda.synchronize()
        open(ready, "w").close()
        t0 = time.time()
        end = t0 + seconds
        while time.time() < end:
            for _ in range(20):
                b.copy_(a)
            torch.cuda.synchronize()
            iters += 20
        el = time.time() - t0
        print(f"copy: {iters} copies of 1 GiB in {el:.1f} s, {iters * 2 * 4 * n / el / 1e9:.0f} GB/s read+write")
    elif mode == "halfidle":
        a = torch.randn(2048, 2048, device=dev)
        b = a @ a
        torch.cuda.synchronize()
        open(ready, "w").close()
        t0 = time.time()
        end = t0 + seconds
        busy = 0.0
        while time.time() < end:
            s = time.time()
            for _ in range(8):
                b = a @ a
            torch.cuda.synchronize()
            busy += time.time() - s
            iters += 8
            time.sleep(0.004)
        el = time.time() - t0
        print(f"halfidle: {iters} small matmuls, host saw the GPU busy {100 * busy / el:.0f}% of {el:.1f} s")
    elif mode == "narrow":
        have_sleep = hasattr(torch.cuda, "_sleep")
        x = torch.zeros(1, device=dev)
        torch.cuda.synchronize()
        open(ready, "w").close()
        t0 = time.time()
        end = t0 + seconds
        while time.time() < end:
            if have_sleep:
                for _ in range(4):
                    torch.cuda._sleep(20_000_000)  # one thread spins ~10 ms per call
            else:
                for _ in range(200):
                    x.add_(1.0)  # one tiny block per kernel
            torch.cuda.synchronize()
            iters += 1
        el = time.time() - t0
        how = "torch.cuda._sleep" if have_sleep else "tiny add_ kernels (no torch.cuda._sleep)"
        print(f"narrow: {how}, {iters} rounds in {el:.1f} s")
    else:
        print(f"unknown mode {mode}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
