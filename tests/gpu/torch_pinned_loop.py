"""A correct PyTorch input pipeline whose host allocator registers memory
(issue 27): a DataLoader with forked workers and pin_memory=True, under
PYTORCH_CUDA_ALLOC_CONF=pinned_use_cuda_host_register:True, copying each
pinned batch to the GPU. PyTorch's caching host allocator keeps its pinned
blocks registered until the process ends, by design.

    PYTORCH_CUDA_ALLOC_CONF=pinned_use_cuda_host_register:True \\
        python3 tests/gpu/torch_pinned_loop.py [workers] [epochs] [bench]

Prints "OK <sum>" and exits 0 when every batch arrived intact. With a third
argument "bench" (make gpu-bench, tests/gpu/bench.py: both host-allocator
modes, the default cudaHostAlloc one too) it does not insist on the
register mode and also prints the loop's wall time, from the first batch
asked for to the last copy done (CUDA already initialized):

    BENCH loop_ms=<ms> batches=<n> host_register=<0|1>
"""
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

ROWS, COLS, ITEMS, BATCH = 256, 1024, 64, 8


class Items(Dataset):
    def __len__(self):
        return ITEMS

    def __getitem__(self, i):
        return torch.full((ROWS, COLS), float(i))


def main():
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    bench = len(sys.argv) > 3 and sys.argv[3] == "bench"
    register = "pinned_use_cuda_host_register:True" in os.environ.get(
        "PYTORCH_CUDA_ALLOC_CONF", "").replace(" ", "")
    if not register and not bench:
        print("warning: PYTORCH_CUDA_ALLOC_CONF lacks pinned_use_cuda_host_register:True",
              file=sys.stderr)
    loader = DataLoader(Items(), batch_size=BATCH, num_workers=workers, pin_memory=True)
    dev = torch.device("cuda")
    total = torch.zeros((), dtype=torch.float64, device=dev)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    batches = 0
    for _ in range(epochs):
        for batch in loader:
            if not batch.is_pinned():
                print("FAIL: batch not pinned", file=sys.stderr)
                return 1
            total += batch.to(dev, non_blocking=True).double().sum()
            batches += 1
    torch.cuda.synchronize()
    loop_ms = (time.perf_counter() - t0) * 1e3
    want = epochs * ROWS * COLS * sum(range(ITEMS))
    got = total.item()
    if got != want:
        print("FAIL: sum %r, want %r" % (got, want), file=sys.stderr)
        return 1
    print("OK %d" % got)
    if bench:
        print("BENCH loop_ms=%.3f batches=%d host_register=%d" % (loop_ms, batches, register))
    return 0


if __name__ == "__main__":
    sys.exit(main())
