"""Registers the torch.distributed backend "weft" for CPU and CUDA tensors.

    import weft.torch
    torch.distributed.init_process_group("weft")
"""
import sys

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
    # ("weft:<group name>" in weft's errors and logs). With enable_reconfigure, the group
    # has no communicator until torch.distributed._reconfigure forms one (docs/TORCH.md).
    backend = _C.create_backend(opts.store, opts.group_rank, opts.group_size, opts.timeout,
                                f"weft:{opts.group_id}",
                                bool(getattr(opts, "enable_reconfigure", False)))
    devices = _devices_if_weft_alone(sys._getframe(1))
    if devices is None:
        return backend
    # torch skips its own set-up of a backend that comes back inside a ProcessGroup, so
    # this repeats the part that applies: the collective checker of
    # TORCH_DISTRIBUTED_DEBUG=DETAIL, which torch puts around every plugin backend.
    if dist.get_debug_level() == dist.DebugLevel.DETAIL and dist.is_gloo_available():
        backend = dist.distributed_c10d._create_process_group_wrapper(
            backend, opts.group_id, opts.store, opts.group_rank, opts.group_size,
            opts.timeout)
    return _C.weft_process_group(opts.process_group, opts.group_rank, opts.group_size,
                                 backend, devices)


def _devices_if_weft_alone(caller):
    """The devices of the group being built when weft serves all of them, else None.

    torch names a group after its default backend's type, CUSTOM ("custom") for every
    plugin, so the creator returns a ProcessGroup named "weft" instead of a bare backend
    (torch takes either). torch then registers nothing else on the group, which is right
    only when no other backend shares it ("cpu:gloo,cuda:weft"). The creator's arguments
    do not say which backends share the group; torch's _new_process_group_helper, the
    caller, holds them in `backend_config`. Any other caller, or another torch that lacks
    it, gets the bare backend (named "custom")."""
    if caller is None or caller.f_code.co_name != "_new_process_group_helper":
        return None
    config = caller.f_locals.get("backend_config")
    get_map = getattr(config, "get_device_backend_map", None)
    if get_map is None:
        return None
    device_backends = get_map()
    if not device_backends or any(str(b) != BACKEND for b in device_backends.values()):
        return None
    return list(device_backends)


def cuda_support() -> tuple[bool, str]:
    """(True, "") when weft._C was compiled to take CUDA tensors; else (False, why not).

    Compiled support is not a GPU: on a machine without one, CUDA tensors cannot exist
    and weft's own check (`_C.libweft_cuda_available()`) says why libweft cannot use one.
    """
    return _C.cuda_support()


def empty(*size, dtype=None) -> torch.Tensor:
    """A CPU tensor in weft's shared memory (weftMemAlloc), zero-filled.

    The other ranks on this host read and write such tensors in place, so collectives
    whose tensors all come from here (on every rank of the group) run in a single pass
    instead of through weft's rings (docs/TORCH.md). Takes sizes as torch.empty does:
    weft.torch.empty(2, 3) or weft.torch.empty((2, 3)); dtype defaults to torch's default.
    """
    if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"weft.torch.empty: sizes must be ints, got {s!r}")
    return _C.empty_shared(list(size), dtype or torch.get_default_dtype())


def use_shared_memory(min_bytes: int = 1 << 20) -> None:
    """From now on, torch allocates every CPU tensor of at least `min_bytes` in weft's
    shared memory (as `empty` does); smaller ones keep torch's allocator.

    This replaces torch's CPU allocator, so it reaches tensors that torch allocates itself:
    DDP's gradient buckets (made at construction and again when DDP rebuilds them after its
    first step) land there when this is called before DDP is built, and their all-reduces
    then run in a single pass on one host (weft's single-pass path takes buffers from
    64 KiB). Each such tensor holds a memfd (one file descriptor) while it lives, and
    forked children share its memory rather than copy it. If weftMemAlloc fails (out of
    descriptors, say), the tensor comes from torch's allocator, with a warning once.
    Called again, it changes the threshold.
    """
    if not isinstance(min_bytes, int) or isinstance(min_bytes, bool) or min_bytes < 1:
        raise ValueError(f"weft.torch.use_shared_memory: min_bytes must be an int >= 1, "
                         f"got {min_bytes!r}")
    _C.use_shared_cpu_allocator(min_bytes)


def use_default_memory() -> None:
    """Undoes use_shared_memory for later allocations (tensors already in weft's shared
    memory stay there until freed). A no-op if it is not in use."""
    _C.use_default_cpu_allocator()


def shared_memory_min_bytes() -> int:
    """The threshold use_shared_memory set, or 0 while torch's own allocator is in use."""
    return _C.shared_cpu_allocator_min_bytes()


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


def _shrunk_groups_registered_as_custom():
    """torch's shrink_group registers the shrunk group's backend as BackendType.GLOO on CPU
    whatever it is (torch 2.15, distributed_c10d._create_shrunk_process_group), and DDP's
    logger, seeing "gloo", casts the backend to ProcessGroupGloo: a segmentation fault
    when it is weft's. This puts a shrunk weft backend in a group made as weft's other
    groups are (BackendType.CUSTOM for each device weft serves, the group named "weft"),
    with the shrunk group's store, bound device, name and description. Without the
    private function (another torch) nothing is changed."""
    c10d = dist.distributed_c10d
    create = getattr(c10d, "_create_shrunk_process_group", None)
    if create is None or getattr(create, "weft_wrapped", False):
        return

    def create_shrunk(new_backend, *args, **kwargs):
        pg = create(new_backend, *args, **kwargs)
        if new_backend.name() != BACKEND:
            return pg
        # Named "weft" as weft's other groups are (_devices_if_weft_alone).
        named = _C.weft_process_group(pg, new_backend.rank(), new_backend.size(),
                                      new_backend, DEVICES)
        named._set_group_name(pg.group_name)
        named._set_group_desc(pg.group_desc)
        configs = c10d._world.pg_backend_config
        if pg in configs:
            configs[named] = configs.pop(pg)
        return named

    create_shrunk.weft_wrapped = True
    c10d._create_shrunk_process_group = create_shrunk


_shrunk_groups_registered_as_custom()
