"""CUDA tensors through the weft backend.

Without a GPU only the registration and the build report can be checked (the first three
tests); the rest launch cuda_worker.py and are skipped with the reason when torch sees no
GPU. With a GPU they run at 2 ranks sharing cuda:0, and with one GPU per rank when there
are at least two.
"""
import json

import pytest
import torch
import torch.distributed as dist

import weft.torch
from launch import launch

HAS_GPU = torch.cuda.is_available()
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU (torch.cuda.is_available() "
                               "is False): the CUDA path is only compiled here")
LAYOUTS = ["shared"] + (["per_rank"] if HAS_GPU and torch.cuda.device_count() >= 2 else [])


def test_registered_for_cpu_and_cuda():
    assert dist.Backend.backend_capability["weft"] == ["cpu", "cuda"]
    assert weft.torch.DEVICES == ["cpu", "cuda"]


def test_extension_reports_cuda_support():
    built, why = weft.torch.cuda_support()
    assert isinstance(built, bool)
    if built:
        assert why == ""
        assert torch.version.cuda is not None, "compiled for CUDA against a torch without it"
    else:
        assert why, "built without CUDA support but no reason given"
        if torch.version.cuda is None:
            assert "no CUDA" in why, why
    available, reason = weft.torch._C.libweft_cuda_available()
    assert available or reason, "libweft says it cannot use CUDA but not why"
    if not HAS_GPU:
        assert not available


def test_cpu_group_with_cuda_registration(tmp_path):
    """With "cuda" registered too, a weft group still works for CPU tensors (here also
    on a machine without a GPU), and it has one backend object for both devices."""
    runs = launch("registration_worker.py", 2, env={"WEFT_TEST_OUT": str(tmp_path)},
                  timeout=120)
    for rank, (rc, output) in enumerate(runs):
        assert rc == 0, f"rank {rank} exited with {rc}:\n{output[-4000:]}"
    for rank in range(2):
        r = json.loads((tmp_path / f"rank{rank}.json").read_text())
        assert r["all_reduce"] == [3.0] * 4, r
        assert r["same_backend"], r


def run_worker(mode, layout, tmp_path, env=None):
    if not weft.torch.cuda_support()[0]:
        pytest.fail("a GPU is present but weft._C was built without CUDA support: "
                    + weft.torch.cuda_support()[1])
    e = {"WEFT_TEST_OUT": str(tmp_path), "WEFT_TEST_GPUS": layout, "WEFT_TIMEOUT": "60"}
    e.update(env or {})
    runs = launch("cuda_worker.py", 2, args=[mode], env=e, timeout=300)
    for rank, (rc, output) in enumerate(runs):
        assert rc == 0, f"rank {rank} exited with {rc}:\n{output[-4000:]}"
    per_rank = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    for rank, cases in enumerate(per_rank):
        assert cases, f"rank {rank}: no cases ran"
        failed = {k: v for k, v in cases.items() if v != "ok"}
        assert not failed, f"{layout} rank {rank}:\n" + "\n".join(
            f"{k}: {v}" for k, v in failed.items())
    return per_rank


@needs_gpu
@pytest.mark.parametrize("layout", LAYOUTS)
def test_ops_match_cpu(layout, tmp_path):
    """all_reduce (every op; float32, float16, bfloat16; 12 MiB), all_reduce_coalesced,
    broadcast, reduce, gather, scatter (every root), all_gather(_into_tensor),
    reduce_scatter_tensor, all_to_all_single (equal, unequal), all_to_all, send/recv,
    batch_isend_irecv (both ranks send first, 32 MiB), barrier, CPU and CUDA ops
    interleaved, a CPU/CUDA mixture refused."""
    cases = run_worker("ops", layout, tmp_path)[0]
    for name in ["all_reduce/large", "broadcast/root1", "all_to_all_single/unequal",
                 "send_recv", "batch_isend_irecv", "barrier", "cpu_and_cuda/interleaved",
                 "cpu_and_cuda/mixed_refused"]:
        assert name in cases, f"{name} did not run"
    # 5 ops x 3 dtypes
    assert sum(k.startswith("all_reduce/") and k.count("/") == 2 for k in cases) == 15


@needs_gpu
@pytest.mark.parametrize("layout", LAYOUTS)
def test_stream_order(layout, tmp_path):
    """An all_reduce behind a long kernel is seen by later work without a host sync;
    async_op=True, wait(), then a .cpu() read; wait() on another stream; Future.then."""
    cases = run_worker("stream", layout, tmp_path)[0]
    assert set(cases) == {"stream/behind_kernel", "stream/async_op",
                          "stream/other_stream_waits", "stream/future_then"}


@needs_gpu
def test_async_returns_before_completion_memop(tmp_path):
    """WEFT_CUDA_STREAM_WAIT=memop (weft's NCCL semantics, experimental, docs/GPU.md):
    all_reduce(async_op=True) returns while a kernel still holds the stream, not completed;
    wait() then .cpu() gives the sum. Under the default (sync) the call returns at
    completion, so this is checked only here."""
    run_worker("memop", "shared", tmp_path, env={"WEFT_CUDA_STREAM_WAIT": "memop"})


@needs_gpu
@pytest.mark.parametrize("layout", LAYOUTS)
def test_ddp_cuda_matches_gloo_cpu(layout, tmp_path):
    """DDP on CUDA through weft for 8 steps against DDP on CPU through gloo."""
    run_worker("ddp", layout, tmp_path)
