#!/usr/bin/env bash
# One pass of every check that needs a real NVIDIA GPU, for the lent device machine (see ../shared/gpu.md).
#
# Run from the project root there, with PyCUDA wheels in .whl/ (../shared/gpu/build-pycuda-wheels.sh .whl):
#
#     bash benchmarks/gpu_check.sh            # results under $OUT (or ./gpu-out when OUT is unset)
#
# It installs PyCUDA beside the image's own packages, then runs, each under its own time limit so one hang
# cannot eat the lease: the CUDA test files (they use the real GPU when tl.cuda.is_available()),
# benchmarks/cuda.py and benchmarks/cuda_gpt.py (flash attention, the nanoGPT step) beside PyTorch CUDA, and a
# short program launching most kernels under compute-sanitizer (memcheck, then racecheck for shared memory).
# Set GPU_CHECK_ONLY to a space-separated subset of "tests bench gpt sanitizer" to run fewer (all four can take
# up to 16 minutes: split them over two calls of the device tool).
set -u
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
ONLY=${GPU_CHECK_ONLY:-"tests bench gpt sanitizer"}
export PYTHONUNBUFFERED=1
# PyCUDA's wheels beside the image's packages; the project runs from this copy of the tree, where kernel_src/ and
# widgets/ are linked into the package as an install maps them (benchmarks put the tree first on sys.path)
python3 -m pip install -q --no-index --no-deps --no-compile --target .site .whl/*.whl || exit 1
ln -sfn ../kernel_src tinygrad_like/kernel_src && ln -sfn ../widgets tinygrad_like/widgets || exit 1
export PYTHONPATH=$PWD/.site:$PWD:${PYTHONPATH:-}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -c "import tinygrad_like as tl, torch; print('tl cuda:', tl.cuda.is_available(), tl.cuda.unavailable_reason(), '| torch', torch.__version__)" \
    2>&1 | tee -a "$OUT/gpu.txt"

if [[ " $ONLY " == *" tests "* ]]; then
    timeout 240 python3 -m pytest -q -p no:cacheprovider --timeout 120 -rfE \
        tests/test_cuda_backend.py tests/test_cuda_runtime.py tests/test_cuda_user_kernel.py \
        tests/test_inplace_fast_paths.py tests/test_storage.py tests/test_backend_protocol.py \
        tests/test_cuda_autotune.py tests/test_cuda_gpt_step.py \
        2>&1 | tee "$OUT/pytest.log" | tail -60
    # the conformance table's CUDA column on the GPU (each row's host fallbacks go to cuda_column.json)
    TL_CUDA_COLUMN_REPORT="$OUT/cuda_column.json" timeout 240 python3 -m pytest -q -p no:cacheprovider \
        --timeout 120 -rfE -s tests/test_ops_vs_torch_cuda.py 2>&1 | tee "$OUT/pytest_column.log" | tail -40
fi
if [[ " $ONLY " == *" bench "* ]]; then
    timeout 120 python3 benchmarks/cuda.py --out "$OUT/cuda.json" --repeats 5 2>&1 | tail -70
fi
if [[ " $ONLY " == *" gpt "* ]]; then
    timeout 200 python3 benchmarks/cuda_gpt.py --out "$OUT/cuda_gpt.json" 2>&1 | tail -40
fi
if [[ " $ONLY " == *" sanitizer "* ]]; then
    timeout 90 compute-sanitizer --tool memcheck --print-limit 20 python3 benchmarks/gpu_smoke.py \
        2>&1 | tee "$OUT/sanitizer.log" | tail -30
    timeout 150 compute-sanitizer --tool racecheck --print-limit 20 python3 benchmarks/gpu_smoke.py \
        2>&1 | tee "$OUT/racecheck.log" | tail -30
fi
