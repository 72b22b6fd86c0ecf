"""python/ as a package: the README's install line in a fresh venv, and a wheel that
carries libweft, pins its torch and works with no weft build tree on the machine.

One compile, shared: the README's line, `pip install ./python`, run as written (pip's
isolated build) from the repository root with a fresh venv's pip. `pip wheel ./python`
then builds the wheel the same way; pip builds in the source tree (python/build), so its
ninja reuses the objects the first build made and the second build only relinks. The
compile commands name the venv (its include/), so that venv is made afresh at one place,
python/build/readme-venv, and a later run recompiles only what changed. Both venvs use
--system-site-packages so they see the installed torch rather than download it.

libweft comes from the repository's build/ as the README presumes (scripts/setup.sh), or
from $WEFT_HOME / $WEFT_BUILD_DIR, as setup.py looks for it.
"""
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = Path(__file__).resolve().parent / "packaging_check.py"
BUILD_TIMEOUT = 1200  # a cold compile of the extension is several minutes on 2 cores


def readme_install_line():
    """The README's PyTorch install command, as written (without its comment)."""
    for line in (ROOT / "README.md").read_text().splitlines():
        m = re.match(r"\s+(pip install \S*python)\s+#", line)
        if m:
            return m.group(1)
    raise AssertionError("README.md shows no `pip install ./python` line")


def libweft_dirs():
    """The folders setup.py takes libweft from, that exist and hold one (not system ones)."""
    build = os.environ.get("WEFT_BUILD_DIR", "build")
    roots = [Path(os.environ["WEFT_HOME"])] if os.environ.get("WEFT_HOME") else []
    roots.append(ROOT)
    return [d.resolve() for r in roots for d in (r / "lib", r / "lib64", r / build)
            if (d / "libweft.so.0").exists() and not str(d.resolve()).startswith(("/usr", "/lib"))]


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd} exited {r.returncode}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return r.stdout


def venv(path, *options):
    run([sys.executable, "-m", "venv", "--system-site-packages", *options, str(path)],
        timeout=120)
    return path / "bin" / "python"


def clean_env(**extra):
    """The environment of a user with no weft build: no WEFT_*, LD_LIBRARY_PATH, PYTHONPATH."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("WEFT_") and k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}
    env.update(extra)
    return env


def source_files():
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "python").rglob("*")
                  if "build" not in p.relative_to(ROOT / "python").parts[:1]
                  and ".egg-info" not in str(p) and "__pycache__" not in p.parts)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if not libweft_dirs():
        pytest.fail("libweft.so.0 is not built: bash scripts/setup.sh (or set WEFT_HOME)")
    tmp = tmp_path_factory.mktemp("packaging")
    line = readme_install_line()
    before = source_files()
    shutil.rmtree(ROOT / "python" / "build" / "readme-venv", ignore_errors=True)
    py = venv(ROOT / "python" / "build" / "readme-venv")
    env = dict(os.environ, PATH=f"{py.parent}:{os.environ['PATH']}", VIRTUAL_ENV=str(py.parent.parent),
               MAX_JOBS=str(os.cpu_count() or 1), PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    run(["bash", "-c", line], cwd=ROOT, env=env, timeout=BUILD_TIMEOUT)
    run([str(py), "-m", "pip", "wheel", "--no-deps", "-w", str(tmp / "wheels"), "./python"],
        cwd=ROOT, env=env, timeout=BUILD_TIMEOUT)
    after = source_files()
    wheels = list((tmp / "wheels").glob("weft-*.whl"))
    assert len(wheels) == 1, wheels
    return {"tmp": tmp, "line": line, "readme_python": py, "wheel": wheels[0],
            "source_before": before, "source_after": after}


def test_the_readme_line_is_the_plain_pip_install():
    assert readme_install_line() == "pip install ./python"


def test_readme_line_installs_a_working_backend_into_a_fresh_venv(built):
    out = run([str(built["readme_python"]), str(CHECK)], cwd=built["tmp"], env=clean_env(),
              timeout=300)
    assert "rank 0: all_reduce of 2 ranks = 3.0 ok" in out, out
    assert "rank 1: all_reduce of 2 ranks = 3.0 ok" in out, out


def test_the_build_writes_nothing_into_the_source_folder(built):
    assert built["source_after"] == built["source_before"]


def test_the_wheel_carries_libweft_beside_the_extension(built):
    names = zipfile.ZipFile(built["wheel"]).namelist()
    assert "weft/libweft.so.0" in names, names
    assert [n for n in names if re.fullmatch(r"weft/_C\..*\.so", n)], names
    assert "weft/_build_info.py" in names, names
    assert "weft/torch.py" in names, names


def test_the_wheel_pins_the_torch_it_was_built_against(built):
    wheel = zipfile.ZipFile(built["wheel"])
    metadata = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    requires = [line for line in wheel.read(metadata).decode().splitlines()
                if line.startswith("Requires-Dist:")]
    assert requires == [f"Requires-Dist: torch=={version('torch')}"], requires
    import torch
    info = wheel.read("weft/_build_info.py").decode()
    assert f"TORCH_VERSION = {torch.__version__!r}" in info, info


def test_the_wheel_works_with_no_weft_build_tree(built):
    tmp = built["tmp"]
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    wheel = shutil.copy(built["wheel"], elsewhere)
    # Without a pip of its own the venv runs the installed pip, and no venv-local (older)
    # setuptools shadows the one torch requires. --force-reinstall --no-deps: the venv sees
    # the system's site-packages, where tests/python/run.sh has installed a weft of the
    # same version, which pip would otherwise take as already satisfied (and this check
    # would import that one). Torch is never downloaded; the installed torch must satisfy
    # the wheel's pin, checked below with pip's own version rules.
    py = venv(tmp / "wheel-venv", "--without-pip")
    run([str(py), "-m", "pip", "install", "--no-index", "--no-deps", "--force-reinstall",
         wheel], cwd=elsewhere, env=clean_env(PIP_DISABLE_PIP_VERSION_CHECK="1"), timeout=300)
    pin_check = (
        "from importlib.metadata import requires, version\n"
        "from pip._vendor.packaging.requirements import Requirement\n"
        "pin = Requirement(next(r for r in requires('weft') if r.startswith('torch')))\n"
        "assert pin.specifier.contains(version('torch'), prereleases=True), (pin, version('torch'))\n"
        "print('torch', version('torch'), 'satisfies', pin)\n")
    out = run([str(py), "-c", pin_check], cwd=elsewhere, env=clean_env(), timeout=120)
    assert "satisfies torch==" in out, out
    # The folders libweft was built in, and python/build (which holds the build output
    # with its copy), are covered by empty tmpfs mounts in a mount namespace of this check
    # only; the check also asserts which libweft file the process mapped.
    hidden = libweft_dirs() + [ROOT / "python" / "build"]
    mounts = " && ".join(f"mount -t tmpfs none '{d}'" for d in hidden if d.is_dir())
    script = f"{mounts} && ! ls '{hidden[0]}/libweft.so.0' 2>/dev/null && exec \"$@\""
    out = run(["unshare", "-m", "sh", "-c", script, "sh", str(py), str(CHECK)], cwd=elsewhere,
              env=clean_env(), timeout=300)
    assert f"weft from {tmp / 'wheel-venv'}" in out, out
    assert "rank 1: all_reduce of 2 ranks = 3.0 ok" in out, out
