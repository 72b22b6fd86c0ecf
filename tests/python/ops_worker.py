"""One rank of the op-by-op comparison: every collective on a weft group and on a gloo
group with identical inputs; writes {case: "ok" | failure} to $WEFT_TEST_OUT/rank<r>.json.

Each rank can regenerate every rank's inputs (seeded by rank and case), so cases gloo
cannot run (bool reductions, AVG) are checked against a local reference instead.
"""
import json
import os
import time
import traceback
import zlib

import torch
import torch.distributed as dist

import weft.torch  # noqa: F401  registers "weft"

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
R = dist.ReduceOp
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int8, torch.uint8, torch.int32, torch.int64]
TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-12, 1e-12),
       torch.float16: (1e-2, 5e-2), torch.bfloat16: (2e-2, 0.25)}


def data(rank, key, shape, dtype, for_product=False):
    """Deterministic input of `rank` for case `key`; small values so integer sums and
    products stay in range for int8/uint8 at 4 ranks."""
    # crc32, not hash(): str hashes differ between processes.
    g = torch.Generator().manual_seed(zlib.crc32(repr((rank, key)).encode()))
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        x = torch.rand(shape, generator=g) + 0.5 if for_product else torch.randn(shape, generator=g) * 4
        return x.to(dtype)
    lo, hi = (0, 4) if for_product else (-20, 21)
    if dtype == torch.uint8:
        lo, hi = (0, 4) if for_product else (0, 50)
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


def same(got, want, what):
    if got.dtype.is_floating_point:
        rtol, atol = TOL[got.dtype]
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol, msg=lambda m: f"{what}: {m}")
    elif not torch.equal(got, want):
        raise AssertionError(f"{what}: {got.flatten()[:8].tolist()} != {want.flatten()[:8].tolist()}")


RESULTS = {}


def case(name, fn):
    try:
        fn()
        RESULTS[name] = "ok"
    except Exception as e:  # noqa: BLE001 - every failure is reported by name
        RESULTS[name] = f"FAIL {type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}"


def local_reduce(xs, op):
    """Reference reduction of every rank's inputs (for what gloo cannot do)."""
    stack = torch.stack(xs)
    if stack.dtype == torch.bool:
        return {R.MIN: stack.all(0), R.MAX: stack.any(0), R.PRODUCT: stack.all(0)}[op]
    raise ValueError(op)


def allreduce_case(dtype, op, shape, key, noncontig=False):
    def run():
        x = data(RANK, key, shape, dtype, for_product=(op == R.PRODUCT))
        if noncontig:
            x = x.t()
            assert not x.is_contiguous()
        got = x.clone()
        dist.all_reduce(got, op=op, group=WEFT)
        if dtype == torch.bool:
            want = local_reduce([data(r, key, shape, dtype).t() if noncontig else
                                 data(r, key, shape, dtype) for r in range(WORLD)], op)
        else:
            want = x.clone()
            dist.all_reduce(want, op=R.SUM if op == R.AVG else op, group=GLOO)
            if op == R.AVG:
                want = (want.double() / WORLD).to(dtype) if dtype.is_floating_point else \
                    torch.div(want, WORLD, rounding_mode="trunc")
        same(got, want, f"allreduce {dtype} {op}")
        if noncontig:
            assert got.stride() == x.stride(), "layout of a non-contiguous output changed"
    return run


