"""weft.torch refuses a torch other than the one weft._C was compiled against."""
import subprocess
import sys


def test_import_names_both_torch_versions_and_the_rebuild_command():
    # The loaded torch is made to claim another version before weft.torch checks it.
    code = ("import torch; built = torch.__version__; torch.__version__ = '0.0.1'\n"
            "try:\n"
            "    import weft.torch\n"
            "except ImportError as e:\n"
            "    print('ERROR', e); print('BUILT', built)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120).stdout
    assert "ERROR" in out, out
    built = out.split("BUILT ")[1].strip()
    assert f"built against torch {built}" in out
    assert "torch 0.0.1 is loaded" in out
    assert "pip install --no-build-isolation --force-reinstall --no-deps ./python" in out


def test_import_succeeds_with_the_torch_it_was_built_against():
    out = subprocess.run([sys.executable, "-c", "import weft.torch; print('ok')"],
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr
