"""PyTorch's own backend conformance suite (DistributedTest._DistTestBase) on BACKEND.

Run by run.sh (BACKEND=weft|gloo, WORLD_SIZE=2|3), the way PyTorch's
test_distributed_spawn.py and out-of-tree backends (torch_ucc) run it: the suite's
per-feature backend sets are extended at import, here, before the suite module reads
them; the installed torch is not modified. Spawned ranks import this module again, so
they see the same declarations.
"""
import os
import sys

os.environ.setdefault("BACKEND", "weft")
os.environ.setdefault("WORLD_SIZE", "2")

import torch  # noqa: E402
from torch.testing._internal.common_distributed import DistTestCases  # noqa: E402

import weft.torch  # noqa: E402,F401  (registers the backend in every rank)

# What weft does, declared in the sets that name gloo. The backend takes CUDA tensors, but
# that path has not run on a GPU yet, so weft joins neither "gpu" nor "cuda" here (it would
# claim what no run has shown). "plugin" makes the suite's availability check accept a
# backend it does not know by name.
WEFT_FEATURES = ("ddp", "subgroup", "plugin")
# Collectives weft does not offer (the suite skips their tests with this reason).
WEFT_UNSUPPORTED = ("sendrecv anysource",)

for feature in WEFT_FEATURES:
    DistTestCases.backend_feature[feature].add("weft")
for collective in WEFT_UNSUPPORTED:
    DistTestCases.skip_collective[collective].add("weft")

from torch.testing._internal.distributed.distributed_test import (  # noqa: E402
    DistributedTest, TestDistBackend)
from torch.testing._internal.common_utils import run_tests  # noqa: E402


class TestDistBackendWithSpawn(TestDistBackend, DistributedTest._DistTestBase):
    def setUp(self):
        super().setUp()
        self._spawn_processes()


if __name__ == "__main__":
    sys.exit(run_tests())
