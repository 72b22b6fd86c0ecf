"""torch's env:// variables from weftrun's, so a script runs unchanged under both.

torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT.
weftrun sets WEFT_RANK, WEFT_WORLD_SIZE, WEFT_LOCAL_RANK, WEFT_LOCAL_WORLD_SIZE and
WEFT_STORE_ADDR (host:port of its own store). torch needs a TCPStore of its own, so
under weftrun rank 0 serves it on the store host at MASTER_PORT: by default WEFT_AUX_PORT,
a port weftrun found free when it started (or, from a weftrun without it, the store's
port + 1); set MASTER_PORT with `weftrun -x MASTER_PORT=...` to choose one.
"""
import os

_PAIRS = [("RANK", "WEFT_RANK"), ("WORLD_SIZE", "WEFT_WORLD_SIZE"),
          ("LOCAL_RANK", "WEFT_LOCAL_RANK"), ("LOCAL_WORLD_SIZE", "WEFT_LOCAL_WORLD_SIZE")]


def torch_env_from_weftrun(environ=os.environ) -> bool:
    """Fills in torch's variables from weftrun's where torch's are missing.

    Returns True if it changed anything (i.e. we run under weftrun, not torchrun).
    """
    if "RANK" in environ or "WEFT_RANK" not in environ:
        return False
    for torch_name, weft_name in _PAIRS:
        if weft_name in environ:
            environ.setdefault(torch_name, environ[weft_name])
    host, _, port = environ["WEFT_STORE_ADDR"].rpartition(":")
    environ.setdefault("MASTER_ADDR", host.strip("[]"))
    environ.setdefault("MASTER_PORT", environ.get("WEFT_AUX_PORT") or str(int(port) + 1))
    return True
