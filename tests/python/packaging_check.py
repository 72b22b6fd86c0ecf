"""Run by test_packaging.py with a venv's python, from outside the repository.

Checks that weft comes from that venv's site-packages, that the libweft the process maps
is the copy installed beside weft._C (no build tree, no LD_LIBRARY_PATH), and that a
2-rank all_reduce on backend "weft" gives the right sum. Prints one line per check.

    packaging_check.py            the parent: checks the import, starts the two ranks
    packaging_check.py --rank     one rank, with torch's env:// variables set
"""
import os
import socket
import subprocess
import sys


def mapped_libweft():
    """The paths of every libweft this process has mapped."""
    with open("/proc/self/maps") as maps:
        return {line.split(None, 5)[5].strip() for line in maps
                if "libweft" in line and len(line.split(None, 5)) == 6}


def check_import():
    import weft
    import weft.torch

    package = os.path.dirname(os.path.realpath(weft.__file__))
    assert package.startswith(os.path.realpath(sys.prefix) + os.sep), \
        f"weft imported from {package}, not from {sys.prefix}"
    libs = mapped_libweft()
    assert libs == {os.path.join(package, "libweft.so.0")}, f"libweft mapped from {libs}"
    print(f"weft from {package}; libweft mapped from {sorted(libs)[0]}; "
          f"libweft {weft.torch.library_version()}", flush=True)


def rank_main():
    import torch
    import torch.distributed as dist
    import weft.torch  # noqa: F401  registers "weft"

    dist.init_process_group("weft")
    rank, size = dist.get_rank(), dist.get_world_size()
    t = torch.full((1000,), float(rank + 1))
    dist.all_reduce(t)
    want = float(size * (size + 1) // 2)
    assert torch.equal(t, torch.full((1000,), want)), f"rank {rank}: {t[:4].tolist()}"
    dist.destroy_process_group()
    print(f"rank {rank}: all_reduce of {size} ranks = {want} ok", flush=True)


def start_ranks(size=2, timeout=120):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for rank in range(size):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(size), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(size), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, __file__, "--rank"], env=env))
    codes = []
    for p in procs:
        try:
            codes.append(p.wait(timeout=timeout))
        except subprocess.TimeoutExpired:
            p.kill()
            codes.append("timeout")
    assert codes == [0] * size, f"ranks exited with {codes}"


if __name__ == "__main__":
    if sys.argv[1:] == ["--rank"]:
        rank_main()
    else:
        check_import()
        start_ranks()
