#!/usr/bin/env bash
# bundle.sh - gathers kvlab, its CUDA plugin, the test runner, the shared
# libraries a bare GPU machine may lack, the scenarios, the lessons and the
# torch peer into one folder (default .gpu/), with perf_run.sh,
# fp8_paths.sh, niah_gpu.sh and single_stream.sh, for running where the
# project cannot be built (they set the library path themselves).
# Paths given are taken from the repository's root, where it works.
# usage: tests/bench/bundle.sh [OUTDIR [TORCH_PEER]]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-.gpu}
peer=${2:-../shared/bench/torch_peer.py}
[ -f "$peer" ] || { echo "bundle.sh: no torch peer at $peer (give its path second)" >&2; exit 1; }
make -s kvlab libkvlab_cuda.so build/tests/run_tests
rm -rf "$out" && mkdir -p "$out"
cp kvlab libkvlab_cuda.so build/tests/run_tests tests/bench/perf_run.sh tests/bench/fp8_paths.sh tests/bench/niah_gpu.sh \
    tests/bench/single_stream.sh "$out"/
cp -R scenarios lessons "$out"/
for lib in libcjson.so.1 libmd4c.so.0 libsubunit.so.0; do
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l && !found { print $NF; found = 1 }')
    [ -n "$path" ] && cp -L "$path" "$out"/
done
cp "$peer" "$out"/
ls -la "$out"
