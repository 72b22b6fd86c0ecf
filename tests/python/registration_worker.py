"""One rank of test_cuda.py's CPU check: a weft default group, registered for "cpu" and
"cuda", runs an all_reduce on CPU tensors (also where there is no GPU) and serves both
device types with one backend object. Writes $WEFT_TEST_OUT/rank<r>.json."""
import json
import os

import torch
import torch.distributed as dist

import weft.torch  # noqa: F401  registers "weft"

RANK = int(os.environ["RANK"])


def main():
    dist.init_process_group("weft")
    x = torch.full((4,), float(RANK + 1))
    dist.all_reduce(x)
    pg = dist.group.WORLD
    cpu = pg._get_backend(torch.device("cpu"))
    cuda = pg._get_backend(torch.device("cuda"))  # a lookup: no GPU needed
    result = {"all_reduce": x.tolist(), "same_backend": cpu is cuda,
              "backend": cpu.name() if hasattr(cpu, "name") else ""}
    with open(os.path.join(os.environ["WEFT_TEST_OUT"], f"rank{RANK}.json"), "w") as f:
        json.dump(result, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
