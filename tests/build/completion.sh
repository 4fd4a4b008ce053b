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
exercises=$(sed -n 's/^[[:space:]]*"id":[[:space:]]*"\(.*\)",$/\1/p' "$data"/../lessons/exercises/*.json | tr '\n' ' ')
[[ -n $exercises ]] || fail "no exercise ids to complete"
offers "$exercises" exercise check ""
offers "$exercises" exercise show ""
offers "" exercise check try-1 ""
offers "$(tr ' ' '\n' <<<"$formats" | grep -vx int4 | tr '\n' ' ')" calc --format int4 --format ""   # not twice
niah_formats=$("$KVLAB_BIN" niah --help | awk '/^Formats/ { on = 1; next } on && NF { print $1 }' | tr '\n' ' ')
[[ $niah_formats == *int2-k-channel* ]] || fail "kvlab niah --help lists no simulated formats"
offers "$niah_formats" niah --format ""
offers "" --version ""                                  # nothing follows --version
offers "" --help ""

# The values of an option that takes a fixed set, and a command's words:
# what kvlab refuses a value with names each one offered, and each one it
# names after "expected" is offered (kvlab CMD ARGS... bogus).
named_in_refusal() {
    local err
    err=$("$KVLAB_BIN" "$@" kvlab-no-such-value 2>&1 </dev/null || true)
    local offered
    offered=$(COMP_WORDS=("$KVLAB_BIN" "$@" ""); COMP_CWORD=$(( $# + 1 )); COMPREPLY=(); _kvlab
              printf '%s\n' "${COMPREPLY[@]}")
    [[ -n $offered ]] || fail "kvlab $* offers nothing"
    for w in $offered; do
        grep -qF -- "$w" <<<"$err" || fail "kvlab $* offers '$w', which its refusal does not name: $err"
    done
    local listed
    listed=$(sed -e 's/.*expected //' -e "s/, not '.*//" -e 's/ ([^)]*)//g' -e 's/ or /, /g' <<<"$err" | tr ',' '\n' |
             sed 's/^ *//; s/ *$//' | grep .)
    for w in $listed; do
        grep -qxF -- "$w" <<<"$offered" || fail "kvlab $* does not offer '$w', which its refusal names: $err"
    done
}
named_in_refusal roundtrip
for o in --scheme --granularity --values --fp8 --rope --preset --rotate; do named_in_refusal quant "$o"; done
for o in --backend --format --fp8-path; do named_in_refusal bench "$o"; done
offers "list show check" scenario ""
offers "$scenarios" scenario show ""
lessons=$(cd "$KVLAB_LESSONS" && ls -- [0-9][0-9]-*.md | sed 's/^[0-9][0-9]-//; s/\.md$//' | tr '\n' ' ')
[[ -n $lessons ]] || fail "no lessons to complete"
offers "list show check" lesson ""
offers "$lessons" lesson show ""
offers "scenario" glossary scen
# a term with spaces comes quoted, as one word
COMP_WORDS=("$KVLAB_BIN" glossary KV) COMP_CWORD=2 COMPREPLY=()
_kvlab
printf '%s\n' "${COMPREPLY[@]}" | grep -qxF 'KV\ cache' && ! printf '%s\n' "${COMPREPLY[@]}" | grep -qxF cache ||
    fail "kvlab glossary KV offers: ${COMPREPLY[*]}"
offers "" calc --context ""                             # a number: nothing to offer
offers "--json" quant --kivi --j                        # a flag takes no value
offers "tests/data" quant --matrix tests/da
