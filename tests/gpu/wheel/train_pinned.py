#!/usr/bin/env python3
"""train_pinned.py - a small PyTorch training loop whose host batches pass
through PyTorch's pinned host allocator (DataLoader(pin_memory=True), two
worker processes, non-blocking copies to the GPU).

Run it with PYTORCH_CUDA_ALLOC_CONF=pinned_use_cuda_host_register:True and
that allocator pins with malloc + cudaHostRegister, and unpins with
cudaHostUnregister + free when its cache is emptied (the end of this
script): the calls safepin guards. The PyTorch recipe of docs/recipes.md; tests/gpu/
wheel/run.sh runs it bare and under the wheel's launcher. Prints the loss
per epoch, the accuracy and the host allocator's counts.
"""
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    x = torch.randn(32768, 256)
    y = (x @ torch.randn(256, 10)).argmax(1)
    loader = DataLoader(TensorDataset(x, y), batch_size=1024, shuffle=True,
                        pin_memory=True, num_workers=2,
                        generator=torch.Generator().manual_seed(0))
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    for epoch in range(4):
        total = 0.0
        for xb, yb in loader:
            assert xb.is_pinned()
            xb, yb = xb.cuda(non_blocking=True), yb.cuda(non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(xb)
        print("epoch %d loss %.4f" % (epoch, total / len(x)), flush=True)
    with torch.no_grad():
        acc = (model(x.cuda()).argmax(1).cpu() == y).float().mean().item()
    print("accuracy %.4f" % acc)
    stats = getattr(torch.cuda, "host_memory_stats", dict)()
    keys = [k for k in ("num_host_alloc", "num_host_free") if k in stats]
    if keys:
        print("host allocator: " + ", ".join("%s %s" % (k, stats[k]) for k in keys))
    empty = getattr(torch._C, "_host_emptyCache", None)
    if empty:
        empty()     # the cached pinned blocks: cudaHostUnregister + free
        print("host cache emptied")
    torch.cuda.synchronize()
    return 0 if acc > 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
