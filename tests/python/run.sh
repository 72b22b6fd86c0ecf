#!/usr/bin/env bash
# The torch backend's suite: installs torch and pytest if missing (from PyPI), makes sure
# libweft is built, pip installs ./python (compiling the extension against that torch)
# and runs pytest. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
BUILD=${WEFT_BUILD_DIR:-build}

have() { "$PY" -c "import $1" >/dev/null 2>&1; }
# torch from PyPI is large (about 5 GB with its CUDA wheels, ~6 min here); pip's cache
# and the installed copy are reused on later runs.
have torch || "$PY" -m pip install torch
have pytest || "$PY" -m pip install pytest
have ninja || "$PY" -m pip install ninja  # parallel, incremental extension builds
have numpy || "$PY" -m pip install numpy  # silences torch's warning at import
have expecttest || "$PY" -m pip install expecttest  # torch's test helpers import it

if [ -f "$BUILD/CMakeCache.txt" ]; then
  cmake --build "$BUILD" --target weft weftrun -j"$(nproc)"  # no-op when up to date
else
  bash scripts/setup.sh
fi

# In-tree build: python/build keeps the objects, so an unchanged extension relinks only.
MAX_JOBS=$(nproc) "$PY" -m pip install --no-build-isolation -q ./python
start=$(date +%s)
cd tests/python
"$PY" -m pytest -q -p no:cacheprovider --ignore=conformance "$@"
cd ../..
# PyTorch's own backend suite, the CI subset on weft (about 2 minutes); the gloo
# reference and the full suite: bash tests/python/conformance/run.sh [--full].
[ -n "${WEFT_SKIP_CONFORMANCE:-}" ] || PYTHON="$PY" BACKENDS=weft bash tests/python/conformance/run.sh
echo "tests/python/run.sh: finished in $(( $(date +%s) - start )) s"