def add_allreduce_cases():
    for dtype in FLOATS + INTS:
        for op in (R.SUM, R.PRODUCT, R.MIN, R.MAX, R.AVG):
            case(f"allreduce/{dtype}/{op}", allreduce_case(dtype, op, (13,), f"ar{dtype}{op}"))
    for op in (R.MIN, R.MAX, R.PRODUCT):
        case(f"allreduce/bool/{op}", allreduce_case(torch.bool, op, (17,), f"arb{op}"))
    case("allreduce/large_f32_sum", allreduce_case(torch.float32, R.SUM, (262147,), "big"))
    case("allreduce/large_bf16_avg", allreduce_case(torch.bfloat16, R.AVG, (65537,), "bigbf"))
    case("allreduce/noncontiguous", allreduce_case(torch.float32, R.SUM, (64, 33), "nc", True))

    def coalesced():
        xs = [data(RANK, "c1", (100,), torch.float32), data(RANK, "c2", (7, 3), torch.float32)]
        got = [x.clone() for x in xs]
        WEFT.allreduce_coalesced(got).wait()
        for g, x in zip(got, xs):
            want = x.clone()
            dist.all_reduce(want, group=GLOO)
            same(g, want, "allreduce_coalesced")
    case("allreduce/coalesced", coalesced)

    def sparse(dense_dims, empty_rank):
        def run():
            # Ranks share some indices (summed) and hold others alone; one rank may have
            # none. 2 sparse dimensions, with or without a dense one.
            g = torch.Generator().manual_seed(1000 + RANK)
            nnz = 0 if RANK == empty_rank else 5 + RANK
            idx = torch.randint(0, 6, (2, nnz), generator=g)
            val = torch.randn((nnz, 3) if dense_dims else (nnz,), generator=g)
            size = (6, 6, 3) if dense_dims else (6, 6)
            x = torch.sparse_coo_tensor(idx, val, size)
            got, want = x.clone(), x.clone()
            dist.all_reduce(got, group=WEFT)
            dist.all_reduce(want, group=GLOO)
            assert got.is_sparse, got.layout
            same(got.to_dense(), want.to_dense(), "sparse allreduce")
        return run
    case("allreduce/sparse", sparse(False, -1))
    case("allreduce/sparse_dense_dim_one_rank_empty", sparse(True, 1))

    def refusals():
        for bad, exc, word in ((torch.ones(3, dtype=torch.bool), ValueError, "bool"),
                               (torch.ones(3, dtype=torch.int16), TypeError, "Short")):
            try:
                dist.all_reduce(bad, group=WEFT)
            except exc as e:
                assert word in str(e), str(e)
            else:
                raise AssertionError(f"{bad.dtype} SUM was not refused")
        try:
            dist.all_reduce(torch.ones(3, dtype=torch.int32), op=R.BAND, group=WEFT)
        except ValueError as e:
            assert "BAND" in str(e), str(e)
        else:
            raise AssertionError("BAND was not refused")
    case("allreduce/refusals", refusals)


def add_rooted_cases():
    for root in range(WORLD):
        for dtype in (torch.float32, torch.int64, torch.bool, torch.bfloat16):
            def bcast(root=root, dtype=dtype):
                x = data(RANK, ("b", root), (29,), dtype)
                got, want = x.clone(), x.clone()
                dist.broadcast(got, src=root, group=WEFT)
                dist.broadcast(want, src=root, group=GLOO)
                same(got, want, "broadcast")
            case(f"broadcast/root{root}/{dtype}", bcast)

        def reduce(root=root):
            for dtype, op in ((torch.float32, R.SUM), (torch.int32, R.MAX), (torch.float16, R.MIN)):
                x = data(RANK, ("r", root, dtype), (31,), dtype)
                got, want = x.clone(), x.clone()
                dist.reduce(got, dst=root, op=op, group=WEFT)
                dist.reduce(want, dst=root, op=op, group=GLOO)
                if RANK == root:
                    same(got, want, f"reduce {dtype} {op}")
                else:
                    same(got, x, "reduce must leave non-root inputs unchanged")
        case(f"reduce/root{root}", reduce)

        def gather(root=root):
            x = data(RANK, ("g", root), (5, 3), torch.float32)
            got = [torch.zeros(5, 3) for _ in range(WORLD)] if RANK == root else None
            want = [torch.zeros(5, 3) for _ in range(WORLD)] if RANK == root else None
            dist.gather(x, got, dst=root, group=WEFT)
            dist.gather(x, want, dst=root, group=GLOO)
            if RANK == root:
                for g, w in zip(got, want):
                    same(g, w, "gather")
        case(f"gather/root{root}", gather)

        def scatter(root=root):
            xs = [data(RANK, ("s", root, p), (6,), torch.int64) for p in range(WORLD)]
            got, want = torch.zeros(6, dtype=torch.int64), torch.zeros(6, dtype=torch.int64)
            dist.scatter(got, xs if RANK == root else None, src=root, group=WEFT)
            dist.scatter(want, xs if RANK == root else None, src=root, group=GLOO)
            same(got, want, "scatter")
        case(f"scatter/root{root}", scatter)

    def bcast_noncontig():
        x = data(RANK, "bnc", (8, 5), torch.float32).t()
        got, want = x.clone(), x.clone()
        dist.broadcast(got, src=WORLD - 1, group=WEFT)
        dist.broadcast(want, src=WORLD - 1, group=GLOO)
        same(got, want, "broadcast noncontiguous")
    case("broadcast/noncontiguous", bcast_noncontig)


