"""Registers the torch.distributed backend "weft" (CPU tensors).

    import weft.torch
    torch.distributed.init_process_group("weft")
"""
import torch
import torch.distributed as dist

from . import _C  # needs torch's libraries loaded first, hence after `import torch`

BACKEND = "weft"


def _create_backend(store, rank, size, timeout):
    return _C.create_backend(store, rank, size, timeout)


def library_version() -> str:
    v = _C.library_version()
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


# Importing twice (or reloading) must not fail: torch refuses a second registration.
if BACKEND not in dist.Backend.backend_list:
    dist.Backend.register_backend(BACKEND, _create_backend, devices=["cpu"])

__all__ = ["BACKEND", "library_version"]
