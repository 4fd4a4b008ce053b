#!/usr/bin/env bash
# fp8_paths.sh - FP8 paths A, B and C side by side on a GPU machine, in a
# folder made by bundle.sh (run from there): kvlab bench for fp8_e4m3 (and
# BF16 beside it) at batch 1 and 16, 32k to 256k tokens, with the plan's
# splits and with one split per sequence (--splits 1), paths A and C with
# and without promotion after every block of 32 (--promote 1). One JSON
# file per run in OUTDIR, and all of them in OUTDIR/fp8_paths.json (a list
# of {path, promote, splits, bench}). About three minutes on an H200.
# usage: ./fp8_paths.sh OUTDIR
set -euo pipefail
out=${1:?usage: fp8_paths.sh OUTDIR}
command -v python3 > /dev/null || { echo "fp8_paths.sh: python3 is missing" >&2; exit 1; }
mkdir -p "$out" && out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KVLAB_CUDA_PLUGIN=$here/libkvlab_cuda.so KVLAB_DATA=$here/scenarios
cd "$here"
points=(--backend cuda --batch 1,16 --contexts 32k,64k,128k,256k --iters 30 --json)
runs=()
# one run: NAME, then kvlab bench's options
run() {
    local name=$1
    shift
    echo "fp8_paths.sh: $name" >&2
    ./kvlab bench "${points[@]}" "$@" > "$out/$name.json"
    runs+=("$name")
}
for splits in plan 1; do
    s=()
    [ "$splits" = plan ] || s=(--splits "$splits")
    run "bf16_splits_$splits" --format bf16 "${s[@]}"
    run "B_splits_$splits" --format fp8 --fp8-path B "${s[@]}"
    for path in A C; do
        run "${path}_splits_$splits" --format fp8 --fp8-path "$path" "${s[@]}"
        run "${path}_promote1_splits_$splits" --format fp8 --fp8-path "$path" --promote 1 "${s[@]}"
    done
done
python3 - "$out" "${runs[@]}" << 'PY'
import json, sys
out, names = sys.argv[1], sys.argv[2:]
runs = []
for name in names:
    bench = json.load(open(f"{out}/{name}.json"))
    runs.append({"name": name, "path": "bf16" if name.startswith("bf16") else bench["fp8_path"],
                 "promote": bench.get("fp8_promote", 0), "splits": bench.get("splits", 0), "bench": bench})
json.dump(runs, open(f"{out}/fp8_paths.json", "w"), indent=1)
for r in runs:
    for row in r["bench"]["rows"]:
        print(f'{r["name"]:24} B={row["batch"]:<3} S={row["context"]:<7} {row["attention_ms"]:.4f} ms')
PY
