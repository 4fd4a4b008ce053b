#!/usr/bin/env bash
# single_stream.sh - the runs behind kernels/PERF.md's section "Single
# stream and FP4, against a plain read of the same bytes", on a GPU machine,
# in a folder made by bundle.sh (run from there): the GPU tests; kvlab bench
# at batch 1 and 16 over 32k-128k, every format, each point beside a plain
# read of its bytes timed the same way (read_ms), two rounds with the
# formats in swapped order; batch 1 over a range of splits (fewer, longer
# blocks against more, shorter ones); and the torch peer over the same
# points. Stops at the first step that fails.
# usage: ./single_stream.sh OUTDIR; then tests/bench/floor_table.py OUTDIR
set -euo pipefail
out=${1:?usage: single_stream.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KVLAB_CUDA_PLUGIN=$here/libkvlab_cuda.so KVLAB_DATA=$here/scenarios
cd "$here"
nvidia-smi > "$out/smi.txt"
if ! KVLAB_TESTDATA=/tmp KVLAB_NEED_GPU=1 CK_RUN_SUITE=gpu ./run_tests > "$out/tests.txt" 2>&1; then
    echo "single_stream.sh: the GPU tests failed:" >&2
    cat "$out/tests.txt" >&2
    exit 1
fi
bench() { ./kvlab bench --backend cuda --contexts 32k,64k,128k --iters 200 "$@"; }
forward=(--format bf16 --format fp8 --format int8 --format int4 --format nvfp4 --format mxfp4)
backward=(--format mxfp4 --format nvfp4 --format int4 --format int8 --format fp8 --format bf16)
bench --batch 1,16 "${forward[@]}" --json > "$out/round_a.json"
bench --batch 1,16 "${backward[@]}" --json > "$out/round_b.json"
for n in 4 8 16 32 64; do
    bench --batch 1 --format bf16 --format fp8 --format int4 --format nvfp4 --splits "$n" --json \
        > "$out/splits_$n.json"
done
python3 torch_peer.py --batch 1,16 --contexts 32k,64k,128k --out "$out/peer.json" > /dev/null
