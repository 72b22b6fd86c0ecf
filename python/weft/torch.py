"""Registers the torch.distributed backend "weft" for CPU and CUDA tensors.

    import weft.torch
    torch.distributed.init_process_group("weft")
"""
import torch
import torch.distributed as dist

from ._build_info import TORCH_VERSION as BUILT_AGAINST

REBUILD = "pip install --no-build-isolation --force-reinstall --no-deps ./python"


def _mismatch(detail=""):
    return ImportError(
        f"weft.torch: the extension weft._C was built against torch {BUILT_AGAINST} but "
        f"torch {torch.__version__} is loaded; rebuild it against this torch with "
        f"`{REBUILD}` (from the weft repository){detail}")


# Checked before loading: an extension built against another torch fails on unresolved
# C++ symbols, or worse, loads and misreads torch's structures.
if torch.__version__ != BUILT_AGAINST:
    raise _mismatch()
try:
    from . import _C  # needs torch's libraries loaded first, hence after `import torch`
except ImportError as e:
    raise ImportError(f"weft.torch: cannot load weft._C ({e}); if torch was reinstalled, "
                      f"rebuild with `{REBUILD}`") from e

BACKEND = "weft"


def _create_backend(opts, backend_options):
    # torch's extended creator API: the group's name names the weft communicator
    # ("weft:<group name>" in weft's errors and logs).
    return _C.create_backend(opts.store, opts.group_rank, opts.group_size, opts.timeout,
                             f"weft:{opts.group_id}")


def cuda_support() -> tuple[bool, str]:
    """(True, "") when weft._C was compiled to take CUDA tensors; else (False, why not).

    Compiled support is not a GPU: on a machine without one, CUDA tensors cannot exist
    and weft's own check (`_C.libweft_cuda_available()`) says why libweft cannot use one.
    """
    return _C.cuda_support()


def library_version() -> str:
    v = _C.library_version()
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


# One backend object (one weft communicator) serves both device types: torch creates it
# once per group and registers it for each. Registered for "cuda" also when weft._C was
# compiled without CUDA support, so that a CUDA tensor reaches it and is refused with the
# reason (cuda_support()) instead of torch's "No backend type associated with device".
DEVICES = ["cpu", "cuda"]

# Importing twice (or reloading) must not fail: torch refuses a second registration.
if BACKEND not in dist.Backend.backend_list:
    dist.Backend.register_backend(BACKEND, _create_backend, extended_api=True, devices=DEVICES)

__all__ = ["BACKEND", "DEVICES", "cuda_support", "library_version"]
