"""weft.env: torch's env:// variables from weftrun's (pure, no processes)."""
import importlib.util
import pathlib

# Loaded by path: weft/env.py needs neither torch nor the extension.
_spec = importlib.util.spec_from_file_location(
    "weft_env", pathlib.Path(__file__).resolve().parents[2] / "python" / "weft" / "env.py")
env = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(env)

WEFTRUN = {"WEFT_RANK": "1", "WEFT_WORLD_SIZE": "4", "WEFT_LOCAL_RANK": "1",
           "WEFT_LOCAL_WORLD_SIZE": "4", "WEFT_STORE_ADDR": "127.0.0.1:40000"}


def test_torch_port_is_weftruns_free_port():
    e = dict(WEFTRUN, WEFT_AUX_PORT="51234")
    assert env.torch_env_from_weftrun(e)
    assert (e["RANK"], e["WORLD_SIZE"], e["LOCAL_RANK"], e["LOCAL_WORLD_SIZE"]) == ("1", "4", "1", "4")
    assert (e["MASTER_ADDR"], e["MASTER_PORT"]) == ("127.0.0.1", "51234")


def test_without_aux_port_the_store_port_plus_one():
    e = dict(WEFTRUN, WEFT_STORE_ADDR="[::1]:40000")
    assert env.torch_env_from_weftrun(e)
    assert (e["MASTER_ADDR"], e["MASTER_PORT"]) == ("::1", "40001")


def test_users_master_port_wins():
    e = dict(WEFTRUN, WEFT_AUX_PORT="51234", MASTER_PORT="29500")
    assert env.torch_env_from_weftrun(e)
    assert e["MASTER_PORT"] == "29500"


def test_under_torchrun_nothing_changes():
    e = {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "1"}
    before = dict(e)
    assert not env.torch_env_from_weftrun(e)
    assert e == before
