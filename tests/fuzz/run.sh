#!/bin/sh
# run.sh DIR SECONDS NAME... - runs each fuzz harness DIR/fuzz_NAME for
# SECONDS of CPU time, one after another (`make fuzz`), then prints what
# each did as a Markdown table for README's Fuzzing section.
#
# CPU time, not wall time, so that a campaign means the same on a busy
# machine: libFuzzer stops on wall time, so a harness that got less than its
# share of a processor is run again, on its grown corpus, for what is left.
#
# Each harness grows its own corpus in DIR/corpus/NAME (the checked-in seeds
# in tests/fuzz/corpus/NAME are read, never written) and saves an input that
# breaks it in tests/fuzz/crashes/NAME/ (crash-*, leak-*, timeout-*, oom-*),
# where `make test` replays it once the bug is fixed. Exits 1 when any
# harness broke; the others still run.
set -u
dir=$1 seconds=$2
shift 2
here=$(dirname "$0")
export KVLAB_DATA="${KVLAB_DATA:-$PWD/scenarios}"
rows="" broken=""

stat_of() {     # stat_of LOG NAME: one of libFuzzer's final statistics
    sed -n "s/^stat::$2: *//p" "$1" | tail -n 1
}

# User + system seconds of the children that have ended, from sh's `times`
# (run in this shell, not a subshell, whose children they are not).
tf=$(mktemp)
trap 'rm -f "$tf"' EXIT
cpu_seconds() {
    tail -n 1 "$tf" | awk '{ t = 0; for (i = 1; i <= NF; i++) { split($i, p, /[ms]/); t += p[1] * 60 + p[2] } printf "%d", t }'
}

for name in "$@"; do
    corpus=$dir/corpus/$name crashes=$here/crashes/$name log=$dir/$name.log
    mkdir -p "$corpus" "$crashes"
    before=$(ls "$crashes" | wc -l)
    dict=$here/$name.dict                   # its own words, else JSON's
    [ -f "$dict" ] || dict=$here/json.dict
    echo "fuzz: $name for ${seconds} CPU seconds (log: $log)"
    : > "$log"
    cpu=0 wall=0 execs=0 rc=0
    while [ "$rc" -eq 0 ] && [ "$cpu" -lt "$seconds" ]; do
        times > "$tf"; cpu0=$(cpu_seconds); t0=$(date +%s)
        # -timeout: any input slower than 10 s is a bug; -rss_limit_mb: so is 2 GiB.
        "$dir/fuzz_$name" -max_total_time=$(( seconds - cpu )) -print_final_stats=1 -timeout=10 \
            -rss_limit_mb=2048 -artifact_prefix="$crashes/" -dict="$dict" "$corpus" "$here/corpus/$name" \
            >"$log.part" 2>&1
        rc=$?
        n=$(stat_of "$log.part" number_of_executed_units)
        execs=$(( execs + ${n:-0} ))
        cat "$log.part" >> "$log" && rm -f "$log.part"
        times > "$tf"
        used=$(( $(cpu_seconds) - cpu0 ))
        [ "$used" -gt 0 ] || used=1         # a harness that cannot run is not run forever
        cpu=$(( cpu + used )) wall=$(( wall + $(date +%s) - t0 ))
    done
    found=$(( $(ls "$crashes" | wc -l) - before ))
    if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
        broken="$broken $name"
        grep -E "ERROR|invariant broken|SUMMARY|Test unit written" "$log" | sed "s/^/fuzz: $name: /"
    fi
    rows="$rows$(printf '| %s | %s | %s | %s | %s | %s | %s |' "$name" "$wall" "$cpu" "$execs" \
        "$(( execs / cpu ))" "$(ls "$corpus" | wc -l)" "$found")
"
done

echo
echo "$(${FUZZ_CC:-clang} --version | head -n 1), -fsanitize=fuzzer,address,undefined;" \
     "$(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(date +%Y-%m-%d)"
echo
echo "| harness | seconds | CPU seconds | executions | per CPU second | corpus | new crashes |"
echo "|---|--:|--:|--:|--:|--:|--:|"
printf '%s' "$rows"
if [ -n "$broken" ]; then
    echo
    echo "fuzz: broken:$broken (inputs in $here/crashes/; logs in $dir)"
    exit 1
fi
