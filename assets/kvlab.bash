# kvlab.bash - bash completion for kvlab: its commands, each command's
# options and actions, and the names that --model, --gpu, --scenario,
# --format and `kvlab scenario show|check` take, and the exercise ids of
# `kvlab exercise show|check`, the lesson ids of `kvlab lesson show` and
# the terms of `kvlab glossary`.
#
# Every list comes from the kvlab being completed, at completion time
# (kvlab --help, kvlab CMD --help, kvlab models, kvlab gpus, kvlab scenario
# list, kvlab formats --csv, kvlab lesson list, kvlab glossary), so that it never drifts from the program or
# its data directory. Installed as share/bash-completion/completions/kvlab.

# The first column of a table kvlab prints, below its heading and rule.
_kvlab_column()
{
    "$@" 2>/dev/null | awk 'NR > 2 { print $1 }'
}

# The commands `kvlab --help` lists.
_kvlab_commands()
{
    "$1" --help 2>/dev/null | awk '/^commands:/ { on = 1; next } on && !NF { exit } on { print $1 }'
}

# A command's options as `kvlab CMD --help` lists them: "--model NAME" for
# one that takes a value (its name one space after the option, two blanks
# at least before the description), "--json" for a flag.
_kvlab_options()
{
    "$1" "$2" --help 2>/dev/null | awk '/^  --/ { print $1, (/^  --[^ ]+ [^ ]/ ? $2 : "") }'
}

# A command's actions, the words after it in the usage lines of its
# --help: "list", "show" and "check" for `kvlab scenario`, "e4m3", "e5m2"
# and "e2m1" for `kvlab roundtrip e4m3|e5m2|e2m1`.
_kvlab_actions()
{
    "$1" "$2" --help 2>/dev/null |
        awk -v c="$2" '!NF { exit }
                       { for (i = 1; i < NF; i++) if ($i == c && $(i + 1) ~ /^[a-z][a-z0-9|]*$/) print $(i + 1) }' |
        tr '|' '\n'
}

# The values an option's value name lists: "none|pre|post" for --rope,
# "hadamard" for --rotate (a name with a lowercase letter is a value, not a
# placeholder such as NAME or N).
_kvlab_values()
{
    [[ $1 == *"|"* || $1 == *[a-z]* ]] && tr '|' '\n' <<<"$1"
}

# The terms of `kvlab glossary`'s table, one a line (a term may hold
# spaces: its column ends where the next one's heading begins; a line
# that begins with spaces goes on with the row above).
_kvlab_terms()
{
    "$1" glossary 2>/dev/null |
        awk 'NR == 1 { w = index($0, "lesson") - 1 } NR > 2 && !/^ / { t = substr($0, 1, w); sub(/ +$/, "", t); print t }'
}

# The names an option's value (or a NAME after an action) can take.
_kvlab_names()
{
    case $2 in
        --model) _kvlab_column "$1" models ;;
        --gpu) _kvlab_column "$1" gpus ;;
        --scenario) _kvlab_column "$1" scenario list ;;
        --format) if [[ ${3-} == niah ]]; then     # its own formats, simulated ones too
                      "$1" niah --help 2>/dev/null | awk '/^Formats/ { on = 1; next } on && NF { print $1 }'
                  else
                      "$1" formats --csv 2>/dev/null | awk -F, 'NR > 1 { print $1 }'
                  fi ;;
    esac
}

_kvlab()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local kvlab=${COMP_WORDS[0]} cmd="" action="" i w
    [[ $kvlab == "~"* ]] && kvlab=$HOME${kvlab#\~}
    COMPREPLY=()
    # bash splits --opt=value at the = (COMP_WORDBREAKS)
    if [[ $cur == = ]]; then
        cur=""
    elif [[ $prev == = && COMP_CWORD -ge 2 ]]; then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    fi
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        [[ $w == -* || $w == = ]] && continue
        if [[ -z $cmd ]]; then
            cmd=$w
        elif [[ -z $action ]]; then
            action=$w
        fi
    done
    local words=""
    case ${COMP_WORDS[1]-} in
        --help | -h | help | --version) ((COMP_CWORD > 1)) && return 0 ;;    # nothing follows them
    esac
    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then words="--help --version"; else words=$(_kvlab_commands "$kvlab"); fi
        mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
        return 0
    fi
    local options takes=""
    options=$(_kvlab_options "$kvlab" "$cmd")
    [[ $prev == --* ]] && takes=$(awk -v o="$prev" '$1 == o { print $2 }' <<<"$options")
    if [[ -n $takes ]]; then                    # the value of an option
        if [[ $takes == FILE ]]; then
            compopt -o filenames 2>/dev/null || true    # a / after a directory
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            return 0
        fi
        words=$(_kvlab_values "$takes" || _kvlab_names "$kvlab" "$prev" "$cmd")
        # a value this option already has (--format int4 --format ...) is not offered again
        for ((i = 1; i < COMP_CWORD - 1; i++)); do
            [[ ${COMP_WORDS[i]} == "$prev" ]] && words=$(grep -vxF -- "${COMP_WORDS[i + 1]}" <<<"$words" || true)
        done
        mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
    elif [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(awk '{ print $1 }' <<<"$options")" -- "$cur")
    elif [[ $cmd == glossary && -z $action ]]; then
        local IFS=$'\n' t
        for t in $(_kvlab_terms "$kvlab"); do
            [[ $t == "$cur"* ]] && COMPREPLY+=("$(printf '%q' "$t")")
        done
    elif [[ -z $action ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_kvlab_actions "$kvlab" "$cmd")" -- "$cur")
    elif [[ $cmd == lesson && $action == show ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$("$kvlab" lesson list 2>/dev/null | awk 'NR > 2 && $1 ~ /^[0-9]+$/ { print $2 }')" -- "$cur")
    elif [[ $cmd == lesson && $action == check ]]; then
        compopt -o filenames 2>/dev/null || true
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    elif [[ $cmd == scenario && ( $action == show || $action == check ) ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_kvlab_names "$kvlab" --scenario)" -- "$cur")
        if [[ $action == check ]]; then
            compopt -o filenames 2>/dev/null || true
            mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
        fi
    elif [[ $cmd == exercise && ( $action == show || $action == check ) && ${COMP_WORDS[COMP_CWORD - 1]} == "$action" ]]; then
        # the ids `kvlab exercise list` prints, above its closing line
        mapfile -t COMPREPLY < <(compgen -W "$("$kvlab" exercise list 2>/dev/null |
                                               awk 'NR > 2 && !NF { exit } NR > 2 { print $1 }')" -- "$cur")
    fi
    return 0
}

complete -F _kvlab kvlab
