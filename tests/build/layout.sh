#!/usr/bin/env bash
# layout.sh CASE - the source tree's layout: each room includes only what
# its layer may use, and names say where they belong.
#   rooms   calc/ includes only calc/; kernels/ only kernels/ and calc/;
#           tui/'s shared files (its root) only themselves and calc/; the
#           lab (tui/lab/) nothing of the command line (tui/cli/), which
#           may include the lab (main.c opens it)
#   statics every static function of tui/ carries its file's name
#           (screen_calc.c: screen_calc_layout), so that a stack trace or
#           a grep names the file
#   ck      no identifier of kvlab's own code starts with ck_ or is Ck: the
#           prefix is the Check library's, in the tests
cd "$(dirname "$0")/../.."
. tests/build/lib.sh

# The room of a source file: cli, lab, tui (the shared root), calc, kernels.
room() {
    case $1 in
        tui/cli/*) echo cli ;;
        tui/lab/*) echo lab ;;
        tui/*) echo tui ;;
        calc/*) echo calc ;;
        kernels/*) echo kernels ;;
        *) echo other ;;
    esac
}

# The rooms each room may include from.
may_use() {
    case $1 in
        calc) echo "calc" ;;
        kernels) echo "kernels calc" ;;
        tui) echo "tui calc" ;;
        lab) echo "lab tui calc kernels" ;;
        cli) echo "cli lab tui calc kernels" ;;
    esac
}

# The file a quoted include names, found as the compiler finds it: beside
# the including file, then in ALL_CPPFLAGS's -Icalc -Ikernels -I.
resolve() {
    local dir inc=$2
    for dir in "$(dirname "$1")" calc kernels .; do
        if [[ -f $dir/$inc ]]; then
            realpath --relative-to=. "$dir/$inc"
            return
        fi
    done
}

case $1 in
rooms)
    for d in tui/cli tui/lab; do
        compgen -G "$d/*.c" >/dev/null || fail "no room $d/ with its sources"
    done
    while read -r f; do
        r=$(room "$f")
        while read -r inc; do
            [[ -n $inc ]] || continue
            to=$(resolve "$f" "$inc")
            [[ -n $to ]] || fail "$f includes \"$inc\", which is nowhere the build looks"
            [[ " $(may_use "$r") " == *" $(room "$to") "* ]] ||
                fail "$f ($r) includes $to ($(room "$to")); $r may include only: $(may_use "$r")"
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done < <(find calc kernels tui -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort) ;;
statics)
    while read -r f; do
        module=$(basename "$f" .c)
        while read -r fn; do
            [[ $fn == "${module}_"* ]] || fail "$f: static $fn() is not named after its file (${module}_...)"
        done < <(sed -nE 's/^static[^;={}()]*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*\(.*/\1/p' "$f")
    done < <(find tui -name '*.c' | sort) ;;
ck)
    ck=$(grep -rnwE 'ck_[A-Za-z0-9_]*|Ck' --include='*.[ch]' --include='*.cu' --include='*.cuh' calc kernels tui || true)
    [[ -z $ck ]] || fail "ck_ is the Check library's prefix, for the tests; kvlab's code names:"$'\n'"$ck" ;;
*)
    fail "usage: layout.sh rooms|statics|ck" ;;
esac
