"""test_pinned.py - a project's GPU tests, as pytest collects them: pinned
and registered host memory around copies to and from the GPU (PyTorch).

The pytest recipe of docs/recipes.md runs them under safepin-smoke (strict mode, a
JUnit file); tests/gpu/wheel/run.sh does it on the GPU from the installed
wheel. test_staging_leak has the bug a project's tests pass bare without
seeing: a registered staging buffer is freed without being unregistered
(the pin outlives the memory; the next register at that address fails with
712). Under safepin it is a freed-while-registered violation.
"""
import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
N = 1 << 20


def register(t):
    assert int(torch.cuda.cudart().cudaHostRegister(t.data_ptr(), t.nbytes, 0)) == 0


def unregister(t):
    assert int(torch.cuda.cudart().cudaHostUnregister(t.data_ptr())) == 0


def test_pinned_round_trip():
    t = torch.arange(N, dtype=torch.float32).pin_memory()
    d = t.to("cuda", non_blocking=True)
    assert torch.equal(d.cpu(), t)


def test_register_copy_unregister():
    t = torch.full((N,), 3.0)
    register(t)
    d = t.to("cuda", non_blocking=True)
    unregister(t)
    assert d.sum().item() == 3.0 * N


def test_copy_back_then_unregister():
    t = torch.zeros(N)
    register(t)
    t.copy_(torch.full((N,), 5.0, device="cuda"), non_blocking=True)
    unregister(t)          # CUDA's unregister waits for the device: t is written
    assert t.min().item() == 5.0


def test_staging_leak():
    t = torch.ones(N)
    register(t)
    d = t.to("cuda", non_blocking=True)
    torch.cuda.synchronize()
    del t                  # the bug: freed while still registered
    assert d.sum().item() == N
