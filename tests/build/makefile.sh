#!/usr/bin/env bash
# makefile.sh CASE - the Makefile's promises, checked with make -n and -p
# (nothing in the tree is built or changed); each case says what it checks.
. "$(dirname "$0")/lib.sh"

# The command lines make would run for the goals given, each on one line.
plan() { kmake -n "$@" 2>&1 | sed -e :a -e '/\\$/N; s/\\\n//; ta'; }

compile_lines() { grep -- " -c -o " <<<"$1" || true; }

case $1 in
plugin_targets)
    # make test builds the plugin wherever nvcc is found, make and make run
    # where an NVIDIA driver is too, and without one say in one line that
    # they do not (-B: every target out of date, the plugin's own make among
    # them)
    for goal in all run test; do
        out=$(plan -B GPU_DRIVER=yes "$goal")
        grep -q -- "-shared -o $BUILD/libkvlab_cuda.so" <<<"$out" ||
            fail "make $goal with a driver does not build the CUDA plugin:"$'\n'"$out"
    done
    out=$(plan -B GPU_DRIVER= test)
    grep -q -- "-shared -o $BUILD/libkvlab_cuda.so" <<<"$out" ||
        fail "make test without a driver does not build the CUDA plugin:"$'\n'"$out"
    for goal in all run; do
        out=$(plan -B GPU_DRIVER= "$goal")
        ! grep -q -- "-shared -o $BUILD/libkvlab_cuda.so" <<<"$out" ||
            fail "make $goal without a driver builds the CUDA plugin"
        grep -q "the CUDA plugin is not built: no NVIDIA driver" <<<"$out" ||
            fail "make $goal without a driver does not say why it builds no plugin:"$'\n'"$out"
    done ;;
plugin_optional)
    # with an nvcc that takes some of the plugin's architectures, the
    # plugin is built for those; with one that takes none, or that cannot
    # build it, make (run, test) goes on without it, saying why in one line,
    # and make plugin fails, saying why
    nvcc=$scratch/nvcc
    cat >"$nvcc" <<'EOF_NVCC'
#!/bin/sh
# takes the architectures in $FAKE_ARCHS (compute_80 ...); compiles nothing
for a; do
    case $a in -gencode=*) arch=${a#-gencode=arch=}; arch=${arch%%,*}
        case " $FAKE_ARCHS " in *" $arch "*) ;; *) echo "nvcc fatal   : Unsupported gpu architecture '$arch'" >&2; exit 1;; esac;;
    esac
