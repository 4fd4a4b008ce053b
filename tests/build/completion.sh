#!/usr/bin/env bash
# completion.sh - assets/kvlab.bash in bash: `complete -p`, then _kvlab
# called as bash calls it (COMP_WORDS, COMP_CWORD), its COMPREPLY against
# lists taken elsewhere: the man page's commands and options, the files of
# the data directory, the ids of `kvlab formats --json`.
. "$(dirname "$0")/lib.sh"
. assets/kvlab.bash

[[ $(complete -p kvlab) == "complete -F _kvlab kvlab" ]] || fail "kvlab.bash does not register _kvlab"

# Fails unless completing the words given (the last is the word under the
# cursor) offers exactly the words of $1.
offers() {
    local want=$1
    shift
    COMP_WORDS=("$KVLAB_BIN" "$@")
    COMP_CWORD=$#
    COMPREPLY=()
    _kvlab
    diff <(tr ' ' '\n' <<<"$want" | grep . | sort) <(printf '%s\n' "${COMPREPLY[@]}" | grep . | sort) >&2 ||
        fail "kvlab $* offers these (>) or not these (<)"
}

stems() { (cd "$1" && ls -- *.json | sed 's/\.json$//' | tr '\n' ' '); }
data=$KVLAB_DATA
models=$(stems "$data/models") gpus=$(stems "$data/gpus") scenarios=$(stems "$data")
formats=$("$KVLAB_BIN" formats --json | sed -n 's/^[[:space:]]*"format":[[:space:]]*"\(.*\)",$/\1/p' | tr '\n' ' ')
[[ -n $models && -n $gpus && -n $scenarios && -n $formats ]] || fail "no names to complete"

offers "$(man_commands | tr '\n' ' ')" ""
offers "--help --version" --
for c in $(man_commands); do
    offers "$(man_options "$c" | tr '\n' ' ') --help" "$c" --
done
offers "--model --memory --mha" calc --m
offers "$models" calc --model ""
offers "$(tr ' ' '\n' <<<"$models" | grep '^llama-3\.1' | tr '\n' ' ')" calc --model llama-3.1
offers "$models" calc --model = ""                      # --model=
offers "$models" bench --batch 1 --model ""
offers "$gpus" calc --context 8k --gpu ""
offers "$scenarios" calc --scenario ""
offers "$formats" calc --format ""
offers "$formats" bench --format ""
offers "list show check" scenario ""
offers "$scenarios" scenario show ""
offers "" calc --context ""                             # a number: nothing to offer
offers "--json" quant --kivi --j                        # a flag takes no value
offers "tests/data" quant --matrix tests/da
