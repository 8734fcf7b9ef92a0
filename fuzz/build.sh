#!/usr/bin/env bash
# Build libFuzzer harnesses (clang, ASan + UBSan) and their seed corpora:
#   fuzz/build.sh OUT [collada] [npy] [options]      (no target: all three)
# writes OUT/fuzz_TARGET and OUT/seeds/TARGET/. smoke.sh and run.sh both
# build through this script.
#   CLANG (default clang-14, else clang)
# Seeds: collada, every COLLADA file of assets/ and tests/data/collada up to
# 64 KiB and two detectors from tools/gen_detector.c (no PMTs; one PMT with
# its own geometry); npy, hand-made files of each header version, Fortran
# order, a truncated one, and every .npy under tests/data up to 64 KiB;
# options, a few prism-propagate command lines (one word a line).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: fuzz/build.sh OUT [collada] [npy] [options]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(collada npy options)
cc=${CLANG:-$(command -v clang-14 || command -v clang)}
mkdir -p "$out"
flags=(-std=c11 -g -O1 -fno-sanitize-recover=all)
fuzz=(-fsanitize=fuzzer,address,undefined)

small_copies() { # dest files...: the files up to 64 KiB
    local dest=$1 f
    shift
    for f in "$@"; do
        [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 65536 ] && cp "$f" "$dest/"
    done
    return 0
}

build_collada() {
    local seeds=$out/seeds/collada
    mkdir -p "$seeds"
    small_copies "$seeds" "$root"/assets/*.dae "$root"/tests/data/collada/*.dae
    # generated detectors: the G4DAE extras (property tables, skin and
    # border surfaces) the hand-written fixtures have little of
    "$cc" -O1 "$root/tools/gen_detector.c" -lm -o "$out/gen_detector"
    "$out/gen_detector" --pmts 0 -o "$seeds/gen_pmts0.dae"
    "$out/gen_detector" --pmts 1 --unique --offset 1,2,3 -o "$seeds/gen_pmts1_unique.dae"

    local sources=("$root"/geometry/scene.c "$root"/geometry/collada/*.c
                   "$root"/geometry/fast_float.c "$root"/geometry/big_alloc.c)
    # as geometry/CMakeLists.txt finds it: expat's reparse deferral, which
    # the chunked parse switches off
    local defs=()
    if printf '#include <expat.h>\nint main(void){return XML_SetReparseDeferralEnabled(0, 0);}\n' |
        "$cc" -x c - -lexpat -o "$out/deferral_check" 2>/dev/null; then
        defs+=(-DPRISM_HAVE_XML_REPARSE_DEFERRAL)
    fi
    "$cc" "${flags[@]}" "${fuzz[@]}" -I"$root/include" -I"$root" "${defs[@]}" \
        "$root/fuzz/fuzz_collada.c" "${sources[@]}" -lexpat -lm -o "$out/fuzz_collada"
}

npy_seed() { # name version dict data-bytes: the header padded as NumPy pads it
    local pre=$(( $2 == 1 ? 10 : 12 ))
    local len=$(( (pre + ${#3} + 1 + 63) / 64 * 64 - pre ))
    { printf '\223NUMPY'; printf "\\$(printf %03o "$2")\\000"
      printf "\\$(printf %03o $((len & 255)))\\$(printf %03o $((len >> 8)))"
      [ "$2" = 1 ] || printf '\000\000'
      printf '%-*s\n' $((len - 1)) "$3"; head -c "$4" /dev/zero; } > "$out/seeds/npy/$1"
}

build_npy() {
    mkdir -p "$out/seeds/npy"
    npy_seed v1.npy 1 "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4, 4), }" 64
    npy_seed v2.npy 2 "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4, 4), }" 128
    npy_seed f.npy 3 "{'shape': (1, 4, 4), 'fortran_order': True, 'descr': '<f4'}" 64
    npy_seed cut.npy 1 "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4, 4), }" 10
    local f
    while IFS= read -r -d '' f; do
        small_copies "$out/seeds/npy" "$f"
    done < <(find "$root/tests/data" -name '*.npy' -print0)
    "$cc" "${flags[@]}" "${fuzz[@]}" -I"$root/tools" "$root/fuzz/fuzz_npy.c" "$root/tools/npy.c" \
        -o "$out/fuzz_npy"
}

build_options() {
    local seeds=$out/seeds/options
    mkdir -p "$seeds"
    printf '%s\n' det.dae --count 1000 --seed 7 --hits h.npy --out o.npy > "$seeds/basic"
    printf '%s\n' det.dae --photons=in.npy --count=2.5e6 --records r.npy --record-steps 32 \
        --json --quiet > "$seeds/photons"
    printf '%s\n' det.dae --source beam:0,0,0,0,0,1,0.5,10 --backend host --placement mapped \
        --bvh host --unit mm --math fast --batch 65536 --max-steps 50 > "$seeds/engine"
    printf '%s\n' det.dae --validate --count 1e5 --devices 0,1 > "$seeds/validate"
    printf '%s\0' --help --source=point:1,2,3 -h > "$seeds/help_nul"
    # The parser and its command-line pieces (tools/cli.c) are built with
    # coverage. cli.c also calls four name functions that live in bigger
    # files (engine/result.c, engine/upload/build.c, engine/upload/placement.c,
    # geometry/collada/unit.c, and no_cuda.c for result.c's one call): those
    # are built without coverage, one section a function, and the linker
    # keeps only what the parser reaches (--gc-sections), so the rest of the
    # engine is not needed. Coverage would keep every function alive.
    local deps=("$root"/engine/result.c "$root"/engine/cuda/no_cuda.c
                "$root"/engine/upload/build.c "$root"/engine/upload/placement.c
                "$root"/geometry/collada/unit.c) objs=() f
    mkdir -p "$out/options_deps"
    for f in "${deps[@]}"; do
        objs+=("$out/options_deps/$(basename "$f" .c).o")
        "$cc" "${flags[@]}" -fsanitize=address,undefined -fsanitize-address-globals-dead-stripping \
            -ffunction-sections -fdata-sections -I"$root/include" -I"$root" -c "$f" -o "${objs[-1]}"
    done
    "$cc" "${flags[@]}" "${fuzz[@]}" -I"$root/include" -I"$root" -I"$root/tools" \
        "$root/fuzz/fuzz_options.c" "$root/tools/propagate_options.c" "$root/tools/cli.c" \
        "${objs[@]}" -Wl,--gc-sections -lm -o "$out/fuzz_options"
}

for t in "${targets[@]}"; do
    case $t in
    collada | npy | options) "build_$t" ;;
    *) echo "fuzz/build.sh: unknown target '$t' (collada, npy or options)" >&2; exit 2 ;;
    esac
done
