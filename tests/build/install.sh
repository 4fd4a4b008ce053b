#!/usr/bin/env bash
# install.sh CASE - make install and make uninstall into a scratch DESTDIR,
# an installed tree moved elsewhere, and the build tree's own kvlab; each
# case says what it checks.
. "$(dirname "$0")/lib.sh"

PREFIX=$(mvar PREFIX)
stage=$scratch/stage
root=$stage$PREFIX

plugin_built() { [[ -n ${KVLAB_NVCC-} && -f $BUILD/libkvlab_cuda.so ]]; }

install_tree() { kmake -s install DESTDIR="$stage" >/dev/null; }

# Runs a kvlab from / with nothing in the environment telling it where to look.
from_root() { (cd / && env -u KVLAB_DATA -u KVLAB_CUDA_PLUGIN -u KVLAB_STORED "$@"); }

# The lines of kvlab --help that say where it found its data, plugin and
# stored GPU results.
has_places() {
    local help=$1 data=$2 plugin=$3 stored=$4
    has_line "data: $data (set KVLAB_DATA to use another scenarios directory)" "$help"
    has_line "GPU plugin: $plugin (set KVLAB_CUDA_PLUGIN to use another)" "$help"
    has_line "stored GPU results: $stored (set KVLAB_STORED to use another)" "$help"
}

case $1 in
install)
    # make install puts kvlab, the plugin where built, the data, the man
    # page and the completion under PREFIX, and nothing else; make
    # uninstall removes exactly those and kvlab's own directories, never a
    # shared one that was there before (bin, lib, share/man/man1, ...)
    shared="bin lib share/man/man1 share/bash-completion/completions"
    for d in $shared; do mkdir -p "$root/$d"; done
    install_tree
    want=$(
        echo bin/kvlab
        if plugin_built; then echo lib/kvlab/libkvlab_cuda.so; fi
        find scenarios lessons -type f ! -name '.*' | sed 's|^|share/kvlab/|'
        find assets/stored -type f -name '*.json' | sed 's|^assets/|share/kvlab/|'
        echo share/man/man1/kvlab.1
        echo share/bash-completion/completions/kvlab
    )
    got=$(cd "$root" && find . -type f | sed 's|^\./||')
    diff <(sort <<<"$want") <(sort <<<"$got") >&2 || fail "make install put these files (>) or not these (<)"
    cmp "$BUILD/kvlab" "$root/bin/kvlab" && [[ -x $root/bin/kvlab ]] || fail "bin/kvlab is not the build's"
    if plugin_built; then cmp "$BUILD/libkvlab_cuda.so" "$root/lib/kvlab/libkvlab_cuda.so"; fi
    diff -r scenarios "$root/share/kvlab/scenarios" >&2 || fail "the installed scenarios differ"
    diff -r lessons "$root/share/kvlab/lessons" >&2 || fail "the installed lessons differ"
    diff -r assets/stored "$root/share/kvlab/stored" >&2 || fail "the installed stored results differ"
    cmp assets/kvlab.1 "$root/share/man/man1/kvlab.1"
    cmp assets/kvlab.bash "$root/share/bash-completion/completions/kvlab"
    mkdir -p "$root/share/doc/other"
    touch "$root/share/doc/other/README" "$root/bin/other"
    kmake -s uninstall DESTDIR="$stage" >/dev/null
    got=$(cd "$root" && find . | LC_ALL=C sort | tr '\n' ' ')
    want=". ./bin ./bin/other ./lib ./share ./share/bash-completion ./share/bash-completion/completions "
    want+="./share/doc ./share/doc/other ./share/doc/other/README ./share/man ./share/man/man1 "
    [[ $got == "$want" ]] || fail "make uninstall left: $got"$'\n'"not: $want" ;;
moved)
    # an installed tree moved elsewhere finds its data and plugin from any
    # working directory, and its completion lists the data it finds
    install_tree
    moved=$scratch/moved
    mv "$root" "$moved"
    moved=$(cd "$moved" && pwd -P)
    if ! plugin_built; then                     # stands in for the plugin, to find it
        mkdir -p "$moved/lib/kvlab"
        : >"$moved/lib/kvlab/libkvlab_cuda.so"
    fi
    kvlab=$moved/bin/kvlab
    out=$(from_root "$kvlab" scenario list) || fail "kvlab scenario list from / failed"
    grep -q '^pool-20gib ' <<<"$out" || fail "kvlab scenario list from / lists:"$'\n'"$out"
    out=$(from_root "$kvlab" calc) || fail "kvlab calc from / failed"
    grep -q '^fp8_e4m3 ' <<<"$out" || fail "kvlab calc from / printed:"$'\n'"$out"
    has_places "$(from_root "$kvlab" --help)" "$moved/share/kvlab/scenarios" \
               "$moved/lib/kvlab/libkvlab_cuda.so" "$moved/share/kvlab/stored"
    names=$(from_root bash -c '. "$1/share/bash-completion/completions/kvlab"
                               COMP_WORDS=("$1/bin/kvlab" calc --model ""); COMP_CWORD=3
                               _kvlab; printf "%s\n" "${COMPREPLY[@]}"' _ "$moved")
    diff <(cd "$moved/share/kvlab/scenarios/models" && ls | sed 's/\.json$//') <(sort <<<"$names") >&2 ||
        fail "the installed completion's models differ from the installed data's" ;;
tree)
    # a kvlab run from the build tree uses the tree's data and plugin, also
    # where an installed tree lies above it (the tree in ~/kvlab after make
    # install PREFIX=$HOME puts share/kvlab and lib/kvlab beside ~/kvlab)
    tree=$(pwd -P)
    plugin="none found; make builds libkvlab_cuda.so where nvcc is found"
    if plugin_built; then plugin=$(cd "$BUILD" && pwd -P)/libkvlab_cuda.so; fi
    has_places "$(from_root "$KVLAB_BIN" --help)" "$tree/scenarios" "$plugin" "$tree/assets/stored"
    home=$(cd "$scratch" && pwd -P)
    mkdir -p "$home/kvlab" "$home/share/kvlab/scenarios" "$home/share/kvlab/stored" "$home/lib/kvlab"
    cp "$KVLAB_BIN" "$home/kvlab/kvlab"
    cp -r scenarios "$home/kvlab/scenarios"
    cp -r assets/stored "$home/kvlab/stored"
    : >"$home/kvlab/libkvlab_cuda.so"
    : >"$home/lib/kvlab/libkvlab_cuda.so"
    has_places "$(from_root "$home/kvlab/kvlab" --help)" "$home/kvlab/scenarios" "$home/kvlab/libkvlab_cuda.so" \
               "$home/kvlab/stored" ;;
*)
    fail "unknown case '$1'" ;;
esac
