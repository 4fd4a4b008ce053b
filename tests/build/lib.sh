# lib.sh - what the build checks share (sourced by each): make as the
# running build would call it, the build's own variables, and failing.
set -euo pipefail

# The variables given to `make test` (BUILD, CFLAGS, SAN, ...) reach a
# nested make through MAKEFLAGS; the parent's flags and job server do not.
case ${MAKEFLAGS-} in
    *" -- "*) MAKEFLAGS="-- ${MAKEFLAGS#* -- }" ;;
    *) MAKEFLAGS="" ;;
esac
export MAKEFLAGS
unset MAKELEVEL MFLAGS

kmake() { make --no-print-directory "$@"; }

# A variable's value as the Makefile sees it: mvar BUILD.
mvar() { kmake -s --eval "kvlab-print-var: ; @echo \$($1)" kvlab-print-var; }

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# Fails unless one of the lines of $2 is $1.
has_line() { grep -Fqx -- "$1" <<<"$2" || fail "no line '$1' in:"$'\n'"$2"; }

MAN=assets/kvlab.1

# The commands the man page documents: its subsections "kvlab NAME".
man_commands() { sed -n 's/^\.SS "kvlab \([a-z]*\)"$/\1/p' "$MAN"; }

# The options the man page documents for CMD: each .TP paragraph in its
# subsection that opens with .B or .BI and an option.
man_options() {
    awk -v cmd="$1" '
        /^\.S[SH] / { on = ($0 == ".SS \"kvlab " cmd "\"") ; next }
        on && tp && /^\.BI? \\-\\-/ { o = $2; gsub(/\\-/, "-", o); print o }
        { tp = ($0 == ".TP") }' "$MAN"
}

BUILD=$(mvar BUILD)
RUNNER=${KVLAB_RUNNER:-$BUILD/tests/run_tests}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