def add_gather_scatter_cases():
    for dtype in (torch.float32, torch.int64, torch.float16, torch.bool):
        def ag_list(dtype=dtype):
            x = data(RANK, ("agl", dtype), (4, 3), dtype)
            got = [torch.zeros(4, 3, dtype=dtype) for _ in range(WORLD)]
            dist.all_gather(got, x, group=WEFT)
            for r in range(WORLD):
                same(got[r], data(r, ("agl", dtype), (4, 3), dtype), "all_gather")
            want = [torch.zeros(4, 3, dtype=dtype) for _ in range(WORLD)]
            dist.all_gather(want, x, group=GLOO)
            for g, w in zip(got, want):
                same(g, w, "all_gather vs gloo")
        case(f"all_gather/{dtype}", ag_list)

        def ag_tensor(dtype=dtype):
            x = data(RANK, ("agt", dtype), (10,), dtype)
            got = torch.zeros(10 * WORLD, dtype=dtype)
            want = torch.zeros(10 * WORLD, dtype=dtype)
            dist.all_gather_into_tensor(got, x, group=WEFT)
            dist.all_gather_into_tensor(want, x, group=GLOO)
            same(got, want, "all_gather_into_tensor")
        case(f"all_gather_into_tensor/{dtype}", ag_tensor)

    def ag_noncontig():
        x = data(RANK, "agnc", (6, 4), torch.float32).t()
        got = torch.zeros(WORLD * 4, 6)
        dist.all_gather_into_tensor(got, x, group=WEFT)
        want = torch.cat([data(r, "agnc", (6, 4), torch.float32).t() for r in range(WORLD)])
        same(got, want, "all_gather_into_tensor of a non-contiguous input")
    case("all_gather_into_tensor/noncontiguous", ag_noncontig)

    for dtype, op in ((torch.float32, R.SUM), (torch.int64, R.MAX), (torch.bfloat16, R.SUM),
                      (torch.float32, R.AVG), (torch.int32, R.MIN)):
        def rs_tensor(dtype=dtype, op=op):
            x = data(RANK, ("rst", dtype, op), (WORLD * 9,), dtype)
            got = torch.zeros(9, dtype=dtype)
            dist.reduce_scatter_tensor(got, x, op=op, group=WEFT)
            full = x.clone()
            dist.all_reduce(full, op=R.SUM if op == R.AVG else op, group=GLOO)
            want = full[RANK * 9:(RANK + 1) * 9]
            if op == R.AVG:
                want = want / WORLD
            same(got, want, f"reduce_scatter_tensor {dtype} {op}")
        case(f"reduce_scatter_tensor/{dtype}/{op}", rs_tensor)

        def rs_list(dtype=dtype, op=op):
            if op == R.AVG:
                return
            xs = [data(RANK, ("rsl", dtype, op, p), (3, 2), dtype) for p in range(WORLD)]
            got = torch.zeros(3, 2, dtype=dtype)
            dist.reduce_scatter(got, xs, op=op, group=WEFT)
            # Reference from every rank's regenerated inputs: gloo on this torch has no
            # list reduce_scatter for every dtype.
            parts = torch.stack([data(r, ("rsl", dtype, op, RANK), (3, 2), dtype) for r in range(WORLD)])
            if op == R.SUM:
                want = parts.sum(0).to(dtype)
            elif op == R.MAX:
                want = parts.max(0).values
            else:
                want = parts.min(0).values
            same(got, want, f"reduce_scatter {dtype} {op}")
        if op != R.AVG:
            case(f"reduce_scatter/{dtype}/{op}", rs_list)