done
case " $* " in *" --dryrun "*) exit 0;; esac
echo "kernels/cuda/kv_attn.cu(1): error: this nvcc cannot build it" >&2
exit 1
EOF_NVCC
    chmod +x "$nvcc"
    out=$(FAKE_ARCHS="compute_80 compute_89" plan -B NVCC="$nvcc" plugin | grep -- " -c -o .*\.cu") ||
        fail "make plugin compiles nothing with an nvcc that takes sm_80 and sm_89"
    [[ $out == *sm_80* && $out == *sm_89* && $out != *90a* ]] ||
        fail "with an nvcc that takes sm_80 and sm_89 only, the plugin is compiled as: $out"
    build=$scratch/build
    for archs in "" "compute_80 compute_89 compute_90a"; do
        why="takes none of the GPU architectures the plugin is for (sm_80, sm_89, sm_90a)"
        [[ -z $archs ]] || why="this nvcc cannot build it"
        out=$(FAKE_ARCHS=$archs kmake -s BUILD="$build" NVCC="$nvcc" plugin-if-possible 2>&1) ||
            fail "with an nvcc that cannot build the plugin (takes: '$archs'), make failed:"$'\n'"$out"
        [[ $(grep -c . <<<"$out") == 1 && $out == "kvlab: the CUDA plugin is not built: "*"$why"* ]] ||
            fail "with an nvcc that cannot build the plugin (takes: '$archs'), make said:"$'\n'"$out"
        if out=$(FAKE_ARCHS=$archs kmake -s BUILD="$build" NVCC="$nvcc" plugin 2>&1); then
            fail "make plugin passed with an nvcc that cannot build it (takes: '$archs')"
        fi
        grep -qF "$why" <<<"$out" || fail "make plugin did not say why:"$'\n'"$out"
    done
    grep -q -- "the CUDA plugin is not built" <<<"$(plan NVCC="$nvcc" all)" ||
        fail "make all does not go on without the plugin where nvcc cannot build it" ;;
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
    for h in calc/*.h kernels/*.h tui/*.h tui/cli/*.h tui/lab/*.h tests/*.h; do headers+=(-W "$h"); done
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
    # them) and rebuild what they change: linking flags relink, and
    # compile nothing again
    out=$(plan "$BUILD/kvlab")
    [[ -z $(compile_lines "$out") ]] || fail "$BUILD/kvlab is not up to date:"$'\n'"$out"
    total=$(ls calc/*.c kernels/*.c kernels/cpu/*.c tui/*.c tui/cli/*.c tui/lab/*.c | wc -l)
    for v in CFLAGS=-O0 CPPFLAGS=-DKVLAB_FLAG_CHECK; do
        lines=$(compile_lines "$(plan "$v" "$BUILD/kvlab")")
        [[ $(grep -c . <<<"$lines") == "$total" ]] ||
            fail "make $v rebuilds $(grep -c . <<<"$lines") of the $total objects of kvlab"
        while read -r l; do
            for want in -Icalc -std=c11 -Wall -MMD "${v#*=}"; do
                [[ $l == *"$want"* ]] || fail "make $v compiles without $want: $l"
            done
        done <<<"$lines"
    done
    # PREFIX is compiled into calc/paths.c alone: another rebuilds that one
    # object (and relinks), and no stamp's directory is made anew (sudo make
    # install PREFIX=... leaves the user's build writable)
    out=$(plan PREFIX=/kvlab-elsewhere "$BUILD/kvlab")
    lines=$(compile_lines "$out")
    [[ $(grep -c . <<<"$lines") == 1 && $lines == *"-o $BUILD/calc/paths.o "* && $lines == *"/kvlab-elsewhere"* ]] ||
        fail "make PREFIX=/kvlab-elsewhere rebuilds other than calc/paths.o:"$'\n'"$lines"
    if grep -q "rm -rf" <<<"$(kmake -n --trace PREFIX=/kvlab-elsewhere "$BUILD/kvlab" 2>&1)"; then
        fail "make PREFIX=... removes a directory"
    fi
    out=$(plan LDFLAGS=-Wl,-O1 LDLIBS=-lkvlabcheck "$BUILD/kvlab")
    [[ -z $(compile_lines "$out") ]] || fail "make LDFLAGS=... LDLIBS=... compiles again:"$'\n'"$out"
    link=$(grep -- "-o $BUILD/kvlab " <<<"$out")
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
    # every target that names no file is .PHONY and listed by make help:
    # the targets of make's own database (make -p), however the Makefile
    # writes them, but files (a path, a name with a dot, the copies at the
    # top) and make's special targets
    db=$( { kmake -pq help 2>/dev/null || true; } )
    phony=$(sed -n 's/^\.PHONY: //p' <<<"$db" | tr ' ' '\n')
    listed=$(kmake -s help | awk '{ print $2 }')
    targets=$(awk '/^# Files/ { on = 1 } /^# (Finished|VPATH)/ { on = 0 }
                   on && /^[^#\t. %][^ \t=]*:/ && !/^[^:]*:=/ { sub(/:.*/, ""); print }' <<<"$db" |
              grep -v '[/.]' | grep -vx -e kvlab -e Makefile | sort -u)
    [[ -n $targets ]] || fail "no targets in make's database"
    for t in $targets; do
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
