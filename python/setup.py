"""Builds weft._C, the c10d backend, against the installed torch and libweft.

libweft is found, in order, at:
  $WEFT_HOME              an install prefix (include/weft/weft.h, lib/ or lib64/libweft.so.0)
                          or a source tree with a build in $WEFT_BUILD_DIR (default build/)
  the repository root     python/.. with its build/ (what `bash scripts/setup.sh` makes)
The library is copied into the package next to the extension (rpath $ORIGIN), so the
installed package does not depend on the repository's build folder afterwards.
"""
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent


def import_installed_torch():
    """Imports the torch that the user installed, even inside pip's isolated build env.

    pip hides site-packages from isolated builds; listing torch as a build requirement
    would download a second, possibly different, torch and build an extension whose ABI
    does not match the one used at run time. So ask the same interpreter, with pip's
    isolation variables removed, where its torch lives and put that on sys.path (last, so
    the build env's setuptools still wins).
    """
    try:
        import torch  # noqa: F401
        return
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
    sys.path.append(probe.stdout.strip())
    import torch  # noqa: F401


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
            lib = libdir / "libweft.so.0"
            looked.append(str(lib))
            if (inc / "weft" / "weft.h").is_file() and lib.exists():
                return inc, lib.resolve()
    sys.exit("weft: libweft.so.0 not found; build it with `bash scripts/setup.sh` (or "
             "`cmake --build build --target weft`) or set WEFT_HOME. Looked at: "
             + ", ".join(looked))


import_installed_torch()
import torch  # noqa: E402
from torch.utils.cpp_extension import BuildExtension, CppExtension  # noqa: E402

include_dir, libweft = find_libweft()
# weft.torch compares this with the torch it runs under before loading the extension:
# an extension built against another torch fails with unresolved C++ symbols otherwise.
(HERE / "weft" / "_build_info.py").write_text(
    '"""Written by setup.py: the torch weft._C was compiled against."""\n'
    f"TORCH_VERSION = {torch.__version__!r}\n")
# Shipped inside the package under its soname, which is what the extension records.
shutil.copyfile(libweft, HERE / "weft" / "libweft.so.0")

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
            include_dirs=[str(include_dir), str(HERE / "csrc")],
            extra_objects=[str(HERE / "weft" / "libweft.so.0")],
            define_macros=cuda_macros,
            extra_compile_args=["-O2", "-g0", "-Wall", "-Wno-unused-parameter"],
            extra_link_args=["-Wl,-rpath,$ORIGIN"],
        )
    ],
    package_data={"weft": ["libweft.so.0", "_build_info.py"]},
    cmdclass={"build_ext": BuildExtension},
)
