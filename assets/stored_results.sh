#!/usr/bin/env bash
# stored_results.sh RESULTS OUTDIR - writes the stored results of one GPU
# run, OUTDIR/NAME.json (NAME: the device's name in lower case, words
# joined by '-'; the path is printed), from the folder perf_run.sh filled
# on the GPU machine (tests/bench/perf_run.sh; kernels/results/ holds the
# stored run):
#
#   RESULTS/bench.json   `kvlab bench --backend cuda --json`: the points
#                        and slope fits at the GPU lab's batch (1) are kept
#   RESULTS/smi.txt      nvidia-smi's report, whose first line dates the run
#   RESULTS/niah.json    `kvlab niah --backend cuda --json` (the default GPU
#                        grid), where the run has one: the member "niah",
#                        {measured, command, source, result}, result kept
#                        whole
#   RESULTS/niah/date.txt the NIAH run's date (YYYY-MM-DD), which may differ
#                        from the speed run's
#
# The lab shows them where this machine has no GPU (the GPU lab, F5, and
# the NIAH screen), and
# `make install` installs them with the data. The build suite checks that
# this script writes assets/stored/ byte for byte from kernels/results/,
# so the two cannot drift apart.
# usage: assets/stored_results.sh kernels/results assets/stored
set -euo pipefail
results=${1:?usage: stored_results.sh RESULTS OUTDIR}
outdir=${2:?usage: stored_results.sh RESULTS OUTDIR}
command -v jq > /dev/null || { echo "stored_results.sh: jq is missing" >&2; exit 2; }
bench=$results/bench.json
smi=$results/smi.txt
niah=$results/niah.json
for f in "$bench" "$smi"; do
    [ -f "$f" ] || { echo "stored_results.sh: no $f" >&2; exit 2; }
done
# The command that wrote bench.json, as perf_run.sh runs it.
made_by="kvlab bench --backend cuda --json"
# The GPU lab sweeps at batch 1 unless told otherwise (screen_gpu.c).
batch=1
backend=$(jq -r .backend "$bench")
[ "$backend" = cuda ] || { echo "stored_results.sh: $bench measured '$backend', not a GPU" >&2; exit 2; }
measured=$(LC_ALL=C date -u -d "$(head -n 1 "$smi")" +%F) ||
    { echo "stored_results.sh: $smi:1: no date on the first line" >&2; exit 2; }
device=$(jq -r .device "$bench")
name=$(printf '%s' "$device" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//')
niah_arg=(--argjson niah null --arg niah_measured "" --arg niah_source "")
if [ -f "$niah" ]; then
    niah_date=$results/niah/date.txt
    niah_measured=$(head -n 1 "$niah_date" 2> /dev/null) || true
    [[ $niah_measured =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] ||
        { echo "stored_results.sh: $niah_date:1: expected the NIAH run's date (YYYY-MM-DD)" >&2; exit 2; }
    [ "$(jq -r .backend "$niah")" = cuda ] ||
        { echo "stored_results.sh: $niah measured '$(jq -r .backend "$niah")', not a GPU" >&2; exit 2; }
    niah_arg=(--slurpfile niah "$niah" --arg niah_measured "$niah_measured" --arg niah_source "$niah")
fi
mkdir -p "$outdir"
out=$outdir/$name.json
# Numbers go through `+ 0`, so that jq writes each as the shortest text
# that reads back as the same double, whichever jq writes it.
jq --arg name "$name" --arg measured "$measured" --arg command "$made_by" --arg source "$bench" \
   --argjson batch "$batch" --arg niah_command "kvlab niah --backend cuda --json" "${niah_arg[@]}" '
    def num: . + 0;
    .rows as $rows
    | {
        name: $name,
        device: .device,
        measured: $measured,
        command: $command,
        source: $source,
        sm_count: .sm_count,
        copy_GBps: (.copy_GBps | num),
        fp8_path: .fp8_path,
        shape: .shape,
        batch: $batch,
        formats: [.fits[] | select(.batch == $batch) | .format as $f | {
            format: $f,
            slope_ms_per_token: (.slope_ms_per_token | num),
            points: [$rows[] | select(.format == $f and .batch == $batch)
                     | {context, attention_ms: (.attention_ms | num), GBps: (.GBps | num)}]
        }]
      }
    + (if $niah == null then {} else {niah: {measured: $niah_measured, command: $niah_command,
                                             source: $niah_source, result: $niah[0]}} end)' "$bench" > "$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
