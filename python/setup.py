"""The build steps of the weft package that pyproject.toml cannot declare.

pyproject.toml declares the package; this file compiles weft._C, the c10d backend, against
the installed torch and libweft, and supplies the one dynamic field: the torch requirement,
pinned to the torch the extension was compiled against.

libweft is found, in order, at:
  $WEFT_HOME              an install prefix (include/weft/weft.h, lib/ or lib64/libweft.so.0)
                          or a source tree with a build in $WEFT_BUILD_DIR (default build/)
  the repository root     python/.. with its build/ (what `bash scripts/setup.sh` makes)
The build copies it next to the extension in the build output (never into the source
folder), so wheels carry it and the extension finds it through its rpath $ORIGIN; the
installed package does not depend on the repository's build folder afterwards.
"""
import glob
import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
LIBWEFT = "libweft.so.0"  # the soname, which is what the extension records as needed


def import_installed_torch():
    """Imports the torch that the user installed, even inside pip's isolated build env.

    `pip install ./python` builds in an isolated env that hides site-packages. Listing
    torch in build-system.requires would make pip download a second torch (about 5 GB with
    its CUDA wheels) into that throwaway env, the newest one, and compile against it: an
    extension whose C++ ABI need not match the torch it then runs with. pip runs the
    build with the interpreter that runs pip (sys.executable) and hides site-packages
    only through its environment (a sitecustomize on PYTHONPATH, PYTHONNOUSERSITE). So
    ask that interpreter, without those variables, where its torch lives and put that on
    sys.path, last, so the build env's setuptools still wins. With --no-build-isolation
    torch imports directly. Returns the folder holding the torch package.
    """
    try:
        import torch
        return os.path.dirname(os.path.dirname(torch.__file__))
    except ImportError:
        pass
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME")}
    probe = subprocess.run(
        [sys.executable, "-c",
         "import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))"],
        env=env, capture_output=True, text=True)
    if probe.returncode != 0:
        why = probe.stderr.strip().splitlines()[-1:] or ["torch not importable"]
        sys.exit("weft: building the torch backend needs torch installed first "
                 "(pip install torch) in the interpreter that runs pip: " + why[0])
    site = probe.stdout.strip()
    sys.path.append(site)
    import torch  # noqa: F401
    return site


def torch_requirement(site, torch_version):
    """`torch==V`, V the version pip records for the torch in `site` that we compile against.

    The extension calls torch's C++ API, which has no stable ABI: it is tied to the exact
    torch build, so the pin is exact. V is the distribution's version, as pip sees it,
    not torch.__version__: PyPI's wheel is "2.9.1" while it reports "2.9.1+cu128", and a
    pin on the latter would match nothing pip knows. Where the installed distribution
    carries a local label itself (download.pytorch.org's "2.9.1+cpu"), the pin keeps it,
    since a CPU and a CUDA build of one release are different builds (CUDA libraries,
    in older releases even _GLIBCXX_USE_CXX11_ABI). A pin without a label admits any local
    build of that release (PEP 440); weft.torch's import-time check compares the full
    torch.__version__ and names the rebuild command if one slips through.
    """
    for dist in importlib.metadata.distributions(name="torch", path=[site]):
        return f"torch=={dist.version}"
    return f"torch=={torch_version.split('+')[0]}"  # a source build without metadata


def find_libweft():
    """Returns (include_dir, library_file) or exits naming every place it looked."""
    build = os.environ.get("WEFT_BUILD_DIR", "build")
    roots = []
    if os.environ.get("WEFT_HOME"):
        roots.append(Path(os.environ["WEFT_HOME"]).resolve())
    roots.append(HERE.parent)
    looked = []
    for root in roots:
        inc = root / "include"
        for libdir in (root / "lib", root / "lib64", root / build):
            lib = libdir / LIBWEFT
            looked.append(str(lib))
            if (inc / "weft" / "weft.h").is_file() and lib.exists():
                return inc, lib.resolve()
    sys.exit("weft: libweft.so.0 not found; build it with `bash scripts/setup.sh` (or "
             "`cmake --build build --target weft`) or set WEFT_HOME. Looked at: "
             + ", ".join(looked))


