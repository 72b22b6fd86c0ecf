"""Each rank blocks in a receive that no rank sends; a thread aborts the group after
ABORT_AFTER seconds. Prints how long the wait took to return and what it raised."""
import os
import threading
import time

import torch
import torch.distributed as dist

import weft.torch  # noqa: F401

ABORT_AFTER = 1.0

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
# WEFT_TIMEOUT is far beyond the test's bound: only the abort can end the wait in time.
dist.init_process_group("weft")
pg = dist.group.WORLD
dist.barrier()

buf = torch.zeros(4)
work = dist.irecv(buf, src=(rank + 1) % world)
threading.Timer(ABORT_AFTER, pg.abort).start()
start = time.monotonic()
try:
    work.wait()
    print(f"rank {rank}: RETURNED-WITHOUT-ERROR", flush=True)
except Exception as e:  # noqa: BLE001 - the error is what the test checks
    print(f"rank {rank}: RAISED {type(e).__name__}: {e}", flush=True)
print(f"rank {rank}: WAITED {time.monotonic() - start:.2f}", flush=True)
# A later op on the aborted group is refused with a message, not a crash.
try:
    dist.all_reduce(torch.ones(1))
    print(f"rank {rank}: LATER-OP-RAN", flush=True)
except Exception as e:  # noqa: BLE001
    print(f"rank {rank}: LATER {e}", flush=True)
# Destroying an aborted group only drains what already failed.
dist.destroy_process_group()
print(f"rank {rank}: DESTROYED", flush=True)
