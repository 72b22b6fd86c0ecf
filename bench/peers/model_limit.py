"""The memory model's limit for one collective on one host (scripts/compare.sh).

The fastest a collective can run when every byte is touched once: each rank reduces
its share straight from the peers' inputs at the measured `a += b` rate and copies
its results straight into the outputs at the measured memcpy rate (both one core,
limit_probe), the ranks working in parallel on min(ranks, cores) cores. `size_bytes`
follows weft-bench (nccl-tests): the whole vector for allreduce, reduce and broadcast,
all ranks' blocks together for the others. Transfers between ranks cost nothing beyond
those passes, which is what shared buffers allow, so limit time / measured time is the
fraction of the memory's limit reached. The rates are measured on 16 MiB buffers, out of
cache: a collective whose buffers fit in the caches runs faster than this limit (fractions
above 1 at small sizes), and ranks sharing the memory bus get less than one core's rate
each, which the model does not know.
"""


def per_rank_passes(op, size_bytes, n):
    """(bytes reduced, bytes copied) by the busiest rank."""
    block = size_bytes / n
    if op == "allreduce":  # its chunk from n inputs (n-1 adds), into n-1 other outputs
        return (n - 1) * block, (n - 1) * block
    if op == "reduce":  # as allreduce, into the root's output only
        return (n - 1) * block, block
    if op == "reducescatter":  # its block from n inputs
        return (n - 1) * block, 0.0
    if op in ("allgather", "alltoall"):  # a block into each of the n outputs (out of place)
        return 0.0, n * block
    if op == "broadcast":  # every non-root copies the whole vector from the root
        return 0.0, float(size_bytes)
    if op in ("gather", "scatter"):  # every non-root copies its block
        return 0.0, block
    raise ValueError(f"no model for {op}")


def limit_us(op, size_bytes, n, cores, memcpy_gbps, add_gbps):
    """Microseconds; None for one rank (nothing to move) or without limits."""
    if n < 2 or not memcpy_gbps or not add_gbps:
        return None
    reduced, copied = per_rank_passes(op, size_bytes, n)
    # limit_probe times `a += b` by the bytes of a: one output byte per reduced byte.
    busiest_us = reduced / (add_gbps * 1e3) + copied / (memcpy_gbps * 1e3)
    # n ranks on fewer cores take turns: the total work spread over the cores.
    return busiest_us * n / min(n, cores)
