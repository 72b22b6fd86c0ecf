"""One rank of the CUDA checks (test_cuda.py): every case on CUDA tensors through a weft
group, checked against the same op on CPU tensors through the same group; writes
{case: "ok" | failure} to $WEFT_TEST_OUT/rank<r>.json.

    python cuda_worker.py ops|stream|memop|ddp

$WEFT_TEST_GPUS: "shared" (every rank on cuda:0) or "per_rank" (rank r on cuda:r).
"""
import json
import os
import sys
import time
import traceback
import zlib

import torch
import torch.distributed as dist

import weft.torch  # noqa: F401  registers "weft"

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
DEV = torch.device("cuda", RANK if os.environ.get("WEFT_TEST_GPUS") == "per_rank" else 0)
R = dist.ReduceOp
TOL = {torch.float32: (1e-5, 1e-5), torch.float16: (1e-2, 5e-2),
       torch.bfloat16: (2e-2, 0.25), torch.int64: (0, 0)}
RESULTS = {}


def data(rank, key, shape, dtype=torch.float32, for_product=False):
    """Deterministic input of `rank` for case `key` (every rank can rebuild any rank's)."""
    g = torch.Generator().manual_seed(zlib.crc32(repr((rank, key)).encode()))
    if not dtype.is_floating_point:
        return torch.randint(-20, 21, shape, generator=g).to(dtype)
    x = torch.rand(shape, generator=g) + 0.5 if for_product else torch.randn(shape, generator=g)
    return x.to(dtype)


def same(got, want, what):
    """`got` (CUDA) against `want` (CPU): read back to the host, then compare."""
    got = got.cpu()
    rtol, atol = TOL[got.dtype]
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol, msg=lambda m: f"{what}: {m}")


def case(name, fn):
    try:
        fn()
        RESULTS[name] = "ok"
    except Exception as e:  # noqa: BLE001 - every failure is reported by name
        RESULTS[name] = f"FAIL {type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}"


