#!/usr/bin/env bash
# side_by_side.sh - two builds of the CUDA kernels timed against each other
# on one GPU in one command, as kernels/PERF.md's experiments are: the GPU
# suite on the newer build, then `kvlab bench --backend cuda --json` for
# each build in turn, two rounds, the order swapped in the second (the
# build run first in a round has measured up to 3% slower on the same
# code), and a table of the after/before ratio at every point beside each
# build's own spread between its two rounds.
#
# usage, in the repository (a folder for a GPU machine, as bundle.sh makes
# for perf_run.sh; the "before" build from REV, in a git worktree of its
# own, the "after" from this tree):
#   tests/bench/side_by_side.sh --bundle REV OUTDIR
# then, on the GPU machine, in that folder:
#   ./side_by_side.sh RESULTS [BEFORE AFTER]
# BEFORE and AFTER (default before/ and after/ beside the script) each hold
# the kvlab and libkvlab_cuda.so of one build (a plugin only loads in the
# kvlab of its own ABI). The grid: BATCHES (default 1,16) x CONTEXTS
# (default 1k,4k,16k,32k,64k,128k, kvlab bench's), every format, and FP8
# path A at A_CONTEXTS (default 4k,32k,128k), ITERS timed steps per point
# (default 500, ten times kvlab bench's, for a steadier median); about two
# minutes on an H200. RESULTS gets smi.txt, suite.txt, one JSON per build,
# grid and round (NAME.ROUND.json, NAME.a.ROUND.json for path A) and
# table.txt, and RESULTS.tar.gz beside it all of them.
set -euo pipefail

bundle() {                                  # REV OUTDIR: run in the repository
    local rev=$1 out=$2 tree
    cd "$(dirname "$0")/../.."
    tree=$(mktemp -d "${TMPDIR:-/tmp}/kvlab-before.XXXXXX")
    git worktree add --detach "$tree" "$rev" > /dev/null
    (cd "$tree" && make -s -j2 build/kvlab build/libkvlab_cuda.so)
    make -s -j2 build/kvlab build/libkvlab_cuda.so build/tests/run_tests
    rm -rf "$out" && mkdir -p "$out/before" "$out/after"
    cp "$tree/build/kvlab" "$tree/build/libkvlab_cuda.so" "$out/before/"
    cp build/kvlab build/libkvlab_cuda.so "$out/after/"
    cp build/tests/run_tests tests/bench/side_by_side.sh "$out/"
    cp -R scenarios "$out/"
    for lib in libcjson.so.1 libmd4c.so.0 libsubunit.so.0; do
        path=$(ldconfig -p | awk -v l="$lib" '$1 == l && !found { print $NF; found = 1 }')
        [ -n "$path" ] && cp -L "$path" "$out/"
    done
    git -C "$tree" rev-parse HEAD > "$out/before/commit.txt"
    git rev-parse HEAD > "$out/after/commit.txt"
    git worktree remove --force "$tree"
    ls -la "$out" "$out/before" "$out/after"
}

if [ "${1:-}" = --bundle ]; then
    [ $# -eq 3 ] || { echo "usage: side_by_side.sh --bundle REV OUTDIR" >&2; exit 2; }
    bundle "$2" "$(realpath -m "$3")"
    exit 0
fi

out=${1:?usage: side_by_side.sh RESULTS [BEFORE AFTER]  (or --bundle REV OUTDIR)}
here=$(cd "$(dirname "$0")" && pwd)
before=$(realpath "${2:-$here/before}") after=$(realpath "${3:-$here/after}")
batches=${BATCHES:-1,16} contexts=${CONTEXTS:-1k,4k,16k,32k,64k,128k} a_contexts=${A_CONTEXTS:-4k,32k,128k}
iters=${ITERS:-500}
for tool in python3 nvidia-smi; do
    command -v "$tool" > /dev/null || { echo "side_by_side.sh: $tool is missing" >&2; exit 1; }
done
for d in "$before" "$after"; do
    [ -x "$d/kvlab" ] && [ -f "$d/libkvlab_cuda.so" ] ||
        { echo "side_by_side.sh: $d holds no kvlab and libkvlab_cuda.so" >&2; exit 2; }
done
mkdir -p "$out" && out=$(cd "$out" && pwd)
export LD_LIBRARY_PATH=$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} KVLAB_DATA=$here/scenarios
unset KVLAB_CUDA_PATH KVLAB_CUDA_FP8_PROMOTE    # each build's defaults, path A where asked
cd "$here"
nvidia-smi > "$out/smi.txt"
start=$SECONDS
if ! KVLAB_CUDA_PLUGIN=$after/libkvlab_cuda.so KVLAB_TESTDATA=/tmp KVLAB_NEED_GPU=1 CK_RUN_SUITE=gpu \
        ./run_tests > "$out/suite.txt" 2>&1; then
    echo "side_by_side.sh: the GPU suite failed on $after:" >&2
    cat "$out/suite.txt" >&2
    exit 1
