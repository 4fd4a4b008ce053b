#!/usr/bin/env bash
# perf_run.sh - the measurements behind kernels/PERF.md in one command, on a
# GPU machine, in a folder made by bundle.sh (run from there): the GPU
# tests, kvlab bench over every format, the torch peer, the ITL fits, FP8
# path A, the GPU lab as drawn after its sweep, and nvidia-smi's report.
# Stops at the first step that fails, the GPU tests' included (which fail
# where no GPU can be used);
# every kvlab bench asks for the CUDA backend, so none falls back to the CPU,
# and a GPU lab that measured the CPU reference fails the run.
# usage: ./perf_run.sh OUTDIR; then tests/bench/perf_table.py OUTDIR
set -euo pipefail
out=${1:?usage: perf_run.sh OUTDIR}
for tool in tmux python3 nvidia-smi; do      # before any timing, not after it
    command -v "$tool" > /dev/null || { echo "perf_run.sh: $tool is missing" >&2; exit 1; }
done
mkdir -p "$out" && out=$(cd "$out" && pwd)  # absolute: the script works from its own folder
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KVLAB_CUDA_PLUGIN=$here/libkvlab_cuda.so KVLAB_DATA=$here/scenarios
cd "$here"
mkdir -p "$out/fp8_paths"
nvidia-smi > "$out/smi.txt"
# KVLAB_NEED_GPU: without a usable GPU the runner fails, saying why
if ! KVLAB_TESTDATA=/tmp KVLAB_NEED_GPU=1 CK_RUN_SUITE=gpu ./run_tests > "$out/tests.txt" 2>&1; then
    echo "perf_run.sh: the GPU tests failed:" >&2
    cat "$out/tests.txt" >&2
    exit 1
fi
bench() { ./kvlab bench --backend cuda "$@"; }
bench --json > "$out/bench.json"
python3 torch_peer.py --out "$out/peer.json" > /dev/null
bench --itl --batch 1 --contexts 1k,4k,16k,32k --format bf16 --format fp8 --format int8 --format int4 \
    --json > "$out/itl.json"
bench --format bf16 --format fp8 --fp8-path A --json > "$out/fp8_paths/path_a.json"
bench --format bf16 --format fp8 --fp8-path A --promote 1 --json > "$out/fp8_paths/path_a_promote1.json"
# the GPU lab (F6), swept (r), as text once the sweep has ended
screen() { tmux -L kvlab-perf capture-pane -p > "$out/gpu_screen.txt"; }
wait_for() {                            # at most $2 seconds for text $1 on the screen
    for _ in $(seq "$2"); do
        screen || { echo "perf_run.sh: the lab exited before showing '$1'" >&2; return 1; }
        grep -q "$1" "$out/gpu_screen.txt" && return 0
        sleep 1
    done
    echo "perf_run.sh: the lab never showed '$1'" >&2
    return 1
}
tmux -L kvlab-perf new-session -d -x 200 -y 60 "LANG=C.UTF-8 TERM=xterm-256color ./kvlab"
trap 'tmux -L kvlab-perf kill-server 2>/dev/null || true' EXIT
wait_for "A 20 GiB KV pool" 30
tmux -L kvlab-perf send-keys F6
wait_for "Measured decode attention" 30
tmux -L kvlab-perf send-keys r
wait_for "sweep done" 300
if grep -q "CPU reference" "$out/gpu_screen.txt"; then
    echo "perf_run.sh: the GPU lab measured the CPU reference, not the GPU" >&2
    exit 1
fi
