"""conftest.py - with PYTORCH_CUDA_ALLOC_CONF=pinned_use_cuda_host_register:True,
PyTorch's caching host allocator pins with cudaHostRegister and keeps its
blocks registered until the process ends; safepin reports a registration
still live at exit (leak-at-exit), which fails a strict run. Empty the cache
when the test session ends (the pytest recipe of docs/recipes.md)."""
import pytest


@pytest.fixture(scope="session", autouse=True)
def _empty_pinned_host_cache():
    yield
    import torch
    if torch.cuda.is_initialized():
        torch.cuda.synchronize()
        torch._C._host_emptyCache()