fi
echo "GPU suite passed in $((SECONDS - start)) s"

bench() {                                   # NAME DIR ROUND
    KVLAB_CUDA_PLUGIN=$2/libkvlab_cuda.so "$2/kvlab" bench --backend cuda --json --iters "$iters" \
        --batch "$batches" --contexts "$contexts" > "$out/$1.$3.json"
    KVLAB_CUDA_PLUGIN=$2/libkvlab_cuda.so "$2/kvlab" bench --backend cuda --json --iters "$iters" \
        --batch "$batches" --contexts "$a_contexts" --format fp8 --fp8-path A > "$out/$1.a.$3.json"
}
for round in 1 2; do
    if [ $round = 1 ]; then order="before after"; else order="after before"; fi
    for name in $order; do
        t=$SECONDS
        if [ $name = before ]; then bench before "$before" $round; else bench after "$after" $round; fi
        echo "round $round, $name: $((SECONDS - t)) s"
    done
done

python3 - "$out" > "$out/table.txt" <<'EOF'
import json, sys
out = sys.argv[1]

def rows(name, rnd, grid):
    d = json.load(open("%s/%s%s.%d.json" % (out, name, grid, rnd)))
    assert d["backend"] == "cuda", "%s ran on %s" % (name, d["backend"])
    return {(r["format"], r["batch"], r["context"]): r["attention_ms"] * 1e3 for r in d["rows"]}

print("after/before of each point's mean over the two rounds (us); spread: each build's |round 1 - round 2| / mean")
print("%-10s %3s %7s %15s %15s %7s %7s %7s" % ("format", "B", "S", "before r1/r2", "after r1/r2", "ratio",
                                           "spr bef", "spr aft"))
worst = []
for grid, label in (("", ""), (".a", " (A)")):
    b1, b2, a1, a2 = rows("before", 1, grid), rows("before", 2, grid), rows("after", 1, grid), rows("after", 2, grid)
    for k in b1:
        mb, ma = (b1[k] + b2[k]) / 2, (a1[k] + a2[k]) / 2
        sb, sa = abs(b1[k] - b2[k]) / mb, abs(a1[k] - a2[k]) / ma
        ratio = ma / mb
        flag = " slower" if ratio - 1 > max(sb, sa) else ""
        print("%-10s %3d %7d %7.1f/%-7.1f %7.1f/%-7.1f %7.3f %6.1f%% %6.1f%%%s" % (
            k[0] + label, k[1], k[2], b1[k], b2[k], a1[k], a2[k], ratio, 100 * sb, 100 * sa, flag))
        worst.append((ratio, k, label))
worst.sort()
print("ratio from %.3f (%s%s B=%d S=%d) to %.3f (%s%s B=%d S=%d); 'slower': more than either build's spread" % (
    worst[0][0], worst[0][1][0], worst[0][2], worst[0][1][1], worst[0][1][2],
    worst[-1][0], worst[-1][1][0], worst[-1][2], worst[-1][1][1], worst[-1][1][2]))
EOF
cat "$out/table.txt"
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
echo "side_by_side.sh: done in $((SECONDS - start)) s; results in $out and $out.tar.gz"