def ops(group):
    """Every op on CUDA tensors against the same op on CPU tensors through `group`."""
    for op in [R.SUM, R.AVG, R.PRODUCT, R.MIN, R.MAX]:
        for dt in [torch.float32, torch.float16, torch.bfloat16]:
            def run(op=op, dt=dt):
                x = data(RANK, ("ar", str(op), str(dt)), (1001,), dt, for_product=op == R.PRODUCT)
                cpu, gpu = x.clone(), x.to(DEV)
                dist.all_reduce(cpu, op=op, group=group)
                dist.all_reduce(gpu, op=op, group=group)
                same(gpu, cpu, f"all_reduce {op} {dt}")
            case(f"all_reduce/{op}/{dt}", run)

    def big():  # above weft's 4 MiB staging chunk and the one-shot threshold
        x = data(RANK, "big", (3 * 1024 * 1024 + 7,))
        cpu, gpu = x.clone(), x.to(DEV)
        dist.all_reduce(cpu, group=group)
        dist.all_reduce(gpu, group=group)
        same(gpu, cpu, "all_reduce 12 MiB")
    case("all_reduce/large", big)

    def coalesced():
        xs = [data(RANK, ("coal", i), (17 * (i + 1),)) for i in range(3)]
        cpu, gpu = [x.clone() for x in xs], [x.to(DEV) for x in xs]
        dist.all_reduce_coalesced(cpu, group=group)
        dist.all_reduce_coalesced(gpu, group=group)
        for i in range(3):
            same(gpu[i], cpu[i], f"all_reduce_coalesced {i}")
    case("all_reduce/coalesced", coalesced)

    for root in range(WORLD):
        def bcast(root=root):
            x = data(RANK, ("bc", root), (33, 5))
            cpu, gpu = x.clone(), x.to(DEV)
            dist.broadcast(cpu, src=root, group=group)
            dist.broadcast(gpu, src=root, group=group)
            same(gpu, cpu, f"broadcast root {root}")
        case(f"broadcast/root{root}", bcast)

        def reduce(root=root):
            x = data(RANK, ("red", root), (77,))
            cpu, gpu = x.clone(), x.to(DEV)
            dist.reduce(cpu, dst=root, group=group)
            dist.reduce(gpu, dst=root, group=group)
            same(gpu, cpu, f"reduce root {root}")
        case(f"reduce/root{root}", reduce)

        def gather(root=root):
            x = data(RANK, ("ga", root), (9,))
            cpu_out = [torch.empty(9) for _ in range(WORLD)] if RANK == root else None
            gpu_out = [torch.empty(9, device=DEV) for _ in range(WORLD)] if RANK == root else None
            dist.gather(x, cpu_out, dst=root, group=group)
            dist.gather(x.to(DEV), gpu_out, dst=root, group=group)
            if RANK == root:
                for r in range(WORLD):
                    same(gpu_out[r], cpu_out[r], f"gather root {root} from {r}")
        case(f"gather/root{root}", gather)

        def scatter(root=root):
            ins = [data(r, ("sc", root), (11,)) for r in range(WORLD)] if RANK == root else None
            cpu, gpu = torch.empty(11), torch.empty(11, device=DEV)
            dist.scatter(cpu, ins, src=root, group=group)
            dist.scatter(gpu, [t.to(DEV) for t in ins] if ins else None, src=root, group=group)
            same(gpu, cpu, f"scatter root {root}")
        case(f"scatter/root{root}", scatter)

    def all_gather_into_tensor():
        x = data(RANK, "agt", (6, 4))
        cpu = torch.empty(6 * WORLD, 4)
        gpu = torch.empty(6 * WORLD, 4, device=DEV)
        dist.all_gather_into_tensor(cpu, x, group=group)
        dist.all_gather_into_tensor(gpu, x.to(DEV), group=group)
        same(gpu, cpu, "all_gather_into_tensor")
    case("all_gather_into_tensor", all_gather_into_tensor)

    def all_gather():
        x = data(RANK, "ag", (13,))
        cpu = [torch.empty(13) for _ in range(WORLD)]
        gpu = [torch.empty(13, device=DEV) for _ in range(WORLD)]
        dist.all_gather(cpu, x, group=group)
        dist.all_gather(gpu, x.to(DEV), group=group)
        for r in range(WORLD):
            same(gpu[r], cpu[r], f"all_gather from {r}")
    case("all_gather", all_gather)

    def reduce_scatter_tensor():
        x = data(RANK, "rst", (8 * WORLD,))
        cpu, gpu = torch.empty(8), torch.empty(8, device=DEV)
        dist.reduce_scatter_tensor(cpu, x, group=group)
        dist.reduce_scatter_tensor(gpu, x.to(DEV), group=group)
        same(gpu, cpu, "reduce_scatter_tensor")
    case("reduce_scatter_tensor", reduce_scatter_tensor)

    def all_to_all_single_equal():
        x = data(RANK, "a2a", (4 * WORLD, 3))
        cpu, gpu = torch.empty_like(x), torch.empty(4 * WORLD, 3, device=DEV)
        dist.all_to_all_single(cpu, x, group=group)
        dist.all_to_all_single(gpu, x.to(DEV), group=group)
        same(gpu, cpu, "all_to_all_single equal")
    case("all_to_all_single/equal", all_to_all_single_equal)

    def all_to_all_single_unequal():
        # rank r sends (r + p) % 3 rows to p (empty slots included)
        ins = [(RANK + p) % 3 for p in range(WORLD)]
        outs = [(p + RANK) % 3 for p in range(WORLD)]
        x = data(RANK, "a2av", (sum(ins), 2))
        cpu = torch.empty(sum(outs), 2)
        gpu = torch.empty(sum(outs), 2, device=DEV)
        dist.all_to_all_single(cpu, x, outs, ins, group=group)
        dist.all_to_all_single(gpu, x.to(DEV), outs, ins, group=group)
        same(gpu, cpu, "all_to_all_single unequal")
    case("all_to_all_single/unequal", all_to_all_single_unequal)

    def all_to_all_list():
        ins = [data(RANK, ("a2al", p), (p + 1,)) for p in range(WORLD)]
        cpu = [torch.empty(RANK + 1) for _ in range(WORLD)]
        gpu = [torch.empty(RANK + 1, device=DEV) for _ in range(WORLD)]
        dist.all_to_all(cpu, ins, group=group)
        dist.all_to_all(gpu, [t.to(DEV) for t in ins], group=group)
        for p in range(WORLD):
            same(gpu[p], cpu[p], f"all_to_all from {p}")
    case("all_to_all", all_to_all_list)

    def send_recv():
        # a ring: even ranks send first, odd ranks receive first (blocking calls)
        nxt, prv = (RANK + 1) % WORLD, (RANK - 1) % WORLD
        x = data(RANK, "p2p", (129,))
        for dev in ["cpu", DEV]:
            got = torch.empty(129, device=dev)
            if RANK % 2 == 0:
                dist.send(x.to(dev), nxt, group=group)
                dist.recv(got, prv, group=group)
            else:
                dist.recv(got, prv, group=group)
                dist.send(x.to(dev), nxt, group=group)
            same(got, data(prv, "p2p", (129,)), f"recv from {prv} on {dev}")
    case("send_recv", send_recv)

    def batch_isend_irecv():
        # Every rank sends before it receives, 32 MiB each way: one stream call waiting
        # for the one before would deadlock; weftGroupEnd issues the batch together.
        nxt, prv = (RANK + 1) % WORLD, (RANK - 1) % WORLD
        x = data(RANK, "batch", (8 << 20,))
        got = torch.empty(8 << 20, device=DEV)
        ops = [dist.P2POp(dist.isend, x.to(DEV), nxt, group=group),
               dist.P2POp(dist.irecv, got, prv, group=group)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()
        same(got, data(prv, "batch", (8 << 20,)), f"batch_isend_irecv from {prv}")
    case("batch_isend_irecv", batch_isend_irecv)

    def barrier():
        x = torch.ones(5, device=DEV)
        dist.all_reduce(x, group=group)
        dist.barrier(group=group)
        same(x, torch.full((5,), float(WORLD)), "all_reduce before barrier")
    case("barrier", barrier)

    def cpu_and_cuda_interleaved():
        c = data(RANK, "mixc", (50,))
        g = data(RANK, "mixg", (60,))
        want_c = sum(data(r, "mixc", (50,)) for r in range(WORLD))
        want_g = sum(data(r, "mixg", (60,)) for r in range(WORLD))
        gpu = g.to(DEV)
        w = dist.all_reduce(c, group=group, async_op=True)  # CPU op still in flight
        dist.all_reduce(gpu, group=group)
        w.wait()
        same(gpu, want_g, "CUDA all_reduce beside a CPU one")
        torch.testing.assert_close(c, want_c)
    case("cpu_and_cuda/interleaved", cpu_and_cuda_interleaved)

    def mixed_refused():
        out = torch.empty(4 * WORLD, device=DEV)
        try:
            dist.all_gather_into_tensor(out, torch.ones(4), group=group)
        except Exception as e:  # noqa: BLE001 - weft's refusal (or torch's, before it)
            assert "cpu" in str(e).lower() and "cuda" in str(e).lower(), str(e)
            return
        raise AssertionError("a CPU input with a CUDA output was accepted")
    case("cpu_and_cuda/mixed_refused", mixed_refused)


def stream(group, memop):
    """Stream ordering: an op issued behind a long kernel, and async_op=True."""
    def behind_kernel():
        x = torch.zeros(1 << 20, device=DEV)
        torch.cuda.synchronize(DEV)
        torch.cuda._sleep(int(5e8))
        x.fill_(RANK + 1)  # queued behind the sleep: an op that did not wait reads zeros
        dist.all_reduce(x, group=group)
        y = x * 2  # queued after the all_reduce on the same stream
        want = 2.0 * sum(r + 1 for r in range(WORLD))
        same(y, torch.full((1 << 20,), want), "all_reduce behind a kernel")  # .cpu() syncs
    case("stream/behind_kernel", behind_kernel)

    def async_op():
        x = torch.zeros(1 << 20, device=DEV)
        box = {}
        torch.cuda.synchronize(DEV)
        torch.cuda._sleep(int(5e8))
        x.fill_(RANK + 1)
        t0 = time.monotonic()
        box["w"] = dist.all_reduce(x, group=group, async_op=True)
        issue_s = time.monotonic() - t0
        completed_at_once = box["w"].is_completed()
        box["w"].wait()  # the current stream waits, not the host
        got = x.cpu()  # the host reads after the stream passed the all_reduce
        want = torch.full((1 << 20,), float(sum(r + 1 for r in range(WORLD))))
        torch.testing.assert_close(got, want)
        assert box["w"].is_completed()
        if memop:
            # WEFT_CUDA_STREAM_WAIT=memop: the call returns once enqueued, while the
            # stream is still sleeping in front of it.
            assert not completed_at_once, "is_completed() was True right after issue"
            assert issue_s < 0.1, f"all_reduce(async_op=True) took {issue_s:.3f} s to return"
    case("stream/async_op", async_op)

    def other_stream_waits():
        # wait() orders the stream current at the time of the call after the op.
        x = torch.full((1000,), float(RANK + 1), device=DEV)
        w = dist.all_reduce(x, group=group, async_op=True)
        s = torch.cuda.Stream(DEV)
        with torch.cuda.stream(s):
            w.wait()
            y = x + 0
        s.synchronize()
        same(y, torch.full((1000,), float(sum(r + 1 for r in range(WORLD)))), "on another stream")
    case("stream/other_stream_waits", other_stream_waits)

    def future_then():
        x = torch.full((100,), float(RANK + 1), device=DEV)
        fut = dist.all_reduce(x, group=group, async_op=True).get_future()
        doubled = fut.then(lambda f: f.value()[0] * 2).wait()
        same(doubled, torch.full((100,), 2.0 * sum(r + 1 for r in range(WORLD))), "future.then")
    case("stream/future_then", future_then)


def ddp(gloo, weft_group):
    """DDP on CUDA through weft against DDP on CPU through gloo, from one seed."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train(group, dev):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                  torch.nn.Linear(64, 10)).to(dev)
        net = DDP(net, process_group=group, bucket_cap_mb=0.01,
                  device_ids=[dev.index] if dev.type == "cuda" else None)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        g = torch.Generator().manual_seed(1000 + RANK)
        losses = []
        for _ in range(8):
            x = torch.randn(16, 32, generator=g)
            y = torch.randint(0, 10, (16,), generator=g)
            loss = torch.nn.functional.cross_entropy(net(x.to(dev)), y.to(dev))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, torch.cat([p.detach().cpu().flatten() for p in net.parameters()])

    def run():
        torch.backends.cuda.matmul.allow_tf32 = False
        cpu_losses, cpu_params = train(gloo, torch.device("cpu"))
        gpu_losses, gpu_params = train(weft_group, DEV)
        for step, (c, g) in enumerate(zip(cpu_losses, gpu_losses)):
            assert abs(c - g) <= 1e-4 * max(1.0, abs(c)), f"step {step}: gloo {c} weft {g}"
        torch.testing.assert_close(gpu_params, cpu_params, rtol=1e-4, atol=1e-5)
    case("ddp/matches_gloo", run)


def main():
    mode = sys.argv[1]
    torch.cuda.set_device(DEV)
    dist.init_process_group("gloo")
    gloo = dist.group.WORLD
    group = dist.new_group(backend="weft")
    if mode == "ops":
        ops(group)
    elif mode in ("stream", "memop"):
        stream(group, memop=mode == "memop")
    elif mode == "ddp":
        ddp(gloo, group)
    torch.cuda.synchronize(DEV)
    out = os.environ["WEFT_TEST_OUT"]
    with open(os.path.join(out, f"rank{RANK}.json"), "w") as f:
        json.dump(RESULTS, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
