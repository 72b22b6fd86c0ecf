"""One rank of the failing-rank test: all ranks loop over all_reduce on a weft default
group; at step 5 rank 1 either dies (os._exit, mode "die") or stops taking part while
staying alive (mode "stall", so only WEFT_TIMEOUT can notice). The others must get an
exception, not hang; they write what they caught to $WEFT_TEST_OUT/rank<r>.json."""
import json
import os
import time

import torch
import torch.distributed as dist

import weft.torch  # noqa: F401

RANK = int(os.environ["RANK"])
MODE = os.environ["FAIL_MODE"]


def main():
    dist.init_process_group("weft")
    caught, t_fail = None, None
    x = torch.ones(1 << 14)
    start = time.monotonic()
    try:
        for step in range(1000):
            if RANK == 1 and step == 5:
                if MODE == "stall":
                    time.sleep(float(os.environ["WEFT_TIMEOUT"]) + 10)
                os._exit(3)  # no cleanup, like a crash
            t_fail = time.monotonic()
            dist.all_reduce(x)
            x.fill_(1.0)
            time.sleep(0.01)
    except Exception as e:  # noqa: BLE001 - the point is what type and message arrive
        caught = {"type": type(e).__name__, "message": str(e),
                  "is_runtime_error": isinstance(e, RuntimeError),
                  "seconds_to_error": time.monotonic() - t_fail}
    with open(os.path.join(os.environ["WEFT_TEST_OUT"], f"rank{RANK}.json"), "w") as f:
        json.dump({"caught": caught, "elapsed": time.monotonic() - start}, f)
    # Stay a moment so that the other survivors see rank 1's failure, not this exit.
    time.sleep(2)
    os._exit(0)  # the group cannot be torn down collectively any more


if __name__ == "__main__":
    main()