torch_site = import_installed_torch()
import torch  # noqa: E402
from torch.utils.cpp_extension import BuildExtension, CppExtension  # noqa: E402


def holds_a_file(folder):
    return any(p.is_file() for p in Path(folder).rglob("*"))


class BuildExt(BuildExtension):
    """torch's build_ext, writing libweft and _build_info.py beside the extension.

    "Beside the extension" is the build output (build/lib.*/weft/), which is what wheels
    and installs take, or the source package with --inplace, which needs them there.
    """

    def generated(self):
        folder = Path(self.get_ext_fullpath("weft._C")).parent
        return folder / LIBWEFT, folder / "_build_info.py"

    def run(self):
        include_dir, libweft = find_libweft()
        lib, build_info = self.generated()
        lib.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(libweft, lib)
        # weft.torch compares this with the torch it runs under before loading the
        # extension: one built against another torch fails with unresolved C++ symbols.
        build_info.write_text(
            '"""Written by setup.py: the torch weft._C was compiled against."""\n'
            f"TORCH_VERSION = {torch.__version__!r}\n")
        for ext in self.extensions:
            ext.include_dirs.insert(0, str(include_dir))
            ext.extra_objects.append(str(lib))
        # build_ext adds a venv's own include/ for every build from a venv; it holds no
        # header, but naming it changes every compile command, so ninja would recompile
        # the whole extension for each environment it is installed into. Folders without
        # a file are dropped: the commands, and so the reusable objects, stay the same.
        self.include_dirs = [d for d in self.include_dirs or [] if holds_a_file(d)]
        super().run()

    def get_outputs(self):
        return super().get_outputs() + [str(p) for p in self.generated()]


def cuda_build():
    """(extension class, define_macros): whether weft._C handles CUDA tensors, and if not why.

    CUDA tensors are issued on torch's streams (csrc/cuda_path.h), which needs torch's
    CUDA headers and libraries (c10_cuda, torch_cuda) and the CUDA toolkit's headers.
    So the extension is compiled with WEFT_TORCH_CUDA, as torch's CUDAExtension (which
    adds those), only when the installed torch has CUDA (torch.version.cuda) and the
    toolkit's cuda_runtime_api.h is under torch's CUDA_HOME ($CUDA_HOME, nvcc's prefix
    or /usr/local/cuda); no GPU is needed to compile. WEFT_TORCH_CUDA=0 forces a
    CPU-only build. Otherwise WEFT_TORCH_NO_CUDA_WHY tells csrc/cuda_path.cpp which
    check failed, and a CUDA tensor is refused with that reason. A number, not a
    string: torch's ninja build passes -D flags through a shell.
    """
    from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension
    why = None
    if os.environ.get("WEFT_TORCH_CUDA") == "0":
        why = 3, "WEFT_TORCH_CUDA=0"
    elif torch.version.cuda is None:
        why = 1, f"torch {torch.__version__} has no CUDA"
    elif CUDA_HOME is None or not (Path(CUDA_HOME) / "include" / "cuda_runtime_api.h").is_file():
        why = 2, f"no cuda_runtime_api.h under CUDA_HOME ({CUDA_HOME}); set CUDA_HOME"
    if why is None:
        print(f"weft: compiling CUDA tensor support (torch CUDA {torch.version.cuda}, "
              f"headers in {CUDA_HOME})")
        return CUDAExtension, [("WEFT_TORCH_CUDA", "1")]
    print(f"weft: compiling without CUDA tensor support: {why[1]}")
    return CppExtension, [("WEFT_TORCH_NO_CUDA_WHY", str(why[0]))]


extension_class, cuda_macros = cuda_build()
setup(
    ext_modules=[
        extension_class(
            "weft._C",
            # setuptools wants source paths relative to this directory.
            sorted(glob.glob("csrc/*.cpp", root_dir=HERE)),
            include_dirs=[str(HERE / "csrc")],
            define_macros=cuda_macros,
            extra_compile_args=["-O2", "-g0", "-Wall", "-Wno-unused-parameter"],
            extra_link_args=["-Wl,-rpath,$ORIGIN"],
        )
    ],
    install_requires=[torch_requirement(torch_site, torch.__version__)],
    cmdclass={"build_ext": BuildExt},
)
