#!/usr/bin/env bash
# manpage.sh CASE - the man page, assets/kvlab.1, against kvlab itself;
# each case says what it checks.
. "$(dirname "$0")/lib.sh"

# The commands `kvlab --help` lists.
help_commands() { "$KVLAB_BIN" --help | awk '/^commands:/ { on = 1; next } on && !NF { exit } on { print $1 }'; }

# The variables the man page documents: the .TP items of ENVIRONMENT.
man_environment() {
    awk '/^\.SH / { on = ($0 == ".SH ENVIRONMENT"); next }
         on && tp && /^\.B / { print $2 }
         { tp = ($0 == ".TP") }' "$MAN"
}

case $1 in
options)
    # kvlab --help and the man page list the same commands, and each
    # command's options in the man page are what make man writes from its
    # --help: names, value names, defaults and all, kept in one place
    diff <(help_commands | sort) <(man_commands | sort) >&2 ||
        fail "commands in kvlab --help (<) or only in $MAN (>)"
    for c in $(help_commands); do
        grep -qxF ".\\\" The options of kvlab $c, from kvlab $c --help (make man):" "$MAN" ||
            fail "$MAN has no place for the options of kvlab $c"
    done
    diff <(assets/man_options.sh "$KVLAB_BIN" "$MAN") "$MAN" >&2 ||
        fail "$MAN is not what make man writes from kvlab CMD --help (<); run make man" ;;
render)
    # the man page renders without a warning
    out=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
    [[ -z $out ]] || fail "groff warns about $MAN:"$'\n'"$out" ;;
environment)
    # every environment variable the program reads is documented, and
    # every one documented is read
    # a name given to getenv, or a KVLAB_ name on its own (paths.c's table)
    read=$(grep -rhoE 'getenv\("[A-Z0-9_]+"\)|"KVLAB_[A-Z0-9_]+"' calc kernels tui | tr -d '"' |
           sed 's/^getenv(\(.*\))$/\1/' | sort -u)
    diff <(echo "$read") <(man_environment | sort -u) >&2 ||
        fail "variables kvlab reads (<) or that only $MAN names (>)" ;;
*)
    fail "unknown case '$1'" ;;
esac
