#!/bin/sh
# man_options.sh KVLAB [MAN] - prints the man page MAN (assets/kvlab.1) with
# each command's options written from `KVLAB CMD --help`, the one place
# they are kept (the OptSpec tables of tui/cli/cli_*.c): what lies between a
# command's two marker comments is replaced, the rest printed as it is.
# `make man` writes the result back; the build suite checks that it is
# what the page holds.
#
#   .\" The options of kvlab CMD, from kvlab CMD --help (make man):
#   ...
#   .\" End of the options.
#
# An option becomes a .TP paragraph: `.BI \-\-name " ARG"` (or `.B \-\-name`
# for a flag), then its help, with roff's special characters escaped.
# --help, which every command takes, the page names once.
set -eu
kvlab=$1
man=${2:-assets/kvlab.1}
awk -v kvlab="$kvlab" '
function roff(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    return s ~ /^[.'"'"']/ ? "\\&" s : s
}
function options(cmd,    help, line, i, left, text, name, arg) {
    help = kvlab " " cmd " --help"
    while ((help | getline line) > 0) {
        if (line !~ /^  --/)
            continue
        sub(/^  /, "", line)
        i = index(line, "  ")               # opt_usage leaves two blanks at least
        left = substr(line, 1, i - 1)
        text = substr(line, i)
        sub(/^ +/, "", text)
        name = left
        arg = ""
        if (index(left, " ")) {
            name = substr(left, 1, index(left, " ") - 1)
            arg = substr(left, index(left, " ") + 1)
        }
        if (name == "--help")
            continue
        print ".TP"
        print arg == "" ? ".B " roff(name) : ".BI " roff(name) " \" " roff(arg) "\""
        print roff(text)
    }
    if (close(help) != 0) {
        print "man_options.sh: " help " failed" > "/dev/stderr"
        exit 1
    }
}
/^\.\\" The options of kvlab [a-z]+, from kvlab [a-z]+ --help \(make man\):$/ {
    print
    sub(/^\.\\" The options of kvlab /, "")
    sub(/,.*/, "")
    options($0)
    skip = 1
    next
}
/^\.\\" End of the options\.$/ { skip = 0 }
!skip
' "$man"
