#!/usr/bin/env bash
# niah_cpu.sh KVLAB - the default CPU grid of kvlab niah (lengths 1k to 32k,
# five depths, five formats, 20 trials a cell) on the CPU reference, timed
# by the wall clock: the figure README gives, its target under 60 s on
# two cores. Run it on an idle machine (`make bench`).
set -euo pipefail
kvlab=${1:?usage: niah_cpu.sh KVLAB}
t0=$(date +%s.%N)
"$kvlab" niah --backend cpu > /dev/null 2>&1
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v n="$(nproc)" \
    'BEGIN { printf "kvlab niah, the default CPU grid: %.1f s wall clock on %d cores (target: under 60 s on 2)\n", b - a, n }'
