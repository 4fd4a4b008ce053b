#!/usr/bin/env bash
# niah_gpu.sh - kvlab niah on a GPU machine, in a folder made by bundle.sh
# (run from there): the default GPU grid (lengths to 128k, every default
# format), timed, and the FP8 accumulation experiment: fp8_e4m3 against
# BF16 at 64k, 128k and 256k, once for each FP8 path named.
#
# A path is LABEL=OPTIONS, the options kvlab niah takes for it. The default
# set: paths B, A and C with one split per sequence (--splits 1: the
# contraction spans the whole context), path C so promoted after every
# block of 32 tokens, and path C with the plan's splits.
#
# Writes into OUTDIR: niah.json (the default grid: kvlab niah --json) and
# niah_time.txt (its wall-clock seconds, the target being under 60),
# accumulation/LABEL.json for each path, smi.txt and date.txt; every
# run asks for the CUDA backend, so none falls back to the CPU. niah.json,
# with date.txt and smi.txt, is what stored GPU NIAH results are made from.
# usage: ./niah_gpu.sh OUTDIR [LABEL=OPTIONS]...
#        NIAH_TRIALS (default 20) sets the accumulation runs' trials a cell.
set -euo pipefail
out=${1:?usage: niah_gpu.sh OUTDIR [LABEL=OPTIONS]...}
shift
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=("b-split1=--fp8-path B --splits 1" "a-split1=--fp8-path A --splits 1"
                                  "c-split1=--fp8-path C --splits 1"
                                  "c-promote1-split1=--fp8-path C --promote 1 --splits 1" "c=--fp8-path C")
for p in "${paths[@]}"; do
    [[ $p == ?*=* ]] || { echo "niah_gpu.sh: '$p' is not LABEL=OPTIONS" >&2; exit 2; }
done
command -v nvidia-smi > /dev/null || { echo "niah_gpu.sh: nvidia-smi is missing" >&2; exit 1; }
mkdir -p "$out/accumulation" && out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KVLAB_CUDA_PLUGIN=$here/libkvlab_cuda.so KVLAB_DATA=$here/scenarios
cd "$here"
nvidia-smi > "$out/smi.txt"
date -u +%Y-%m-%d > "$out/date.txt"
t0=$(date +%s.%N)
./kvlab niah --backend cuda --json > "$out/niah.json" 2> "$out/niah_progress.txt"
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' > "$out/niah_time.txt"
echo "niah_gpu.sh: the default grid took $(cat "$out/niah_time.txt") s"
for p in "${paths[@]}"; do
    label=${p%%=*}
    read -r -a opts <<< "${p#*=}"
    echo "niah_gpu.sh: accumulation, $label: ${opts[*]}"
    ./kvlab niah --backend cuda --format fp8_e4m3 --lengths 64k,128k,256k --trials "${NIAH_TRIALS:-20}" \
        "${opts[@]}" --json > "$out/accumulation/$label.json" 2> "$out/accumulation/$label.progress.txt"
done