def add_alltoall_cases():
    for dtype in (torch.float32, torch.int64):
        def a2a_equal(dtype=dtype):
            x = data(RANK, ("a2a", dtype), (WORLD * 4, 3), dtype)
            got, want = torch.zeros_like(x), torch.zeros_like(x)
            dist.all_to_all_single(got, x, group=WEFT)
            dist.all_to_all_single(want, x, group=GLOO)
            same(got, want, "all_to_all_single equal splits")
        case(f"all_to_all_single/equal/{dtype}", a2a_equal)

    def splits_of(r):  # rows rank r sends to each peer; some are zero
        return [(r + 2 * p) % 3 for p in range(WORLD)]

    def a2a_unequal():
        ins = splits_of(RANK)
        outs = [splits_of(p)[RANK] for p in range(WORLD)]
        x = data(RANK, "a2av", (sum(ins), 5), torch.float32)
        got = torch.zeros(sum(outs), 5)
        want = torch.zeros(sum(outs), 5)
        dist.all_to_all_single(got, x, outs, ins, group=WEFT)
        dist.all_to_all_single(want, x, outs, ins, group=GLOO)
        same(got, want, "all_to_all_single unequal splits")
    case("all_to_all_single/unequal", a2a_unequal)

    def a2a_list():
        # rank r sends p a tensor of r + p + 1 elements
        xs = [data(RANK, ("a2al", p), (RANK + p + 1,), torch.float64) for p in range(WORLD)]
        got = [torch.zeros(p + RANK + 1, dtype=torch.float64) for p in range(WORLD)]
        dist.all_to_all(got, xs, group=WEFT)
        for p in range(WORLD):
            same(got[p], data(p, ("a2al", RANK), (p + RANK + 1,), torch.float64), "all_to_all")
    case("all_to_all/list", a2a_list)


