#!/usr/bin/env bash
# bench_tui.sh - time the lab's frames: replays a key script in a 200x60
# tmux window with KVLAB_FRAME_LOG set, then reports the time to the first
# frame and the time to handle a key and draw the frame after it.
# usage: bench_tui.sh KVLAB_BINARY DATA_DIR
set -euo pipefail
bin=$1 data=$2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
runs=5
for run in $(seq $runs); do
    sock=kvlab-bench-$$-$run
    tmux -L "$sock" new-session -d -x 200 -y 60 -s b \
        "env TERM=xterm-256color KVLAB_DATA='$data' KVLAB_FRAME_LOG='$log' '$bin'; sleep 5"
    sleep 0.5
    # every screen, every kind of edit, scrolling, help, resizes
    for k in F3 Down Down + + + - Down 3 2 k Enter Up Up + + + F4 b b f g g r r H o O s s \
             F2 + + + Tab Down Down Down Tab F3 Down Down Down Down Down Down Down Down + F1 x \
             F4 g w w F2 + F3; do
        tmux -L "$sock" send-keys -t b "$k"
        sleep 0.03
    done
    tmux -L "$sock" send-keys -t b q
    sleep 0.3
    tmux -L "$sock" kill-server 2>/dev/null || true
done
stats() {  # label, values on stdin: median, 95th percentile, max
    sort -n | awk -v what="$1" '{ v[NR] = $1 } END {
        if (!NR) { print what ": no frames logged"; exit 1 }
        p95 = int(NR * 0.95); if (p95 < 1) p95 = 1
        printf "%s: median %.2f ms, 95th percentile %.2f ms, max %.2f ms (%d samples)\n", what, v[int((NR + 1) / 2)], v[p95], v[NR], NR }'
}
awk '/^first_frame_ms/ { print $2 }' "$log" | stats "start-up to first frame"
awk '/^frame_ms/ { print $2 }' "$log" | stats "key to drawn frame, 200x60"
