#!/usr/bin/env bash
# perf_run.sh - the measurements behind kernels/PERF.md in one command, on a
# GPU machine, in a folder made by bundle.sh (run from there): the GPU
# tests, kvlab bench over every format, the torch peer, the ITL fits, FP8
# path A, the GPU lab as drawn after its sweep, and nvidia-smi's report.
# usage: ./perf_run.sh OUTDIR; then tests/bench/perf_table.py OUTDIR
set -uo pipefail
out=${1:?usage: perf_run.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$here KVLAB_CUDA_PLUGIN=$here/libkvlab_cuda.so KVLAB_DATA=$here/scenarios
cd "$here"
mkdir -p "$out/fp8_paths"
nvidia-smi > "$out/smi.txt"
KVLAB_TESTDATA=/tmp CK_RUN_SUITE=gpu ./run_tests > "$out/tests.txt" 2>&1
./kvlab bench --json > "$out/bench.json"
python3 torch_peer.py --out "$out/peer.json" > /dev/null
./kvlab bench --itl --batch 1 --contexts 1k,4k,16k,32k --format bf16 --format fp8 --format int8 \
    --format int4 --json > "$out/itl.json"
./kvlab bench --format bf16 --format fp8 --fp8-path A --json > "$out/fp8_paths/path_a.json"
./kvlab bench --format bf16 --format fp8 --fp8-path A --promote 1 --json > "$out/fp8_paths/path_a_promote1.json"
# the GPU lab (F5), swept (r), as text once the sweep has ended
tmux -L kvlab-perf new-session -d -x 200 -y 60 "LANG=C.UTF-8 TERM=xterm-256color ./kvlab"
sleep 2
tmux -L kvlab-perf send-keys F5
sleep 1
tmux -L kvlab-perf send-keys r
for _ in $(seq 300); do                 # at most five minutes
    sleep 1
    tmux -L kvlab-perf capture-pane -p | grep -q "sweep done" && break
done
tmux -L kvlab-perf capture-pane -p > "$out/gpu_screen.txt"
tmux -L kvlab-perf kill-server
