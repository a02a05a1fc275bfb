#!/usr/bin/env bash
# The prepared CUDA run: every CUDA path of tiarray and the GPU benchmarks, in one command
# with one log, on a machine with an NVIDIA GPU where torch, JAX (CUDA plugin), CuPy,
# pytest(-xdist, -timeout) and hypothesis are installed but Taichi may not be.
#
#   bash benchmarks/gpu_run.sh [STAGE ...]     # stages: env check suite bench (default: all)
#
# Taichi and the test extras that such a machine lacks travel as wheels in .whl/ (ignored by
# git), made on a machine with pip and a network:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_27_x86_64 --platform manylinux2014_x86_64 \
#     -d .whl taichi==1.7.4 dill array-api-strict array-api-compat array-api-extra
# tiarray itself is used from this checkout (copied into the layout pip installs: operators/
# becomes tiarray/operators). Everything is written under $OUT (default /tmp/gpu_out):
# run.log (all stages), gpu_check.log, suite.log, suite.xml (JUnit), bench.log.
# Each stage has a time limit, so the run ends in about 7 minutes whatever happens.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
STAGES=${*:-env check suite bench}
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 ENABLE_TAICHI_HEADER_PRINT=0 TI_SKIP_VERSION_CHECK=ON HYPOTHESIS_PROFILE=ci
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # JAX would take 75% of the GPU in every process
export TI_OFFLINE_CACHE_FILE_PATH=/tmp/ticache
PY=${PY:-python3}
T0=$(date +%s)

stage() {  # stage NAME LIMIT_S CMD...: run CMD with a time limit, print its status and time
    local name=$1 limit=$2 start rc
    shift 2
    echo "=== $name (limit ${limit}s) start at +$(($(date +%s) - T0))s"
    start=$(date +%s)
    timeout -k 10 "$limit" "$@"
    rc=$?
    echo "=== $name: rc=$rc in $(($(date +%s) - start))s$([ $rc = 124 ] && echo ' (TIME LIMIT)')"
    return $rc
}

# ---- install: the wheels into /tmp/site, tiarray from the checkout into /tmp/src
if ls .whl/*.whl >/dev/null 2>&1; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl ||
        { echo "FAIL: wheel install"; exit 1; }
fi
rm -rf /tmp/src && mkdir -p /tmp/src && cp -r tiarray /tmp/src/ && cp -r operators /tmp/src/tiarray/operators
export PYTHONPATH=/tmp/src:/tmp/site${PYTHONPATH:+:$PYTHONPATH}

for s in $STAGES; do case $s in
env)
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
    nproc; uptime
    $PY -P - <<'PYEOF'
import importlib, platform, sys
print("python", platform.python_version(), sys.executable)
for m in ("numpy", "taichi", "torch", "jax", "jaxlib", "cupy", "numba", "numba_cuda", "scipy", "pytest", "hypothesis"):
    try:
        mod = importlib.import_module(m)
        print(f"{m:12s} {getattr(mod, '__version__', '?')}")
    except Exception as e:
        print(f"{m:12s} not importable: {type(e).__name__}: {e}")
import torch, jax
print("torch cuda", torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")
print("jax devices", jax.devices())
import tiarray as ta
print("tiarray", ta.__file__, "backend", ta.backend(), "init:", ta.init("cuda"))
PYEOF
    ;;
check)
    # gpu_check.py and the CUDA suite run side by side (the ordering checks then run under
    # load; 16 cores: 10 pytest workers leave some for the check)
    stage gpu_check 200 $PY benchmarks/gpu_check.py --no-suite >"$OUT/gpu_check.log" 2>&1 &
    CHECK_PID=$!
    ;;
suite)
    stage "suite (TIARRAY_ARCH=cuda pytest -m cuda)" 200 env TIARRAY_ARCH=cuda $PY -P -m pytest \
        -m cuda -q -p no:cacheprovider -n 10 --timeout 180 -rfE --junitxml="$OUT/suite.xml" \
        tests/operators tests/sparse tests/interop >"$OUT/suite.log" 2>&1
    tail -n 60 "$OUT/suite.log"
    ;;
bench)
    if [ -n "${CHECK_PID:-}" ]; then wait "$CHECK_PID"; fi
    CHECK_PID=
    {
        stage "bench_operators --gpu" 60 $PY benchmarks/bench_operators.py --gpu
        stage "bench_sparse --gpu" 100 $PY benchmarks/bench_sparse.py --gpu
        stage "bench_network --gpu" 90 $PY benchmarks/bench_network.py --gpu
    } >"$OUT/bench.log" 2>&1
    cat "$OUT/bench.log"
    ;;
*) echo "unknown stage $s" ;;
esac; done
if [ -n "${CHECK_PID:-}" ]; then wait "$CHECK_PID"; fi
[ -f "$OUT/gpu_check.log" ] && sed -n '/^SUMMARY/,$p' "$OUT/gpu_check.log"
echo "=== done in $(($(date +%s) - T0))s"
