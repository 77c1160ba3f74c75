"""A correct PyTorch input pipeline whose host allocator registers memory
(issue 27): a DataLoader with forked workers and pin_memory=True, under
PYTORCH_CUDA_ALLOC_CONF=pinned_use_cuda_host_register:True, copying each
pinned batch to the GPU. PyTorch's caching host allocator keeps its pinned
blocks registered until the process ends, by design.

    PYTORCH_CUDA_ALLOC_CONF=pinned_use_cuda_host_register:True \\
        python3 tests/gpu/torch_pinned_loop.py [workers] [epochs]

Prints "OK <sum>" and exits 0 when every batch arrived intact.
"""
import os
import sys

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
    if "pinned_use_cuda_host_register" not in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""):
        print("warning: PYTORCH_CUDA_ALLOC_CONF lacks pinned_use_cuda_host_register:True",
              file=sys.stderr)
    loader = DataLoader(Items(), batch_size=BATCH, num_workers=workers, pin_memory=True)
    dev = torch.device("cuda")
    total = torch.zeros((), dtype=torch.float64, device=dev)
    for _ in range(epochs):
        for batch in loader:
            if not batch.is_pinned():
                print("FAIL: batch not pinned", file=sys.stderr)
                return 1
            total += batch.to(dev, non_blocking=True).double().sum()
    torch.cuda.synchronize()
    want = epochs * ROWS * COLS * sum(range(ITEMS))
    got = total.item()
    if got != want:
        print("FAIL: sum %r, want %r" % (got, want), file=sys.stderr)
        return 1
    print("OK %d" % got)
    return 0


if __name__ == "__main__":
    sys.exit(main())
