#!/usr/bin/env bash
# makefile.sh CASE - the Makefile's promises, checked with make -n and -p
# (nothing in the tree is built or changed); each case says what it checks.
. "$(dirname "$0")/lib.sh"

# The command lines make would run for the goals given, each on one line.
plan() { kmake -n "$@" 2>&1 | sed -e :a -e '/\\$/N; s/\\\n//; ta'; }

compile_lines() { grep -- " -c -o " <<<"$1" || true; }

case $1 in
plugin_targets)
    # make, make run and make test build the plugin wherever nvcc is found
    # (-B: every target out of date, the plugin's own make among them)
    for goal in all run test; do
        out=$(plan -B "$goal")
        grep -q -- "-shared -o $BUILD/libkvlab_cuda.so" <<<"$out" ||
            fail "make $goal does not build the CUDA plugin:"$'\n'"$out"
    done ;;
plugin_headers)
    # the plugin is rebuilt after a change to a header of its C or CUDA code
    out=$(plan "$BUILD/libkvlab_cuda.so")
    if grep -q -- "-o $BUILD/libkvlab_cuda.so" <<<"$out"; then fail "the plugin is not up to date: $out"; fi
    for h in calc/minifloat.h kernels/kv_attn.h kernels/kv_cuda.h kernels/kv_fill.h kernels/cuda/*.cuh; do
        out=$(plan -W "$h" "$BUILD/libkvlab_cuda.so")
        grep -q -- "-shared -o $BUILD/libkvlab_cuda.so" <<<"$out" ||
            fail "after a change to $h the plugin is not rebuilt:"$'\n'"$out"
    done ;;
objects_track_headers)
    # every object of the build, C or CUDA, has its dependency file, and
    # make rebuilds it when the headers change
    mapfile -t objs < <(find "$BUILD" -name '*.o' | sort)
    (( ${#objs[@]} )) || fail "no objects under $BUILD"
    headers=()
    for h in calc/*.h kernels/*.h tui/*.h tests/*.h; do headers+=(-W "$h"); done
    keep=()
    for o in "${objs[@]}"; do
        src=${o#"$BUILD"/}
        src=${src#pic/}
        src=${src%.o}
        [[ -f $src.c || -f $src.cu ]] || continue      # left from a source since removed
        [[ -f ${o%.o}.d ]] || fail "$o has no dependency file"
        keep+=("$o")
    done
    out=$(plan "${headers[@]}" "${keep[@]}")
    for o in "${keep[@]}"; do
        grep -q -- " -c -o $o " <<<"$out" || fail "$o is not rebuilt when the headers it includes change"
    done ;;
flags)
    # flags given on the command line join the build's own (never replace
    # them) and rebuild what they change
    out=$(plan "$BUILD/kvlab")
    [[ -z $(compile_lines "$out") ]] || fail "$BUILD/kvlab is not up to date:"$'\n'"$out"
    total=$(ls calc/*.c kernels/*.c kernels/cpu/*.c tui/*.c | wc -l)
    for v in CFLAGS=-O0 CPPFLAGS=-DKVLAB_FLAG_CHECK PREFIX=/kvlab-elsewhere; do
        lines=$(compile_lines "$(plan "$v" "$BUILD/kvlab")")
        [[ $(grep -c . <<<"$lines") == "$total" ]] ||
            fail "make $v rebuilds $(grep -c . <<<"$lines") of the $total objects of kvlab"
        while read -r l; do
            for want in -Icalc -std=c11 -Wall -MMD "${v#*=}"; do
                [[ $l == *"$want"* ]] || fail "make $v compiles without $want: $l"
            done
        done <<<"$lines"
    done
    link=$(plan LDFLAGS=-Wl,-O1 LDLIBS=-lkvlabcheck "$BUILD/kvlab" | grep -- "-o $BUILD/kvlab ")
    for want in -Wl,-O1 -lkvlabcheck -lm -lcjson; do
        [[ $link == *"$want"* ]] || fail "make LDFLAGS=... LDLIBS=... links without $want: $link"
    done ;;
clean)
    # make clean removes the build whatever BUILD is, build-asan and the
    # copies at the top, and refuses a BUILD that holds the tree
    tree=$scratch/tree elsewhere=$scratch/elsewhere
    mkdir -p "$tree/out/calc" "$tree/build-asan/calc" "$elsewhere/calc"
    touch "$tree/kvlab" "$tree/libkvlab_cuda.so" "$tree/out/calc/a.o" "$tree/Makefile.keep"
    clean() { MAKEFLAGS="" kmake -s -C "$tree" -f "$PWD/Makefile" BUILD="$1" clean; }
    clean out
    for p in out build-asan kvlab libkvlab_cuda.so; do
        [[ ! -e $tree/$p ]] || fail "make clean BUILD=out left $p"
    done
    clean "$elsewhere"
    [[ ! -e $elsewhere ]] || fail "make clean BUILD=$elsewhere left it"
    for b in . .. / "$tree" "$tree/"; do
        if clean "$b" 2>/dev/null; then fail "make clean BUILD=$b was not refused"; fi
        [[ -e $tree/Makefile.keep ]] || fail "make clean BUILD=$b removed the tree"
    done ;;
phony)
    # every target that names no file is .PHONY and listed by make help
    phony=$( { kmake -pq 2>/dev/null || true; } | sed -n 's/^\.PHONY: //p' | tr ' ' '\n')
    listed=$(kmake -s help | awk '{ print $2 }')
    for t in $(sed -n 's/^\([a-z][a-z-]*\):.*/\1/p' Makefile | grep -vx kvlab); do
        grep -qx -- "$t" <<<"$phony" || fail "make $t is not .PHONY"
        grep -qx -- "$t" <<<"$listed" || fail "make $t is not in make help"
    done ;;
test_gpu)
    # make test-gpu fails with one line saying why where no GPU can be used
    if out=$(CUDA_VISIBLE_DEVICES="" kmake -s test-gpu 2>&1); then
        fail "make test-gpu passed where no GPU can be used:"$'\n'"$out"
    fi
    said=$(grep -v '^make' <<<"$out" || true)
    [[ $(grep -c . <<<"$said") == 1 && $said == *"GPU suite cannot run: "* ]] ||
        fail "make test-gpu did not say why in one line:"$'\n'"$out"
    # the runner of make test skips the GPU suite there, saying so once
    out=$(CK_RUN_SUITE=gpu KVLAB_CUDA_PLUGIN=/nonexistent/libkvlab_cuda.so "$RUNNER" 2>&1) ||
        fail "the runner failed without a GPU:"$'\n'"$out"
    [[ $(grep -c 'skipped' <<<"$out") == 1 ]] || fail "the GPU suite's skip is not said once:"$'\n'"$out" ;;
*)
    fail "unknown case '$1'" ;;
esac