def add_p2p_and_sync_cases():
    def ring():
        nxt, prv = (RANK + 1) % WORLD, (RANK - 1) % WORLD
        for dtype in (torch.float32, torch.bool, torch.int8):
            x = data(RANK, ("ring", dtype), (1000,), dtype)
            got = torch.zeros(1000, dtype=dtype)
            reqs = [dist.isend(x, nxt, group=WEFT), dist.irecv(got, prv, group=WEFT)]
            for q in reqs:
                q.wait()
            same(got, data(prv, ("ring", dtype), (1000,), dtype), "isend/irecv ring")
    case("send_recv/ring", ring)

    def blocking_pair():
        if RANK == 0:
            dist.send(data(0, "pair", (64,), torch.float32), 1, group=WEFT)
            back = torch.zeros(64)
            dist.recv(back, 1, group=WEFT)
            same(back, data(0, "pair", (64,), torch.float32) * 2, "recv reply")
        elif RANK == 1:
            got = torch.zeros(64)
            dist.recv(got, 0, group=WEFT)
            dist.send(got * 2, 0, group=WEFT)
    case("send_recv/blocking_pair", blocking_pair)

    def tags():
        # torch's tag travels with the message: two tags of different sizes, posted in
        # the order they are sent.
        nxt, prv = (RANK + 1) % WORLD, (RANK - 1) % WORLD
        a, b = data(RANK, "tag_a", (17,), torch.float32), data(RANK, "tag_b", (40,), torch.int64)
        got_a, got_b = torch.zeros(17), torch.zeros(40, dtype=torch.int64)
        reqs = [dist.isend(a, nxt, group=WEFT, tag=5), dist.isend(b, nxt, group=WEFT, tag=-2),
                dist.irecv(got_a, prv, group=WEFT, tag=5), dist.irecv(got_b, prv, group=WEFT, tag=-2)]
        for q in reqs:
            q.wait()
        same(got_a, data(prv, "tag_a", (17,), torch.float32), "recv tag 5")
        same(got_b, data(prv, "tag_b", (40,), torch.int64), "recv tag -2")
    case("send_recv/tags", tags)

    def tags_out_of_order():
        # As with gloo, a receive takes its tag's message whatever the order they were
        # sent in: each rank sends tags 1, 2, 3 and receives 3, 1, 2 (blocking, so the
        # messages not named yet are held), and tag 2 twice, taken in the order sent.
        nxt, prv = (RANK + 1) % WORLD, (RANK - 1) % WORLD
        sent = {t: data(RANK, ("ooo", t), (33 * t,), torch.float32) for t in (1, 2, 3)}
        second = data(RANK, ("ooo", 4), (66,), torch.float32)
        reqs = [dist.isend(sent[t], nxt, group=WEFT, tag=t) for t in (1, 2, 3)]
        reqs.append(dist.isend(second, nxt, group=WEFT, tag=2))
        for t in (3, 1, 2):
            got = torch.zeros(33 * t)
            dist.recv(got, prv, group=WEFT, tag=t)
            same(got, data(prv, ("ooo", t), (33 * t,), torch.float32), f"recv tag {t}")
        got = torch.zeros(66)
        dist.recv(got, prv, group=WEFT, tag=2)
        same(got, data(prv, ("ooo", 4), (66,), torch.float32), "second recv tag 2")
        for q in reqs:
            q.wait()
    case("send_recv/tags_out_of_order", tags_out_of_order)

    def any_source():
        # dist.recv without src (recvAnysource): rank 0 takes every other rank's message,
        # each holding its sender's rank, in whatever order they arrive.
        if RANK == 0:
            senders = []
            for i in range(WORLD - 1):
                got = torch.full((25,), -1.0)
                if i % 2 == 0:
                    src = dist.recv(got, group=WEFT)
                else:
                    work = dist.irecv(got, group=WEFT)
                    work.wait()
                    src = work._source_rank()
                same(got, torch.full((25,), float(src)), f"recv from any source ({src})")
                senders.append(src)
            if sorted(senders) != list(range(1, WORLD)):
                raise AssertionError(f"senders {senders}, expected each of 1..{WORLD - 1} once")
        else:
            dist.send(torch.full((25,), float(RANK)), 0, group=WEFT)
        # A receive from any source takes whichever message comes next: no rank may send
        # rank 0 the next case's message before it has taken these.
        dist.barrier(group=WEFT)
    case("send_recv/any_source", any_source)

    def batch():
        nxt, prv = (RANK + 1) % WORLD, (RANK - 1) % WORLD
        x = data(RANK, "batch", (33,), torch.float32)
        got = torch.zeros(33)
        ops = [dist.P2POp(dist.isend, x, nxt, group=WEFT), dist.P2POp(dist.irecv, got, prv, group=WEFT)]
        for q in dist.batch_isend_irecv(ops):
            q.wait()
        same(got, data(prv, "batch", (33,), torch.float32), "batch_isend_irecv")
    case("send_recv/batch_isend_irecv", batch)

    def barrier():
        dist.barrier(group=GLOO)
        if RANK == 0:
            time.sleep(0.5)
        t0 = time.monotonic()
        dist.barrier(group=WEFT)
        waited = time.monotonic() - t0
        if RANK != 0:
            assert waited > 0.3, f"barrier returned after {waited:.3f}s, before rank 0 arrived"
    case("barrier", barrier)

    def asynchronous():
        # Rank 0 joins 1 s late: on the others the call must return at once and wait()
        # must block until rank 0 arrives, so the op runs off the caller's thread.
        dist.barrier(group=GLOO)
        if RANK == 0:
            time.sleep(1.0)
        x = torch.ones(1 << 16)
        t0 = time.monotonic()
        work = dist.all_reduce(x, group=WEFT, async_op=True)
        issued = time.monotonic() - t0
        fut = work.get_future()
        if RANK != 0:
            assert issued < 0.3, f"all_reduce(async_op=True) blocked the caller {issued:.3f}s"
            assert not work.is_completed(), "completed before rank 0 joined"
        value = fut.wait()
        work.wait()
        waited = time.monotonic() - t0
        if RANK != 0:
            assert waited > 0.5, f"wait() returned after {waited:.3f}s"
        assert work.is_completed()
        same(value[0], torch.full((1 << 16,), float(WORLD)), "future value")
    case("async/work_and_future", asynchronous)


def main():
    global WEFT, GLOO
    dist.init_process_group("gloo")
    GLOO = dist.group.WORLD
    WEFT = dist.new_group(backend="weft")
    add_allreduce_cases()
    add_rooted_cases()
    add_gather_scatter_cases()
    add_alltoall_cases()
    add_p2p_and_sync_cases()
    dist.barrier(group=GLOO)
    out = os.environ["WEFT_TEST_OUT"]
    with open(os.path.join(out, f"rank{RANK}.json"), "w") as f:
        json.dump(RESULTS, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
